// --executor slurm: each planned trial becomes one SLURM batch job (`sbatch --wrap`) that runs
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
import { opt } from "../../options.js";
import { recordRollout } from "../../rollout/record.js";
import type { RolloutState } from "../../rollout/run.js";
import type { RolloutPlan } from "../../rollout/types.js";
import { outcomeOf } from "../../schemas/outcome.js";
import { type RolloutExecutor, RolloutResult } from "../../schemas/result.js";
import { writeJsonAtomic } from "../../util/fs.js";
import { cancel, jobsWithComment, slurm } from "./commands.js";
import { SLURM_DIR, writeSpec } from "./spec.js";
import { type JobEnd, JobWatcher } from "./watcher.js";

export interface SlurmSettings {
  partition?: string | null;
  account?: string | null;
  /** Passed to sbatch as they are (--slurm-sbatch-arg, repeatable). */
  sbatchArgs?: string[];
  /** The address nodes reach the gateway at; default: this host's address on the nodes' network. */
  gatewayHost?: string | null;
  /** How often the host asks SLURM about a running trial (ms). */
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
      `--executor slurm: SLURM has no default partition; pass ${opt("executor.partition")}`,
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
      `--executor slurm: partition ${partition} has no nodes (sinfo: ${listed.stderr.trim() || "empty"})`,
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
        `--executor slurm: node(s) ${blind.join(", ")} of partition ${partition} cannot see the jobs folder ${jobsDir} (a marker written there from this host is not there on the node). The jobs folder must be on a filesystem every node mounts at the same path: pass --jobs-dir on it, or leave those nodes out (--slurm-sbatch-arg=--exclude=${blind.join(",")} and another partition)`,
      );
    const noCode = checks.filter((c) => c.code === 4).map((c) => c.node);
    if (noCode.length > 0)
      throw new UserInputError(
        `--executor slurm: node(s) ${noCode.join(", ")} cannot see this BenchFlow (${ENTRY}), which runs each trial there; install it at the same path on a shared filesystem`,
      );
    const noTasks = checks.filter((c) => c.code === 5).map((c) => c.node);
    if (noTasks.length > 0)
      throw new UserInputError(
        `--executor slurm: node(s) ${noTasks.join(", ")} cannot see the task folder(s) (${taskDirs.slice(0, 3).join(", ")}${taskDirs.length > 3 ? ", ..." : ""}), which each trial reads there; put the tasks on the filesystem the nodes share`,
      );
    const failed = checks.filter((c) => c.code !== 0);
    if (failed.length > 0)
      throw new UserInputError(
        `--executor slurm: a trivial srun failed on ${failed.map((c) => `${c.node} (${c.stderr || `exit ${c.code}`})`).join("; ")}`,
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
  const trialCommand = [...NODE_COMMAND, specFile].map(shellQuote).join(" ");
  return [
    "--parsable",
    // Never run a trial twice: a rollout folder is written once; a lost job is retried by us instead.
    "--no-requeue",
    `--job-name=bf-${plan.rolloutName}`,
    `--comment=${runComment(plan.jobName)}`,
    `--output=${path.join(plan.jobDir, SLURM_DIR, `${plan.rolloutName}.out`)}`,
    `--chdir=${PROJECT_ROOT}`,
    "--nodes=1",
    "--ntasks=1",
    `--cpus-per-task=${Math.max(1, Math.ceil(box.cpus))}`,
    `--mem=${Math.max(1, Math.ceil(box.memoryMb))}M`,
    `--time=${minutesFor(plan)}`,
    ...scheduling(s),
    ...(s.sbatchArgs ?? []),
    `--wrap=exec ${trialCommand}`,
  ];
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

async function readResult(rolloutDir: string): Promise<RolloutResult | null> {
  try {
    const parsed = RolloutResult.safeParse(
      JSON.parse(await fs.readFile(path.join(rolloutDir, RESULT), "utf8")),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Resolves null once the node has written a finished result.json (not an interrupted one, which a
 * SIGTERM from SLURM leaves and which SLURM's end decides); never resolves after `ended` settles.
 */
async function finishedOnNode(rolloutDir: string, ended: Promise<unknown>): Promise<null> {
  let over = false;
  void ended.then(() => {
    over = true;
  });
  const file = path.join(rolloutDir, RESULT);
  while (!over) {
    await sleep(RESULT_POLL_MS);
    if (over) break;
    const seen = await fs.stat(file).then(
      () => true,
      () => false,
    );
    if (!seen) continue;
    const written = await readResult(rolloutDir);
    if (written && written.error_category !== "interrupted") return null;
  }
  return new Promise<null>(() => {});
}

function emptyState(category: "infra_error" | "interrupted", message: string): RolloutState {
  return {
    sandbox: null,
    prepared: null,
    events: [],
    agentResult: null,
    error: { category, message },
    verifier: null,
    timing: {},
  };
}

export interface SlurmExecutor {
  startTrial(plan: RolloutPlan): Promise<RolloutResult>;
  /**
   * Resolves once SLURM says every job whose rollout was finished has ended (the node tears its
   * sandbox down after result.json). Awaited by the run, not by each repeat job: the next job's
   * trials need not wait for squeue to see the last one go.
   */
  settle(): Promise<void>;
}

/** `--exclude` for a retry: the node its last attempt was lost on, unless the user excludes nodes themselves. */
export function retryExclusion(s: SlurmSettings, lostOn: string | undefined, nodes: number): string[] {
  if (!lostOn || nodes < 2) return [];
  if ((s.sbatchArgs ?? []).some((a) => /^(--exclude\b|-x)/.test(a))) return [];
  return [`--exclude=${lostOn}`];
}

export function slurmExecutor(s: SlurmSettings, nodes = 1): SlurmExecutor {
  const watcher = new JobWatcher(s.pollMs ?? 500);
  // A trial lost to its node (died, preempted, cancelled there) is retried elsewhere when there is an elsewhere.
  const lostOn = new Map<string, string>();
  const tearingDown = new Set<Promise<unknown>>();
  return {
    async settle() {
      // Nothing more will be submitted: squeue is asked more often for the few jobs still ending.
      watcher.hurry();
      while (tearingDown.size > 0) await Promise.all([...tearingDown]);
    },
    async startTrial(plan) {
      const startedAt = new Date();
      const rolloutDir = path.join(plan.jobDir, plan.rolloutName);
      const executor: RolloutExecutor = { kind: "slurm", node: null, slurm_job_id: null };
      // The host's last word: the gateway's usage (hooks.finalize), then where the trial ran.
      const finish = async (result: RolloutResult): Promise<RolloutResult> => {
        const finalized = plan.hooks?.finalize ? await plan.hooks.finalize(result) : result;
        return { ...finalized, executor: { ...executor } };
      };
      const failed = async (category: "infra_error" | "interrupted", message: string) =>
        recordRollout(
          { ...plan, hooks: { ...plan.hooks, finalize: finish } },
          emptyState(category, message),
          rolloutDir,
          startedAt,
        );
      const specFile = await writeSpec(plan);
      const avoid = retryExclusion(s, plan.replaces ? lostOn.get(plan.replaces) : undefined, nodes);
      const submitted = await slurm("sbatch", [...sbatchArgs(plan, s, specFile), ...avoid]);
      const id = submitted.stdout.trim().split(";")[0] ?? "";
      if (submitted.code !== 0 || !/^\d+$/.test(id))
        return failed(
          "infra_error",
          `sbatch did not take the trial: ${submitted.stderr.trim() || submitted.stdout.trim()}`,
        );
      executor.slurm_job_id = id;
      // The run stopped (Ctrl-C, SIGTERM): its jobs are cancelled, and their trials end as interrupted.
      let cancelledByUs = false;
      const stop = () => {
        cancelledByUs = true;
        void cancel([id]);
      };
      if (plan.signal.aborted) stop();
      else plan.signal.addEventListener("abort", stop, { once: true });
      // Whichever comes first: the node's finished result.json (written last), or SLURM's word that the
      // job ended. The first is the common case and costs a stat a tick instead of squeue's interval.
      const ended = watcher.wait(id);
      let end: JobEnd | null;
      try {
        end = await Promise.race([ended, finishedOnNode(rolloutDir, ended)]);
      } finally {
        plan.signal.removeEventListener("abort", stop);
      }
      if (end === null) {
        // The node still tears its sandbox down: the run (settle) waits for SLURM's word that it ended.
        const teardown = ended.finally(() => tearingDown.delete(teardown));
        tearingDown.add(teardown);
        const done = (await readResult(rolloutDir)) as RolloutResult;
        executor.node = done.executor?.node ?? null;
        const result = await finish(done);
        await writeJsonAtomic(path.join(rolloutDir, RESULT), result, {
          durable: true,
          floats: new Set(["rewards"]),
        });
        return result;
      }
      const { state, reason } = end;
      executor.node = end.node;
      const written = await readResult(rolloutDir);
      // A rollout the node finished stands, whatever SLURM says of the job's end (cleanup after it).
      if (written && written.error_category !== "interrupted") {
        const result = await finish(written);
        await writeJsonAtomic(path.join(rolloutDir, RESULT), result, {
          durable: true,
          floats: new Set(["rewards"]),
        });
        return result;
      }
      if (cancelledByUs) {
        if (written) {
          const result = await finish(written);
          await writeJsonAtomic(path.join(rolloutDir, RESULT), result, {
            durable: true,
            floats: new Set(["rewards"]),
          });
          return result;
        }
        return failed("interrupted", `the run stopped; SLURM job ${id} was cancelled`);
      }
      if (executor.node) lostOn.set(plan.rolloutName, executor.node);
      const where = executor.node ? ` on ${executor.node}` : "";
      const why = reason && reason !== "None" ? ` (${reason})` : "";
      const message = `SLURM job ${id} ended ${state}${where}${why} before the trial finished; see ${path.join(plan.jobDir, SLURM_DIR, `${plan.rolloutName}.out`)}`;
      if (written) {
        // The node's trial saw SIGTERM from SLURM (scancel, preemption): not the run's interrupt.
        const result = await finish({
          ...written,
          rewards: null,
          error: message,
          error_category: "infra_error",
          outcome: outcomeOf("infra_error", written.verifier_error_category),
        });
        await writeJsonAtomic(path.join(rolloutDir, RESULT), result, {
          durable: true,
          floats: new Set(["rewards"]),
        });
        return result;
      }
      return failed("infra_error", message);
    },
  };
}
