// OpenCode (`opencode run --format json`) and its fork Kilo Code (`kilo run --format json`), pointed
// at the gateway through an OpenAI-compatible provider in their config (OpenAI chat inbound). The
// credential stays in the environment.
import { promises as fs } from "node:fs";
import type { TrajectoryEvent } from "../types.js";
import { INSTRUCTION } from "./agent.js";
import type { CliAgentDef, LaunchInfo } from "./definition.js";
import { capText, isoOf, jsonLines, obj, type ParsedRun, str, toolKind } from "./events.js";
import { opencodeMcp } from "./mcp.js";

const OPENCODE_VERSION = "1.18.33";
const KILO_VERSION = "7.7.7";
const RG_FROM_CODEX = "0.171.0";
const TRIPLES: Record<string, string> = {
  x64: "x86_64-unknown-linux-musl",
  arm64: "aarch64-unknown-linux-musl",
};

let avx2: Promise<boolean> | undefined;
/** The default build needs AVX2; the baseline build runs on any x86-64 CPU. */
function hasAvx2(): Promise<boolean> {
  avx2 ??= fs
    .readFile("/proc/cpuinfo", "utf8")
    .then((t) => /\bavx2\b/.test(t))
    .catch(() => false);
  return avx2;
}

/** OpenCode's config (Kilo Code reads the same schema): the gateway as an OpenAI-compatible provider. */
function opencodeConfig(l: LaunchInfo, schema: string): string {
  return JSON.stringify(
    {
      $schema: schema,
      provider: {
        benchflow: {
          npm: "@ai-sdk/openai-compatible",
          name: "BenchFlow gateway",
          options: { baseURL: `${l.gatewayOrigin}/v1`, apiKey: `{env:${l.keyEnv}}` },
          models: { [l.model]: { name: l.model, tool_call: true } },
        },
      },
      model: `benchflow/${l.model}`,
      small_model: `benchflow/${l.model}`,
      autoupdate: false,
      share: "disabled",
      permission: { edit: "allow", bash: "allow", webfetch: "allow", external_directory: "allow" },
      ...(l.mcpServers.length > 0 ? { mcp: opencodeMcp(l.mcpServers) } : {}),
    },
    null,
    2,
  );
}

/** The switches that keep OpenCode (or its fork, under its own prefix) from reaching the network. */
function offline(prefix: "OPENCODE" | "KILO"): Record<string, string> {
  const off = ["AUTOUPDATE", "MODELS_FETCH", "LSP_DOWNLOAD", "SHARE", "DEFAULT_PLUGINS", "CLAUDE_CODE"];
  return Object.fromEntries(off.map((what) => [`${prefix}_DISABLE_${what}`, "1"]));
}

const triple = TRIPLES[process.arch] ?? TRIPLES.x64;
/** Its grep, glob and skill tools need ripgrep, which it would download at run time (no network in a sandbox). */
const RIPGREP = {
  package: `ripgrep-static@npm:@openai/codex@${RG_FROM_CODEX}-linux-${process.arch}`,
  links: { rg: `node_modules/ripgrep-static/vendor/${triple}/codex-path/rg` },
  prune: [
    `node_modules/ripgrep-static/vendor/${triple}/bin`,
    `node_modules/ripgrep-static/vendor/${triple}/codex-resources`,
  ],
};

/** The platform package's folder: the baseline build where the CPU has no AVX2. */
async function platformDir(prefix: string): Promise<string> {
  const baseline = process.arch === "x64" && !(await hasAvx2()) ? "-baseline" : "";
  return `node_modules/${prefix}-linux-${process.arch}${baseline}`;
}

export const opencodeDef: CliAgentDef = {
  name: "opencode",
  bundle: {
    name: "opencode",
    version: OPENCODE_VERSION,
    // The static rg from Codex's platform package comes along, the rest of that package is pruned.
    packages: [`opencode-ai@${OPENCODE_VERSION}`, RIPGREP.package],
    links: RIPGREP.links,
    prune: RIPGREP.prune,
  },
  binary: async () => `${await platformDir("opencode")}/bin/opencode`,
  glibc: true,
  // No muslBinary: opencode-linux-x64-musl@1.18.33 is named in opencode-ai's optional dependencies but
  // not published (npm 404; 1.18.32 is), so a musl image keeps failing with the launch's "needs glibc" message.
  skillsHome: ".opencode/skills",
  configFiles: (l) => [
    { path: ".config/opencode/opencode.json", content: opencodeConfig(l, "https://opencode.ai/config.json") },
  ],
  env: () => offline("OPENCODE"),
  args: (l) => ["run", "--format", "json", "-m", `benchflow/${l.model}`, INSTRUCTION],
  parse: parseOpencodeJson,
};

/**
 * Kilo Code's CLI, a fork of OpenCode: the same config schema (under its own name), the same
 * `run --format json` events. 7.7.7 is the newest whose linux platform packages are published (7.8.1's
 * are not); it has no musl build at that version either.
 */
export const kiloDef: CliAgentDef = {
  name: "kilo",
  bundle: {
    name: "kilo",
    version: KILO_VERSION,
    packages: [`@kilocode/cli@${KILO_VERSION}`, RIPGREP.package],
    links: RIPGREP.links,
    prune: RIPGREP.prune,
  },
  binary: async () => `${await platformDir("@kilocode/cli")}/bin/kilo`,
  glibc: true,
  // Skills are read from each config folder's skills/ (its own .claude and .agents scan is off).
  skillsHome: ".config/kilo/skills",
  configFiles: (l) => [
    { path: ".config/kilo/kilo.json", content: opencodeConfig(l, "https://app.kilo.ai/config.json") },
  ],
  env: () => ({ ...offline("KILO"), KILO_DISABLE_EXTERNAL_SKILLS: "1" }),
  args: (l) => ["run", "--format", "json", "--auto", "-m", `benchflow/${l.model}`, INSTRUCTION],
  parse: parseOpencodeJson,
};

export function parseOpencodeJson(stdout: string): ParsedRun {
  const events: TrajectoryEvent[] = [];
  let nToolCalls = 0;
  let nSkillInvocations = 0;
  let error: string | null = null;
  for (const line of jsonLines(stdout)) {
    const part = obj(line.part);
    const ts = isoOf(line.timestamp);
    if (line.type === "text" && str(part.text))
      events.push({ type: "agent_message", text: str(part.text), ts });
    else if (line.type === "reasoning" && str(part.text))
      events.push({ type: "agent_thought", text: str(part.text), ts });
    else if (line.type === "tool_use") {
      const state = obj(part.state);
      const tool = str(part.tool);
      nToolCalls++;
      if (tool === "skill") nSkillInvocations++;
      const status =
        state.status === "completed" ? "completed" : state.status === "error" ? "failed" : "pending";
      events.push({
        type: "tool_call",
        tool_call_id: str(part.callID) || str(part.id),
        title: str(state.title) || tool,
        kind: toolKind(tool),
        status,
        raw_input: state.input ?? null,
        raw_output: capText(state.output ?? state.error ?? null),
        ts,
      });
    } else if (line.type === "error") {
      const e = obj(line.error);
      error = `reported an error: ${str(obj(e.data).message) || str(e.name) || JSON.stringify(line.error)}`;
    }
  }
  return { events, nToolCalls, nSkillInvocations, error };
}
