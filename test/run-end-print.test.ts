// What `bench run` prints last: where the run went and how to look at it; and after a SIGINT, the
// exact command that resumes it, which (run as printed) finishes the same job.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { type EndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, startBench, useScratch, waitUntil } from "./testing/bench.js";

const scratch = useScratch("run-end");

describe("bench run's last lines", () => {
  it("name the run's folders and the commands to look at it, on stderr; stdout stays the results", async () => {
    const run = await bench(
      ["run", path.join(EXAMPLES, "hello"), "-a", "oracle", "--sandbox", "namespace", "--trials", "2"],
      { cwd: scratch() },
    );
    assert.equal(run.code, 0, run.stderr);
    const name = (await fs.readdir(path.join(scratch(), "jobs/oracle/trial-01")))[0];
    assert.ok(name);
    const lines = run.stderr.trimEnd().split("\n");
    assert.deepEqual(lines.slice(-2), [
      `bench: the run is in jobs/oracle/trial-01/${name} ... trial-02/${name} (2 jobs, one per repeat)`,
      "bench: look at it with: bench results jobs   or   bench view jobs",
    ]);
    assert.deepEqual(run.stdout.trimEnd().split("\n").slice(0, 2), [
      "trial-01  reward 1.0: hello_file pass",
      "trial-02  reward 1.0: hello_file pass",
    ]);
    assert.doesNotMatch(run.stdout, /bench (results|view)/);

    // One job, a jobs dir elsewhere (named as given, absolute), and nothing with -q.
    const elsewhere = path.join(scratch(), "other place");
    const one = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--sandbox",
      "namespace",
      "--jobs-dir",
      elsewhere,
      "--job-name",
      "n1",
    ]);
    assert.equal(one.code, 0, one.stderr);
    assert.match(
      one.stderr,
      new RegExp(`bench: the run is in ${escapeRegExp(elsewhere)}/oracle/trial-01/n1\n`),
    );
    assert.ok(one.stderr.includes(`bench results '${elsewhere}'   or   bench view '${elsewhere}'`));
    const quiet = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--sandbox",
      "namespace",
      "--jobs-dir",
      elsewhere,
      "-q",
    ]);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, "");
  });

  it("after a SIGINT, print the command with --job-name that finishes the run, and it does", async () => {
    // The first call hangs (until the run is interrupted); every later one is answered.
    const script: EndpointScript = {
      conversations: [
        {
          replies: [
            { hang: true, times: 1 },
            {
              tool_calls: [{ name: "bash", arguments: { command: "echo 'Hello, world!' > /app/hello.txt" } }],
            },
            { tool_calls: [{ name: "submit", arguments: {} }] },
          ],
        },
      ],
    };
    const policy = await startScriptedEndpoint({ script });
    try {
      const cwd = path.join(scratch(), "interrupted");
      await fs.mkdir(cwd);
      const args = [
        "run",
        path.join(EXAMPLES, "hello"),
        "-a",
        "bench-agent",
        "-m",
        "vllm/scripted",
        "--base-url",
        policy.baseUrl,
        "--sandbox",
        "namespace",
        "--retry-attempts",
        "0",
        "--agent-env",
        "NOTE=two words",
      ];
      const child = startBench(args, { cwd });
      let stderr = "";
      child.stderr?.on("data", (d) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      const chat = () => policy.requests.some((r) => r.path === "/v1/chat/completions");
      await waitUntil(async () => chat(), "the agent's first model call", 120_000);
      child.kill("SIGINT");
      assert.equal(await exited, 130);
      const name = (await fs.readdir(path.join(cwd, "jobs/bench-agent/trial-01")))[0] ?? "";
      const command = `bench ${args.map((a) => (a === "NOTE=two words" ? `'${a}'` : a)).join(" ")} --job-name ${name}`;
      const lines = stderr.trimEnd().split("\n");
      assert.deepEqual(lines.slice(-2), [
        "bench: interrupted: 1 of 1 trial(s) did not finish; to finish them (the finished ones are kept), run:",
        `  ${command}`,
      ]);
      assert.ok(lines.includes("bench: look at it with: bench results jobs   or   bench view jobs"), stderr);

      // Run the printed line in a shell, as a person would paste it: it completes the same job.
      const bin = path.join(scratch(), "bin");
      await fs.mkdir(bin, { recursive: true });
      const tsx = path.join(REPO, "node_modules/tsx/dist/esm/index.mjs");
      await fs.writeFile(
        path.join(bin, "bench"),
        `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${path.join(REPO, "src/cli/main.ts")}" "$@"\n`,
        { mode: 0o755 },
      );
      const printed = (lines[lines.length - 1] ?? "").trim();
      // Not spawnSync: the policy answering the rerun lives in this process.
      const shell = spawn("bash", ["-c", printed], {
        cwd,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let rerunErr = "";
      shell.stderr?.on("data", (d) => (rerunErr += d));
      const status = await new Promise<number | null>((r) => shell.on("close", (code) => r(code)));
      assert.equal(status, 0, rerunErr);
      const job = await loadJob(path.join(cwd, "jobs/bench-agent"));
      assert.deepEqual(
        job.trials.map((t) => [t.job.repeat, t.job.name, t.reward]),
        [["trial-01", name, 1]],
      );
    } finally {
      await policy.close();
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
