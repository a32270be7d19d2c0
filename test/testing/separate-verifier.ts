// The separate-verifier fixture run by `bench run -a oracle`, and what its verifier saw: the planted
// files it found outside the workspace (verifier/planted-seen.txt), the reward, the records.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { WrittenRolloutResult, WrittenTiming } from "../../src/schemas/result.js";
import { WrittenRolloutConfig } from "../../src/schemas/rollout-config.js";
import { type BenchRun, bench, FIXTURES, rollouts } from "./bench.js";

export const SEPARATE_FIXTURE = path.join(FIXTURES, "separate-verifier");

/** A copy of the fixture under `root/name`, with `edit` applied to its task.toml text. */
export async function fixtureCopy(
  root: string,
  name: string,
  edit: (toml: string) => string,
): Promise<string> {
  const dir = path.join(root, name);
  await fs.cp(SEPARATE_FIXTURE, dir, { recursive: true });
  const toml = path.join(dir, "task.toml");
  await fs.writeFile(toml, edit(await fs.readFile(toml, "utf8")));
  return dir;
}

export interface SeenRun {
  run: BenchRun;
  result: Record<string, any>;
  config: Record<string, any>;
  dir: string;
  /** The planted files the verifier found, e.g. ["/tmp/bf-planted"]. */
  planted: string[];
}

export async function runOracle(task: string, jobsDir: string, sandbox: string, flags: string[] = []) {
  const run = await bench([
    "run",
    task,
    "-a",
    "oracle",
    "--sandbox",
    sandbox,
    "--jobs-dir",
    jobsDir,
    ...flags,
  ]);
  const [found, ...more] = await rollouts(jobsDir).catch(() => assert.fail(`no jobs folder: ${run.stderr}`));
  assert.ok(found?.result, `one rollout with a result: ${run.stdout}${run.stderr}`);
  assert.equal(more.length, 0);
  const config = JSON.parse(await fs.readFile(path.join(found.dir, "config.json"), "utf8"));
  const seen = await fs.readFile(path.join(found.dir, "verifier/planted-seen.txt"), "utf8").catch(() => null);
  assert.notEqual(seen, null, `the verifier ran and wrote planted-seen.txt: ${run.stdout}${run.stderr}`);
  const planted = (seen ?? "").split("\n").filter(Boolean);
  return { run, result: found.result, config, dir: found.dir, planted } satisfies SeenRun;
}

/** The honest work reached the verifier: reward 1.0 (the workspace, the artifact, /logs/artifacts). */
export function assertHonestWorkSeen(r: SeenRun): void {
  assert.equal(r.result.verifier_error, null, `${r.run.stdout}${r.run.stderr}`);
  assert.equal(r.result.rewards?.reward, 1, `${r.result.test_last_line} ${r.run.stdout}${r.run.stderr}`);
}

/** A separate verifier's records: the mode, its setup's time, the agent's logs and artifacts kept. */
export async function assertSeparateRecords(r: SeenRun): Promise<void> {
  assert.equal(r.config.verifier_environment_mode, "separate");
  assert.equal(typeof r.result.timing.verifier_environment_setup, "number");
  assert.equal(typeof r.result.timing.verifier, "number");
  // Copied out before the agent's sandbox went: the rollout folder has them as in a shared run.
  assert.equal(await fs.readFile(path.join(r.dir, "artifacts/notes.txt"), "utf8"), "notes\n");
  assert.equal(await fs.readFile(path.join(r.dir, "artifacts/var/tmp/bf-report.txt"), "utf8"), "report\n");
  await fs.access(path.join(r.dir, "agent/oracle.txt"));
  // The files on the seam still match their schemas with the new timing key.
  const timing = JSON.parse(await fs.readFile(path.join(r.dir, "timing.json"), "utf8"));
  assert.deepEqual(WrittenTiming.parse(timing), timing);
  WrittenRolloutResult.parse(r.result);
  WrittenRolloutConfig.parse(r.config);
}
