// An error names what its caller typed: `trials` to code that called the library, `--trials` to
// someone at the `bench` command. The library names its options (opt); the command registers its
// flags for them once at start (src/cli/option-flags.ts), so no flag is spelled outside src/cli/.
// And the library refuses an option it does not know, with the nearest name, as the command
// refuses an unknown flag.
import { UserInputError } from "./errors.js";
import { nearest } from "./util/nearest.js";

/** An option a message names, with the value the caller gave it when that matters. */
export interface OptionRef {
  option: string;
  value?: string;
  /** A phrase (phrase()): words of the message's own, which a front end may word its way. */
  phrase?: true;
}

/** How options are named in messages: the library's key unless a front end said otherwise. */
type OptionNamer = (ref: OptionRef) => string | undefined;

let frontEnd: OptionNamer | null = null;

/**
 * A front end with names of its own for the options (the `bench` command's flags) says so once at
 * start: every message made after names them its way. The table of names lives with the front end,
 * so the library holds no flag; a name the front end does not know falls back to the library's.
 */
export function nameOptionsWith(namer: OptionNamer | null): void {
  frontEnd = namer;
}

/** The library's own name: `trials`, or with a value `model: "vllm/x"`. */
export function libraryName(ref: OptionRef): string {
  return ref.value === undefined ? ref.option : `${ref.option}: ${JSON.stringify(ref.value)}`;
}

/**
 * An option as the caller wrote it, for a message: `opt("trials")` is `trials` from code and
 * `--trials` from the command; `opt("model", "vllm/x")` is `model: "vllm/x"` or `-m vllm/x`.
 */
export function opt(option: string, value?: string | number): string {
  const ref: OptionRef = value === undefined ? { option } : { option, value: String(value) };
  return frontEnd?.(ref) ?? libraryName(ref);
}

/**
 * Words of a message that name options in more than a name (two options at once, an option and the
 * variable beside it, what the command does where the library throws): `library` from code; a front
 * end words `key` its own way (the command's PHRASES), with `value` when the words carry one.
 */
export function phrase(key: string, library: string, value?: string | number): string {
  const ref: OptionRef = {
    option: key,
    phrase: true,
    ...(value === undefined ? {} : { value: String(value) }),
  };
  return frontEnd?.(ref) ?? library;
}

/**
 * Refuse keys the options object does not have. `known` is written as a record of every key
 * typed `Record<keyof Options, true>`, so an option added to the interface but not here fails to compile.
 */
export function checkOptionKeys(where: string, given: unknown, known: Readonly<Record<string, true>>): void {
  if (given === undefined || given === null) return;
  if (typeof given !== "object" || Array.isArray(given))
    throw new UserInputError(`${where}: the options must be an object; got ${JSON.stringify(given)}`);
  const names = Object.keys(known);
  for (const key of Object.keys(given)) {
    if (Object.hasOwn(known, key)) continue;
    const near = nearest(key, names)[0];
    throw new UserInputError(
      `${where}: unknown option ${JSON.stringify(key)}; ${near ? `did you mean ${JSON.stringify(near)}?` : `known options: ${names.join(", ")}`}`,
    );
  }
}
