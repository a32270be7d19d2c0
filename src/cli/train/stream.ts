// `bench train stream PATH`: one record per rollout as rollouts finish, already-finished ones first;
// with --group-size, a group's rollouts together with their advantages.
import { once } from "node:events";
import type { Command } from "commander";
import { UserInputError } from "../../errors.js";
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import { textLine } from "../../train/console.js";
import { endCounts, type StreamEnd } from "../../train/stream/end.js";
import { streamRollouts } from "../../train/stream/stream.js";
import { floatJson } from "../../util/float-json.js";
import { withHelp } from "../help.js";
import { STREAM_HELP } from "../help-pages.js";
import { numberFlag } from "../options.js";
import { trainAction } from "./action.js";
import { GROUP_BY_HELP } from "./flags.js";

type StreamFlags = Record<string, string | boolean | undefined>;

export function registerStream(train: Command): void {
  const stream = train
    .command("stream")
    .description("Print one JSON record per rollout as rollouts finish, already-finished ones first")
    .argument("<path>", "a job folder or a folder of jobs (it may not exist yet)")
    .option("--follow", "keep watching until every planned job has finished")
    .option("--no-follow", "scan once and stop")
    .option(
      "--group-size <n>",
      "hold a group's rollouts until n have finished, then print them with advantages",
    )
    .option("--group-by <keys>", GROUP_BY_HELP)
    .option("--group-advantage <kind>", "grpo or loo", "grpo")
    .option("--poll-interval <seconds>", "how often to look when file-system events are missed", "1")
    .option("--timeout <seconds>", "stop after this long (exit 3)")
    .option("--format <format>", "jsonl or text", "jsonl")
    .option(
      "--include-non-agent-calls",
      "token sequences also from calls another process in the sandbox made (a command the agent's tools ran)",
    )
    .action((input: string, o: StreamFlags) => trainAction("stream", () => streamCommand(input, o)));
  withHelp(stream, STREAM_HELP);
}

async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, "drain");
}

async function streamCommand(input: string, o: StreamFlags): Promise<number> {
  const format = o.format as string;
  if (format !== "jsonl" && format !== "text")
    throw new UserInputError(`--format: use jsonl or text, not "${format}".`);
  const timeout = numberFlag("--timeout", o.timeout as string | undefined, { min: 0 });
  const controller = new AbortController();
  // A reader that went away (a closed pipe) ends the stream quietly.
  const onError = () => controller.abort();
  process.stdout.once("error", onError);
  let n = 0;
  let end: StreamEnd | null = null;
  try {
    const records = streamRollouts(input, {
      follow: o.follow !== false,
      groupSize: numberFlag("--group-size", o.groupSize as string | undefined, { integer: true, min: 1 }),
      groupBy: o.groupBy as string,
      groupAdvantage: o.groupAdvantage as Normalisation,
      includeNonAgentCalls: Boolean(o.includeNonAgentCalls),
      pollIntervalMs: (numberFlag("--poll-interval", o.pollInterval as string, { min: 0.01 }) ?? 1) * 1000,
      timeoutMs: timeout === undefined ? undefined : timeout * 1000,
      signal: controller.signal,
      onWarning: (m) => process.stderr.write(`bench train stream: warning: ${m}\n`),
      onEnd: (e) => {
        end = e;
      },
    });
    for await (const r of records) {
      if (controller.signal.aborted) break;
      await writeOut(format === "text" ? `${textLine(r)}\n` : `${floatJson(r)}\n`);
      n++;
    }
  } finally {
    process.stdout.off("error", onError);
    const counts = end ? `; ${endCounts(end)}` : "";
    process.stderr.write(`bench train stream: ${n} rollouts streamed${counts}\n`);
  }
  return 0;
}
