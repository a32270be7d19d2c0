// config.json is ours, so its keys are one style: snake_case, the policy record included (it held
// capture_tokens.tokenIds and price_usd_per_mtok.inputPerMTok until issue 16). Folders written
// before then still read, through readRolloutConfig, as today's.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import { readRolloutConfig } from "../src/jobs-dir/index.js";
import { WrittenRolloutConfig } from "../src/schemas/rollout-config.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { EXAMPLES, REPO, rollouts, tempDir } from "./testing/bench.js";

/** Every key of every object in `value`, with its path. */
function keysOf(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysOf(v, `${at}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [`${at}${k}`, ...keysOf(v, `${at}${k}.`)]);
}

describe("config.json keys", () => {
  let root: string;
  let rolloutDir: string;
  let written: Record<string, unknown>;
  before(async () => {
    root = await tempDir("config-keys");
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const policy = await startScriptedEndpoint({ script });
    try {
      const result = await new Evaluation({
        tasks: path.join(EXAMPLES, "hello"),
        agent: "bench-agent",
        model: "vllm/scripted",
        jobsDir: root,
        sandbox: "namespace",
        retryAttempts: 0,
        env: {},
        policy: {
          baseUrl: policy.baseUrl,
          captureTokens: true,
          price: { inputPerMTok: 0.27, outputPerMTok: 1.1 },
        },
      }).run();
      assert.equal(result.exitCode, 0);
    } finally {
      await policy.close();
    }
    const [found] = await rollouts(root);
    rolloutDir = found?.dir ?? "";
    written = JSON.parse(await fs.readFile(path.join(rolloutDir, "config.json"), "utf8"));
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it("are all snake_case, agent_env's names aside", () => {
    const keys = keysOf({ ...written, agent_env: [] });
    assert.deepEqual(
      keys.filter((k) => !/^[a-z0-9_.[\]]+$/.test(k)),
      [],
    );
    const policy = written.policy as Record<string, any>;
    assert.deepEqual(policy.capture_tokens, { enabled: true, token_ids: "auto", top_logprobs: null });
    assert.deepEqual(policy.price_usd_per_mtok, {
      input: 0.27,
      output: 1.1,
      cache_read: null,
      cache_write: null,
      source: "--price",
    });
    assert.equal(WrittenRolloutConfig.safeParse(written).success, true);
  });

  it("a config.json with the old camelCase keys reads as today's", async () => {
    const policy = written.policy as Record<string, any>;
    const old = {
      ...written,
      policy: {
        ...policy,
        capture_tokens: { enabled: true, tokenIds: "on", topLogprobs: 5 },
        price_usd_per_mtok: { inputPerMTok: 0.27, outputPerMTok: 1.1 },
      },
    };
    const dir = path.join(root, "old__0123abcd");
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, "config.json"), JSON.stringify(old));
    const read = await readRolloutConfig(dir);
    assert.deepEqual(read?.policy?.capture_tokens, { enabled: true, token_ids: "on", top_logprobs: 5 });
    assert.deepEqual(read?.policy?.price_usd_per_mtok, { input: 0.27, output: 1.1 });
    assert.deepEqual(await readRolloutConfig(rolloutDir), written);
  });

  it("a rollout without config.json reads as null; a damaged one names the file", async () => {
    assert.equal(await readRolloutConfig(path.join(root, "none__00000000")), null);
    const dir = path.join(root, "bad__0123abcd");
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, "config.json"), '{"task_name": 1}');
    await assert.rejects(
      readRolloutConfig(dir),
      /bad__0123abcd\/config\.json: not a BenchFlow config\.json \(/,
    );
  });
});
