// The task's MCP servers reach a real agent CLI through the config we wrote: on the scripted policy
// the agent calls the lookup server's tool, the server logs the call, and the tool's answer (a secret
// only the server knows) comes back to the model in the next request the gateway recorded. stdio in
// the namespace sandbox and in a container; streamable HTTP from a server in the same container
// (started before the agent, as a sidecar would be); a compose sidecar once compose is on main.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  createClaudeCodeAgent,
  createCodexAgent,
  createOpencodeAgent,
} from "../src/agents/in-sandbox/index.js";
import { registerAgent } from "../src/agents/registry.js";
import type { Agent } from "../src/agents/types.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import {
  type AgentRun,
  CLI_AGENTS,
  type CliAgent,
  llmCalls,
  runAgent,
  scriptFor,
  shellCall,
} from "./testing/agents.js";
import { FIXTURES, useScratch } from "./testing/bench.js";

const SECRET = "MCP-SECRET-4b9d";
const ANSWER = `The secret code is ${SECRET}`;
const scratch = useScratch("agents-mcp");

/** The lookup server's tool as each agent names it to the model (codex's namespace flattened by the gateway). */
const MCP_TOOL: Record<CliAgent, string> = {
  "claude-code": "mcp__lookup__lookup_code",
  codex: "mcp__lookup__lookup_code",
  opencode: "lookup_lookup_code",
};

function lookupScript(agent: CliAgent) {
  return scriptFor(agent, [
    {
      replies: [
        {
          content: "Asking the lookup server.",
          tool_calls: [{ name: MCP_TOOL[agent], arguments: {} }],
        },
        { tool_calls: [shellCall(agent, `echo ${SECRET} > /app/code.txt`)] },
        { content: "Done." },
      ],
    },
  ]);
}

/**
 * What proves the agent reached the server through its config: the model was offered the tool, the
 * server logged the call, and the answer came back in a later request the gateway recorded.
 */
async function assertCalledThroughConfig(run: AgentRun, agent: CliAgent, logInRollout = true): Promise<void> {
  const rolloutDir = run.found[0]?.dir ?? "";
  const offered = run.requests.some((r) =>
    (r.body?.tools ?? []).some((t: { function?: { name?: string } }) => t.function?.name === MCP_TOOL[agent]),
  );
  assert.ok(offered, `${agent}: the model was offered ${MCP_TOOL[agent]}`);
  const bodies = (await llmCalls(rolloutDir)).map((c) => JSON.stringify(c.request.body));
  assert.ok(bodies.length >= 2, `${agent}: more than one model call`);
  assert.ok(!(bodies[0] ?? "").includes(ANSWER), `${agent}: the first request does not know the answer`);
  assert.ok(
    bodies.some((b) => b.includes(ANSWER)),
    `${agent}: the tool's answer came back to the model in a later request`,
  );
  if (!logInRollout) return; // a sidecar's log: the caller reads it
  const log = await fs.readFile(path.join(rolloutDir, "agent/mcp-lookup.log"), "utf8").catch(() => "");
  assert.match(log, /tools\/call .*lookup_code/, `${agent}: the server logged the call`);
}

/** A copy of the lookup task whose server is reached at a URL instead of spawned over stdio. */
async function httpTask(name: string, url: string): Promise<string> {
  const dir = path.join(scratch(), name);
  await fs.cp(path.join(FIXTURES, "mcp-lookup"), dir, { recursive: true });
  // Our own static busybox (the host's), for httpd; never committed.
  await fs.copyFile("/bin/busybox", path.join(dir, "environment/mcp/busybox"));
  const toml = await fs.readFile(path.join(dir, "task.toml"), "utf8");
  const server = `[[environment.mcp_servers]]\nname = "lookup"\ntransport = "streamable-http"\nurl = "${url}"\n`;
  await fs.writeFile(
    path.join(dir, "task.toml"),
    toml.replace(/\[\[environment\.mcp_servers\]\][\s\S]*$/, server),
  );
  return dir;
}

/** The agent, with the task's HTTP server started in the sandbox first (a test step: compose sidecars come later). */
function withHttpServer(make: () => Agent): () => Agent {
  return () => {
    const agent = make();
    return {
      ...agent,
      async setup(ctx) {
        await agent.setup?.(ctx);
        const started = await ctx.sandbox.exec("sh /opt/mcp/serve-http.sh 127.0.0.1:8000", { user: "agent" });
        assert.equal(started.exitCode, 0, `the MCP server started: ${started.stderr}`);
      },
    };
  };
}

describe("agent CLIs: the task's stdio MCP server", () => {
  for (const agent of CLI_AGENTS) {
    it(`${agent} (namespace sandbox): calls lookup_code through the config we wrote`, async () => {
      const run = await runAgent(lookupScript(agent), {
        tasks: path.join(FIXTURES, "mcp-lookup"),
        agent,
        sandbox: "namespace",
        jobsDir: path.join(scratch(), `stdio-ns-${agent}`),
      });
      const [r] = run.result.results;
      assert.equal(r?.error, null, agent);
      assert.equal(r?.rewards?.reward, 1);
      await assertCalledThroughConfig(run, agent);
    });
  }

  it("claude-code (container): calls lookup_code through the config we wrote", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const run = await runAgent(lookupScript("claude-code"), {
      tasks: path.join(FIXTURES, "mcp-lookup"),
      agent: "claude-code",
      sandbox: "container",
      jobsDir: path.join(scratch(), "stdio-ct"),
    });
    const [r] = run.result.results;
    assert.equal(r?.error, null);
    assert.equal(r?.rewards?.reward, 1);
    await assertCalledThroughConfig(run, "claude-code");
  });
});

describe("agent CLIs: the task's streamable-http MCP server", () => {
  const agents = {
    "claude-code": createClaudeCodeAgent,
    codex: createCodexAgent,
    opencode: createOpencodeAgent,
  } as const;
  for (const agent of CLI_AGENTS) {
    it(`${agent} (container): reaches the server at its url and calls lookup_code`, async (t) => {
      if (!(await engineOrSkip(t))) return;
      const name = `${agent}-with-mcp-http`;
      registerAgent(
        name,
        withHttpServer(() => agents[agent]()),
      );
      const run = await runAgent(lookupScript(agent), {
        tasks: await httpTask(`http-${agent}`, "http://127.0.0.1:8000/cgi-bin/mcp"),
        agent: name,
        sandbox: "container",
        jobsDir: path.join(scratch(), `http-${agent}`),
      });
      const [r] = run.result.results;
      assert.equal(r?.error, null);
      assert.equal(r?.rewards?.reward, 1);
      await assertCalledThroughConfig(run, agent);
    });
  }
});

/** A copy of the sidecar task with its server's build context filled in (busybox and the lookup scripts). */
async function sidecarTask(): Promise<string> {
  const dir = path.join(scratch(), "mcp-sidecar");
  await fs.cp(path.join(FIXTURES, "mcp-sidecar"), dir, { recursive: true });
  const context = path.join(dir, "environment/mcp-server");
  await fs.copyFile("/bin/busybox", path.join(context, "busybox"));
  for (const script of ["lookup-mcp.sh", "serve-http.sh"])
    await fs.copyFile(path.join(FIXTURES, "mcp-lookup/environment/mcp", script), path.join(context, script));
  return dir;
}

describe("agent CLIs: an MCP server as a compose sidecar", () => {
  it("claude-code (container): reaches the sidecar by its service name and calls lookup_code", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const run = await runAgent(lookupScript("claude-code"), {
      tasks: await sidecarTask(),
      agent: "claude-code",
      sandbox: "container",
      jobsDir: path.join(scratch(), "sidecar"),
    });
    const [r] = run.result.results;
    assert.equal(r?.error, null);
    // The verifier scores 1 only when the sidecar's own log (served at /calls.log) shows the call.
    assert.equal(r?.rewards?.reward, 1);
    await assertCalledThroughConfig(run, "claude-code", false);
    const dir = run.found[0]?.dir ?? "";
    const verifierOut = await fs.readFile(path.join(dir, "verifier/test-stdout.txt"), "utf8");
    assert.match(verifierOut, /sidecar log: [\s\S]*tools\/call .*lookup_code/);
  });

  it("the sidecar task scores oracle 1.0 and nop 0.0", async (t) => {
    if (!(await engineOrSkip(t))) return;
    const tasks = await sidecarTask();
    for (const [agent, reward] of [
      ["oracle", 1],
      ["nop", 0],
    ] as const) {
      const { result } = await runAgent(lookupScript("claude-code"), {
        tasks,
        agent,
        sandbox: "container",
        jobsDir: path.join(scratch(), `sidecar-${agent}`),
      });
      assert.equal(result.results[0]?.rewards?.reward, reward, agent);
    }
  });
});
