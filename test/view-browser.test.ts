// `bench view` in a real headless Chromium (Debian's chromium, driven by playwright-core) over a jobs
// folder made by a real `bench run` of bench-agent on the scripted policy with --capture-tokens
// (test/testing/view-run.ts). One browser, one server and one run folder serve every subtest, so
// the file stays quick; the subtests run in order on one page. Selectors are the DOM markers of the
// viewer's contract. Screenshots of each page are saved for a person to look at (the folder is
// printed as a `#` line). A second, small run against an endpoint that returns no logprobs (its own
// folder and server, run alongside the first) shows tokens without a logprob.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { startViewServer } from "../src/view/index.js";
import { bench, EXAMPLES, REPO, rollouts, tempDir } from "./testing/bench.js";
import { browserSkip, launchBrowser, SCREENSHOTS, screenshot } from "./testing/browser.js";
import { addViewRollout, type ExpectedGroup, makeViewRun, type ViewRun } from "./testing/view-run.js";

// Only a guard against a hang: every wait ends as soon as the page shows what it waits for.
const HANG = 120_000;
const SUMMARY_ROLLOUTS = "[data-testid=run-summary] [data-field=rollouts]";
const SUMMARY_MEAN = "[data-testid=run-summary] [data-field=mean-reward]";
const SUMMARY_SCORED = "[data-testid=run-summary] [data-field=scored]";

const skip = browserSkip();

// The page's globals, for the few functions that run in it (the project's types have no DOM).
interface InPage {
  getComputedStyle(e: unknown): { backgroundColor: string };
  requestAnimationFrame(f: () => void): void;
  document: { querySelector(selector: string): { textContent: string | null } | null };
  /** Set by the test on the document it watches, to tell an update in place from a reload. */
  viewMark?: number;
}

/** `bench run` of hello with --capture-tokens against a scripted endpoint that returns no logprobs. */
async function runWithoutLogprobs(jobsDir: string): Promise<string> {
  const script = await loadEndpointScript(path.join(REPO, "examples/policies/hello.json"));
  const policy = await startScriptedEndpoint({ script, logprobs: false });
  try {
    const args = ["run", path.join(EXAMPLES, "hello"), "-a", "bench-agent", "-m", "vllm/scripted"];
    const r = await bench(
      [...args, "--base-url", policy.baseUrl, "--capture-tokens", "--sandbox", "namespace"].concat([
        "--jobs-dir",
        jobsDir,
        "-q",
      ]),
    );
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await policy.close();
  }
  const [only] = await rollouts(jobsDir);
  assert.ok(only);
  return path.relative(jobsDir, only.dir).split(path.sep).join("/");
}

/** What an element shows, trimmed ("" when it has no text). */
async function text(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? "").trim();
}

describe("bench view in a real browser", { skip }, () => {
  let dir = "";
  let run: ViewRun;
  let server: { url: string; close(): Promise<void> };
  let plainDir = "";
  let plainRollout = "";
  let plainServer: { url: string; close(): Promise<void> };
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  const requested: string[] = [];

  before(async () => {
    dir = await tempDir("view-browser");
    plainDir = await tempDir("view-browser-plain");
    [run, plainRollout] = await Promise.all([makeViewRun(dir), runWithoutLogprobs(plainDir)]);
    server = await startViewServer({ jobsDir: run.jobsDir, port: 0 });
    plainServer = await startViewServer({ jobsDir: plainDir, port: 0 });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(HANG);
    // A dialog would mean text the policy wrote ran as script; dismiss it so nothing waits on it.
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    // Offline by design: every request a page makes goes to the viewer it came from.
    page.on("request", (r) => requested.push(r.url()));
    console.log(`screenshots: ${SCREENSHOTS}`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await plainServer?.close();
    for (const d of [dir, plainDir]) if (d) await fs.rm(d, { recursive: true, force: true });
  });

  /** The runs page's row of a group, found by its task (each fixture task is one group). */
  const groupRow = (group: ExpectedGroup) =>
    page.locator("table[data-testid=groups] tr[data-group-id]", { hasText: group.task });

  /** Opens a group from the runs page by its link, as a person would. */
  async function openGroup(group: ExpectedGroup): Promise<void> {
    await page.goto(server.url);
    const row = groupRow(group);
    assert.equal(await row.count(), 1, `one row of the groups table for ${group.task}`);
    await row.locator("a").first().click();
    await page.locator("tr[data-rollout]").first().waitFor();
  }

  /** Each member's field on the group page now open, by rollout path, trimmed. */
  async function column(field: string): Promise<Record<string, string>> {
    const pairs = await page
      .locator("tr[data-rollout]")
      .evaluateAll(
        (rows, f) =>
          rows.map((r) => [
            r.getAttribute("data-rollout"),
            r.querySelector(`td[data-field=${f}]`)?.textContent?.trim(),
          ]),
        field,
      );
    return Object.fromEntries(pairs);
  }

  const byPath = (group: ExpectedGroup, values: readonly unknown[]) =>
    Object.fromEntries(group.rollouts.map((r, i) => [r.path, values[i]]));

  it("the runs page lists the run: every rollout, its groups and the key it grouped by", async () => {
    await page.goto(server.url);
    await page.locator("table[data-testid=groups]").waitFor();
    assert.equal(Number(await text(page.locator(SUMMARY_ROLLOUTS))), run.rollouts.length);
    assert.equal(await groupRow(run.spread).count(), 1);
    assert.equal(await groupRow(run.withheld).count(), 1);
    // --trials 3 made trial-NN jobs: the default key leaves `job` out so a group is the 3 repeats.
    const key = await text(page.locator("[data-testid=group-key]"));
    assert.match(key, /task/);
    assert.doesNotMatch(key, /\bjob\b/);
    await screenshot(page, "01-runs");
  });

  it("a group with rewards 0, 1, 0 shows grpo advantages -0.577, 1.155, -0.577, and loo when switched", async () => {
    await openGroup(run.spread);
    assert.deepEqual(run.spread.rewards, [0, 1, 0]);
    const rewards = await column("reward");
    assert.deepEqual(
      Object.fromEntries(Object.entries(rewards).map(([p, r]) => [p, Number(r)])),
      byPath(run.spread, [0, 1, 0]),
    );
    assert.deepEqual(await column("advantage"), byPath(run.spread, ["-0.577", "1.155", "-0.577"]));
    assert.equal(
      await page.locator("[data-testid=zero-spread]").count(),
      0,
      "rewards differ: not zero spread",
    );
    assert.equal(await page.locator("[data-testid=withheld-reason]").count(), 0);
    await screenshot(page, "02-group-grpo");

    await page.locator("a[data-testid=advantage-loo]").click();
    await page.waitForURL(/advantage=loo/);
    await page.locator("tr[data-rollout]").first().waitFor();
    assert.deepEqual(await column("advantage"), byPath(run.spread, ["-0.500", "1.000", "-0.500"]));
    await screenshot(page, "03-group-loo");

    await page.locator("a[data-testid=advantage-grpo]").click();
    await page.waitForURL(/advantage=grpo/);
    assert.deepEqual(await column("advantage"), byPath(run.spread, ["-0.577", "1.155", "-0.577"]));
  });

  it("a rollout page shows its tool calls and every captured token coloured by its logprob", async () => {
    const rollout = run.spread.rollouts[1]?.path ?? "";
    await openGroup(run.spread);
    await page.locator(`tr[data-rollout="${rollout}"] a`).first().click();
    await page.locator("[data-testid=trajectory]").waitFor();
    assert.ok(page.url().endsWith(`/rollouts/${rollout}`), page.url());
    const folder = path.join(run.jobsDir, rollout);
    const result = JSON.parse(await fs.readFile(path.join(folder, "result.json"), "utf8"));
    assert.ok(result.n_tool_calls > 0);
    assert.equal(
      await page.locator("[data-testid=trajectory] [data-testid=tool-call]").count(),
      result.n_tool_calls,
    );
    assert.notEqual(await text(page.locator("[data-testid=instruction]")), "");
    assert.match(await text(page.locator("[data-testid=rewards]")), /reward/);
    assert.equal(
      await text(page.locator("[data-testid=verifier-output]")),
      (await fs.readFile(path.join(folder, "verifier/test-stdout.txt"), "utf8")).trim(),
    );

    // Every sampled token the gateway captured, in order: a logprob is a coloured span carrying it,
    // a position without one (masked, absent) a span.tok.masked with none, never a 0.
    const calls = (await fs.readFile(path.join(folder, "trajectory/llm_trajectory.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(await page.locator("[data-testid=model-call]").count(), calls.length);
    const recorded: Array<number | null> = calls.flatMap((c) =>
      c.metadata.token_capture.completions.flatMap((k: { logprobs: Array<number | null> }) => k.logprobs),
    );
    const tokens = await page.locator("span.tok").evaluateAll((spans) =>
      spans.map((s) => ({
        masked: s.classList.contains("masked"),
        logprob: s.getAttribute("data-logprob"),
        background: (globalThis as unknown as InPage).getComputedStyle(s).backgroundColor,
      })),
    );
    const coloured = tokens.filter((t) => !t.masked);
    const expected = recorded.filter((l): l is number => l !== null);
    assert.ok(expected.length > 0, "the run captured logprobs");
    assert.equal(coloured.length, expected.length, "one coloured span per captured logprob");
    coloured.forEach((t, i) => {
      assert.ok(
        Math.abs(Number(t.logprob) - (expected[i] ?? Number.NaN)) < 5e-4,
        `token ${i}: ${t.logprob} vs ${expected[i]}`,
      );
      assert.ok(
        !["rgba(0, 0, 0, 0)", "transparent"].includes(t.background),
        `token ${i} has a background colour`,
      );
    });
    const masked = tokens.filter((t) => t.masked);
    assert.ok(masked.length >= recorded.length - expected.length);
    for (const t of masked) assert.equal(t.logprob, null, "a masked position has no logprob");
    await screenshot(page, "04-rollout");
  });

  it("a rollout's raw files open by their links, as the file's own text", async () => {
    const rollout = run.spread.rollouts[1]?.path ?? "";
    await page.goto(new URL(`rollouts/${rollout}`, server.url).href);
    const link = page.locator("a[data-testid=raw-link]", { hasText: "result.json" }).first();
    const response = page.waitForResponse((r) => r.url().includes("/raw/"));
    await link.click();
    assert.match((await response).headers()["content-type"] ?? "", /^text\/plain/);
    const file = await fs.readFile(path.join(run.jobsDir, rollout, "result.json"), "utf8");
    assert.deepEqual(JSON.parse(await text(page.locator("body"))), JSON.parse(file));
    await screenshot(page, "05-raw-result");
    await page.goBack();
    await page.locator("[data-testid=trajectory]").waitFor();
  });

  it("two rollouts of the group side by side", async () => {
    const [worse, better] = [run.spread.rollouts[0]?.path ?? "", run.spread.rollouts[1]?.path ?? ""];
    await page.goto(
      new URL(`compare?a=${encodeURIComponent(worse)}&b=${encodeURIComponent(better)}`, server.url).href,
    );
    const trajectories = page.locator("[data-testid=trajectory]");
    await trajectories.first().waitFor();
    assert.equal(await trajectories.count(), 2);
    const shown = await text(page.locator("body"));
    assert.ok(shown.includes(worse) && shown.includes(better), "both rollouts are named");
    await screenshot(page, "06-compare");
  });

  it("tokens the endpoint returned no logprobs for are shown as absent, never as 0", async () => {
    await page.goto(new URL(`rollouts/${plainRollout}`, plainServer.url).href);
    await page.locator("[data-testid=model-call]").first().waitFor();
    const calls = (
      await fs.readFile(path.join(plainDir, plainRollout, "trajectory/llm_trajectory.jsonl"), "utf8")
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).metadata.token_capture);
    for (const tc of calls) assert.equal(tc.unavailable.logprobs?.reason, "not_returned");
    const sampled = calls.reduce((n, tc) => n + tc.completions[0].token_ids.length, 0);
    const tokens = await page.locator("span.tok").evaluateAll((spans) =>
      spans.map((s) => ({
        masked: s.classList.contains("masked"),
        logprob: s.getAttribute("data-logprob"),
      })),
    );
    assert.equal(tokens.length, sampled, "every sampled token is shown");
    for (const t of tokens) assert.deepEqual(t, { masked: true, logprob: null });
    await screenshot(page, "07-rollout-no-logprobs");
  });

  it("a <script> in a tool output is shown as text and never runs", async () => {
    const rollout = run.spread.rollouts[0]?.path ?? "";
    const seen = dialogs.length;
    await page.goto(new URL(`rollouts/${rollout}`, server.url).href);
    const calls = page.locator("[data-testid=trajectory] [data-testid=tool-call]");
    await calls.first().waitFor();
    const output = calls.filter({ hasText: run.scriptText });
    assert.ok((await output.count()) >= 1, `a tool call shows ${run.scriptText} as text`);
    assert.ok(await output.first().isVisible());
    assert.equal(
      await page.locator("[data-testid=trajectory] script").count(),
      0,
      "no script element made from it",
    );
    // A round trip through the page after load, so a script that were to run has run.
    await page.evaluate(
      () =>
        new Promise((r) => (globalThis as unknown as InPage).requestAnimationFrame(() => setTimeout(r, 0))),
    );
    assert.equal(dialogs.length, seen, `no dialog fired: ${dialogs.join(", ")}`);
    await screenshot(page, "08-rollout-script");
  });

  it("a withheld group shows bench train's reason", async () => {
    assert.equal(run.withheld.withheld, "unscored_member");
    await openGroup(run.withheld);
    const reason = page.locator("[data-testid=withheld-reason]");
    assert.ok(await reason.isVisible());
    assert.match(await text(reason), /unscored_member/);
    // No advantage for any member of a withheld group.
    assert.deepEqual(Object.values(await column("advantage")), ["—", "—", "—"]);
    await screenshot(page, "09-group-withheld");
  });

  it("links navigate and the back button returns to the page before", async () => {
    const rollout = run.spread.rollouts[2]?.path ?? "";
    await openGroup(run.spread);
    const groupUrl = page.url();
    assert.notEqual(groupUrl, server.url);
    await page.locator(`tr[data-rollout="${rollout}"] a`).first().click();
    await page.locator("[data-testid=trajectory]").waitFor();
    assert.ok(page.url().endsWith(`/rollouts/${rollout}`), page.url());
    await page.goBack();
    await page.locator(`tr[data-rollout="${rollout}"]`).waitFor();
    assert.equal(page.url(), groupUrl);
    await page.goBack();
    await page.locator("table[data-testid=groups]").waitFor();
    assert.equal(page.url(), server.url);
  });

  it("a rollout that finishes while the page is open appears, scored, without a reload", async () => {
    await page.goto(server.url);
    const shown = Number(await text(page.locator(SUMMARY_ROLLOUTS)));
    assert.equal(shown, run.rollouts.length);
    // A mark on this document: still there afterwards means the page was updated, not reloaded.
    await page.evaluate(() => {
      (globalThis as unknown as InPage).viewMark = 1;
    });
    // A second real `bench run` into the same folder while the page is open: one more pick-word rollout.
    const second = addViewRollout(run.jobsDir);
    try {
      // Read in the page itself, so each wait ends the moment the page shows it.
      const shows = (want: Record<string, string>) =>
        page.waitForFunction(
          (fields) =>
            Object.entries(fields).every(
              ([sel, value]) =>
                (globalThis as unknown as InPage).document.querySelector(sel)?.textContent?.trim() === value,
            ),
          want,
          { timeout: HANG },
        );
      await shows({ [SUMMARY_ROLLOUTS]: String(shown + 1) });
      await second;
      // Once its result.json is in, the page shows the run as the folder now holds it.
      const rewards = (await rollouts(run.jobsDir)).map((r) => r.result?.rewards?.reward);
      const scored = rewards.filter((r): r is number => typeof r === "number");
      assert.equal(rewards.length, shown + 1);
      await shows({
        [SUMMARY_ROLLOUTS]: String(rewards.length),
        [SUMMARY_MEAN]: (scored.reduce((a, b) => a + b, 0) / scored.length).toFixed(3),
        [SUMMARY_SCORED]: String(scored.length),
      });
      assert.equal(
        await page.evaluate(() => (globalThis as unknown as InPage).viewMark),
        1,
        "the page was not reloaded",
      );
    } finally {
      // The run writes into the folder the suite removes at the end: let it finish first.
      await second.catch(() => {});
    }
    await screenshot(page, "10-runs-live");
  });

  it("no page raised a script error or a dialog, or asked anything of another origin", () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(dialogs, []);
    const ours = new Set([new URL(server.url).origin, new URL(plainServer.url).origin]);
    const elsewhere = requested.filter((u) => !u.startsWith("data:") && !ours.has(new URL(u).origin));
    assert.ok(requested.length > 10, `the pages made ${requested.length} requests`);
    assert.deepEqual(elsewhere, [], "a request left the viewer (a CDN, a font, an image)");
  });
});
