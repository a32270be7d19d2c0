import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { nameFlags } from "../../cli/option-flags.js";
import { UserInputError } from "../../errors.js";
import { tmp } from "../../jobs-dir/testing/tmp.js";
import { nameOptionsWith } from "../../options.js";
import type { ChatMessage } from "../../schemas/train-rows.js";
import {
  CHATML_TEMPLATE,
  IM_END,
  IM_START,
  writeHubCache,
  writeTinyTokenizer,
  ZZ,
} from "../testing/tiny-tokenizer.js";
import { rowTokens, TokenizationError } from "./count.js";
import { hubCaches, loadTokenizer } from "./load.js";
import { MessageWindow } from "./window.js";

const TOOLS = [{ type: "function", function: { name: "read", description: "", parameters: {} } }];
const call = (id: string) => ({ id, type: "function" as const, function: { name: "read", arguments: {} } });
const assistantCall = (id: string): ChatMessage => ({
  role: "assistant",
  content: "",
  tool_calls: [call(id)],
});
const toolResult = (id: string, content: string): ChatMessage => ({
  role: "tool",
  tool_call_id: id,
  content,
});

/**
 * Tokens by the template's rule (len(role) + len(content) + 4 a message, a tool call 30 more):
 * tools 14, system "sys" 13, user "task" 12, each read call 43, tool "xxxxxxxxxxxx" 20, tool "recent" 14,
 * completion "done" 17. In all 176.
 */
function longRow(oldResult = "xxxxxxxxxxxx") {
  return {
    prompt: [
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
      assistantCall("call_old"),
      toolResult("call_old", oldResult),
      assistantCall("call_recent"),
      toolResult("call_recent", "recent"),
    ] as ChatMessage[],
    completion: [{ role: "assistant", content: "done" }] as ChatMessage[],
    tools: TOOLS,
    task_id: "task-a",
  };
}

describe("loadTokenizer", () => {
  it("reads a folder, or a tokenizer.json file with its config beside it, and encodes byte-level BPE", async () => {
    const dir = writeTinyTokenizer(path.join(tmp(), "tiny"));
    for (const spec of [dir, path.join(dir, "tokenizer.json")]) {
      const tok = await loadTokenizer(spec);
      assert.equal(tok.chatTemplate, CHATML_TEMPLATE);
      assert.deepEqual(tok.encode("<|im_start|>hi zz<|im_end|>"), [IM_START, 104, 105, 32, ZZ, IM_END]);
    }
  });

  it("finds a model id in the Hugging Face cache by ref (main by default) or by commit", async () => {
    const home = tmp();
    const hub = path.join(home, "hub");
    writeHubCache(hub, "acme/tiny-chat", "a".repeat(40));
    writeHubCache(hub, "acme/tiny-chat", "b".repeat(40), "v2");
    const env = { HF_HOME: home, HOME: tmp() };
    assert.equal(hubCaches(env)[0], hub);
    const main = await loadTokenizer("acme/tiny-chat", null, env);
    assert.equal(main.source, path.join(hub, "models--acme--tiny-chat", "snapshots", "a".repeat(40)));
    assert.equal(main.revision, null);
    const v2 = await loadTokenizer("acme/tiny-chat", "v2", env);
    assert.match(v2.source, /snapshots\/b{40}$/);
    const bySha = await loadTokenizer("acme/tiny-chat", "a".repeat(40), env);
    assert.equal(bySha.revision, "a".repeat(40));
    assert.match(bySha.source, /snapshots\/a{40}$/);
  });

  it("without the tokenizer on disk, names the id, the places looked and the download command", async () => {
    const home = tmp();
    // As the command names it (from code: `tokenizer: "acme/absent"`).
    nameFlags();
    const err = await loadTokenizer("acme/absent", "v9", { HF_HOME: home, HOME: home })
      .catch((e) => e)
      .finally(() => nameOptionsWith(null));
    assert.ok(err instanceof UserInputError);
    assert.match(err.message, /--tokenizer acme\/absent: no tokenizer for revision v9/);
    assert.ok(err.message.includes(path.join(home, "hub")));
    assert.ok(err.message.includes("models--acme--absent"));
    assert.match(
      err.message,
      /huggingface-cli download acme\/absent --revision v9 tokenizer\.json tokenizer_config\.json/,
    );
  });

  it("refuses a folder without tokenizer.json and a tokenizer without a chat template", async () => {
    const empty = tmp();
    await assert.rejects(loadTokenizer(empty), /the folder has no tokenizer\.json/);
    const bare = writeTinyTokenizer(path.join(tmp(), "bare"), { template: null });
    await assert.rejects(loadTokenizer(bare), /has no chat template/);
  });

  it("prefers chat_template.jinja, and picks the default of a list of named templates", async () => {
    const dir = writeTinyTokenizer(path.join(tmp(), "named"), { template: null });
    const cfg = path.join(dir, "tokenizer_config.json");
    const config = JSON.parse(fs.readFileSync(cfg, "utf8"));
    config.chat_template = [
      { name: "tool_use", template: "tools" },
      { name: "default", template: "plain" },
    ];
    fs.writeFileSync(cfg, JSON.stringify(config));
    assert.equal((await loadTokenizer(dir)).chatTemplate, "plain");
    fs.writeFileSync(path.join(dir, "chat_template.jinja"), "from-file");
    assert.equal((await loadTokenizer(dir)).chatTemplate, "from-file");
  });
});

describe("rowTokens", () => {
  it("counts the rendered row and the tokens the completion adds after the generation prompt", async () => {
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "t")));
    // "done<|im_end|>\n": 6 tokens after "<|im_start|>assistant\n".
    assert.deepEqual(rowTokens(tok, longRow(), null), { tokens: 176, trainable: 6 });
    assert.throws(() => rowTokens(tok, longRow(), 175), /tokenized length 176 exceeds max_length 175/);
  });

  it("allows a generation prompt that drifts after the assistant's turn begins, not before", async () => {
    const row = {
      prompt: [{ role: "user", content: "do it" }] as ChatMessage[],
      completion: longRow().completion,
    };
    const drift = (where: "after" | "before") =>
      CHATML_TEMPLATE.replace(
        "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}",
        where === "after" ? "{%- if add_generation_prompt %}<|im_start|>assistant\nx{% endif -%}" : "",
      ).replace(
        "{%- if tools %}",
        where === "before" ? "{% if add_generation_prompt %}!{% endif %}{%- if tools %}" : "{%- if tools %}",
      );
    const after = await loadTokenizer(
      writeTinyTokenizer(path.join(tmp(), "a"), { template: drift("after") }),
    );
    // Prompt 13 + 12 (with "x"), the whole row 13 + 17: 5 tokens after the prompt.
    assert.deepEqual(rowTokens(after, row, null), { tokens: 30, trainable: 5 });
    const before = await loadTokenizer(
      writeTinyTokenizer(path.join(tmp(), "b"), { template: drift("before") }),
    );
    assert.throws(() => rowTokens(before, row, null), /differs before the assistant generation boundary/);
  });

  it("refuses a row whose completion adds no token", async () => {
    const template =
      "{%- for m in messages -%}<|im_start|>{{ m.role }}\n{% if m.role != 'assistant' %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor -%}" +
      "{%- if add_generation_prompt %}<|im_start|>assistant\n<|im_end|>\n{% endif -%}";
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "n"), { template }));
    const row = {
      prompt: [{ role: "user", content: "do it" }] as ChatMessage[],
      completion: longRow().completion,
    };
    assert.throws(() => rowTokens(tok, row, null), TokenizationError);
    assert.throws(() => rowTokens(tok, row, null), /no trainable assistant completion tokens/);
  });
});

describe("MessageWindow", () => {
  it("keeps the system and task prefix, the completion and the complete recent tool turns that fit", async () => {
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "w")), "rev-1");
    const window = new MessageWindow(tok, 160);
    const out = window.fit(longRow(), "row 1");
    assert.deepEqual(
      out.prompt.map((m) => m.role),
      ["system", "user", "assistant", "tool"],
    );
    assert.equal(out.prompt[3]?.tool_call_id, "call_recent");
    assert.deepEqual(out.completion, longRow().completion);
    assert.equal(out.task_id, "task-a");
    // 176 less the old call (43) and its result (20).
    assert.deepEqual(out.context_window, {
      policy: "message-window",
      original_messages: 6,
      retained_messages: 4,
      messages_dropped: 2,
      original_tokens: 176,
      final_tokens: 113,
      max_length: 160,
      tokenizer: tok.id,
      tokenizer_revision: "rev-1",
    });
    // A row that fits is kept whole, with its counts.
    const short = { ...longRow(), prompt: longRow().prompt.slice(0, 2) };
    const whole = window.fit(short, "row 2");
    assert.equal(whole.prompt.length, 2);
    assert.equal(whole.context_window.final_tokens, 56);
    assert.deepEqual(window.totals, {
      rows_compacted: 1,
      messages_dropped: 2,
      max_original_tokens: 176,
      max_final_tokens: 113,
    });
    const roomy = new MessageWindow(tok, 176).fit(longRow(), "row 3");
    assert.equal(roomy.context_window.messages_dropped, 0);
    assert.equal(roomy.context_window.final_tokens, 176);
  });

  it("stops at the first turn that does not fit: what is kept is the recent run, never an older turn", async () => {
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "w")));
    const row = longRow();
    row.prompt = [
      ...row.prompt.slice(0, 2),
      assistantCall("call_small"),
      toolResult("call_small", "a"),
      assistantCall("call_big"),
      toolResult("call_big", "x".repeat(40)),
      ...row.prompt.slice(4),
    ];
    // Prefix 39 + completion 17 + recent turn 57 = 113; the big turn (91) does not fit 170, and the
    // small one behind it (52) would, but keeping it would leave a hole in the conversation.
    const out = new MessageWindow(tok, 170).fit(row, "row 1");
    assert.deepEqual(
      out.prompt.map((m) => m.tool_call_id ?? m.role),
      ["system", "user", "assistant", "call_recent"],
    );
    assert.equal(out.context_window.final_tokens, 113);
  });

  it("fails, naming the row, when the most recent tool turn cannot fit with the required prefix", async () => {
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "w")));
    const row = {
      prompt: [
        { role: "system", content: "sys" },
        { role: "user", content: "task" },
        assistantCall("call_recent"),
        toolResult("call_recent", "x".repeat(40)),
      ] as ChatMessage[],
      completion: longRow().completion,
      tools: TOOLS,
    };
    // prefix 39 + completion 17 + the turn 43 + 48 = 147 > 120.
    assert.throws(
      () => new MessageWindow(tok, 120).fit(row, "jobs/j/t__1/trajectory/llm_trajectory.jsonl call 3"),
      (err: Error) =>
        err instanceof TokenizationError &&
        err.message.startsWith("jobs/j/t__1/trajectory/llm_trajectory.jsonl call 3: ") &&
        err.message.includes("most recent assistant/tool context group does not fit max_length 120"),
    );
  });

  it("fails when the prefix and the completion alone are longer than --max-length", async () => {
    const tok = await loadTokenizer(writeTinyTokenizer(path.join(tmp(), "w")));
    const row = {
      prompt: [{ role: "user", content: "task ".repeat(20) }] as ChatMessage[],
      completion: longRow().completion,
    };
    assert.throws(
      () => new MessageWindow(tok, 50).fit(row, "row 1"),
      /row 1: tokenized length 125 exceeds max_length 50/,
    );
  });
});
