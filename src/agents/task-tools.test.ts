import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { loadTask } from "../task/load.js";
import { resolveAgent } from "./registry.js";
import { unofferedTaskTools } from "./task-tools.js";

const FIXTURES = path.resolve(import.meta.dirname, "../../test/fixtures/tasks");

describe("unofferedTaskTools", () => {
  it("says plainly which agents leave out the task's MCP servers and skills_dir; the CLIs say nothing", async () => {
    const mcp = await loadTask(path.join(FIXTURES, "mcp-lookup"));
    const skills = await loadTask(path.join(FIXTURES, "skill-dir"));
    assert.deepEqual(unofferedTaskTools(resolveAgent("bench-agent"), mcp), [
      "task mcp-lookup: its MCP servers (lookup) are not offered to bench-agent: bench-agent has no MCP client and loads no skills; run claude-code, codex, opencode or an ACP agent to offer them",
    ]);
    assert.deepEqual(unofferedTaskTools(resolveAgent("oracle"), skills), [
      "task skill-dir: its skills_dir /skills is not offered to oracle: oracle calls no model",
    ]);
    assert.match(
      unofferedTaskTools(resolveAgent("nop"), mcp)[0] ?? "",
      /not offered to nop: nop calls no model/,
    );
    for (const cli of ["claude-code", "codex", "opencode"]) {
      assert.deepEqual(unofferedTaskTools(resolveAgent(cli), mcp), [], cli);
      assert.deepEqual(unofferedTaskTools(resolveAgent(cli), skills), [], cli);
    }
  });
});
