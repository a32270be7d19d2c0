// What a fresh container needs before a rollout uses it: the non-root agent user (made here when the
// image lacks it), the workspace and log folders it may write, and a root-owned /logs/verifier.
// It runs as the container's own command (no extra exec: an exec costs ~100 ms on Podman), reports
// on stdout, then stays up as `sleep infinity`. It is the command, not the entrypoint: the image's
// ENTRYPOINT runs first and must end with `exec "$@"`, as in Harbor and upstream BenchFlow.
import type { Readable } from "node:stream";

const MARK = "BENCHFLOW_SETUP";

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** The setup steps; the last line they print is the agent's home folder. */
function setupScript(user: string | null, workdir: string): string {
  const common = `mkdir -p ${q(workdir)} /logs/agent /logs/artifacts /logs/verifier
chown root:root /logs/verifier && chmod 755 /logs/verifier`;
  if (user === null) return `set -e\n${common}\necho /root`;
  return `set -e
u=${q(user)}
if ! id -u "$u" >/dev/null 2>&1; then
  if command -v useradd >/dev/null 2>&1; then
    useradd -m -s /bin/bash "$u" 2>/dev/null || useradd -m "$u"
  else
    # No useradd (minimal images): write the entries ourselves, on the first free uid from 1000.
    uid=1000
    while cut -d: -f3 /etc/passwd | grep -qx "$uid" || cut -d: -f3 /etc/group | grep -qx "$uid"; do uid=$((uid+1)); done
    echo "$u:x:$uid:$uid::/home/$u:/bin/sh" >> /etc/passwd
    echo "$u:x:$uid:" >> /etc/group
  fi
fi
home=$(grep "^$u:" /etc/passwd | cut -d: -f6)
[ -n "$home" ] || home=/home/$u
${common}
mkdir -p "$home"
chown -R "$u:$(id -g "$u")" "$home" ${q(workdir)} /logs/agent /logs/artifacts
echo "$home"`;
}

/**
 * The container's command: a "started" line (so an ENTRYPOINT that never runs its arguments can
 * be told from a slow setup), the setup, one line saying how it went, then idle.
 */
export function setupCommand(user: string | null, workdir: string): string[] {
  const script = `echo ${MARK} started
if out=$(sh -c ${q(setupScript(user, workdir))} 2>&1); then
  printf '${MARK} ok %s\\n' "$(printf '%s' "$out" | tail -n 1)"
else
  printf '%s\\n${MARK} failed\\n' "$out"
fi
exec sleep infinity`;
  return ["sh", "-c", script];
}

export interface AwaitSetupOptions {
  timeoutMs?: number;
  /** The image's ENTRYPOINT (asked only when setup fails, to say whether it is the cause). */
  entrypointOf?: () => Promise<string[] | null>;
}

/**
 * Reads the container's output (attached before it started, so nothing is missed and nothing is
 * polled) until the setup says how it went; returns the agent's home folder.
 */
export async function awaitSetup(output: Readable, options: AwaitSetupOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  let text = "";
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    output.destroy();
  }, timeoutMs);
  try {
    for await (const chunk of output) {
      text += (chunk as Buffer).toString("latin1");
      const done = new RegExp(`${MARK} (ok (\\S+)|failed)\\n`).exec(text);
      if (!done) continue;
      if (done[2]) return Buffer.from(done[2], "latin1").toString("utf8");
      throw new Error(
        `preparing the container (agent user, /logs) failed: ${printable(text.slice(0, done.index))}`,
      );
    }
  } catch (err) {
    if (!timedOut) throw err;
  } finally {
    clearTimeout(timer);
    output.destroy();
  }
  throw new Error(await notReported(text, timedOut, timeoutMs, options.entrypointOf));
}

/** Why the setup never said how it went: the image's ENTRYPOINT, or the setup itself. */
async function notReported(
  text: string,
  timedOut: boolean,
  timeoutMs: number,
  entrypointOf?: () => Promise<string[] | null>,
): Promise<string> {
  const output = printable(text.replace(new RegExp(`${MARK} started\\n`), "")).slice(-2000);
  const shown = output ? `; its output: ${output}` : "; it printed nothing";
  const when = timedOut ? `within ${timeoutMs / 1000}s` : "before the container stopped";
  const started = text.includes(`${MARK} started\n`);
  const entrypoint = started ? null : await entrypointOf?.().catch(() => null);
  if (entrypoint && entrypoint.length > 0) {
    const what = timedOut
      ? "never ran the command it was given"
      : "stopped without running the command it was given";
    return (
      `the image's ENTRYPOINT ${JSON.stringify(entrypoint)} ${what}, so the sandbox's setup never reported ${when}` +
      ` — fix environment/Dockerfile: the ENTRYPOINT must end by running its arguments (exec "$@"), as Harbor and upstream BenchFlow require${shown}`
    );
  }
  if (timedOut) return `the container's setup did not finish within ${timeoutMs / 1000}s${shown}`;
  return `the container stopped during setup (the image needs sh and sleep)${shown}`;
}

/** Output without the stream's 8-byte frame headers and other control bytes. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the attach stream's frame headers
  return [...text.replace(/[\x00-\x02]\x00\x00\x00[\s\S]{4}/g, "")]
    .filter((c) => c >= " " || c === "\n" || c === "\t")
    .join("")
    .trim();
}
