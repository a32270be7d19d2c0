// The namespace backend: Linux namespaces through bubblewrap, or util-linux unshare where bwrap is
// absent. No daemon; each exec is one short-lived tool process (with network, joining the
// sandbox's own network namespace: netns.ts).
import { type SandboxBackend, SandboxSetupError, type SandboxSpec } from "../types.js";
import { type CreateOptions, createNamespaceSandbox } from "./create.js";
import { isWithin } from "./host.js";
import { loopbackUnavailableReason } from "./netns.js";
import { probeTool, type ToolChoice } from "./probe.js";
import type { NamespaceSandbox } from "./sandbox.js";

export interface NamespaceBackendOptions extends CreateOptions {
  /** "auto" (default) prefers bwrap and falls back to unshare. */
  tool?: ToolChoice;
}

export interface NamespaceBackend extends SandboxBackend {
  readonly kind: "namespace";
  create(spec: SandboxSpec): Promise<NamespaceSandbox>;
}

export function createNamespaceBackend(options: NamespaceBackendOptions = {}): NamespaceBackend {
  const tool = options.tool ?? "auto";
  for (const p of options.readOnlyPaths ?? []) {
    if (!p.startsWith("/") || p === "/" || ["/proc", "/dev"].some((d) => isWithin(p, d))) {
      throw new Error(
        `namespace sandbox: read-only path "${p}" must be an absolute folder other than /, /proc and /dev`,
      );
    }
  }
  return {
    kind: "namespace",
    async unavailableReason() {
      return (await probeTool(tool, options.scratchDir)).reason;
    },
    // As root the sandbox holds its namespaces and the trusted relay listens in them (sandbox.ts).
    relaysGateway: async () => (await loopbackUnavailableReason()) === null,
    async create(spec) {
      const probe = await probeTool(tool, options.scratchDir);
      if (probe.setup === null) throw new SandboxSetupError(`namespace sandbox unavailable: ${probe.reason}`);
      return createNamespaceSandbox(spec, probe.setup, options);
    },
  };
}
