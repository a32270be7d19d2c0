// The one shell script that starts an agent CLI inside the sandbox: writes its config files, puts
// skills in place, starts the relay forwarder where one is needed, checks that the gateway answers,
// then runs the CLI with its JSON output going to /logs/agent. Exit code SETUP_FAILED (with a
// "benchflow:" line on stderr) means the agent never started: an infrastructure failure.
import type { ConfigFile } from "./definition.js";
import { FORWARDER } from "./relay.js";

export const SETUP_FAILED = 86;
/** Exit code (with a "benchflow:" line) for a task that asks for what its sandbox lacks: task_error. */
export const TASK_FAILED = 87;
/** Stands for the task's instruction in an argv; it travels in $BF_INSTRUCTION, never quoted into the script. */
export const INSTRUCTION = "\u0000instruction\u0000";

export interface LaunchPlan {
  /** Absolute path of the CLI inside the sandbox. */
  binary: string;
  /** The bundle's bin/ folder, put first on PATH (helpers such as rg). */
  binDir: string;
  /** The dynamic loader the binary needs (glibc's), checked before it runs; null: a static binary. */
  loader: string | null;
  args: string[];
  /** Files relative to $HOME. */
  configFiles: ConfigFile[];
  /** Variables exported as $HOME/<path> (wrappers among the config files). */
  homeEnv?: Record<string, string>;
  /** Skills uploaded to stagedSkills, copied into $HOME/<skillsHome>. */
  stagedSkills: string | null;
  /** The task's skills_dir inside the sandbox, copied into $HOME/<skillsHome> before stagedSkills. */
  taskSkillsDir: string | null;
  skillsHome: string;
  /** The gateway as the agent reaches it: host and port. */
  gateway: { host: string; port: number };
  /** Start the in-sandbox forwarder (run by `node`) from the gateway's port to the relay socket first. */
  relay: { node: string; socket: string } | null;
  /**
   * The sandbox's relay tells the gateway which process made each call: the launcher declares
   * itself to it right before it becomes the CLI (exec keeps the pid), so the CLI is the agent and
   * the commands its tools run are not (trusted-forwarder.cjs).
   */
  declareAgent: boolean;
  /**
   * The CLI starts the process that calls the model (an ACP client and its adapter): the launcher
   * does not declare itself but writes $HOME/.benchflow/declare-exec, which declares its caller
   * (when declareAgent) and execs its arguments, and exports its path as $BF_DECLARE_EXEC.
   */
  delegated?: boolean;
  /** Where the output files go (/logs/agent in a sandbox). */
  logDir: string;
  stdoutFile: string;
  stderrFile: string;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** Writes a file from a quoted here-document; `orElse` runs when that fails. */
function heredoc(target: string, content: string, n: number, orElse: string): string {
  const mark = `BF_EOF_${n}_${Math.random().toString(36).slice(2, 8)}`;
  const body = content.endsWith("\n") ? content : `${content}\n`;
  return `{ mkdir -p "$(dirname ${target})" && cat > ${target}; } <<'${mark}' || ${orElse}\n${body}${mark}`;
}

export function launchScript(p: LaunchPlan): string {
  const lines = [
    "set -u",
    `bf_fail() { echo "benchflow: $*" >&2; exit ${SETUP_FAILED}; }`,
    `bf_task_fail() { echo "benchflow: $*" >&2; exit ${TASK_FAILED}; }`,
    `export PATH=${shellQuote(p.binDir)}:"$PATH"`,
  ];
  p.configFiles.forEach((f, i) => {
    const target = `"$HOME"/${shellQuote(f.path)}`;
    lines.push(heredoc(target, f.content, i, `bf_fail "cannot write \\$HOME/${f.path}"`));
    if (f.executable) lines.push(`chmod 755 ${target} || bf_fail "cannot make \\$HOME/${f.path} executable"`);
  });
  for (const [name, rel] of Object.entries(p.homeEnv ?? {}))
    lines.push(`export ${name}="$HOME"/${shellQuote(rel)}`);
  const dest = `"$HOME"/${shellQuote(p.skillsHome)}`;
  if (p.taskSkillsDir) {
    const dir = shellQuote(p.taskSkillsDir);
    lines.push(
      `[ -d ${dir} ] || bf_task_fail "the task's skills_dir ${p.taskSkillsDir} is not a folder in the sandbox: COPY the skills there in environment/Dockerfile (e.g. COPY skills/ ${p.taskSkillsDir}/)"`,
      `mkdir -p ${dest} && cp -R ${dir}/. ${dest}/ || bf_fail "cannot place the task's skills from ${p.taskSkillsDir} in ${p.skillsHome}"`,
    );
  }
  if (p.stagedSkills) {
    lines.push(
      `mkdir -p ${dest} && cp -R ${shellQuote(p.stagedSkills)}/. ${dest}/ || bf_fail "cannot place skills in ${p.skillsHome}"`,
    );
  }
  const log = (name: string) => shellQuote(`${p.logDir}/${name}`);
  if (p.relay) {
    const ready = `"\${TMPDIR:-/tmp}/.bf-relay-ready-$$"`;
    lines.push(
      `${shellQuote(p.relay.node)} -e ${shellQuote(FORWARDER)} ${shellQuote(p.relay.socket)} ${p.gateway.port} ${ready} 2>${log("relay.log")} &`,
      `n=0; while [ ! -e ${ready} ]; do n=$((n+1)); [ $n -gt 1000 ] && bf_fail "the gateway relay did not start: $(cat ${log("relay.log")} 2>/dev/null)"; sleep 0.01; done`,
    );
  }
  const { host, port } = p.gateway;
  // bash's /dev/tcp: no curl needed in the image; `timeout` (where present) bounds a silent drop.
  const probe = `exec 3<>/dev/tcp/${host}/${port}`;
  lines.push(
    `if command -v timeout >/dev/null 2>&1; then timeout 10 bash -c ${shellQuote(probe)}; else bash -c ${shellQuote(probe)}; fi 2>/dev/null || bf_fail "cannot reach the model gateway at http://${host}:${port} from inside the sandbox"`,
    `[ -x ${shellQuote(p.binary)} ] || bf_fail "the agent binary ${p.binary} is missing or not executable (bundle not mounted?)"`,
  );
  if (p.loader) {
    lines.push(
      `[ -e ${shellQuote(p.loader)} ] || bf_fail "the agent's bundle cannot run in this image: it needs glibc (${p.loader}), which the image lacks (a musl image such as Alpine?)"`,
    );
  }
  const argv = [p.binary, ...p.args]
    .map((a) => (a === INSTRUCTION ? '"$BF_INSTRUCTION"' : shellQuote(a)))
    .join(" ");
  const io = `</dev/null >${log(p.stdoutFile)} 2>${log(p.stderrFile)}`;
  if (p.delegated) {
    const file = '"$HOME"/.benchflow/declare-exec';
    const body = `#!/bin/bash\n${p.declareAgent ? declaration(host, port, 2) : ""}\nexec "$@"\n`;
    lines.push(
      heredoc(file, body, p.configFiles.length, 'bf_fail "cannot write the agent\'s declare-exec"'),
      `chmod 755 ${file} && export BF_DECLARE_EXEC=${file} || bf_fail "cannot make declare-exec executable"`,
      `exec ${argv} ${io}`,
    );
  } else if (!p.declareAgent) lines.push(`exec ${argv} ${io}`);
  else {
    // In bash (for /dev/tcp), which declares and then execs the CLI: one pid throughout.
    const declare = `${declaration(host, port, 4)}\nexec "$@" 4>&-`;
    // fd 4: the launcher's own stderr, where its "benchflow:" lines go (the CLI's goes to its file).
    lines.push(`exec bash -c ${shellQuote(declare)} bf-agent ${argv} 4>&2 ${io}`);
  }
  return lines.join("\n");
}

/** Bash that declares the running process the agent to the sandbox's relay (its "benchflow:" lines to fd `errFd`). */
function declaration(host: string, port: number, errFd: number): string {
  return [
    `exec 3<>/dev/tcp/${host}/${port} || { echo "benchflow: cannot reach the gateway relay to declare the agent" >&${errFd}; exit ${SETUP_FAILED}; }`,
    `printf 'BENCHFLOW-AGENT\\n' >&3`,
    "IFS= read -r -t 10 bf_reply <&3",
    "exec 3>&-",
    `[ "$bf_reply" = ok ] || { echo "benchflow: the gateway relay did not take the agent's declaration: \${bf_reply:-no answer}" >&${errFd}; exit ${SETUP_FAILED}; }`,
  ].join("\n");
}
