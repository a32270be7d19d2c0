// A TaskConfig written out by hand for sandbox tests: independent of the loader, so a loader bug
// cannot hide in both the code and its test. Each kit changes what its tests need.
import type { TaskConfig } from "../types.js";

export function handTaskConfig(): TaskConfig {
  return {
    agent: { timeoutSec: null, user: null, networkMode: null, promptPrefix: null },
    verifier: { timeoutSec: 60, env: {}, user: null, rewardRange: [0, 1] },
    sandbox: {
      networkMode: "no-network",
      allowedHosts: [],
      workdir: null,
      env: {},
      cpus: 1,
      memoryMb: 1024,
      storageMb: 1024,
      gpus: 0,
      dockerImage: null,
      buildTimeoutSec: 600,
      healthcheck: null,
      setupCommands: [],
      skillsDir: null,
      mcpServers: [],
    },
    oracle: { env: {}, timeoutSec: null },
    artifacts: [],
    metadata: {},
  };
}
