// A small client for the Docker Engine HTTP API over a unix socket or TCP. Podman's compatible
// service answers the same unversioned paths, so one client serves both engines.
import http, { type IncomingMessage } from "node:http";
import { Readable } from "node:stream";

export interface EngineAddress {
  /** As a user would write it in DOCKER_HOST: unix:///path or tcp://host:port. */
  url: string;
  socketPath?: string;
  host?: string;
  port?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: Buffer | Readable;
  contentType?: string;
  signal?: AbortSignal;
}

/** The engine answered with an error status. */
export class EngineError extends Error {
  override name = "EngineError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Nothing answers at the engine's address (socket missing, connection refused, ...). */
export class EngineUnreachableError extends Error {
  override name = "EngineUnreachableError";
}

export function parseEngineUrl(url: string): EngineAddress {
  if (url.startsWith("unix://")) return { url, socketPath: url.slice("unix://".length) };
  const m = /^(?:tcp|http):\/\/([^:/]+)(?::(\d+))?\/?$/.exec(url);
  if (m?.[1]) return { url, host: m[1], port: Number(m[2] ?? 2375) };
  if (url.startsWith("/")) return { url: `unix://${url}`, socketPath: url };
  throw new Error(`DOCKER_HOST=${url} is not supported: use unix:///path/to/socket or tcp://host:port`);
}

export class EngineClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(readonly address: EngineAddress) {}

  /** Sends one request; the caller reads (or drains) the response body. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<IncomingMessage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) query.set(k, String(v));
    const qs = query.size > 0 ? `?${query}` : "";
    const headers: Record<string, string> = {};
    let payload: Buffer | Readable | undefined = options.body;
    if (options.json !== undefined) {
      payload = Buffer.from(JSON.stringify(options.json));
      headers["content-type"] = "application/json";
    } else if (options.contentType) headers["content-type"] = options.contentType;
    if (Buffer.isBuffer(payload)) headers["content-length"] = String(payload.length);
    const { socketPath, host, port } = this.address;
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          method,
          path: `${path}${qs}`,
          socketPath,
          host: host ?? "localhost",
          port,
          headers,
          agent: this.agent,
        },
        resolve,
      );
      const onAbort = () => req.destroy(new Error(`${method} ${path} aborted`));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      req.on("close", () => options.signal?.removeEventListener("abort", onAbort));
      req.on("error", (err: NodeJS.ErrnoException) => reject(this.unreachable(err) ?? err));
      if (payload instanceof Readable) {
        payload.on("error", (err) => req.destroy(err));
        payload.pipe(req);
      } else req.end(payload);
    });
  }

  /** A request whose error statuses throw EngineError with the engine's own message. */
  async call(method: string, path: string, options: RequestOptions = {}): Promise<IncomingMessage> {
    const res = await this.request(method, path, options);
    if ((res.statusCode ?? 500) < 400) return res;
    const text = (await readAll(res)).toString("utf8");
    let message = text.trim();
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    throw new EngineError(res.statusCode ?? 500, `${method} ${path}: ${res.statusCode} ${message}`);
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const text = (await readAll(await this.call(method, path, options))).toString("utf8");
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A request whose body we only need to finish (204s, starts, kills). */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<void> {
    await readAll(await this.call(method, path, options));
  }

  close(): void {
    this.agent.destroy();
  }

  private unreachable(err: NodeJS.ErrnoException): EngineUnreachableError | null {
    const codes = ["ENOENT", "ECONNREFUSED", "EACCES", "ENOTFOUND", "EHOSTUNREACH"];
    if (!err.code || !codes.includes(err.code)) return null;
    return new EngineUnreachableError(`no container engine answers at ${this.address.url} (${err.code})`);
  }
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
