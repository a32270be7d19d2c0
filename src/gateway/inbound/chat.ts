// OpenAI Chat Completions inbound: the policy speaks it too, so requests and answers pass through,
// less what the gateway added for capture and the agent did not ask for.
import type { ChatAccumulator } from "../assemble.js";
import { errorBody, type GatewayError } from "../errors.js";
import { type Dialect, messagesInputShape, type StreamTranslator } from "../inbound.js";
import { dataEvent } from "../sse.js";
import { type AgentAsked, stripForAgent } from "../strip.js";
import type { JsonObject } from "../types.js";

export const chatDialect: Dialect = {
  wire: "openai-chat",
  callType: "acompletion",

  toChat(request) {
    return { ...request };
  },

  answer(upstream, _request, asked) {
    return stripForAgent(upstream, asked);
  },

  stream(_request, asked): StreamTranslator {
    return {
      chunk: (chunk) => dataEvent(chunk),
      finish: () => "data: [DONE]\n\n",
      fail: (error: GatewayError) => dataEvent(errorBody("openai-chat", error.status, error.message)),
      assembled: (acc: ChatAccumulator) => assembledChat(acc, asked),
    };
  },

  inputShape: messagesInputShape,
};

function assembledChat(acc: ChatAccumulator, asked: AgentAsked): JsonObject {
  const completion = acc.toCompletion();
  if (!asked.logprobs) for (const choice of completion.choices) delete choice.logprobs;
  return completion as unknown as JsonObject;
}
