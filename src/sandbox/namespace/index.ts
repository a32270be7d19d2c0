export { createNamespaceBackend, type NamespaceBackend, type NamespaceBackendOptions } from "./backend.js";
export { AGENT_GID, AGENT_HOME, AGENT_UID } from "./host.js";
export type { ToolChoice } from "./probe.js";
export { NamespaceSandbox } from "./sandbox.js";
