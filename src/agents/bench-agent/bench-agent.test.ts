// bench-agent end to end: the scripted endpoint behind the real gateway, and a real sandbox (the
// namespace sandbox where this machine has it, else real bash in a temp folder).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CategorizedError } from "../../errors.js";
import { type Harness, type Loose, recorded, startHarness } from "../../gateway/testing/harness.js";
import type { ExecOptions, ExecResult, Sandbox } from "../../sandbox/types.js";
import type { Task } from "../../task/types.js";
import type { AgentContext, TrajectoryEvent } from "../types.js";
import { createBenchAgent } from "./index.js";

const bash = (command: string) => ({ name: "bash", arguments: { command } });
const submit = (answer: string) => ({ name: "submit", arguments: { answer } });

let h: Harness;
let sandbox: Sandbox;
let task: Task;
let scratch: string;

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "bench-agent-"));
  h = await startHarness({
    gateway: { capture: { enabled: true }, sampling: { temperature: 0 } },
    script: {
      conversations: [
        {
          match: "hello task",
          replies: [
            {
              reasoning: "Write the file first.",
              tool_calls: [bash("echo 'Hello, world!' > hello.txt && cat hello.txt")],
            },
            { content: "Now a command that fails.", tool_calls: [bash("ls /no/such/dir")] },
            { tool_calls: [submit("hello.txt written")] },
            { content: "never asked" },
          ],
        },
        {
          match: "limits task",
          replies: [
            { tool_calls: [bash("seq 1 2000")] },
            { tool_calls: [bash("sleep 5; echo late")] },
            { tool_calls: [submit("")] },
          ],
        },
        { match: "loop task", replies: Array.from({ length: 5 }, () => ({ tool_calls: [bash("true")] })) },
        { match: "answer only", replies: [{ content: "The answer is 4." }] },
        {
          match: "broken arguments",
          replies: [
            {
              tool_calls: [
                { name: "bash", arguments: "{not json" },
                { name: "rm_rf", arguments: {} },
              ],
            },
          ],
        },
        { match: "policy 503", replies: [{ fail: { status: 503, body: "engine overloaded" } }] },
        {
          match: "policy 400",
          replies: [{ fail: { status: 400, body: '{"error":{"message":"prompt is too long"}}' } }],
        },
        { match: "policy hangs", replies: [{ hang: true }] },
      ],
    },
  });
  ({ sandbox, task } = await makeSandbox(scratch));
});
after(async () => {
  await sandbox.stop();
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});

function context(rollout: string, instruction: string, overrides: Partial<AgentContext> = {}) {
  const events: TrajectoryEvent[] = [];
  const { apiKey } = h.rollout(rollout);
  const ctx: AgentContext = {
    task,
    sandbox,
    instruction,
    timeoutSec: null,
    signal: new AbortController().signal,
    rolloutDir: scratch,
    model: "vllm/Qwen/Qwen3-8B",
    modelAccess: { baseUrl: h.gateway.url, apiKey, model: "Qwen/Qwen3-8B" },
    env: {},
    record: (event) => events.push(event),
    ...overrides,
  };
  return { ctx, events };
}

describe("bench-agent", () => {
  it("runs the tool loop: bash in the sandbox, tool results back to the policy, submit ends it", async () => {
    const { ctx, events } = context("hello", "Please do the hello task: write Hello, world! to hello.txt.");
    const result = await createBenchAgent().run(ctx);
    assert.deepEqual(result, { nToolCalls: 3, trajectorySource: "bench-agent" });
    const file = await sandbox.exec("cat hello.txt", { user: "root" });
    assert.equal(file.stdout, "Hello, world!\n");

    assert.deepEqual(
      events.map((e) => (e.type === "tool_call" ? `tool_call:${e.kind}:${e.status}` : e.type)),
      [
        "user_message",
        "agent_thought",
        "tool_call:execute:completed",
        "agent_message",
        "tool_call:execute:failed",
        "tool_call:other:completed",
      ],
    );
    const [, thought, first, , failed, done] = events as Loose[];
    assert.equal(thought.text, "Write the file first.");
    assert.deepEqual(first.raw_input, { command: "echo 'Hello, world!' > hello.txt && cat hello.txt" });
    assert.equal(first.raw_output.exit_code, 0);
    assert.equal(first.raw_output.output, "Hello, world!\n");
    assert.notEqual(failed.raw_output.exit_code, 0);
    assert.match(failed.raw_output.output, /No such file/);
    assert.deepEqual(done.raw_input, { answer: "hello.txt written" });

    const lines = (await recorded(h, "hello")) as Loose[];
    assert.equal(lines.length, 3, "submit ended the loop: no fourth model call");
    const second = lines[1].metadata.upstream_request.body;
    assert.equal(second.messages[0].role, "system");
    assert.equal(second.messages[1].content, ctx.instruction);
    assert.deepEqual(
      second.tools.map((t: Loose) => t.function.name),
      ["bash", "submit"],
    );
    assert.equal(second.messages[2].reasoning_content, "Write the file first.");
    assert.deepEqual(second.messages[3], {
      role: "tool",
      tool_call_id: second.messages[2].tool_calls[0].id,
      content: "exit code: 0\nHello, world!\n",
    });
  });

  it("keeps the tail of long output and kills commands past their time limit", async () => {
    const { ctx, events } = context("limits", "Please do the limits task.");
    const result = await createBenchAgent({ commandTimeoutSec: 1, outputCapChars: 50 }).run(ctx);
    assert.equal(result.nToolCalls, 3);
    const [, long, slow] = events as Loose[];
    assert.match(long.raw_output.output, /^\[output truncated: the first \d+ characters are cut\]\n/);
    assert.ok(long.raw_output.output.endsWith("1999\n2000\n"));
    assert.equal(slow.raw_output.timed_out, true);
    assert.equal(slow.status, "failed");
    assert.match(slow.raw_output.output, /timed out after 1 s and was killed/);
    const told = (await recorded(h, "limits")) as Loose[];
    const toolMessage = told[1].metadata.upstream_request.body.messages.at(-1).content;
    assert.ok(toolMessage.length < 200, "the policy reads back the capped output");
  });

  it("stops at the turn limit, and after an answer without tool calls", async () => {
    const looping = context("loop", "Please do the loop task.");
    assert.equal((await createBenchAgent({ maxTurns: 2 }).run(looping.ctx)).nToolCalls, 2);
    assert.equal((await recorded(h, "loop")).length, 2);
    const answering = context("answer", "answer only: what is 2+2?");
    assert.equal((await createBenchAgent().run(answering.ctx)).nToolCalls, 0);
    assert.deepEqual(
      answering.events.map((e) => e.type),
      ["user_message", "agent_message"],
    );
  });

  it("tells the policy about bad arguments and unknown tools", async () => {
    const { ctx, events } = context("broken", "broken arguments please");
    await createBenchAgent({ maxTurns: 2 }).run(ctx);
    const [, badJson, unknown] = events as Loose[];
    assert.equal(badJson.status, "failed");
    assert.match(badJson.raw_output, /not a JSON object/);
    assert.match(unknown.raw_output, /unknown tool "rm_rf"/);
  });

  it("raises provider_error when the policy endpoint fails, and agent_error when it refuses the request", async () => {
    const isProvider = (pattern: RegExp) => (err: unknown) =>
      err instanceof CategorizedError && err.category === "provider_error" && pattern.test(err.message);
    await assert.rejects(
      createBenchAgent().run(context("p503", "policy 503").ctx),
      isProvider(/503: .*engine overloaded/),
    );
    const wrongKey = context("pkey", "policy 503");
    const access = { ...(wrongKey.ctx.modelAccess as Loose), apiKey: "not-a-rollout-key" };
    await assert.rejects(createBenchAgent().run({ ...wrongKey.ctx, modelAccess: access }), isProvider(/401/));
    const down = { baseUrl: "http://127.0.0.1:9", apiKey: "x", model: "m" };
    await assert.rejects(
      createBenchAgent().run({ ...wrongKey.ctx, modelAccess: down }),
      isProvider(/cannot reach/),
    );
    const refused = await createBenchAgent().run(context("p400", "policy 400").ctx);
    assert.equal(refused.error?.category, "agent_error");
    assert.match(refused.error?.message ?? "", /prompt is too long/);
  });

  it("stops when the rollout aborts its signal", async () => {
    const abort = new AbortController();
    const { ctx } = context("hang", "policy hangs", { signal: abort.signal });
    setTimeout(() => abort.abort(), 200);
    const result = await createBenchAgent().run(ctx);
    assert.deepEqual(result, { nToolCalls: 0, trajectorySource: "bench-agent" });
  });
});

/** The namespace sandbox where it runs here; otherwise real bash in a folder (same Sandbox interface). */
async function makeSandbox(dir: string): Promise<{ sandbox: Sandbox; task: Task }> {
  try {
    const { createNamespaceBackend } = await import("../../sandbox/namespace/backend.js");
    const { makeSpec, makeTask } = await import("../../sandbox/namespace/testing/kit.js");
    const backend = createNamespaceBackend();
    const task = makeTask({ dir });
    if ((await backend.unavailableReason()) === null)
      return { sandbox: await backend.create(makeSpec(task)), task };
  } catch (err) {
    console.error(
      `bench-agent test: namespace sandbox not usable (${(err as Error).message}); using bash in a folder`,
    );
  }
  const workdir = await mkdtemp(path.join(tmpdir(), "bench-agent-work-"));
  const task = { name: path.basename(dir), dir, instruction: "" } as unknown as Task;
  const sandbox: Sandbox = {
    kind: "namespace",
    id: workdir,
    workdir,
    agentIsNonRoot: false,
    exec: (command, options) => bashIn(workdir, command, options),
    upload: async () => {},
    download: async () => {},
    killAgentProcesses: async () => {},
    stop: () => rm(workdir, { recursive: true, force: true }),
  };
  return { sandbox, task };
}

function bashIn(cwd: string, command: string, options: ExecOptions = {}): Promise<ExecResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], { cwd, detached: true });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const kill = () => {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    };
    const timer = options.timeoutSec
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, options.timeoutSec * 1000)
      : null;
    options.signal?.addEventListener("abort", kill, { once: true });
    child.stdout.on("data", (b) => {
      stdout += b;
    });
    child.stderr.on("data", (b) => {
      stderr += b;
    });
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      const aborted = options.signal?.aborted ?? false;
      resolve({
        exitCode: timedOut || aborted ? null : code,
        stdout,
        stderr,
        timedOut,
        aborted,
        durationMs: Date.now() - started,
      });
    });
  });
}
