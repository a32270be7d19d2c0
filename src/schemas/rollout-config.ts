// config.json and prompts.json of a rollout, as we write them (rollout/record.ts): the rollout's plan,
// the job's settings (job/plan.ts, job/policy.ts), what the sandbox turned out to be, and what a
// CLI agent's install recorded. Unknown keys are refused, so a new fact must be added here first.
import { z } from "zod";

/** config.json `policy`: the endpoint settings, everything but the key (job/policy.ts). */
export const PolicyRecord = z.strictObject({
  provider: z.string(),
  provider_model: z.string(),
  base_url: z.string(),
  base_url_source: z
    .string()
    .optional()
    .describe(
      'where base_url came from: "--base-url", a variable\'s name (DEEPSEEK_BASE_URL, ...) or "default" (the provider\'s)',
    ),
  api: z
    .enum(["openai-chat", "anthropic-messages"])
    .optional()
    .describe(
      "the API the endpoint is called in: chat completions, or Anthropic Messages (Anthropic's own: its agents' calls pass through unconverted)",
    ),
  key_source: z
    .string()
    .nullable()
    .optional()
    .describe(
      'where the key came from: "--api-key", a variable\'s name (DEEPSEEK_API_KEY, ...), or null (none); never the key',
    ),
  sampling: z.strictObject({
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    max_tokens: z.number().nullable(),
    seed: z
      .number()
      .nullable()
      .optional()
      .describe("--seed: repeat k of a group asks for seed + k - 1 on every call; null or absent: none"),
    reasoning_effort: z
      .string()
      .nullable()
      .optional()
      .describe("--reasoning-effort: sent as reasoning_effort on every call, over the agent's own"),
  }),
  capture_tokens: z.strictObject({
    enabled: z.boolean(),
    token_ids: z.enum(["on", "off", "auto"]),
    top_logprobs: z.number().nullable(),
  }),
  policy_version: z.string().nullable(),
  price_usd_per_mtok: z
    .strictObject({
      input: z.number(),
      output: z.number(),
      cache_read: z.number().nullable().optional().describe("a prompt-cache hit; null: as input"),
      cache_write: z.number().nullable().optional().describe("a prompt-cache write; null: as input"),
      source: z
        .string()
        .nullable()
        .optional()
        .describe('"--price", or "table: <page>, <date>" (the price table\'s)'),
    })
    .nullable()
    .describe("USD per million tokens (--price, else the price table's), or null: no cost"),
  endpoint: z.strictObject({
    first_byte_timeout_sec: z.number(),
    idle_timeout_sec: z.number(),
    retries_429_503: z.number(),
    fail_fast_calls: z.number(),
    max_connections: z
      .number()
      .optional()
      .describe("--max-endpoint-connections: calls in flight to the endpoint at once over the run"),
  }),
  bounds: z
    .strictObject({
      max_call_mib: z.number().describe("--max-call-mib: one request body, and one answer"),
      max_recorded_mib: z.number().describe("--max-recorded-mib: one rollout's recorded calls"),
    })
    .optional()
    .describe("what one rollout may make the gateway hold and write; calls over it are refused"),
});

/**
 * Until issue 16 the policy record held three camelCase keys among the snake_case ones
 * (capture_tokens.tokenIds, .topLogprobs, price_usd_per_mtok.inputPerMTok/.outputPerMTok). Job
 * folders written then still read: their keys are renamed before the record is checked.
 */
const OLD_KEYS: Record<string, Record<string, string>> = {
  capture_tokens: { tokenIds: "token_ids", topLogprobs: "top_logprobs" },
  price_usd_per_mtok: { inputPerMTok: "input", outputPerMTok: "output" },
};

function renameOldKeys(policy: unknown): unknown {
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) return policy;
  const out: Record<string, unknown> = { ...policy };
  for (const [field, renames] of Object.entries(OLD_KEYS)) {
    const inner = out[field];
    if (typeof inner !== "object" || inner === null || Array.isArray(inner)) continue;
    out[field] = Object.fromEntries(Object.entries(inner).map(([k, v]) => [renames[k] ?? k, v]));
  }
  return out;
}

/** config.json `policy` as read: the written form, or the older one with camelCase keys. */
export const ReadPolicyRecord = z.preprocess(renameOldKeys, PolicyRecord.loose());
export type PolicyRecord = z.infer<typeof PolicyRecord>;

const LimitRecord = z.strictObject({
  requested: z.number().nullable(),
  applied: z
    .string()
    .describe('"cgroup", "rlimit", "filesystem", "engine", "watched" or "not_applied: <why>"'),
  exceeded: z.boolean().optional(),
});

export const WrittenRolloutConfig = z
  .strictObject({
    task_name: z.string(),
    task_path: z.string(),
    task_digest: z.string(),
    agent: z.string(),
    model: z.string().nullable(),
    job_name: z.string(),
    trial: z.string(),
    rollout_name: z.string(),
    attempt: z.number().int(),
    timeout_sec: z.number().nullable(),
    verifier_timeout_sec: z.number().nullable(),
    network_mode: z.string(),
    agent_env: z.array(z.string()).describe("names only: values may be secrets"),
    started_at: z.string(),
    // The job's settings (job/plan.ts).
    sandbox: z.string(),
    concurrency: z.number().int(),
    trials: z.number().int(),
    parallel_jobs: z
      .number()
      .int()
      .optional()
      .describe("repeat jobs at once (--parallel-jobs), when above 1"),
    max_concurrent_trials: z
      .number()
      .int()
      .optional()
      .describe("the run's bound on trials at once across its jobs, with --parallel-jobs"),
    policy: PolicyRecord.nullable(),
    skill_mode: z.string().optional(),
    skills_dir: z.string().nullable().optional(),
    // What the sandbox turned out to be (rollout/run.ts), present once it started.
    sandbox_id: z.string().optional(),
    sandbox_user: z.enum(["agent", "root"]).optional(),
    sandbox_workdir: z.string().optional(),
    sandbox_image: z.string().nullable().optional(),
    network_enforcement: z.string().optional(),
    sandbox_warnings: z.array(z.string()).optional(),
    limits: z
      .strictObject({
        memory_mb: LimitRecord.optional(),
        storage_mb: LimitRecord.optional(),
        pids: LimitRecord.optional(),
        cpus: LimitRecord.optional(),
      })
      .nullable()
      .optional(),
    // What is closed around the gateway (sandbox/host-block.ts): the host's own addresses and the endpoint.
    host_block: z
      .strictObject({
        addresses: z.number().int(),
        endpoint: z.string().nullable(),
        applied: z.string().describe('"nft", "iptables", "no_network", or "not_applied: <why>"'),
        guard: z
          .string()
          .optional()
          .describe(
            'the host\'s own guard, closing every host address, later ones included: "nft" or "not_applied: <why>"',
          ),
      })
      .nullable()
      .optional(),
    verifier_environment_mode: z.enum(["shared", "separate"]).optional(),
    verifier_hardening: z
      .enum(["on", "off"])
      .optional()
      .describe("--verifier-hardening: on (default) or off; what it did is in verifier/hardening.json"),
    // A CLI agent's install (agents/cli/agent.ts, image-install.ts).
    agent_version: z.string().optional(),
    agent_packages: z.array(z.string()).optional(),
    agent_install_path: z.string().optional(),
    agent_installed_now: z.boolean().optional(),
    agent_musl_installed_now: z.boolean().optional(),
    agent_image_libc: z.string().optional(),
    agent_image: z.string().nullable().optional(),
    agent_image_built_now: z.boolean().optional(),
  })
  .meta({ title: "benchflow rollout config.json" });
export type WrittenRolloutConfig = z.infer<typeof WrittenRolloutConfig>;

/**
 * config.json as read: keys we do not know yet (a newer writer, upstream's) are kept, not refused,
 * and an older policy record reads as today's.
 */
export const RolloutConfig = WrittenRolloutConfig.extend({ policy: ReadPolicyRecord.nullable() }).loose();
export type RolloutConfig = z.infer<typeof RolloutConfig>;

/** prompts.json: the instructions the agent was given, in order. */
export const RolloutPrompts = z.array(z.string()).meta({ title: "benchflow rollout prompts.json" });
