// Every entry point of the library, given bad options as code would give them: a UserInputError that
// names the library's option (its key in the options object, or the argument), never a flag of the
// `bench` command the caller never typed. The command's own names for the same mistakes are held by
// test/cli-errors.test.ts and test/option-flags.test.ts.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  convertJob,
  Evaluation,
  loadJob,
  loadRunSummary,
  loadTask,
  parseGroupBy,
  readRolloutConfig,
  scanJobs,
  scanRollouts,
  startViewServer,
  streamRollouts,
  validateFile,
  validateRows,
} from "../src/index.js";
import { EXAMPLES, tempDir } from "./testing/bench.js";

const HELLO = path.join(EXAMPLES, "hello");

/** Options a JavaScript caller (or a typo through `any`) sends. */
const untyped = (o: Record<string, unknown>): any => o;

/**
 * The message of what `fn` throws or rejects with (a stream: when read), which must be one of the
 * library's own errors: bad input (UserInputError) or bad data it was given (DataError).
 */
async function refusal(fn: () => unknown): Promise<string> {
  try {
    const r = await fn();
    if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function")
      for await (const _ of r as AsyncIterable<unknown>) break;
  } catch (err) {
    assert.ok(["UserInputError", "DataError"].includes((err as Error).name), String((err as Error).stack));
    return (err as Error).message;
  }
  assert.fail("expected a refusal");
}

/** What a message of the command would have: a long flag, or a short one standing as a flag. */
const FLAG = /(?<![\w-])--[a-z][a-z0-9-]+|(?<![\w-])-[a-zjm](?=[\s/)])/;

describe("every entry point of the library names its own options", () => {
  let root: string;
  let jobs: string;
  before(async () => {
    root = await tempDir("lib-entry-points");
    jobs = path.join(root, "jobs");
    // A real run's folder, for the readers.
    const run = await new Evaluation({
      tasks: HELLO,
      agent: "oracle",
      jobsDir: jobs,
      sandbox: "namespace",
    }).run();
    assert.equal(run.exitCode, 0);
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  const cases: Array<[string, (root: string, jobs: string) => unknown, RegExp]> = [
    [
      "Evaluation: trials",
      () => new Evaluation({ tasks: HELLO, agent: "oracle", trials: 0 }).plan(),
      /^trials /,
    ],
    [
      "Evaluation: concurrency",
      () => new Evaluation({ tasks: HELLO, agent: "oracle", concurrency: -1 }).plan(),
      /^concurrency /,
    ],
    [
      "Evaluation: maxConcurrentTrials",
      () => new Evaluation({ tasks: HELLO, agent: "oracle", maxConcurrentTrials: 0 }).plan(),
      /^maxConcurrentTrials /,
    ],
    [
      "Evaluation: failFastRollouts",
      () => new Evaluation({ tasks: HELLO, agent: "oracle", failFastRollouts: 0 }).plan(),
      /^failFastRollouts /,
    ],
    [
      "Evaluation: jobName",
      () => new Evaluation({ tasks: HELLO, agent: "oracle", jobName: "a/b" }).plan(),
      /^jobName "a\/b" must be one folder name/,
    ],
    [
      "Evaluation: exclude",
      () => new Evaluation({ tasks: EXAMPLES, agent: "oracle", exclude: ["*"] }).plan(),
      /^include\/exclude leave none/,
    ],
    [
      "Evaluation: policy.baseUrl",
      () => new Evaluation({ tasks: HELLO, agent: "bench-agent", model: "vllm/x" }).plan(),
      /pass policy\.baseUrl: "http:\/\/HOST:PORT\/v1"/,
    ],
    [
      "Evaluation: policy.failFastCalls",
      () =>
        new Evaluation({
          tasks: HELLO,
          agent: "bench-agent",
          model: "vllm/x",
          policy: { baseUrl: "http://127.0.0.1:1/v1", failFastCalls: 0 },
        }).plan(),
      /^policy\.failFastCalls must be an integer/,
    ],
    [
      "Evaluation: skillsDir",
      (r) =>
        new Evaluation({
          tasks: HELLO,
          agent: "claude-code",
          model: "x/y",
          skillsDir: path.join(r, "none"),
        }).plan(),
      /^skillsDir .*: not a folder/,
    ],
    [
      "Evaluation: a run with a jobsDir that is a file",
      async (r) => {
        const file = path.join(r, "a-file");
        await fs.writeFile(file, "");
        return new Evaluation({ tasks: HELLO, agent: "oracle", jobsDir: file, sandbox: "namespace" }).run();
      },
      /^jobsDir .*: not a folder/,
    ],
    [
      "loadJob: attempts",
      (_, j) => loadJob(j, untyped({ attempts: "some" })),
      /attempts is "final" or "all"/,
    ],
    ["loadJob: a folder that is not there", (r) => loadJob(path.join(r, "none")), /does not exist/],
    ["convertJob: out", (_, j) => convertJob(untyped({ jobs: j })), /^out is required/],
    [
      "convertJob: format",
      (r, j) => convertJob(untyped({ jobs: j, out: path.join(r, "o.jsonl"), format: "x" })),
      /^format: unknown format/,
    ],
    [
      "convertJob: rowMode with tokens",
      (r, j) => convertJob({ jobs: j, out: path.join(r, "o.jsonl"), format: "tokens", rowMode: "exchange" }),
      /^rowMode: "exchange" does not apply to format: "tokens"/,
    ],
    [
      "convertJob: groupAdvantage",
      (r, j) => convertJob(untyped({ jobs: j, out: path.join(r, "o.jsonl"), groupAdvantage: "ppo" })),
      /^groupAdvantage: use grpo or loo/,
    ],
    [
      "convertJob: groupBy",
      (r, j) => convertJob({ jobs: j, out: path.join(r, "o.jsonl"), groupBy: "task,colour" }),
      /^groupBy: unknown key/,
    ],
    [
      "convertJob: expectedRows",
      (r, j) => convertJob({ jobs: j, out: path.join(r, "o.jsonl"), expectedRows: 99 }),
      /^expectedRows 99: the conversion gives/,
    ],
    [
      "convertJob: contextPolicy",
      (r, j) =>
        convertJob({
          jobs: j,
          out: path.join(r, "o.jsonl"),
          format: "trl-sft",
          contextPolicy: "message-window",
        }),
      /^contextPolicy: "message-window" requires tokenizer and maxLength/,
    ],
    [
      "streamRollouts: groupSize",
      (_, j) => streamRollouts(j, { follow: false, groupSize: 0 }),
      /^groupSize: give a whole number/,
    ],
    [
      "streamRollouts: groupAdvantage",
      (_, j) => streamRollouts(j, untyped({ follow: false, groupAdvantage: "x" })),
      /^groupAdvantage: use grpo or loo/,
    ],
    [
      "streamRollouts: a file",
      async (r) => {
        const file = path.join(r, "f.jsonl");
        await fs.writeFile(file, "");
        return streamRollouts(file, { follow: false });
      },
      /\(the run's jobsDir\)/,
    ],
    ["validateRows: format", () => validateRows([], untyped({ format: "x" })), /^format: unknown format/],
    [
      "validateFile: an unknown option",
      async (r) => {
        const file = path.join(r, "rows.jsonl");
        await fs.writeFile(file, "");
        return validateFile(file, untyped({ rowz: 1 }));
      },
      /^validateFile: unknown option "rowz"/,
    ],
    ["scanJobs: a folder that is not there", (r) => scanJobs(path.join(r, "none")), /no such folder/],
    [
      "scanRollouts: a file",
      async (r) => {
        const file = path.join(r, "g.txt");
        await fs.writeFile(file, "");
        return scanRollouts(file);
      },
      /is a file, not a folder/,
    ],
    ["parseGroupBy: a key", () => parseGroupBy("task,nope"), /^groupBy: unknown key "nope"/],
    [
      "loadRunSummary: advantage",
      (_, j) => loadRunSummary(j, { advantage: "x" }),
      /^advantage: use grpo or loo/,
    ],
    ["loadRunSummary: groupBy", (_, j) => loadRunSummary(j, { groupBy: "nope" }), /^groupBy: unknown key/],
    ["startViewServer: jobsDir", (r) => startViewServer({ jobsDir: path.join(r, "none") }), /no such folder/],
    [
      "loadTask: a folder without a task",
      (r) => loadTask(r),
      /is not a task folder: a task folder needs task\.md/,
    ],
    [
      "readRolloutConfig: a config.json that is not one",
      async (r) => {
        const dir = path.join(r, "t__00000001");
        await fs.mkdir(dir, { recursive: true });
        await fs.writeFile(path.join(dir, "config.json"), '{"task_name": 3}');
        return readRolloutConfig(dir);
      },
      /./,
    ],
  ];

  for (const [name, call, named] of cases)
    it(name, async () => {
      const message = await refusal(() => call(root, jobs));
      assert.match(message, named);
      assert.doesNotMatch(message, FLAG, `a flag in the library's message: ${message}`);
    });
});
