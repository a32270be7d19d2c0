// The task's MCP servers in each agent CLI's own config format (as Harbor writes them). A stdio
// server is a command the CLI spawns inside the sandbox; a URL (a sidecar, or a server in the same
// sandbox) is reached from inside. Neither is started by us.
import type { McpServer } from "../../task/types.js";

/** A stdio command as one argv; a cwd the CLI cannot set itself goes through `sh -c 'cd ...'`. */
function argvOf(s: McpServer, ownCwd: boolean): string[] {
  const argv = [s.command ?? "", ...s.args];
  if (!s.cwd || ownCwd) return argv;
  return ["sh", "-c", 'cd "$0" && exec "$@"', s.cwd, ...argv];
}

/** Claude Code: `mcpServers` of its user config ($HOME/.claude.json), read without a trust prompt. */
export function claudeMcpServers(servers: McpServer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of servers) {
    if (s.transport === "stdio") {
      const [command, ...args] = argvOf(s, false);
      out[s.name] = { type: "stdio", command, args, ...(nonEmpty(s.env) ? { env: s.env } : {}) };
    } else {
      out[s.name] = {
        type: s.transport === "sse" ? "sse" : "http",
        url: s.url,
        ...(nonEmpty(s.headers) ? { headers: s.headers } : {}),
      };
    }
  }
  return out;
}

const toml = (s: string) => JSON.stringify(s);
const tomlTable = (t: Record<string, string>) =>
  `{ ${Object.entries(t)
    .map(([k, v]) => `${toml(k)} = ${toml(v)}`)
    .join(", ")} }`;

/**
 * Codex: `[mcp_servers.<name>]` tables of config.toml. Codex speaks stdio and streamable HTTP; an
 * sse server gets its url too (as Harbor writes it) and works only if it also answers streamable HTTP.
 */
export function codexMcpToml(servers: McpServer[]): string[] {
  const lines: string[] = [];
  for (const s of servers) {
    lines.push("", `[mcp_servers.${toml(s.name)}]`);
    if (s.transport === "stdio") {
      lines.push(`command = ${toml(s.command ?? "")}`, `args = [${s.args.map(toml).join(", ")}]`);
      if (s.cwd) lines.push(`cwd = ${toml(s.cwd)}`);
      if (nonEmpty(s.env)) lines.push(`env = ${tomlTable(s.env)}`);
    } else {
      lines.push(`url = ${toml(s.url ?? "")}`);
      if (nonEmpty(s.headers)) lines.push(`http_headers = ${tomlTable(s.headers)}`);
    }
  }
  return lines;
}

/** OpenCode: `mcp` of opencode.json; a remote server tries streamable HTTP, then SSE. */
export function opencodeMcp(servers: McpServer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of servers) {
    out[s.name] =
      s.transport === "stdio"
        ? {
            type: "local",
            command: argvOf(s, false),
            enabled: true,
            ...(nonEmpty(s.env) ? { environment: s.env } : {}),
          }
        : {
            type: "remote",
            url: s.url,
            enabled: true,
            ...(nonEmpty(s.headers) ? { headers: s.headers } : {}),
          };
  }
  return out;
}

/** ACP: session/new's `mcpServers` (stdio with env as name/value pairs; http and sse with headers). */
export function acpMcpServers(servers: McpServer[]): unknown[] {
  const pairs = (t: Record<string, string>) => Object.entries(t).map(([name, value]) => ({ name, value }));
  return servers.map((s) => {
    if (s.transport !== "stdio")
      return {
        type: s.transport === "sse" ? "sse" : "http",
        name: s.name,
        url: s.url,
        headers: pairs(s.headers),
      };
    const [command, ...args] = argvOf(s, false);
    return { name: s.name, command, args, env: pairs(s.env) };
  });
}

function nonEmpty(t: Record<string, string>): boolean {
  return Object.keys(t).length > 0;
}

/**
 * Gemini CLI: `mcpServers` of its settings.json. A stdio server is command, args, env and cwd (it sets
 * the cwd itself); an SSE server's address is `url`, a streamable-HTTP one's `httpUrl`.
 */
export function geminiMcp(servers: McpServer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of servers) {
    const headers = nonEmpty(s.headers) ? { headers: s.headers } : {};
    if (s.transport === "stdio") {
      const [command, ...args] = argvOf(s, true);
      out[s.name] = {
        command,
        args,
        ...(s.cwd ? { cwd: s.cwd } : {}),
        ...(nonEmpty(s.env) ? { env: s.env } : {}),
      };
    } else if (s.transport === "sse") out[s.name] = { url: s.url, ...headers };
    else out[s.name] = { httpUrl: s.url, ...headers };
  }
  return out;
}
