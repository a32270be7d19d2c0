// An error names what its caller typed: `--trials` to someone at the `bench` command, `trials` to
// code that called the library. The command says so once at start (src/cli/main.ts); everything
// else is the library, whatever process it runs in. And the library refuses an option it does not
// know, with the nearest name, as the command refuses an unknown flag.
import { UserInputError } from "./errors.js";
import { nearest } from "./util/nearest.js";

let commandLine = false;

/** Called by the `bench` command before it parses anything: errors name flags from then on. */
export function nameFlags(): void {
  commandLine = true;
}

/** The option as the caller wrote it: `key` from code, `flag` (e.g. "--trials", "-j/--concurrency") from the command. */
export function optionName(key: string, flag: string): string {
  return commandLine ? flag : key;
}

/** The option with a value: `-m vllm/x` from the command, `model: "vllm/x"` from code. */
export function optionValue(key: string, flag: string, value: string): string {
  return commandLine ? `${flag} ${value}` : `${key}: ${JSON.stringify(value)}`;
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
