// The task's tools for the agent: `skills_dir` (a folder of skills inside the image) and
// `[[environment.mcp_servers]]` (Harbor's entries: name, transport, url or command/args, and
// upstream's cwd, env, headers). Each wrong value is a problem naming the field and the fix.
import { type FieldReader, show } from "./config-reader.js";
import { isTable } from "./keys.js";
import type { McpServer, McpTransport } from "./types.js";

const TRANSPORTS: Record<string, McpTransport> = {
  sse: "sse",
  "streamable-http": "streamable-http",
  http: "streamable-http",
  stdio: "stdio",
};
/** Agents build tool names and config keys from it (claude-code: mcp__<name>__<tool>; codex: a TOML key). */
const NAME = /^[A-Za-z0-9_-]+$/;

export function readSkillsDir(r: FieldReader, value: unknown, field: string): string | null {
  const dir = r.text(value, field);
  if (dir !== null && !dir.startsWith("/")) {
    r.problem(
      field,
      `must be an absolute path inside the sandbox (got ${show(dir)})`,
      'write skills_dir = "/skills" and COPY skills/ /skills/ in the Dockerfile',
    );
    return null;
  }
  return dir;
}

export function readMcpServers(r: FieldReader, value: unknown, field: string): McpServer[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    r.problem(
      field,
      `must be a list of tables (got ${show(value)})`,
      `write each server as [[${field}]] with name = "...", transport and url or command`,
    );
    return [];
  }
  const servers: McpServer[] = [];
  const seen = new Set<string>();
  value.forEach((entry, i) => {
    const at = `${field}[${i}]`;
    if (!isTable(entry)) {
      r.problem(
        at,
        `must be a table (got ${show(entry)})`,
        `write it as [[${field}]] with key = value lines`,
      );
      return;
    }
    const server = readServer(r, entry, at);
    if (!server) return;
    if (seen.has(server.name)) {
      r.problem(
        `${at}.name`,
        `${JSON.stringify(server.name)} is used twice`,
        "give each server its own name",
      );
      return;
    }
    seen.add(server.name);
    servers.push(server);
  });
  return servers;
}

function readServer(r: FieldReader, e: Record<string, unknown>, at: string): McpServer | null {
  const before = r.problems.length;
  const name = r.text(e.name, `${at}.name`);
  if (e.name === undefined) r.problem(`${at}.name`, "is missing", 'add name = "my-server"');
  else if (name !== null && !NAME.test(name)) {
    r.problem(
      `${at}.name`,
      `may hold only letters, digits, _ and - (got ${show(name)})`,
      'rename it, e.g. name = "my-server"',
    );
  }
  const rawTransport = e.transport ?? "sse";
  const transport = typeof rawTransport === "string" ? TRANSPORTS[rawTransport] : undefined;
  if (!transport) {
    r.problem(
      `${at}.transport`,
      `must be one of sse, streamable-http (or http), stdio (got ${show(rawTransport)})`,
      'write transport = "stdio" for a command, "streamable-http" for a URL',
    );
  }
  const url = r.text(e.url, `${at}.url`);
  const command = r.text(e.command, `${at}.command`);
  const args = r.strings(e.args, `${at}.args`);
  const cwd = r.text(e.cwd, `${at}.cwd`);
  if (cwd !== null && !cwd.startsWith("/"))
    r.problem(`${at}.cwd`, `must be an absolute path (got ${show(cwd)})`, 'write cwd = "/app"');
  const env = r.env(e.env, `${at}.env`);
  const headers = r.env(e.headers, `${at}.headers`);
  if (transport === "stdio") {
    if (command === null && e.command === undefined)
      r.problem(`${at}.command`, "is missing (transport = stdio)", 'add command = "my-mcp-server"');
    if (e.url !== undefined)
      r.problem(`${at}.url`, "is set on a stdio server", 'drop url, or write transport = "streamable-http"');
    if (e.headers !== undefined)
      r.problem(`${at}.headers`, "is set on a stdio server", "drop headers (they go with a url)");
  } else if (transport) {
    if (url === null && e.url === undefined)
      r.problem(
        `${at}.url`,
        `is missing (transport = ${transport})`,
        'add url = "http://mcp-server:8000/mcp", or write transport = "stdio" with command',
      );
    else if (url !== null && !/^https?:\/\/[^/\s]+/.test(url))
      r.problem(`${at}.url`, `must be an http:// or https:// URL (got ${show(url)})`, "write the full URL");
    for (const key of ["command", "args", "cwd", "env"] as const) {
      if (e[key] !== undefined)
        r.problem(
          `${at}.${key}`,
          `is set on a server with transport = ${transport}`,
          `drop ${key}, or write transport = "stdio"`,
        );
    }
  }
  if (r.problems.length > before || !name || !transport) return null;
  return { name, transport, url, command, args, cwd, env, headers };
}
