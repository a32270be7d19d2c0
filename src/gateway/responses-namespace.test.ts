// Codex lists each MCP server's tools in a Responses `namespace` tool; the policy sees them as flat
// functions (mcp__lookup__lookup_code), and a call to one goes back to Codex with its namespace apart,
// the only form it runs (a flat name is answered "unsupported call"; seen with codex 0.171).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolItem } from "./inbound/responses-answer.js";
import { requestTools, responsesToChat } from "./inbound/responses-request.js";
import type { JsonObject } from "./types.js";

const request: JsonObject = {
  model: "m",
  input: "hi",
  tools: [
    { type: "function", name: "exec_command", parameters: { type: "object" } },
    {
      type: "namespace",
      name: "mcp__lookup",
      description: "Tools in the mcp__lookup namespace.",
      tools: [{ type: "function", name: "lookup_code", parameters: { type: "object", properties: {} } }],
    },
  ],
};

describe("gateway: Responses namespace tools", () => {
  it("offers a namespace's tools to the policy under flat names", () => {
    const chat = responsesToChat(request) as { tools: { function: { name: string } }[] };
    assert.deepEqual(
      chat.tools.map((t) => t.function.name),
      ["exec_command", "mcp__lookup__lookup_code"],
    );
  });

  it("answers a call to a flat name with the namespace and the tool's own name", () => {
    const tools = requestTools(request);
    const call = (name: string) => ({
      id: "c1",
      type: "function" as const,
      function: { name, arguments: "{}" },
    });
    const item = toolItem(call("mcp__lookup__lookup_code"), tools, "fc_1");
    assert.equal(item.type, "function_call");
    assert.equal(item.namespace, "mcp__lookup");
    assert.equal(item.name, "lookup_code");
    const plain = toolItem(call("exec_command"), tools, "fc_2");
    assert.equal(plain.name, "exec_command");
    assert.equal("namespace" in plain, false);
  });
});
