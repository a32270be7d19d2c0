// One shape of help for every command: options marked when required, every default stated, then
// Examples, Environment (the variables the command reads) and Exit codes, in that order.
import type { Command, Option } from "commander";

export interface HelpSections {
  /** Command lines as a user types them, each optionally with a comment after `  # `. */
  examples: string[];
  /** The variables the command reads, and what each does. */
  env?: Record<string, string>;
  /** Exit status -> when. */
  exitCodes: Record<number | string, string>;
  /** Defaults the library computes, shown as `(default: ...)`: flag -> text. */
  defaults?: Record<string, string>;
  /** Anything else worth a paragraph of its own (shown before Examples). */
  notes?: string[];
}

/** Marks options a user must give (checked after unknown options, see program.ts). */
const REQUIRED = Symbol("bench.required");

export function isRequired(option: Option): boolean {
  return (option as Option & { [REQUIRED]?: boolean })[REQUIRED] === true;
}

/**
 * commander checks required options before unknown ones, so a typo (`--agnet oracle`) read as
 * "required option -a not specified". The required mark moves to our own flag, checked after.
 */
export function takeRequired(option: Option): void {
  if (!option.mandatory) return;
  option.mandatory = false;
  (option as Option & { [REQUIRED]?: boolean })[REQUIRED] = true;
}

function defaultOf(option: Option): string | null {
  if (option.defaultValueDescription) return option.defaultValueDescription;
  const v = option.defaultValue as unknown;
  if (v === undefined || typeof v === "boolean") return null;
  // An empty list or map is "none given", which says nothing.
  if (Array.isArray(v) && v.length === 0) return null;
  if (v !== null && typeof v === "object" && Object.keys(v).length === 0) return null;
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** The option's line: its description, then (required; default: X). */
export function optionDescription(option: Option): string {
  const extra: string[] = [];
  if (isRequired(option)) extra.push("required");
  const d = option.negate ? null : defaultOf(option);
  if (d !== null) extra.push(`default: ${d}`);
  if (option.envVar) extra.push(`env: ${option.envVar}`);
  return extra.length > 0 ? `${option.description} (${extra.join("; ")})` : option.description;
}

function table(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([k]) => k.length));
  const pad = " ".repeat(width + 4);
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v.split("\n").join(`\n${pad}`)}`);
}

export function helpText(s: HelpSections): string {
  const out: string[] = [];
  for (const n of s.notes ?? []) out.push("", n);
  out.push("", "Examples:", ...s.examples.map((e) => `  $ ${e}`));
  const env = Object.entries(s.env ?? {});
  if (env.length > 0) out.push("", "Environment:", ...table(env));
  const codes = Object.entries(s.exitCodes).map(([c, w]) => [c, w] as [string, string]);
  out.push("", "Exit codes:", ...table(codes));
  return `${out.join("\n")}\n`;
}

/** Gives a command the shared sections (call once per command, after its options). */
export function withHelp(cmd: Command, s: HelpSections): Command {
  for (const [flag, text] of Object.entries(s.defaults ?? {})) {
    const option = cmd.options.find((o) => o.long === flag || o.short === flag);
    if (!option) throw new Error(`help of ${cmd.name()}: no option ${flag}`);
    option.defaultValueDescription = text;
  }
  return cmd.addHelpText("after", helpText(s));
}
