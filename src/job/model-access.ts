// One recording gateway per job: each rollout gets its own credential and its own
// llm_trajectory.jsonl, and what its calls used lands in its result.json (rollout/record.ts).
import { promises as fs } from "node:fs";
import path from "node:path";
import { startGateway } from "../gateway/index.js";
import { TRAJECTORY } from "../jobs-dir/layout.js";
import type { RolloutHooks } from "../rollout/types.js";
import { policyEndpointOf } from "../sandbox/host-block.js";
import type { ResolvedPolicy } from "./policy.js";

export interface JobModelAccess {
  prepareRollout(rolloutName: string, rolloutDir: string): Promise<RolloutHooks>;
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
    async prepareRollout(rolloutName, rolloutDir) {
      const trajectoryFile = path.join(rolloutDir, TRAJECTORY);
      await fs.mkdir(path.dirname(trajectoryFile), { recursive: true });
      const { apiKey, ended } = gateway.addRollout(rolloutName, { trajectoryFile, repeat });
      return {
        modelAccess: { baseUrl: `${gateway.url}/v1`, apiKey, model },
        hostService: { port: Number(new URL(gateway.url).port), originKey: gateway.originKey },
        policyEndpoint,
        modelWitness: () => gateway.witness(rolloutName),
        modelEnded: ended,
        stepStarted: (step) => gateway.setStep(rolloutName, step),
        // Its last line written before the count is read: the usage is that of every recorded call.
        modelUsage: async () => {
          await gateway.removeRollout(rolloutName);
          return gateway.usage(rolloutName);
        },
      };
    },
    close: () => gateway.close(),
  };
}
