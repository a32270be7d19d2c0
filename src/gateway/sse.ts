// Server-sent events: reading the policy's chat chunks and writing the agent's dialect events.

const LF = 0x0a;
const CR = 0x0d;

/** Splits a byte stream into SSE `data:` payloads; `[DONE]` is returned like any other payload. */
export class SseReader {
  /** Decoded text not yet split into events. */
  private buffer = "";
  /** Bytes after the last line break, decoded once a break follows them. */
  private tail: Buffer | null = null;

  push(chunk: Uint8Array): string[] {
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    if (this.tail) {
      bytes = Buffer.concat([this.tail, bytes]);
      this.tail = null;
    }
    // Decode up to a line break: a break byte is never inside a multibyte character. A CR at the
    // very end waits, since an LF may follow in the next read.
    let cut = bytes.lastIndexOf(LF);
    const cr = bytes.lastIndexOf(CR);
    if (cr > cut && cr < bytes.length - 1) cut = cr;
    if (cut === -1) {
      this.tail = bytes;
      return [];
    }
    if (cut < bytes.length - 1) this.tail = bytes.subarray(cut + 1);
    this.buffer += bytes.toString("utf8", 0, cut + 1);
    return this.drain(false);
  }

  end(): string[] {
    if (this.tail) {
      this.buffer += this.tail.toString("utf8");
      this.tail = null;
    }
    return this.drain(true);
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    let text = this.buffer;
    if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
    let from = 0;
    let cut = text.indexOf("\n\n");
    while (cut !== -1) {
      const data = dataOf(text.slice(from, cut));
      if (data !== null) out.push(data);
      from = cut + 2;
      cut = text.indexOf("\n\n", from);
    }
    this.buffer = from === 0 ? text : text.slice(from);
    if (final && this.buffer.trim() !== "") {
      const data = dataOf(this.buffer);
      if (data !== null) out.push(data);
      this.buffer = "";
    }
    return out;
  }
}

function dataOf(block: string): string | null {
  // The common case, one `data:` line and nothing else, without splitting.
  if (block.startsWith("data:") && !block.includes("\n")) {
    return block.charCodeAt(5) === 32 ? block.slice(6) : block.slice(5);
  }
  let data: string | null = null;
  for (const line of block.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

/** One event in the OpenAI chat style (data only). */
export function dataEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** One named event (Anthropic Messages, OpenAI Responses): `event:` repeats the payload's type. */
export function namedEvent(payload: { type: string; [key: string]: unknown }): string {
  return `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
}
