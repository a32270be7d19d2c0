// Any recorded call, whichever dialect the agent spoke, as chat messages with its tool calls kept.
import { type Exchange, requestBody, responseBody, wireOf } from "../exchange.js";
import { fromAnthropic } from "./anthropic.js";
import { type Conversation, normaliseRoles } from "./common.js";
import { fromGemini, geminiReply } from "./gemini.js";
import { fromOpenAIChat } from "./openai-chat.js";
import { fromOpenAIResponses } from "./openai-responses.js";
import { replyOf } from "./reply.js";

export type { Conversation } from "./common.js";
export { type Repairs, repairToolOutputs } from "./repair.js";

export function conversationOf(ex: Exchange): Conversation {
  const req = requestBody(ex);
  const wire = wireOf(ex);
  if (wire === "gemini-generate-content") {
    const history = fromGemini(req);
    return {
      ...history,
      assistant: geminiReply(responseBody(ex), req),
      messages: normaliseRoles(history.messages),
    };
  }
  const history =
    wire === "anthropic-messages"
      ? fromAnthropic(req, ex.index)
      : wire === "openai-responses"
        ? fromOpenAIResponses(req, ex.index)
        : fromOpenAIChat(req, ex.index);
  const assistant = replyOf(responseBody(ex), `${ex.index}_r`);
  return { ...history, assistant, messages: normaliseRoles(history.messages) };
}

/** The model name the agent asked for (what it sent to the gateway). */
export function requestModelOf(ex: Exchange): string | null {
  const m = requestBody(ex).model ?? ex.metadata.request_model;
  return typeof m === "string" ? m : null;
}
