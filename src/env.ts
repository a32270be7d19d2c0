// The environment variables the library reads: its documented contract, in one place. They say where
// things are on this machine (the container engine, programs, caches, state), what SLURM tells a
// node, and upstream's BENCHFLOW_* settings of a run. src/README.md lists them; nothing else outside
// src/cli/ touches process.env (test/architecture.test.ts holds src/ to that). The defaults of the
// command's flags are the command's: src/cli/ reads those.

/** Every variable the library reads, and why; the README's table is this one. */
export const LIBRARY_ENV = {
  DOCKER_HOST: "the container engine's address, as Docker's own clients read it",
  PATH: "where programs are found (bwrap, unshare, slirp4netns, mkfs.ext4, uv)",
  HOME: "the home folder, for the caches below when their own variables are unset",
  USER: "the user's name when the system cannot say (a name for the namespace sandbox's user)",
  XDG_CACHE_HOME: "the cache folder (agent bundles, Hugging Face's hub)",
  XDG_STATE_HOME: "the state folder (which jobs folders the namespace sandbox has seen)",
  BENCHFLOW_AGENT_CACHE: "where agent CLI bundles are installed and cached",
  HF_HUB_CACHE: "Hugging Face's hub cache (a tokenizer by model id), as huggingface_hub reads it",
  HUGGINGFACE_HUB_CACHE: "the older name of HF_HUB_CACHE",
  HF_HOME: "Hugging Face's home (its hub cache below it)",
  BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS:
    "1: an unknown task.toml key is a warning, not a refusal (upstream's)",
  BENCHFLOW_ACP_HANDSHAKE_TIMEOUT:
    "seconds an ACP agent has to answer initialize and session/new each (upstream's; default 60)",
  SLURMD_NODENAME: "on a SLURM node: the node a rollout ran on (result.json executor)",
  SLURM_JOB_ID: "on a SLURM node: the SLURM job a rollout ran in (result.json executor)",
} as const;

export type LibraryEnvName = keyof typeof LIBRARY_ENV;

/** One variable of the contract; "" reads as unset. */
export function envVar(name: LibraryEnvName): string | undefined {
  const v = process.env[name];
  return v === "" ? undefined : v;
}

/**
 * The whole environment, for what passes it on unread: a program the library starts (it gets the
 * user's environment, as a shell would give it), and Compose's `${VAR}` interpolation, which reads
 * the user's environment by definition.
 */
export function inheritedEnv(): NodeJS.ProcessEnv {
  return process.env;
}
