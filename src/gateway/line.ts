// Trajectory lines: one JSON object per call. Bodies the gateway already holds as JSON text (the
// agent's request, the upstream request, the answer as sent) are spliced in, not serialized again.
import { randomBytes } from "node:crypto";

// Random per process, so no value an agent or policy sends can pass for a stand-in.
const MARK = `bf-splice-${randomBytes(12).toString("hex")}-`;

export class LineBuilder {
  private readonly texts: string[] = [];

  /** A stand-in for `text` (the JSON text of one value, on one line) in the value given to `build`. */
  hold(text: string): string {
    this.texts.push(text);
    return `${MARK}${this.texts.length - 1}`;
  }

  /** The line: `value` as JSON with every stand-in replaced by its text, and a newline. */
  build(value: unknown): string {
    const line = JSON.stringify(value);
    if (this.texts.length === 0) return `${line}\n`;
    const cuts = this.texts
      .map((text, i) => {
        const mark = `"${MARK}${i}"`;
        return { at: line.indexOf(mark), text, size: mark.length };
      })
      .filter((cut) => cut.at !== -1)
      .sort((a, b) => a.at - b.at);
    let out = "";
    let from = 0;
    for (const cut of cuts) {
      out += line.slice(from, cut.at) + cut.text;
      from = cut.at + cut.size;
    }
    return `${out}${line.slice(from)}\n`;
  }
}

/** The request's JSON text fit to splice into a line, or null (it spans lines). */
export function oneLine(text: string): string | null {
  const trimmed = text.trim();
  return trimmed.includes("\n") || trimmed.includes("\r") ? null : trimmed;
}
