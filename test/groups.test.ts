// Groups by construction, on real runs: bench-agent on a scripted policy that solves hello on repeats
// 2 and 4 (rewards 0, 1, 0, 1). Without --group-by every reader gives the seed's advantages; runs
// that differ in policy version or sampling stay in groups of their own in one jobs folder; an
// explicit --group-by that merges them names the mix; a resume cannot change the group identity, and
// a fixed key completes the group the wrong one left.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { type ScriptedEndpoint, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { loadRunSummary } from "../src/view/index.js";
import { bench, EXAMPLES, useScratch } from "./testing/bench.js";

const scratch = useScratch("groups");
const KEY = "sk-groups-right";

const reply = (text: string) => [
  { tool_calls: [{ name: "bash", arguments: { command: `echo '${text}' > /app/hello.txt` } }] },
  { tool_calls: [{ name: "submit", arguments: {} }] },
  { content: "Created /app/hello.txt." },
];
const SCRIPT = {
  conversations: [
    { match: "hello.txt", when: { repeat: [2, 4] }, replies: reply("Hello, world!") },
    { match: "hello.txt", replies: reply("Hello, World") },
  ],
};

let policy: ScriptedEndpoint;
before(async () => {
  policy = await startScriptedEndpoint({ script: SCRIPT, apiKey: KEY });
});
after(() => policy?.close());

function run(jobs: string, extra: string[]) {
  return bench([
    "run",
    path.join(EXAMPLES, "hello"),
    "-a",
    "bench-agent",
    "-m",
    "vllm/scripted",
    "--base-url",
    policy.baseUrl,
    "--trials",
    "4",
    "--parallel-jobs",
    "4",
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobs,
    ...extra,
  ]);
}

/** The job name the run's repeat jobs share (each trial-NN holds one folder of that name). */
async function jobNameIn(jobs: string, trialJobs: string[]): Promise<string> {
  const names = await fs.readdir(path.join(jobs, "bench-agent", "trial-01"));
  const fresh = names.filter((n) => !trialJobs.includes(n));
  assert.equal(fresh.length, 1, names.join(", "));
  return fresh[0] as string;
}

async function rowsOf(file: string): Promise<Array<Record<string, any>>> {
  const text = await fs.readFile(file, "utf8");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const ADV = 0.866;
const seedAdvantages = (advs: number[]) => advs.map((a) => Math.round(a * 1000) / 1000);

describe("groups by construction", () => {
  let jobs = "";
  const names: string[] = [];

  before(async () => {
    jobs = path.join(scratch(), "jobs");
    for (const extra of [
      ["--policy-version", "step-1"],
      ["--policy-version", "step-2"],
      ["--policy-version", "step-1", "--temperature", "0.5"],
    ]) {
      const r = await run(jobs, ["--api-key", KEY, "-q", ...extra]);
      assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
      names.push(await jobNameIn(jobs, names));
    }
  });

  it("convert without --group-by: three groups of four, each with the seed's advantages", async () => {
    const out = path.join(scratch(), "rows.jsonl");
    const manifest = path.join(scratch(), "manifest.json");
    const r = await bench([
      "train",
      "convert",
      jobs,
      "--out",
      out,
      "--group-advantage",
      "grpo",
      "--manifest",
      manifest,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /Groups \(grpo, by task,agent,model,run,task_digest,policy_version,sampling\): 3;/,
    );
    const rows = await rowsOf(out);
    assert.equal(rows.length, 12);
    const byGroup = new Map<string, Array<Record<string, any>>>();
    for (const row of rows) byGroup.set(row.group.id, [...(byGroup.get(row.group.id) ?? []), row]);
    assert.equal(byGroup.size, 3);
    for (const members of byGroup.values()) {
      assert.equal(members.length, 4);
      const sorted = [...members].sort((a, b) => a.reward - b.reward);
      assert.deepEqual(seedAdvantages(sorted.map((m) => m.advantage)), [-ADV, -ADV, ADV, ADV]);
    }
    const keys = [...byGroup.values()].map((m) => m[0]?.group.key);
    assert.deepEqual(
      keys.map((k) => [k.run, k.policy_version, k.sampling]).sort(),
      [
        [names[0], "step-1", "default"],
        [names[1], "step-2", "default"],
        [names[2], "step-1", "temperature=0.5"],
      ].sort(),
    );
    const m = JSON.parse(await fs.readFile(manifest, "utf8"));
    assert.ok(m.training_signal.groups.every((g: { mixed?: unknown }) => g.mixed === undefined));
  });

  it("stream --no-follow --group-size 4 without --group-by: the same groups and advantages", async () => {
    const r = await bench(["train", "stream", jobs, "--no-follow", "--group-size", "4"]);
    assert.equal(r.code, 0, r.stderr);
    const records = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(records.length, 12);
    const groups = new Set(records.map((x) => x.group_id));
    assert.equal(groups.size, 3);
    for (const id of groups) {
      const members = records.filter((x) => x.group_id === id).sort((a, b) => a.reward - b.reward);
      assert.deepEqual(seedAdvantages(members.map((x) => x.advantage)), [-ADV, -ADV, ADV, ADV]);
    }
  });

  it("results and the viewer's model: the same three groups", async () => {
    const r = await bench(["results", jobs, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const results = JSON.parse(r.stdout);
    assert.equal(results.groups.length, 3);
    const s = await loadRunSummary(jobs);
    assert.equal(s.groups.length, 3);
    assert.ok(s.groups.every((g) => g.rollouts === 4));
  });

  it("--group-by task,agent,model (upstream's meaning): one group of twelve, its mix named", async () => {
    const out = path.join(scratch(), "merged.jsonl");
    const manifest = path.join(scratch(), "merged-manifest.json");
    const r = await bench([
      "train",
      "convert",
      jobs,
      "--out",
      out,
      "--group-advantage",
      "grpo",
      "--group-by",
      "task,agent,model",
      "--manifest",
      manifest,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /Groups \(grpo, by task,agent,model\): 1;.*1 mix policy versions, 1 mix sampling settings/,
    );
    const m = JSON.parse(await fs.readFile(manifest, "utf8"));
    assert.deepEqual(m.training_signal.groups[0].mixed, ["policy_version", "sampling"]);
    const rows = await rowsOf(out);
    assert.equal(rows[0]?.group.id, "task=hello|agent=bench-agent|model=vllm/scripted");
    assert.deepEqual(rows[0]?.group.mixed, ["policy_version", "sampling"]);
  });

  it("a resume that changes the policy version or the temperature is refused, the difference named", async () => {
    const name = names[0] as string;
    let r = await run(jobs, ["--api-key", KEY, "--job-name", name, "--policy-version", "step-9"]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /policy version step-1 -> step-9/);
    assert.match(r.stderr, /new --job-name/);
    r = await run(jobs, [
      "--api-key",
      KEY,
      "--job-name",
      name,
      "--policy-version",
      "step-1",
      "--temperature",
      "0.9",
    ]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /temperature \(unset\) -> 0\.9/);
    // The same identity resumes: nothing left to run, the group as it was.
    r = await run(jobs, ["--api-key", KEY, "--job-name", name, "--policy-version", "step-1", "-q"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});

describe("a fixed key completes the group a wrong one left", () => {
  it("wrong key: config_error; the same command with the right key and --job-name: a whole group, rows, exit 0", async () => {
    const jobs = path.join(scratch(), "fixed");
    const wrong = await run(jobs, ["--api-key", "sk-wrong", "-q"]);
    assert.notEqual(wrong.code, 0, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout + wrong.stderr, /--job-name/);
    const name = await jobNameIn(jobs, []);
    const fixed = await run(jobs, ["--api-key", KEY, "--job-name", name, "-q"]);
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    const out = path.join(scratch(), "fixed.jsonl");
    const r = await bench(["train", "convert", jobs, "--out", out, "--group-advantage", "grpo"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /Groups \(grpo, by [^)]*\): 1; 0 unscored rollout\(s\) left out of every baseline\./,
    );
    const rows = await rowsOf(out);
    assert.equal(rows.length, 4);
    assert.deepEqual(seedAdvantages(rows.map((x) => x.advantage).sort((a, b) => a - b)), [
      -ADV,
      -ADV,
      ADV,
      ADV,
    ]);
  });
});
