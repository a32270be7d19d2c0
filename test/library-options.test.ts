// The library checks its options as the command checks its flags: an unknown option is refused with
// the nearest name, and every error names what the caller wrote (`trials` from code, `--trials` from
// the command), never a flag the caller never typed.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { convertJob, Evaluation, loadJob, streamRollouts, validateFile } from "../src/index.js";
import { bench, EXAMPLES, tempDir } from "./testing/bench.js";

const HELLO = path.join(EXAMPLES, "hello");

/** The message of what `fn` rejects with; fails when it resolves. */
async function refusal(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    assert.equal((err as Error).name, "UserInputError", String(err));
    return (err as Error).message;
  }
  assert.fail("expected a refusal");
}

/** Options objects with a key the types refuse: what a JavaScript caller or a typo through `any` sends. */
const untyped = (o: Record<string, unknown>): any => o;

describe("the library's options", () => {
  let root: string;
  before(async () => {
    root = await tempDir("lib-options");
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it("an unknown Evaluation option is refused with the nearest name", async () => {
    const msg = await refusal(() =>
      new Evaluation(untyped({ tasks: HELLO, agent: "oracle", trails: 2, jobsDir: root })).plan(),
    );
    assert.equal(msg, 'Evaluation: unknown option "trails"; did you mean "trials"?');
  });

  it("an unknown policy option is refused with the nearest name", async () => {
    const msg = await refusal(() =>
      new Evaluation({
        tasks: HELLO,
        agent: "bench-agent",
        model: "vllm/x",
        policy: untyped({ baseURL: "http://127.0.0.1:1/v1" }),
      }).plan(),
    );
    assert.equal(msg, 'Evaluation policy: unknown option "baseURL"; did you mean "baseUrl"?');
  });

  it("errors name the library's options, not the command's flags", async () => {
    const trials = await refusal(() => new Evaluation({ tasks: HELLO, agent: "oracle", trials: 0 }).plan());
    assert.equal(trials, "trials must be an integer >= 1; got 0");
    const agent = await refusal(() => new Evaluation({ tasks: HELLO, agent: "oracel" }).plan());
    assert.match(agent, /^unknown agent "oracel" \(agent\)\. Did you mean oracle\?/);
    const model = await refusal(() => new Evaluation({ tasks: HELLO, agent: "bench-agent" }).plan());
    assert.equal(
      model,
      'agent bench-agent calls a model: pass model: "provider/model" (e.g. model: "vllm/my-policy")',
    );
    const multiplier = await refusal(() =>
      new Evaluation({ tasks: HELLO, agent: "oracle", timeoutMultipliers: { agent: -1 } }).plan(),
    );
    assert.equal(multiplier, "timeoutMultipliers.agent must be a number greater than 0; got -1");
    const seed = await refusal(() =>
      new Evaluation({
        tasks: HELLO,
        agent: "bench-agent",
        model: "vllm/x",
        policy: { baseUrl: "http://127.0.0.1:1/v1", seed: 1.5 },
      }).plan(),
    );
    assert.equal(seed, "policy.seed must be a whole number >= 0; got 1.5");
    for (const msg of [trials, agent, model, multiplier, seed])
      assert.doesNotMatch(msg, /--[a-z]|\(-[a-z]\)|-m /);
  });

  it("a jobsDir that is a file is named as the library's option", async () => {
    const file = path.join(root, "a-file");
    await fs.writeFile(file, "x");
    const msg = await refusal(() =>
      new Evaluation({ tasks: HELLO, agent: "oracle", jobsDir: file, sandbox: "namespace" }).run(),
    );
    assert.equal(msg, `jobsDir ${file}: not a folder; pass a folder, or a path where one can be made`);
  });

  it("refusals deeper in the library name its options too: include, jobsDir, jobName", async () => {
    const include = await refusal(() =>
      new Evaluation({ tasks: EXAMPLES, agent: "oracle", include: ["helo"] }).plan(),
    );
    assert.match(include, /^include helo matches none of the \d+ task\(s\) in /);
    const empty = path.join(root, "no-rollouts");
    await fs.mkdir(empty);
    const nothing = await refusal(() => convertJob({ jobs: empty, out: path.join(root, "none.jsonl") }));
    assert.match(nothing, /holds no rollout .*\(its jobsDir\), a job folder or a rollout folder/);
    const file = path.join(root, "not-a-folder.jsonl");
    await fs.writeFile(file, "");
    const stream = await refusal(async () => {
      for await (const _ of streamRollouts(file, { follow: false })) break;
    });
    assert.match(stream, /is a file, not a folder; .*\(the run's jobsDir\)/);
    // One job name, planned for other tasks: the fix names jobName.
    const jobsDir = path.join(root, "jobs-reused");
    const same = { agent: "oracle", jobsDir, jobName: "same", sandbox: "namespace" } as const;
    const first = await new Evaluation({ ...same, tasks: HELLO }).run();
    assert.equal(first.results[0]?.rewards?.reward, 1);
    const reused = await refusal(() =>
      new Evaluation({ ...same, tasks: EXAMPLES, include: ["half-life"] }).run(),
    );
    assert.match(
      reused,
      /was planned for tasks hello; this run differs\. Use another jobName to start a new job\./,
    );
    for (const msg of [include, nothing, stream, reused]) assert.doesNotMatch(msg, /--[a-z]/);
  });

  it("the command still names its flags for the same mistakes", async () => {
    const r = await bench(["run", HELLO, "-a", "oracel", "--trials", "2", "--jobs-dir", root]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown agent "oracel" \(-a\)/);
  });

  it("convertJob without out says so, not Node's paths[0] TypeError", async () => {
    const msg = await refusal(() => convertJob(untyped({ jobs: root })));
    assert.equal(msg, 'out is required: the file the rows go to, e.g. out: "train/rows.jsonl"');
  });

  it("convertJob, streamRollouts, validateFile and loadJob refuse unknown options", async () => {
    const out = path.join(root, "rows.jsonl");
    assert.equal(
      await refusal(() => convertJob(untyped({ jobs: root, out, fromat: "trl-sft" }))),
      'convertJob: unknown option "fromat"; did you mean "format"?',
    );
    assert.equal(
      await refusal(async () => {
        for await (const _ of streamRollouts(root, untyped({ follow: false, groupsize: 4 }))) break;
      }),
      'streamRollouts: unknown option "groupsize"; did you mean "groupSize"?',
    );
    await fs.writeFile(out, "");
    assert.equal(
      await refusal(() => validateFile(out, untyped({ expectRows: 1 }))),
      'validateFile: unknown option "expectRows"; did you mean "expectedRows"?',
    );
    assert.equal(
      await refusal(() => loadJob(root, untyped({ attempt: "all" }))),
      'loadJob: unknown option "attempt"; did you mean "attempts"?',
    );
  });
});
