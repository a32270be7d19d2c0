// Compose's variable interpolation, applied to every string value of the file (never to keys):
// $VAR, ${VAR}, ${VAR:-default} (unset or empty), ${VAR-default} (unset), ${VAR:?message},
// ${VAR?message}, ${VAR:+other}, ${VAR+other}, and $$ for a literal $. Defaults may nest. A
// variable that is unset with no default is an error here (Harbor errors on it; compose would
// silently use ""), so a task never runs with a value its author did not mean.

export class InterpolationError extends Error {
  override name = "InterpolationError";
}

type Env = Record<string, string | undefined>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** `text` with its variables replaced from `env`; `where` names the value in messages. */
export function interpolate(text: string, env: Env, where: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== "$") {
      out += c;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "{") {
      const end = closingBrace(text, i + 2);
      if (end < 0)
        throw new InterpolationError(`${where}: "\${" without a closing "}" in ${JSON.stringify(text)}`);
      out += braced(text.slice(i + 2, end), env, where);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (!name) {
        out += "$";
        i++;
        continue;
      }
      out += lookup(name, env, where);
      i += 1 + name.length;
    }
  }
  return out;
}

/** The index of the "}" that closes a "${" whose body starts at `from` (nested ${...} skipped). */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === "$" && text[i + 1] === "{") {
      depth++;
      i++;
    } else if (text[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

function braced(body: string, env: Env, where: string): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new InterpolationError(`${where}: "\${${body}}" does not start with a variable name`);
  const rest = body.slice(name.length);
  if (rest === "") return lookup(name, env, where);
  const op = /^(:?[-?+])/.exec(rest)?.[1];
  if (!op)
    throw new InterpolationError(
      `${where}: "\${${body}}" is not a form compose knows (\${VAR:-default}, \${VAR-default}, \${VAR:?message}, \${VAR:+other})`,
    );
  const arg = rest.slice(op.length);
  const value = env[name];
  const missing = op.startsWith(":") ? value === undefined || value === "" : value === undefined;
  switch (op.replace(":", "")) {
    case "-":
      return missing ? interpolate(arg, env, where) : (value as string);
    case "+":
      return missing ? "" : interpolate(arg, env, where);
    default:
      if (!missing) return value as string;
      throw new InterpolationError(
        `${where}: the variable ${name} is ${value === undefined ? "not set" : "empty"}: ${interpolate(arg, env, where) || "it is required"} — fix: set ${name} in the environment or in task.toml [environment].env`,
      );
  }
}

function lookup(name: string, env: Env, where: string): string {
  const value = env[name];
  if (value !== undefined) return value;
  throw new InterpolationError(
    `${where}: the variable ${name} is not set — fix: set ${name} in the environment or in task.toml [environment].env, or write \${${name}:-default}`,
  );
}

/** Every string in a parsed YAML tree interpolated (keys kept as written). */
export function interpolateTree(value: unknown, env: Env, where: string): unknown {
  if (typeof value === "string") return interpolate(value, env, where);
  if (Array.isArray(value)) return value.map((v, i) => interpolateTree(v, env, `${where}[${i}]`));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateTree(v, env, where ? `${where}.${k}` : k)]),
    );
  }
  return value;
}
