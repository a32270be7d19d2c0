// `bench policy scripted`: a deterministic stand-in for a vLLM server, to smoke-test tasks and
// agents without a GPU.
import { type Command, InvalidArgumentError } from "commander";
import { runScriptedEndpointCommand } from "../scripted-endpoint/command.js";
import { withHelp } from "./help.js";
import { POLICY_HELP, SCRIPTED_HELP } from "./help-pages.js";
import { parseInteger } from "./options.js";

/** A TCP port, checked here: Node's own RangeError names `options.port`, which the user never typed. */
function parsePort(value: string): number {
  const port = parseInteger(value);
  if (port < 0 || port > 65535)
    throw new InvalidArgumentError(`a port is 0 to 65535 (0 picks a free one); got ${port}`);
  return port;
}

export function registerPolicyCommands(program: Command): void {
  const policy = program.command("policy").description("Policy servers for testing");
  withHelp(policy, POLICY_HELP);
  const scripted = policy
    .command("scripted")
    .description(
      "Serve a scripted policy on an OpenAI-compatible endpoint (vLLM's wire format, token ids and logprobs)",
    )
    .requiredOption("--script <file>", "JSON or YAML script of replies (see examples/policies)")
    .option("--port <n>", "port", parsePort, 8000)
    .option("--host <host>", "address", "127.0.0.1")
    .option("--model <id>", "served model id", "scripted")
    .action(async (opts: { script: string; port: number; host: string; model: string }) => {
      await runScriptedEndpointCommand(opts);
    });
  withHelp(scripted, SCRIPTED_HELP);
}
