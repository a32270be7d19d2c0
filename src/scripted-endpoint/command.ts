// `bench policy scripted`: serve a policy script until SIGINT/SIGTERM, for smoke tests without a GPU.
import { loadEndpointScript, startScriptedEndpoint } from "./scripted-server.js";

export interface ScriptedEndpointCommandOptions {
  script: string;
  port: number;
  host: string;
  model: string;
}

export async function runScriptedEndpointCommand(options: ScriptedEndpointCommandOptions): Promise<void> {
  const script = await loadEndpointScript(options.script);
  const endpoint = await startScriptedEndpoint({
    script,
    port: options.port,
    host: options.host,
    model: options.model,
  });
  process.stdout.write(`Scripted policy on ${endpoint.baseUrl} (model ${options.model})\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (name: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(name);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await endpoint.close();
  process.stdout.write(`Scripted policy stopped (${signal})\n`);
}
