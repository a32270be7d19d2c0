// The container sandbox's public surface.
export {
  type AgentBundleMount,
  type AgentImageFallback,
  type AgentInstallPath,
  derivedTag,
  type InstallChoice,
} from "./agent-image.js";
export { ContainerBackend, type ContainerBackendOptions, type ContainerSandboxSpec } from "./backend.js";
export {
  currentRunId,
  installInterruptCleanup,
  LABEL,
  reapOrphans,
  removeContainersOfRun,
} from "./cleanup.js";
export { connectEngine, DEFAULT_SOCKETS, detectEngine, type Engine } from "./engine.js";
export {
  type BuildTaskImageOptions,
  buildTaskImage,
  imageTagOf,
  setBuildConcurrency,
  type TaskImage,
} from "./image.js";
export type { HostService } from "./relay.js";
export { ContainerSandbox } from "./sandbox.js";
