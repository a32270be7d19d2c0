import { InvalidArgumentError } from "commander";
import { UserInputError } from "../errors.js";
import type { Price } from "../gateway/usage.js";

/** A repeatable flag: every value, in the order given. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new InvalidArgumentError(`expected a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function parseKeyValue(value: string, previous: Record<string, string>): Record<string, string> {
  const i = value.indexOf("=");
  if (i <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, i)]: value.slice(i + 1) };
}

export function parseNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw new InvalidArgumentError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}

/** --price IN,OUT[,CACHE_READ[,CACHE_WRITE]]: USD per million tokens; a cache price left out is IN's. */
export function parsePrice(value: string): Price {
  const parts = value.split(",").map((p) => (p.trim() === "" ? Number.NaN : Number(p)));
  if (parts.length < 2 || parts.length > 4 || parts.some((p) => !Number.isFinite(p) || p < 0)) {
    throw new InvalidArgumentError(
      `expected IN,OUT[,CACHE_READ[,CACHE_WRITE]] in USD per million tokens, e.g. 0.3,1.2,0.006; got ${JSON.stringify(value)}`,
    );
  }
  const [input, output, read, write] = parts as [number, number, number?, number?];
  return {
    inputPerMTok: input,
    outputPerMTok: output,
    ...(read !== undefined ? { cacheReadPerMTok: read } : {}),
    ...(write !== undefined ? { cacheWritePerMTok: write } : {}),
  };
}

/** --verifier-hardening on|off (off: for a task author debugging a verifier, and exploit tests). */
export function parseOnOff(flag: string): (value: string) => "on" | "off" {
  return (value) => {
    if (value !== "on" && value !== "off")
      throw new InvalidArgumentError(`${flag} takes on or off, got ${JSON.stringify(value)}`);
    return value;
  };
}

/** A whole number of at least `min`: `--trials 0` and `--trials abc` get the same one line. */
export function atLeast(min: number): (value: string) => number {
  return (value) => {
    const trimmed = value.trim();
    if (!/^-?\d+$/.test(trimmed) || Number(trimmed) < min)
      throw new InvalidArgumentError(`expected a whole number of at least ${min}`);
    return Number(trimmed);
  };
}

/** One of a few words (commander's own choices() prints a list in another style). */
export function oneOf<T extends string>(words: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(words as readonly string[]).includes(value))
      throw new InvalidArgumentError(`expected ${words.slice(0, -1).join(", ")} or ${words.at(-1)}`);
    return value as T;
  };
}

/**
 * A number a command reads inside its action rather than while commander parses: its refusal is then
 * the command's own line and exit code (`bench train convert: --max-length: "0" is not a whole
 * number of at least 1.`), in the order of the command's other checks. Undefined when not given.
 */
export function numberFlag(
  flag: string,
  value: string | undefined,
  opts: { integer?: boolean; min?: number } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const bad =
    value.trim() === "" ||
    !Number.isFinite(n) ||
    (opts.integer && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min);
  if (bad) {
    const kind = opts.integer ? "a whole number" : "a number";
    throw new UserInputError(
      `${flag}: "${value}" is not ${kind}${opts.min !== undefined ? ` of at least ${opts.min}` : ""}.`,
    );
  }
  return n;
}
