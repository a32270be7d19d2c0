// The agent CLIs' start time per rollout: from sandbox ready to the agent's first model call
// (timing.json agent_start), for hello in the container sandbox (the namespace sandbox when no
// engine answers), next to the same CLI started directly on the host with no sandbox. Target: < 2 s.
// Also the one-time bundle install per agent version.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { INSTRUCTION } from "../src/agents/in-sandbox/agent.js";
import { ensureBundle } from "../src/agents/in-sandbox/bundle.js";
import type { CliAgentDef } from "../src/agents/in-sandbox/definition.js";
import { CLI_AGENT_DEFS } from "../src/agents/in-sandbox/index.js";
import { startGateway } from "../src/gateway/index.js";
import { Evaluation } from "../src/job/evaluation.js";
import { ContainerBackend } from "../src/sandbox/container/backend.js";
import { loadEndpointScript, startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { type BenchRow, median } from "./report.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TASK = path.join(REPO, "examples/tasks/hello");
const REPEATS = 3;
const DIRECT_RUNS = 3;
const TARGET_SEC = 2;

async function waitForRequest(requests: unknown[], limitMs: number): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (requests.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  return requests.length > 0;
}

/** Seconds from spawning the CLI on the host to its first request reaching the policy. */
async function directStart(
  def: CliAgentDef,
  bundleDir: string,
  scriptFile: string,
  scratch: string,
): Promise<number> {
  const policy = await startScriptedEndpoint({
    script: await loadEndpointScript(scriptFile),
    recordRequests: true,
  });
  const gateway = await startGateway({
    upstream: { baseUrl: policy.baseUrl, apiKey: null, model: "scripted", provider: "vllm" },
    sampling: {},
    capture: { enabled: false },
  });
  const home = await fs.mkdtemp(path.join(scratch, "home-"));
  const work = await fs.mkdtemp(path.join(scratch, "work-"));
  const { apiKey } = gateway.addRollout("direct", {
    trajectoryFile: path.join(scratch, `${path.basename(home)}.jsonl`),
  });
  const info = {
    gatewayOrigin: gateway.url,
    model: "scripted",
    keyEnv: "BENCHFLOW_API_KEY",
    workdir: work,
    mcpServers: [],
    bundleDir: "/opt/benchflow/agents/x",
  };
  for (const f of def.configFiles(info)) {
    await fs.mkdir(path.dirname(path.join(home, f.path)), { recursive: true });
    await fs.writeFile(path.join(home, f.path), f.content);
  }
  const args = def.args(info).map((a) => (a === INSTRUCTION ? "Create /tmp/x.txt" : a));
  const env = {
    PATH: `${bundleDir}/bin:${process.env.PATH}`,
    HOME: home,
    ...def.env(info, apiKey),
    BENCHFLOW_API_KEY: apiKey,
  };
  const t0 = performance.now();
  const child = spawn(path.join(bundleDir, await def.binary()), args, {
    cwd: work,
    env,
    stdio: "ignore",
    detached: true,
  });
  try {
    if (!(await waitForRequest(policy.requests, 60_000)))
      throw new Error(`${def.name} made no model call within 60 s`);
    return (performance.now() - t0) / 1000;
  } finally {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
    await gateway.close();
    await policy.close();
  }
}

export async function benchAgents(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const sandbox = (await new ContainerBackend().unavailableReason()) === null ? "container" : "namespace";
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bf-bench-agents-"));
  try {
    for (const def of Object.values(CLI_AGENT_DEFS)) {
      const bundle = await ensureBundle(def.bundle);
      rows.push({
        name: `${def.name}@${def.bundle.version}: bundle install (once per version)`,
        value: bundle.manifest.install_sec,
        unit: "s",
      });
      const scriptFile = path.join(REPO, `examples/policies/${def.name}-hello.json`);
      const direct: number[] = [];
      for (let i = 0; i < DIRECT_RUNS; i++)
        direct.push(await directStart(def, bundle.dir, scriptFile, scratch));
      const policy = await startScriptedEndpoint({
        script: await loadEndpointScript(scriptFile),
        recordRequests: false,
      });
      try {
        const result = await new Evaluation({
          tasks: TASK,
          agent: def.name,
          model: "vllm/scripted",
          trials: REPEATS,
          sandbox,
          jobsDir: path.join(scratch, "jobs"),
          retryAttempts: 0,
          env: {},
          policy: { baseUrl: policy.baseUrl },
        }).run();
        for (const r of result.results) {
          const start = r.timing?.agent_start;
          if (typeof start !== "number")
            throw new Error(`${def.name} ${r.trial}: no agent_start (${r.error ?? "no model call"})`);
          rows.push({
            name: `${def.name}: agent start, ${r.trial} (${sandbox}, reward ${r.rewards?.reward ?? "none"})`,
            value: start,
            unit: "s",
            baseline: median(direct),
            baselineName: "same CLI on the host, no sandbox (median)",
            target: `< ${TARGET_SEC} s`,
            ok: start < TARGET_SEC,
          });
        }
      } finally {
        await policy.close();
      }
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { printRows } = await import("./report.js");
  printRows("agent CLIs: start time per trial (issue: real agent CLIs)", await benchAgents());
}
