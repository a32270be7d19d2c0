// One rollout: sandbox up, agent runs under its limit, verifier scores, result.json last.
// Every failure becomes a categorized result rather than an exception, so one bad sandbox never
// stops a job.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { AgentContext } from "../agents/types.js";
import { CategorizedError, categoryOf, messageOf } from "../errors.js";
import type { Sandbox } from "../sandbox/types.js";
import { isUnscoredFailure } from "../schemas/outcome.js";
import type { RolloutResult, TimingInfo } from "../schemas/result.js";
import { promptOf } from "../task/types.js";
import { collectArtifacts, writeArtifactManifest } from "./artifacts.js";
import { takeVerifierSnapshot } from "./hardening.js";
import { enterPhaseNetwork } from "./network.js";
import { type AgentEnding, decideAgentEnding } from "./outcome.js";
import { readyEnvironment } from "./ready.js";
import { recordRollout, writeConfig } from "./record.js";
import type { RolloutState } from "./state.js";
import { runSteps, stepView } from "./steps.js";
import { type RolloutPlan, rolloutDirOf, sayWarnings } from "./types.js";
import { judgeVerifierFailure, type Phase, verifyRollout } from "./verify.js";

export async function runRollout(plan: RolloutPlan): Promise<RolloutResult> {
  const rolloutDir = rolloutDirOf(plan);
  // Each phase says when it begins, for whoever watches the run.
  const phase: Phase = (state, name, work) => {
    plan.onPhase?.(name);
    return timed(state, name, work);
  };
  const startedAt = new Date();
  const state: RolloutState = {
    sandbox: null,
    prepared: null,
    events: [],
    agentResult: null,
    error: null,
    verifier: null,
    timing: {},
  };
  await fs.mkdir(rolloutDir, { recursive: true });
  // Early, so that a rollout cut short (the process killed) still says what it was.
  await writeConfig(plan, startedAt);
  try {
    if (plan.run.agent.prepareHost) await phase(state, "agent_install", () => prepareHost(plan, state));
    await phase(state, "environment_setup", async () => {
      await startSandbox(plan, state);
      await readyEnvironment(state.sandbox as Sandbox, plan.task, plan.signal);
      state.verifierSnapshot = await takeVerifierSnapshot(plan, state.sandbox as Sandbox);
    });
    const ctx = agentContext(plan, state, rolloutDir);
    if (plan.run.agent.setup) await phase(state, "agent_setup", () => setupAgent(plan, ctx));
    if (plan.task.steps?.length) {
      // One sandbox, one agent setup; each step runs its agent and verifier (steps.ts).
      plan.onPhase?.("agent_execution");
      await runSteps(plan, ctx, state, rolloutDir, runAgent);
    } else {
      await enterPhaseNetwork(plan, state, "agent");
      await phase(state, "agent_execution", () => runAgent(plan, ctx, state));
    }
    if (plan.task.config.artifacts.length > 0) {
      // Copied once the agent's processes are gone, so nothing changes them halfway through the copy.
      await (state.sandbox as Sandbox).killAgentProcesses();
      state.artifacts = await collectArtifacts(
        state.sandbox as Sandbox,
        plan.task.config.artifacts,
        rolloutDir,
      );
    }
    // Hardening in both modes; a sandbox the agent never ran in has no processes of its to kill.
    if (!plan.task.steps?.length && shouldVerify(plan, state))
      await verifyRollout(plan, state, rolloutDir, phase);
  } catch (err) {
    // Thrown in the verifier's phase: its infrastructure failed (whose doing that was, the controls say).
    if (state.reached === "verifier") state.verifierInfra = true;
    // An infrastructure failure outranks a policy failure recorded earlier (e.g. a timeout).
    if (!state.error || !isUnscoredFailure(state.error.category)) {
      state.error = {
        category: plan.signal.aborted ? "interrupted" : categoryOf(err),
        message: messageOf(err),
      };
    }
  } finally {
    await collectLogs(state.sandbox, rolloutDir);
    await writeArtifactManifest(rolloutDir, state.artifacts ?? []).catch(() => undefined);
    // Limits are settled after the agent (what it went past), so config.json reads them again.
    if (state.sandboxDetails && state.sandbox?.limits)
      state.sandboxDetails.limits = { ...state.sandbox.limits };
    // Removing the sandbox is not on the rollout's path: the job waits for it before it ends.
    const stopping = state.sandbox?.stop().catch(() => undefined);
    if (stopping && plan.deferCleanup) plan.deferCleanup(stopping);
    else await stopping;
    await state.prepared?.release?.().catch(() => undefined);
    await state.verifierSnapshot?.dispose().catch(() => undefined);
  }
  // After the sandbox is gone: the controls are rollouts of their own.
  await judgeVerifierFailure(plan, state);
  state.timing.total = seconds(Date.now() - startedAt.getTime());
  return recordRollout(plan, state, startedAt);
}

async function timed(state: RolloutState, name: keyof TimingInfo, work: () => Promise<void>): Promise<void> {
  const t0 = Date.now();
  try {
    await work();
  } finally {
    state.timing[name] = seconds(Date.now() - t0);
  }
}

async function prepareHost(plan: RolloutPlan, state: RolloutState): Promise<void> {
  try {
    state.prepared =
      (await plan.run.agent.prepareHost?.({
        task: plan.task,
        sandboxKind: plan.run.backend.kind,
        network: plan.task.config.sandbox.networkMode !== "no-network",
        hostService: plan.hooks?.hostService ?? null,
        sandboxRelays:
          plan.run.backend.kind === "container" || ((await plan.run.backend.relaysGateway?.()) ?? false),
        signal: plan.signal,
      })) ?? null;
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("agent_setup", messageOf(err), { cause: err });
  }
  Object.assign(state.timing, state.prepared?.timing);
}

async function startSandbox(plan: RolloutPlan, state: RolloutState): Promise<void> {
  if (plan.signal.aborted)
    throw new CategorizedError("interrupted", "the run was interrupted before the trial started");
  try {
    state.sandbox = await plan.run.backend.create({
      task: plan.task,
      jobName: plan.run.jobName,
      rolloutName: plan.rolloutName,
      network: plan.task.config.sandbox.networkMode !== "no-network",
      jobDir: plan.job.dir,
      ...(plan.hooks?.hostService ? { hostService: plan.hooks.hostService } : {}),
      ...(plan.hooks?.policyEndpoint ? { policyEndpoint: plan.hooks.policyEndpoint } : {}),
      ...(state.prepared?.readOnlyMounts ? { readOnlyMounts: state.prepared.readOnlyMounts } : {}),
    });
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("sandbox_setup", messageOf(err), { cause: err });
  }
  const sandbox = state.sandbox;
  sayWarnings(plan, sandbox);
  const details = {
    sandbox_id: sandbox.id,
    sandbox_user: sandbox.agentIsNonRoot ? "agent" : "root",
    sandbox_workdir: sandbox.workdir,
    sandbox_image: sandbox.image ?? null,
    network_enforcement:
      sandbox.networkEnforcement ??
      (plan.task.config.sandbox.networkMode === "no-network" ? "enforced" : "public"),
    sandbox_warnings: sandbox.warnings ?? [],
    limits: sandbox.limits ?? null,
    host_block: sandbox.hostBlock ?? null,
    verifier_hardening: plan.run.verifierHardening,
    ...state.prepared?.record,
  };
  // Written with the rollout's other files at the end; the early config.json covers a crash before that.
  state.sandboxDetails = details;
}

function agentContext(plan: RolloutPlan, state: RolloutState, rolloutDir: string): AgentContext {
  const first = plan.task.steps?.[0];
  const task = first ? stepView(plan.task, first) : plan.task;
  return {
    task,
    sandbox: state.sandbox as Sandbox,
    instruction: promptOf(task),
    timeoutSec: first ? first.agentTimeoutSec : plan.task.config.agent.timeoutSec,
    signal: plan.signal,
    rolloutDir,
    model: plan.run.model,
    modelAccess: plan.hooks?.modelAccess ?? null,
    env: plan.run.agentEnv,
    record: (event) => state.events.push({ ...event, ts: event.ts ?? new Date().toISOString() }),
    ...(state.prepared ? { prepared: state.prepared } : {}),
  };
}

async function setupAgent(plan: RolloutPlan, ctx: AgentContext): Promise<void> {
  try {
    await plan.run.agent.setup?.(ctx);
  } catch (err) {
    throw err instanceof CategorizedError
      ? err
      : new CategorizedError("agent_setup", messageOf(err), { cause: err });
  }
}

async function runAgent(plan: RolloutPlan, ctx: AgentContext, state: RolloutState): Promise<void> {
  const limit = ctx.timeoutSec;
  const deadline = new AbortController();
  const timer = limit == null ? null : setTimeout(() => deadline.abort(), limit * 1000);
  const ended = plan.hooks?.modelEnded;
  ctx.signal = AbortSignal.any([plan.signal, deadline.signal, ...(ended ? [ended] : [])]);
  let own: AgentEnding | null = null;
  state.reached = "agent";
  try {
    state.agentResult = await plan.run.agent.run(ctx);
    Object.assign(state.timing, state.agentResult.timing);
    own = state.agentResult.error ?? null;
  } catch (err) {
    // Stopped by the clock or by the gateway: the ending comes from those, not from the kill's error.
    if (!plan.signal.aborted && !deadline.signal.aborted && !ended?.aborted) {
      own = { category: categoryOf(err), message: messageOf(err) };
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
  if (plan.signal.aborted)
    throw new CategorizedError("interrupted", "the run was interrupted while the agent ran");
  state.error = decideAgentEnding({
    deadlinePassed: deadline.signal.aborted && !ended?.aborted,
    limitSec: limit,
    agent: own,
    witness: plan.hooks?.modelWitness?.() ?? null,
  });
}

/** Policy failures are still scored; infrastructure failures and interrupts are not worth a verifier run. */
function shouldVerify(plan: RolloutPlan, state: RolloutState): boolean {
  if (plan.signal.aborted || state.sandbox === null) return false;
  return state.error === null || !isUnscoredFailure(state.error.category);
}

async function collectLogs(sandbox: Sandbox | null, rolloutDir: string): Promise<void> {
  if (!sandbox) return;
  await sandbox.download("/logs/agent", path.join(rolloutDir, "agent")).catch(() => undefined);
  await sandbox.download("/logs/artifacts", path.join(rolloutDir, "artifacts")).catch(() => undefined);
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}
