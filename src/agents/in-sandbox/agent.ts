// A real agent CLI as a BenchFlow agent: its bundle is installed once on the host and mounted
// read-only; in the sandbox it runs as the agent user, in the task's workdir, with the task's
// instruction, under the rollout's limit (the sandbox kills the whole process tree), reaching only
// the gateway with its rollout's own credential. Its JSON output becomes the trajectory.
import { promises as fs } from "node:fs";
import path from "node:path";
import { CategorizedError, messageOf } from "../../errors.js";
import { opt } from "../../options.js";
import type { ExecResult } from "../../sandbox/types.js";
import { fileSafeName } from "../../util/fs.js";
import type {
  Agent,
  AgentContext,
  AgentRunResult,
  HostPreparation,
  HostPreparationRequest,
} from "../types.js";
import { ensureBundle } from "./bundle.js";
import type { CliAgentDef, LaunchInfo, LaunchState } from "./definition.js";
import type { ParsedRun } from "./events.js";
import { imageFallbackFor } from "./image-install.js";
import { INSTRUCTION, type LaunchPlan, launchScript, SETUP_FAILED, TASK_FAILED } from "./launch.js";
import { gatewayRecordOf } from "./model-calls.js";
import { NODE_MOUNT, RELAY_MOUNT, RELAY_SOCKET, startSocketRelay } from "./relay.js";
import { type SkillOptions, skillsFor } from "./skills.js";

export { INSTRUCTION };

export interface CliAgentOptions extends SkillOptions {
  /** Extra arguments after the agent's own (tests use them to break an agent on purpose). */
  extraArgs?: string[];
  /** Use this gateway address inside the sandbox instead of the real one (tests: an unreachable one). */
  gatewayOverride?: string;
}

const BUNDLE_MOUNT = "/opt/benchflow/agents";
export const GLIBC_LOADERS: Record<string, string> = {
  x64: "/lib64/ld-linux-x86-64.so.2",
  arm64: "/lib/ld-linux-aarch64.so.1",
};
const KEY_ENV = "BENCHFLOW_API_KEY";

export function createCliAgent(def: CliAgentDef, opts: CliAgentOptions = {}): Agent {
  // Each rollout's launch state, kept by the preparation the host made for it (prepareHost's answer
  // comes back in every later step's context).
  const launches = new WeakMap<HostPreparation, LaunchState>();
  const stateOf = (ctx: AgentContext): LaunchState => {
    const s = ctx.prepared && launches.get(ctx.prepared);
    if (!s)
      throw new CategorizedError("agent_setup", `${def.name}: the trial did not prepare the agent's bundle`);
    return s;
  };
  return {
    name: def.name,
    usesModel: true,
    offersTaskTools: true,
    seesSolution: false,
    async prepareHost(req: HostPreparationRequest): Promise<HostPreparation> {
      const { prep, state } = await prepareBundle(def, opts, req);
      launches.set(prep, state);
      return prep;
    },
    async setup(ctx: AgentContext): Promise<void> {
      await stageSkills(def, opts, ctx, stateOf(ctx));
    },
    async run(ctx: AgentContext): Promise<AgentRunResult> {
      return runCli(def, opts, ctx, stateOf(ctx));
    },
  };
}

/**
 * The bundle installed (or found) on the host and the mounts that bring it into the sandbox: in a
 * container with the image's fallback, in a namespace sandbox with our relay to the gateway.
 */
async function prepareBundle(
  def: CliAgentDef,
  opts: CliAgentOptions,
  req: HostPreparationRequest,
): Promise<{ prep: HostPreparation; state: LaunchState }> {
  const t0 = performance.now();
  const bundle = await ensureBundle(def.bundle, { signal: req.signal }).catch((err) => {
    throw new CategorizedError(
      "agent_setup",
      `installing ${def.name}@${def.bundle.version} failed: ${messageOf(err)}`,
    );
  });
  const mountAt = `${BUNDLE_MOUNT}/${path.basename(bundle.dir)}`;
  const binary = `${mountAt}/${await def.binary()}`;
  const record: Record<string, unknown> = {
    agent_version: def.bundle.version,
    agent_packages: def.bundle.packages,
    agent_install_path: "bundle-mount",
    agent_installed_now: bundle.installedNow,
    skill_mode: opts.mode ?? "with-skill",
  };
  const loader = def.glibc ? (GLIBC_LOADERS[process.arch] ?? null) : null;
  const state: LaunchState = {
    readyAt: 0,
    stagedSkills: null,
    relay: false,
    binary,
    binDir: `${mountAt}/bin`,
    loader,
  };
  // In a container the backend checks the image can run the bundle, else installs the agent into it.
  const fallback =
    req.sandboxKind === "container"
      ? await imageFallbackFor(def, { binary, record, state, signal: req.signal })
      : null;
  const mounts = [
    { hostPath: bundle.dir, sandboxPath: mountAt, ...(fallback ? { agentFallback: fallback } : {}) },
  ];
  // A namespace sandbox never shares the host's loopback (with network it has a namespace of its
  // own), so it needs a relay to reach the gateway: its own trusted one as root (as containers
  // bring theirs), else the in-sandbox forwarder started by the launch script.
  const relay = req.sandboxKind === "namespace" && !req.sandboxRelays ? await startSocketRelayFor(req) : null;
  if (relay)
    mounts.push(
      { hostPath: relay.dir, sandboxPath: RELAY_MOUNT },
      { hostPath: process.execPath, sandboxPath: NODE_MOUNT },
    );
  const prep: HostPreparation = {
    readOnlyMounts: mounts,
    timing: {
      agent_install: Math.round(performance.now() - t0) / 1000,
      agent_first_install: bundle.manifest.install_sec,
    },
    record,
    release: async () => relay?.close(),
  };
  state.relay = relay !== null;
  return { prep, state };
}

/** The skills the agent gets, uploaded to a staging folder the launch script moves into its home. */
async function stageSkills(
  def: CliAgentDef,
  opts: CliAgentOptions,
  ctx: AgentContext,
  state: LaunchState,
): Promise<void> {
  state.readyAt = Date.now();
  if (!ctx.modelAccess)
    throw new CategorizedError(
      "agent_setup",
      `${def.name} needs a model: pass ${opt("model", "provider/model")}`,
    );
  const skills = await skillsFor(ctx.task, opts);
  if (skills.length === 0) return;
  state.stagedSkills = `/tmp/.bf-skills-${Date.now().toString(36)}`;
  for (const s of skills) await ctx.sandbox.upload(s.hostPath, `${state.stagedSkills}/${s.name}`);
}

/** The CLI run once in the sandbox under the rollout's limit; its output read back and recorded. */
async function runCli(
  def: CliAgentDef,
  opts: CliAgentOptions,
  ctx: AgentContext,
  state: LaunchState,
): Promise<AgentRunResult> {
  const access = ctx.modelAccess;
  if (!access)
    throw new CategorizedError(
      "agent_setup",
      `${def.name} needs a model: pass ${opt("model", "provider/model")}`,
    );
  const info: LaunchInfo = {
    gatewayOrigin: opts.gatewayOverride ?? gatewayOriginOf(ctx, access.baseUrl),
    model: bareModel(access.model),
    keyEnv: KEY_ENV,
    workdir: ctx.sandbox.workdir,
    mcpServers: ctx.task.config.sandbox.mcpServers,
    bundleDir: path.posix.dirname(state.binDir),
  };
  const plan = launchPlanOf(def, opts, ctx, state, info);
  ctx.record({ type: "user_message", text: ctx.instruction });
  const env = {
    ...ctx.env,
    ...def.env(info, access.apiKey),
    [KEY_ENV]: access.apiKey,
    // Where the agent's calls go, inside: no secret (the key is not enough; the relay says who calls).
    BENCHFLOW_GATEWAY_URL: info.gatewayOrigin,
    BF_INSTRUCTION: ctx.instruction,
  };
  const result = await ctx.sandbox.exec(launchScript(plan), {
    user: "agent",
    env,
    timeoutSec: ctx.timeoutSec,
    signal: ctx.signal,
  });
  const [stdout, stderr] = await readOutputs(ctx, plan);
  const parsed = def.parse(stdout);
  for (const e of parsed.events) ctx.record(e);
  const { calls, firstCallAt: first } = await gatewayRecordOf(ctx.rolloutDir);
  const out: AgentRunResult = {
    nToolCalls: parsed.nToolCalls,
    nSkillInvocations: parsed.nSkillInvocations,
    trajectorySource: def.trajectorySource ?? `${def.name}-json`,
    ...(first !== null && state.readyAt > 0
      ? { timing: { agent_start: Math.max(0, first - state.readyAt) / 1000 } }
      : {}),
  };
  // A run the limit or an interrupt ended is judged by the rollout, not by its exit code.
  if (result.timedOut || result.aborted) return out;
  const error = exitErrorOf(def, result, parsed, { stderr, calls });
  if (error) out.error = error;
  return out;
}

function launchPlanOf(
  def: CliAgentDef,
  opts: CliAgentOptions,
  ctx: AgentContext,
  state: LaunchState,
  info: LaunchInfo,
): LaunchPlan {
  const url = new URL(info.gatewayOrigin);
  return {
    binary: state.binary,
    binDir: state.binDir,
    loader: state.loader,
    args: [...def.args(info), ...(opts.extraArgs ?? [])],
    configFiles: def.configFiles(info),
    homeEnv: def.homeEnv,
    delegated: def.declares === "delegated",
    stagedSkills: state.stagedSkills,
    // no-skill is the A/B control: the task's own skills stay out too.
    taskSkillsDir: opts.mode === "no-skill" ? null : ctx.task.config.sandbox.skillsDir,
    skillsHome: def.skillsHome,
    gateway: { host: url.hostname, port: Number(url.port || 80) },
    // An override is used as given (tests point it at an address nothing answers).
    relay: state.relay && !opts.gatewayOverride ? { node: NODE_MOUNT, socket: RELAY_SOCKET } : null,
    declareAgent: ctx.sandbox.attributesCalls === true && !opts.gatewayOverride,
    logDir: "/logs/agent",
    stdoutFile: `${fileSafeName(def.name)}.jsonl`,
    stderrFile: `${fileSafeName(def.name)}.stderr.txt`,
  };
}

/**
 * How the CLI's exit reads: the launch script's own refusals (setup or task) and a CLI that never
 * started throw; an agent that ran and failed is the rollout's agent_error; null when it succeeded.
 */
function exitErrorOf(
  def: CliAgentDef,
  result: ExecResult,
  parsed: ParsedRun,
  seen: { stderr: string; calls: number },
): AgentRunResult["error"] | null {
  const tail = (seen.stderr || result.stderr).trim().split("\n").slice(-8).join("\n");
  if (
    (result.exitCode === SETUP_FAILED || result.exitCode === TASK_FAILED) &&
    /benchflow: /.test(result.stderr)
  ) {
    throw new CategorizedError(
      result.exitCode === TASK_FAILED ? "task_error" : "agent_setup",
      `${def.name}: ${result.stderr.trim().split("benchflow: ").pop()}`,
    );
  }
  if (parsed.setupError)
    throw new CategorizedError("agent_setup", `${def.name}: ${parsed.setupError}${tail ? `\n${tail}` : ""}`);
  if (seen.calls === 0 && parsed.events.length === 0) {
    // It never called the model and said nothing: it did not start, whatever its exit code.
    throw new CategorizedError(
      "agent_setup",
      `${def.name} failed to start (exit ${result.exitCode}): ${tail || "no output"}`,
    );
  }
  if (result.exitCode !== 0 || parsed.error) {
    const why = parsed.error ?? `exited with code ${result.exitCode}: ${tail}`;
    return { category: "agent_error", message: `${def.name} ${why}` };
  }
  return null;
}

function startSocketRelayFor(req: HostPreparationRequest) {
  return req.hostService
    ? startSocketRelay(req.hostService.port, req.hostService.host)
    : Promise.resolve(null);
}

/** Inside the sandbox: the sandbox's own gateway address, else the host's loopback (shared network). */
function gatewayOriginOf(ctx: AgentContext, baseUrl: string): string {
  const inside = ctx.sandbox.gatewayUrl ?? baseUrl;
  return new URL(inside).origin;
}

/** "vllm/Qwen/Qwen3-8B" -> "Qwen/Qwen3-8B": what the agent names (the gateway decides what goes upstream). */
function bareModel(model: string): string {
  const slash = model.indexOf("/");
  return slash > 0 ? model.slice(slash + 1) : model;
}

async function readOutputs(ctx: AgentContext, plan: LaunchPlan): Promise<[string, string]> {
  const dir = path.join(ctx.rolloutDir, "agent");
  const read = async (name: string) => {
    await ctx.sandbox.download(`/logs/agent/${name}`, path.join(dir, name)).catch(() => undefined);
    return fs.readFile(path.join(dir, name), "utf8").catch(() => "");
  };
  return [await read(plan.stdoutFile), await read(plan.stderrFile)];
}
