// The options and the answer of a conversion.

import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import type { Manifest } from "../../schemas/train-manifest.js";
import type { GroupByKey, WithheldReason } from "../../schemas/train-rows.js";
import type { ContextMode, TokenizerFlags } from "../tokenizer/options.js";
import type { RowFormat } from "../validate/validate.js";
import type { RowMode } from "./rows.js";

export interface ConvertOptions extends TokenizerFlags {
  /** A rollout folder, a job folder or a folder of jobs. */
  jobs: string;
  out: string;
  format?: RowFormat;
  rowMode?: RowMode;
  groupAdvantage?: Normalisation;
  /** Keys or a comma-separated list; default the group identity (DEFAULT_GROUP_BY). */
  groupBy?: string | readonly string[];
  minReward?: number;
  manifest?: string;
  /**
   * Keep every group and source in the returned manifest (default true). The CLI turns it off: the
   * manifest file gets them either way, and memory then stays flat however large the job.
   */
  keepGroups?: boolean;
  /** Read each call as upstream's converter does (dialects/upstream-rows.ts), not as ours does. */
  upstreamRows?: boolean;
  /** Redact secrets in row content (default true); a tokens row whose text holds one is left out. */
  redact?: boolean;
  /** Fail before writing unless exactly this many rows come out. */
  expectedRows?: number;
  /** Only the rollouts a canonical-selection.json selects (before groups and --min-reward). */
  canonicalSelection?: string;
  /** Add reward_vector (and, with groupAdvantage, advantage_vector) to every row. */
  rewardVector?: boolean;
  /** Also write Claude Code subagents' calls as rows of their own (agent_role "subagent"). */
  subagentRows?: boolean;
  /**
   * Rows also from calls another process in the sandbox made (metadata.origin.kind "other": a command
   * the agent's tools ran); by default they are left out and counted as skipped_non_agent_calls.
   */
  includeNonAgentCalls?: boolean;
  onWarning?: (message: string) => void;
  /** trl-sft: full (default) or message-window (with --tokenizer and --max-length). */
  contextPolicy?: ContextMode;
}

export interface GroupTotals {
  normalisation: Normalisation;
  by: GroupByKey[];
  groups: number;
  /** Members without a score (unscored, missing or cut-short result): in no baseline. */
  unscored: number;
  singleScored: number;
  withheld: Partial<Record<WithheldReason, number>>;
  /** What an explicit --group-by's groups mix (MixCheck.summary), or null. */
  mixed: string | null;
}

export interface ConvertResult {
  rows: number;
  rollouts: number;
  manifest: Manifest;
  groups: GroupTotals | null;
}
