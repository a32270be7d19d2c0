// [verifier] environment_mode = "separate" in the container sandbox, with a root agent
// ([agent] user = "root", which containers honour): the oracle of the separate-verifier fixture
// writes into /etc and /root as well as /tmp. A shared verifier sees all of it (hardening cannot
// undo a root agent's system changes); a separate verifier, a fresh container from the task's
// image, sees none, and still the workspace and the artifacts (reward 1.0).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, FIXTURES, rollouts, useScratch } from "./testing/bench.js";
import {
  assertHonestWorkSeen,
  assertSeparateRecords,
  fixtureCopy,
  runOracle,
  SEPARATE_FIXTURE,
} from "./testing/separate-verifier.js";

const scratch = useScratch("separate-ct");
const asRoot = (toml: string) => toml.replace("[agent]\n", '[agent]\nuser = "root"\n');

describe("separate verifier (container sandbox)", () => {
  it("shared: the verifier sees /etc and /root as the root agent left them", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await fixtureCopy(path.join(scratch(), "tasks"), "root-shared", asRoot);
    const r = await runOracle(task, path.join(scratch(), "jobs-shared"), "container");
    assertHonestWorkSeen(r);
    assert.equal(r.config.sandbox_user, "root");
    assert.ok(r.planted.includes("/etc/bf-planted"), r.planted.join(" "));
    assert.ok(r.planted.includes("/root/bf-planted"), r.planted.join(" "));
    assert.equal(r.config.verifier_environment_mode, "shared");
    // The run said once what stays open to a root agent, and how to close it.
    assert.ok(r.run.stderr.includes("run their agent as root"), r.run.stderr);
  });

  it("separate: a fresh container from the task's image gets only the workspace and the artifacts", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const task = await fixtureCopy(path.join(scratch(), "tasks"), "root-separate", (toml) =>
      asRoot(toml).replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n'),
    );
    const r = await runOracle(task, path.join(scratch(), "jobs-separate"), "container");
    assertHonestWorkSeen(r);
    assert.deepEqual(r.planted, []);
    await assertSeparateRecords(r);
    assert.ok(!r.run.stderr.includes("run their agent as root"), r.run.stderr);
  });

  it("separate by the run flag, non-root agent: the workspace comes back owned as the agent left it", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const r = await runOracle(SEPARATE_FIXTURE, path.join(scratch(), "jobs-flag"), "container", [
      "--verifier-environment-mode",
      "separate",
    ]);
    assert.equal(r.config.sandbox_user, "agent");
    // The fixture's test checks that /app/answer.txt is owned as /app is (the agent user).
    assertHonestWorkSeen(r);
    assert.deepEqual(r.planted, []);
    await assertSeparateRecords(r);
  });

  it("separate: [verifier].network_mode is the fresh sandbox's baseline (a shared container keeps the agent's)", async (t) => {
    if (!(await engineOrSkip(t))) return;
    // The network-verifier fixture fetches from Debian's archive to score; its agent here has no network.
    const task = path.join(scratch(), "tasks", "offline-agent-separate");
    await fs.cp(path.join(FIXTURES, "network-verifier"), task, { recursive: true });
    await fs.writeFile(
      path.join(task, "task.toml"),
      '[agent]\ntimeout_sec = 10\nnetwork_mode = "no-network"\n[verifier]\ntimeout_sec = 10\nnetwork_mode = "public"\nenvironment_mode = "separate"\n[environment]\nnetwork_mode = "no-network"\n',
    );
    await fs.writeFile(
      path.join(task, "solution/solve.sh"),
      "#!/bin/bash\nif (exec 3<>/dev/tcp/deb.debian.org/80) 2>/dev/null; then echo online; else echo offline; fi > /app/agent-net.txt\necho bookworm > /app/codename.txt\n",
      { mode: 0o755 },
    );
    await fs.appendFile(
      path.join(task, "tests/test.sh"),
      "\ngrep -qx offline /app/agent-net.txt || echo 0 > /logs/verifier/reward.txt\n",
    );
    const jobs = path.join(scratch(), "jobs-network");
    const run = await bench(["run", task, "-a", "oracle", "--sandbox", "container", "--jobs-dir", jobs]);
    const [found] = await rollouts(jobs);
    assert.equal(found?.result?.verifier_error, null, `${run.stdout}${run.stderr}`);
    assert.equal(found?.result?.rewards?.reward, 1, `${run.stdout}${run.stderr}`);
    const config = JSON.parse(await fs.readFile(path.join(found?.dir ?? "", "config.json"), "utf8"));
    // (A watched disk is warned about on engines that cannot cap it: not this test's business.)
    const network = config.sandbox_warnings.filter((w: string) => /network/i.test(w));
    assert.deepEqual(network, [], "the verifier's network was applied");
  });
});
