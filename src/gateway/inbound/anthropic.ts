// Anthropic Messages inbound (Claude Code). Streams follow the documented flow: message_start, per
// content block content_block_start / content_block_delta... / content_block_stop, message_delta
// (stop reason, cumulative usage), message_stop; a failure after the headers is an `error` event.
import { readCompletion } from "../assemble.js";
import type { Dialect } from "../inbound.js";
import { messagesInputShape, randomId } from "../inbound.js";
import { messageObject } from "./anthropic-answer.js";
import { anthropicToChat } from "./anthropic-request.js";
import { AnthropicStream } from "./anthropic-stream.js";

export const anthropicDialect: Dialect = {
  wire: "anthropic-messages",
  callType: "anthropic_messages",
  toChat: anthropicToChat,

  answer(upstream, request) {
    return messageObject(readCompletion(upstream), request, randomId("msg_"), new Map());
  },

  stream(request) {
    return new AnthropicStream(request);
  },

  inputShape: messagesInputShape,
};
