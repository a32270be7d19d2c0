// The example policy scripts, played by a minimal bash/submit tool loop against the real task verifiers,
// with /app and /logs/verifier moved into a temp dir so no sandbox is needed.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import OpenAI from "openai";
import { loadEndpointScript, startScriptedEndpoint } from "./scripted-server.js";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const tools = ["bash", "submit"].map((name) => ({
  type: "function" as const,
  function: { name, parameters: { type: "object", properties: {} } },
}));

async function playAndVerify(scriptFile: string, task: string): Promise<{ reward: string; calls: string[] }> {
  const dir = await mkdtemp(path.join(tmpdir(), "policy-example-"));
  const app = path.join(dir, "app");
  const logs = path.join(dir, "verifier");
  const endpoint = await startScriptedEndpoint({
    script: await loadEndpointScript(path.join(root, scriptFile)),
  });
  try {
    await mkdir(path.join(app, "data"), { recursive: true });
    await run("cp", [
      "-r",
      `${path.join(root, `examples/tasks/${task}/environment`)}/.`,
      path.join(app, "data"),
    ]);
    const relocate = (text: string) => text.replaceAll("/app", app).replaceAll("/logs/verifier", logs);
    const client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: "k", maxRetries: 0 });
    const instruction = await readFile(path.join(root, `examples/tasks/${task}/instruction.md`), "utf8");
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: instruction }];
    const calls: string[] = [];
    for (let step = 0; step < 10; step++) {
      const reply = await client.chat.completions.create({ model: "m", messages, tools });
      const message = reply.choices[0]?.message;
      assert.ok(message);
      messages.push(message);
      if (!message.tool_calls?.length) break;
      for (const call of message.tool_calls) {
        if (call.type !== "function") continue;
        calls.push(call.function.name);
        const args = JSON.parse(call.function.arguments) as { command?: string };
        const output =
          call.function.name === "bash"
            ? (await run("bash", ["-c", relocate(args.command ?? "")])).stdout
            : "submitted";
        messages.push({ role: "tool", tool_call_id: call.id, content: output });
      }
    }
    const verifier = await readFile(path.join(root, `examples/tasks/${task}/tests/test.sh`), "utf8");
    await run("bash", ["-c", relocate(verifier)]);
    return { reward: (await readFile(path.join(logs, "reward.txt"), "utf8")).trim(), calls };
  } finally {
    await endpoint.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe("example policy scripts", () => {
  it("hello.json solves examples/tasks/hello", async () => {
    const { reward, calls } = await playAndVerify("examples/policies/hello.json", "hello");
    assert.deepEqual(calls, ["bash", "submit"]);
    assert.equal(reward, "1");
  });

  it("half-life-one-wrong.json passes two of the three half-life checks", async () => {
    const { reward, calls } = await playAndVerify("examples/policies/half-life-one-wrong.json", "half-life");
    assert.deepEqual(calls, ["bash", "bash", "submit"]);
    assert.equal(reward, "0.6667");
  });
});
