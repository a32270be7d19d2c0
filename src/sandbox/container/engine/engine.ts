// Finding the container engine: DOCKER_HOST when set, else the usual Docker and Podman sockets.
// One connection per address is kept for the whole process.
import { envVar } from "../../../env.js";
import { CategorizedError } from "../../../errors.js";
import { type EngineAddress, EngineClient, EngineUnreachableError, parseEngineUrl } from "./client.js";

export const DEFAULT_SOCKETS = ["/var/run/docker.sock", "/run/podman/podman.sock"];
const SETUP_HINT = "start Docker, or run scripts/setup-podman.sh (Podman with the Docker API)";

/** What finding the engine reads of an environment (a test or a backend names its own address). */
export interface EngineEnv {
  DOCKER_HOST?: string;
}

/** The user's own: DOCKER_HOST as Docker's clients read it. */
export function engineEnv(): EngineEnv {
  return { DOCKER_HOST: envVar("DOCKER_HOST") };
}

export interface Engine {
  client: EngineClient;
  /** The address as DOCKER_HOST would spell it. */
  socket: string;
  /** "docker" or "podman". */
  name: string;
  version: string;
  apiVersion: string;
  isPodman: boolean;
  /** Whether the engine runs on this machine (so its containers' pids and namespaces are ours to see). */
  isLocal: boolean;
}

interface VersionReply {
  Version?: string;
  ApiVersion?: string;
  Components?: { Name?: string; Version?: string }[];
}

function candidateAddresses(env: EngineEnv): EngineAddress[] {
  if (env.DOCKER_HOST) return [parseEngineUrl(env.DOCKER_HOST)];
  return DEFAULT_SOCKETS.map((p) => parseEngineUrl(`unix://${p}`));
}

async function probe(address: EngineAddress): Promise<Engine> {
  const client = new EngineClient(address);
  try {
    await client.send("GET", "/_ping");
    const v = await client.json<VersionReply>("GET", "/version");
    const isPodman = (v.Components ?? []).some((c) => /podman/i.test(c.Name ?? ""));
    return {
      client,
      socket: address.url,
      name: isPodman ? "podman" : "docker",
      version: v.Version ?? "unknown",
      apiVersion: v.ApiVersion ?? "unknown",
      isPodman,
      isLocal: address.socketPath !== undefined || ["localhost", "127.0.0.1"].includes(address.host ?? ""),
    };
  } catch (err) {
    client.close();
    throw err;
  }
}

function describeFailure(tried: string[], reasons: string[], viaEnv: boolean): string {
  if (viaEnv) return `DOCKER_HOST=${tried[0]}: ${reasons[0]}; ${SETUP_HINT}, or fix DOCKER_HOST`;
  return `no container engine is reachable (tried ${tried.join(", ")}): ${SETUP_HINT}, or set DOCKER_HOST`;
}

async function resolve(env: EngineEnv): Promise<Engine> {
  let addresses: EngineAddress[];
  try {
    addresses = candidateAddresses(env);
  } catch (err) {
    throw new CategorizedError("sandbox_setup", (err as Error).message);
  }
  const reasons: string[] = [];
  for (const address of addresses) {
    try {
      return await probe(address);
    } catch (err) {
      reasons.push(err instanceof Error ? err.message : String(err));
    }
  }
  const message = describeFailure(
    addresses.map((a) => a.url),
    reasons,
    Boolean(env.DOCKER_HOST),
  );
  throw new CategorizedError("sandbox_setup", message, {
    cause: new EngineUnreachableError(reasons.join("; ")),
  });
}

const engines = new Map<string, Promise<Engine>>();

/** The engine for this process (cached); throws CategorizedError("sandbox_setup") naming the fix. */
export function connectEngine(env: EngineEnv = engineEnv()): Promise<Engine> {
  const key = env.DOCKER_HOST ?? "";
  let engine = engines.get(key);
  if (!engine) {
    engine = resolve(env);
    engines.set(key, engine);
    engine.catch(() => engines.delete(key));
  }
  return engine;
}

/** For `--sandbox auto` and `bench doctor`: which engine answers, or why none does. */
export async function detectEngine(
  env: EngineEnv = engineEnv(),
): Promise<{ socket: string; name: string; version: string } | { unavailable: string }> {
  try {
    const { socket, name, version } = await connectEngine(env);
    return { socket, name, version };
  } catch (err) {
    return { unavailable: err instanceof Error ? err.message : String(err) };
  }
}
