// `bench policy scripted`: serve a policy script until SIGINT/SIGTERM, for smoke tests without a GPU.
import { loadPolicyScript, startScriptedPolicy } from "./scripted-server.js";

export interface ScriptedPolicyCommandOptions {
  script: string;
  port: number;
  host: string;
  model: string;
}

export async function runScriptedPolicyCommand(options: ScriptedPolicyCommandOptions): Promise<void> {
  const script = await loadPolicyScript(options.script);
  const policy = await startScriptedPolicy({
    script,
    port: options.port,
    host: options.host,
    model: options.model,
  });
  process.stdout.write(`Scripted policy on ${policy.baseUrl} (model ${options.model})\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (name: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(name);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await policy.close();
  process.stdout.write(`Scripted policy stopped (${signal})\n`);
}
