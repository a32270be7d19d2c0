// One recording gateway per job: each trial gets its own credential and its own
// llm_trajectory.jsonl, and its usage lands in result.json.
import { promises as fs } from "node:fs";
import path from "node:path";
import { type Gateway, startGateway } from "../gateway/index.js";
import { TRAJECTORY } from "../jobs-dir/layout.js";
import type { RolloutHooks } from "../rollout/types.js";
import { policyEndpointOf } from "../sandbox/host-block.js";
import type { RolloutResult } from "../schemas/result.js";
import type { ResolvedPolicy } from "./policy.js";

export interface JobModelAccess {
  prepareTrial(rolloutName: string, rolloutDir: string): Promise<RolloutHooks>;
  close(): Promise<void>;
}

/** `repeat`: the 1-based index of this repeat job, forwarded upstream with each call (see the gateway). */
export async function openModelAccess(
  policy: ResolvedPolicy,
  model: string,
  repeat = 1,
): Promise<JobModelAccess> {
  const gateway = await startGateway(policy.gateway);
  // The agent must call the model through the gateway, which records it: the sandbox closes the endpoint.
  const policyEndpoint = policyEndpointOf(policy.gateway.upstream.baseUrl);
  return {
    async prepareTrial(rolloutName, rolloutDir) {
      const trajectoryFile = path.join(rolloutDir, TRAJECTORY);
      await fs.mkdir(path.dirname(trajectoryFile), { recursive: true });
      const { apiKey, ended } = gateway.addRollout(rolloutName, { trajectoryFile, repeat });
      return {
        modelAccess: { baseUrl: `${gateway.url}/v1`, apiKey, model },
        hostService: { port: Number(new URL(gateway.url).port) },
        policyEndpoint,
        modelWitness: () => gateway.witness(rolloutName),
        modelEnded: ended,
        stepStarted: (step) => gateway.setStep(rolloutName, step),
        finalize: async (result) => withUsage(gateway, rolloutName, result),
      };
    },
    close: () => gateway.close(),
  };
}

async function withUsage(
  gateway: Gateway,
  rolloutName: string,
  result: RolloutResult,
): Promise<RolloutResult> {
  await gateway.removeRollout(rolloutName);
  const u = gateway.usage(rolloutName);
  const versions = u.policyVersions;
  return {
    ...result,
    agent_result: {
      ...result.agent_result,
      n_input_tokens: u.inputTokens,
      n_output_tokens: u.outputTokens,
      total_tokens: u.inputTokens + u.outputTokens,
      cost_usd: u.costUsd,
      usage_source: u.calls > 0 ? "provider_response" : "unavailable",
      n_model_calls: u.calls,
      n_failed_model_calls: u.failedCalls,
    },
    n_model_calls: u.calls,
    n_failed_model_calls: u.failedCalls,
    policy_version: versions.length === 1 ? (versions[0] ?? null) : null,
    policy_versions: versions,
  };
}
