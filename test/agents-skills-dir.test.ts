// The task's skills_dir (a folder inside the image, Harbor's field): each real agent CLI finds the
// task's skill in its own skills folder and lists it to the model; --skill-mode no-skill leaves it out.
// The fixture's skills are in the image only (COPY task-skills/ /skills/), so nothing else places them.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { CLI_AGENT_DEFS } from "../src/agents/in-sandbox/index.js";
import { CLI_AGENTS, llmCalls, runAgent, scriptFor, shellCall, type Vocabulary } from "./testing/agents.js";
import { FIXTURES, useScratch } from "./testing/bench.js";

const MARKER = "BENCHFLOW-SKILLS-DIR-91c2";
const scratch = useScratch("agents-skills-dir");

/** The three CLIs, and agents added since, each with the tool vocabulary it speaks. */
const AGENTS: [keyof typeof CLI_AGENT_DEFS, Vocabulary][] = [
  ...CLI_AGENTS.map((a) => [a, a] as [typeof a, Vocabulary]),
  ["kilo", "opencode"],
  ["gemini-cli", "gemini-cli"],
  ["qwen-code", "qwen-code"],
  ["pi", "pi"],
];

describe("agent CLIs: the task's skills_dir", () => {
  for (const [agent, vocabulary] of AGENTS) {
    const home = CLI_AGENT_DEFS[agent].skillsHome;
    it(`${agent}: with-skill lists the skill from skills_dir (in ${home}), no-skill does not`, async () => {
      const command = `grep -q ${MARKER} "$HOME/${home}/farewell/SKILL.md" && echo 'Goodbye, world!' > /app/bye.txt`;
      const script = scriptFor(vocabulary, [
        { replies: [{ tool_calls: [shellCall(vocabulary, command)] }, { content: "Done." }] },
      ]);
      for (const mode of ["with-skill", "no-skill"] as const) {
        const { result, found } = await runAgent(script, {
          tasks: path.join(FIXTURES, "skill-dir"),
          agent,
          sandbox: "namespace",
          skillMode: mode,
          jobsDir: path.join(scratch(), `${agent}-${mode}`),
        });
        const [r] = result.results;
        assert.equal(r?.error, null, `${agent} ${mode}`);
        assert.equal(r?.rewards?.reward, mode === "with-skill" ? 1 : 0, `${agent} ${mode}: the skill file`);
        const listed = (await llmCalls(found[0]?.dir ?? "")).some((c) =>
          JSON.stringify(c.request.body).includes("How to say goodbye in this project"),
        );
        assert.equal(listed, mode === "with-skill", `${agent} ${mode}: the skill is in the agent's prompt`);
      }
    });
  }
});
