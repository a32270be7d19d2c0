// The group a rollout belongs to, recorded with it (result.json `group_identity`, each job's plan):
// the run its repeat jobs share, the task version, the agent, the model, the policy version and the
// sampling in force. Every reader's default grouping is these facts, so rollouts of two runs, two
// policy versions or two temperatures never land in one group unless a --group-by asks for it. The
// endpoint's URL, key and timeouts are not part of it: fixing a wrong URL or key keeps the group.
import { z } from "zod";

export const GroupSampling = z
  .strictObject({
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    max_tokens: z.number().nullable(),
    reasoning_effort: z.string().nullable(),
    seed_base: z.number().nullable().describe("--seed: repeat k sends seed_base + k - 1"),
  })
  .describe("the sampling the run set; null: the agent's or the server's own");
export type GroupSampling = z.infer<typeof GroupSampling>;

export const GroupIdentity = z
  .strictObject({
    run: z.string().describe("the job name every repeat job of the run shares (--job-name)"),
    task: z.string(),
    task_digest: z.string().nullable(),
    agent: z.string(),
    model: z.string().nullable(),
    policy_version: z.string().nullable().describe("the run's --policy-version"),
    sampling: GroupSampling,
  })
  .meta({ title: "benchflow group identity", description: "What a rollout's default group is keyed on." });
export type GroupIdentity = z.infer<typeof GroupIdentity>;

export const NO_SAMPLING: GroupSampling = Object.freeze({
  temperature: null,
  top_p: null,
  max_tokens: null,
  reasoning_effort: null,
  seed_base: null,
});

const SAMPLING_KEYS = Object.keys(NO_SAMPLING) as Array<keyof GroupSampling>;

/** The `sampling` group key: the settings the run set, in a fixed order; "default" when it set none. */
export function samplingKey(s: GroupSampling): string {
  const set = SAMPLING_KEYS.filter((k) => s[k] !== null).map((k) => `${k}=${s[k]}`);
  return set.length > 0 ? set.join(",") : "default";
}

/** The same settings, read from a file of any writer: a field missing or of another type reads as unset. */
export function samplingOf(value: unknown): GroupSampling | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : null);
  return {
    temperature: num(v.temperature),
    top_p: num(v.top_p),
    max_tokens: num(v.max_tokens),
    reasoning_effort: typeof v.reasoning_effort === "string" ? v.reasoning_effort : null,
    seed_base: num(v.seed_base ?? v.seed),
  };
}

/** What differs between two identities' resumable parts (model, policy version, sampling), as phrases. */
export function identityDifferences(
  was: Pick<GroupIdentity, "model" | "policy_version" | "sampling">,
  now: Pick<GroupIdentity, "model" | "policy_version" | "sampling">,
): string[] {
  const out: string[] = [];
  if (was.model !== now.model) out.push(`model ${was.model} -> ${now.model}`);
  if (was.policy_version !== now.policy_version)
    out.push(`policy version ${was.policy_version ?? "(none)"} -> ${now.policy_version ?? "(none)"}`);
  for (const k of SAMPLING_KEYS)
    if (was.sampling[k] !== now.sampling[k])
      out.push(`${k} ${was.sampling[k] ?? "(unset)"} -> ${now.sampling[k] ?? "(unset)"}`);
  return out;
}
