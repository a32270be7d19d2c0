// bench-agent: the built-in tool loop. It runs on the host and talks to the policy through the
// rollout's gateway credential (OpenAI chat); its bash tool runs in the sandbox as the agent user.
import { CategorizedError } from "../../errors.js";
import { opt } from "../../options.js";
import type { Agent, AgentContext, AgentRunResult } from "../types.js";
import { askPolicyRetrying, PolicyRequestError } from "./chat-client.js";
import { runTool, type ToolLimits, toolDefinitions } from "./tools.js";

export interface BenchAgentOptions {
  /** Model calls at most (default 30). */
  maxTurns?: number;
  /** Per bash command (default 30 s). */
  commandTimeoutSec?: number;
  /** Characters of command output the policy reads back, the tail kept (default 8,000). */
  outputCapChars?: number;
}

interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: unknown[];
  tool_call_id?: string;
  reasoning_content?: string;
}

function systemPrompt(workdir: string, limits: ToolLimits): string {
  return [
    "You are an autonomous agent solving a task in a Linux sandbox.",
    `Use the bash tool to run shell commands; they run in ${workdir} and each call is a fresh shell`,
    `(a cd does not carry over), killed after ${limits.commandTimeoutSec} s.`,
    "Work step by step, check your results, and call submit when the task is done.",
  ].join(" ");
}

export function createBenchAgent(opts: BenchAgentOptions = {}): Agent {
  const maxTurns = opts.maxTurns ?? 30;
  const limits: ToolLimits = {
    commandTimeoutSec: opts.commandTimeoutSec ?? 30,
    outputCapChars: opts.outputCapChars ?? 8000,
  };
  return {
    name: "bench-agent",
    usesModel: true,
    seesSolution: false,
    async run(ctx: AgentContext): Promise<AgentRunResult> {
      const access = ctx.modelAccess;
      if (!access)
        throw new CategorizedError(
          "agent_setup",
          `bench-agent needs a model: pass ${opt("model", "provider/model")}`,
        );
      const tools = toolDefinitions(limits);
      const messages: ChatMessage[] = [
        { role: "system", content: systemPrompt(ctx.sandbox.workdir, limits) },
        { role: "user", content: ctx.instruction },
      ];
      ctx.record({ type: "user_message", text: ctx.instruction, ts: new Date().toISOString() });
      let nToolCalls = 0;
      for (let turn = 0; turn < maxTurns && !ctx.signal.aborted; turn++) {
        let reply: Awaited<ReturnType<typeof askPolicyRetrying>>;
        try {
          reply = await askPolicyRetrying(
            access,
            { model: access.model, messages, tools, tool_choice: "auto" },
            ctx.signal,
          );
        } catch (err) {
          if (ctx.signal.aborted) break;
          if (err instanceof PolicyRequestError) {
            return {
              nToolCalls,
              trajectorySource: "bench-agent",
              error: { category: "agent_error", message: err.message },
            };
          }
          throw err;
        }
        const ts = new Date().toISOString();
        if (reply.reasoning) ctx.record({ type: "agent_thought", text: reply.reasoning, ts });
        if (reply.content) ctx.record({ type: "agent_message", text: reply.content, ts });
        const assistant: ChatMessage = { role: "assistant", content: reply.content };
        if (reply.reasoning) assistant.reasoning_content = reply.reasoning;
        if (reply.toolCalls.length > 0) assistant.tool_calls = reply.toolCalls;
        messages.push(assistant);
        // An answer without tool calls is the policy's last word.
        if (reply.toolCalls.length === 0) break;
        let submitted = false;
        for (const call of reply.toolCalls) {
          if (ctx.signal.aborted) break;
          const outcome = await runTool(call, ctx.sandbox, limits, ctx.signal);
          nToolCalls++;
          ctx.record(outcome.event);
          messages.push({ role: "tool", tool_call_id: call.id, content: outcome.result });
          if (outcome.submitted) {
            submitted = true;
            break;
          }
        }
        if (submitted) break;
      }
      return { nToolCalls, trajectorySource: "bench-agent" };
    },
  };
}
