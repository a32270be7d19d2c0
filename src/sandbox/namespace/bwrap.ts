// The bubblewrap command line for one exec: the sandbox's writable tree as "/", system folders
// read-only on top, fresh /proc and minimal /dev, private pid/ipc/uts (and net) namespaces.

import {
  agentSwitched,
  agentUsernsPrefix,
  BASH,
  ENV,
  type ExecPlan,
  HOSTNAME,
  type Identity,
  ROOT_CAPS,
  setprivToAgent,
} from "./plan.js";
import type { Invocation } from "./run.js";

/**
 * Options travel through fd 3 (--args), so the environment stays out of the host's `ps`; only the
 * command line is on argv, where the running command shows anyway. fd 4 reports the init's pid.
 */
export function bwrapInvocation(bwrap: string, plan: ExecPlan, identity: Identity): Invocation {
  const { options, command } = bwrapArgs(plan, identity);
  return {
    argv: [bwrap, "--args", "3", "--", ...command],
    input: options.map((a) => `${a}\0`).join(""),
    infoFd: true,
  };
}

function bwrapArgs(plan: ExecPlan, identity: Identity): { options: string[]; command: string[] } {
  const argv = ["--info-fd", "4", "--bind", plan.fsRoot, "/"];
  for (const entry of plan.system) {
    if (entry.symlinkTarget === null) argv.push("--ro-bind", entry.path, entry.path);
  }
  for (const file of plan.fileOverrides) argv.push("--ro-bind", file.host, file.sandbox);
  for (const hidden of plan.hidden) argv.push("--tmpfs", hidden, "--remount-ro", hidden);
  argv.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm");
  argv.push(
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    HOSTNAME,
  );
  if (!plan.network) argv.push("--unshare-net");
  // --die-with-parent + the pid namespace: when bwrap dies or the command ends, every process goes.
  // The agent's cwd is entered after setpriv made it the agent: bwrap itself has no DAC
  // capabilities then, so it could not enter a workdir that only the agent may (WORKDIR /root).
  const switched = agentSwitched(plan, identity);
  argv.push("--die-with-parent", "--new-session", "--chdir", switched ? "/" : plan.cwd, "--clearenv");
  // bwrap sets the environment for the command only; nothing of it (LD_PRELOAD, ...) touches bwrap.
  for (const [key, value] of Object.entries(plan.env)) argv.push("--setenv", key, value);
  const shell = [BASH, "-c", plan.command];

  if (!identity.hostRoot) {
    argv.push("--unshare-user");
    if (plan.user === "root") {
      argv.push("--uid", "0", "--gid", "0");
      for (const cap of ROOT_CAPS) argv.push("--cap-add", `CAP_${cap.toUpperCase()}`);
    } else {
      // Named, because inside the network holder's user namespace (netns.ts) we are its root.
      argv.push("--uid", String(identity.hostUid), "--gid", String(identity.hostGid));
    }
    return { options: argv, command: shell };
  }
  argv.push("--cap-drop", "ALL");
  if (switched) {
    // bwrap cannot map host root to another uid without making it the owner of root's files; setpriv can.
    argv.push("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP");
    const chdir = [ENV, `--chdir=${plan.cwd}`];
    return {
      options: argv,
      command: [
        ...setprivToAgent(identity.setpriv, identity.agent),
        ...agentUsernsPrefix(plan, identity),
        ...chdir,
        ...shell,
      ],
    };
  }
  for (const cap of ROOT_CAPS) argv.push("--cap-add", `CAP_${cap.toUpperCase()}`);
  return { options: argv, command: shell };
}
