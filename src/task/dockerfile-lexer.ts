// Dockerfile text into instructions: parser directives, line continuations, comments and heredocs,
// plus the shell-like word splitting with `$VAR` / `${VAR}` / `${VAR:-default}` substitution.

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
  /** Heredoc bodies that followed the instruction, in order. */
  heredocs: string[];
}

const HEREDOC_KEYWORDS = new Set(["RUN", "COPY", "ADD"]);
const HEREDOC = /<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/g;

export function splitInstructions(text: string): { instructions: Instruction[]; escapeChar: string } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  let escapeChar = "\\";
  let i = 0;
  // Parser directives only sit at the very top, before any other line.
  for (; i < lines.length; i++) {
    const m = /^#\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(lines[i] as string);
    if (!m) break;
    if ((m[1] as string).toLowerCase() === "escape" && (m[2] === "`" || m[2] === "\\")) escapeChar = m[2];
  }
  const instructions: Instruction[] = [];
  while (i < lines.length) {
    const first = lines[i] as string;
    if (/^\s*(#|$)/.test(first)) {
      i++;
      continue;
    }
    const start = i + 1;
    let logical = "";
    for (; i < lines.length; i++) {
      const raw = lines[i] as string;
      if (logical !== "" && /^\s*(#|$)/.test(raw)) continue;
      const trimmed = raw.replace(/\s+$/, "");
      if (trimmed.endsWith(escapeChar) && i + 1 < lines.length) {
        logical += `${trimmed.slice(0, -1)} `;
        continue;
      }
      logical += raw;
      i++;
      break;
    }
    const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(logical);
    if (!m) continue;
    const heredocs: string[] = [];
    const keyword = (m[1] as string).toUpperCase();
    const docs = HEREDOC_KEYWORDS.has(keyword) ? (m[2] as string).matchAll(HEREDOC) : [];
    for (const doc of docs) {
      const body: string[] = [];
      const strip = doc[1] === "-";
      for (; i < lines.length; i++) {
        const raw = lines[i] as string;
        if ((strip ? raw.replace(/^\t+/, "") : raw) === doc[3]) {
          i++;
          break;
        }
        body.push(raw);
      }
      heredocs.push(body.join("\n"));
    }
    instructions.push({ keyword, args: (m[2] as string).trim(), line: start, heredocs });
  }
  return { instructions, escapeChar };
}

/** Shell-like words with quote removal and variable substitution (none inside single quotes). */
export function words(text: string, vars: Record<string, string>, escapeChar = "\\"): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (c === escapeChar && i + 1 < text.length) {
      const next = text[i + 1] as string;
      // Inside double quotes only a few characters are escapable, as in a shell.
      if (quote === '"' && !['"', "$", escapeChar].includes(next)) word += c;
      else {
        word += next;
        i++;
      }
      inWord = true;
      continue;
    }
    if (c === "$") {
      const { value, end } = expandAt(text, i, vars);
      word += value;
      i = end - 1;
      inWord = true;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/** Substitutes variables in text without splitting it (for WORKDIR, USER, FROM, JSON-form paths). */
export function substitute(text: string, vars: Record<string, string>, escapeChar = "\\"): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === escapeChar && text[i + 1] === "$") {
      out += "$";
      i++;
    } else if (c === "$") {
      const { value, end } = expandAt(text, i, vars);
      out += value;
      i = end - 1;
    } else out += c;
  }
  return out;
}

function expandAt(text: string, at: number, vars: Record<string, string>): { value: string; end: number } {
  const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}/.exec(text.slice(at));
  if (braced) {
    const set = vars[braced[1] as string];
    let value = set ?? "";
    if (braced[2] === "-" && !set) value = substitute(braced[3] ?? "", vars);
    if (braced[2] === "+") value = set ? substitute(braced[3] ?? "", vars) : "";
    return { value, end: at + braced[0].length };
  }
  const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(at));
  if (plain) return { value: vars[plain[1] as string] ?? "", end: at + plain[0].length };
  return { value: "$", end: at + 1 };
}
