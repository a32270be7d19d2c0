// Harbor's phase networks ([agent] / [verifier] network_mode): the namespace sandbox applies each
// around its phase only; the container sandbox keeps the baseline and says so in the run's
// warnings and in config.json. Each task below is the network-verifier fixture with the phases set.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, FIXTURES, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("phase-network");

/** The oracle records whether it had the network; the verifier needs the network to score at all. */
const SOLVE = `#!/bin/bash
if (exec 3<>/dev/tcp/deb.debian.org/80) 2>/dev/null; then echo online > /app/agent-net.txt; else echo offline > /app/agent-net.txt; fi
echo bookworm > /app/codename.txt
`;

async function phaseTask(name: string, toml: string): Promise<string> {
  const dir = path.join(scratch(), "tasks", name);
  await fs.cp(path.join(FIXTURES, "network-verifier"), dir, { recursive: true });
  await fs.writeFile(path.join(dir, "task.toml"), toml);
  await fs.writeFile(path.join(dir, "solution/solve.sh"), SOLVE, { mode: 0o755 });
  return dir;
}

async function oracle(task: string, sandbox: string) {
  const jobsDir = path.join(scratch(), `jobs-${path.basename(task)}-${sandbox}`);
  const run = await bench(["run", task, "-a", "oracle", "--sandbox", sandbox, "--jobs-dir", jobsDir]);
  const [found] = await rollouts(jobsDir);
  const dir = found?.dir ?? "";
  const config = JSON.parse(await fs.readFile(path.join(dir, "config.json"), "utf8"));
  return { run, result: found?.result ?? null, config };
}

// No network for the agent, the network for the verifier: the verifier can fetch, the agent could not.
const OFFLINE_AGENT = `[agent]
timeout_sec = 10
network_mode = "no-network"
[verifier]
timeout_sec = 10
network_mode = "public"
[environment]
network_mode = "no-network"
`;
const CHECK_OFFLINE = `\ngrep -qx offline /app/agent-net.txt || echo 0 > /logs/verifier/reward.txt\n`;

describe("phase networks", () => {
  it("namespace: the agent runs without network and the verifier with it, as the task says", async () => {
    const task = await phaseTask("offline-agent", OFFLINE_AGENT);
    await fs.appendFile(path.join(task, "tests/test.sh"), CHECK_OFFLINE);
    const { run, result, config } = await oracle(task, "namespace");
    assert.equal(result?.verifier_error, null, run.stderr);
    assert.equal(result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
    assert.deepEqual(config.sandbox_warnings, []);
  });

  it("namespace: a public agent phase over a no-network baseline gets the network for the agent only", async () => {
    const task = await phaseTask(
      "online-agent",
      '[agent]\ntimeout_sec = 10\nnetwork_mode = "public"\n[verifier]\ntimeout_sec = 10\n[environment]\nnetwork_mode = "no-network"\n',
    );
    await fs.writeFile(
      path.join(task, "tests/test.sh"),
      `#!/bin/bash\n# The verifier keeps the no-network baseline.\nif (exec 3<>/dev/tcp/deb.debian.org/80) 2>/dev/null; then echo 0; elif grep -qx online /app/agent-net.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n`,
    );
    const { run, result } = await oracle(task, "namespace");
    assert.equal(result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
  });

  it("container: the override is not applied, and the run and config.json say so", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await phaseTask("offline-agent-ct", OFFLINE_AGENT);
    const { run, config } = await oracle(task, "container");
    const said = '[verifier].network_mode = "public" is not applied in the container sandbox';
    assert.ok(run.stderr.includes(said) || run.stdout.includes(said), `${run.stdout}${run.stderr}`);
    assert.ok(
      config.sandbox_warnings.some((w: string) => w.includes(said)),
      JSON.stringify(config.sandbox_warnings),
    );
  });
});
