// A tiny glob for task names and Dockerfile sources: `*`, `?` and `[abc]` / `[!abc]`, no path separators.

export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      i = end;
    } else out += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

export function hasGlob(text: string): boolean {
  return /[*?[]/.test(text);
}

/** True when `name` equals `pattern` or matches it as a glob. */
export function matchesGlob(name: string, pattern: string): boolean {
  return name === pattern || (hasGlob(pattern) && globToRegExp(pattern).test(name));
}
