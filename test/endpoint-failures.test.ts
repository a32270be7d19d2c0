// A failed policy endpoint is never a reward (issue 9), for bench-agent and the real claude-code,
// codex and opencode CLIs, in the container and namespace sandboxes. Against a scripted endpoint that
// answers 500, a 200 that is not JSON, a stream it cuts short, never answers (with the gateway's limits
// set short), and nothing listening: provider_error, unscored, long before the agent's time limit
// (600 s here). Two failed calls then a recovery: scored, n_failed_model_calls 2. A 401: config_error,
// said once. A 400 on the last call: the policy's, scored. And a GRPO group with a provider_error
// member is withheld, naming provider_error.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { nameFlags } from "../src/cli/option-flags.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { bench, useScratch } from "./testing/bench.js";
import {
  AGENT_TIMEOUT_SEC,
  closedPort,
  OUTAGE_AGENTS,
  type OutageAgent,
  outageScript,
  outageTasks,
  runOutage,
  solveReplies,
} from "./testing/outage.js";

const scratch = useScratch("endpoint-failures");

// The fixes in the run's messages name the flags, as they do when the bench command runs.
nameFlags();

/**
 * "Well under the agent's time limit": a quarter of it, far above the seconds fail-fast should take
 * (a real CLI on a loaded 2-core machine has taken a minute just to start and give up).
 */
const WELL_UNDER_SEC = AGENT_TIMEOUT_SEC / 4;

/** The scenarios one scripted server serves in one run; each is a task whose instruction names it. */
const SERVED = {
  "status-500": "SCENARIO-500",
  "not-json": "SCENARIO-MALFORMED",
  "cut-short": "SCENARIO-CUT",
  "never-answers": "SCENARIO-HANG",
  recovers: "SCENARIO-RECOVER",
  "last-400": "SCENARIO-LAST-400",
};
const DOWN = ["status-500", "not-json", "cut-short", "never-answers"];

/** The gateway's limits, short enough that "never answers" fails in seconds. */
const SHORT_LIMITS = { firstByteTimeoutSec: 2, idleTimeoutSec: 2 };

function assertProviderError(r: Record<string, any> | undefined, what: string): void {
  assert.ok(r, `${what}: a result.json`);
  assert.equal(r.error_category, "provider_error", `${what}: ${r.error}`);
  assert.equal(r.rewards, null, `${what}: unscored`);
  const ran = Number(r.timing?.agent_execution);
  assert.ok(
    Number.isFinite(ran) && ran < WELL_UNDER_SEC,
    `${what}: ended after ${ran} s of agent time, not waiting for the ${AGENT_TIMEOUT_SEC} s limit`,
  );
}

async function matrixCell(agent: OutageAgent, sandbox: "container" | "namespace"): Promise<void> {
  const dir = path.join(scratch(), `${agent}-${sandbox}`);
  const tasks = await outageTasks(path.join(dir, "tasks"), SERVED);
  const closedTasks = await outageTasks(path.join(dir, "closed-tasks"), {
    "nothing-listening": "SCENARIO-ANY",
  });
  const authTasks = await outageTasks(path.join(dir, "auth-tasks"), {
    "bad-key-a": "SCENARIO-ANY",
    "bad-key-b": "SCENARIO-ANY",
  });
  const script = outageScript(agent);
  const common = { agent, sandbox, retryAttempts: 0 } as const;
  const [served, closed, auth] = await Promise.all([
    runOutage(script, {
      ...common,
      tasks,
      concurrency: Object.keys(SERVED).length,
      // Four rollouts end provider_error in this job on purpose: do not stop it for that.
      failFastRollouts: 100,
      jobsDir: path.join(dir, "jobs-served"),
      policy: SHORT_LIMITS,
    }),
    runOutage(
      script,
      { ...common, tasks: closedTasks, jobsDir: path.join(dir, "jobs-closed"), policy: SHORT_LIMITS },
      { baseUrl: `http://127.0.0.1:${await closedPort()}/v1` },
    ),
    runOutage(
      script,
      {
        ...common,
        tasks: authTasks,
        concurrency: 1,
        jobsDir: path.join(dir, "jobs-auth"),
        policy: { ...SHORT_LIMITS, apiKey: "sk-wrong" },
      },
      { serverKey: "sk-right" },
    ),
  ]);
  const cell = `${agent} in ${sandbox}`;

  for (const name of DOWN) assertProviderError(served.byTask[name], `${cell}, ${name}`);
  assertProviderError(closed.byTask["nothing-listening"], `${cell}, nothing listening`);

  const recovered = served.byTask.recovers;
  assert.equal(recovered?.error_category, null, `${cell}, recovers: ${recovered?.error}`);
  assert.equal(recovered?.rewards?.reward, 1, `${cell}, recovers: scored`);
  assert.equal(recovered?.n_failed_model_calls, 2, `${cell}, recovers: two failed calls counted`);
  assert.equal(recovered?.agent_result?.n_failed_model_calls, 2, `${cell}, recovers: in agent_result too`);
  assert.ok(
    Number(recovered?.n_model_calls) >= 3,
    `${cell}, recovers: the failed calls and the good ones are model calls (${recovered?.n_model_calls})`,
  );

  const refused = served.byTask["last-400"];
  assert.ok(refused, `${cell}, last-400: a result.json`);
  assert.notEqual(refused.rewards, null, `${cell}, last-400: the verifier ran (${refused.error})`);
  assert.equal(refused.rewards.reward, 1, `${cell}, last-400: the file written before the 400 counts`);
  assert.ok(
    !["provider_error", "config_error"].includes(refused.error_category),
    `${cell}, last-400: a 400 is the policy's, not the endpoint's (${refused.error_category})`,
  );

  // A 401 is the user's configuration: config_error, unscored, said once for the whole run.
  const authResults = Object.values(auth.byTask);
  assert.ok(authResults.length >= 1, `${cell}, 401: at least one rollout recorded`);
  for (const r of authResults) {
    assert.ok(
      ["config_error", "not_started"].includes(r.error_category),
      `${cell}, 401: ${r.task_name} ended ${r.error_category}: ${r.error}`,
    );
    assert.equal(r.rewards, null, `${cell}, 401: unscored`);
  }
  assert.ok(authResults.some((r) => r.error_category === "config_error"));
  // Said once: the run stops with the reason and the fix, and no warning or later trial repeats it.
  const stops = auth.events.filter((e) => e.type === "stopped");
  assert.equal(stops.length, 1, `${cell}, 401: one stop; events: ${JSON.stringify(stops)}`);
  const stopped = auth.result.stopped as { reason?: string; message?: string } | null;
  assert.equal(stopped?.reason, "config_error", `${cell}, 401: ${JSON.stringify(stopped)}`);
  assert.match(stopped?.message ?? "", /401/, `${cell}, 401: the message names the status`);
  assert.match(stopped?.message ?? "", /--api-key/, `${cell}, 401: the message says the fix`);
  const repeated = auth.warnings.filter((w) => /401/.test(w));
  assert.deepEqual(repeated, [], `${cell}, 401: not said again as a warning`);
  assert.equal(
    authResults.filter((r) => r.error_category === "config_error").length,
    1,
    `${cell}, 401: the second trial does not start to meet the same refusal`,
  );
  assert.notEqual(auth.result.exitCode, 0, `${cell}, 401: the run fails`);
}

// Every agent in the namespace sandbox; in the container sandbox bench-agent (on the host) and one CLI
// (through the container's relay), which keeps CI within its time: the witness is the same code for
// every CLI. BENCHFLOW_FULL_MATRIX=run runs every agent in both.
const inContainer = (agent: string) =>
  process.env.BENCHFLOW_FULL_MATRIX === "run" || agent === "bench-agent" || agent === "claude-code";

for (const sandbox of ["namespace", "container"] as const) {
  describe(`endpoint failures, ${sandbox} sandbox`, () => {
    for (const agent of OUTAGE_AGENTS.filter((a) => sandbox === "namespace" || inContainer(a))) {
      it(`${agent}: endpoint down is provider_error, a recovery is scored, 401 is config_error, a last 400 is scored`, async (t) => {
        if (sandbox === "container" && !(await engineOrSkip(t))) return;
        await matrixCell(agent, sandbox);
      });
    }
  });
}

describe("endpoint failures: training data", () => {
  it("bench train convert --group-advantage grpo withholds a group with a provider_error member, naming it", async () => {
    const dir = path.join(scratch(), "grpo");
    const tasks = await outageTasks(path.join(dir, "tasks"), { hello: "SCENARIO-GROUP" });
    // The trials of a group run one after another: the first meets the outage and uses it up.
    const script = {
      conversations: [{ replies: [{ fail: { status: 500 }, times: 1 }, ...solveReplies("bench-agent")] }],
    };
    const jobsDir = path.join(dir, "jobs");
    const run = await runOutage(script, {
      agent: "bench-agent",
      sandbox: "namespace",
      trials: 3,
      retryAttempts: 0,
      tasks,
      jobsDir,
      policy: { failFastCalls: 1 },
    });
    const outcomes = run.result.results.map((r) => [r.trial, r.error_category, r.rewards?.reward ?? null]);
    assert.deepEqual(
      outcomes.map(([, category]) => category).sort(),
      [null, null, "provider_error"],
      JSON.stringify(outcomes),
    );
    const rows = path.join(dir, "rows.jsonl");
    const manifestFile = path.join(dir, "manifest.json");
    const convert = await bench([
      "train",
      "convert",
      jobsDir,
      "-o",
      rows,
      "--group-advantage",
      "grpo",
      // Each trial is a job of its own: the group of a task's 3 rollouts is by task, agent and model.
      "--group-by",
      "task,agent,model",
      "--manifest",
      manifestFile,
    ]);
    assert.equal(convert.code, 0, convert.stdout + convert.stderr);
    const manifest = JSON.parse(await fs.readFile(manifestFile, "utf8"));
    const groups: Record<string, any>[] = manifest.training_signal?.groups ?? [];
    assert.equal(groups.length, 1, JSON.stringify(manifest));
    const [group] = groups;
    assert.ok(group?.withheld, `the group is withheld: ${JSON.stringify(group)}`);
    assert.equal(group.rollouts, 3);
    // outcome is upstream's bucket (errored); our category is outcome_category.
    const member = group.members.find(
      (m: Record<string, any>) => m.outcome_category === "provider_error" && m.outcome === "errored",
    );
    assert.ok(member, `a member with outcome_category provider_error: ${JSON.stringify(group.members)}`);
    // The manifest names provider_error as what withheld the group, not only "an unscored member".
    assert.deepEqual(group.withheld_outcomes, ["provider_error"], JSON.stringify(group));
    // Withheld whole: no advantages, no rows for the group's members.
    assert.ok(group.members.every((m: Record<string, any>) => m.advantage === null));
    const written = (await fs.readFile(rows, "utf8")).split("\n").filter((l) => l.trim() !== "");
    assert.equal(written.length, 0, "a withheld group gives no rows");
  });
});
