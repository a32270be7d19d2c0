// --sandbox auto|namespace|container. Auto prefers a container engine when one answers (tasks
// then run in their own images) and falls back to the embedded namespace sandbox, saying which.
import { UserInputError } from "../errors.js";
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
    throw new UserInputError(`--sandbox must be auto, namespace or container; got ${JSON.stringify(choice)}`);
  }
  if (choice !== "auto") {
    const { backend, why } = await usable(choice);
    if (!backend)
      throw new UserInputError(`--sandbox ${choice} cannot run here: ${why} (bench doctor says more)`);
    return { backend, reason: `--sandbox ${choice}` };
  }
  const container = await usable("container");
  if (container.backend) return { backend: container.backend, reason: "auto: a container engine answered" };
  const ns = await usable("namespace");
  if (!ns.backend) {
    throw new UserInputError(`no sandbox can run here: container: ${container.why}; namespace: ${ns.why}`);
  }
  return { backend: ns.backend, reason: `auto: namespace sandbox (no container engine: ${container.why})` };
}
