// `bench train stream` as a library: an async iterator of rollout records, already-finished ones
// first, then each as it finishes. With groupSize, a group's records wait until it has that many
// members and come out together with their advantages (the same rules as convert).
import { promises as fs } from "node:fs";
import path from "node:path";
import { UserInputError } from "../../errors.js";
import { NORMALISATIONS, type Normalisation } from "../../jobs-dir/groups/advantage.js";
import {
  groupKeyOf,
  JobSplitCheck,
  keysFor,
  MixCheck,
  parseGroupBy,
  policyVersionKey,
  settleGroup,
  unnamedRunNote,
} from "../../jobs-dir/groups/groups.js";
import { assertFolder, RESULT, type Rollout } from "../../jobs-dir/index.js";
import { checkOptionKeys, opt, phrase } from "../../options.js";
import type { StreamRecord } from "../../schemas/rollout-stream.js";
import { DEFAULT_GROUP_BY, type GroupByKey } from "../../schemas/train-rows.js";
import { type StreamEnd, StreamTally } from "./end.js";
import { JobProcessGone, RunStopped, StreamTimeout } from "./errors.js";
import { JobTracker } from "./jobs.js";
import { applyGroup, type FinishedRollout, finishRollout } from "./record.js";
import { ChangeWatcher } from "./watch.js";

export interface StreamOptions {
  /** Keep watching until every planned job finished (default); false scans once. */
  follow?: boolean;
  pollIntervalMs?: number;
  timeoutMs?: number;
  groupSize?: number;
  groupBy?: string | readonly string[];
  groupAdvantage?: Normalisation;
  signal?: AbortSignal;
  onWarning?: (message: string) => void;
  /** Called once when the stream ends, however it ends: the counts of the end-of-stream line. */
  onEnd?: (end: StreamEnd) => void;
  /** Token sequences also from calls other processes in the sandbox made (as convert's option). */
  includeNonAgentCalls?: boolean;
}

class Grouper {
  private readonly open = new Map<string, FinishedRollout[]>();
  private readonly closed = new Set<string>();

  constructor(
    private readonly size: number | undefined,
    private readonly normalisation: Normalisation,
    private readonly warn: (m: string) => void,
  ) {}

  add(f: FinishedRollout): StreamRecord[] {
    if (this.size === undefined || f.record.retried) return [f.record];
    const id = f.record.group_id;
    if (this.closed.has(id)) {
      this.warn(
        `group ${id} already had ${this.size} rollouts; ${f.record.rollout_path} comes out without an advantage`,
      );
      return [f.record];
    }
    const members = [...(this.open.get(id) ?? []), f];
    if (members.length < this.size) {
      this.open.set(id, members);
      return [];
    }
    this.open.delete(id);
    this.closed.add(id);
    return this.emit(members, true);
  }

  /** Groups still short when the stream ends: marked incomplete, with no advantages. */
  flush(): StreamRecord[] {
    const out = [...this.open.values()].flatMap((members) => this.emit(members, false));
    this.open.clear();
    return out;
  }

  private emit(members: FinishedRollout[], complete: boolean): StreamRecord[] {
    const sorted = [...members].sort((a, b) => (a.record.rollout_path < b.record.rollout_path ? -1 : 1));
    const s = settleGroup(
      sorted.map((m) => m.rollout),
      this.normalisation,
    );
    return applyGroup(sorted, s, this.normalisation, complete);
  }
}

/** Every option of streamRollouts: one not listed here is refused with the nearest name. */
const OPTIONS: Record<keyof StreamOptions, true> = {
  follow: true,
  pollIntervalMs: true,
  timeoutMs: true,
  groupSize: true,
  groupBy: true,
  groupAdvantage: true,
  signal: true,
  onWarning: true,
  onEnd: true,
  includeNonAgentCalls: true,
};

function checkOptions(opts: StreamOptions): { by: GroupByKey[]; normalisation: Normalisation } {
  checkOptionKeys("streamRollouts", opts, OPTIONS);
  const size = opts.groupSize;
  if (size !== undefined && (!Number.isInteger(size) || size < 1)) {
    throw new UserInputError(`${opt("groupSize")}: give a whole number of at least 1, not ${String(size)}.`);
  }
  const normalisation = opts.groupAdvantage ?? "grpo";
  if (!NORMALISATIONS.includes(normalisation))
    throw new UserInputError(`${opt("groupAdvantage")}: use grpo or loo, not "${normalisation}".`);
  const by = opts.groupBy === undefined ? [...DEFAULT_GROUP_BY] : parseGroupBy(opts.groupBy);
  return { by, normalisation };
}

/**
 * Following: a file is never going to be a jobs folder (refused); a path not there yet is waited for
 * (a run that has not made its folder), and the wait is said, not silent.
 */
async function checkPath(input: string, follow: boolean, warn: ((m: string) => void) | undefined) {
  const stat = await fs.stat(input).catch(() => null);
  if (stat?.isFile())
    throw new UserInputError(
      `${input} is a file, not a folder; give a job folder or a folder of jobs (the run's ${opt("jobsDir")})`,
    );
  if (!follow) await assertFolder(input);
  else if (!stat)
    warn?.(
      `${input} does not exist yet: waiting for a run to make it (Ctrl-C stops; ${phrase("follow: false", "follow: false")} scans once and ${phrase("throws", "throws")} on a missing path)`,
    );
}

export async function* streamRollouts(input: string, opts: StreamOptions = {}): AsyncGenerator<StreamRecord> {
  const { by, normalisation } = checkOptions(opts);
  const follow = opts.follow ?? true;
  await checkPath(input, follow, opts.onWarning);
  const poll = opts.pollIntervalMs ?? 1000;
  const deadline = opts.timeoutMs === undefined ? null : Date.now() + opts.timeoutMs;
  const warn = opts.onWarning ?? (() => undefined);
  const watcher = new ChangeWatcher();
  const tracker = new JobTracker(path.resolve(input), input, watcher);
  const grouper = new Grouper(opts.groupSize, normalisation, warn);
  const tally = new StreamTally();
  const keyOf = (r: Rollout) => groupKeyOf(r, by, policyVersionKey(r));
  // Only groups that wait for more than one rollout can be kept at one by job in --group-by.
  const split = (opts.groupSize ?? 1) > 1 ? new JobSplitCheck(by) : null;
  const mix = new MixCheck(by);
  let unnamed = 0;
  try {
    let lastPoll = Date.now();
    let dirty: Set<string> | null = null;
    for (;;) {
      for (const final of await tracker.refresh(dirty, !follow)) {
        if (final.resultProblem) warn(`${path.join(final.displayDir, RESULT)}: ${final.resultProblem}`);
        const finished = await finishRollout(final, keyOf, opts.includeNonAgentCalls === true);
        const { record } = finished;
        if (!record.retried) {
          const version = policyVersionKey(finished.rollout);
          split?.add(finished.rollout, record.group_id, version);
          mix.add(record.group_id, finished.rollout, version);
          if (keysFor(finished.rollout, by) !== by) unnamed++;
        }
        yield* tally.add(grouper.add(finished));
      }
      if (!follow || opts.signal?.aborted) break;
      const verdict = tracker.verdict();
      // Before ending, look once more at everything: a job planned since the last look keeps us going.
      if (verdict !== "running" && dirty !== null) {
        dirty = null;
        continue;
      }
      if (verdict === "finished") break;
      if (verdict === "halted") {
        yield* tally.add(grouper.flush());
        const stop = tracker.stop();
        throw new RunStopped(
          `${input}: the run stopped starting trials (${stop?.reason}: ${stop?.message}); ` +
            `${tracker.notStarted()} planned trial(s) not started. Resume it with ${phrase("the run's jobName", "the run's jobName")} once the cause is fixed.`,
        );
      }
      if (verdict === "stopped") {
        yield* tally.add(grouper.flush());
        throw new JobProcessGone(
          `${input}: the process running the job died before it finished (its .evaluation.lock names a dead pid).`,
        );
      }
      const now = Date.now();
      if (deadline !== null && now >= deadline) {
        yield* tally.add(grouper.flush());
        throw new StreamTimeout(`${input}: ${opt("timeoutMs")} reached before every job finished.`);
      }
      await watcher.wait(
        Math.min(lastPoll + poll - now, deadline === null ? poll : deadline - now),
        opts.signal,
      );
      const changed = watcher.takeDirty();
      const polled = Date.now() - lastPoll >= poll;
      if (polled) lastPoll = Date.now();
      dirty = polled ? null : changed;
    }
    yield* tally.add(grouper.flush());
  } finally {
    watcher.close();
    const warning = split?.warning() ?? unnamedRunNote(unnamed);
    if (warning) warn(warning);
    const mixed = mix.summary();
    if (mixed) warn(`groups: ${mixed}`);
    opts.onEnd?.(tally.end(tracker.notStarted(), tracker.stop()));
  }
}
