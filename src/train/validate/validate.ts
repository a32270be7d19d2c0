// `bench train validate`: every row checked before a trainer sees it.
import { promises as fs } from "node:fs";
import { UserInputError } from "../../errors.js";
import { checkOptionKeys, opt } from "../../options.js";
import { isRecord } from "../../util/jsonl.js";
import { checkMessages, declaredToolNames } from "./messages.js";
import type { TokenizationCheck, TokenizationSummary } from "./tokenization.js";

export type RowFormat = "prime-sft" | "trl-sft" | "tokens";
export const ROW_FORMATS: readonly RowFormat[] = ["prime-sft", "trl-sft", "tokens"];

const BANNED_ROW_KEYS = [
  "gold",
  "gold_solution",
  "verify_source",
  "tools_py",
  "initial_db",
  "db_json",
  "target_constants",
  "private_reasoning",
  "reasoning_content",
  "thinking_blocks",
];

export function formatOfRow(row: unknown): RowFormat | null {
  if (!isRecord(row)) return null;
  if ("prompt_ids" in row) return "tokens";
  // Prime-RL's rollout rows (upstream's results.jsonl) have prompt and completion too, with tool_defs.
  if ("completion" in row && "prompt" in row)
    return "tool_defs" in row && !("tools" in row) ? "prime-sft" : "trl-sft";
  if ("messages" in row) return "prime-sft";
  return null;
}

function tokenProblems(row: Record<string, unknown>): string[] {
  const ints = (v: unknown) => Array.isArray(v) && v.every((x) => Number.isInteger(x));
  const problems: string[] = [];
  if (!ints(row.prompt_ids)) problems.push("prompt_ids must be a list of integers");
  if (!ints(row.completion_ids)) problems.push("completion_ids must be a list of integers");
  const ids = Array.isArray(row.completion_ids) ? row.completion_ids.length : -1;
  const mask = row.completion_mask;
  if (!Array.isArray(mask) || mask.length !== ids || !mask.every((x) => x === 0 || x === 1)) {
    problems.push("completion_mask must hold 0 or 1 for every completion id");
  } else if (!mask.includes(1)) {
    problems.push("completion_mask has no sampled token");
  }
  const lp = row.completion_logprobs;
  if (
    !Array.isArray(lp) ||
    lp.length !== ids ||
    !lp.every((x) => typeof x === "number" && Number.isFinite(x))
  ) {
    problems.push("completion_logprobs must hold one finite number for every completion id");
  }
  return problems;
}

/**
 * A prime-sft row's conversation: `messages`, or, as upstream also accepts (Prime-RL's own rollout
 * rows, results.jsonl), `prompt` followed by `completion`.
 */
function primeMessages(row: Record<string, unknown>): unknown {
  if (Array.isArray(row.messages) && row.messages.length > 0) return row.messages;
  if (Array.isArray(row.prompt) && Array.isArray(row.completion)) return [...row.prompt, ...row.completion];
  return row.messages;
}

export interface RowCheck {
  problems: string[];
  toolCalls: number;
}

/** Problems with one row, as sentences; an empty list means the row is fine. */
export function checkRow(row: unknown, format?: RowFormat): RowCheck {
  const fmt = format ?? formatOfRow(row);
  if (!isRecord(row) || fmt === null)
    return { problems: ["not a prime-sft, trl-sft or tokens row"], toolCalls: 0 };
  const banned = BANNED_ROW_KEYS.filter((k) => k in row).map(
    (k) => `row carries "${k}", which rows must not contain`,
  );
  if (fmt === "tokens") return { problems: [...banned, ...tokenProblems(row)], toolCalls: 0 };
  const problems = [...banned];
  const tools = declaredToolNames(
    fmt === "trl-sft" ? row.tools : "tool_defs" in row ? row.tool_defs : row.tools,
    problems,
  );
  if (fmt === "prime-sft") {
    const check = checkMessages(primeMessages(row), tools, { objectArguments: false });
    return { problems: [...problems, ...check.problems], toolCalls: check.toolCalls };
  }
  if (!Array.isArray(row.prompt) || row.prompt.length === 0)
    problems.push("prompt must be a non-empty message list");
  const prompt = Array.isArray(row.prompt) ? row.prompt : [];
  const completion = Array.isArray(row.completion) ? row.completion : [];
  if (completion.length !== 1 || !isRecord(completion[0]) || completion[0].role !== "assistant") {
    problems.push("completion must be exactly one assistant message");
  }
  if ("tool_defs" in row) problems.push("a trl-sft row names its tools `tools`, not `tool_defs`");
  const check = checkMessages([...prompt, ...completion], tools, { objectArguments: true });
  return { problems: [...problems, ...check.problems], toolCalls: check.toolCalls };
}

export interface ValidationReport {
  ok: boolean;
  rows: number;
  rows_with_tool_calls: number;
  /** Only when not ok: the first problems, each with its 1-based row number. */
  errors?: Array<{ row: number; line?: number; message: string }>;
  /** With --tokenizer (trl-sft): the spread of rendered lengths. */
  tokenization?: TokenizationSummary;
}

export interface ValidateOptions {
  format?: RowFormat;
  requireToolCalls?: boolean;
  expectedRows?: number;
  /** --tokenizer: sound trl-sft rows are also measured as the trainer renders them. */
  tokenization?: TokenizationCheck | null;
  /** Another family of rows (branch-tree) brings its own check in place of checkRow. */
  checkRow?: (row: unknown) => RowCheck;
}

const MAX_ERRORS = 50;

/** Every option of validateRows and validateFile: one not listed here is refused with the nearest name. */
const OPTIONS: Record<keyof ValidateOptions, true> = {
  format: true,
  requireToolCalls: true,
  expectedRows: true,
  tokenization: true,
  checkRow: true,
};

export function validateRows(rows: Iterable<unknown>, opts: ValidateOptions = {}): ValidationReport {
  checkOptionKeys("validateRows", opts, OPTIONS);
  if (opts.format !== undefined && !ROW_FORMATS.includes(opts.format)) {
    throw new UserInputError(
      `${opt("format")}: unknown format "${opts.format}"; use ${ROW_FORMATS.join(", ")}.`,
    );
  }
  const errors: Array<{ row: number; message: string }> = [];
  let n = 0;
  let withTools = 0;
  for (const row of rows) {
    n++;
    const check =
      row instanceof RowParseError
        ? { problems: [row.message], toolCalls: 0 }
        : opts.checkRow
          ? opts.checkRow(row)
          : checkRow(row, opts.format);
    const measured =
      opts.tokenization && check.problems.length === 0
        ? opts.tokenization.check(row as Record<string, unknown>)
        : null;
    if (measured) check.problems.push(measured);
    if (check.toolCalls > 0) withTools++;
    for (const message of check.problems) if (errors.length < MAX_ERRORS) errors.push({ row: n, message });
  }
  if (opts.requireToolCalls && withTools !== n) {
    errors.push({ row: 0, message: `not all rows contain tool calls: ${withTools} / ${n}` });
  }
  if (opts.expectedRows !== undefined && opts.expectedRows !== n) {
    errors.push({ row: 0, message: `expected ${opts.expectedRows} row(s), found ${n}` });
  }
  const report: ValidationReport = { ok: errors.length === 0, rows: n, rows_with_tool_calls: withTools };
  const tokenization = opts.tokenization?.summary();
  if (tokenization) report.tokenization = tokenization;
  if (errors.length > 0) report.errors = errors;
  return report;
}

/** A line that is not JSON: validation reports it as that row's problem. */
export class RowParseError {
  constructor(readonly message: string) {}
}

export async function validateFile(file: string, opts: ValidateOptions = {}): Promise<ValidationReport> {
  checkOptionKeys("validateFile", opts, OPTIONS);
  const text = await fs.readFile(file, "utf8");
  const rows: unknown[] = [];
  const lines: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    lines.push(i + 1);
    try {
      rows.push(JSON.parse(line));
    } catch (err) {
      rows.push(new RowParseError(`invalid JSON: ${(err as Error).message}`));
    }
  });
  const report = validateRows(rows, opts);
  for (const e of report.errors ?? []) if (e.row > 0) e.line = lines[e.row - 1];
  return report;
}
