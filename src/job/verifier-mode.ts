// Where each task's verifier runs in this run: `--verifier-environment-mode` over the task's own
// `[verifier] environment_mode`, else "shared". A root agent with a shared verifier is allowed (real
// tasks check system state), but the run says once which exploit families stay open.
import { opt } from "../options.js";
import type { SandboxKind } from "../sandbox/types.js";
import type { Task } from "../task/types.js";
import { type VerifierEnvironmentMode, verifierModeOf } from "../task/verifier-mode.js";

/** The task as this run verifies it; a copy when the run flag overrides what the task says. */
export function applyVerifierMode(task: Task, flag: VerifierEnvironmentMode | null | undefined): Task {
  if (!flag || flag === task.config.verifier.environmentMode) return task;
  return {
    ...task,
    config: { ...task.config, verifier: { ...task.config.verifier, environmentMode: flag } },
  };
}

/** What a root agent can still reach in a shared verifier, by sandbox (docs/write-a-task.md lists the same). */
const OPEN_TO_ROOT: Record<SandboxKind, string> = {
  container:
    "system files the verifier runs (the shell, the Python interpreter and its system site-packages, /usr/local, /etc) and anything else outside the workspace the test reads",
  namespace:
    "the sandbox's own tree outside the workspace (root's home /root with its user site-packages and tool configs, /var, /opt) and anything there the test reads; the host's system folders stay read-only",
};

/** One warning for the whole run, naming every task whose root agent shares the verifier's sandbox. */
export function rootAgentWarning(tasks: Task[], sandbox: SandboxKind): string | null {
  const open = tasks.filter((t) => isRootUser(t.config.agent.user) && verifierModeOf(t) === "shared");
  if (open.length === 0) return null;
  const names = open.map((t) => t.name);
  const shown = `${names.slice(0, 5).join(", ")}${names.length > 5 ? ", ..." : ""}`;
  return `${open.length} task(s) run their agent as root ([agent] user = "root") with the verifier in the agent's sandbox (${shown}): hardening cannot undo what a root agent changes, so these stay open to it: ${OPEN_TO_ROOT[sandbox]}. For a verifier that sees only the workspace and the artifacts, set [verifier] environment_mode = "separate" in task.toml or pass ${opt("verifierEnvironmentMode", "separate")} (docs/write-a-task.md, "A verifier apart from the agent")`;
}

function isRootUser(user: string | null): boolean {
  return user === "root" || user === "0";
}
