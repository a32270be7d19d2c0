// OpenAI Responses inbound (Codex). Streams follow the documented lifecycle: response.created,
// response.in_progress, per item output_item.added ... output_item.done, then response.completed
// (or .incomplete / .failed); every event carries a sequence_number.
import { readCompletion } from "../assemble.js";
import type { Dialect } from "../inbound.js";
import { randomId } from "../inbound.js";
import { outputItems, responseObject, responsesUsage, statusOf } from "./responses-answer.js";
import { requestTools, responsesToChat } from "./responses-request.js";
import { ResponsesStream } from "./responses-stream.js";

export const responsesDialect: Dialect = {
  wire: "openai-responses",
  callType: "aresponses",
  toChat: responsesToChat,

  answer(upstream, request) {
    const completion = readCompletion(upstream);
    const choice = completion.choices[0];
    return responseObject(request, {
      id: randomId("resp_"),
      createdAt: completion.created,
      model: completion.model,
      status: statusOf(choice),
      output: outputItems(choice, requestTools(request)),
      usage: responsesUsage(completion.usage),
    });
  },

  stream(request) {
    return new ResponsesStream(request);
  },

  inputShape(request) {
    return {
      has_messages: false,
      has_input: request.input !== undefined,
      n_messages: Array.isArray(request.input) ? request.input.length : 1,
    };
  },
};
