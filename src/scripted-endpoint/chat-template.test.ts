import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BYTE_OFFSET,
  completionTokenIds,
  detokenize,
  IM_END_ID,
  promptTokenIds,
  renderChat,
  specialId,
  tokenBytes,
  tokenize,
  tokenText,
} from "./chat-template.js";
import { sampleTurn } from "./sample.js";

const tools = [{ type: "function", function: { name: "bash", parameters: { type: "object" } } }];

/** The assistant message an agent sends back unchanged, built from what the policy returned. */
function replayed(turn: ReturnType<typeof sampleTurn>) {
  return {
    role: "assistant",
    content: turn.content,
    tool_calls: turn.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    })),
  };
}

function startsWith(ids: number[], prefix: number[]): boolean {
  return prefix.every((id, i) => ids[i] === id);
}

describe("tokenizer", () => {
  it("maps UTF-8 bytes to byte + offset and specials to fixed ids, and decodes back", () => {
    assert.deepEqual(tokenize("Hi"), [72 + BYTE_OFFSET, 105 + BYTE_OFFSET]);
    assert.deepEqual(tokenize("é"), [0xc3 + BYTE_OFFSET, 0xa9 + BYTE_OFFSET]);
    const text = "<|im_start|>user\nsalut ✓<|im_end|>\n<think>x</think>";
    const ids = tokenize(text);
    assert.equal(ids[0], specialId("<|im_start|>"));
    assert.ok(ids.includes(IM_END_ID));
    assert.equal(detokenize(ids), text);
  });

  it("names tokens the way logprobs report them", () => {
    assert.equal(tokenText(tokenize("a")[0] ?? -1), "a");
    assert.equal(tokenText(IM_END_ID), "<|im_end|>");
    assert.equal(tokenText(0xc3 + BYTE_OFFSET), "bytes:\\xc3");
    assert.deepEqual(tokenBytes(0xc3 + BYTE_OFFSET), [0xc3]);
    assert.deepEqual(tokenBytes(IM_END_ID), [...Buffer.from("<|im_end|>")]);
  });
});

describe("chat template", () => {
  it("renders ChatML with tools in the system turn and ends with the generation prompt", () => {
    const text = renderChat(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "List files" }] },
      ],
      tools,
    );
    assert.match(text, /^<\|im_start\|>system\nBe brief\.\n\n# Tools\n\n<tools>\n\{"name":"bash"/);
    assert.ok(text.endsWith("<|im_start|>user\nList files<|im_end|>\n<|im_start|>assistant\n"));
  });

  it("samples ids equal to the rendered turn plus <|im_end|>, and streams pieces that add up to them", () => {
    const turn = sampleTurn(
      {
        reasoning: "I should look first.",
        content: "Let me check — ✓",
        tool_calls: [
          { name: "bash", arguments: { command: "ls -la /app && cat /app/notes.txt" } },
          { name: "submit", arguments: "{}" },
        ],
      },
      { turn: 0, conversationKey: "abcd1234" },
    );
    const expected = completionTokenIds({
      reasoning: turn.reasoning,
      content: turn.content,
      toolCalls: turn.toolCalls,
    });
    assert.deepEqual(turn.completionIds, expected);
    assert.deepEqual(
      turn.pieces.flatMap((p) => p.ids),
      expected,
    );
    assert.equal(turn.completionIds.at(-1), IM_END_ID);
    assert.match(
      detokenize(expected),
      /^<think>\nI should look first\.\n<\/think>\n\nLet me check — ✓\n<tool_call>\n/,
    );
    assert.equal(turn.finishReason, "tool_calls");
  });

  it("keeps the token-in/token-out prefix property across a 3-turn tool conversation", () => {
    const messages: unknown[] = [
      { role: "system", content: "You are an agent." },
      { role: "user", content: "Create /app/hello.txt" },
    ];
    const replies = [
      {
        content: "I'll write it.",
        tool_calls: [{ name: "bash", arguments: { command: "echo hi > /app/hello.txt" } }],
      },
      { tool_calls: [{ name: "submit", arguments: {} }] },
      { content: 'Done: the file holds "hi" <|im_end|> literally.' },
    ];
    let previous: { prompt: number[]; sampled: number[] } | undefined;
    replies.forEach((reply, turnIndex) => {
      const prompt = promptTokenIds(messages, tools);
      if (previous) {
        assert.ok(
          startsWith(prompt, [...previous.prompt, ...previous.sampled]),
          `turn ${turnIndex} extends turn ${turnIndex - 1}`,
        );
      }
      const turn = sampleTurn(reply, { turn: turnIndex, conversationKey: "k" });
      previous = { prompt, sampled: turn.completionIds };
      messages.push(replayed(turn), { role: "tool", tool_call_id: "x", content: `result ${turnIndex}` });
    });
    // Text that looks like a special token stays bytes inside content, in the prompt and in the sample.
    const last = sampleTurn(replies[2] ?? {}, { turn: 2, conversationKey: "k" });
    assert.equal(last.completionIds.filter((id) => id === IM_END_ID).length, 1);
  });

  it("breaks the prefix when the agent drops the reasoning it was given, as real templates do", () => {
    const messages: unknown[] = [{ role: "user", content: "go" }];
    const turn = sampleTurn({ reasoning: "hmm", content: "ok" }, { turn: 0, conversationKey: "k" });
    const prompt = promptTokenIds(messages);
    const withReasoning = [
      ...messages,
      { ...replayed(turn), reasoning_content: "hmm" },
      { role: "user", content: "again" },
    ];
    const without = [...messages, replayed(turn), { role: "user", content: "again" }];
    assert.ok(startsWith(promptTokenIds(withReasoning), [...prompt, ...turn.completionIds]));
    assert.ok(!startsWith(promptTokenIds(without), [...prompt, ...turn.completionIds]));
  });
});
