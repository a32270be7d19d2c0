// Agents run through the Agent Client Protocol: the adapter (claude-agent-acp, codex-acp, or any
// ACP agent named with acp:) runs inside the sandbox as the child of our ACP client (acp-client.cjs),
// which speaks the protocol over the adapter's stdio there and logs every message to its stdout; the
// host turns the session/update notifications in that log into acp_trajectory.jsonl. The name the
// user typed is the agent's name everywhere (jobs folder, result.json, group keys, rows).
import { readFileSync } from "node:fs";
import { envVar } from "../../env.js";
import { UserInputError } from "../../errors.js";
import type { TrajectoryEvent } from "../types.js";
import { GLIBC_LOADERS } from "./agent.js";
import type { BundleSpec } from "./bundle.js";
import { claudeCodeDef } from "./claude-code.js";
import { codexDef } from "./codex.js";
import type { CliAgentDef, LaunchInfo } from "./definition.js";
import { capText, jsonLines, obj, type ParsedRun, str, toolKind } from "./events.js";
import { acpMcpServers } from "./mcp.js";

const CLIENT = readFileSync(new URL("./acp-client.cjs", import.meta.url), "utf8");
/** The bundle's own Node binary (withNode), which runs the client and JavaScript adapters. */
const NODE = "node/bin/node";

export interface AcpAdapter {
  name: string;
  bundle: BundleSpec;
  /** The adapter's command inside the sandbox (absolute paths under the bundle's mount). */
  command(l: LaunchInfo): string[];
  /** "declare": the adapter process calls the model; "plain": a process it starts declares itself. */
  how: "declare" | "plain";
  glibc: boolean;
  skillsHome: string;
  configFiles: CliAgentDef["configFiles"];
  env: CliAgentDef["env"];
  homeEnv?: Record<string, string>;
}

export function acpDef(a: AcpAdapter): CliAgentDef {
  return {
    name: a.name,
    bundle: a.bundle,
    binary: async () => NODE,
    glibc: a.glibc,
    skillsHome: a.skillsHome,
    configFiles: a.configFiles,
    env: (l, key) => ({
      ...a.env(l, key),
      BF_ACP_MCP: JSON.stringify(acpMcpServers(l.mcpServers)),
      BF_ACP_HANDSHAKE_SEC: handshakeSec(),
    }),
    homeEnv: a.homeEnv,
    declares: "delegated",
    trajectorySource: "acp",
    args: (l) => ["-e", CLIENT, a.how, ...a.command(l)],
    parse: parseAcpLog,
  };
}

/** Upstream's BENCHFLOW_ACP_HANDSHAKE_TIMEOUT (seconds), checked: a bad value is the user's to fix. */
function handshakeSec(): string {
  const v = envVar("BENCHFLOW_ACP_HANDSHAKE_TIMEOUT");
  if (v === undefined) return "60";
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0)
    throw new UserInputError(
      `BENCHFLOW_ACP_HANDSHAKE_TIMEOUT=${v}: give the seconds an ACP agent has for its handshake (a number above 0, e.g. 60)`,
    );
  return v;
}

const CLAUDE_AGENT_ACP_VERSION = "0.23.1";
const CLAUDE_WRAPPER = ".benchflow/claude";
const CLAUDE_BINARY = `node_modules/@anthropic-ai/claude-code-linux-${process.arch}/claude`;

/**
 * Claude Code behind Zed's ACP adapter. The adapter starts Claude Code (the native binary our claude-code runs) as a
 * child; CLAUDE_CODE_EXECUTABLE points it at a wrapper that declares that child the agent, so the
 * process that calls the model is the one the relay trusts, and the commands its tools run are not.
 */
export const claudeAgentAcpDef = acpDef({
  name: "claude-agent-acp",
  bundle: {
    name: "claude-agent-acp",
    version: CLAUDE_AGENT_ACP_VERSION,
    // Claude Code itself at the version our claude-code agent runs (the SDK's own cli.js is older:
    // 2.1.83 escapes "!" in shell commands), as the native binary.
    packages: [
      `@zed-industries/claude-agent-acp@${CLAUDE_AGENT_ACP_VERSION}`,
      ...claudeCodeDef.bundle.packages,
    ],
    withNode: true,
  },
  command: (l) => [
    `${l.bundleDir}/${NODE}`,
    `${l.bundleDir}/node_modules/@zed-industries/claude-agent-acp/dist/index.js`,
  ],
  how: "plain",
  glibc: true,
  skillsHome: claudeCodeDef.skillsHome,
  configFiles: (l) => [
    ...claudeCodeDef.configFiles(l),
    {
      path: CLAUDE_WRAPPER,
      content: `#!/bin/sh\nexec "$BF_DECLARE_EXEC" ${l.bundleDir}/${CLAUDE_BINARY} "$@"\n`,
      executable: true,
    },
  ],
  env: (l, key) => claudeCodeDef.env(l, key),
  homeEnv: { CLAUDE_CODE_EXECUTABLE: CLAUDE_WRAPPER },
});

const CODEX_ACP_VERSION = "0.16.0";
const GLIBC_LOADER = GLIBC_LOADERS[process.arch] ?? "/lib64/ld-linux-x86-64.so.2";

/** Codex behind Zed's ACP adapter (a native binary that embeds Codex): codex's own config.toml. */
export const codexAcpDef = acpDef({
  name: "codex-acp",
  bundle: {
    name: "codex-acp",
    version: CODEX_ACP_VERSION,
    packages: [`@zed-industries/codex-acp@${CODEX_ACP_VERSION}`],
    withNode: true,
    hostLibs: ["libssl.so.3", "libcrypto.so.3", "libz.so.1"],
  },
  // Started by glibc's loader with the bundle's OpenSSL on its own library path: only this process
  // sees those libraries (LD_LIBRARY_PATH would reach every command its tools run).
  command: (l) => [
    GLIBC_LOADER,
    "--library-path",
    `${l.bundleDir}/lib`,
    `${l.bundleDir}/node_modules/@zed-industries/codex-acp-linux-${process.arch}/bin/codex-acp`,
  ],
  how: "declare",
  glibc: true,
  skillsHome: codexDef.skillsHome,
  configFiles: (l) => codexDef.configFiles(l),
  env: (l, key) => codexDef.env(l, key),
});

/** ACP's session/update notifications, in the order they came, as upstream's trajectory events. */
export function parseAcpLog(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  const calls = new Map<string, Extract<TrajectoryEvent, { type: "tool_call" }>>();
  type Text = { type: "agent_message" | "agent_thought"; text: string };
  let text = null as Text | null;
  let error: string | null = null;
  let setupError: string | undefined;
  let nSkillInvocations = 0;
  const flush = () => {
    if (text?.text) events.push({ type: text.type, text: text.text });
    text = null;
  };
  for (const line of jsonLines(stdout)) {
    if (line.benchflow === "error") {
      if (line.phase === "handshake") setupError = `the ACP handshake failed: ${str(line.message)}`;
      else error = `failed: ${str(line.message)}`;
    }
    if (line.benchflow === "end" && line.stopReason !== "end_turn")
      error = `stopped before the end of its turn (stopReason ${JSON.stringify(line.stopReason)})`;
    const msg = obj(line.msg);
    if (line.dir !== "recv" || msg.method !== "session/update") continue;
    const u = obj(obj(msg.params).update);
    const kind = str(u.sessionUpdate);
    if (kind === "agent_message_chunk" || kind === "agent_thought_chunk") {
      const type = kind === "agent_message_chunk" ? "agent_message" : "agent_thought";
      if (text?.type !== type) flush();
      text ??= { type, text: "" };
      text.text += str(obj(u.content).text);
    } else if (kind === "tool_call" || kind === "tool_call_update") {
      flush();
      const id = str(u.toolCallId);
      let call = calls.get(id);
      if (!call) {
        call = {
          type: "tool_call",
          tool_call_id: id,
          title: str(u.title),
          kind: str(u.kind) || toolKind(str(u.title)),
          status: "pending",
          raw_input: null,
          raw_output: null,
        };
        calls.set(id, call);
        events.push(call);
        if (/^skill\b/i.test(call.title)) nSkillInvocations++;
      }
      if (str(u.title)) call.title = str(u.title);
      if (str(u.kind)) call.kind = str(u.kind);
      if (u.rawInput !== undefined) call.raw_input = u.rawInput;
      if (u.rawOutput !== undefined) call.raw_output = capText(u.rawOutput);
      else if (u.content !== undefined && call.raw_output === null)
        call.raw_output = capText(contentText(u.content));
      if (u.status === "completed" || u.status === "failed") call.status = u.status;
    }
  }
  flush();
  return { events, nToolCalls: calls.size, nSkillInvocations, error, ...(setupError ? { setupError } : {}) };
}

/** A tool call's ACP content blocks as text (text blocks; diffs and terminals as JSON). */
function contentText(content: unknown): unknown {
  if (!Array.isArray(content)) return content ?? null;
  return content
    .map((c) => {
      const inner = obj(obj(c).content);
      return inner.type === "text" ? str(inner.text) : JSON.stringify(c);
    })
    .join("\n");
}
