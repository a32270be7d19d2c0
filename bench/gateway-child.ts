// A server for the gateway benchmark, in its own process so its memory and CPU are its own:
// `policy [delayMs]` (the scripted vLLM stand-in, optionally slow like a GPU) or `gateway URL` (the
// recording gateway in front of it).
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startGateway } from "../src/gateway/index.js";
import { startScriptedEndpoint } from "../src/scripted-endpoint/scripted-server.js";

const [role, upstream] = process.argv.slice(2);
const send = (m: unknown) => process.send?.(m);

if (role === "policy") {
  const policy = await startScriptedEndpoint({
    script: { conversations: [{ replies: [{ content: "The answer is 42." }] }] },
    recordRequests: false,
    delayMs: Number(upstream ?? 0),
  });
  send({ url: policy.baseUrl });
} else if (role === "bare") {
  // The floor for any proxy in Node on this machine: pass bytes through, parse and record nothing.
  const target = new URL(upstream as string);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const server = http.createServer((req, res) => {
    const out = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    send({ url: `http://127.0.0.1:${port}/v1` });
  });
} else {
  const gateway = await startGateway({
    upstream: { baseUrl: upstream as string, apiKey: null, model: "scripted", provider: "vllm" },
    sampling: { temperature: 0.7 },
    capture: { enabled: false },
  });
  const { apiKey } = gateway.addRollout("bench", {
    trajectoryFile: path.join(os.tmpdir(), `bf-bench-gw-${process.pid}.jsonl`),
  });
  let peak = process.memoryUsage().rss;
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20).unref();
  process.on("message", (m) => {
    if (m === "mem") send({ rss: process.memoryUsage().rss, peak });
  });
  send({ url: `${gateway.url}/v1`, apiKey });
}
