// Shared by the endpoint-failure tests: copies of the hello task whose instruction names a scenario
// (so one scripted endpoint can serve every scenario: its conversations match on that name), scripts in
// each agent's own tool vocabulary, a closed port, and a runner that returns what a run wrote.
import { promises as fs } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Evaluation, type EvaluationEvent, type EvaluationResult } from "../../src/job/evaluation.js";
import type { EvaluationSettings } from "../../src/job/plan.js";
import type { PolicySettings } from "../../src/job/policy.js";
import {
  type EndpointScript,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedToolCall,
  startScriptedEndpoint,
} from "../../src/scripted-endpoint/scripted-server.js";
import { EXAMPLES, rollouts } from "./bench.js";

export const OUTAGE_AGENTS = ["bench-agent", "claude-code", "codex", "opencode"] as const;
export type OutageAgent = (typeof OUTAGE_AGENTS)[number];

/** The task's agent time limit: long, so that a rollout waiting for it would show. */
export const AGENT_TIMEOUT_SEC = 600;

/**
 * The endpoint settings the run is given. `firstByteTimeoutSec`, `idleTimeoutSec`, `endpointRetries`,
 * `failFastCalls` and `failFastRollouts` are the gateway's limits and the fail-fast rules (issue 9).
 */
export type OutageSettings = Omit<EvaluationSettings, "policy" | "model"> & {
  failFastRollouts?: number;
  policy?: Omit<PolicySettings, "baseUrl"> & {
    firstByteTimeoutSec?: number;
    idleTimeoutSec?: number;
    endpointRetries?: number;
    failFastCalls?: number;
  };
};

const HELLO = "echo 'Hello, world!' > /app/hello.txt";

/** The shell command that solves hello, as a tool call in the agent's own vocabulary. */
export function solveCall(agent: OutageAgent): ScriptedToolCall {
  if (agent === "codex") return { name: "exec_command", arguments: { cmd: HELLO } };
  if (agent === "claude-code")
    return { name: "Bash", arguments: { command: HELLO, description: "Write the file" } };
  if (agent === "opencode")
    return { name: "bash", arguments: { command: HELLO, description: "Write the file" } };
  return { name: "bash", arguments: { command: HELLO } };
}

/** The replies that solve hello and end the rollout: the tool call, then (bench-agent) submit, then text. */
export function solveReplies(agent: OutageAgent): ScriptedReply[] {
  const submit: ScriptedReply[] =
    agent === "bench-agent" ? [{ tool_calls: [{ name: "submit", arguments: {} }] }] : [];
  return [
    { content: "I'll create the file.", tool_calls: [solveCall(agent)] },
    ...submit,
    { content: "Done." },
  ];
}

/** A context-length error as vLLM words it: the request the policy produced, not the endpoint's fault. */
export const CONTEXT_LENGTH_400 = JSON.stringify({
  object: "error",
  message:
    "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens in the messages. Please reduce the length of the messages.",
  type: "BadRequestError",
  param: null,
  code: 400,
});

/**
 * One conversation per scenario, selected by the scenario's name in the task instruction. OpenCode's
 * title call has its own conversation, after the always-failing ones: were the title request to
 * carry the instruction, an endpoint that is down fails it too.
 */
export function outageScript(agent: OutageAgent): EndpointScript {
  const failing: EndpointScript["conversations"] = [
    { match: "SCENARIO-500", replies: [{ fail: { status: 500 } }] },
    { match: "SCENARIO-MALFORMED", replies: [{ malformed: true }] },
    { match: "SCENARIO-HANG", replies: [{ hang: true }] },
    // Every turn is cut: an agent that keeps the partial answer as a message (Codex does) is cut again.
    { match: "SCENARIO-CUT", replies: Array.from({ length: 8 }, (): ScriptedReply => ({ cut: true })) },
    { match: "SCENARIO-401", replies: [{ fail: { status: 401 } }] },
  ];
  const title: EndpointScript["conversations"] =
    agent === "opencode" ? [{ match: "Generate a title", replies: [{ content: "Hello file" }] }] : [];
  const [call] = solveReplies(agent);
  return {
    conversations: [
      ...failing,
      ...title,
      { match: "SCENARIO-RECOVER", replies: [{ fail: { status: 500 }, times: 2 }, ...solveReplies(agent)] },
      {
        match: "SCENARIO-LAST-400",
        // The file is written on the first turn; the call after it is refused as the policy's own.
        replies: [call as ScriptedReply, { fail: { status: 400, body: CONTEXT_LENGTH_400 } }],
      },
      { replies: solveReplies(agent) },
    ],
  };
}

/** Copies of examples/tasks/hello named after each scenario, whose instruction begins with its tag. */
export async function outageTasks(dir: string, scenarios: Record<string, string>): Promise<string> {
  const instruction = await fs.readFile(path.join(EXAMPLES, "hello/instruction.md"), "utf8");
  for (const [name, tag] of Object.entries(scenarios)) {
    const task = path.join(dir, name);
    await fs.cp(path.join(EXAMPLES, "hello"), task, { recursive: true });
    await fs.writeFile(path.join(task, "instruction.md"), `${tag}\n\n${instruction}`);
    const toml = await fs.readFile(path.join(task, "task.toml"), "utf8");
    const long = toml.replace(/(\[agent\][^[]*?timeout_sec = )\d+/, `$1${AGENT_TIMEOUT_SEC}`);
    if (long === toml) throw new Error(`${task}/task.toml: no [agent] timeout_sec to lengthen`);
    await fs.writeFile(path.join(task, "task.toml"), long);
  }
  return dir;
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface OutageRun {
  result: EvaluationResult;
  /** Every event the run emitted, and the messages of its warnings. */
  events: EvaluationEvent[];
  warnings: string[];
  requests: RecordedRequest[];
  /** Each rollout's result.json, by task name (the final attempt). */
  byTask: Record<string, Record<string, any>>;
  elapsedSec: number;
}

/**
 * Serves `script` (or points the run at `baseUrl`), runs one Evaluation and reads what it wrote.
 * `serverKey`: the scripted endpoint requires this key, while the run sends `settings.policy.apiKey`.
 */
export async function runOutage(
  script: EndpointScript,
  settings: OutageSettings & { jobsDir: string },
  opts: { baseUrl?: string; serverKey?: string } = {},
): Promise<OutageRun> {
  const t0 = Date.now();
  const endpoint = await startScriptedEndpoint({ script, apiKey: opts.serverKey ?? null });
  const warnings: string[] = [];
  const events: EvaluationEvent[] = [];
  try {
    const { policy: policySettings, onEvent, ...rest } = settings;
    const evaluation = new Evaluation({
      model: "vllm/scripted",
      retryAttempts: 0,
      env: {},
      ...rest,
      onEvent: (e: EvaluationEvent) => {
        events.push(e);
        if (e.type === "warning") warnings.push(e.message);
        onEvent?.(e);
      },
      policy: { ...policySettings, baseUrl: opts.baseUrl ?? endpoint.baseUrl },
    } as EvaluationSettings);
    const result = await evaluation.run();
    const byTask: Record<string, Record<string, any>> = {};
    for (const { result: r } of await rollouts(settings.jobsDir)) {
      if (r && typeof r.task_name === "string") {
        const seen = byTask[r.task_name];
        if (!seen || String(r.started_at ?? "") >= String(seen.started_at ?? "")) byTask[r.task_name] = r;
      }
    }
    return {
      result,
      events,
      warnings,
      requests: endpoint.requests,
      byTask,
      elapsedSec: (Date.now() - t0) / 1000,
    };
  } finally {
    await endpoint.close();
  }
}
