// Test support (not used in production paths): a gateway in front of the scripted endpoint, with one
// temp folder for trajectory files, and readers for what was recorded.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type EndpointScript,
  type ScriptedEndpoint,
  type ScriptedEndpointOptions,
  startScriptedEndpoint,
} from "../../scripted-endpoint/scripted-server.js";
import { startGateway } from "../index.js";
import type { Gateway, GatewayOptions, JsonObject } from "../types.js";

export const UPSTREAM_KEY = "sk-upstream-SECRET-0123456789abcdef";
export const POLICY_MODEL = "Qwen/Qwen3-8B";

export type HarnessGatewayOptions = Partial<Omit<GatewayOptions, "upstream">> & {
  upstream?: Partial<GatewayOptions["upstream"]>;
};

export interface Harness {
  gateway: Gateway;
  endpoint: ScriptedEndpoint;
  dir: string;
  /** Registers a rollout; its trajectory file lies in the harness folder. */
  rollout(name: string): { apiKey: string; file: string };
  close(): Promise<void>;
}

export async function startHarness(options: {
  script: EndpointScript;
  endpoint?: Partial<ScriptedEndpointOptions>;
  gateway?: HarnessGatewayOptions;
}): Promise<Harness> {
  const endpoint = await startScriptedEndpoint({
    model: "served-policy",
    apiKey: UPSTREAM_KEY,
    ...options.endpoint,
    script: options.script,
  });
  const dir = await mkdtemp(path.join(tmpdir(), "bf-gateway-"));
  const { upstream, ...rest } = options.gateway ?? {};
  const gateway = await startGateway({
    upstream: {
      baseUrl: endpoint.baseUrl,
      apiKey: UPSTREAM_KEY,
      model: POLICY_MODEL,
      provider: "vllm",
      ...upstream,
    },
    sampling: {},
    capture: { enabled: false },
    ...rest,
  });
  return {
    gateway,
    endpoint,
    dir,
    rollout(name) {
      const file = path.join(dir, name, "trajectory", "llm_trajectory.jsonl");
      return { ...gateway.addRollout(name, { trajectoryFile: file }), file };
    },
    async close() {
      await gateway.close();
      await endpoint.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The recorded exchanges of a rollout's file (waits for the rollout's writes by removing it first). */
export async function recorded(h: Harness, name: string): Promise<JsonObject[]> {
  await h.gateway.removeRollout(name);
  const file = path.join(h.dir, name, "trajectory", "llm_trajectory.jsonl");
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as JsonObject);
}

// biome-ignore lint/suspicious/noExplicitAny: tests walk recorded JSON freely
export type Loose = any;
