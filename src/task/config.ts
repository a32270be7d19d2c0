// Turns a parsed task.toml / task.md frontmatter into TaskConfig: aliases resolved, defaults filled,
// and every wrong value reported with its field and the fix (collected, not thrown).
import { readArtifacts } from "./artifacts.js";
import { FieldReader } from "./config-reader.js";
import { readHealthcheck } from "./healthcheck.js";
import { isTable } from "./keys.js";
import { readMcpServers, readSkillsDir } from "./mcp-servers.js";
import { readSetupCommands } from "./setup-commands.js";
import type { TaskLayout } from "./source.js";
import { readSteps } from "./steps-config.js";
import type { TaskConfig } from "./types.js";
import { readVerifierHardening } from "./verifier-hardening.js";
import { readVerifierMode } from "./verifier-mode.js";

export interface ConfigResult {
  config: TaskConfig;
  problems: string[];
  warnings: string[];
}

export function normaliseConfig(
  raw: Record<string, unknown>,
  file: string,
  layout: TaskLayout = "split",
): ConfigResult {
  const r = new FieldReader(file);
  const sandbox = r.section(raw, "sandbox", "environment");
  const oracle = r.section(raw, "oracle", "solution");
  const agent = r.table(raw.agent, "agent");
  const verifier = typeof raw.verifier === "string" ? {} : r.table(raw.verifier, "verifier");
  r.shorthand(raw, "verifier", "verifier");
  r.shorthand(raw, "oracle", "oracle");
  r.schemaVersion(
    raw.schema_version ?? raw.version,
    raw.schema_version !== undefined ? "schema_version" : "version",
  );
  if (raw.name !== undefined && isTable(raw.task) && raw.task.name !== undefined) {
    r.problem("name", "is set twice (name: and task.name)", "keep only one of them");
  }

  const type = verifier.type ?? "test-script";
  if (type !== "test-script") {
    r.problem(
      "verifier.type",
      `= ${JSON.stringify(type)} is not supported`,
      'use type = "test-script" (test.sh)',
    );
  }

  const image = raw.image;
  if (image !== undefined && sandbox.table.docker_image !== undefined) {
    r.problem("image", `and ${sandbox.name}.docker_image are both set`, "keep only one of them");
  }
  const s = sandbox.name;
  const config: TaskConfig = {
    agent: {
      timeoutSec: r.seconds(agent.timeout_sec, "agent.timeout_sec", null),
      user: r.user(agent.user, "agent.user"),
      networkMode: r.phaseNetwork(agent, "agent"),
      promptPrefix: r.text(agent.prompt_prefix, "agent.prompt_prefix"),
    },
    verifier: {
      timeoutSec: r.seconds(verifier.timeout_sec, "verifier.timeout_sec", 600) ?? 600,
      env: r.env(verifier.env, "verifier.env"),
      user: r.user(verifier.user, "verifier.user"),
      rewardRange: r.rewardRange(verifier.reward_range, "verifier.reward_range"),
      networkMode: r.phaseNetwork(verifier, "verifier"),
      ...optional("hardening", readVerifierHardening(r, verifier.hardening)),
      ...readVerifierMode(r, verifier, raw),
    },
    sandbox: {
      networkMode: r.sandboxNetwork(sandbox.table, s, layout),
      allowedHosts: r.strings(sandbox.table.allowed_hosts, `${s}.allowed_hosts`),
      workdir: r.workdir(sandbox.table.workdir, `${s}.workdir`),
      env: r.env(sandbox.table.env, `${s}.env`),
      cpus: r.positive(sandbox.table.cpus, `${s}.cpus`, 1, false),
      memoryMb: r.size(sandbox.table, s, "memory", 2048),
      storageMb: r.size(sandbox.table, s, "storage", 10240),
      gpus: r.count(sandbox.table.gpus, `${s}.gpus`),
      dockerImage: r.text(
        image ?? sandbox.table.docker_image,
        image !== undefined ? "image" : `${s}.docker_image`,
      ),
      buildTimeoutSec: r.seconds(sandbox.table.build_timeout_sec, `${s}.build_timeout_sec`, 600) ?? 600,
      healthcheck: readHealthcheck(r, sandbox.table.healthcheck, `${s}.healthcheck`),
      setupCommands: readSetupCommands(r, sandbox.table.setup_commands, `${s}.setup_commands`),
      skillsDir: readSkillsDir(r, sandbox.table.skills_dir, `${s}.skills_dir`),
      mcpServers: readMcpServers(r, sandbox.table.mcp_servers, `${s}.mcp_servers`),
    },
    oracle: {
      env: r.env(oracle.table.env, `${oracle.name}.env`),
      timeoutSec: r.seconds(oracle.table.timeout_sec, `${oracle.name}.timeout_sec`, null),
    },
    artifacts: readArtifacts(r, raw.artifacts),
    metadata: isTable(raw.metadata) ? { ...raw.metadata } : r.metadata(raw.metadata),
    steps: [],
    multiStepRewardStrategy: "mean",
  };
  Object.assign(config, readSteps(r, raw, config));
  // Upstream BenchFlow parses the phase overrides but never applies them; the task.md layout follows it.
  if (layout === "native") {
    for (const phase of ["agent", "verifier"] as const) {
      if (config[phase].networkMode != null) {
        r.warnings.push(
          `${file}: ${phase}.network_mode is not acted on in the task.md layout (as in upstream BenchFlow); the ${s} network applies to every phase`,
        );
      }
    }
  }
  return { config, problems: r.problems, warnings: r.warnings };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
