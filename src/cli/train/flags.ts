// Flags more than one `bench train` command takes, worded and read the same in each.
import type { TokenizerFlags } from "../../train/tokenizer/options.js";
import { numberFlag } from "../options.js";

export const GROUP_BY_HELP =
  "keys from task, agent, model, task_digest, job, policy_version, run, sampling (default: the group identity, task,agent,model,run,task_digest,policy_version,sampling; upstream's was task,agent,model,job)";

export const TOKENIZER_HELP = "a folder or tokenizer.json, or a Hugging Face model id in the local HF cache";

/** --tokenizer, --tokenizer-revision, --max-length as convert and validate take them. */
export function tokenizerFlags(o: Record<string, unknown>): TokenizerFlags {
  return {
    tokenizer: o.tokenizer as string | undefined,
    tokenizerRevision: o.tokenizerRevision as string | undefined,
    maxLength: numberFlag("--max-length", o.maxLength as string | undefined, { integer: true, min: 1 }),
  };
}
