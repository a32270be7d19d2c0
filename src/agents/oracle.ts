// The oracle runs the task's reference solution, as upstream does: a correct task scores 1.0 on
// its oracle run before any model sees it. A non-zero exit is only logged; the verifier decides.
// A task without a solution is the task's failure (task_error), not the agent's: another attempt
// would fail the same way, so it is never retried.
import { CategorizedError } from "../errors.js";
import { opt } from "../options.js";
import type { Agent, AgentContext, AgentRunResult } from "./types.js";

const STDOUT_TAIL = 4000;

export const oracleAgent: Agent = {
  name: "oracle",
  usesModel: false,
  seesSolution: true,
  async setup(ctx: AgentContext): Promise<void> {
    const { task } = ctx;
    if (!task.solutionDir || !task.solveScript) {
      const script = task.layout === "native" ? "oracle/solve.sh" : "solution/solve.sh";
      throw new CategorizedError(
        "task_error",
        `task ${task.name}: it has no solution, so ${opt("agent", "oracle")} cannot run it — fix: add ${script} to ${task.dir}, or run another agent`,
      );
    }
    await ctx.sandbox.upload(task.solutionDir, task.solutionMount);
  },
  async run(ctx: AgentContext): Promise<AgentRunResult> {
    const { task } = ctx;
    const script = `${task.solutionMount}/${task.solveScript}`;
    const command = `DEBIAN_FRONTEND=noninteractive bash ${script} > /logs/agent/oracle.txt 2>&1`;
    const result = await ctx.sandbox.exec(command, {
      user: "agent",
      timeoutSec: ctx.timeoutSec,
      signal: ctx.signal,
      env: task.config.oracle.env,
    });
    ctx.record({
      type: "oracle",
      command: `${task.layout === "native" ? "oracle" : "solution"}/${task.solveScript}`,
      return_code: result.exitCode,
      stdout: (result.stdout + result.stderr).slice(-STDOUT_TAIL),
    });
    return { nToolCalls: 0, trajectorySource: "oracle" };
  },
};

/** nop does nothing: a sound verifier then scores the untouched workspace 0. */
export const nopAgent: Agent = {
  name: "nop",
  usesModel: false,
  seesSolution: false,
  async run(): Promise<AgentRunResult> {
    return { nToolCalls: 0, trajectorySource: null };
  },
};
