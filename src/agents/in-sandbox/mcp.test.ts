// Each agent's MCP config against the examples in that CLI's own documentation (Claude Code's
// code.claude.com/docs/en/mcp, Codex's docs/config.md mcp_servers, opencode.ai/docs/mcp-servers).
// The real CLIs reading these files are in test/agents-mcp.test.ts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { parse as parseToml } from "smol-toml";
import type { McpServer } from "../../task/types.js";
import { claudeMcpServers, codexMcpToml, opencodeMcp } from "./mcp.js";

const base = { url: null, command: null, args: [], cwd: null, env: {}, headers: {} };
const http = (
  name: string,
  url: string,
  transport: McpServer["transport"] = "streamable-http",
): McpServer => ({
  ...base,
  name,
  transport,
  url,
});
const stdio = (name: string, command: string, args: string[], more: Partial<McpServer> = {}): McpServer => ({
  ...base,
  name,
  transport: "stdio",
  command,
  args,
  ...more,
});

describe("MCP config per agent", () => {
  it("claude-code: mcpServers entries as its docs show them", () => {
    assert.deepEqual(
      claudeMcpServers([
        http("shared-server", "https://example.com/mcp"),
        {
          ...http("remote-api", "https://api.example.com/mcp/sse", "sse"),
          headers: { Authorization: "Bearer t" },
        },
        stdio("my-tool", "node", ["./my-mcp-server.js"], { env: { DEBUG: "false" } }),
      ]),
      {
        "shared-server": { type: "http", url: "https://example.com/mcp" },
        "remote-api": {
          type: "sse",
          url: "https://api.example.com/mcp/sse",
          headers: { Authorization: "Bearer t" },
        },
        "my-tool": { type: "stdio", command: "node", args: ["./my-mcp-server.js"], env: { DEBUG: "false" } },
      },
    );
  });

  it("codex: [mcp_servers.<name>] tables as its docs show them", () => {
    const text = codexMcpToml([
      stdio("bookmarks", "uv", ["--directory", "/srv/bookmarks", "run", "bookmarks.py"], {
        cwd: "/srv",
        env: { K: "v" },
      }),
      { ...http("figma", "https://mcp.figma.com/mcp"), headers: { "X-Figma-Region": "us-east-1" } },
    ]).join("\n");
    assert.deepEqual(JSON.parse(JSON.stringify(parseToml(text))), {
      mcp_servers: {
        bookmarks: {
          command: "uv",
          args: ["--directory", "/srv/bookmarks", "run", "bookmarks.py"],
          cwd: "/srv",
          env: { K: "v" },
        },
        figma: { url: "https://mcp.figma.com/mcp", http_headers: { "X-Figma-Region": "us-east-1" } },
      },
    });
  });

  it("opencode: local and remote entries as its docs show them", () => {
    assert.deepEqual(
      opencodeMcp([
        stdio("my-local-mcp-server", "npx", ["-y", "my-mcp-command"], {
          env: { MY_ENV_VAR: "my_env_var_value" },
        }),
        http("jira", "https://jira.example.com/mcp"),
      ]),
      {
        "my-local-mcp-server": {
          type: "local",
          command: ["npx", "-y", "my-mcp-command"],
          enabled: true,
          environment: { MY_ENV_VAR: "my_env_var_value" },
        },
        jira: { type: "remote", url: "https://jira.example.com/mcp", enabled: true },
      },
    );
  });

  it("a stdio cwd the CLI cannot set runs the command in that folder", () => {
    const server = stdio("s", "pwd", [], { cwd: "/tmp" });
    const argv = (opencodeMcp([server]).s as { command: string[] }).command;
    assert.equal(execFileSync(argv[0] as string, argv.slice(1), { encoding: "utf8" }).trim(), "/tmp");
    const claude = claudeMcpServers([server]).s as { command: string; args: string[] };
    assert.equal(execFileSync(claude.command, claude.args, { encoding: "utf8" }).trim(), "/tmp");
  });
});
