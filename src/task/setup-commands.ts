// Upstream's `[environment].setup_commands`: commands run in the sandbox after it starts (and after
// its healthcheck), before the agent is set up. Entries are a command line or
// {command, timeout_sec 600, cwd, env, user}; upstream's defaults.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";

export interface SetupCommand {
  command: string;
  timeoutSec: number;
  cwd: string | null;
  env: Record<string, string>;
  user: "root" | "agent";
}

export function readSetupCommands(r: FieldReader, value: unknown, field: string): SetupCommand[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    r.problem(field, "must be a list", `write ${field} = ["apt-get install -y jq"]`);
    return [];
  }
  const out: SetupCommand[] = [];
  value.forEach((entry, i) => {
    const at = `${field}[${i}]`;
    const t: Record<string, unknown> = isTable(entry) ? entry : { command: entry };
    if (typeof t.command !== "string" || t.command.trim() === "") {
      r.problem(`${at}.command`, "must be a shell command", `write { command = "make deps" }`);
      return;
    }
    if (t.service !== undefined && t.service !== "main") {
      r.problem(
        `${at}.service`,
        `= ${JSON.stringify(t.service)}: only "main" is supported`,
        "remove service",
      );
      return;
    }
    const user = t.user ?? "root";
    if (user !== "root" && user !== "agent") {
      r.problem(
        `${at}.user`,
        `must be "root" or "agent" (got ${JSON.stringify(user)})`,
        'write user = "root"',
      );
      return;
    }
    const cwd = t.cwd ?? null;
    if (cwd !== null && (typeof cwd !== "string" || !cwd.startsWith("/"))) {
      r.problem(`${at}.cwd`, "must be an absolute path", 'write cwd = "/app"');
      return;
    }
    out.push({
      command: t.command,
      timeoutSec: r.seconds(t.timeout_sec, `${at}.timeout_sec`, 600) ?? 600,
      cwd,
      env: r.env(t.env, `${at}.env`),
      user,
    });
  });
  return out;
}
