// How long a rollout runs on after the policy endpoint goes down: from the moment the server stops
// (after answering the agent's first call with a shell command) to the rollout ending
// provider_error, next to the agent's own time limit, which is what the rollout would have waited
// without the gateway's fail-fast. Claude Code is the target (< 10 s); the other agents are
// shown too. Container sandbox where an engine answers, else the namespace sandbox.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Evaluation } from "../src/job/evaluation.js";
import { selectBackend } from "../src/sandbox/select.js";
import { type ScriptedToolCall, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { copyTree } from "../src/util/copy-tree.js";
import { type BenchRow, median } from "./report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LIMIT_SEC = 600;
const TARGET_SEC = 10;
const RUNS = 3;

const SHELL: Record<string, (command: string) => ScriptedToolCall> = {
  "claude-code": (command) => ({ name: "Bash", arguments: { command, description: "run" } }),
  codex: (command) => ({ name: "exec_command", arguments: { cmd: command } }),
  opencode: (command) => ({ name: "bash", arguments: { command, description: "run" } }),
  "bench-agent": (command) => ({ name: "bash", arguments: { command } }),
};

/** A copy of the hello task whose agent may run for LIMIT_SEC. */
async function longTask(scratch: string): Promise<string> {
  const dir = path.join(scratch, "hello-long");
  await copyTree(path.join(REPO, "examples/tasks/hello"), dir);
  const toml = path.join(dir, "task.toml");
  const text = await fs.readFile(toml, "utf8");
  await fs.writeFile(
    toml,
    text.replace(/\[agent\]\ntimeout_sec = \d+/, `[agent]\ntimeout_sec = ${LIMIT_SEC}`),
  );
  return dir;
}

/** Seconds from the endpoint going down to the rollout's end, and the outcome it ended with. */
async function downToEnd(agent: string, task: string, sandbox: string, jobsDir: string) {
  const call = SHELL[agent] as (c: string) => ScriptedToolCall;
  const title = agent === "opencode" ? [{ match: "Generate a title", replies: [{ content: "T" }] }] : [];
  const policy = await startScriptedEndpoint({
    script: {
      conversations: [...title, { replies: [{ content: "", tool_calls: [call("sleep 1; echo ok")] }] }],
    },
    recordRequests: true,
  });
  let downAt = 0;
  const watch = setInterval(() => {
    const answered = policy.requests.some((r) => !JSON.stringify(r.body).includes("Generate a title"));
    if (downAt === 0 && answered) {
      downAt = performance.now();
      void policy.close();
    }
  }, 2);
  let endedAt = 0;
  try {
    const run = await new Evaluation({
      tasks: task,
      agent,
      model: "vllm/scripted",
      sandbox: sandbox as "container" | "namespace",
      jobsDir,
      retryAttempts: 0,
      env: {},
      policy: { baseUrl: policy.baseUrl },
      onEvent: (e) => {
        if (e.type === "rollout-end") endedAt = performance.now();
      },
    }).run();
    const outcome = run.results[0]?.error_category ?? "scored";
    if (downAt === 0) throw new Error(`${agent}: the first model call never came`);
    return { sec: (endedAt - downAt) / 1000, outcome };
  } finally {
    clearInterval(watch);
    await policy.close().catch(() => undefined);
  }
}

export async function benchEndpoint(): Promise<BenchRow[]> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-endpoint-"));
  const rows: BenchRow[] = [];
  try {
    const task = await longTask(scratch);
    const sandbox = (await selectBackend("auto")).backend.kind;
    for (const agent of ["claude-code", "codex", "opencode", "bench-agent"]) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await downToEnd(agent, task, sandbox, path.join(scratch, `${agent}-${i}`));
        if (r.outcome !== "provider_error")
          throw new Error(`${agent} ended ${r.outcome}, not provider_error`);
        times.push(r.sec);
      }
      const value = median(times);
      rows.push({
        name: `${agent}: endpoint down -> provider_error (${sandbox}, median of ${RUNS})`,
        value,
        unit: "s",
        baseline: LIMIT_SEC,
        baselineName: "the agent's time limit",
        ...(agent === "claude-code" ? { target: `< ${TARGET_SEC} s`, ok: value < TARGET_SEC } : {}),
      });
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return rows;
}
