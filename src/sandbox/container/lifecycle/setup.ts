// What a fresh container needs before a trial uses it: the non-root agent user (made here when the
// image lacks it), the workspace and log folders it may write, and a root-owned /logs/verifier.
// It runs as the container's own first command (no extra exec: an exec costs ~100 ms on Podman),
// reports on stdout, then stays up as `sleep infinity`.
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

/** The container's command: setup, one BENCHFLOW_SETUP line on stdout saying how it went, then idle. */
export function entrypoint(user: string | null, workdir: string): string[] {
  const script = `if out=$(sh -c ${q(setupScript(user, workdir))} 2>&1); then
  printf '${MARK} ok %s\\n' "$(printf '%s' "$out" | tail -n 1)"
else
  printf '%s\\n${MARK} failed\\n' "$out"
fi
exec sleep infinity`;
  return ["sh", "-c", script];
}

/**
 * Reads the container's output (attached before it started, so nothing is missed and nothing is
 * polled) until the setup says how it went; returns the agent's home folder.
 */
export async function awaitSetup(output: Readable, timeoutMs = 60_000): Promise<string> {
  let text = "";
  const timer = setTimeout(
    () => output.destroy(new Error(`the container's setup did not finish within ${timeoutMs / 1000}s`)),
    timeoutMs,
  );
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
    throw new Error(`the container stopped during setup (the image needs sh and sleep): ${printable(text)}`);
  } finally {
    clearTimeout(timer);
    output.destroy();
  }
}

/** Output without the stream's 8-byte frame headers and other control bytes. */
function printable(text: string): string {
  return [...text]
    .filter((c) => c >= " " || c === "\n" || c === "\t")
    .join("")
    .trim();
}
