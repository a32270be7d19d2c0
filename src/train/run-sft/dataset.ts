// `--data`: Prime-RL loads datasets with Hugging Face's load_dataset, which takes a dataset name
// or a local dataset folder, not a bare JSONL file. So a local JSONL is checked (the prime-sft
// checks of `bench train validate`) and packaged as `<work-dir>/prime-rl-dataset-<sha12>/train.jsonl`;
// the folder name is the content's digest, so a rerun with the same rows reuses the same name.
// A local folder is passed as it is unless a transform (--tool-defs-mode omit,
// --chat-template-kwarg) has to rewrite its train.jsonl. Anything else is a hub name, passed on.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { opt } from "../../options.js";
import { FLOAT_FIELDS, VERBATIM_FIELDS } from "../../util/float-json.js";
import { isRecord } from "../../util/jsonl.js";
import { pyJson } from "../../util/py-json.js";
import { validateFile } from "../validate/validate.js";
import { SftRefusal } from "./refusal.js";

export type ToolDefsMode = "preserve" | "omit";

/** `extra.prime_rl_sft_dataset` in train-run.json: upstream's field names. */
export interface DatasetPlan {
  source_data: string;
  resolved_data: string;
  kind: "local_jsonl_packaged" | "local_dataset_dir" | "local_dataset_dir_transformed";
  dataset_dir: string | null;
  train_jsonl: string | null;
  tool_defs_mode: ToolDefsMode;
  tool_defs_removed_rows: number | null;
  chat_template_kwargs: Record<string, unknown> | null;
  chat_template_kwargs_rows: number | null;
  message_tail_truncation: "off";
  message_tail_truncated_rows: null;
  message_tail_max_area: null;
  message_tail_max_tokens_before: null;
  message_tail_max_tokens_after: null;
  custom_trainer_pretokenized_rows: null;
  custom_trainer_pretokenized_trainable_tokens: null;
  validation: { ok: boolean; rows: number; rows_with_tool_calls: number } | null;
}

export function toolDefsMode(raw: string): ToolDefsMode {
  const v = raw.trim().toLowerCase().replaceAll("_", "-");
  const mode = ({ keep: "preserve", strip: "omit", drop: "omit" } as Record<string, string>)[v] ?? v;
  if (mode !== "preserve" && mode !== "omit")
    throw new SftRefusal(`${opt("toolDefsMode")} must be either 'preserve' or 'omit'.`);
  return mode;
}

/** KEY=VALUE; the value is a JSON literal when it parses as one (`false`, `2`, `"x"`), else the text. */
export function chatTemplateKwargs(items: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq < 0) throw new SftRefusal(`${opt("chatTemplateKwargs")} must be KEY=VALUE, got "${item}".`);
    const key = item.slice(0, eq).trim();
    if (!key) throw new SftRefusal(`${opt("chatTemplateKwargs")} must have a non-empty key: "${item}".`);
    const raw = item.slice(eq + 1);
    let text = raw.trim();
    if (["true", "false", "null"].includes(text.toLowerCase())) text = text.toLowerCase();
    try {
      out[key] = JSON.parse(text);
    } catch {
      out[key] = raw;
    }
  }
  return out;
}

interface Transform {
  omitToolDefs: boolean;
  kwargs: Record<string, unknown>;
}

function hasTransform(t: Transform): boolean {
  return t.omitToolDefs || Object.keys(t.kwargs).length > 0;
}

/** Validation first: Prime-RL would fail (or, worse, train) on rows that do not hold together. */
async function validated(file: string): Promise<NonNullable<DatasetPlan["validation"]>> {
  const report = await validateFile(file, { format: "prime-sft" });
  if (!report.ok) {
    const e = report.errors?.[0];
    const where = e?.line !== undefined ? `${file} line ${e.line}` : file;
    throw new Error(
      `${opt("data")}: ${where}: ${e?.message ?? "invalid"} (${report.errors?.length ?? 0} problem(s); ` +
        `\`bench train validate ${file}\` lists them).`,
    );
  }
  return { ok: true, rows: report.rows, rows_with_tool_calls: report.rows_with_tool_calls };
}

/**
 * A rewritten row as upstream writes it (json.dumps(row, ensure_ascii=False, sort_keys=True)), with
 * a float reward still a float: JSON.parse read `1.0` as 1, and a shard whose rewards read back as
 * integers does not concatenate with float ones.
 */
export function rowText(row: Record<string, unknown>): string {
  return pyJson(row, { ensureAscii: false, floats: FLOAT_FIELDS, verbatim: VERBATIM_FIELDS });
}

/** Rows rewritten one by one; blank lines kept, so line numbers in an error still match the source. */
async function copyTransformed(source: string, dest: string, t: Transform) {
  const lines = (await fs.readFile(source, "utf8")).split(/(?<=\n)/);
  let removed = 0;
  let kwargsRows = 0;
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) {
      out.push(line);
      return;
    }
    const row = JSON.parse(line) as unknown;
    if (!isRecord(row)) throw new Error(`${source} line ${i + 1}: every JSONL row must be an object.`);
    if (t.omitToolDefs && ("tool_defs" in row || "tools" in row)) removed++;
    if (t.omitToolDefs) {
      delete row.tool_defs;
      delete row.tools;
    }
    if (Object.keys(t.kwargs).length > 0) {
      const existing = row.chat_template_kwargs ?? {};
      if (!isRecord(existing))
        throw new Error(`${source} line ${i + 1}: chat_template_kwargs must be an object when present.`);
      row.chat_template_kwargs = { ...existing, ...t.kwargs };
      kwargsRows++;
    }
    out.push(`${rowText(row)}\n`);
  });
  await fs.writeFile(dest, out.join(""));
  return {
    tool_defs_removed_rows: t.omitToolDefs ? removed : null,
    chat_template_kwargs_rows: Object.keys(t.kwargs).length > 0 ? kwargsRows : null,
  };
}

async function freshStaging(workDir: string): Promise<string> {
  const dir = path.join(workDir, "prime-rl-dataset-staging");
  await fs.rm(dir, { recursive: true, force: true });
  return dir;
}

/** Renamed into place whole, so Prime-RL never reads a half-written dataset folder. */
async function finalize(workDir: string, staging: string): Promise<string> {
  const digest = createHash("sha256")
    .update(await fs.readFile(path.join(staging, "train.jsonl")))
    .digest("hex")
    .slice(0, 12);
  const dir = path.join(workDir, `prime-rl-dataset-${digest}`);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(staging, dir);
  return dir;
}

function expandUser(p: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
}

export interface DataOptions {
  data?: string;
  toolDefsMode: ToolDefsMode;
  chatTemplateKwargs: Record<string, unknown>;
  /** Absolute; already created. */
  workDir: string;
  /** Where a relative --data starts. */
  cwd: string;
}

/** What the refusals of --data need to know: the transforms asked for. */
export interface DataAsk {
  data?: string;
  cwd: string;
  toolDefsMode: ToolDefsMode;
  chatTemplateKwargs: Record<string, unknown>;
  /** "off" unless a tail truncation mode was asked for. */
  messageTailTruncation?: string;
}

/**
 * Where --data is, after upstream's refusals of it (in its order): a transform with no data, a
 * missing local JSONL, a transform of a dataset that is not here to rewrite. Writes nothing, so
 * run sft can call it before anything else is refused by name.
 */
export async function locateData(
  o: DataAsk,
): Promise<
  | { kind: "none" }
  | { kind: "remote"; data: string }
  | { kind: "local"; data: string; local: string; isDir: boolean }
> {
  const hasKwargs = Object.keys(o.chatTemplateKwargs).length > 0;
  const tail = (o.messageTailTruncation ?? "off") !== "off";
  if (!o.data) {
    if (hasKwargs) throw new SftRefusal(`${opt("chatTemplateKwargs")} requires ${opt("data")}.`);
    if (tail) throw new SftRefusal(`${opt("messageTailTruncation")} requires ${opt("data")}.`);
    return { kind: "none" };
  }
  const local = path.resolve(o.cwd, expandUser(o.data));
  const stat = await fs.stat(local).catch(() => null);
  if (stat !== null) return { kind: "local", data: o.data, local, isDir: stat.isDirectory() };
  if (path.extname(local) === ".jsonl")
    throw new SftRefusal(`${opt("data")} JSONL file not found: ${o.data}`);
  const needsLocal =
    o.toolDefsMode !== "preserve"
      ? opt("toolDefsMode", "omit")
      : hasKwargs
        ? opt("chatTemplateKwargs")
        : tail
          ? opt("messageTailTruncation")
          : null;
  if (needsLocal)
    throw new SftRefusal(
      `${needsLocal} requires ${opt("data")} to be a local JSONL file or a local dataset directory.`,
    );
  return { kind: "remote", data: o.data };
}

/** The `--data.name` to pass (null: none) and the plan to record (null: nothing local). */
export async function prepareData(
  o: DataOptions,
): Promise<{ data: string | null; plan: DatasetPlan | null }> {
  const kwargs = o.chatTemplateKwargs;
  const hasKwargs = Object.keys(kwargs).length > 0;
  const where = await locateData(o);
  if (where.kind === "none") return { data: null, plan: null };
  if (where.kind === "remote") return { data: where.data, plan: null };
  const t: Transform = { omitToolDefs: o.toolDefsMode === "omit", kwargs };
  const local = where.local;
  const source = await fs.realpath(local);
  const base = {
    source_data: where.data,
    tool_defs_mode: o.toolDefsMode,
    tool_defs_removed_rows: null,
    chat_template_kwargs: hasKwargs ? kwargs : null,
    chat_template_kwargs_rows: null,
    message_tail_truncation: "off",
    message_tail_truncated_rows: null,
    message_tail_max_area: null,
    message_tail_max_tokens_before: null,
    message_tail_max_tokens_after: null,
    custom_trainer_pretokenized_rows: null,
    custom_trainer_pretokenized_trainable_tokens: null,
  } as const;

  if (where.isDir) {
    const train = path.join(source, "train.jsonl");
    const hasTrain = (await fs.stat(train).catch(() => null))?.isFile() ?? false;
    const validation = hasTrain ? await validated(train) : null;
    if (!hasTransform(t)) {
      const plan: DatasetPlan = {
        ...base,
        resolved_data: source,
        kind: "local_dataset_dir",
        dataset_dir: source,
        train_jsonl: hasTrain ? train : null,
        validation,
      };
      return { data: source, plan };
    }
    if (!hasTrain)
      throw new SftRefusal(`local Prime-RL data transforms require ${source} to contain train.jsonl.`);
    const staging = await freshStaging(o.workDir);
    await fs.cp(source, staging, { recursive: true });
    const stats = await copyTransformed(train, path.join(staging, "train.jsonl"), t);
    const dir = await finalize(o.workDir, staging);
    const plan: DatasetPlan = {
      ...base,
      ...stats,
      resolved_data: dir,
      kind: "local_dataset_dir_transformed",
      dataset_dir: dir,
      train_jsonl: path.join(dir, "train.jsonl"),
      validation,
    };
    return { data: dir, plan };
  }

  if (path.extname(source) !== ".jsonl")
    throw new SftRefusal(`${opt("data")} local files must be Prime-SFT JSONL files, got ${source}`);
  const validation = await validated(source);
  const staging = await freshStaging(o.workDir);
  await fs.mkdir(staging, { recursive: true });
  const stagedTrain = path.join(staging, "train.jsonl");
  let stats = {};
  if (hasTransform(t)) stats = await copyTransformed(source, stagedTrain, t);
  else await fs.copyFile(source, stagedTrain);
  const dir = await finalize(o.workDir, staging);
  const plan: DatasetPlan = {
    ...base,
    ...stats,
    resolved_data: dir,
    kind: "local_jsonl_packaged",
    dataset_dir: dir,
    train_jsonl: path.join(dir, "train.jsonl"),
    validation,
  };
  return { data: dir, plan };
}
