// The container sandbox's public surface. Inside, three folders:
//   engine/     the Docker Engine API itself: HTTP over the socket, engine discovery, tar, exec
//   image/      task images and derived agent images: build, inspect/pull, failure classification
//   lifecycle/  one container's life: create/start/stop, cleanup and reaping, relay, network, the Sandbox
//   compose/    a task's docker-compose.yaml: the file read and checked, sidecar images, one network
//               per rollout, depends_on and healthchecks (run by exec)
// image/, lifecycle/ and compose/ build on engine/, never the reverse; image/ takes only the owner labels from
// lifecycle/cleanup.ts, so a probe container it starts is reaped like any other. backend.ts wires
// them into the SandboxBackend. The rest of the library imports from this file; only the doctor (and
// tests, benchmarks) reach inside, to probe the parts one by one.

export type { HostService } from "../relay.js";
export { ContainerBackend, type ContainerBackendOptions, type ContainerSandboxSpec } from "./backend.js";
export { connectEngine, DEFAULT_SOCKETS, detectEngine, type Engine } from "./engine/engine.js";
export {
  type AgentBundleMount,
  type AgentImageFallback,
  type AgentInstallPath,
  derivedTag,
  type InstallChoice,
} from "./image/agent-image.js";
export {
  type BuildTaskImageOptions,
  buildTaskImage,
  imageTagOf,
  setBuildConcurrency,
  type TaskImage,
} from "./image/image.js";
export {
  currentRunId,
  installInterruptCleanup,
  LABEL,
  reapOrphans,
  removeContainersOfRun,
} from "./lifecycle/cleanup.js";
export { ContainerSandbox } from "./lifecycle/sandbox.js";
