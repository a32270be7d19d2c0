// Every key upstream's task schema knows, and the rules for keys it does not: an unknown key inside a
// closed section (agent, verifier, sandbox, steps) or a likely typo anywhere is refused; any other
// unknown key is a warning. Known keys we accept but do not act on yet are warnings too.

import { envVar } from "../env.js";
import { editDistance } from "../util/nearest.js";

const keys = (list: string) => list.trim().split(/\s+/);

/** Sections by their canonical dotted name; `[]` marks the entries of a list of tables. */
export const KNOWN_KEYS: Record<string, readonly string[]> = {
  "": keys(`schema_version version task metadata agent verifier sandbox environment oracle solution source
    reward artifacts steps multi_step_reward_strategy multi_step_reward_mode agents scenes user benchflow
    name image profile`),
  task: keys("name description authors keywords version"),
  "task.authors[]": keys("name email"),
  agent: keys("timeout_sec user network_mode allowed_hosts prompt_prefix"),
  // environment_mode and environment are Harbor's separate-verifier keys (sandbox_mode and sandbox
  // upstream's): read, or refused, by task/verifier-mode.ts. collect is Harbor's too.
  verifier: keys(`type timeout_sec env reward_range user network_mode allowed_hosts sandbox_mode sandbox
    service judge memory hardening pytest_plugins environment_mode environment collect`),
  "verifier.judge": keys("model rubric_path input_dir input_type context"),
  "verifier.memory": keys("expected_skills"),
  "verifier.hardening": keys("cleanup_conftests restore_build_files"),
  // memory and storage are Harbor's deprecated size strings ("2G", "512M").
  sandbox: keys(`network_mode allowed_hosts build_timeout_sec docker_image os cpus memory_mb storage_mb gpus
    gpu_types mcp_servers env tpu skills_dir healthcheck workdir setup_commands allow_internet memory storage`),
  // Harbor's fields, then upstream's cwd, env, headers and its tool filters.
  "sandbox.mcp_servers[]": keys(
    "name transport url command args cwd env headers tools include_tags exclude_tags",
  ),
  "sandbox.healthcheck": keys("command interval_sec timeout_sec start_period_sec start_interval_sec retries"),
  oracle: keys("env timeout_sec"),
  "steps[]": keys("name instruction agent verifier healthcheck min_reward artifacts setup_commands"),
  "steps[].agent": keys("timeout_sec user network_mode allowed_hosts prompt_prefix"),
  "steps[].verifier": keys("timeout_sec env user environment_mode environment reward_range"),
  "steps[].healthcheck": keys("command interval_sec timeout_sec start_period_sec start_interval_sec retries"),
};

/** Sections where an unknown key is refused outright; elsewhere only a likely typo is. */
const CLOSED = new Set(
  keys(`agent verifier verifier.judge verifier.memory verifier.hardening sandbox sandbox.healthcheck steps[]
    steps[].agent steps[].verifier steps[].healthcheck sandbox.mcp_servers[]`),
);

/** Legacy spellings of a section, checked under the canonical one. */
const SECTION_ALIAS: Record<string, string> = { environment: "sandbox", solution: "oracle" };

const isEmpty = (v: unknown) =>
  v === null ||
  v === undefined ||
  v === "" ||
  (Array.isArray(v) && v.length === 0) ||
  (isTable(v) && Object.keys(v).length === 0);

/** Known keys we accept but do not act on yet; the predicate says when the value changes nothing. */
const NOT_ACTED_ON: Record<string, (value: unknown) => boolean> = {
  reward: isEmpty,
  agents: isEmpty,
  scenes: isEmpty,
  user: isEmpty,
  profile: isEmpty,
  "verifier.collect": isEmpty,
  "verifier.service": (v) => isEmpty(v) || v === "main",
  "verifier.judge": isEmpty,
  "verifier.memory": isEmpty,
  "verifier.pytest_plugins": isEmpty,
  "sandbox.os": (v) => isEmpty(v) || v === "linux",
  "sandbox.gpus": (v) => isEmpty(v) || v === 0,
  "sandbox.gpu_types": isEmpty,
  "sandbox.mcp_servers[].tools": isEmpty,
  "sandbox.mcp_servers[].include_tags": isEmpty,
  "sandbox.mcp_servers[].exclude_tags": isEmpty,
  "sandbox.tpu": (v) => isEmpty(v) || v === false,
  "steps[].instruction": isEmpty,
  "steps[].healthcheck": isEmpty,
  "steps[].artifacts": isEmpty,
  "steps[].setup_commands": isEmpty,
  "steps[].agent.user": isEmpty,
  "steps[].agent.network_mode": isEmpty,
  "steps[].agent.allowed_hosts": isEmpty,
  "steps[].agent.prompt_prefix": isEmpty,
  "steps[].verifier.user": isEmpty,
  "steps[].verifier.reward_range": isEmpty,
};

export function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export { editDistance };

const squash = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

/** Known keys that `key` is a likely misspelling of, nearest first. */
export function nearestKeys(key: string, known: readonly string[]): string[] {
  // Short keys get a tighter bound so that e.g. `tags` is not taken for `task`.
  const limit = key.length < 5 ? 1 : 2;
  const scored = known
    .map((k) => ({ k, d: squash(k) === squash(key) ? 0 : editDistance(key.toLowerCase(), k) }))
    .filter(({ d }) => d <= limit)
    .sort((x, y) => x.d - y.d || x.k.localeCompare(y.k));
  return scored.map(({ k }) => k);
}

export interface KeyReport {
  refusals: string[];
  warnings: string[];
}

/** Checks every key of a parsed config against the schema. `file` is how messages name the file. */
export function checkKeys(config: Record<string, unknown>, file: string): KeyReport {
  const report: KeyReport = { refusals: [], warnings: [] };
  const lenient = envVar("BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS") === "1";
  walk(config, "", "", { file, report, lenient });
  return report;
}

interface WalkContext {
  file: string;
  report: KeyReport;
  lenient: boolean;
}

function walk(table: Record<string, unknown>, section: string, shown: string, ctx: WalkContext): void {
  const known = KNOWN_KEYS[section] ?? [];
  for (const [key, value] of Object.entries(table)) {
    const where = shown ? `${shown}.${key}` : key;
    if (!known.includes(key)) {
      unknownKey(key, where, section, ctx);
      continue;
    }
    const child = childSection(section, key);
    const quiet = NOT_ACTED_ON[child];
    if (quiet && !quiet(value)) {
      ctx.report.warnings.push(
        `${ctx.file}: ${where} is accepted but not acted on yet; the task runs without it`,
      );
    }
    if (KNOWN_KEYS[child] && isTable(value)) walk(value, child, where, ctx);
    const entries = `${child}[]`;
    if (KNOWN_KEYS[entries] && Array.isArray(value)) {
      value.forEach((item, i) => {
        if (isTable(item)) walk(item, entries, `${where}[${i}]`, ctx);
      });
    }
  }
}

function childSection(section: string, key: string): string {
  if (section === "") return SECTION_ALIAS[key] ?? key;
  return `${section}.${key}`;
}

function unknownKey(key: string, where: string, section: string, ctx: WalkContext): void {
  const known = KNOWN_KEYS[section] ?? [];
  const near = nearestKeys(key, known).slice(0, 3);
  const label = section === "" ? "the top level" : `[${where.slice(0, -(key.length + 1))}]`;
  const refused = near.length > 0 || CLOSED.has(section);
  let message = `${ctx.file}: unknown key ${where}`;
  if (near.length > 0) message += `; did you mean ${near.join(" or ")}? Fix the spelling or remove it`;
  else if (refused) message += `; ${label} accepts only ${known.join(", ")}. Fix or remove it`;
  if (!refused) ctx.report.warnings.push(`${message} (ignored)`);
  else if (ctx.lenient)
    ctx.report.warnings.push(`${message} (allowed by BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS=1)`);
  else ctx.report.refusals.push(message);
}
