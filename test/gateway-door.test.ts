// The gateway as a closed door, with the real agent CLIs in both sandboxes: the scripted policy makes
// the agent's shell post a forged conversation with the inherited key, a fork of the real one (its
// opening plus a turn), a call asking for n: 64 and a logit bias, and a body over the cap. Each is
// recorded, flagged as another process's call and counted; none reaches a row in any format or row
// mode, nor the stream's or token-coverage's counts; the policy server never sees the knobs. And a
// rollout that floods the relay with idle connections and its recorded bytes past the cap hurts only
// itself: its sibling in the same job at -j 2 scores 1.0 and the jobs folder stays small.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { trainingCalls } from "../src/jobs-dir/exchange.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { convertJob } from "../src/train/convert/convert.js";
import { streamRollouts } from "../src/train/stream/stream.js";
import { tokenCoverage } from "../src/train/tokens/coverage.js";
import {
  CLI_AGENTS,
  jsonLines,
  llmCalls,
  readJson,
  runAgent,
  scriptFor,
  shellCall,
} from "./testing/agents.js";
import { EXAMPLES, rollouts, useScratch } from "./testing/bench.js";
import { namespaceRan } from "./testing/engine-pass.js";

const scratch = useScratch("gateway-door");
// What the shell's calls carry; the command that makes them spells each differently (the agent's own
// next call holds the command's text, which may become a row).
const MARKS = ["FORGED-CONVERSATION-91c", "FORK-TURN-91c", "SAMPLING-KNOBS-91c", "OVERSIZED-91c"];
const spelled = (mark: string) => mark.replace("91c", "'$((90+1))'c");

// bash only (/dev/tcp, builtins): the images have no curl, and a child would share the socket.
const POST = `gw=\${BENCHFLOW_GATEWAY_URL#http://}; h=\${gw%:*}; p=\${gw##*:}
ah="Author""ization"; bh="Bear""er"; kh="x-api""-key"
post() { exec 9<>/dev/tcp/$h/$p || return; printf 'POST %s HTTP/1.1\\r\\nHost: %s\\r\\n%s: %s %s\\r\\n%s: %s\\r\\nContent-Type: application/json\\r\\nContent-Length: %s\\r\\nConnection: close\\r\\n\\r\\n%s' "$1" "$h" "$ah" "$bh" "$BENCHFLOW_API_KEY" "$kh" "$BENCHFLOW_API_KEY" "\${#2}" "$2" >&9; while IFS= read -r l <&9; do :; done; exec 9>&-; }`;

const instruction = async () =>
  (await fs.readFile(path.join(EXAMPLES, "hello/instruction.md"), "utf8")).trim();

async function forgeries(): Promise<string> {
  const opening = JSON.stringify(await instruction());
  const chat = (messages: string, extra = "") => `'{"model":"scripted",${extra}"messages":${messages}}'`;
  return [
    POST,
    `post /v1/chat/completions ${chat(`[{"role":"user","content":"${spelled(MARKS[0] as string)}"}]`)}`,
    `post /v1/chat/completions ${chat(`[{"role":"user","content":${opening.replace(/'/g, "")}},{"role":"assistant","content":"${spelled(MARKS[1] as string)}"},{"role":"user","content":"more"}]`)}`,
    `post /v1/chat/completions ${chat(`[{"role":"user","content":"${spelled(MARKS[2] as string)}"}]`, '"n":64,"logit_bias":{"50256":100},"best_of":64,')}`,
    `big=$(head -c 1300000 /dev/zero | tr '\\0' a); post /v1/chat/completions '{"model":"scripted","messages":[{"role":"user","content":"${spelled(MARKS[3] as string)}'"$big"'"}]}'`,
    "echo 'Hello, world!' > /app/hello.txt",
  ].join("\n");
}

/**
 * Gemini CLI's shell tool refuses a command with `$(...)` in it (before running any of it): the same
 * script reaches its shell base64-encoded, as a policy would send it.
 */
async function forgeriesFor(vocabulary: string): Promise<string> {
  const script = await forgeries();
  if (vocabulary !== "gemini-cli") return script;
  return `echo ${Buffer.from(script).toString("base64")} | base64 -d | bash`;
}

const has = (v: unknown, mark: string) => JSON.stringify(v).includes(mark);

async function rowsOf(
  jobsDir: string,
  format: "prime-sft" | "trl-sft" | "tokens",
  rowMode: "rollout" | "exchange",
  include = false,
) {
  const out = path.join(jobsDir, `rows-${format}-${rowMode}-${include}.jsonl`);
  const r = await convertJob({ jobs: jobsDir, out, format, rowMode, includeNonAgentCalls: include });
  return { rows: await jsonLines(out), manifest: r.manifest };
}

for (const sandbox of ["namespace", "container"] as const) {
  describe(`the gateway's door, ${sandbox} sandbox`, namespaceRan(sandbox), () => {
    // The ACP agents: the two adapters speak Claude Code's and Codex's vocabularies; Qwen Code its own.
    const agents = [
      ...CLI_AGENTS.map((a) => [a, a] as const),
      ["claude-agent-acp", "claude-code"] as const,
      ["codex-acp", "codex"] as const,
      ["qwen-code", "qwen-code"] as const,
      // Kilo Code, OpenCode's fork, speaks OpenCode's vocabulary.
      ["kilo", "opencode"] as const,
      ["gemini-cli", "gemini-cli"] as const,
      ["pi", "pi"] as const,
    ];
    for (const [agent, vocabulary] of agents) {
      it(`${agent}: the shell's forged, forked and off-policy calls are flagged, counted and in no row; the knobs never reach the policy`, async (t) => {
        if (sandbox === "container" && !(await engineOrSkip(t))) return;
        const script = scriptFor(vocabulary, [
          // The forged conversation gets a plain answer, so that with the flag it is a row.
          { match: MARKS[0], replies: [{ content: "Noted." }] },
          {
            replies: [
              { content: "Working.", tool_calls: [shellCall(vocabulary, await forgeriesFor(vocabulary))] },
              { content: "Done." },
            ],
          },
        ]);
        const jobsDir = path.join(scratch(), `${sandbox}-${agent}`);
        const { result, requests, found } = await runAgent(script, {
          tasks: path.join(EXAMPLES, "hello"),
          agent,
          sandbox,
          jobsDir,
          captureTokens: true,
          policy: { maxCallMib: 1 },
        });
        const [r] = result.results;
        assert.equal(r?.error, null, JSON.stringify(r?.error));
        assert.equal(r?.rewards?.reward, 1);
        const dir = found[0]?.dir ?? "";
        const lines = await llmCalls(dir);
        // Every call the shell made is recorded as another process's; the agent's own are the agent's.
        for (const mark of MARKS.slice(0, 3)) {
          const line = lines.find((l) => has(l.request, mark));
          assert.ok(line, `${mark} is recorded`);
          assert.equal(
            line.metadata.origin?.kind,
            "other",
            `${mark}: ${JSON.stringify(line.metadata.origin)}`,
          );
        }
        const own = lines.filter((l) => l.metadata.origin?.kind === "agent");
        assert.ok(own.length >= 2, `the agent's own calls: ${lines.map((l) => l.metadata.origin?.kind)}`);
        const oversized = lines.find((l) => l.metadata.refused);
        assert.ok(oversized, "the call over the cap is recorded as refused");
        assert.equal(oversized.metadata.origin?.kind, "other");
        assert.equal(oversized.response.status_code, 413);
        const others = lines.filter((l) => l.metadata.origin?.kind === "other").length;
        const written = await readJson(path.join(dir, "result.json"));
        assert.equal(written.gateway_integrity.calls_by_origin.other, others);
        assert.equal(written.gateway_integrity.calls_by_origin.agent, own.length);
        // What was asked for is not what was sent: the knobs were dropped and named.
        const knobs = lines.find((l) => has(l.request, MARKS[2] as string)) ?? {};
        for (const field of ["n", "logit_bias", "best_of"]) {
          assert.ok(knobs.metadata.dropped_fields.includes(field), field);
          assert.equal(knobs.metadata.upstream_request?.[field], undefined, `${field} was sent`);
        }
        for (const req of requests) {
          for (const field of ["n", "logit_bias", "best_of"])
            assert.equal(req.body?.[field], undefined, `the policy server received ${field}`);
          assert.ok(!has(req.body, MARKS[3] as string), "the body over the cap reached the policy server");
        }
        // No row holds a call the shell made, in any format or row mode; they are counted as skipped.
        for (const format of ["prime-sft", "trl-sft", "tokens"] as const) {
          for (const rowMode of ["rollout", "exchange"] as const) {
            if (format === "tokens" && rowMode === "exchange") continue;
            const { rows, manifest } = await rowsOf(jobsDir, format, rowMode);
            assert.ok(
              rows.length > 0,
              `${format} ${rowMode}: the agent's own calls give rows: ${JSON.stringify(manifest)}`,
            );
            for (const mark of MARKS)
              assert.ok(!rows.some((row) => has(row, mark)), `${format} ${rowMode}: ${mark}`);
            assert.equal(manifest.skipped_non_agent_calls, others, `${format} ${rowMode}`);
          }
        }
        // Asked for, they are rows: the check above could fail.
        const withOthers = await rowsOf(jobsDir, "prime-sft", "exchange", true);
        assert.ok(
          withOthers.rows.some((row) => MARKS.some((mark) => has(row, mark))),
          `with the flag, a row of the shell's calls: ${JSON.stringify(withOthers.manifest).slice(0, 900)}`,
        );
        const coverage = await tokenCoverage(jobsDir);
        assert.equal(coverage.non_agent_calls, others);
        assert.equal(coverage.calls, own.length);
        for await (const record of streamRollouts(jobsDir, { follow: false })) {
          assert.equal(record.non_agent_calls, others);
          assert.equal(record.calls.length, own.length);
        }
        assert.equal(trainingCalls([]).nonAgent, 0);
      });
    }

    it("a rollout that floods the relay and its recorded bytes fails only its own calls: its sibling at -j 2 scores 1.0", async (t) => {
      if (sandbox === "container" && !(await engineOrSkip(t))) return;
      const root = scratch();
      const tasks = path.join(root, "tasks");
      for (const name of ["flood", "honest"]) {
        await fs.cp(path.join(EXAMPLES, "hello"), path.join(tasks, name), { recursive: true });
        await fs.writeFile(
          path.join(tasks, name, "instruction.md"),
          `${name.toUpperCase()}-TASK: ${await instruction()}`,
        );
      }
      const flood = [
        POST,
        // Thousands of connections held open, saying nothing.
        `ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"`,
        "held=(); for i in $(seq 1 3000); do exec {fd}<>/dev/tcp/$h/$p || break; held+=($fd); done",
        "sleep 3",
        'for fd in "${held[@]}"; do exec {fd}>&-; done',
        // Then 12 calls of 900 KiB each, past the rollout's 4 MiB of recorded bytes.
        `big=$(head -c 900000 /dev/zero | tr '\\0' a); for i in $(seq 1 12); do post /v1/chat/completions '{"model":"scripted","messages":[{"role":"user","content":"'"$big"'"}]}'; done`,
      ].join("\n");
      const script = scriptFor("claude-code", [
        {
          match: "FLOOD-TASK",
          replies: [
            { content: "Flooding.", tool_calls: [shellCall("claude-code", flood)] },
            { content: "Done." },
          ],
        },
        {
          match: "HONEST-TASK",
          replies: [
            {
              content: "Writing.",
              tool_calls: [shellCall("claude-code", "echo 'Hello, world!' > /app/hello.txt")],
            },
            { content: "Done." },
          ],
        },
      ]);
      const jobsDir = path.join(root, "jobs");
      const { result } = await runAgent(script, {
        tasks,
        agent: "claude-code",
        sandbox,
        jobsDir,
        concurrency: 2,
        policy: { maxCallMib: 1, maxRecordedMib: 4 },
      });
      const byTask = new Map(result.results.map((r) => [r.task_name, r]));
      assert.equal(byTask.get("honest")?.rewards?.reward, 1, JSON.stringify(byTask.get("honest")?.error));
      const used = Number(execFileSync("du", ["-sb", jobsDir], { encoding: "utf8" }).split("\t")[0]);
      assert.ok(used < 12 * 1024 * 1024, `the jobs folder holds ${used} bytes`);
      const floodDir = (await rollouts(jobsDir)).find((x) => x.result?.task_name === "flood");
      assert.ok(floodDir?.result, "the flooding rollout has its result");
      const refused = Object.values(floodDir.result.gateway_integrity?.refused_calls ?? {}) as number[];
      assert.ok(refused.reduce((a, b) => a + b, 0) > 0, JSON.stringify(floodDir.result.gateway_integrity));
    });
  });
}
