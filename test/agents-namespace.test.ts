// The real agent CLIs in the namespace sandbox (the task has no network: the agents reach the
// gateway through the relay). Skills: with-skill puts the task's skill where each agent looks and
// the agent lists it; no-skill leaves it out. Failures: a crash, a hang, an unreachable gateway and
// an agent that cannot start each end their own trial with a clear category, and the rest of the
// job is unaffected.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { createClaudeCodeAgent } from "../src/agents/in-sandbox/index.js";
import { registerAgent, resolveAgent } from "../src/agents/registry.js";
import {
  acpEvents,
  CLI_AGENTS,
  llmCalls,
  readJson,
  runAgent,
  SKILLS_HOME,
  scriptFor,
  shellCall,
  skillCall,
} from "./testing/agents.js";
import { EXAMPLES, FIXTURES, useScratch } from "./testing/bench.js";

const MARKER = "BENCHFLOW-SKILL-7f3a";
const scratch = useScratch("agents-ns");

describe("agent CLIs: skills", () => {
  for (const agent of CLI_AGENTS) {
    it(`${agent}: with-skill shows the task's skill in ${SKILLS_HOME[agent]}, no-skill does not`, async () => {
      const command = `grep -q ${MARKER} "$HOME/${SKILLS_HOME[agent]}/greeting/SKILL.md" && echo 'Hello, world!' > /app/hello.txt`;
      const skill = skillCall(agent, "greeting");
      const first = {
        content: "Using the greeting skill.",
        tool_calls: [...(skill ? [skill] : []), shellCall(agent, command)],
      };
      const script = scriptFor(agent, [{ replies: [first, { content: "Done." }] }]);
      for (const mode of ["with-skill", "no-skill"] as const) {
        const jobsDir = path.join(scratch(), `skills-${agent}-${mode}`);
        const { result, found } = await runAgent(script, {
          tasks: path.join(FIXTURES, "skill-hello"),
          agent,
          sandbox: "namespace",
          skillMode: mode,
          jobsDir,
        });
        const [r] = result.results;
        const dir = found[0]?.dir ?? "";
        assert.equal(r?.error, null, `${agent} ${mode}`);
        assert.equal(
          r?.rewards?.reward,
          mode === "with-skill" ? 1 : 0,
          `${agent} ${mode}: the skill file was ${mode === "with-skill" ? "" : "not "}there`,
        );
        assert.equal((await readJson(path.join(dir, "config.json"))).skill_mode, mode);
        // The agent itself found the skill: it is described in what the agent sent the model.
        const listed = (await llmCalls(dir)).some((c) =>
          JSON.stringify(c.request.body).includes("How to greet the world"),
        );
        assert.equal(listed, mode === "with-skill", `${agent} ${mode}: skill listed in the agent's prompt`);
        if (mode === "with-skill") {
          assert.ok(Number(r?.n_skill_invocations) >= 1, `${agent}: the skill invocation is counted`);
          if (skill) {
            const call = (await acpEvents(dir)).find((e) => e.type === "tool_call" && e.kind === "other");
            assert.equal(call?.status, "completed", `${agent}: its skill tool loaded the skill`);
          }
        }
      }
    });
  }
});

describe("agent CLIs: failures end their own trial", () => {
  it("a crash, a hang and a good trial in one job: agent_error, timeout, reward 1.0; nothing is left running", async () => {
    const tasks = path.join(scratch(), "mixed-tasks");
    for (const [name, instruction, timeout] of [
      ["hello", null, 120],
      ["hang", "HANG-ME: wait for the model.", 4],
      ["crash", "CRASH-ME: the agent dies.", 120],
    ] as const) {
      const dir = path.join(tasks, name);
      await fs.cp(path.join(EXAMPLES, "hello"), dir, { recursive: true });
      if (instruction) await fs.writeFile(path.join(dir, "instruction.md"), `${instruction}\n`);
      const toml = await fs.readFile(path.join(dir, "task.toml"), "utf8");
      await fs.writeFile(
        path.join(dir, "task.toml"),
        toml.replace("timeout_sec = 120", `timeout_sec = ${timeout}`),
      );
    }
    const script = scriptFor("claude-code", [
      { match: "HANG-ME", replies: [{ hang: true }] },
      // The Bash tool's shell is a child of the claude process: this kills the agent mid-run.
      { match: "CRASH-ME", replies: [{ tool_calls: [shellCall("claude-code", "kill -9 $PPID")] }] },
      {
        replies: [
          { tool_calls: [shellCall("claude-code", "echo 'Hello, world!' > /app/hello.txt")] },
          { content: "Done." },
        ],
      },
    ]);
    const { result } = await runAgent(script, {
      tasks,
      agent: "claude-code",
      sandbox: "namespace",
      concurrency: 3,
      jobsDir: path.join(scratch(), "mixed"),
    });
    const by = Object.fromEntries(result.results.map((r) => [r.task_name, r]));
    assert.equal(by.hello?.rewards?.reward, 1);
    assert.equal(by.hello?.error_category, null);
    assert.equal(by.hang?.error_category, "timeout");
    assert.equal(by.crash?.error_category, "agent_error");
    assert.match(by.crash?.error ?? "", /claude-code exited with code 137/);
    const left = execFileSync("ps", ["-eo", "args"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
      .split("\n")
      .filter((l) => l.includes("claude-code@"));
    assert.deepEqual(left, [], "no agent process outlives its trial");
  });

  it("an agent that cannot reach the gateway, or cannot start, is agent_setup (infrastructure), not a reward of 0", async () => {
    registerAgent("claude-code-no-gateway", () =>
      createClaudeCodeAgent({ gatewayOverride: "http://127.0.0.1:9" }),
    );
    registerAgent("claude-code-bad-flag", () => createClaudeCodeAgent({ extraArgs: ["--no-such-flag"] }));
    const script = scriptFor("claude-code", [{ replies: [{ content: "unused" }] }]);
    for (const [agent, why] of [
      ["claude-code-no-gateway", /cannot reach the model gateway at http:\/\/127\.0\.0\.1:9/],
      ["claude-code-bad-flag", /claude-code failed to start \(exit 1\).*no-such-flag/s],
    ] as const) {
      const { result } = await runAgent(script, {
        tasks: path.join(EXAMPLES, "hello"),
        agent,
        sandbox: "namespace",
        jobsDir: path.join(scratch(), agent),
      });
      const [r] = result.results;
      assert.equal(r?.error_category, "agent_setup", agent);
      assert.match(r?.error ?? "", why);
      assert.equal(r?.rewards, null, "not scored");
    }
  });
});

describe("agent CLIs: names", () => {
  it("upstream's codex-acp and claude-agent-acp are agents of their own, named as typed (ACP: agents-acp.test.ts)", () => {
    assert.equal(resolveAgent("codex-acp").name, "codex-acp");
    assert.equal(resolveAgent("claude-agent-acp").name, "claude-agent-acp");
    assert.equal(resolveAgent("acp:my-agent --acp").name, "acp:my-agent --acp");
    assert.equal(resolveAgent("opencode").name, "opencode");
  });
});
