// Server-sent events: reading the policy's chat chunks and writing the agent's dialect events.

/** Splits a byte stream into SSE `data:` payloads; `[DONE]` is returned like any other payload. */
export class SseReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();

  push(bytes: Uint8Array): string[] {
    this.buffer += this.decoder.decode(bytes, { stream: true });
    return this.drain(false);
  }

  end(): string[] {
    this.buffer += this.decoder.decode();
    return this.drain(true);
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    if (this.buffer.includes("\r")) this.buffer = this.buffer.replace(/\r\n?/g, "\n");
    let cut = this.buffer.indexOf("\n\n");
    while (cut !== -1) {
      const data = dataOf(this.buffer.slice(0, cut));
      if (data !== null) out.push(data);
      this.buffer = this.buffer.slice(cut + 2);
      cut = this.buffer.indexOf("\n\n");
    }
    if (final && this.buffer.trim() !== "") {
      const data = dataOf(this.buffer);
      if (data !== null) out.push(data);
      this.buffer = "";
    }
    return out;
  }
}

function dataOf(block: string): string | null {
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
