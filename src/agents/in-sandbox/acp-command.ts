// `-a acp:<npm package@version or command>`: any ACP agent. A pinned npm package is installed into
// the agent cache like our own agents and its bin run from the bundle (by the bundle's Node when it
// is JavaScript); anything else is a command the task's image has. The adapter process is the agent
// (declared to the relay); where it leaves the model calls to a child, those are recorded as
// another process's. It gets the gateway through the variables most agents read.
import { readFileSync } from "node:fs";
import path from "node:path";
import { CategorizedError, UserInputError } from "../../errors.js";
import { opt } from "../../options.js";
import { acpDef } from "./acp.js";
import { bundleDir } from "./bundle.js";
import type { CliAgentDef, LaunchInfo } from "./definition.js";

/** name@1.2.3 or @scope/name@1.2.3 (a version npm can pin: digits first). */
const NPM_SPEC = /^((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)@(\d[\w.+-]*)$/i;

export function acpCommandDef(agent: string): CliAgentDef {
  const spec = agent.slice("acp:".length).trim();
  const [first = "", ...rest] = spec.split(/\s+/);
  if (!first)
    throw new UserInputError(
      `${opt("agent")} acp: needs the ACP agent to run: an npm package with its version (acp:@scope/agent@1.2.3) or a command the task's image has (acp:my-agent --acp)`,
    );
  const m = NPM_SPEC.exec(first);
  const npm = m ? { pkg: m[1] ?? "", version: m[2] ?? "" } : null;
  if (!npm && /^(@[\w.-]+\/)?[\w.-]+@/.test(first))
    throw new UserInputError(
      `${opt("agent")} ${agent}: pin the npm package's version exactly (e.g. acp:${first.split("@").slice(0, -1).join("@") || first}@1.0.0), so every rollout runs the same agent`,
    );
  const bundle = npm
    ? {
        name: `acp-${npm.pkg.replace(/[@/]/g, "_")}`,
        version: npm.version,
        packages: [first],
        withNode: true,
      }
    : { name: "acp-client", version: "1", packages: [], withNode: true };
  let bin: { path: string; js: boolean } | null = null;
  const def = acpDef({
    name: agent,
    bundle,
    command: (l: LaunchInfo) => {
      // A command line as typed (quotes and all), which bash replaces with the command: one pid.
      if (!npm) return ["bash", "-c", `exec ${spec}`];
      if (!bin) bin = binOf(npm.pkg, bundleDir(bundle));
      const at = `${l.bundleDir}/${bin.path}`;
      return bin.js ? [`${l.bundleDir}/node/bin/node`, at, ...rest] : [at, ...rest];
    },
    how: "declare",
    glibc: true,
    skillsHome: ".agents/skills",
    configFiles: () => [],
    env: (l, key) => ({
      OPENAI_BASE_URL: `${l.gatewayOrigin}/v1`,
      OPENAI_API_KEY: key,
      ANTHROPIC_BASE_URL: l.gatewayOrigin,
      ANTHROPIC_API_KEY: key,
      OPENAI_MODEL: l.model,
      BENCHFLOW_MODEL: l.model,
    }),
  });
  return def;
}

/** The package's first bin (relative to the bundle) and whether Node runs it. */
function binOf(pkg: string, hostBundle: string): { path: string; js: boolean } {
  const rel = path.join("node_modules", pkg);
  const manifest = JSON.parse(readFileSync(path.join(hostBundle, rel, "package.json"), "utf8"));
  const bins = typeof manifest.bin === "string" ? { [pkg]: manifest.bin } : (manifest.bin ?? {});
  const first = Object.values(bins)[0];
  if (typeof first !== "string")
    throw new CategorizedError("agent_setup", `acp:${pkg}: the package has no bin to run as an ACP agent`);
  const file = path.join(rel, first);
  const head = readFileSync(path.join(hostBundle, file)).subarray(0, 128).toString("utf8");
  return { path: file, js: /\.[cm]?js$/.test(first) || /^#!.*\bnode\b/.test(head) };
}
