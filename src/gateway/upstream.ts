// The policy server's chat endpoint, over one keep-alive pool. undici's own timeouts are off: a long
// generation is normal, so the gateway's deadline counts idle time (no byte from the policy) instead.
import { Pool } from "undici";
import { GatewayError } from "./errors.js";
import type { JsonObject } from "./types.js";

export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { text(): Promise<string> };
}

/** Fails a call after `seconds` without progress; `touch()` on every byte received. */
export class Deadline {
  readonly controller = new AbortController();
  fired = false;
  private timer: NodeJS.Timeout;

  constructor(private readonly seconds: number) {
    this.timer = this.arm();
  }

  touch(): void {
    this.timer.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  error(): GatewayError {
    return new GatewayError(504, `policy server sent nothing for ${this.seconds} s (upstream timeout)`);
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(this.error());
    }, this.seconds * 1000);
    timer.unref();
    return timer;
  }
}

export class UpstreamClient {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(
    readonly baseUrl: string,
    apiKey: string | null,
  ) {
    const url = new URL(baseUrl);
    this.pool = new Pool(url.origin, {
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: 10_000 },
    });
    this.path = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (apiKey) this.headers.authorization = `Bearer ${apiKey}`;
  }

  get chatPath(): string {
    return this.path;
  }

  async send(body: JsonObject, deadline: Deadline): Promise<UpstreamAnswer> {
    try {
      const answer = await this.pool.request({
        method: "POST",
        path: this.path,
        headers: this.headers,
        body: JSON.stringify(body),
        signal: deadline.controller.signal,
      });
      deadline.touch();
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (err) {
      throw this.failure(err, deadline);
    }
  }

  /** Turns a transport error into the error the agent sees. */
  failure(err: unknown, deadline: Deadline): GatewayError {
    if (err instanceof GatewayError) return err;
    if (deadline.fired) return deadline.error();
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const code = e.code ?? e.cause?.code;
    if (!code) return new GatewayError(500, `gateway error: ${e.message ?? String(err)}`);
    if (code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
      return new GatewayError(502, `policy server at ${this.baseUrl} closed the connection mid-answer`);
    }
    const detail = [code, e.cause?.message ?? e.message].filter(Boolean).join(": ");
    return new GatewayError(
      502,
      `policy server unreachable at ${this.baseUrl} (${detail || "unknown error"})`,
    );
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
