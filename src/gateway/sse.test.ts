// The SSE reader: events come out whole however the network cuts the bytes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SseReader } from "./sse.js";

/** Feeds `text` to a reader cut at the given byte offsets; returns every payload. */
function readCut(text: string, cuts: number[]): string[] {
  const bytes = Buffer.from(text, "utf8");
  const reader = new SseReader();
  const out: string[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(...reader.push(bytes.subarray(from, cut)));
    from = cut;
  }
  return [...out, ...reader.end()];
}

describe("SseReader", () => {
  it("splits events at every possible cut, multibyte characters included", () => {
    const text = 'data: {"c":"héllo → 世界"}\n\ndata: {"c":"🙂"}\n\ndata: [DONE]\n\n';
    const want = ['{"c":"héllo → 世界"}', '{"c":"🙂"}', "[DONE]"];
    const size = Buffer.byteLength(text);
    for (let cut = 0; cut <= size; cut++) assert.deepEqual(readCut(text, [cut]), want, `cut at ${cut}`);
    assert.deepEqual(
      readCut(
        text,
        Array.from({ length: size }, (_, i) => i),
      ),
      want,
      "one byte per read",
    );
  });

  it("reads CRLF and CR line ends, even when a CRLF is cut in two", () => {
    const crlf = "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n";
    for (let cut = 0; cut <= crlf.length; cut++) assert.deepEqual(readCut(crlf, [cut]), ["a\nb", "c"]);
    assert.deepEqual(readCut("data: a\r\rdata: b\r\r", [8]), ["a", "b"]);
  });

  it("joins multi-line data, skips comments and other fields, and keeps an unterminated last event", () => {
    const text = ": keep-alive\n\nevent: x\nid: 7\ndata: one\ndata:two\n\nretry: 5\n\ndata: tail";
    assert.deepEqual(readCut(text, [3, 20]), ["one\ntwo", "tail"]);
  });
});
