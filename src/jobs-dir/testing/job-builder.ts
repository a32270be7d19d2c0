// Writes job folders laid out as `bench run` writes them, for tests and benchmarks:
//   writeGroup(root, { task: "t", rewards: [0, 1, 0], errors: ["timeout", null, "timeout"] })
// gives <root>/<agent>/trial-01..03/<job>/t__<8hex>/ with result.json, config.json and trajectories.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { type GroupSampling, NO_SAMPLING } from "../../schemas/group-identity.js";
import { type CallSpec, trajectoryLines, type Wire } from "./trajectory-builder.js";

export type { CallSpec, Wire } from "./trajectory-builder.js";

export interface RolloutSpec {
  task?: string;
  /** null: unscored (rewards null). Default 1. */
  reward?: number | null;
  /** The agent-side error category, e.g. "timeout" (the verifier may still have scored). */
  error?: string | null;
  /** An `error` text; without `error` the result names an error but no category (other writers do). */
  errorMessage?: string;
  verifierError?: string | null;
  /** "missing": no result.json (run died); "truncated": a result.json cut short. */
  result?: "ok" | "missing" | "truncated";
  /** Number of model calls or their specs; 0 writes no llm_trajectory.jsonl (oracle, nop). Default 2. */
  calls?: number | CallSpec[];
  wire?: Wire;
  tokens?: boolean | "broken";
  /** Writes replaced.json naming the attempt that replaced this one. */
  replacedBy?: string;
  attempt?: number;
  hex?: string;
  agent?: string;
  model?: string | null;
  startedAt?: string;
  /** The run's --policy-version and sampling in its group identity (default none). */
  policyVersion?: string | null;
  sampling?: Partial<GroupSampling>;
}

export interface JobSpec {
  /** The job folder to write. */
  dir: string;
  agent?: string;
  model?: string | null;
  rollouts: RolloutSpec[];
  /** finished: summary.json; running: .evaluation.lock (lockPid); planned: plan only; bare: no job files. */
  state?: "finished" | "running" | "planned" | "bare";
  lockPid?: number;
  retryAttempts?: number;
  /** Fields of summary.json over the defaults, e.g. { not_started: 2, stopped: {...} }. */
  summary?: Record<string, unknown>;
  policyVersion?: string | null;
  sampling?: Partial<GroupSampling>;
  /** false: results without group_identity, as older versions and upstream write them. */
  identity?: boolean;
}

export interface BuiltRollout {
  dir: string;
  name: string;
}

const TEXT_CACHE = new Map<string, string>();

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

export function writeJson(file: string, value: unknown): void {
  write(file, `${JSON.stringify(value, null, 2)}\n`);
}

function callSpecs(calls: number | CallSpec[] | undefined): CallSpec[] {
  if (Array.isArray(calls)) return calls;
  return Array.from({ length: calls ?? 2 }, () => ({}));
}

export function writePlan(spec: JobSpec, tasks: string[]): void {
  writeJson(path.join(spec.dir, "evaluation.json"), {
    schema_version: 1,
    job_name: path.basename(spec.dir),
    trial: path.basename(path.dirname(spec.dir)),
    trial_index: 1,
    trials_total: 1,
    tasks_dir: "tasks",
    tasks: [...new Set(tasks)].map((t) => ({ name: t, path: `tasks/${t}`, digest: `sha256:${t}` })),
    agent: spec.agent ?? "bench-agent",
    model: spec.model === undefined ? "vllm/policy" : spec.model,
    sandbox: "namespace",
    concurrency: 1,
    retry_attempts: spec.retryAttempts ?? 0,
    agent_env_keys: [],
    created_at: "2026-01-01T12:00:00.000Z",
    policy_version: spec.policyVersion ?? null,
    sampling: { ...NO_SAMPLING, ...spec.sampling },
  });
}

export function writeRollout(jobDir: string, r: RolloutSpec, job: Partial<JobSpec> = {}): BuiltRollout {
  const task = r.task ?? "demo-task";
  const name = `${task}__${r.hex ?? randomBytes(4).toString("hex")}`;
  const dir = path.join(jobDir, name);
  const agent = r.agent ?? job.agent ?? "bench-agent";
  const model = r.model !== undefined ? r.model : job.model !== undefined ? job.model : "vllm/policy";
  fs.mkdirSync(path.join(dir, "trajectory"), { recursive: true });
  writeJson(path.join(dir, "config.json"), { task_name: task, task_path: `tasks/${task}`, agent, model });
  const calls = callSpecs(r.calls);
  if (calls.length > 0) {
    const spec = {
      task,
      model: model ?? "none",
      calls,
      wire: r.wire ?? "openai-chat",
      tokens: r.tokens ?? false,
    };
    const key = JSON.stringify(spec);
    let text = TEXT_CACHE.get(key);
    if (text === undefined) {
      text = `${trajectoryLines(spec).join("\n")}\n`;
      if (TEXT_CACHE.size < 64) TEXT_CACHE.set(key, text);
    }
    write(path.join(dir, "trajectory", "llm_trajectory.jsonl"), text);
  }
  write(
    path.join(dir, "trajectory", "acp_trajectory.jsonl"),
    `${JSON.stringify({ type: "user_message", text: `Solve ${task}` })}\n`,
  );
  if (r.replacedBy)
    writeJson(path.join(dir, "replaced.json"), {
      replaced_by: r.replacedBy,
      reason: "retried",
      at: "2026-01-01T12:05:00.000Z",
    });
  if (r.result !== "missing") {
    const result = resultOf(task, name, agent, model, r, path.basename(jobDir), calls.length);
    // What bench run writes; a folder without job files stands for upstream's, which records none.
    if (job.state !== "bare" && job.identity !== false)
      Object.assign(result, {
        group_identity: {
          run: path.basename(jobDir),
          task,
          task_digest: result.task_digest,
          agent,
          model,
          policy_version: r.policyVersion ?? job.policyVersion ?? null,
          sampling: { ...NO_SAMPLING, ...job.sampling, ...r.sampling },
        },
      });
    const text = JSON.stringify(result, null, 2);
    // Written last and atomically, as bench run does: a reader never sees half of it.
    const tmp = path.join(dir, ".result.json.tmp");
    write(tmp, r.result === "truncated" ? text.slice(0, Math.floor(text.length / 2)) : text);
    fs.renameSync(tmp, path.join(dir, "result.json"));
  }
  return { dir, name };
}

function resultOf(
  task: string,
  name: string,
  agent: string,
  model: string | null,
  r: RolloutSpec,
  job: string,
  calls: number,
) {
  const reward = r.reward === undefined ? 1 : r.reward;
  const error = r.error ?? null;
  const verifierError = r.verifierError ?? null;
  return {
    task_name: task,
    rollout_name: name,
    agent,
    agent_name: agent,
    model,
    rewards: reward === null ? null : { reward },
    n_tool_calls: Math.max(0, calls - 1),
    n_prompts: 1,
    error: r.errorMessage ?? (error ? `agent failed: ${error}` : null),
    error_category: error,
    verifier_error: verifierError ? `verifier failed: ${verifierError}` : null,
    verifier_error_category: verifierError,
    started_at: r.startedAt ?? "2026-01-01T12:00:00.000Z",
    finished_at: "2026-01-01T12:02:00.000Z",
    task_digest: `sha256:${task}`,
    job_name: job,
    attempt: r.attempt ?? 1,
    replaces: null,
  };
}

export function writeJob(spec: JobSpec): BuiltRollout[] {
  const state = spec.state ?? "finished";
  fs.mkdirSync(spec.dir, { recursive: true });
  if (state !== "bare")
    writePlan(
      spec,
      spec.rollouts.map((r) => r.task ?? "demo-task"),
    );
  const built = spec.rollouts.map((r) => writeRollout(spec.dir, r, spec));
  if (state === "running") {
    writeJson(path.join(spec.dir, ".evaluation.lock"), {
      pid: spec.lockPid ?? process.pid,
      host: hostname(),
      started_at: "2026-01-01T12:00:00.000Z",
    });
  }
  if (state === "finished") writeSummary(spec.dir, spec);
  return built;
}

export function writeSummary(dir: string, spec: Pick<JobSpec, "agent" | "model" | "summary">): void {
  writeJson(path.join(dir, "summary.json"), {
    job_name: path.basename(dir),
    agent: spec.agent ?? "bench-agent",
    model: spec.model ?? "vllm/policy",
    environment: "namespace",
    concurrency: 1,
    total: 0,
    passed: 0,
    failed: 0,
    errored: 0,
    verifier_errored: 0,
    error_categories: {},
    verifier_error_categories: {},
    mean_reward: null,
    score: "0.0%",
    score_ratio: 0,
    elapsed_sec: 1,
    started_at: "2026-01-01T12:00:00.000Z",
    finished_at: "2026-01-01T12:02:00.000Z",
    ...spec.summary,
  });
}

export interface GroupSpec extends Omit<RolloutSpec, "reward" | "error"> {
  task: string;
  rewards: Array<number | null>;
  errors?: Array<string | null>;
  agent?: string;
  model?: string | null;
  /** The job folder name inside each trial-NN folder; the same in every repeat by default. */
  jobName?: string;
  /** Per-rollout overrides, by position. */
  each?: Array<Partial<RolloutSpec>>;
  state?: JobSpec["state"];
  identity?: boolean;
}

/** The seed's layout: one job per repeat, <root>/<agent>/trial-NN/<job>/<task>__<8hex>/. */
export function writeGroup(root: string, g: GroupSpec): BuiltRollout[] {
  const agent = g.agent ?? "bench-agent";
  const { rewards, errors, each, jobName, state, ...rollout } = g;
  return rewards.map((reward, i) => {
    const repeat = `trial-${String(i + 1).padStart(2, "0")}`;
    const dir = path.join(root, agent, repeat, jobName ?? "2026-01-01__12-00-00");
    const spec = { ...rollout, reward, error: errors?.[i] ?? null, ...(each?.[i] ?? {}) };
    const built = writeJob({
      dir,
      agent,
      model: g.model,
      rollouts: [spec],
      state: state ?? "finished",
      policyVersion: g.policyVersion,
      sampling: g.sampling,
      identity: g.identity,
    });
    return built[0] as BuiltRollout;
  });
}
