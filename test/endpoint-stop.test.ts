// A run whose policy endpoint is down stops after M provider_error rollouts in a row, records the
// trials it never started, says once how to finish, and a rerun with the printed --job-name (the
// endpoint back) runs exactly what is missing: the not-started trials and the provider_error ones.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadJob } from "../src/jobs-dir/load-job.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { bench, EXAMPLES, REPO, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("endpoint-stop");

function runArgs(jobsDir: string, baseUrl: string, extra: string[] = []): string[] {
  return [
    "run",
    path.join(EXAMPLES, "hello"),
    "-a",
    "bench-agent",
    "-m",
    "vllm/scripted",
    "--base-url",
    baseUrl,
    "--trials",
    "5",
    "-j",
    "1",
    "--retry-attempts",
    "0",
    "--sandbox",
    "namespace",
    "--jobs-dir",
    jobsDir,
    ...extra,
  ];
}

describe("bench run: an endpoint that stays down stops the run", () => {
  it("stops after three provider_error rollouts, records two not started, and a rerun finishes them", async () => {
    const jobsDir = path.join(scratch(), "jobs");
    const down = await bench(runArgs(jobsDir, "http://127.0.0.1:9/v1"));
    assert.equal(down.code, 1, down.stderr);
    assert.match(down.stdout, /3 rollout\(s\): .*\(3 provider_error\); 2 not started/);
    const stops = down.stderr.match(/bench: stopped: /g) ?? [];
    assert.equal(stops.length, 1, `said once: ${down.stderr}`);
    assert.match(down.stderr, /at http:\/\/127\.0\.0\.1:9\/v1 failed 3 rollouts in a row/);
    const jobName = down.stderr.match(/--job-name (\S+)/)?.[1];
    assert.ok(jobName, down.stderr);

    const summaries = await Promise.all(
      ["trial-01", "trial-02", "trial-03", "trial-04", "trial-05"].map(async (t) =>
        JSON.parse(await fs.readFile(path.join(jobsDir, "bench-agent", t, jobName, "summary.json"), "utf8")),
      ),
    );
    assert.deepEqual(
      summaries.map((s) => [s.total, s.not_started, s.stopped?.reason ?? null]),
      [
        [1, 0, null],
        [1, 0, null],
        [1, 0, null],
        [0, 1, "endpoint_failing"],
        [0, 1, "endpoint_failing"],
      ],
    );
    const loaded = await loadJob(path.join(jobsDir, "bench-agent"));
    assert.equal(loaded.counts.outcomes.provider_error, 3);
    assert.equal(loaded.counts.notStarted, 2);

    const policy = await startScriptedEndpoint({
      script: await loadEndpointScript(path.join(REPO, "examples/policies/hello.json")),
    });
    try {
      const back = await bench(runArgs(jobsDir, policy.baseUrl, ["--job-name", jobName]));
      assert.equal(back.code, 0, back.stderr);
      assert.match(back.stdout, /5 rollout\(s\): 5 passed/);
    } finally {
      await policy.close();
    }
    const all = await rollouts(jobsDir);
    assert.equal(all.length, 8, "3 provider_error attempts kept beside 5 scored ones");
    const replaced = await Promise.all(
      all
        .filter((r) => r.result?.error_category === "provider_error")
        .map(async (r) => JSON.parse(await fs.readFile(path.join(r.dir, "replaced.json"), "utf8")).reason),
    );
    assert.deepEqual(replaced, ["resumed", "resumed", "resumed"]);
    const final = await loadJob(path.join(jobsDir, "bench-agent"));
    assert.deepEqual(
      final.trials.map((t) => t.reward),
      [1, 1, 1, 1, 1],
    );
  });
});
