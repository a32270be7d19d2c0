// The seam's files against the JSON Schemas we publish: a real run (bench-agent on the scripted
// policy, token capture on, two trials) and what `bench train convert` and `stream` make of it,
// every file and every line validated with a JSON Schema validator (not our zod code), so the
// writers and schemas/*.json cannot drift apart. Unknown keys are refused in our own objects.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { Evaluation } from "../src/job/evaluation.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";

const KEY = "sk-seam-4242";
const scratch = useScratch("seam");
const ajv = new Ajv2020({ allErrors: true, strict: true });
const validators = new Map<string, ValidateFunction>();

async function schema(name: string): Promise<ValidateFunction> {
  let v = validators.get(name);
  if (!v) {
    const text = await fs.readFile(path.join(REPO, "schemas", `${name}.schema.json`), "utf8");
    v = ajv.compile(JSON.parse(text));
    validators.set(name, v);
  }
  return v;
}

async function check(name: string, value: unknown, where: string): Promise<void> {
  const v = await schema(name);
  assert.ok(v(value), `${where} does not match schemas/${name}.schema.json: ${ajv.errorsText(v.errors)}`);
}

async function jsonLines(file: string): Promise<unknown[]> {
  const text = await fs.readFile(file, "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

const readJson = async (file: string) => JSON.parse(await fs.readFile(file, "utf8"));

describe("a real run's files match the published JSON Schemas", () => {
  let jobs = "";
  let found: { dir: string; result: Record<string, any> | null }[] = [];

  before(async () => {
    jobs = path.join(scratch(), "jobs");
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const policy = await startScriptedEndpoint({ script, apiKey: KEY });
    try {
      const result = await new Evaluation({
        tasks: path.join(EXAMPLES, "hello"),
        agent: "bench-agent",
        model: "vllm/scripted",
        jobsDir: jobs,
        sandbox: "namespace",
        trials: 2,
        retryAttempts: 0,
        env: {},
        policy: { baseUrl: policy.baseUrl, apiKey: KEY, captureTokens: true },
      }).run();
      assert.equal(result.exitCode, 0);
    } finally {
      await policy.close();
    }
    found = await rollouts(jobs);
    assert.equal(found.length, 2);
  });

  it("every rollout file and every trajectory line, and each job's plan and summary", async () => {
    let lines = 0;
    let events = 0;
    for (const { dir } of found) {
      await check("trial-result", await readJson(path.join(dir, "result.json")), `${dir}/result.json`);
      await check("trial-config", await readJson(path.join(dir, "config.json")), `${dir}/config.json`);
      await check("trial-timing", await readJson(path.join(dir, "timing.json")), `${dir}/timing.json`);
      await check("trial-prompts", await readJson(path.join(dir, "prompts.json")), `${dir}/prompts.json`);
      const calls = await jsonLines(path.join(dir, "trajectory/llm_trajectory.jsonl"));
      for (const [i, line] of calls.entries()) {
        await check("trajectory-line", line, `${dir} llm_trajectory.jsonl line ${i + 1}`);
        const capture = (line as { metadata: { token_capture?: unknown } }).metadata.token_capture;
        assert.ok(capture, "capture is on: every line has a token_capture block");
        await check("token-capture", capture, `${dir} line ${i + 1} token_capture`);
      }
      lines += calls.length;
      const acp = await jsonLines(path.join(dir, "trajectory/acp_trajectory.jsonl"));
      for (const [i, event] of acp.entries())
        await check("agent-event", event, `${dir} acp_trajectory.jsonl line ${i + 1}`);
      events += acp.length;
      const jobDir = path.dirname(dir);
      await check("job-summary", await readJson(path.join(jobDir, "summary.json")), `${jobDir}/summary.json`);
      await check(
        "evaluation-plan",
        await readJson(path.join(jobDir, "evaluation.json")),
        `${jobDir}/evaluation.json`,
      );
    }
    assert.ok(lines >= 4, "model calls were recorded");
    assert.ok(events >= 4, "agent events were recorded");
  });

  it("rows of every format, the manifest and stream records", async () => {
    const formats = {
      "prime-sft": "train-prime-sft-row",
      "trl-sft": "train-trl-sft-row",
      tokens: "train-tokens-row",
    };
    for (const [format, name] of Object.entries(formats)) {
      const out = path.join(scratch(), `${format}.jsonl`);
      const manifest = path.join(scratch(), `${format}.manifest.json`);
      const args = ["train", "convert", jobs, "-o", out, "--format", format, "--manifest", manifest];
      const run = await bench([...args, "--group-advantage", "grpo", "--group-by", "task"]);
      assert.equal(run.code, 0, run.stderr);
      const rows = await jsonLines(out);
      assert.equal(rows.length, 2);
      for (const [i, row] of rows.entries()) await check(name, row, `${format} row ${i + 1}`);
      await check("train-manifest", await readJson(manifest), `${format} manifest`);
    }
    const stream = await bench([
      "train",
      "stream",
      jobs,
      "--no-follow",
      "--group-size",
      "2",
      "--group-by",
      "task",
    ]);
    assert.equal(stream.code, 0, stream.stderr);
    const records = stream.stdout
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l));
    assert.equal(records.length, 2);
    for (const [i, record] of records.entries())
      await check("rollout-stream", record, `stream record ${i + 1}`);
  });

  it("refuses an unknown key in our own fields, and leaves recorded wire bodies open", async () => {
    const [first] = found;
    const dir = first?.dir ?? "";
    const result = await readJson(path.join(dir, "result.json"));
    assert.equal((await schema("trial-result"))({ ...result, surprise: 1 }), false, "top level");
    const nested = { ...result, agent_result: { ...result.agent_result, surprise: 1 } };
    assert.equal((await schema("trial-result"))(nested), false, "agent_result");
    const badCategory = { ...result, error_category: "not_a_category" };
    assert.equal((await schema("trial-result"))(badCategory), false, "error_category is from the table");

    const [line] = (await jsonLines(path.join(dir, "trajectory/llm_trajectory.jsonl"))) as Record<
      string,
      any
    >[];
    const withMeta = { ...line, metadata: { ...line?.metadata, surprise: 1 } };
    assert.equal((await schema("trajectory-line"))(withMeta), false, "metadata");
    const openBodies = {
      ...line,
      request: { ...line?.request, body: { ...line?.request.body, vendor_field: { x: 1 } } },
      response: { ...line?.response, body: { ...line?.response.body, vendor_field: [1] } },
      metadata: {
        ...line?.metadata,
        upstream_request: { ...line?.metadata.upstream_request, body: { anything: true } },
      },
    };
    assert.ok((await schema("trajectory-line"))(openBodies), "wire bodies stay open");

    const [event] = (await jsonLines(path.join(dir, "trajectory/acp_trajectory.jsonl"))) as object[];
    assert.equal((await schema("agent-event"))({ ...event, surprise: 1 }), false, "agent event");
    const config = await readJson(path.join(dir, "config.json"));
    assert.equal((await schema("trial-config"))({ ...config, surprise: 1 }), false, "config.json");
  });
});
