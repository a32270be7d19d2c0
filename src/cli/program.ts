// The settings every command shares, applied once the program has all its commands: one help
// layout, and one error style (one line: what, where, the fix) for commander's own errors, which
// otherwise print the whole help after the line that matters.
import type { Command, CommanderError } from "commander";
import { UserInputError } from "../errors.js";
import { isRequired, optionDescription, takeRequired } from "./help.js";

/** A usage mistake, already worded as the whole line (`bench run: ...`): exit 2. */
export class UsageError extends UserInputError {
  override name = "UsageError";
}

export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** The long flag of `-a, --agent <agent>`, or the short one when there is no long one. */
function flagOf(flags: string): string {
  return (/--[\w-]+/.exec(flags) ?? /-\w/.exec(flags) ?? [flags])[0];
}

const SHOWN_AS_IS = new Set(["commander.helpDisplayed", "commander.version", "commander.help"]);

/** commander's message (`error: unknown option '--agnet'\n(Did you mean --agent?)`) as our one line. */
export function usageLine(err: CommanderError, where: string): string {
  let text = err.message.replace(/^error: /, "");
  const suggested = /\n?\(Did you mean (.+)\?\)\s*$/.exec(text);
  text = text.replace(/\n?\(Did you mean (.+)\?\)\s*$/, "").trim();
  text = text
    .replace(
      /^option '([^']*)' argument '([^']*)' is invalid\.\s*/,
      (_, f: string, v: string) => `${flagOf(f)} ${JSON.stringify(v)}: `,
    )
    .replace(/^option '([^']*)' argument missing$/, (_, f: string) => `${flagOf(f)} needs a value`)
    .replace(/^unknown option '([^']*)'$/, "unknown option $1")
    .replace(/^unknown command '([^']*)'$/, "unknown command $1")
    .replace(/^missing required argument '([^']*)'$/, "missing <$1>")
    .replace(/\.$/, "");
  const fix = suggested ? `did you mean ${suggested[1]}?` : `see ${where} --help`;
  return `${where}: ${text}; ${fix}`;
}

function walk(cmd: Command, visit: (c: Command) => void): void {
  visit(cmd);
  for (const sub of cmd.commands) walk(sub, visit);
}

/** Required options, checked after commander has refused unknown options and missing arguments. */
function checkRequired(_hooked: Command, action: Command): void {
  for (const option of action.options) {
    if (!isRequired(option) || action.getOptionValue(option.attributeName()) !== undefined) continue;
    const where = commandPath(action);
    throw new UsageError(
      `${where}: ${option.flags} is required (${option.description}); see ${where} --help`,
    );
  }
}

/** Applies the shared help and error settings to the program and every command under it. */
export function finishProgram(program: Command): Command {
  walk(program, (cmd) => {
    for (const option of cmd.options) takeRequired(option);
    cmd
      .configureHelp({ optionDescription })
      .showHelpAfterError(false)
      .showSuggestionAfterError(true)
      // The line is printed once, by reportError, from the error thrown below.
      .configureOutput({ outputError: () => undefined })
      .exitOverride((err) => {
        if (SHOWN_AS_IS.has(err.code)) throw err;
        throw new UsageError(usageLine(err, commandPath(cmd)));
      });
  });
  program.hook("preAction", checkRequired);
  return program;
}
