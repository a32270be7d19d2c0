// docs/read-the-results.md against what a run writes: every file and folder a real `bench run` leaves
// in a job and in a rollout is in the page's tree, every phase of timing.json is among the page's, and
// summary.json's `environment` is the sandbox result.json names, as the page says. In both sandboxes
// (the container one where an engine answers), so a file one of them adds cannot go undocumented.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, EXAMPLES, REPO, tempDir } from "./testing/bench.js";

const PAGE = path.join(REPO, "docs/read-the-results.md");

interface Tree {
  /** Names directly in a job folder, e.g. summary.json, builds/, <task>__<8 hex>/. */
  job: Set<string>;
  /** Names directly in a rollout folder, e.g. result.json, verifier/. */
  rollout: Set<string>;
  /** The text of the tree's timing.json entry, with its continuation lines. */
  timing: string;
}

/** The page's tree (the first code block under "The jobs directory"), by depth. */
async function pageTree(): Promise<Tree> {
  const text = await fs.readFile(PAGE, "utf8");
  const block = /## The jobs directory\n\n```\n([\s\S]*?)\n```/.exec(text)?.[1];
  assert.ok(block, `${PAGE}: no tree under "## The jobs directory"`);
  const tree: Tree = { job: new Set(), rollout: new Set(), timing: "" };
  let last = "";
  for (const line of block.split("\n")) {
    // A name ends at two spaces (`<task>__<8 hex>/` has one inside).
    const entry = /^( {2}| {4})(\S+(?: \S+)*?)(?: {2,}|$)/.exec(line);
    if (entry) {
      last = entry[2] as string;
      (entry[1] === "  " ? tree.job : tree.rollout).add(last);
    }
    if (last === "timing.json") tree.timing += ` ${line}`;
  }
  return tree;
}

/** A folder's entries as the tree writes them: folders with a trailing slash. */
async function entries(dir: string): Promise<string[]> {
  return (await fs.readdir(dir, { withFileTypes: true })).map((e) =>
    e.isDirectory() ? `${e.name}/` : e.name,
  );
}

async function checkRun(t: TestContext, sandbox: "namespace" | "container"): Promise<void> {
  if (sandbox === "container" && !(await engineOrSkip(t))) return;
  const jobsDir = await tempDir(`read-results-${sandbox}`);
  try {
    const run = await bench([
      "run",
      path.join(EXAMPLES, "hello"),
      "-a",
      "oracle",
      "--sandbox",
      sandbox,
      "--jobs-dir",
      jobsDir,
      "--job-name",
      "page",
      "-q",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const tree = await pageTree();
    // The page's first line: <jobs-dir>/<agent>/trial-NN/<job>/.
    const jobDir = path.join(jobsDir, "oracle", "trial-01", "page");
    const rolloutName = (await entries(jobDir)).find((n) => /^hello__[0-9a-f]{8}\/$/.test(n));
    assert.ok(rolloutName, `no rollout in ${jobDir}`);
    for (const name of await entries(jobDir)) {
      const asInTree = name === rolloutName ? "<task>__<8 hex>/" : name;
      assert.ok(
        tree.job.has(asInTree),
        `${sandbox}: the job folder has ${name}, which the page's tree leaves out`,
      );
    }
    const rolloutDir = path.join(jobDir, rolloutName);
    for (const name of await entries(rolloutDir))
      assert.ok(
        tree.rollout.has(name),
        `${sandbox}: a rollout has ${name}, which the page's tree leaves out`,
      );
    const timing = JSON.parse(await fs.readFile(path.join(rolloutDir, "timing.json"), "utf8"));
    for (const phase of Object.keys(timing))
      assert.match(
        tree.timing,
        new RegExp(`\\b${phase}\\b`),
        `${sandbox}: timing.json's ${phase} is not on the page`,
      );
    // summary.json keeps upstream's `environment`; result.json says `sandbox`: the same kind.
    const summary = JSON.parse(await fs.readFile(path.join(jobDir, "summary.json"), "utf8"));
    const result = JSON.parse(await fs.readFile(path.join(rolloutDir, "result.json"), "utf8"));
    assert.equal(summary.environment, sandbox);
    assert.equal(result.sandbox, sandbox);
    const page = await fs.readFile(PAGE, "utf8");
    assert.match(page, /`environment` \(the sandbox kind, `namespace` or `container`/);
  } finally {
    await fs.rm(jobsDir, { recursive: true, force: true });
  }
}

describe("docs/read-the-results.md names what a run writes", () => {
  it("the namespace sandbox: the tree, timing.json's phases, summary.json's environment", (t) =>
    checkRun(t, "namespace"));
  it("the container sandbox: the tree (builds/ included), timing.json's phases, summary.json's environment", (t) =>
    checkRun(t, "container"));
});
