// --executor slurm: each planned rollout becomes one SLURM batch job (`sbatch --wrap`) that runs
// `bench _trial SPEC.json` on the node SLURM picks and writes the rollout folder into the shared jobs
// folder. The submitting host waits on `scontrol show job`, then reads result.json. A job that SLURM
// ends (cancelled from outside, node failure, preemption, failure to start) without a finished
// rollout is an infrastructure failure (infra_error), which the job retries as any other.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { UserInputError } from "../../errors.js";
import { RESULT } from "../../jobs-dir/layout.js";
import { opt, phrase } from "../../options.js";
import { completeResult, recordRollout, writeResult } from "../../rollout/record.js";
import { emptyState } from "../../rollout/state.js";
import { type RolloutPlan, rolloutDirOf } from "../../rollout/types.js";
import { type RolloutExecutor, RolloutResult } from "../../schemas/result.js";
import { cancel, jobsWithComment, slurm } from "./commands.js";
import { nodeResultFile, SLURM_DIR, writeSpec } from "./spec.js";
import { type JobEnd, JobWatcher } from "./watcher.js";

export interface SlurmSettings {
  partition?: string | null;
  account?: string | null;
  /** Passed to sbatch as they are (--slurm-sbatch-arg, repeatable). */
  sbatchArgs?: string[];
  /** The address nodes reach the gateway at; default: this host's address on the nodes' network. */
  gatewayHost?: string | null;
  /** How often the host asks SLURM about a running rollout (ms). */
  pollMs?: number;
}

/** Added to the task's own limits for SLURM's --time: node start, sandbox teardown, writing the rollout. */
const TIME_MARGIN_SEC = 300;
/** Without [agent].timeout_sec the agent has no limit of ours; SLURM's must still be finite. */
const AGENT_TIME_IF_UNSET_SEC = 3600;

const PROJECT_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
// Built (dist/, what npm installs): plain node on the built entry. From the source (a checkout under
// tsx, as the tests run): the same entry through tsx, so a node never runs code older than the host's.
const BUILT = import.meta.url.endsWith(".js");
const ENTRY = fileURLToPath(new URL(`../../cli/trial-entry.${BUILT ? "js" : "ts"}`, import.meta.url));
const NODE_COMMAND = [process.execPath, ...(BUILT ? [] : ["--import", "tsx"]), ENTRY];
/** How often the host looks for a finished result.json (a stat), between squeue's polls. */
const RESULT_POLL_MS = 100;
const COMMENT_PREFIX = "benchflow:";

/** The comment every job of this run carries: which run, from which host and process (for reaping). */
export function runComment(jobName: string, pid = process.pid, host = os.hostname()): string {
  return `${COMMENT_PREFIX}run=${jobName}:host=${host}:pid=${pid}`;
}

function parseComment(comment: string): { host: string; pid: number } | null {
  const m = /^benchflow:run=[^:]+:host=([^:]+):pid=(\d+)$/.exec(comment);
  return m ? { host: m[1] as string, pid: Number(m[2]) } : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether a job's comment names a `bench run` on `host` that is gone (not this process). */
export function isLeftover(
  comment: string,
  host: string,
  isAlive: (pid: number) => boolean = alive,
): boolean {
  const p = parseComment(comment);
  return p !== null && p.host === host && p.pid !== process.pid && !isAlive(p.pid);
}

/** How long a rerun waits for the jobs it cancelled to end (SLURM's KillWait, then their teardown). */
const REAP_WAIT_MS = 120_000;

/**
 * Jobs of runs on this host whose `bench run` is gone (SIGKILL): cancelled, and waited for until
 * SLURM says they ended, so they write nothing more once this run starts. `pending` lists those
 * still ending after REAP_WAIT_MS (a node down holds its jobs), for the run to warn about.
 */
export async function reapLeftovers(): Promise<{ cancelled: string[]; pending: string[] }> {
  const host = os.hostname();
  const ids = await jobsWithComment((c) => isLeftover(c, host));
  if (ids.length === 0) return { cancelled: [], pending: [] };
  await cancel(ids);
  const watcher = new JobWatcher(200);
  const ended = new Set<string>();
  const bound = sleep(REAP_WAIT_MS, undefined, { ref: false });
  await Promise.race([Promise.all(ids.map((id) => watcher.wait(id).then(() => ended.add(id)))), bound]);
  watcher.forget();
  return { cancelled: ids, pending: ids.filter((id) => !ended.has(id)) };
}

/** Every job of this process's run: what Ctrl-C pressed twice (forced) cancels before exiting. */
export async function cancelJobsOfThisProcess(): Promise<void> {
  await cancel(
    await jobsWithComment(
      (c) => parseComment(c)?.pid === process.pid && parseComment(c)?.host === os.hostname(),
    ),
  );
}

function scheduling(s: SlurmSettings): string[] {
  return [
    ...(s.partition ? [`--partition=${s.partition}`] : []),
    ...(s.account ? [`--account=${s.account}`] : []),
  ];
}

async function partitionOf(s: SlurmSettings): Promise<string> {
  if (s.partition) return s.partition;
  const r = await slurm("sinfo", ["-h", "-o", "%P"]);
  const def = r.stdout.split("\n").find((p) => p.trim().endsWith("*"));
  if (!def)
    throw new UserInputError(
      `${opt("executor", "slurm")}: SLURM has no default partition; pass ${opt("executor.partition")}`,
    );
  return def.trim().slice(0, -1);
}

/**
 * The start check: a tiny srun on every node of the partition stats a marker written here into the
 * jobs folder, and the project's entry point. A node that sees neither cannot write rollouts.
 */
export async function checkNodesSeeJobsDir(
  jobsDir: string,
  s: SlurmSettings,
  taskDirs: string[] = [],
): Promise<string[]> {
  const partition = await partitionOf(s);
  const listed = await slurm("sinfo", ["-h", "-N", "-p", partition, "-o", "%N"]);
  const nodes = [
    ...new Set(
      listed.stdout
        .split("\n")
        .map((n) => n.trim())
        .filter(Boolean),
    ),
  ];
  if (listed.code !== 0 || nodes.length === 0)
    throw new UserInputError(
      `${opt("executor", "slurm")}: partition ${partition} has no nodes (sinfo: ${listed.stderr.trim() || "empty"})`,
    );
  const marker = path.join(jobsDir, `.benchflow-slurm-check-${randomBytes(4).toString("hex")}`);
  await fs.writeFile(marker, "benchflow start check\n");
  try {
    const checks = await Promise.all(
      nodes.map(async (node) => {
        const r = await slurm(
          "srun",
          [
            ...scheduling({ ...s, partition }),
            `--nodelist=${node}`,
            "-N1",
            "-n1",
            "--time=1",
            "--quiet",
            "sh",
            "-c",
            'test -f "$1" || exit 3; test -f "$2" || exit 4; shift 2; for d in "$@"; do test -d "$d" || exit 5; done',
            "sh",
            marker,
            ENTRY,
            ...taskDirs,
          ],
          120_000,
        );
        return { node, code: r.code, stderr: r.stderr.trim() };
      }),
    );
    const blind = checks.filter((c) => c.code === 3).map((c) => c.node);
    if (blind.length > 0)
      throw new UserInputError(
        `${opt("executor", "slurm")}: node(s) ${blind.join(", ")} of partition ${partition} cannot see the jobs folder ${jobsDir} (a marker written there from this host is not there on the node). The jobs folder must be on a filesystem every node mounts at the same path: pass ${opt("jobsDir")} on it, or leave those nodes out (${phrase("executor.sbatchArgs excluding", `executor.sbatchArgs with the exclusion of ${blind.join(",")}`, blind.join(","))} and another partition)`,
      );
    const noCode = checks.filter((c) => c.code === 4).map((c) => c.node);
    if (noCode.length > 0)
      throw new UserInputError(
        `${opt("executor", "slurm")}: node(s) ${noCode.join(", ")} cannot see this BenchFlow (${ENTRY}), which runs each trial there; install it at the same path on a shared filesystem`,
      );
    const noTasks = checks.filter((c) => c.code === 5).map((c) => c.node);
    if (noTasks.length > 0)
      throw new UserInputError(
        `${opt("executor", "slurm")}: node(s) ${noTasks.join(", ")} cannot see the task folder(s) (${taskDirs.slice(0, 3).join(", ")}${taskDirs.length > 3 ? ", ..." : ""}), which each trial reads there; put the tasks on the filesystem the nodes share`,
      );
    const failed = checks.filter((c) => c.code !== 0);
    if (failed.length > 0)
      throw new UserInputError(
        `${opt("executor", "slurm")}: a trivial srun failed on ${failed.map((c) => `${c.node} (${c.stderr || `exit ${c.code}`})`).join("; ")}`,
      );
    return nodes;
  } finally {
    await fs.rm(marker, { force: true });
  }
}

function minutesFor(plan: RolloutPlan): number {
  const c = plan.task.config;
  const sec =
    (c.agent.timeoutSec ?? AGENT_TIME_IF_UNSET_SEC) + c.verifier.timeoutSec + c.sandbox.buildTimeoutSec;
  return Math.ceil((sec + TIME_MARGIN_SEC) / 60);
}

export function sbatchArgs(plan: RolloutPlan, s: SlurmSettings, specFile: string): string[] {
  const box = plan.task.config.sandbox;
  const rolloutCommand = [...NODE_COMMAND, specFile].map(shellQuote).join(" ");
  return [
    "--parsable",
    // Never run a rollout twice: a rollout folder is written once; a lost job is retried by us instead.
    "--no-requeue",
    `--job-name=bf-${plan.rolloutName}`,
    `--comment=${runComment(plan.run.jobName)}`,
    `--output=${path.join(plan.job.dir, SLURM_DIR, `${plan.rolloutName}.out`)}`,
    `--chdir=${PROJECT_ROOT}`,
    "--nodes=1",
    "--ntasks=1",
    `--cpus-per-task=${Math.max(1, Math.ceil(box.cpus))}`,
    `--mem=${Math.max(1, Math.ceil(box.memoryMb))}M`,
    `--time=${minutesFor(plan)}`,
    ...scheduling(s),
    ...(s.sbatchArgs ?? []),
    `--wrap=exec ${rolloutCommand}`,
  ];
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The result a node left for the host (spec.ts nodeResultFile), or null when there is none yet. */
async function readNodeResult(plan: RolloutPlan): Promise<RolloutResult | null> {
  try {
    const parsed = RolloutResult.safeParse(JSON.parse(await fs.readFile(nodeResultFile(plan), "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Resolves null once the node has left a finished result (not an interrupted one, which a SIGTERM
 * from SLURM leaves and which SLURM's end decides); never resolves after `ended` settles.
 */
async function finishedOnNode(plan: RolloutPlan, ended: Promise<unknown>): Promise<null> {
  let over = false;
  void ended.then(() => {
    over = true;
  });
  const file = nodeResultFile(plan);
  while (!over) {
    await sleep(RESULT_POLL_MS);
    if (over) break;
    const seen = await fs.stat(file).then(
      () => true,
      () => false,
    );
    if (!seen) continue;
    const written = await readNodeResult(plan);
    if (written && written.error_category !== "interrupted") return null;
  }
  return new Promise<null>(() => {});
}

export interface SlurmExecutor {
  startRollout(plan: RolloutPlan): Promise<RolloutResult>;
  /**
   * Resolves once SLURM says every job whose rollout was finished has ended (the node tears its
   * sandbox down after its result). Awaited by the run, not by each repeat job: the next job's
   * rollouts need not wait for squeue to see the last one go.
   */
  settle(): Promise<void>;
}

/** `--exclude` for a retry: the node its last attempt was lost on, unless the user excludes nodes themselves. */
export function retryExclusion(s: SlurmSettings, lostOn: string | undefined, nodes: number): string[] {
  if (!lostOn || nodes < 2) return [];
  if ((s.sbatchArgs ?? []).some((a) => /^(--exclude\b|-x)/.test(a))) return [];
  return [`--exclude=${lostOn}`];
}

/** What the executor keeps across the run's rollouts. */
interface ExecutorState {
  s: SlurmSettings;
  nodes: number;
  watcher: JobWatcher;
  /** A rollout lost to its node (died, preempted, cancelled there) is retried elsewhere when there is an elsewhere. */
  lostOn: Map<string, string>;
  tearingDown: Set<Promise<unknown>>;
}

export function slurmExecutor(s: SlurmSettings, nodes = 1): SlurmExecutor {
  const state: ExecutorState = {
    s,
    nodes,
    watcher: new JobWatcher(s.pollMs ?? 500),
    lostOn: new Map(),
    tearingDown: new Set(),
  };
  return {
    async settle() {
      // Nothing more will be submitted: squeue is asked more often for the few jobs still ending.
      state.watcher.hurry();
      while (state.tearingDown.size > 0) await Promise.all([...state.tearingDown]);
    },
    startRollout: (plan) => startRollout(state, plan),
  };
}

/** One rollout as a SLURM job: submitted, waited for, and its result.json written here, once. */
async function startRollout(x: ExecutorState, plan: RolloutPlan): Promise<RolloutResult> {
  const startedAt = new Date();
  const executor: RolloutExecutor = { kind: "slurm", node: null, slurm_job_id: null };
  // The host's word on the node's result: the gateway's usage, where it ran, and SLURM's end.
  const complete = async (written: RolloutResult, failure?: { category: "infra_error"; message: string }) => {
    const usage = (await plan.hooks?.modelUsage?.()) ?? null;
    const where = { ...executor, node: executor.node ?? written.executor?.node ?? null };
    const result = completeResult(written, {
      usage,
      executor: where,
      failure,
      usesModel: plan.run.agent.usesModel,
    });
    await writeResult(path.join(rolloutDirOf(plan), RESULT), result);
    return result;
  };
  // No result from the node: the rollout's record made here, with what the host knows.
  const failed = (category: "infra_error" | "interrupted", message: string) =>
    recordRollout({ ...plan, executor: { ...executor } }, emptyState(category, message), startedAt);
  const specFile = await writeSpec(plan);
  const avoid = retryExclusion(x.s, plan.replaces ? x.lostOn.get(plan.replaces) : undefined, x.nodes);
  const submitted = await slurm("sbatch", [...sbatchArgs(plan, x.s, specFile), ...avoid]);
  const id = submitted.stdout.trim().split(";")[0] ?? "";
  if (submitted.code !== 0 || !/^\d+$/.test(id))
    return failed(
      "infra_error",
      `sbatch did not take the trial: ${submitted.stderr.trim() || submitted.stdout.trim()}`,
    );
  executor.slurm_job_id = id;
  const { end, cancelledByUs } = await waitForEnd(x, plan, id);
  if (end === null) {
    // finishedOnNode saw the node's result parse; a result gone since is a lost rollout, not a reward.
    const done = await readNodeResult(plan);
    return done ? complete(done) : failed("infra_error", `the node's result of SLURM job ${id} went missing`);
  }
  executor.node = end.node;
  const written = await readNodeResult(plan);
  // A rollout the node finished stands, whatever SLURM says of the job's end (cleanup after it).
  if (written && written.error_category !== "interrupted") return complete(written);
  if (cancelledByUs)
    return written
      ? complete(written)
      : failed("interrupted", `the run stopped; SLURM job ${id} was cancelled`);
  if (executor.node) x.lostOn.set(plan.rolloutName, executor.node);
  const where = executor.node ? ` on ${executor.node}` : "";
  const why = end.reason && end.reason !== "None" ? ` (${end.reason})` : "";
  const message = `SLURM job ${id} ended ${end.state}${where}${why} before the trial finished; see ${path.join(plan.job.dir, SLURM_DIR, `${plan.rolloutName}.out`)}`;
  // The node's rollout saw SIGTERM from SLURM (scancel, preemption): not the run's interrupt.
  return written ? complete(written, { category: "infra_error", message }) : failed("infra_error", message);
}

/**
 * Whichever comes first: the node's finished result (written last), or SLURM's word that the job
 * ended (null: the node finished; its teardown is awaited by settle). The run stopping (Ctrl-C,
 * SIGTERM) cancels the job, and its rollout ends as interrupted.
 */
async function waitForEnd(
  x: ExecutorState,
  plan: RolloutPlan,
  id: string,
): Promise<{ end: JobEnd | null; cancelledByUs: boolean }> {
  let cancelledByUs = false;
  const stop = () => {
    cancelledByUs = true;
    void cancel([id]);
  };
  if (plan.signal.aborted) stop();
  else plan.signal.addEventListener("abort", stop, { once: true });
  const ended = x.watcher.wait(id);
  let end: JobEnd | null;
  try {
    end = await Promise.race([ended, finishedOnNode(plan, ended)]);
  } finally {
    plan.signal.removeEventListener("abort", stop);
  }
  if (end === null) {
    const teardown = ended.finally(() => x.tearingDown.delete(teardown));
    x.tearingDown.add(teardown);
  }
  return { end, cancelledByUs };
}
