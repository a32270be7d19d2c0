// --executor slurm with a model: bench-agent on a node (its own network namespace, so the host's
// 127.0.0.1 is not reachable from it) calls the scripted policy through the job's gateway on the
// submitting host, at the host's address on the nodes' bridge, with token capture; the training
// rows come out in the same shape as from a local run. Skipped where the local cluster is not up.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts } from "./testing/bench.js";
import { clusterMissing, SHARED_ROOT } from "./testing/slurm.js";

const KEY = "sk-upstream-secret-7171";

const missing = clusterMissing();
if (missing) console.log(`# slurm-gateway tests skipped: ${missing}`);

/** A row's shape: its keys, and the keys of what it nests, without the values a run draws. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length > 0 ? [shape(value[0])] : [];
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, shape((value as Record<string, unknown>)[k])]),
    );
  return typeof value;
}

describe("--executor slurm: the gateway on the submitting host, reached at a non-loopback address", {
  skip: missing ?? false,
}, () => {
  let scratch = "";
  before(async () => {
    await fs.mkdir(SHARED_ROOT, { recursive: true });
    scratch = await fs.mkdtemp(path.join(SHARED_ROOT, "test-gw-"));
    await fs.cp(path.join(EXAMPLES, "hello"), path.join(scratch, "tasks", "hello"), { recursive: true });
  });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  it("bench-agent with --capture-tokens scores as locally and its rows have the same shape", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const policy = await startScriptedEndpoint({ script, apiKey: KEY });
    // As a user types it: bench run with --capture-tokens, here and then with --executor slurm.
    const run = async (jobs: string, slurm: boolean) => {
      const r = await bench([
        "run",
        path.join(scratch, "tasks", "hello"),
        "-a",
        "bench-agent",
        "-m",
        "vllm/scripted",
        "--base-url",
        policy.baseUrl,
        "--api-key",
        KEY,
        "--capture-tokens",
        "--sandbox",
        "namespace",
        "--retry-attempts",
        "0",
        "--jobs-dir",
        path.join(scratch, jobs),
        "-q",
        ...(slurm ? ["--executor", "slurm"] : []),
      ]);
      const found = await rollouts(path.join(scratch, jobs));
      return { code: r.code, stderr: r.stderr, result: found[0]?.result ?? null };
    };
    try {
      const local = await run("jobs-local", false);
      const remote = await run("jobs-slurm", true);
      assert.equal(local.code, 0, local.stderr);
      assert.equal(remote.code, 0, `${remote.stderr}\n${JSON.stringify(remote.result)}`);
      const r = remote.result;
      assert.equal(r?.rewards?.reward, 1);
      assert.equal(r?.executor?.kind, "slurm");
      assert.match(String(r?.executor?.node), /^n[12]$/);
      assert.match(String(r?.executor?.slurm_job_id), /^\d+$/);
      // The gateway's usage reached the node's result.json on the host, as in a local run.
      assert.equal(r?.n_model_calls, local.result?.n_model_calls);
      const [rollout] = await rollouts(path.join(scratch, "jobs-slurm"));
      assert.ok(Number(r?.n_model_calls ?? 0) >= 2);
      // What the node was given: the gateway at a routable address, and this trial's own key only.
      const jobDir = path.dirname(rollout?.dir ?? "");
      const spec = JSON.parse(
        await fs.readFile(path.join(jobDir, ".slurm", `${r?.rollout_name}.json`), "utf8"),
      );
      const gateway = new URL(spec.modelAccess.baseUrl);
      assert.notEqual(gateway.hostname, "127.0.0.1");
      assert.notEqual(gateway.hostname, "localhost");
      assert.notEqual(spec.modelAccess.apiKey, KEY);
      assert.ok(!JSON.stringify(spec).includes(KEY), "the policy's own key never reaches a node");
      const calls = (
        await fs.readFile(path.join(rollout?.dir ?? "", "trajectory/llm_trajectory.jsonl"), "utf8")
      )
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      for (const call of calls) assert.ok(call.metadata.token_capture.prompt_token_ids.length > 0);
    } finally {
      await policy.close();
    }
    const rows = async (jobs: string) => {
      const out = path.join(scratch, `${jobs}.jsonl`);
      const c = await bench(["train", "convert", path.join(scratch, jobs), "--format", "tokens", "-o", out]);
      assert.equal(c.code, 0, c.stderr);
      return (await fs.readFile(out, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
    };
    const [a, b] = [await rows("jobs-local"), await rows("jobs-slurm")];
    assert.equal(b.length, a.length);
    assert.deepEqual(shape(b[0]), shape(a[0]));
  });
});
