// Token capture (`benchflow.token_capture.v1`): what to ask the policy for, and what came back.
// A field is either captured or listed in `unavailable` with a reason, never silently missing.
import type { GatewayOptions, Json, JsonObject, Wire } from "./types.js";
import { isObject } from "./types.js";

export interface CapturePlan {
  enabled: boolean;
  topLogprobs: number | null;
  /** How token ids are asked for, or null when they are not. */
  idStyle: "vllm" | "sglang" | null;
  /** Why ids are not asked for (capture on, ids off). */
  idsSkipped: string | null;
}

export function planCapture(options: GatewayOptions): CapturePlan {
  const capture = options.capture;
  const provider = options.upstream.provider;
  const topLogprobs = capture.topLogprobs ?? null;
  if (!capture.enabled) return { enabled: false, topLogprobs: null, idStyle: null, idsSkipped: null };
  const mode = capture.tokenIds ?? "auto";
  const style = provider === "sglang" ? "sglang" : "vllm";
  if (mode === "on") return { enabled: true, topLogprobs, idStyle: style, idsSkipped: null };
  if (mode === "auto" && (provider === "vllm" || provider === "sglang")) {
    return { enabled: true, topLogprobs, idStyle: style, idsSkipped: null };
  }
  const why =
    mode === "off"
      ? "token ids are turned off (tokenIds: off)"
      : `token ids are asked only of vllm and sglang servers (tokenIds: auto, provider ${provider})`;
  return { enabled: true, topLogprobs, idStyle: null, idsSkipped: why };
}

/** Adds the capture fields to an upstream chat request (top-level fields, as the servers read them). */
export function applyCapture(body: JsonObject, plan: CapturePlan): void {
  if (!plan.enabled) return;
  body.logprobs = true;
  if (plan.topLogprobs !== null) body.top_logprobs = plan.topLogprobs;
  if (plan.idStyle === "vllm") body.return_token_ids = true;
  if (plan.idStyle === "sglang") {
    body.return_input_ids_in_sglext = true;
    body.return_output_ids_in_sglext = true;
  }
}

interface ChoiceTokens {
  tokenIds: number[] | null;
  entries: JsonObject[] | null;
}

type Reason = "provider_api_unsupported" | "not_requested" | "not_returned" | "request_failed";

/** Collects prompt ids, sampled ids and logprobs from one call, streamed or not. */
export class TokenCaptureCollector {
  private promptIds: number[] | null = null;
  private readonly choices = new Map<number, ChoiceTokens>();
  private failure: string | null = null;

  constructor(
    private readonly plan: CapturePlan,
    private readonly wire: Wire,
    private readonly provider: string,
  ) {}

  /** A non-streamed completion, or one streamed chunk: both carry the same fields. */
  observe(body: JsonObject): void {
    if (Array.isArray(body.prompt_token_ids) && this.promptIds === null) {
      this.promptIds = body.prompt_token_ids as number[];
    }
    const sglext = body.sglext;
    if (isObject(sglext)) {
      if (Array.isArray(sglext.input_ids)) this.promptIds = sglext.input_ids as number[];
      if (Array.isArray(sglext.output_ids)) {
        sglext.output_ids.forEach((ids, index) => {
          if (Array.isArray(ids)) this.choice(index).tokenIds = [...(ids as number[])];
        });
      }
    }
    if (!Array.isArray(body.choices)) return;
    for (const raw of body.choices) {
      if (!isObject(raw)) continue;
      const tokens = this.choice(typeof raw.index === "number" ? raw.index : 0);
      if (Array.isArray(raw.token_ids)) {
        tokens.tokenIds = [...(tokens.tokenIds ?? []), ...(raw.token_ids as number[])];
      }
      const logprobs = raw.logprobs;
      if (isObject(logprobs) && Array.isArray(logprobs.content)) {
        tokens.entries = [...(tokens.entries ?? []), ...(logprobs.content as JsonObject[])];
      }
    }
  }

  /** The call failed: nothing can be captured. */
  fail(detail: string): void {
    this.failure = detail;
  }

  build(): JsonObject {
    const plan = this.plan;
    const unavailable: Record<string, { reason: Reason; detail: string }> = {};
    const mark = (field: string, reason: Reason, detail: string) => {
      unavailable[field] ??= { reason, detail };
    };
    if (this.failure !== null) {
      for (const field of ["prompt_token_ids", "completion_token_ids", "logprobs"]) {
        mark(field, "request_failed", this.failure);
      }
    } else if (plan.idStyle === null) {
      mark("prompt_token_ids", "not_requested", plan.idsSkipped ?? "token ids were not requested");
      mark("completion_token_ids", "not_requested", plan.idsSkipped ?? "token ids were not requested");
    }
    const idsAsked = plan.idStyle !== null && this.failure === null;
    if (idsAsked && this.promptIds === null) {
      mark("prompt_token_ids", "not_returned", `the ${this.provider} server sent no prompt token ids`);
    }
    const completions: JsonObject[] = [];
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    if (indexes.length === 0 && this.failure === null) {
      if (idsAsked) mark("completion_token_ids", "not_returned", "the response had no choices");
      mark("logprobs", "not_returned", "the response had no choices");
    }
    for (const index of indexes) {
      const c = this.choices.get(index) as ChoiceTokens;
      if (idsAsked && c.tokenIds === null) {
        mark("completion_token_ids", "not_returned", `choice ${index} came back without token ids`);
      }
      if (c.entries === null && this.failure === null) {
        mark("logprobs", "not_returned", `choice ${index} came back without logprobs`);
      }
      completions.push({
        index,
        token_ids: c.tokenIds,
        tokens: c.entries ? c.entries.map((e) => (typeof e.token === "string" ? e.token : null)) : null,
        logprobs: c.entries ? c.entries.map((e) => (typeof e.logprob === "number" ? e.logprob : null)) : null,
        top_logprobs: c.entries && plan.topLogprobs ? c.entries.map(topOf) : null,
      });
    }
    return {
      schema_version: "benchflow.token_capture.v1",
      wire: this.wire,
      provider: this.provider,
      requested: { logprobs: true, top_logprobs: plan.topLogprobs, token_ids: plan.idStyle !== null },
      prompt_token_ids: this.failure === null ? this.promptIds : null,
      completions,
      unavailable,
    };
  }

  private choice(index: number): ChoiceTokens {
    let c = this.choices.get(index);
    if (!c) {
      c = { tokenIds: null, entries: null };
      this.choices.set(index, c);
    }
    return c;
  }
}

function topOf(entry: JsonObject): Json {
  if (!Array.isArray(entry.top_logprobs)) return null;
  return entry.top_logprobs
    .filter(isObject)
    .map((t) => ({ token: t.token ?? null, logprob: t.logprob ?? null }));
}
