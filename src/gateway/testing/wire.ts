// Test support: checks that an answer has a documented shape, and that an event stream follows the
// documented grammar of its dialect. Used against the fixtures under test/fixtures/wire/.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";

// biome-ignore lint/suspicious/noExplicitAny: documents of any shape
type Doc = any;

export const WIRE_DIR = path.resolve(import.meta.dirname, "../../../test/fixtures/wire");

export function fixture(file: string): Doc {
  return JSON.parse(readFileSync(path.join(WIRE_DIR, file), "utf8"));
}

export interface SseEvent {
  event: string | null;
  data: string;
}

export function parseSse(text: string): SseEvent[] {
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      return { event, data: data.join("\n") };
    });
}

export function sseFixture(file: string): Doc[] {
  return parseSse(readFileSync(path.join(WIRE_DIR, file), "utf8"))
    .filter((e) => e.data !== "[DONE]")
    .map((e) => JSON.parse(e.data));
}

/**
 * Every key the documented example has, ours has too, with the same JSON type, recursively. A
 * documented null stands for "may be absent"; arrays compare element by element kind (`type`).
 * `ignore` lists dotted paths (with `*` for any key or index) of vendor-only fields.
 */
export function assertCovers(doc: Doc, ours: Doc, ignore: string[] = [], at = "$"): void {
  if (doc === null || ignored(at, ignore)) return;
  const kind = (v: Doc) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  assert.equal(
    kind(ours),
    kind(doc),
    `${at}: expected ${kind(doc)} as documented, got ${JSON.stringify(ours)}`,
  );
  if (Array.isArray(doc)) {
    for (const [i, item] of doc.entries()) {
      const match = item?.type ? ours.find((o: Doc) => o?.type === item.type) : ours[i];
      if (match === undefined)
        assert.fail(`${at}[${i}]: no element like the documented ${JSON.stringify(item)}`);
      assertCovers(item, match, ignore, `${at}.${i}`);
    }
    return;
  }
  if (typeof doc !== "object") return;
  for (const [key, value] of Object.entries(doc)) {
    if (value === null || ignored(`${at}.${key}`, ignore)) continue;
    assert.ok(key in ours, `${at}.${key}: documented field missing in ${JSON.stringify(ours).slice(0, 300)}`);
    assertCovers(value, ours[key], ignore, `${at}.${key}`);
  }
}

function ignored(at: string, ignore: string[]): boolean {
  return ignore.some((pattern) => {
    const re = new RegExp(`^\\$\\.${pattern.replace(/\./g, "\\.").replace(/\*/g, "[^.]+")}$`);
    return re.test(at);
  });
}

export function assertRequired(required: string[], ours: Doc, what: string): void {
  for (const key of required) assert.ok(key in ours, `${what}: required field ${key} missing`);
}

/** Anthropic Messages: message_start, blocks 0..n (start, deltas, stop), message_delta+, message_stop. */
export function assertAnthropicFlow(events: SseEvent[]): Doc[] {
  const data = events.map((e) => {
    const d = JSON.parse(e.data);
    assert.equal(e.event, d.type, "the SSE event name equals the data's type");
    return d;
  });
  const flow = data.filter((d) => d.type !== "ping");
  let i = 0;
  assert.equal(flow[i++]?.type, "message_start");
  let block = 0;
  while (flow[i]?.type === "content_block_start") {
    assert.equal(flow[i++].index, block, "blocks are numbered 0, 1, ...");
    while (flow[i]?.type === "content_block_delta") assert.equal(flow[i++].index, block);
    assert.equal(flow[i]?.type, "content_block_stop");
    assert.equal(flow[i++].index, block++);
  }
  assert.equal(flow[i++]?.type, "message_delta");
  while (flow[i]?.type === "message_delta") i++;
  assert.equal(flow[i++]?.type, "message_stop");
  assert.equal(i, flow.length, "nothing after message_stop");
  return data;
}

const ITEM_EVENTS: Record<string, string[][]> = {
  message: [
    ["response.content_part.added"],
    ["response.output_text.delta"],
    ["response.output_text.done", "response.content_part.done"],
  ],
  reasoning: [
    ["response.content_part.added"],
    ["response.reasoning_text.delta"],
    ["response.reasoning_text.done", "response.content_part.done"],
  ],
  function_call: [[], ["response.function_call_arguments.delta"], ["response.function_call_arguments.done"]],
  custom_tool_call: [[], ["response.custom_tool_call_input.delta"], []],
};

/** OpenAI Responses: created, in_progress, items in order (added ... done), then a terminal event. */
export function assertResponsesFlow(events: SseEvent[], required: Record<string, string[]>): Doc[] {
  const data = events.map((e, n) => {
    const d = JSON.parse(e.data);
    assert.equal(e.event, d.type, "the SSE event name equals the data's type");
    if ("sequence_number" in d) assert.equal(d.sequence_number, n, "sequence numbers count up from 0");
    assertRequired(required[d.type] ?? [], d, d.type);
    return d;
  });
  let i = 0;
  assert.equal(data[i++]?.type, "response.created");
  assert.equal(data[i++]?.type, "response.in_progress");
  let index = 0;
  while (data[i]?.type === "response.output_item.added") {
    const item = data[i].item;
    assert.equal(data[i++].output_index, index);
    const [opening, repeated, closing] = ITEM_EVENTS[item.type] ?? [[], [], []];
    for (const type of opening ?? []) assert.equal(data[i++]?.type, type);
    while (repeated?.includes(data[i]?.type)) assert.equal(data[i++].output_index, index);
    for (const type of closing ?? []) assert.equal(data[i++]?.type, type);
    assert.equal(data[i]?.type, "response.output_item.done");
    assert.equal(data[i++].output_index, index++);
  }
  assert.match(data[i++]?.type ?? "", /^response\.(completed|incomplete|failed)$/);
  assert.equal(i, data.length, "nothing after the terminal event");
  return data;
}
