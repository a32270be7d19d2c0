// Rollouts known to the gateway: each has its own credential, trajectory file (opened once, appended
// whole lines only: the lines of one event-loop turn in one write) and usage counters, which outlive
// the credential for the final tally.
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import { opt, phrase } from "../options.js";
import type { Bound } from "./errors.js";
import type { OriginKind } from "./origin.js";
import type { CallFault, GatewayOptions, ModelWitness, RolloutUsage } from "./types.js";
import { type CallTokens, costOf } from "./usage.js";

export interface CallOutcome {
  failed: boolean;
  /** A failure of the agent's side (it hung up): recorded, not counted against the policy. */
  agentClosed: boolean;
  /** Whose fault the failure was (null when the call succeeded). */
  fault: CallFault | null;
  /** The status the agent got. */
  status: number;
  tokens: CallTokens;
  policyVersion: string | null;
  error: string | null;
  /** The request fields not forwarded upstream. */
  droppedFields: string[];
  /** The bound the call was refused for going over, or null. */
  refused: Bound | null;
  /** Who in the sandbox made the call (origin.ts). */
  origin: OriginKind;
  /** The server reported a policy version other than the one the run stamped. */
  versionMismatch: boolean;
}

export class GatewayRollout {
  readonly usage: RolloutUsage = {
    calls: 0,
    failedCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    priceSource: null,
    policyVersions: [],
    lastError: null,
    droppedFields: {},
    refusedCalls: {},
    recordedBytes: 0,
    callsByOrigin: {},
    policyVersionMismatches: 0,
  };
  /** What the witness adds to the usage counts (calls and failed calls are the usage's). */
  readonly verdicts: Omit<ModelWitness, "calls" | "failedCalls"> = {
    last: null,
    consecutiveEndpointFailures: 0,
    endedBy: null,
  };
  /** Aborted when the gateway ends the rollout; rollout/run.ts stops the agent on it. */
  readonly ended = new AbortController();
  revoked = false;
  /** The step of a multi-step rollout now running; a call is tagged with the step it began in. */
  step: string | null = null;
  /** Sent upstream with every call of this rollout (ROLLOUT_HEADERS); servers that do not know them ignore them. */
  forwardHeaders: Record<string, string> = {};
  /** The 1-based `--trials` repeat this rollout runs in (a seed's offset). */
  repeat = 1;
  private inflight = 0;
  private idle: (() => void) | null = null;
  private closing: Promise<void> | null = null;
  private readonly out: WriteStream;
  /** Lines not yet handed to the file, written together at the end of this event-loop turn. */
  private queued = "";

  constructor(
    readonly name: string,
    readonly apiKey: string,
    file: string,
    private readonly price: GatewayOptions["price"],
    private readonly secret: string | null,
    private readonly failFastCalls: number,
    private readonly endpointUrl: string,
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.out = createWriteStream(file, { flags: "a" });
    this.out.on("error", (err) => {
      this.usage.lastError = `cannot write ${file}: ${err.message}`;
    });
    if (price) {
      this.usage.costUsd = 0;
      this.usage.priceSource = price.source ?? null;
    }
  }

  begin(): void {
    this.inflight++;
  }

  /** Appends one exchange's line (JSON and a newline) and counts it. */
  finish(line: string, outcome: CallOutcome): void {
    let text = line;
    if (this.secret && text.includes(this.secret)) text = text.split(this.secret).join("[redacted]");
    if (this.queued === "") setImmediate(this.flush);
    this.queued += text;
    this.usage.recordedBytes += Buffer.byteLength(text);
    this.count(outcome);
    this.judge(outcome);
    this.inflight--;
    if (this.inflight === 0 && this.idle) this.idle();
  }

  /** A call that ended without a line (the gateway itself broke): it no longer holds the file open. */
  abandon(): void {
    this.inflight--;
    if (this.inflight === 0 && this.idle) this.idle();
  }

  private readonly flush = (): void => {
    const text = this.queued;
    this.queued = "";
    if (text !== "" && !this.out.destroyed) this.out.write(text);
  };

  /** Resolves when every call in flight is recorded and the file is closed; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.inflight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
      this.flush();
      if (this.out.destroyed) return;
      await new Promise<void>((resolve) => this.out.end(resolve));
    })();
    return this.closing;
  }

  private count(o: CallOutcome): void {
    const u = this.usage;
    u.calls++;
    if (o.failed && !o.agentClosed) {
      u.failedCalls++;
      u.lastError = o.error;
    }
    u.inputTokens += o.tokens.input;
    u.outputTokens += o.tokens.output;
    u.cacheReadTokens += o.tokens.cacheRead;
    u.cacheWriteTokens += o.tokens.cacheWrite;
    if (this.price && u.costUsd !== null) u.costUsd += costOf(o.tokens, this.price);
    if (o.policyVersion && !u.policyVersions.includes(o.policyVersion))
      u.policyVersions.push(o.policyVersion);
    for (const name of o.droppedFields) u.droppedFields[name] = (u.droppedFields[name] ?? 0) + 1;
    if (o.refused) u.refusedCalls[o.refused] = (u.refusedCalls[o.refused] ?? 0) + 1;
    u.callsByOrigin[o.origin] = (u.callsByOrigin[o.origin] ?? 0) + 1;
    if (o.versionMismatch) u.policyVersionMismatches++;
  }

  /**
   * The gateway as witness: a call the agent hung up on says nothing about the endpoint; any other
   * call is the rollout's latest verdict. K endpoint failures in a row, or one refusal of the user's
   * configuration, end the rollout now rather than at the agent's time limit.
   */
  private judge(o: CallOutcome): void {
    const w = this.verdicts;
    if (o.fault === "agent") return;
    w.last = { fault: o.fault, status: o.status, message: o.error };
    w.consecutiveEndpointFailures = o.fault === "endpoint" ? w.consecutiveEndpointFailures + 1 : 0;
    if (w.endedBy) return;
    if (o.fault === "config") {
      this.end("config_error", `${o.error}; ${configFix(o.status, this.endpointUrl)}`);
    } else if (o.fault === "endpoint" && w.consecutiveEndpointFailures >= this.failFastCalls) {
      const n = w.consecutiveEndpointFailures;
      this.end("provider_error", `${n} model call(s) in a row failed at the endpoint; the last: ${o.error}`);
    }
  }

  private end(category: "provider_error" | "config_error", message: string): void {
    this.verdicts.endedBy = { category, message };
    this.ended.abort(new Error(message));
  }
}

/** The fix for a configuration the endpoint refused, by status. */
function configFix(status: number, endpointUrl: string): string {
  if (status === 401 || status === 403) {
    return `the endpoint ${endpointUrl} refuses the key: pass the key it expects with ${phrase("policy.apiKey or its variable", opt("policy.apiKey"))}`;
  }
  return `the endpoint ${endpointUrl} does not serve this route or model: check ${opt("policy.baseUrl")} (it should end in /v1) and the model in ${opt("model", "provider/model")} (GET ${endpointUrl.replace(/\/+$/, "")}/models lists what it serves)`;
}

/**
 * Which rollout a call belongs to, for the policy server: the rollout's name and its repeat (the
 * 1-based index of the `--trials` repeat job it runs in). Plain headers, so real servers (vLLM,
 * SGLang, hosted APIs) ignore them and nothing about sampling changes; the scripted endpoint branches
 * on the repeat (`when: {repeat}` in a script).
 */
export const ROLLOUT_HEADERS = { rollout: "x-benchflow-rollout", repeat: "x-benchflow-repeat" } as const;

export function rolloutHeaders(name: string, repeat: number): Record<string, string> {
  return { [ROLLOUT_HEADERS.rollout]: name, [ROLLOUT_HEADERS.repeat]: String(repeat) };
}

export class RolloutRegistry {
  private readonly byKey = new Map<string, GatewayRollout>();
  private readonly byName = new Map<string, GatewayRollout>();

  constructor(
    private readonly options: GatewayOptions,
    private readonly failFastCalls: number,
  ) {}

  add(name: string, file: string, repeat = 1): GatewayRollout {
    if (this.byName.get(name)?.revoked === false) {
      throw new Error(`gateway: rollout ${name} is already registered; remove it first`);
    }
    const apiKey = `bf-${randomBytes(24).toString("base64url")}`;
    const rollout = new GatewayRollout(
      name,
      apiKey,
      file,
      this.options.price ?? null,
      this.options.upstream.apiKey,
      this.failFastCalls,
      this.options.upstream.baseUrl,
    );
    rollout.forwardHeaders = rolloutHeaders(name, repeat);
    rollout.repeat = repeat;
    this.byKey.set(apiKey, rollout);
    this.byName.set(name, rollout);
    return rollout;
  }

  /** Revokes the credential at once; the usage stays readable. */
  remove(name: string): GatewayRollout | undefined {
    const rollout = this.byName.get(name);
    if (rollout) {
      rollout.revoked = true;
      this.byKey.delete(rollout.apiKey);
    }
    return rollout;
  }

  byCredential(key: string | null): GatewayRollout | undefined {
    return key ? this.byKey.get(key) : undefined;
  }

  named(name: string): GatewayRollout | undefined {
    return this.byName.get(name);
  }

  all(): GatewayRollout[] {
    return [...this.byName.values()];
  }
}
