// The library's options as the `bench` command spells them: every message the library makes while
// this command runs names the flag the user typed (`--trials`), not the library's option (`trials`).
// An option missing here keeps the library's name; test/option-flags.test.ts holds every option a
// message in src/ names to an entry here.
import { nameOptionsWith, type OptionRef } from "../options.js";

/** Option -> flag. A value is written after the flag (`-m vllm/x`). */
export const OPTION_FLAGS: Readonly<Record<string, string>> = {
  advantage: "--advantage",
  agent: "-a",
  agentEnv: "--agent-env",
  allowUnsafeStackFlashAttn: "--allow-unsafe-stack-flash-attn",
  canonicalSelection: "--canonical-selection",
  chatTemplateKwargs: "--chat-template-kwarg",
  compatProfile: "--compat-profile",
  concurrency: "-j/--concurrency",
  config: "--config",
  contextPolicy: "--context-policy",
  data: "--data",
  exclude: "--exclude",
  executor: "--executor",
  "executor.gatewayHost": "--gateway-host",
  "executor.partition": "--slurm-partition",
  expectedRows: "--expected-rows",
  export: "--export",
  failFastRollouts: "--fail-fast-rollouts",
  maxCostUsd: "--max-cost-usd",
  force: "--force",
  format: "--format",
  groupAdvantage: "--group-advantage",
  groupBy: "--group-by",
  groupSize: "--group-size",
  hfPrefix: "--hf-prefix",
  hfPublicReadCheck: "--hf-public-read-check",
  host: "--host",
  includeNonAgentCalls: "--include-non-agent-calls",
  include: "--include",
  jobName: "--job-name",
  jobsDir: "--jobs-dir",
  lossMask: "--loss-mask",
  lossNormalization: "--loss-normalization",
  manifest: "--manifest",
  maxLength: "--max-length",
  messageTailTruncation: "--message-tail-truncation",
  minReward: "--min-reward",
  maxConcurrentTrials: "--max-concurrent-trials",
  model: "-m",
  modelAttn: "--model-attn",
  modelCard: "--model-card",
  modelTag: "--model-tag",
  out: "--out",
  overrides: "--override",
  packFunction: "--pack-function",
  parallelJobs: "--parallel-jobs",
  "policy.apiKey": "--api-key",
  "policy.baseUrl": "--base-url",
  "policy.endpointRetries": "--endpoint-retries",
  "policy.failFastCalls": "--fail-fast-calls",
  "policy.maxEndpointConnections": "--max-endpoint-connections",
  "policy.maxCallMib": "--max-call-mib",
  "policy.maxRecordedMib": "--max-recorded-mib",
  "policy.firstByteTimeoutSec": "--endpoint-first-byte-timeout",
  "policy.idleTimeoutSec": "--endpoint-idle-timeout",
  "policy.seed": "--seed",
  "policy.price": "--price",
  "policy.reasoningEffort": "--reasoning-effort",
  requireLlmTrajectory: "--require-llm-trajectory",
  requireTrainingGrade: "--require-training-grade",
  port: "--port",
  primeRlDir: "--prime-rl-dir",
  publishArtifacts: "--publish-artifacts",
  publishModel: "--publish-model",
  rendererMode: "--renderer-mode",
  retryAttempts: "--retry-attempts",
  rewardVector: "--reward-vector",
  rowMode: "--row-mode",
  sandbox: "--sandbox",
  skillMode: "--skill-mode",
  skillsDir: "--skills-dir",
  sourceCanonicalSelection: "--source-canonical-selection",
  sourceJobs: "--source-jobs",
  subagentRows: "--subagent-rows",
  taskManifest: "--task-manifest",
  syncCkptToMaxSteps: "--sync-ckpt-to-max-steps",
  syncSchedulerToMaxSteps: "--sync-scheduler-to-max-steps",
  targetExamples: "--target-examples",
  targetMicroSteps: "--target-micro-steps",
  "timeoutMultipliers.agent": "--agent-timeout-multiplier",
  "timeoutMultipliers.all": "--timeout-multiplier",
  "timeoutMultipliers.build": "--environment-build-timeout-multiplier",
  "timeoutMultipliers.verifier": "--verifier-timeout-multiplier",
  timeoutMs: "--timeout",
  tokenizer: "--tokenizer",
  tokenizerRevision: "--tokenizer-revision",
  toolDefsMode: "--tool-defs-mode",
  trials: "--trials",
  upstreamRows: "--upstream-rows",
  verifierEnvironmentMode: "--verifier-environment-mode",
};

/**
 * The command's words for the library's phrases (options.ts phrase()): two options at once, a flag
 * whose value is implied, a flag and the variable beside it, what the command does where the
 * library throws, a setting named with its flag.
 */
export const PHRASES: Readonly<Record<string, (value: string | undefined) => string>> = {
  "include/exclude": () => "--include/--exclude",
  "follow: false": () => "--no-follow",
  throws: () => "exits 2",
  "policy.apiKey or its variable": () => "--api-key (or BENCHFLOW_PROVIDER_API_KEY)",
  "policy.seed of a run": () => "bench run --seed",
  "model given": (v) => `model ${v} (-m)`,
  "policy.baseUrl given": () => "baseUrl (--base-url)",
  "policy.captureTokens given": () => "captureTokens (--capture-tokens)",
  "executor.sbatchArgs excluding": (v) => `--slurm-sbatch-arg=--exclude=${v}`,
  "the run's jobName": () => "bench run --job-name",
};

export function flagOf(ref: OptionRef): string | undefined {
  if (ref.phrase) return PHRASES[ref.option]?.(ref.value);
  const flag = OPTION_FLAGS[ref.option];
  if (flag === undefined) return undefined;
  return ref.value === undefined ? flag : `${flag} ${ref.value}`;
}

/** Called by the command before it parses anything: messages name flags from then on. */
export function nameFlags(): void {
  nameOptionsWith(flagOf);
}
