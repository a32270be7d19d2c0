// Text a task controls (its verifier's last line, a build log, a setup command's output) reaches the
// terminal through our result lines. Escape sequences there could move the cursor, recolour or
// overwrite a line and draw a false "reward 1.0"; so every control character is shown, not obeyed.

/**
 * Safe to print: escape sequences and other control characters as visible `\xNN`. A message's own
 * lines stay lines, indented, so none of them can pass for a line of ours.
 */
export function printable(text: string): string {
  return text.split(/\r?\n/).map(escapeControls).join("\n    ");
}

/** C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a line shows. */
export function isControl(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function escapeControls(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    if (!isControl(code)) out += c;
    else
      out +=
        code <= 0xff
          ? `\\x${code.toString(16).padStart(2, "0")}`
          : `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out;
}
