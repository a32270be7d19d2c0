// The sandbox backends by kind; each entry builds a backend with its defaults.
import { ContainerBackend } from "./container/index.js";
import { createNamespaceBackend } from "./namespace/index.js";
import type { SandboxBackend, SandboxKind } from "./types.js";

export const sandboxBackends: { [K in SandboxKind]?: () => SandboxBackend } = {
  namespace: () => createNamespaceBackend(),
  container: () => new ContainerBackend(),
};
