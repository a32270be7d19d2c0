// Network on never means the host's own network. A real agent CLI (Claude Code on the scripted
// policy) runs a task that sets no network (so it has the network, as in both harnesses) in each
// sandbox; its shell probes the policy endpoint and another server on the host's 127.0.0.1 by
// every address the host might have inside, and Debian's archive. Neither host server answers;
// the archive does; the agent still reaches the gateway (its model calls are recorded) and the
// verifier, which needs the network too, scores 1.0. Run with DOCKER_HOST set for Docker.
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Evaluation } from "../src/job/evaluation.js";
import { engineOrSkip } from "../src/sandbox/container/testing/kit.js";
import { startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";
import { llmCalls, scriptFor, shellCall } from "./testing/agents.js";
import { FIXTURES, rollouts, useScratch } from "./testing/bench.js";

const scratch = useScratch("network-isolation");
const MARKER = "HOST-LOOPBACK-ONLY-5d1c";

/** Where the host could be from inside: loopback, slirp's host address, the default gateway, its own addresses. */
function probeScript(ports: { policy: number; other: number }): string {
  const hostAddresses = Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a?.family === "IPv4" && !a.internal)
    .map((a) => a?.address);
  return [
    "out=/logs/agent/probes.txt; : > $out",
    // The default route's gateway, read without iproute2 (the image has none).
    `gw=$(awk '$2=="00000000"{print $3; exit}' /proc/net/route)`,
    `if [ -n "$gw" ]; then gw=$(printf "%d.%d.%d.%d" 0x\${gw:6:2} 0x\${gw:4:2} 0x\${gw:2:2} 0x\${gw:0:2}); fi`,
    `for h in 127.0.0.1 10.0.2.2 $gw ${hostAddresses.join(" ")}; do`,
    // The answer, not the connect, is the evidence: some networks accept any connect with a proxy.
    `  p=$(timeout 5 bash -c "exec 3<>/dev/tcp/$h/${ports.policy} && printf 'GET /v1/models HTTP/1.0\\r\\n\\r\\n' >&3 && head -c 300 <&3" 2>/dev/null | tr -d '\\r\\n' | head -c 300)`,
    `  o=$(timeout 5 bash -c "exec 3<>/dev/tcp/$h/${ports.other} && head -n1 <&3" 2>/dev/null)`,
    '  echo "policy $h: $p" >> $out; echo "other $h: $o" >> $out',
    "done",
    `d=$(timeout 30 bash -c "exec 3<>/dev/tcp/deb.debian.org/80 && printf 'HEAD /debian/dists/bookworm/Release HTTP/1.1\\r\\nHost: deb.debian.org\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n1 <&3")`,
    'echo "debian: $d" >> $out',
    "echo bookworm > /app/codename.txt",
  ].join("\n");
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe("network on: the outside yes, the host's loopback no, the gateway yes", () => {
  let other: net.Server;
  let otherPort: number;
  before(async () => {
    other = net.createServer((c) => c.end(`${MARKER}\n`));
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    otherPort = (other.address() as net.AddressInfo).port;
  });
  after(() => new Promise((r) => other.close(r)));

  for (const sandbox of ["namespace", "container"] as const) {
    it(`${sandbox}: an agent reaches Debian's archive and the gateway, not the policy endpoint or another host port`, async (t) => {
      if (sandbox === "container" && !(await engineOrSkip(t))) return;
      const policyPort = await freePort();
      const script = scriptFor("claude-code", [
        {
          replies: [
            { tool_calls: [shellCall("claude-code", probeScript({ policy: policyPort, other: otherPort }))] },
            { content: "Done." },
          ],
        },
      ]);
      const policy = await startScriptedEndpoint({ script, port: policyPort });
      const jobsDir = path.join(scratch(), sandbox);
      // A real agent CLI may need more than the fixture's few seconds on a busy machine.
      const task = path.join(scratch(), `tasks-${sandbox}/network-verifier`);
      await fs.cp(path.join(FIXTURES, "network-verifier"), task, { recursive: true });
      const toml = await fs.readFile(path.join(task, "task.toml"), "utf8");
      await fs.writeFile(
        path.join(task, "task.toml"),
        toml.replace(/timeout_sec = \d+/g, "timeout_sec = 120"),
      );
      try {
        const result = await new Evaluation({
          tasks: task,
          agent: "claude-code",
          model: "vllm/scripted",
          sandbox,
          retryAttempts: 0,
          env: {},
          jobsDir,
          policy: { baseUrl: policy.baseUrl },
        }).run();
        const [r] = result.results;
        assert.equal(r?.error, null, r?.error ?? "");
        const dir = (await rollouts(jobsDir))[0]?.dir ?? "";
        const probes = await fs.readFile(path.join(dir, "agent/probes.txt"), "utf8");
        t.diagnostic(probes);
        assert.match(probes, /^debian: HTTP\/1\.1 200/m, probes);
        assert.match(probes, /^policy 127\.0\.0\.1: /m, "the probes ran");
        assert.doesNotMatch(probes, /^policy [^:]+: .*HTTP/m, probes);
        assert.doesNotMatch(probes, new RegExp(MARKER), probes);
        // The gateway answered the agent: both turns were recorded, and the policy saw them.
        assert.equal((await llmCalls(dir)).length, 2);
        assert.equal(policy.requests.length, 2);
        // The verifier fetched from Debian's archive too, and scored the agent's answer.
        assert.equal(r?.rewards?.reward, 1);
        const config = JSON.parse(await fs.readFile(path.join(dir, "config.json"), "utf8"));
        assert.equal(config.network_mode, "public");
      } finally {
        await policy.close();
      }
    });
  }
});
