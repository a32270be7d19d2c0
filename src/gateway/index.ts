// The recording model gateway: one HTTP server per job in front of the policy server. Agents speak
// OpenAI chat, OpenAI Responses or Anthropic Messages with their rollout's credential; every call goes
// upstream as OpenAI chat and is appended to that rollout's llm_trajectory.jsonl.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { type GatewayCore, handleCall } from "./call.js";
import { planCapture } from "./capture.js";
import { errorBody } from "./errors.js";
import { anthropicDialect } from "./inbound/anthropic.js";
import { chatDialect } from "./inbound/chat.js";
import { geminiDialectOf } from "./inbound/gemini.js";
import { responsesDialect } from "./inbound/responses.js";
import type { Dialect } from "./inbound.js";
import { acceptWithOrigins, newOriginKey, UNATTRIBUTED } from "./origin.js";
import { credentialOf } from "./redact.js";
import { RolloutRegistry } from "./rollouts.js";
import {
  BOUNDS_DEFAULTS,
  ENDPOINT_DEFAULTS,
  type EndpointPolicy,
  type Gateway,
  type GatewayBounds,
  type GatewayOptions,
  type ModelWitness,
  type RolloutUsage,
  type Wire,
} from "./types.js";
import { UpstreamClient } from "./upstream.js";

export type {
  EndpointPolicy,
  Gateway,
  GatewayOptions,
  ModelWitness,
  RolloutUsage,
} from "./types.js";
export { BOUNDS_DEFAULTS, ENDPOINT_DEFAULTS } from "./types.js";

/**
 * A connection that sends nothing, or sends its headers slowly, holds one of the host's file
 * descriptors for nothing: short limits (Node's defaults are a minute and five). A request's whole
 * body arrives over loopback or a relay, so two minutes is generous.
 */
const SERVER_TIMEOUTS = {
  keepAliveTimeout: 65_000,
  headersTimeout: 20_000,
  requestTimeout: 120_000,
  connectionsCheckingInterval: 5_000,
};

const ROUTES: Record<string, Dialect> = {
  "/v1/chat/completions": chatDialect,
  "/chat/completions": chatDialect,
  "/v1/responses": responsesDialect,
  "/responses": responsesDialect,
  "/v1/messages": anthropicDialect,
  "/messages": anthropicDialect,
};

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const endpoint = endpointPolicyOf(options);
  checkOptions(options, endpoint);
  const bounds = boundsOf(options);
  const core: GatewayCore = {
    options,
    endpoint,
    upstream: new UpstreamClient(
      options.upstream.baseUrl,
      options.upstream.apiKey,
      {
        firstByteSec: endpoint.firstByteTimeoutSec,
        idleSec: endpoint.idleTimeoutSec,
        answerBytes: bounds.callBytes,
        connections: endpoint.maxConnections,
      },
      options.upstream.wire,
    ),
    bounds,
    plan: planCapture(options),
    originKey: newOriginKey(),
    originOf: () => UNATTRIBUTED,
  };
  const rollouts = new RolloutRegistry(options, endpoint.failFastCalls);

  const server = createServer(SERVER_TIMEOUTS, (req, res) => {
    route(core, rollouts, req, res).catch((err: Error) => {
      if (res.writableEnded) return;
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody("openai-chat", 500, `gateway error: ${err.message}`)));
    });
  });
  closeSilentConnections(server);
  const door = acceptWithOrigins(server, core.originKey);
  core.originOf = door.originOf;
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

  return {
    url: `http://${shown}:${port}`,
    originKey: core.originKey,
    addRollout(rolloutName, opts) {
      const rollout = rollouts.add(rolloutName, opts.trajectoryFile, opts.repeat);
      return { apiKey: rollout.apiKey, ended: rollout.ended.signal };
    },
    witness(rolloutName): ModelWitness {
      const rollout = rollouts.named(rolloutName);
      if (!rollout) throw new Error(`gateway: no rollout named ${rolloutName}`);
      const { last, consecutiveEndpointFailures, endedBy } = rollout.verdicts;
      return {
        calls: rollout.usage.calls,
        failedCalls: rollout.usage.failedCalls,
        last: last && { ...last },
        consecutiveEndpointFailures,
        endedBy: endedBy && { ...endedBy },
      };
    },
    setStep(rolloutName, step) {
      const rollout = rollouts.named(rolloutName);
      if (rollout) rollout.step = step;
    },
    async removeRollout(rolloutName) {
      await rollouts.remove(rolloutName)?.close();
    },
    usage(rolloutName): RolloutUsage {
      const rollout = rollouts.named(rolloutName);
      if (!rollout) throw new Error(`gateway: no rollout named ${rolloutName}`);
      return { ...rollout.usage, policyVersions: [...rollout.usage.policyVersions] };
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        door.closePending();
      });
      await Promise.all(rollouts.all().map((r) => r.close()));
      await core.upstream.close();
    },
  };
}

/** How long a new connection may wait before its first request: Node's own limits start with the request. */
const FIRST_REQUEST_MS = 20_000;

/** A connection that opens and never sends a request is closed (an idle flood holds descriptors). */
function closeSilentConnections(server: Server): void {
  const waiting = new WeakMap<Socket, NodeJS.Timeout>();
  server.on("connection", (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), FIRST_REQUEST_MS);
    timer.unref();
    waiting.set(socket, timer);
    socket.once("close", () => clearTimeout(timer));
  });
  server.on("request", (req: IncomingMessage) => {
    const timer = waiting.get(req.socket);
    if (timer) clearTimeout(timer);
  });
}

async function route(
  core: GatewayCore,
  rollouts: RolloutRegistry,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const startedAt = performance.now();
  const path = (req.url ?? "/").split("?")[0]?.replace(/\/+$/, "") || "/";
  // Claude Code checks reachability with `HEAD /` before anything else.
  if (path === "/" && (req.method === "HEAD" || req.method === "GET")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.method === "HEAD" ? undefined : '{"status":"ok"}');
    return;
  }
  const dialect = ROUTES[path] ?? geminiDialectOf(path);
  const wire: Wire =
    dialect?.wire ??
    (/\/models\/[^/]+:/.test(path)
      ? "gemini-generate-content"
      : path.includes("messages")
        ? "anthropic-messages"
        : "openai-chat");
  const isModels = req.method === "GET" && (path === "/v1/models" || path === "/models");
  if (!isModels && !(dialect && req.method === "POST")) {
    req.resume();
    return reply(res, 404, errorBody(wire, 404, `no such endpoint: ${req.method} ${path}`));
  }
  const rollout = rollouts.byCredential(credentialOf(req.headers));
  if (!rollout) {
    req.resume();
    const why = credentialOf(req.headers)
      ? "unknown credential"
      : "missing credential (Bearer token, x-api-key or x-goog-api-key)";
    return reply(res, 401, errorBody(wire, 401, `gateway: ${why}`));
  }
  if (isModels) return reply(res, 200, modelList(core.options, "anthropic-version" in req.headers));
  rollout.begin();
  try {
    const raw = await readBody(req, core.bounds.callBytes);
    await handleCall(core, dialect as Dialect, rollout, { req, res, raw, startedAt });
  } catch (err) {
    rollout.abandon();
    throw err;
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The request body, or null when it is over the cap (the call then fails with 413); what is over is read and dropped. */
function readBody(req: IncomingMessage, cap: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (part: Buffer) => {
      size += part.length;
      if (size <= cap) parts.push(part);
      else parts.length = 0;
    });
    req.on("end", () => resolve(size > cap ? null : Buffer.concat(parts)));
    req.on("error", reject);
  });
}

/** The bounds in force: what the options set over the defaults. */
export function boundsOf(options: GatewayOptions): GatewayBounds {
  const set = Object.fromEntries(
    Object.entries(options.bounds ?? {}).filter(([, v]) => v !== undefined && v !== null),
  ) as Partial<GatewayBounds>;
  return { ...BOUNDS_DEFAULTS, ...set };
}

function modelList(options: GatewayOptions, anthropic: boolean): unknown {
  const id = options.upstream.model;
  if (anthropic) {
    const model = { type: "model", id, display_name: id, created_at: "1970-01-01T00:00:00Z" };
    return { data: [model], has_more: false, first_id: id, last_id: id };
  }
  return { object: "list", data: [{ id, object: "model", created: 0, owned_by: options.upstream.provider }] };
}

/** The endpoint limits in force: `endpoint` over the older `upstreamTimeoutSec` over the defaults. */
export function endpointPolicyOf(options: GatewayOptions): EndpointPolicy {
  const both = options.upstreamTimeoutSec;
  const set = Object.fromEntries(
    Object.entries(options.endpoint ?? {}).filter(([, v]) => v !== undefined && v !== null),
  ) as Partial<EndpointPolicy>;
  return {
    ...ENDPOINT_DEFAULTS,
    ...(both !== undefined ? { firstByteTimeoutSec: both, idleTimeoutSec: both } : {}),
    ...set,
  };
}

function checkOptions(options: GatewayOptions, endpoint: EndpointPolicy): void {
  let url: URL;
  try {
    url = new URL(options.upstream.baseUrl);
  } catch {
    throw new UserInputError(
      `gateway: upstream.baseUrl ${JSON.stringify(options.upstream.baseUrl)} is not a URL; give e.g. http://host:8000/v1`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UserInputError(`gateway: upstream.baseUrl must be http:// or https://, not ${url.protocol}`);
  }
  if (!options.upstream.model)
    throw new UserInputError(`gateway: upstream.model is empty; give ${opt("model", "provider/model")}`);
  checkEndpointPolicy(endpoint);
  checkBounds(boundsOf(options));
}

/** Caps that would refuse every call are refused before anything runs. */
export function checkBounds(bounds: GatewayBounds): void {
  const names: Record<keyof GatewayBounds, string> = {
    callBytes: "policy.maxCallMib",
    recordedBytes: "policy.maxRecordedMib",
  };
  for (const key of Object.keys(names) as (keyof GatewayBounds)[]) {
    if (!(bounds[key] >= 1024) || !Number.isFinite(bounds[key]))
      throw new UserInputError(
        `${opt(names[key])} must be a positive number of MiB (at least 1 KiB), not ${bounds[key] / (1024 * 1024)}`,
      );
  }
}

/** Limits that cannot work are refused before anything runs. */
export function checkEndpointPolicy(endpoint: EndpointPolicy): void {
  const seconds: (keyof EndpointPolicy)[] = ["firstByteTimeoutSec", "idleTimeoutSec"];
  for (const key of seconds) {
    const flag = opt(`policy.${key}`);
    if (!(endpoint[key] > 0) || !Number.isFinite(endpoint[key]))
      throw new UserInputError(`${flag} must be a positive number of seconds, not ${endpoint[key]}`);
  }
  if (!Number.isInteger(endpoint.retries) || endpoint.retries < 0)
    throw new UserInputError(
      `${opt("policy.endpointRetries")} must be an integer >= 0, not ${endpoint.retries}`,
    );
  if (!Number.isInteger(endpoint.failFastCalls) || endpoint.failFastCalls < 1)
    throw new UserInputError(
      `${opt("policy.failFastCalls")} must be an integer >= 1, not ${endpoint.failFastCalls}`,
    );
  if (!Number.isInteger(endpoint.maxConnections) || endpoint.maxConnections < 1)
    throw new UserInputError(
      `${opt("policy.maxEndpointConnections")} must be an integer >= 1, not ${endpoint.maxConnections}`,
    );
}
