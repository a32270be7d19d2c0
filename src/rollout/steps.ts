// A multi-step rollout (Harbor's [[steps]]): one sandbox and one agent setup for all steps; per step,
// its workdir files and setup.sh, the agent with the step's instruction and limit, then the verifier
// with the shared and the step's tests. Each step's agent/ and verifier/ go to steps/<name>/. The
// rollout stops after a step below its min_reward, and on any failure that leaves it unscored: a
// step whose verifier failed, or whose agent phase failed for a reason not the policy's, makes the
// whole rollout unscored (never a silent 0, and never a mean over the steps that happened to pass).
import { promises as fs } from "node:fs";
import path from "node:path";
import type { AgentContext } from "../agents/types.js";
import { CategorizedError, messageOf } from "../errors.js";
import { opt } from "../options.js";
import type { Sandbox } from "../sandbox/types.js";
import { type AgentErrorCategory, isUnscoredFailure } from "../schemas/outcome.js";
import type { WrittenStepResult } from "../schemas/result.js";
import { promptOf, type Task, type TaskStep } from "../task/types.js";
import { verifierModeOf } from "../task/verifier-mode.js";
import { runVerifier, type VerifierOutcome } from "../verifier/run.js";
import { snapshotForVerifier } from "../verifier/snapshot.js";
import { verifierHardening } from "./hardening.js";
import { enterPhaseNetwork } from "./network.js";
import { verifyStepApart } from "./separate-verifier.js";
import type { RolloutState } from "./state.js";
import { combineStepRewards, minRewardStop, type ScoredStep } from "./step-reward.js";
import type { RolloutPlan } from "./types.js";

export const STEPS_DIR = "steps";

/** The task as one step's agent sees it: the step's instruction and solution. */
export function stepView(task: Task, step: TaskStep): Task {
  return {
    ...task,
    instruction: step.instruction,
    solutionDir: step.solutionDir,
    solveScript: step.solveScript,
  };
}

type AgentRunner = (plan: RolloutPlan, ctx: AgentContext, state: RolloutState) => Promise<void>;

/** What the steps so far add up to. */
interface StepsSoFar {
  scored: ScoredStep[];
  /** The first policy failure of a step (a timeout, the agent's own error): still scored. */
  policyError: RolloutState["error"];
  last: VerifierOutcome | null;
  nToolCalls: number;
  totals: { agent_execution: number; verifier: number };
}

/** One step as it runs: where its files go, its timing, and its line of step_results. */
interface StepRun {
  step: TaskStep;
  index: number;
  folder: string;
  timing: WrittenStepResult["timing"];
  record(fields: Partial<WrittenStepResult>): WrittenStepResult;
}

/** How a step ended: the next one runs, the rollout stops (min_reward), or it ends here. */
type StepEnd = "next" | "stop" | "ended";

export async function runSteps(
  plan: RolloutPlan,
  ctx: AgentContext,
  state: RolloutState,
  rolloutDir: string,
  runAgent: AgentRunner,
): Promise<void> {
  const steps = plan.task.steps ?? [];
  const so: StepsSoFar = {
    scored: [],
    policyError: null,
    last: null,
    nToolCalls: 0,
    totals: { agent_execution: 0, verifier: 0 },
  };
  state.stepResults = [];
  state.prompts = [];
  for (const [index, step] of steps.entries()) {
    const run = stepRun(state, step, index, rolloutDir);
    plan.hooks?.stepStarted?.(step.name);
    const end = await runStep(plan, ctx, state, run, so, rolloutDir, runAgent);
    if (end === "ended") return;
    if (end === "stop") break;
  }
  state.error = so.policyError;
  const strategy = plan.task.config.multiStepRewardStrategy ?? "mean";
  state.verifier = {
    rewards: combineStepRewards(so.scored, strategy),
    rule: strategy === "final" ? "multi_step_final" : "multi_step_mean",
    error: null,
    exitCode: so.last?.exitCode ?? null,
    lastLine: so.last?.lastLine ?? null,
  };
  finish(state, so);
}

function stepRun(state: RolloutState, step: TaskStep, index: number, rolloutDir: string): StepRun {
  const started = new Date();
  const timing: WrittenStepResult["timing"] = {};
  return {
    step,
    index,
    folder: path.join(rolloutDir, STEPS_DIR, step.name),
    timing,
    record(fields) {
      const entry: WrittenStepResult = {
        step_name: step.name,
        rewards: null,
        reward_rule: null,
        error: null,
        error_category: null,
        verifier_error: null,
        verifier_error_category: null,
        test_last_line: null,
        stopped_after: null,
        started_at: started.toISOString(),
        finished_at: new Date().toISOString(),
        timing,
        ...fields,
      };
      state.stepResults?.push(entry);
      return entry;
    },
  };
}

/** One step: its files and setup, its agent, its verifier. */
async function runStep(
  plan: RolloutPlan,
  ctx: AgentContext,
  state: RolloutState,
  run: StepRun,
  so: StepsSoFar,
  rolloutDir: string,
  runAgent: AgentRunner,
): Promise<StepEnd> {
  const { step, timing } = run;
  const sandbox = state.sandbox as Sandbox;
  const t0 = Date.now();
  const setupFailure = await prepareStep(plan, sandbox, step, run.index === 0);
  if (setupFailure) {
    timing.setup = seconds(Date.now() - t0);
    run.record({ error: setupFailure, error_category: "task_error" });
    state.error = { category: "task_error", message: `step ${step.name}: ${setupFailure}` };
    return "ended";
  }
  // The step's own files arrived after the first snapshot (and after the last step's hardening):
  // they are the task's, so the workspace's files are taken again; the rest stays the first one's.
  if (state.verifierSnapshot && step.workdirDir) {
    const first = state.verifierSnapshot;
    state.verifierSnapshot = await snapshotForVerifier(sandbox, first);
    await first.dispose();
  }
  timing.setup = seconds(Date.now() - t0);
  const stepError = await runStepAgent(plan, ctx, state, run, so, runAgent);
  if (stepError === "ended") return "ended";
  return verifyStep(plan, state, run, so, rolloutDir, stepError);
}

/** The step's agent, under the step's instruction and limit. "ended": a failure not the policy's. */
async function runStepAgent(
  plan: RolloutPlan,
  ctx: AgentContext,
  state: RolloutState,
  run: StepRun,
  so: StepsSoFar,
  runAgent: AgentRunner,
): Promise<Partial<WrittenStepResult> | "ended"> {
  const { step, timing } = run;
  const sandbox = state.sandbox as Sandbox;
  ctx.task = stepView(plan.task, step);
  ctx.instruction = promptOf(ctx.task, step.instruction);
  ctx.timeoutSec = step.agentTimeoutSec;
  state.prompts?.push(ctx.instruction);
  state.error = null;
  const t1 = Date.now();
  await enterPhaseNetwork(plan, state, "agent");
  await runAgent(plan, ctx, state);
  timing.agent_execution = seconds(Date.now() - t1);
  so.totals.agent_execution += timing.agent_execution;
  so.nToolCalls += state.agentResult?.nToolCalls ?? 0;
  const agentError = state.error as RolloutState["error"];
  const stepError = agentError
    ? { error: agentError.message, error_category: agentError.category as AgentErrorCategory }
    : {};
  if (agentError && isUnscoredFailure(agentError.category)) {
    await archiveAgentLogs(sandbox, run.folder);
    run.record(stepError);
    state.error = { category: agentError.category, message: `step ${step.name}: ${agentError.message}` };
    return "ended";
  }
  so.policyError ??= agentError
    ? { ...agentError, message: `step ${step.name}: ${agentError.message}` }
    : null;
  await archiveAgentLogs(sandbox, run.folder);
  return stepError;
}

/** The step's verifier, with the shared and the step's tests; a step it cannot score ends the rollout. */
async function verifyStep(
  plan: RolloutPlan,
  state: RolloutState,
  run: StepRun,
  so: StepsSoFar,
  rolloutDir: string,
  stepError: Partial<WrittenStepResult>,
): Promise<StepEnd> {
  const { step, timing } = run;
  const sandbox = state.sandbox as Sandbox;
  state.reached = "verifier";
  const t2 = Date.now();
  const verify = (box: Sandbox, apart: boolean) =>
    runVerifier(box, plan.task, rolloutDir, {
      uploads: step.testsDirs,
      timeoutSec: step.verifierTimeoutSec,
      env: step.verifierEnv,
      outDir: path.join(run.folder, "verifier"),
      clearMount: true,
      hardening: verifierHardening(plan, state.verifierSnapshot, apart),
    });
  let v: VerifierOutcome;
  if (verifierModeOf(plan.task) === "separate") {
    // A fresh sandbox per step (its own network); the agent's stays for the next step.
    v = await verifyStepApart(plan, sandbox, (box) => verify(box, true), timing);
  } else {
    await enterPhaseNetwork(plan, state, "verifier");
    v = await verify(sandbox, false);
  }
  timing.verifier = seconds(Date.now() - t2);
  so.totals.verifier += timing.verifier;
  so.last = v;
  const fields = {
    ...stepError,
    rewards: v.rewards,
    reward_rule: v.rule,
    verifier_error: v.error?.message ?? null,
    verifier_error_category: v.error?.category ?? null,
    test_last_line: v.lastLine,
  };
  if (v.error || !v.rewards) {
    run.record(fields);
    state.error = so.policyError;
    state.verifier = {
      ...v,
      error: v.error && { ...v.error, message: `step ${step.name}: ${v.error.message}` },
    };
    finish(state, so);
    return "ended";
  }
  so.scored.push({ name: step.name, rewards: v.rewards });
  const steps = plan.task.steps ?? [];
  const stop = run.index < steps.length - 1 ? minRewardStop(step.minReward, v.rewards) : null;
  run.record({ ...fields, stopped_after: stop });
  return stop ? "stop" : "next";
}

function finish(state: RolloutState, so: StepsSoFar) {
  if (state.agentResult) state.agentResult = { ...state.agentResult, nToolCalls: so.nToolCalls };
  state.timing.agent_execution = seconds(so.totals.agent_execution * 1000);
  state.timing.verifier = seconds(so.totals.verifier * 1000);
}

/**
 * The step's files into the workdir (owned like the workdir, so the agent may change them), then its
 * workdir/setup.sh. Returns why the step cannot run, or null. The oracle also gets the step's solution.
 */
async function prepareStep(
  plan: RolloutPlan,
  sandbox: Sandbox,
  step: TaskStep,
  first: boolean,
): Promise<string | null> {
  const workdir = sandbox.workdir;
  if (step.workdirDir) {
    await sandbox.upload(step.workdirDir, workdir);
    await sandbox.exec(`chown -R "$(stat -c %u:%g ${q(workdir)})" ${q(workdir)} 2>/dev/null || true`, {
      user: "root",
    });
    const setup = await fs.stat(path.join(step.workdirDir, "setup.sh")).catch(() => null);
    if (setup?.isFile()) {
      const run = await sandbox.exec(`bash ${q(`${workdir}/setup.sh`)}`, {
        user: "agent",
        cwd: workdir,
        signal: plan.signal,
      });
      if (run.exitCode !== 0) {
        const tail = (run.stdout + run.stderr).trim().split("\n").slice(-3).join(" | ").slice(0, 300);
        return `steps/${step.name}/workdir/setup.sh exited with ${run.exitCode ?? "a signal"}${tail ? `: ${tail}` : ""}; fix the script`;
      }
    }
  }
  if (plan.run.agent.seesSolution) {
    if (!step.solutionDir) {
      throw new CategorizedError(
        "task_error",
        `task ${plan.task.name}: step ${step.name} has no solution, so ${opt("agent", "oracle")} cannot run it — fix: add steps/${step.name}/solution/solve.sh or solution/solve.sh`,
      );
    }
    // The agent's setup uploaded the first step's solution already.
    if (!first) {
      const mount = plan.task.solutionMount;
      await sandbox.exec(`rm -rf -- ${mount} && mkdir -p ${mount}`, { user: "root" });
      await sandbox.upload(step.solutionDir, mount);
    }
  }
  return null;
}

/** The step's /logs/agent into steps/<name>/agent, emptied for the next step. */
async function archiveAgentLogs(sandbox: Sandbox, folder: string): Promise<void> {
  try {
    await sandbox.download("/logs/agent", path.join(folder, "agent"));
    await sandbox.exec("find /logs/agent -mindepth 1 -delete", { user: "root" });
  } catch (err) {
    throw new CategorizedError("infra_error", `archiving the step's agent logs failed: ${messageOf(err)}`);
  }
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}
