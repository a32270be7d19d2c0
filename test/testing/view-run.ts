// A jobs folder made by a REAL `bench run` for the viewer's and results' tests: bench-agent on the
// scripted endpoint (test/fixtures/view-tasks/policy.json), --capture-tokens, --sandbox namespace,
// --trials 3, over the two tasks of test/fixtures/view-tasks (see its README):
// - pick-word: rewards 0, 1, 0 over repeats 1, 2, 3 (grpo advantages -0.577, 1.155, -0.577); its first
//   tool call's output is `<script>alert(1)</script>`;
// - flaky-endpoint: repeat 2 ends as provider_error (unscored), so `bench train` withholds the group
//   (reason unscored_member).
import { promises as fs } from "node:fs";
import path from "node:path";
import { loadEndpointScript, startScriptedEndpoint } from "../../src/scripted-endpoint/scripted-server.js";
import { type BenchRun, bench, REPO, tempDir } from "./bench.js";

export const VIEW_TASKS = path.join(REPO, "test/fixtures/view-tasks");
export const VIEW_POLICY = path.join(VIEW_TASKS, "policy.json");
export const VIEW_JOB_NAME = "view";
const AGENT = "bench-agent";

export interface ExpectedRollout {
  /** The rollout folder relative to the jobs dir (the viewer's rolloutPath), e.g. bench-agent/trial-01/view/pick-word__1a2b3c4d. */
  path: string;
  task: string;
  /** The rollout folder's name, e.g. pick-word__1a2b3c4d. */
  name: string;
  /** The repeat job's folder name, trial-01 ... */
  trial: string;
  /** 1, 2 or 3: the repeat job it ran in. */
  repeat: number;
  /** The `reward` key, null when unscored. */
  reward: number | null;
  /** error_category of result.json (null when the agent finished). */
  errorCategory: string | null;
}

export interface ExpectedGroup {
  task: string;
  /** Members by repeat (1, 2, 3). */
  rollouts: ExpectedRollout[];
  rewards: Array<number | null>;
  /** GRPO advantages by repeat, as the viewer prints them (3 decimals), or null when withheld. */
  grpo: string[] | null;
  /** LOO advantages by repeat (3 decimals), or null when withheld. */
  loo: string[] | null;
  /** `bench train`'s reason for withholding the whole group, or null. */
  withheld: string | null;
}

export interface ViewRun {
  /** The --jobs-dir of the run (what `bench view` / `bench results` take). */
  jobsDir: string;
  jobName: string;
  /** The repeat jobs' folders (absolute): bench-agent/trial-01/view, ... */
  jobDirs: string[];
  /** bench run's exit status (1: one rollout ended as an infrastructure failure) and output. */
  run: BenchRun;
  /** The group with rewards 0, 1, 0. */
  spread: ExpectedGroup;
  /** The group `bench train` withholds. */
  withheld: ExpectedGroup;
  /** Every rollout, in path order. */
  rollouts: ExpectedRollout[];
  /** The text a tool call of every pick-word rollout printed (must render inert). */
  scriptText: string;
}

/**
 * Runs the fixture into `dir` (made if missing; it becomes the jobs dir) and reads back what it
 * expects. Takes a few seconds; tests that only read the folder can share one run (sharedViewRun).
 */
export async function makeViewRun(dir: string): Promise<ViewRun> {
  await fs.mkdir(dir, { recursive: true });
  const run = await benchOnFixture(dir, VIEW_JOB_NAME, ["--trials", "3", "--parallel-jobs", "3"]);
  const rollouts = await readRollouts(dir);
  const group = (task: string) => {
    const members = rollouts.filter((r) => r.task === task).sort((a, b) => a.repeat - b.repeat);
    return { task, rollouts: members, rewards: members.map((r) => r.reward) };
  };
  const spread: ExpectedGroup = {
    ...group("pick-word"),
    grpo: ["-0.577", "1.155", "-0.577"],
    loo: ["-0.500", "1.000", "-0.500"],
    withheld: null,
  };
  const withheld: ExpectedGroup = {
    ...group("flaky-endpoint"),
    grpo: null,
    loo: null,
    withheld: "unscored_member",
  };
  const problems = [
    JSON.stringify(spread.rewards) === "[0,1,0]"
      ? null
      : `pick-word rewards ${JSON.stringify(spread.rewards)}`,
    JSON.stringify(withheld.rewards) === "[1,null,1]"
      ? null
      : `flaky-endpoint rewards ${JSON.stringify(withheld.rewards)}`,
  ].filter((p) => p !== null);
  if (problems.length > 0) {
    throw new Error(
      `makeViewRun: the fixture run did not give what it should (${problems.join("; ")}); exit ${run.code}\n${run.stdout}\n${run.stderr}`,
    );
  }
  return {
    jobsDir: dir,
    jobName: VIEW_JOB_NAME,
    jobDirs: [1, 2, 3].map((i) => path.join(dir, AGENT, `trial-0${i}`, VIEW_JOB_NAME)),
    run,
    spread,
    withheld,
    rollouts,
    scriptText: "<script>alert(1)</script>",
  };
}

/**
 * One more rollout written into a fixture's jobs dir by a real `bench run` (pick-word, one repeat:
 * reward 0, in job `bench-agent/trial-01/<jobName>`), e.g. while a page watches the folder. Resolves
 * when the run has ended, with the new rollout's path relative to the jobs dir.
 */
export async function addViewRollout(jobsDir: string, jobName = "view-more"): Promise<ExpectedRollout> {
  const before = new Set((await readRollouts(jobsDir, jobName)).map((r) => r.path));
  const run = await benchOnFixture(jobsDir, jobName, ["--include", "pick-word"]);
  const added = (await readRollouts(jobsDir, jobName)).filter((r) => !before.has(r.path));
  if (added.length !== 1 || added[0]?.reward !== 0) {
    throw new Error(
      `addViewRollout: expected one new rollout with reward 0; exit ${run.code}\n${run.stderr}`,
    );
  }
  return added[0];
}

/** `bench run` of the fixture tasks (bench-agent on the fixture's scripted endpoint) into `jobsDir`. */
async function benchOnFixture(jobsDir: string, jobName: string, args: string[]): Promise<BenchRun> {
  const endpoint = await startScriptedEndpoint({ script: await loadEndpointScript(VIEW_POLICY) });
  try {
    return await bench([
      "run",
      VIEW_TASKS,
      "-a",
      AGENT,
      "-m",
      "vllm/scripted",
      "--base-url",
      endpoint.baseUrl,
      "--capture-tokens",
      "--sandbox",
      "namespace",
      "-j",
      "2",
      "--retry-attempts",
      "0",
      "--jobs-dir",
      jobsDir,
      "--job-name",
      jobName,
      ...args,
    ]);
  } finally {
    await endpoint.close();
  }
}

let shared: Promise<ViewRun> | null = null;

/** One fixture run per test process, in a temporary folder (left for the OS to clean; it is small). */
export function sharedViewRun(): Promise<ViewRun> {
  shared ??= tempDir("view-run").then((dir) => makeViewRun(dir));
  return shared;
}

function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** The final attempts under the jobs dir (replaced attempts are left out). */
async function readRollouts(jobsDir: string, jobName = VIEW_JOB_NAME): Promise<ExpectedRollout[]> {
  const out: ExpectedRollout[] = [];
  for (let repeat = 1; repeat <= 3; repeat++) {
    const jobDir = path.join(jobsDir, AGENT, `trial-0${repeat}`, jobName);
    const names = await fs.readdir(jobDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => /__[0-9a-f]{8}$/.test(n)).sort()) {
      const text = await fs.readFile(path.join(jobDir, name, "result.json"), "utf8").catch(() => null);
      if (text === null) continue;
      const result = JSON.parse(text) as Record<string, any>;
      if (await exists(path.join(jobDir, name, "replaced.json"))) continue;
      out.push({
        path: path.relative(jobsDir, path.join(jobDir, name)).split(path.sep).join("/"),
        task: result.task_name,
        name,
        trial: `trial-0${repeat}`,
        repeat,
        reward: typeof result.rewards?.reward === "number" ? result.rewards.reward : null,
        errorCategory: result.error_category ?? null,
      });
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
