// The shared walks on their own: one history, two styles, and only the styled parts differ.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AnthropicStyle,
  anthropicToolDefs,
  anthropicTurns,
  type ResponsesStyle,
  responsesToolDefs,
  responsesTurns,
  type ToolFields,
} from "./index.js";

type Call = { id: string; name: string };
const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

const anthropic = (
  over: Partial<AnthropicStyle<string | null, Call>>,
): AnthropicStyle<string | null, Call> => ({
  textSeparator: "",
  emptyText: null,
  keepThinking: false,
  callTypes: ["tool_use"],
  toolCall: (b, turn, n) => ({ id: typeof b.id === "string" ? b.id : `${turn}_${n}`, name: String(b.name) }),
  toolResult: text,
  userContent: (rest) => (rest.length > 0 ? rest.map((b) => b.text).join("") : undefined),
  ...over,
});

describe("anthropicTurns", () => {
  const history = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hm" },
        { type: "text", text: "a" },
        { type: "text", text: "b" },
        { type: "tool_use", name: "bash" },
        { type: "server_tool_use", id: "s", name: "web" },
      ],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "note" },
        { type: "tool_result", tool_use_id: "x", content: "ok" },
      ],
    },
  ];

  it("places tool results before the rest of their user turn", () => {
    const turns = anthropicTurns(history, anthropic({}));
    assert.deepEqual(
      turns.map((t) => t.role),
      ["user", "assistant", "tool", "user"],
    );
    assert.deepEqual(turns[1], {
      role: "assistant",
      content: "ab",
      tool_calls: [{ id: "1_0", name: "bash" }],
    });
  });

  it("takes the join, the thinking, the call types and the ids from the style", () => {
    const turns = anthropicTurns(
      history,
      anthropic({ textSeparator: "\n", keepThinking: true, callTypes: ["tool_use", "server_tool_use"] }),
      (i) => `7_${i}`,
    );
    assert.deepEqual(turns[1], {
      role: "assistant",
      content: "a\nb",
      reasoning_content: "hm",
      tool_calls: [
        { id: "7_1_0", name: "bash" },
        { id: "s", name: "web" },
      ],
    });
  });
});

const responses = (
  over: Partial<ResponsesStyle<string | null, Call>>,
): ResponsesStyle<string | null, Call> => ({
  emptyText: null,
  keepReasoning: false,
  stringItems: false,
  untypedNeedsRole: true,
  developerAsSystem: false,
  messageContent: (_role, content) => text(content),
  toolCall: (item, i) => ({
    id: typeof item.call_id === "string" ? item.call_id : `i${i}`,
    name: String(item.name),
  }),
  toolResult: text,
  ...over,
});

describe("responsesTurns", () => {
  const items = [
    "bare",
    { role: "developer", content: "rules" },
    { type: "reasoning", summary: [{ text: "think" }] },
    { type: "function_call", call_id: "a", name: "bash" },
    { type: "custom_tool_call", name: "apply_patch" },
    { type: "function_call_output", call_id: "a", output: "1" },
  ];

  it("joins consecutive calls into one assistant turn", () => {
    const turns = responsesTurns(items, responses({}));
    assert.deepEqual(turns, [
      { role: "developer", content: "rules" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", name: "bash" },
          { id: "i4", name: "apply_patch" },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "1" },
    ]);
  });

  it("takes reasoning, bare strings and the developer role from the style", () => {
    const turns = responsesTurns(
      items,
      responses({ keepReasoning: true, stringItems: true, developerAsSystem: true }),
    );
    assert.deepEqual(
      turns.map((t) => [t.role, t.content]),
      [
        ["user", "bare"],
        ["system", "rules"],
        ["assistant", null],
        ["tool", "1"],
      ],
    );
    assert.equal(turns[2]?.reasoning_content, "think");
  });
});

describe("tool definitions", () => {
  const style = (keepBuiltIn: boolean) => ({
    keepBuiltIn,
    nestedFunction: true,
    customParameters: { one: "input" },
    def: (t: ToolFields) => (typeof t.name === "string" ? `${t.name}:${JSON.stringify(t.parameters)}` : null),
  });

  it("Anthropic: server tools are the style's to keep", () => {
    const tools = [
      { name: "bash", input_schema: { a: 1 } },
      { type: "web_search_20250305", name: "web" },
    ];
    assert.deepEqual(anthropicToolDefs(tools, style(false)), ['bash:{"a":1}']);
    assert.deepEqual(anthropicToolDefs(tools, style(true)), ['bash:{"a":1}', "web:undefined"]);
  });

  it("Responses: a freeform tool gets the style's parameters; built-ins are the style's to keep", () => {
    const tools = [
      { type: "function", function: { name: "f", parameters: { b: 2 } } },
      { type: "custom", name: "apply_patch" },
      { type: "web_search", name: "ws" },
    ];
    assert.deepEqual(responsesToolDefs(tools, style(false)), ['f:{"b":2}', 'apply_patch:{"one":"input"}']);
    assert.equal(responsesToolDefs(tools, style(true)).length, 3);
  });

  it("Responses: a namespace's tools (Codex's MCP servers) become flat functions, and their calls too", () => {
    const tools = [
      {
        type: "namespace",
        name: "mcp__lookup",
        tools: [{ type: "function", name: "lookup_code", parameters: { c: 3 } }],
      },
    ];
    assert.deepEqual(responsesToolDefs(tools, style(false)), ['mcp__lookup__lookup_code:{"c":3}']);
    const turns = responsesTurns(
      [{ type: "function_call", call_id: "m", namespace: "mcp__lookup", name: "lookup_code" }],
      responses({}),
    );
    assert.deepEqual(turns[0]?.tool_calls, [{ id: "m", name: "mcp__lookup__lookup_code" }]);
  });
});
