// The seed's first command with a hosted model: `-m deepseek/deepseek-v4-flash` with DEEPSEEK_API_KEY
// set, against a stand-in that speaks DeepSeek's wire format (its prompt-cache usage fields), reached
// through the documented override (DEEPSEEK_BASE_URL). The key goes to it and to nothing else, the
// price table prices the cache hits, and the run ends with the seed's cost line; a refused key is
// config_error.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { HOSTED_PROVIDERS } from "../src/job/providers.js";
import {
  type EndpointScript,
  loadEndpointScript,
  type ScriptedEndpoint,
  startScriptedEndpoint,
} from "../src/scripted-endpoint/scripted-server.js";
import { scriptFor, shellCall } from "./testing/agents.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("hosted");
const DEEPSEEK_KEY = "sk-deepseek-only-5151";
// Keys of other providers the user also has: none of them may leave the host for this run.
const OTHER_KEYS = { OPENAI_API_KEY: "sk-openai-never-sent", ANTHROPIC_API_KEY: "sk-ant-never-sent" };

let standIn: ScriptedEndpoint;

before(async () => {
  standIn = await startScriptedEndpoint({
    script: await loadEndpointScript(path.join(REPO, "examples/policies/hello.json")),
    apiKey: DEEPSEEK_KEY,
    model: "deepseek-v4-flash",
    promptCache: "deepseek",
  });
});
after(async () => await standIn.close());

const seedCommand = (jobsDir: string, extra: string[] = []) => [
  "run",
  path.join(EXAMPLES, "hello"),
  "-a",
  "bench-agent",
  "-m",
  "deepseek/deepseek-v4-flash",
  "--trials",
  "2",
  "-j",
  "2",
  "--sandbox",
  "namespace",
  "--jobs-dir",
  jobsDir,
  ...extra,
];

describe("a hosted model by its provider's name", () => {
  it("--dry-run shows DeepSeek's documented URL, where it came from, and the table's price", async () => {
    const r = await bench([...seedCommand(path.join(scratch(), "dry")), "--dry-run"], {
      env: { DEEPSEEK_API_KEY: DEEPSEEK_KEY, DEEPSEEK_BASE_URL: "" },
    });
    assert.equal(r.code, 0, r.stderr);
    const policy = JSON.parse(r.stdout).policy;
    assert.equal(policy.base_url, "https://api.deepseek.com/v1");
    assert.equal(policy.base_url_source, "default");
    assert.equal(policy.key_source, "DEEPSEEK_API_KEY");
    assert.match(policy.price_usd_per_mtok.source, /^table: https:\/\/api-docs\.deepseek\.com\//);
    assert.ok(policy.price_usd_per_mtok.cache_read < policy.price_usd_per_mtok.input);
    assert.ok(!r.stdout.includes(DEEPSEEK_KEY), "the key is never printed");
  });

  it("runs the seed's command on the stand-in, sends only DeepSeek's key there, and prints the cost line", async () => {
    const jobs = path.join(scratch(), "group");
    const before = standIn.requests.length;
    const r = await bench(seedCommand(jobs), {
      env: { DEEPSEEK_API_KEY: DEEPSEEK_KEY, DEEPSEEK_BASE_URL: `${standIn.baseUrl}`, ...OTHER_KEYS },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^trial-01 {2}reward 1\.0/m);
    assert.match(
      r.stdout,
      /^Each rollout cost about \$[0-9.]+ \([0-9,]+( to [0-9,]+)? tokens\) and took .*\.$/m,
    );
    const sent = standIn.requests.slice(before).filter((q) => q.path.endsWith("/chat/completions"));
    assert.ok(sent.length >= 4, `two rollouts of several calls each: ${sent.length}`);
    for (const q of sent) assert.equal(q.headers.authorization, `Bearer ${DEEPSEEK_KEY}`);
    const found = await rollouts(jobs);
    assert.equal(found.length, 2);
    // summary.json: each repeat job's cost, its rollouts' summed.
    for (const { dir, result } of found) {
      const summary = JSON.parse(await fs.readFile(path.join(path.dirname(dir), "summary.json"), "utf8"));
      assert.equal(summary.cost_usd, result?.agent_result?.cost_usd);
    }
    for (const { dir, result } of found) {
      const usage = result?.agent_result;
      assert.ok(usage.n_cache_read_tokens > 0, "the stand-in's cache hits are read from its own fields");
      assert.ok(usage.n_cache_read_tokens < usage.n_input_tokens);
      assert.ok(usage.cost_usd > 0);
      assert.match(usage.price_source, /^table: https:\/\/api-docs\.deepseek\.com\//);
      const config = JSON.parse(await fs.readFile(path.join(dir, "config.json"), "utf8"));
      assert.equal(config.policy.base_url_source, "DEEPSEEK_BASE_URL");
      // No key of any provider in any file the run wrote.
      const files = await fs.readdir(dir, { recursive: true, withFileTypes: true });
      for (const f of files.filter((e) => e.isFile())) {
        const text = await fs.readFile(path.join(f.parentPath, f.name), "utf8");
        for (const k of [DEEPSEEK_KEY, ...Object.values(OTHER_KEYS)])
          assert.ok(!text.includes(k), `${f.name} holds a key`);
      }
    }
  });

  it("a key the provider refuses is config_error, and the run says how to finish it", async () => {
    const jobs = path.join(scratch(), "refused");
    const r = await bench(seedCommand(jobs, ["--trials", "1"]), {
      env: { DEEPSEEK_API_KEY: "sk-wrong", DEEPSEEK_BASE_URL: standIn.baseUrl, ...OTHER_KEYS },
    });
    assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
    const [only] = await rollouts(jobs);
    assert.equal(only?.result?.error_category, "config_error");
    assert.match(r.stderr, /--job-name/);
  });

  it("--max-cost-usd stops starting rollouts once finished ones have spent it", async () => {
    const jobs = path.join(scratch(), "budget");
    const r = await bench(seedCommand(jobs, ["--trials", "3", "-j", "1", "--max-cost-usd", "0.0000001"]), {
      env: { DEEPSEEK_API_KEY: DEEPSEEK_KEY, DEEPSEEK_BASE_URL: standIn.baseUrl },
    });
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /stopped: the run has spent \$[0-9.]+, at or over its budget/);
    assert.match(r.stderr, /2 planned trial\(s\) not started; with a larger --max-cost-usd/);
    assert.equal((await rollouts(jobs)).filter((x) => x.result?.agent_result?.cost_usd > 0).length, 1);
  });

  it("--max-cost-usd on a model without a price is refused before anything runs", async () => {
    const r = await bench(
      [
        ...seedCommand(path.join(scratch(), "noprice")).map((a) =>
          a === "deepseek/deepseek-v4-flash" ? "deepseek/unlisted" : a,
        ),
        "--max-cost-usd",
        "1",
      ],
      { env: { DEEPSEEK_API_KEY: DEEPSEEK_KEY } },
    );
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /--max-cost-usd needs the model's price: the price table has none for deepseek\/unlisted; pass --price IN,OUT/,
    );
  });

  it("every provider: its key variable reaches its route (through its URL variable), and a refused key is config_error", async () => {
    for (const p of HOSTED_PROVIDERS) {
      // The provider's own URL variable; Anthropic's is the API's root (the run adds /v1).
      const url = p.baseUrlEnvSuffix ? standIn.baseUrl.replace(/\/v1$/, "") : standIn.baseUrl;
      const env = (key: string) => ({
        ...OTHER_KEYS,
        [p.keyEnv[0] as string]: key,
        [p.baseUrlEnv[0] as string]: url,
      });
      const args = (name: string) => [
        "run",
        path.join(EXAMPLES, "hello"),
        "-a",
        "bench-agent",
        "-m",
        `${p.name}/some-model`,
        "--sandbox",
        "namespace",
        "--jobs-dir",
        path.join(scratch(), `${p.name}-${name}`),
        "-q",
      ];
      const ok = await bench(args("ok"), { env: env(DEEPSEEK_KEY) });
      assert.equal(ok.code, 0, `${p.name}: ${ok.stderr}`);
      const refused = await bench(args("refused"), { env: env("sk-refused") });
      assert.equal(refused.code, 2, `${p.name}: ${refused.stderr}`);
      const [only] = await rollouts(path.join(scratch(), `${p.name}-refused`));
      assert.equal(only?.result?.error_category, "config_error", p.name);
    }
  });
});

// `anthropic/` is called in Anthropic's own Messages API: Claude Code's calls reach the stand-in as
// Claude Code sent them, bench-agent's (chat) converted; the stand-in checks requests as the API
// does (src/scripted-endpoint/messages.ts), so a bad conversion fails there.
describe("anthropic/ in its own Messages API", () => {
  const ANTHROPIC_KEY = "sk-ant-only-7373";
  const run = async (agent: string, script: EndpointScript, key = ANTHROPIC_KEY) => {
    const endpoint = await startScriptedEndpoint({
      script,
      apiKey: ANTHROPIC_KEY,
      model: "claude-sonnet-5-5",
      promptCache: "deepseek",
    });
    try {
      const jobs = path.join(scratch(), `anthropic-${agent}-${key.length}`);
      const args = [
        "run",
        path.join(EXAMPLES, "hello"),
        "-a",
        agent,
        "-m",
        "anthropic/claude-sonnet-5-5",
        "--sandbox",
        "namespace",
        "--jobs-dir",
        jobs,
      ];
      // ANTHROPIC_BASE_URL is the API's root, as Anthropic's SDKs read it (the run adds /v1).
      const env = {
        ANTHROPIC_API_KEY: key,
        ANTHROPIC_BASE_URL: endpoint.baseUrl.replace(/\/v1$/, ""),
        OPENAI_API_KEY: "sk-openai-never-sent",
      };
      const r = await bench(args, { env });
      return { r, requests: endpoint.requests, found: await rollouts(jobs) };
    } finally {
      await endpoint.close();
    }
  };

  it("Claude Code's calls pass through unconverted, with Anthropic's key header, and the run prices them", async () => {
    const script = scriptFor("claude-code", [
      {
        replies: [
          { tool_calls: [shellCall("claude-code", "echo 'Hello, world!' > /app/hello.txt")] },
          { content: "Done." },
        ],
      },
    ]);
    const { r, requests, found } = await run("claude-code", script);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^trial-01 {2}reward 1\.0/m);
    assert.match(r.stdout, /^The rollout cost about \$[0-9.]+ \([0-9,]+ tokens\)/m);
    const sent = requests.filter((q) => q.path.startsWith("/v1/messages"));
    assert.ok(
      sent.length >= 2,
      `Claude Code called the Messages API: ${requests.map((q) => q.path).join(", ")}`,
    );
    assert.equal(requests.filter((q) => q.path.includes("chat/completions")).length, 0);
    for (const q of sent) {
      assert.equal(q.headers["x-api-key"], ANTHROPIC_KEY);
      assert.equal(q.body.model, "claude-sonnet-5-5");
    }
    // Claude Code's own request shape survives: its system blocks and tools with input_schema.
    const main = sent.find(
      (q) => Array.isArray(q.body.tools) && q.body.tools.some((t: { name: string }) => t.name === "Bash"),
    );
    assert.ok(main, "Claude Code's main call reached the endpoint");
    assert.ok(Array.isArray(main.body.system), "system blocks are not flattened to a string");
    assert.ok(JSON.stringify(main.body).includes('"cache_control"'), "Claude Code's cache marks are kept");
    const usage = found[0]?.result?.agent_result;
    assert.ok(usage.n_cache_read_tokens > 0 && usage.n_cache_creation_tokens > 0, JSON.stringify(usage));
    assert.ok(usage.cost_usd > 0);
    const config = JSON.parse(await fs.readFile(path.join(found[0]?.dir as string, "config.json"), "utf8"));
    assert.equal(config.policy.api, "anthropic-messages");
  });

  it("bench-agent (chat) is converted to Messages and scores", async () => {
    const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
    const { r, requests } = await run("bench-agent", script);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^trial-01 {2}reward 1\.0/m);
    const sent = requests.filter((q) => q.path === "/v1/messages");
    assert.ok(sent.length >= 2, `bench-agent called the Messages API: ${sent.length}`);
    assert.ok(
      sent.some((q) =>
        q.body.messages.some((m: { content: unknown }) => JSON.stringify(m.content).includes("tool_result")),
      ),
    );
  });

  it("a key Anthropic refuses is config_error, for both agents", async () => {
    for (const agent of ["claude-code", "bench-agent"]) {
      const script = { conversations: [{ replies: [{ content: "unused" }] }] };
      const { r, found } = await run(agent, script, "sk-ant-refused");
      assert.equal(r.code, 2, `${agent}: ${r.stdout}\n${r.stderr}`);
      assert.equal(found[0]?.result?.error_category, "config_error", agent);
    }
  });
});
