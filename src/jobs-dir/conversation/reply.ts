// The assistant message of a recorded response, whatever shape it came in. The wire tells which shape
// to expect, but recorders and proxies mix them (OpenHands' chat request answered with a Responses
// `output`; a /v1/messages answer without its `type`), so every shape is tried, as upstream does:
// chat choices (or a bare message), Anthropic content blocks, Responses output.
import type { ChatMessage } from "../../schemas/train-rows.js";
import { anthropicReply } from "./anthropic.js";
import { contentOf, type Obj } from "./common.js";
import { chatReply } from "./openai-chat.js";
import { responsesReply } from "./openai-responses.js";

/** null when the response holds no assistant turn (the row is skipped_no_assistant). */
export function replyOf(res: Obj, where: string): ChatMessage | null {
  const chat = chatReply(res, where);
  if (chat) return chat;
  if (Array.isArray(res.content) && res.content.length > 0) return anthropicReply(res.content, where);
  if (typeof res.content === "string" && res.content !== "")
    return { role: "assistant", content: contentOf(res.content) };
  return Array.isArray(res.output) ? responsesReply(res.output, where) : null;
}
