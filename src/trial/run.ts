// One rollout: sandbox up, agent runs under its limit, verifier scores, result.json last.
// Every failure becomes a categorized result rather than an exception, so one bad sandbox never
// stops a job.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { AgentContext, AgentRunResult, HostPreparation, TrajectoryEvent } from "../agents/types.js";
import { CategorizedError, categoryOf, messageOf } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import { isInfrastructure, type OutcomeCategory, outcomeOf } from "../schemas/outcome.js";
import type { TimingInfo, TrialResult } from "../schemas/result.js";
import { writeFileAtomic, writeJsonAtomic } from "../util/fs.js";
import { runVerifier, type VerifierOutcome } from "../verifier/run.js";
import type { TrialPlan } from "./types.js";

interface TrialState {
  sandbox: Sandbox | null;
  prepared: HostPreparation | null;
  events: TrajectoryEvent[];
  agentResult: AgentRunResult | null;
  error: { category: OutcomeCategory; message: string } | null;
  verifier: VerifierOutcome | null;
  timing: TimingInfo;
  /** What the sandbox turned out to be (user, image, network enforcement), for config.json. */
  sandboxDetails?: Record<string, unknown>;
}

export async function runTrial(plan: TrialPlan): Promise<TrialResult> {
  const rolloutDir = path.join(plan.jobDir, plan.rolloutName);
  const startedAt = new Date();
  const state: TrialState = {
    sandbox: null,
    prepared: null,
    events: [],
    agentResult: null,
    error: null,
    verifier: null,
    timing: {},
  };
  await fs.mkdir(rolloutDir, { recursive: true });
  await writeJsonAtomic(path.join(rolloutDir, "config.json"), configOf(plan, startedAt));
  try {
    if (plan.agent.prepareHost) await phase(state, "agent_install", () => prepareHost(plan, state));
    await phase(state, "environment_setup", () => startSandbox(plan, state));
    const ctx = agentContext(plan, state, rolloutDir);
    if (plan.agent.setup) await phase(state, "agent_setup", () => setupAgent(plan, ctx));
    await phase(state, "agent_execution", () => runAgent(plan, ctx, state));
    if (shouldVerify(plan, state)) {
      await phase(state, "verifier", async () => {
        state.verifier = await runVerifier(state.sandbox as Sandbox, plan.task, rolloutDir);
      });
    }
  } catch (err) {
    // An infrastructure failure outranks a policy failure recorded earlier (e.g. a timeout).
    if (!state.error || !isInfrastructure(state.error.category)) {
      state.error = {
        category: plan.signal.aborted ? "interrupted" : categoryOf(err),
        message: messageOf(err),
      };
    }
  } finally {
    await collectLogs(state.sandbox, rolloutDir);
    // Removing the sandbox is not on the rollout's path: the job waits for it before it ends.
    const stopping = state.sandbox?.stop().catch(() => undefined);
    if (stopping && plan.deferCleanup) plan.deferCleanup(stopping);
    else await stopping;
    await state.prepared?.release?.().catch(() => undefined);
  }
  state.timing.total = seconds(Date.now() - startedAt.getTime());
  return finishTrial(plan, state, rolloutDir, startedAt);
}

async function phase(state: TrialState, name: keyof TimingInfo, work: () => Promise<void>): Promise<void> {
  const t0 = Date.now();
  try {
    await work();
  } finally {
    state.timing[name] = seconds(Date.now() - t0);
  }
}

async function prepareHost(plan: TrialPlan, state: TrialState): Promise<void> {
  try {
    state.prepared =
      (await plan.agent.prepareHost?.({
        task: plan.task,
        sandboxKind: plan.backend.kind,
        network: plan.task.config.sandbox.networkMode !== "no-network",
        hostService: plan.hostService ?? null,
        signal: plan.signal,
      })) ?? null;
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("agent_setup", messageOf(err), { cause: err });
  }
  Object.assign(state.timing, state.prepared?.timing);
}

async function startSandbox(plan: TrialPlan, state: TrialState): Promise<void> {
  if (plan.signal.aborted)
    throw new CategorizedError("interrupted", "the run was interrupted before the trial started");
  try {
    state.sandbox = await plan.backend.create({
      task: plan.task,
      jobName: plan.jobName,
      trialName: plan.rolloutName,
      network: plan.task.config.sandbox.networkMode !== "no-network",
      jobDir: plan.jobDir,
      ...(plan.hostService ? { hostService: plan.hostService } : {}),
      ...(state.prepared?.readOnlyMounts ? { readOnlyMounts: state.prepared.readOnlyMounts } : {}),
    });
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("sandbox_setup", messageOf(err), { cause: err });
  }
  const sandbox = state.sandbox;
  for (const w of sandbox.warnings ?? []) plan.warn(`task ${plan.task.name}: ${w}`);
  const details = {
    sandbox_id: sandbox.id,
    sandbox_user: sandbox.agentIsNonRoot ? "agent" : "root",
    sandbox_workdir: sandbox.workdir,
    sandbox_image: sandbox.image ?? null,
    network_enforcement:
      sandbox.networkEnforcement ??
      (plan.task.config.sandbox.networkMode === "no-network" ? "enforced" : "public"),
    sandbox_warnings: sandbox.warnings ?? [],
    ...state.prepared?.record,
  };
  // Written with the trial's other files at the end; the early config.json covers a crash before that.
  state.sandboxDetails = details;
}

function agentContext(plan: TrialPlan, state: TrialState, rolloutDir: string): AgentContext {
  return {
    task: plan.task,
    sandbox: state.sandbox as Sandbox,
    instruction: plan.task.instruction,
    timeoutSec: plan.task.config.agent.timeoutSec,
    signal: plan.signal,
    rolloutDir,
    model: plan.model,
    modelAccess: plan.modelAccess ?? null,
    env: plan.agentEnv,
    record: (event) => state.events.push({ ...event, ts: event.ts ?? new Date().toISOString() }),
    ...(state.prepared ? { prepared: state.prepared } : {}),
  };
}

async function setupAgent(plan: TrialPlan, ctx: AgentContext): Promise<void> {
  try {
    await plan.agent.setup?.(ctx);
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("agent_setup", messageOf(err), { cause: err });
  }
}

async function runAgent(plan: TrialPlan, ctx: AgentContext, state: TrialState): Promise<void> {
  const limit = ctx.timeoutSec;
  const deadline = new AbortController();
  const timer = limit == null ? null : setTimeout(() => deadline.abort(), limit * 1000);
  ctx.signal = AbortSignal.any([plan.signal, deadline.signal]);
  try {
    state.agentResult = await plan.agent.run(ctx);
    Object.assign(state.timing, state.agentResult.timing);
    if (state.agentResult.error) state.error = state.agentResult.error;
  } catch (err) {
    if (!deadline.signal.aborted || plan.signal.aborted) throw err;
  } finally {
    if (timer) clearTimeout(timer);
  }
  if (plan.signal.aborted)
    throw new CategorizedError("interrupted", "the run was interrupted while the agent ran");
  if (deadline.signal.aborted)
    state.error = { category: "timeout", message: `agent timed out after ${limit}s` };
}

/** Policy failures are still scored; infrastructure failures and interrupts are not worth a verifier run. */
function shouldVerify(plan: TrialPlan, state: TrialState): boolean {
  if (plan.signal.aborted || state.sandbox === null) return false;
  return state.error === null || !isInfrastructure(state.error.category);
}

async function collectLogs(sandbox: Sandbox | null, rolloutDir: string): Promise<void> {
  if (!sandbox) return;
  await sandbox.download("/logs/agent", path.join(rolloutDir, "agent")).catch(() => undefined);
  await sandbox.download("/logs/artifacts", path.join(rolloutDir, "artifacts")).catch(() => undefined);
}

async function finishTrial(
  plan: TrialPlan,
  state: TrialState,
  rolloutDir: string,
  startedAt: Date,
): Promise<TrialResult> {
  let result = resultOf(plan, state, startedAt);
  if (plan.finalize) result = await plan.finalize(result);
  const trajectory = state.events.map((e) => JSON.stringify(e)).join("\n");
  await fs.mkdir(path.join(rolloutDir, "trajectory"), { recursive: true });
  await Promise.all([
    ...(state.sandboxDetails
      ? [
          writeJsonAtomic(path.join(rolloutDir, "config.json"), {
            ...configOf(plan, startedAt),
            ...state.sandboxDetails,
          }),
        ]
      : []),
    writeJsonAtomic(path.join(rolloutDir, "timing.json"), state.timing),
    writeJsonAtomic(path.join(rolloutDir, "prompts.json"), [plan.task.instruction]),
    writeFileAtomic(
      path.join(rolloutDir, "trajectory", "acp_trajectory.jsonl"),
      trajectory ? `${trajectory}\n` : "",
    ),
  ]);
  await writeJsonAtomic(path.join(rolloutDir, "result.json"), result, { durable: true });
  return result;
}

function resultOf(plan: TrialPlan, state: TrialState, startedAt: Date): TrialResult {
  const v = state.verifier;
  const errorCategory = state.error?.category ?? null;
  const verifierErrorCategory = v?.error?.category ?? null;
  const nToolCalls = state.agentResult?.nToolCalls ?? 0;
  return {
    task_name: plan.task.name,
    rollout_name: plan.rolloutName,
    agent: plan.agent.name,
    agent_name: plan.agent.name,
    model: plan.model,
    rewards: v?.rewards ?? null,
    n_tool_calls: nToolCalls,
    ...(state.agentResult?.nSkillInvocations !== undefined
      ? { n_skill_invocations: state.agentResult.nSkillInvocations }
      : {}),
    n_prompts: 1,
    agent_result: { n_tool_calls: nToolCalls, n_prompts: 1 },
    error: state.error?.message ?? null,
    error_category: errorCategory,
    verifier_error: v?.error?.message ?? null,
    verifier_error_category: verifierErrorCategory,
    outcome: outcomeOf(errorCategory, verifierErrorCategory),
    test_last_line: v?.lastLine ?? null,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    timing: state.timing,
    task_digest: plan.taskDigest,
    sandbox: plan.backend.kind,
    sandbox_id: state.sandbox?.id ?? null,
    trajectory_source: state.agentResult?.trajectorySource ?? null,
    partial_trajectory: false,
    job_name: plan.jobName,
    trial: plan.trialLabel,
    attempt: plan.attempt,
    replaces: plan.replaces,
  };
}

function configOf(plan: TrialPlan, startedAt: Date): Record<string, unknown> {
  return {
    task_name: plan.task.name,
    task_path: plan.task.dir,
    task_digest: plan.taskDigest,
    agent: plan.agent.name,
    model: plan.model,
    job_name: plan.jobName,
    trial: plan.trialLabel,
    rollout_name: plan.rolloutName,
    attempt: plan.attempt,
    timeout_sec: plan.task.config.agent.timeoutSec,
    verifier_timeout_sec: plan.task.config.verifier.timeoutSec,
    network_mode: plan.task.config.sandbox.networkMode,
    agent_env: Object.keys(plan.agentEnv).sort(),
    started_at: startedAt.toISOString(),
    ...plan.settings,
  };
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}
