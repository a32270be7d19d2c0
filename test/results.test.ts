// `bench results` prints the numbers the page shows and that `bench train convert --manifest`
// writes: the same groups, withheld reasons, means and advantages, from one folder, three ways.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { writeGroup, writeJob } from "../src/jobs-dir/testing/job-builder.js";
import { tmp } from "../src/jobs-dir/testing/tmp.js";
import { fixed } from "../src/view/html/format.js";
import { type RunSummary, startViewServer, type ViewServer } from "../src/view/index.js";
import { bench } from "./testing/bench.js";
import { sharedViewRun, type ViewRun } from "./testing/view-run.js";

interface ManifestGroup {
  id: string;
  withheld: string | null;
  mean: number | null;
  std: number | null;
  members: Array<{
    rollout_dir: string;
    advantage: number | null;
    reward: number | null;
    withheld_reason?: string;
  }>;
}

const cells = (page: string, field: string) =>
  [...page.matchAll(new RegExp(`data-field="${field}"[^>]*>([^<]*)<`, "g"))].map((m) => m[1]);

/** The manifest's groups of `bench train convert --manifest` on `root`, by `norm`. */
async function manifestGroups(root: string, out: string, norm: "grpo" | "loo") {
  const manifest = path.join(out, `manifest-${norm}.json`);
  const res = await bench([
    "train",
    "convert",
    root,
    "--out",
    path.join(out, `rows-${norm}.jsonl`),
    "--manifest",
    manifest,
    "--group-advantage",
    norm,
  ]);
  assert.equal(res.code, 0, res.stderr);
  const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
  return { groups: m.training_signal.groups as ManifestGroup[], rolloutsSeen: m.rollouts_seen as number };
}

/**
 * `bench results --json`, `bench train convert --manifest` and the page served over `root` agree:
 * the same groups in the same order, withholding, means, stds, rewards and advantages (3 decimals on
 * the page). Returns what `bench results` said, for the caller's own expectations.
 */
async function assertAgree(root: string, out: string, server: ViewServer, norm: "grpo" | "loo") {
  const [json, manifest] = await Promise.all([
    bench(["results", root, "--json", "--advantage", norm]),
    manifestGroups(root, out, norm),
  ]);
  assert.equal(json.code, 0, json.stderr);
  const s = JSON.parse(json.stdout) as RunSummary;
  // Both without --group-by: one default for every reader.
  assert.deepEqual(s.group_by, [
    "task",
    "agent",
    "model",
    "run",
    "task_digest",
    "policy_version",
    "sampling",
  ]);
  assert.equal(s.run.rollouts, manifest.rolloutsSeen);
  assert.deepEqual(
    s.groups.map((g) => g.id),
    manifest.groups.map((g) => g.id),
  );
  for (const [i, g] of s.groups.entries()) {
    const m = manifest.groups[i] as ManifestGroup;
    assert.equal(g.withheld, m.withheld, g.id);
    assert.equal(g.mean, m.mean, g.id);
    assert.equal(g.std, m.std, g.id);
    assert.deepEqual(
      g.members.map((x) => [
        path.join(root, x.rollout),
        x.reward,
        x.advantage,
        x.withheld_reason ?? undefined,
      ]),
      m.members.map((x) => [x.rollout_dir, x.reward, x.advantage, x.withheld_reason]),
      g.id,
    );
  }
  // The page: the run's totals and each group's members as printed, 3 decimals.
  const home = await (await fetch(new URL(`/?advantage=${norm}`, server.url))).text();
  assert.deepEqual(cells(home, "rollouts"), [String(s.run.rollouts)]);
  assert.deepEqual(cells(home, "mean-reward"), [fixed(s.run.mean_reward)]);
  assert.match(home, new RegExp(`data-testid="group-key">${s.group_by.join(",")}<`));
  for (const g of s.groups) {
    const page = await (await fetch(new URL(`/groups/${g.url_id}?advantage=${norm}`, server.url))).text();
    assert.deepEqual(
      cells(page, "advantage"),
      g.members.map((x) => fixed(x.advantage)),
      g.id,
    );
    assert.deepEqual(
      cells(page, "reward"),
      g.members.map((x) => fixed(x.reward)),
      g.id,
    );
    if (g.withheld) assert.match(page, new RegExp(`data-testid="withheld-reason">${g.withheld}<`));
  }
  return s;
}

describe("bench results: the page's numbers and the manifest's", () => {
  const root = tmp("bf-results-");
  const out = tmp("bf-results-out-");
  let server: ViewServer;

  before(async () => {
    writeGroup(root, { task: "hello", rewards: [0, 1, 0] });
    writeGroup(root, { task: "spread", rewards: [0.25, 1, 0.5, 0] });
    writeGroup(root, { task: "bye", rewards: [1, null, 1] });
    writeGroup(root, { task: "same", rewards: [1, 1] });
    // One member made no model calls; one member's only call failed: both withhold their groups.
    writeGroup(root, { task: "nop", rewards: [1, 0], each: [{ calls: 0 }, {}] });
    writeGroup(root, { task: "down", rewards: [1, 0], each: [{}, { calls: [{ status: 503 }] }] });
    // A retried attempt: replaced, in no group.
    const job = path.join(root, "bench-agent", "trial-01", "2026-01-01__12-00-00");
    writeJob({
      dir: job,
      rollouts: [{ task: "hello", reward: 1, replacedBy: "hello__ffffffff", attempt: 0 }],
    });
    server = await startViewServer({ jobsDir: root });
  });
  after(() => server?.close());

  for (const norm of ["grpo", "loo"] as const) {
    it(`--json, the page and convert --manifest agree (${norm})`, async () => {
      const s = await assertAgree(root, out, server, norm);
      assert.equal(s.run.replaced, 1);
      const withheld = Object.fromEntries(s.groups.map((g) => [g.key.task, g.withheld]));
      assert.deepEqual(withheld, {
        hello: null,
        spread: null,
        bye: "unscored_member",
        same: null,
        nop: "no_model_calls",
        down: "all_calls_failed",
      });
      const hello = s.groups.find((g) => g.key.task === "hello");
      assert.deepEqual(
        hello?.members.map((x) => fixed(x.advantage)),
        norm === "grpo" ? ["-0.577", "1.155", "-0.577"] : ["-0.500", "1.000", "-0.500"],
      );
    });
  }

  it("the terminal table prints the same run totals and each member's advantage", async () => {
    const [table, json] = await Promise.all([bench(["results", root]), bench(["results", root, "--json"])]);
    assert.equal(table.code, 0, table.stderr);
    const s = JSON.parse(json.stdout) as RunSummary;
    assert.match(
      table.stdout,
      /grouped by task,agent,model,run,task_digest,policy_version,sampling, advantage grpo/,
    );
    const totals = table.stdout.split("\n")[5] as string;
    assert.deepEqual(totals.trim().split(/\s+/).slice(0, 3), [
      String(s.run.rollouts),
      String(s.run.scored),
      fixed(s.run.mean_reward),
    ]);
    for (const g of s.groups)
      for (const m of g.members) {
        const line = table.stdout.split("\n").find((l) => l.includes(m.rollout)) as string;
        assert.ok(line, m.rollout);
        assert.ok(line.includes(` ${fixed(m.reward)} `) && line.includes(` ${fixed(m.advantage)} `), line);
      }
    assert.match(table.stdout, /withheld: no_model_calls/);
    assert.match(table.stdout, /zero spread/);
  });
});

// The same three ways over the folder a real `bench run` made: bench-agent on the scripted policy
// with --capture-tokens (test/testing/view-run.ts), the folder the browser tests look at.
describe("bench results on a folder bench run made (bench-agent, scripted policy, --capture-tokens)", () => {
  const out = tmp("bf-results-run-out-");
  let run: ViewRun;
  let server: ViewServer;

  before(async () => {
    run = await sharedViewRun();
    server = await startViewServer({ jobsDir: run.jobsDir });
  });
  after(() => server?.close());

  for (const norm of ["grpo", "loo"] as const) {
    it(`--json, the page and convert --manifest agree (${norm})`, async () => {
      const s = await assertAgree(run.jobsDir, out, server, norm);
      assert.equal(s.run.rollouts, run.rollouts.length);
      const spread = s.groups.find((g) => g.key.task === run.spread.task);
      const byPath = Object.fromEntries(spread?.members.map((m) => [m.rollout, fixed(m.advantage)]) ?? []);
      assert.deepEqual(
        run.spread.rollouts.map((r) => byPath[r.path]),
        norm === "grpo" ? run.spread.grpo : run.spread.loo,
      );
      const withheld = s.groups.find((g) => g.key.task === run.withheld.task);
      assert.equal(withheld?.withheld, run.withheld.withheld);
    });
  }
});
