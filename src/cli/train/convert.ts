// `bench train convert JOBS --out FILE`: training rows from a run (or from a results.jsonl or trainer
// JSONL), or with --format branch-tree the branch trees of each group.
import type { Command } from "commander";
import { UserInputError } from "../../errors.js";
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import { convertBranchTree } from "../../train/branch-tree/convert.js";
import { convertLines } from "../../train/console.js";
import { type ConvertResult, convertJob } from "../../train/convert/convert.js";
import type { RowMode } from "../../train/convert/rows.js";
import type { ContextMode } from "../../train/tokenizer/options.js";
import type { RowFormat } from "../../train/validate/validate.js";
import { withHelp } from "../help.js";
import { CONVERT_HELP } from "../help-pages.js";
import { numberFlag } from "../options.js";
import { trainAction } from "./action.js";
import { GROUP_BY_HELP, TOKENIZER_HELP, tokenizerFlags } from "./flags.js";

type ConvertFlags = Record<string, string | undefined>;

export function registerConvert(train: Command): void {
  const convert = train
    .command("convert")
    .description(
      "Write one training row per rollout (or per model call) from a job, a folder of jobs or a rollout",
    )
    .argument(
      "<jobs>",
      "a rollout folder, a job folder, a folder of jobs, or a results.jsonl / trainer JSONL",
    )
    .requiredOption("-o, --out <file>", "the JSONL file to write")
    .option("--format <format>", "prime-sft, trl-sft, tokens or branch-tree", "prime-sft")
    .option("--row-mode <mode>", "rollout (the last model call) or exchange (every model call)", "rollout")
    .option("--group-advantage <kind>", "add advantages and a group block: grpo or loo")
    .option("--group-by <keys>", GROUP_BY_HELP)
    .option(
      "--min-reward <x>",
      "write rows only for rollouts with at least this reward (after the advantages)",
    )
    .option("--manifest <file>", "write counts by reason and every group with its members")
    .option("--expected-rows <n>", "fail, writing nothing, unless exactly this many rows come out")
    .option(
      "--upstream-rows",
      "read each model call exactly as upstream's converter does (it drops Anthropic tool calls, system prompts and tool schemas)",
    )
    // Upstream's selection and signal flags (issue 13).
    .option("--canonical-selection <file>", "convert only the rollouts a canonical-selection.json selects")
    .option(
      "--reward-vector",
      "add reward_vector (every number the verifier wrote); with groups, advantage_vector",
    )
    .option("--subagent-rows", "also write Claude Code subagents' calls as rows (agent_role subagent)")
    .option(
      "--include-non-agent-calls",
      "also write rows of calls another process in the sandbox made (a command the agent's tools ran)",
    )
    .option(
      "--context-policy <policy>",
      "trl-sft: full, or message-window (needs --tokenizer and --max-length)",
    )
    .option("--tokenizer <tokenizer>", `trl-sft message-window: ${TOKENIZER_HELP}`)
    .option("--tokenizer-revision <rev>", "the cache ref or commit of --tokenizer")
    .option("--max-length <n>", "trl-sft message-window: the most tokens a row may have")
    .option("--redact", "replace secrets in row content with ***REDACTED***")
    .option(
      "--no-redact",
      "keep row content as recorded (private data only); tokens rows with secrets are kept",
    )
    .option("--pairs", "branch-tree: also write a preference pair for each two rollouts that part at a fork")
    .option("--pairs-any-request", "branch-tree: pairs also where the two requests differ")
    .option("--include-oracle", "branch-tree: let oracle rollouts into the trees")
    .action((jobs: string, o: ConvertFlags, cmd: Command) =>
      trainAction("convert", () =>
        o.format === "branch-tree" || BRANCH_TREE_ONLY.some((f) => fromCli(cmd, f))
          ? branchTreeConvert(jobs, o, cmd)
          : convertRows(jobs, o),
      ),
    );
  withHelp(convert, CONVERT_HELP);
}

const warn = (m: string) => process.stderr.write(`bench train convert: warning: ${m}\n`);

async function convertRows(jobs: string, o: ConvertFlags): Promise<number> {
  const out = o.out as string;
  const res = await convertJob({
    jobs,
    out,
    format: o.format as RowFormat,
    rowMode: o.rowMode as RowMode,
    groupAdvantage: o.groupAdvantage as Normalisation | undefined,
    groupBy: o.groupBy,
    minReward: numberFlag("--min-reward", o.minReward),
    manifest: o.manifest,
    expectedRows: numberFlag("--expected-rows", o.expectedRows, { integer: true, min: 0 }),
    canonicalSelection: o.canonicalSelection,
    rewardVector: Boolean(o.rewardVector),
    subagentRows: Boolean(o.subagentRows),
    includeNonAgentCalls: Boolean(o.includeNonAgentCalls),
    keepGroups: false,
    upstreamRows: (o.upstreamRows as unknown) === true,
    contextPolicy: o.contextPolicy as ContextMode | undefined,
    ...tokenizerFlags(o),
    redact: (o.redact as unknown) !== false,
    onWarning: warn,
  });
  process.stdout.write(`${convertLines(res, out).join("\n")}\n`);
  warnLeftOut(res);
  return 0;
}

/** The rollouts that gave no row, counted with the first of them, so a short file is explained. */
function warnLeftOut(res: ConvertResult): void {
  const notGrade = res.manifest.not_training_grade;
  if (notGrade.length > 0) {
    const first = notGrade[0] as { rollout_dir: string; reason: string };
    warn(
      `${notGrade.length} rollout(s) are not training-grade and gave no row ` +
        `(${first.rollout_dir}: ${first.reason}); --manifest lists them all`,
    );
  }
  const secrets = res.manifest.secrets_in_tokens;
  if (secrets.length > 0) {
    const first = secrets[0] as { rollout_dir: string; reason: string };
    warn(
      `${secrets.length} tokens row(s) left out: their text holds a secret and ` +
        `token ids cannot be redacted (${first.rollout_dir}: ${first.reason}); --no-redact keeps them`,
    );
  }
}

/** Convert flags branch-tree has no use for: refused by name rather than ignored. */
const BRANCH_TREE_REFUSES = [
  "--row-mode",
  "--canonical-selection",
  "--context-policy",
  "--tokenizer",
  "--tokenizer-revision",
  "--max-length",
  "--subagent-rows",
  "--reward-vector",
  "--group-advantage",
] as const;

/** The flags only branch-tree reads. */
const BRANCH_TREE_ONLY = ["--pairs", "--pairs-any-request", "--include-oracle"] as const;

const camel = (flag: string) => flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
/** Whether the user typed the flag (a default is not a choice). */
const fromCli = (cmd: Command, flag: string) => cmd.getOptionValueSource(camel(flag)) === "cli";

// `bench train convert --format branch-tree`: rows of the branch trees of each group.
async function branchTreeConvert(jobs: string, o: ConvertFlags, cmd: Command): Promise<number> {
  if (o.format !== "branch-tree") {
    const flag = BRANCH_TREE_ONLY.find((f) => fromCli(cmd, f));
    throw new UserInputError(`${flag} applies only to --format branch-tree.`);
  }
  const refused = BRANCH_TREE_REFUSES.find((f) => fromCli(cmd, f));
  if (refused) throw new UserInputError(`--format branch-tree does not take ${refused}.`);
  const out = o.out as string;
  const res = await convertBranchTree({
    jobs,
    out,
    groupBy: o.groupBy,
    pairs: fromCli(cmd, "--pairs"),
    pairsAnyRequest: fromCli(cmd, "--pairs-any-request"),
    includeOracle: fromCli(cmd, "--include-oracle"),
    minReward: numberFlag("--min-reward", o.minReward),
    expectedRows: numberFlag("--expected-rows", o.expectedRows, { integer: true, min: 0 }),
    manifest: o.manifest,
    onWarning: warn,
  });
  process.stdout.write(
    `Converted ${res.rows} row(s) from ${res.rollouts} rollout(s) -> ${out}\n` +
      `Branch trees: ${res.trees}; ${res.forks} fork(s), ${res.childRows} child row(s), ${res.pairRows} pair row(s); ` +
      `${res.groupsWithoutFork} group(s) without a fork.\n`,
  );
  if (res.trees === 0 && res.singleRolloutGroups > 0 && res.groupBy.includes("job"))
    warn(
      "every group has one rollout; each trial-NN is a job of its own: " +
        "leave job out of --group-by (for example --group-by task,agent,model)",
    );
  return 0;
}
