// The agent's half of the container fallback: when the task's image cannot run the glibc bundle
// (a musl image), the backend asks for the agent's musl build, installed once on the host into its
// own bundle (<name>@<version>-musl) laid out like the glibc one, so the launch path is unchanged.
import path from "node:path";
import type { AgentImageFallback, InstallChoice } from "../../sandbox/container/index.js";
import { agentCacheDir, type BundleSpec, ensureBundle } from "./bundle.js";
import type { CliAgentDef, LaunchState } from "./definition.js";

export interface FallbackTarget {
  /** The binary's path inside the sandbox (under the bundle's mount). */
  binary: string;
  /** The rollout's config.json facts, updated with the path taken. */
  record: Record<string, unknown>;
  state: LaunchState;
  signal: AbortSignal;
}

/** The agent's musl bundle: the same packages installed for musl, the glibc binary's path aliased to the musl one. */
async function muslBundleSpec(def: CliAgentDef): Promise<BundleSpec | null> {
  if (!def.muslBinary) return null;
  return {
    ...def.bundle,
    libc: "musl",
    aliases: { ...def.bundle.aliases, [await def.binary()]: await def.muslBinary() },
  };
}

export async function imageFallbackFor(
  def: CliAgentDef,
  t: FallbackTarget,
): Promise<AgentImageFallback | null> {
  // A static binary runs in any image; an agent without a musl build has nothing to fall back to.
  const spec = def.glibc ? await muslBundleSpec(def) : null;
  if (!spec) return null;
  return {
    agent: def.name,
    version: def.bundle.version,
    binary: t.binary,
    verdictDir: path.join(agentCacheDir(), "image-probes"),
    bundleFor: async () => {
      const bundle = await ensureBundle(spec, { signal: t.signal });
      t.record.agent_musl_installed_now = bundle.installedNow;
      return bundle.dir;
    },
    onInstallPath: (choice: InstallChoice) => {
      t.record.agent_install_path = choice.path;
      t.record.agent_image_libc = choice.libc;
      if (choice.path !== "image-install") return;
      t.record.agent_image = choice.image;
      t.record.agent_image_built_now = choice.builtNow;
      // The musl build needs no glibc loader: the launch's check would refuse it.
      t.state.loader = null;
    },
  };
}
