// `--tokenizer`: a tokenizer.json (and its chat template) from a local path or the Hugging Face
// cache. Nothing is fetched at run time: a tokenizer that is not on disk is an error that says where
// we looked and the one command that puts it there.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { envVar } from "../../env.js";
import { UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import { isRecord } from "../../util/jsonl.js";

/** What a conversion or a validation needs of a tokenizer: text to ids, and its chat template. */
export interface LoadedTokenizer {
  /** The --tokenizer value as given (written into rows and reports). */
  id: string;
  /** The --tokenizer-revision value as given, or null. */
  revision: string | null;
  /** The folder or file the tokenizer was read from. */
  source: string;
  chatTemplate: string;
  /** Special tokens a template may print (`{{ bos_token }}`). */
  specialTokens: Record<string, string>;
  encode(text: string): number[];
}

const TEMPLATE_FILE = "chat_template.jinja";

/** The variables that say where Hugging Face's hub cache is (src/env.ts's, unless a caller gives its own). */
export type HubEnv = Partial<
  Record<"HF_HUB_CACHE" | "HUGGINGFACE_HUB_CACHE" | "HF_HOME" | "XDG_CACHE_HOME" | "HOME", string>
>;

function libraryHubEnv(): HubEnv {
  return {
    HF_HUB_CACHE: envVar("HF_HUB_CACHE"),
    HUGGINGFACE_HUB_CACHE: envVar("HUGGINGFACE_HUB_CACHE"),
    HF_HOME: envVar("HF_HOME"),
    XDG_CACHE_HOME: envVar("XDG_CACHE_HOME"),
    HOME: envVar("HOME"),
  };
}

/** Hugging Face's hub cache folders, in the order huggingface_hub looks. */
export function hubCaches(env: HubEnv = libraryHubEnv()): string[] {
  const dirs: string[] = [];
  if (env.HF_HUB_CACHE) dirs.push(env.HF_HUB_CACHE);
  if (env.HUGGINGFACE_HUB_CACHE) dirs.push(env.HUGGINGFACE_HUB_CACHE);
  if (env.HF_HOME) dirs.push(path.join(env.HF_HOME, "hub"));
  const cache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  dirs.push(path.join(cache, "huggingface", "hub"));
  return [...new Set(dirs)];
}

const exists = (p: string) =>
  fs.stat(p).then(
    (s) => s,
    () => null,
  );

/** A snapshot folder of `org/name` at `revision` (a ref such as main, or a commit sha), or null. */
async function snapshotIn(cache: string, modelId: string, revision: string): Promise<string | null> {
  const repo = path.join(cache, `models--${modelId.split("/").join("--")}`);
  const ref = await fs.readFile(path.join(repo, "refs", revision), "utf8").catch(() => null);
  const sha = ref?.trim() || revision;
  // A ref name or sha never holds a path separator; refusing them keeps the lookup inside the cache.
  if (sha.includes("/") || sha.includes("\\") || sha === "." || sha === "..") return null;
  const dir = path.join(repo, "snapshots", sha);
  return (await exists(path.join(dir, "tokenizer.json"))) ? dir : null;
}

const looksLikeModelId = (s: string) => /^[\w.-]+(\/[\w.-]+)?$/.test(s) && !s.startsWith(".");

/** The tokenizer.json file and the folder holding its config, or a clear error. */
async function locate(spec: string, revision: string | null, env: HubEnv): Promise<string> {
  const local = await exists(spec);
  if (local?.isFile()) return path.resolve(spec);
  if (local?.isDirectory()) {
    const file = path.join(spec, "tokenizer.json");
    if (await exists(file)) return path.resolve(file);
    throw new UserInputError(
      `${opt("tokenizer", spec)}: the folder has no tokenizer.json. Give a folder with tokenizer.json ` +
        "(and tokenizer_config.json with its chat_template), a tokenizer.json file, or a Hugging Face model id.",
    );
  }
  if (!looksLikeModelId(spec)) {
    throw new UserInputError(
      `${opt("tokenizer", spec)}: no such file or folder, and not a Hugging Face model id (org/name).`,
    );
  }
  const caches = hubCaches(env);
  const rev = revision ?? "main";
  for (const cache of caches) {
    const dir = await snapshotIn(cache, spec, rev);
    if (dir) return path.join(dir, "tokenizer.json");
  }
  const revFlag = revision ? ` --revision ${revision}` : "";
  throw new UserInputError(
    `${opt("tokenizer", spec)}: no tokenizer for revision ${rev} on this machine, and nothing is downloaded at ` +
      `run time. Looked for ./${spec} and for models--${spec.split("/").join("--")} in ${caches.join(", ")}. ` +
      `Get it with: huggingface-cli download ${spec}${revFlag} tokenizer.json tokenizer_config.json ` +
      `(or give ${opt("tokenizer")} a folder that holds tokenizer.json).`,
  );
}

async function readJson(file: string): Promise<unknown> {
  const text = await fs.readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UserInputError(`${file}: not valid JSON (${(err as Error).message}).`);
  }
}

/** A config's chat_template: a string, or a list of named templates where "default" is the one used. */
function templateOf(config: Record<string, unknown>): string | null {
  const t = config.chat_template;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const named = t.filter(isRecord);
    const pick = named.find((x) => x.name === "default") ?? named[0];
    return typeof pick?.template === "string" ? pick.template : null;
  }
  return null;
}

function specialTokensOf(config: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["bos_token", "eos_token", "pad_token", "unk_token"]) {
    const v = config[k];
    const s = typeof v === "string" ? v : isRecord(v) && typeof v.content === "string" ? v.content : null;
    if (s !== null) out[k] = s;
  }
  return out;
}

export async function loadTokenizer(
  spec: string,
  revision: string | null = null,
  env: HubEnv = libraryHubEnv(),
): Promise<LoadedTokenizer> {
  const file = await locate(spec, revision, env);
  const dir = path.dirname(file);
  const json = await readJson(file);
  const configFile = path.join(dir, "tokenizer_config.json");
  const config = (await exists(configFile)) ? await readJson(configFile) : {};
  if (!isRecord(json) || !isRecord(config))
    throw new UserInputError(`${file}: a tokenizer.json and its tokenizer_config.json hold JSON objects.`);
  // Newer snapshots keep the template in its own file, which transformers prefers over the config's.
  const templateFile = path.join(dir, TEMPLATE_FILE);
  const chatTemplate = (await exists(templateFile))
    ? await fs.readFile(templateFile, "utf8")
    : templateOf(config);
  if (chatTemplate === null) {
    throw new UserInputError(
      `${opt("tokenizer", spec)}: ${dir} has no chat template (chat_template in tokenizer_config.json, or ` +
        `${TEMPLATE_FILE}); trl-sft rows are measured as the trainer renders them, through that template.`,
    );
  }
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (err) {
    throw new UserInputError(`${file}: not a tokenizer this reader supports (${(err as Error).message}).`);
  }
  return {
    id: spec,
    revision,
    source: dir,
    chatTemplate,
    specialTokens: specialTokensOf(config),
    // The template already printed every special token; the trainer tokenizes its text without adding more.
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
  };
}
