// What --executor slurm asks of SLURM, without a cluster: the sbatch options a trial gets from its
// task, the rule that picks a killed run's leftover jobs, and the gateway address nodes are given.
import assert from "node:assert/strict";
import type os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { resolveAgent } from "../src/agents/registry.js";
import { isLeftover, retryExclusion, runComment, sbatchArgs } from "../src/job/slurm/executor.js";
import { hostAddressFor } from "../src/job/slurm/open.js";
import { specOf } from "../src/job/slurm/spec.js";
import { modelFreeIdentity, type RolloutPlan } from "../src/rollout/types.js";
import { sandboxBackends } from "../src/sandbox/index.js";
import { loadTask } from "../src/task/load.js";
import { EXAMPLES } from "./testing/bench.js";

async function helloPlan(): Promise<RolloutPlan> {
  const task = await loadTask(path.join(EXAMPLES, "hello"));
  const factory = sandboxBackends.namespace;
  assert.ok(factory);
  return {
    run: {
      jobName: "j1",
      agent: resolveAgent("oracle"),
      model: null,
      backend: factory(),
      agentEnv: {},
      verifierHardening: "on",
      record: {},
      groupIdentity: modelFreeIdentity("j1", "oracle"),
    },
    job: { dir: "/shared/jobs/oracle/trial-01/j1", repeat: "trial-01" },
    task,
    taskDigest: "d",
    rolloutName: "hello__0011aabb",
    attempt: 1,
    replaces: null,
    signal: new AbortController().signal,
    warn: () => {},
  };
}

const option = (args: string[], name: string) =>
  args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);

describe("sbatch options of one trial", () => {
  it("takes cpus, memory and time from the task (examples/tasks/hello: 1 cpu, 1024 MB, 120 + 30 s)", async () => {
    const plan = await helloPlan();
    const args = sbatchArgs(plan, { partition: "gpu", account: "lab", sbatchArgs: ["--qos=low"] }, "/s.json");
    assert.equal(option(args, "--cpus-per-task"), "1");
    assert.equal(option(args, "--mem"), "1024M");
    const c = plan.task.config;
    const expected = Math.ceil((120 + 30 + c.sandbox.buildTimeoutSec + 300) / 60);
    assert.equal(option(args, "--time"), String(expected));
    assert.ok(args.includes("--no-requeue"), "SLURM must never run a trial twice");
    assert.equal(option(args, "--partition"), "gpu");
    assert.equal(option(args, "--account"), "lab");
    assert.ok(args.includes("--qos=low"));
    assert.equal(option(args, "--job-name"), "bf-hello__0011aabb");
    assert.equal(option(args, "--comment"), runComment("j1"));
    assert.equal(option(args, "--output"), "/shared/jobs/oracle/trial-01/j1/.slurm/hello__0011aabb.out");
    // From a checkout under tsx, the trial's own entry through tsx (dist/ runs plain node on its .js).
    assert.match(
      option(args, "--wrap") ?? "",
      /^exec \S+ --import tsx \S+\/src\/cli\/trial-entry\.ts \/s\.json$/,
    );
  });

  it("leaves partition and account to SLURM when not given", async () => {
    const args = sbatchArgs(await helloPlan(), {}, "/s.json");
    assert.equal(option(args, "--partition"), undefined);
    assert.equal(option(args, "--account"), undefined);
  });
});

describe("reaping a killed run's jobs", () => {
  const gone = () => false;
  it("takes jobs of a gone bench run on this host, and nothing else", () => {
    assert.ok(isLeftover(runComment("j1", 999_999, "h"), "h", gone));
    assert.ok(!isLeftover(runComment("j1", 999_999, "h"), "h", () => true), "that run is still alive");
    assert.ok(!isLeftover(runComment("j1", 999_999, "other"), "h", gone), "another host's run");
    assert.ok(!isLeftover(runComment("j1", process.pid, "h"), "h", gone), "this very run");
    assert.ok(!isLeftover("somebody else's job", "h", gone));
    assert.ok(!isLeftover("", "h", gone));
  });
});

describe("the gateway address nodes are given", () => {
  const nic = (address: string, netmask: string, internal = false) =>
    ({ address, netmask, family: "IPv4", internal, mac: "", cidr: null }) as os.NetworkInterfaceInfo;
  const here = [
    nic("127.0.0.1", "255.0.0.0", true),
    nic("192.168.5.20", "255.255.255.0"),
    nic("10.77.0.1", "255.255.255.0"),
  ];
  it("is this host's address on the node's subnet, never loopback for a remote node", () => {
    assert.equal(hostAddressFor("10.77.0.12", here), "10.77.0.1");
    assert.equal(hostAddressFor("192.168.5.33", here), "192.168.5.20");
    assert.equal(hostAddressFor("172.16.0.4", here), null);
  });
  it("is loopback only when the node is this host", () => {
    assert.equal(hostAddressFor("192.168.5.20", here), "127.0.0.1");
  });
});

describe("a retry's node", () => {
  it("leaves out the node the last attempt was lost on, when the partition has another", () => {
    assert.deepEqual(retryExclusion({}, "n1", 2), ["--exclude=n1"]);
    assert.deepEqual(retryExclusion({}, "n1", 1), [], "one node: nowhere else to go");
    assert.deepEqual(retryExclusion({}, undefined, 2), [], "a first attempt goes anywhere");
    assert.deepEqual(
      retryExclusion({ sbatchArgs: ["--exclude=n9"] }, "n1", 2),
      [],
      "the user's own exclusion stands",
    );
  });
});

describe("the spec a node is given", () => {
  it("holds the run's settings a rollout needs, field by field: never the rest of the run (the policy's key)", async () => {
    const plan = await helloPlan();
    // What bench run hands down is the whole planned run, its policy (with the key) included.
    const whole = { ...plan.run, policy: { gateway: { upstream: { apiKey: "sk-never-on-a-node" } } } };
    const spec = specOf({ ...plan, run: whole });
    assert.deepEqual(Object.keys(spec.run).sort(), [
      "agent",
      "agentEnv",
      "groupIdentity",
      "jobName",
      "model",
      "record",
      "sandbox",
      "verifierHardening",
    ]);
    assert.ok(!JSON.stringify(spec).includes("sk-never-on-a-node"));
    assert.deepEqual(
      [spec.run.agent, spec.run.sandbox, spec.job.repeat],
      ["oracle", "namespace", "trial-01"],
    );
  });
});
