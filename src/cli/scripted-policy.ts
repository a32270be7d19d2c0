// `bench policy scripted`: a deterministic stand-in for a vLLM server, to smoke-test tasks and
// agents without a GPU.
import type { Command } from "commander";
import { runScriptedPolicyCommand } from "../policy/command.js";
import { withHelp } from "./help.js";
import { POLICY_HELP, SCRIPTED_HELP } from "./help-pages.js";
import { parseInteger } from "./options.js";

export function registerPolicyCommands(program: Command): void {
  const policy = program.command("policy").description("Policy servers for testing");
  withHelp(policy, POLICY_HELP);
  const scripted = policy
    .command("scripted")
    .description(
      "Serve a scripted policy on an OpenAI-compatible endpoint (vLLM's wire format, token ids and logprobs)",
    )
    .requiredOption("--script <file>", "JSON or YAML script of replies (see examples/policies)")
    .option("--port <n>", "port", parseInteger, 8000)
    .option("--host <host>", "address", "127.0.0.1")
    .option("--model <id>", "served model id", "scripted")
    .action(async (opts: { script: string; port: number; host: string; model: string }) => {
      await runScriptedPolicyCommand(opts);
    });
  withHelp(scripted, SCRIPTED_HELP);
}
