import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";

const commandModule = new URL("./command.ts", import.meta.url).pathname;
const hello = new URL("../../examples/policies/hello.json", import.meta.url).pathname;

describe("runScriptedEndpointCommand", () => {
  it("prints its URL, serves the script and stops cleanly on SIGTERM", async () => {
    const code = `import { runScriptedEndpointCommand } from ${JSON.stringify(commandModule)};
await runScriptedEndpointCommand({ script: ${JSON.stringify(hello)}, port: 0, host: "127.0.0.1", model: "demo" });`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (text: string) => {
        out += text;
        const match = /^Scripted policy on (http:\/\/127\.0\.0\.1:\d+\/v1) \(model demo\)$/m.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", () => reject(new Error(`exited early: ${out}`)));
    });
    try {
      const res = await fetch(`${url}/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      const body = (await res.json()) as { model: string; choices: { message: { tool_calls: unknown[] } }[] };
      assert.equal(body.model, "demo");
      assert.equal(body.choices[0]?.message.tool_calls.length, 1);
    } finally {
      child.kill("SIGTERM");
    }
    // "close", not "exit": the last line may still be in the pipe when the process has exited.
    const [exitCode] = await once(child, "close");
    assert.equal(exitCode, 0);
    assert.match(out, /Scripted policy stopped \(SIGTERM\)/);
  });
});
