// A server for the gateway benchmark, in its own process so its memory and CPU are its own:
// `policy [delayMs]` (the scripted vLLM stand-in, optionally slow like a GPU) or `gateway URL` (the
// recording gateway in front of it).
import os from "node:os";
import path from "node:path";
import { startGateway } from "../src/gateway/index.js";
import { startScriptedPolicy } from "../src/policy/scripted-server.js";

const [role, upstream] = process.argv.slice(2);
const send = (m: unknown) => process.send?.(m);

if (role === "policy") {
  const policy = await startScriptedPolicy({
    script: { conversations: [{ replies: [{ content: "The answer is 42." }] }] },
    recordRequests: false,
    delayMs: Number(upstream ?? 0),
  });
  send({ url: policy.baseUrl });
} else {
  const gateway = await startGateway({
    upstream: { baseUrl: upstream as string, apiKey: null, model: "scripted", provider: "vllm" },
    sampling: { temperature: 0.7 },
    capture: { enabled: false },
  });
  const { apiKey } = gateway.addTrial("bench", {
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
