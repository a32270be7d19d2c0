// --sandbox auto|namespace|container. Auto prefers a container engine when one answers (tasks
// then run in their own images, as their authors tested them) and falls back to the embedded
// namespace sandbox when none does, saying which and why; a DOCKER_HOST that does not answer is an
// error, never a fallback.

import { envVar } from "../env.js";
import { UserInputError } from "../errors.js";
import { opt } from "../options.js";
import { DEFAULT_SOCKETS, detectEngine } from "./container/engine/engine.js";
import { sandboxBackends } from "./index.js";
import type { SandboxBackend, SandboxKind } from "./types.js";

export type SandboxChoice = "auto" | SandboxKind;

async function usable(kind: SandboxKind): Promise<{ backend: SandboxBackend | null; why: string | null }> {
  const factory = sandboxBackends[kind];
  if (!factory) return { backend: null, why: `the ${kind} sandbox is not available in this build` };
  const backend = factory();
  const why = await backend.unavailableReason();
  return { backend: why === null ? backend : null, why };
}

export async function selectBackend(
  choice: SandboxChoice,
): Promise<{ backend: SandboxBackend; reason: string }> {
  if (choice !== "auto" && choice !== "namespace" && choice !== "container") {
    throw new UserInputError(
      `${opt("sandbox")} must be auto, namespace or container; got ${JSON.stringify(choice)}`,
    );
  }
  if (choice !== "auto") {
    const { backend, why } = await usable(choice);
    if (!backend)
      throw new UserInputError(`${opt("sandbox", choice)} cannot run here: ${why} (bench doctor says more)`);
    return { backend, reason: opt("sandbox", choice) };
  }
  const container = await usable("container");
  if (container.backend) {
    // The engine answered a moment ago (one connection per process): name it and where.
    const engine = await detectEngine();
    const which =
      "unavailable" in engine ? "a container engine" : `${engine.name} answered at ${engine.socket}`;
    return { backend: container.backend, reason: which };
  }
  // An engine the user named that does not answer is their mistake, not a reason to run elsewhere.
  const dockerHost = envVar("DOCKER_HOST");
  if (dockerHost) {
    const core = (container.why ?? "").replace(/^DOCKER_HOST=\S+: /, "").split(";")[0];
    throw new UserInputError(
      `DOCKER_HOST=${dockerHost} does not answer: ${core}; start that engine, fix DOCKER_HOST, or unset it to let auto use the namespace sandbox (or pass ${opt("sandbox", "namespace")})`,
    );
  }
  const ns = await usable("namespace");
  if (!ns.backend) {
    throw new UserInputError(`no sandbox can run here: container: ${container.why}; namespace: ${ns.why}`);
  }
  const tried = DEFAULT_SOCKETS.map((p) => `unix://${p}`).join(", ");
  return { backend: ns.backend, reason: `no container engine answered at ${tried}` };
}
