// OpenAI Responses request -> chat request. Items become messages: function_call items join the
// assistant turn before them, function_call_output items become tool messages, reasoning items ride
// on the next assistant turn as `reasoning_content`. Custom (freeform) tools become one-string functions.
// The walk is src/dialects' (shared with train); this file gives the chat-request style.
import {
  namespacedName,
  type ResponsesStyle,
  responsesToolDefs,
  responsesTurns,
  type ToolStyle,
} from "../../dialects/index.js";
import { GatewayError } from "../errors.js";
import type { ChatMessage, ChatToolCall, Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";

const CUSTOM_PARAMETERS: JsonObject = {
  type: "object",
  properties: { input: { type: "string", description: "The raw input for this tool." } },
  required: ["input"],
};

/** What a tool call's output item depends on: the request's custom tools and its namespaced ones. */
export interface RequestTools {
  /** Custom (freeform) tools: their calls go back as custom_tool_call items. */
  custom: Set<string>;
  /** Flat name -> the namespace and name a function_call to a namespaced tool carries. */
  namespaced: Map<string, { namespace: string; name: string }>;
}

export function requestTools(request: JsonObject): RequestTools {
  const tools: RequestTools = { custom: new Set(), namespaced: new Map() };
  if (!Array.isArray(request.tools)) return tools;
  for (const tool of request.tools) {
    if (!isObject(tool) || typeof tool.name !== "string") continue;
    if (tool.type === "custom") tools.custom.add(tool.name);
    if (tool.type === "namespace" && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) {
        if (isObject(inner) && typeof inner.name === "string")
          tools.namespaced.set(namespacedName(tool.name, inner.name), {
            namespace: tool.name,
            name: inner.name,
          });
      }
    }
  }
  return tools;
}

export function responsesToChat(request: JsonObject): JsonObject {
  if (typeof request.previous_response_id === "string" && request.previous_response_id !== "") {
    throw new GatewayError(
      400,
      "previous_response_id is not supported: the gateway keeps no conversation state; send the whole input (store: false)",
      null,
      // The agent's configuration, not the policy's doing: no reward may come of it.
      "gateway",
    );
  }
  const messages: ChatMessage[] = [];
  if (typeof request.instructions === "string" && request.instructions !== "") {
    messages.push({ role: "system", content: request.instructions });
  }
  if (typeof request.input === "string") messages.push({ role: "user", content: request.input });
  else if (Array.isArray(request.input)) messages.push(...responsesTurns(request.input, CHAT_REQUEST));
  else throw new GatewayError(400, "`input` must be a string or a list of items", null, "policy");

  const chat: JsonObject = { model: request.model ?? null, messages: messages as unknown as Json };
  const tools = responsesToolDefs(request.tools, REQUEST_TOOLS);
  if (tools.length > 0) {
    chat.tools = tools;
    if (request.tool_choice !== undefined) chat.tool_choice = toolChoice(request.tool_choice);
    if (typeof request.parallel_tool_calls === "boolean")
      chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (typeof request.max_output_tokens === "number") chat.max_tokens = request.max_output_tokens;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (isObject(request.reasoning) && typeof request.reasoning.effort === "string") {
    chat.reasoning_effort = request.reasoning.effort;
  }
  const format = isObject(request.text) ? request.text.format : undefined;
  if (isObject(format) && format.type === "json_schema") {
    chat.response_format = {
      type: "json_schema",
      json_schema: {
        name: format.name ?? "output",
        schema: format.schema ?? {},
        strict: format.strict ?? false,
      },
    };
  } else if (isObject(format) && format.type === "json_object")
    chat.response_format = { type: "json_object" };
  chat.stream = request.stream === true;
  return chat;
}

/**
 * A chat request keeps reasoning (on the next assistant turn) and images; developer is system; a
 * custom tool's raw input is the one argument `input`.
 */
const CHAT_REQUEST: ResponsesStyle<string | JsonObject[] | null, ChatToolCall> = {
  emptyText: null,
  keepReasoning: true,
  stringItems: false,
  untypedNeedsRole: true,
  developerAsSystem: true,
  messageContent: (role, content) =>
    role === "assistant" ? textOf(content as Json | undefined) : userContent(content as Json | undefined),
  toolCall: (item) => {
    const args = item.type === "function_call" ? item.arguments : JSON.stringify({ input: item.input ?? "" });
    return {
      id: String(item.call_id ?? item.id ?? ""),
      type: "function",
      function: {
        name: String(item.name ?? ""),
        arguments: typeof args === "string" ? args : JSON.stringify(args),
      },
    };
  },
  toolResult: (output) => textOf(output as Json | undefined) ?? "",
};

/** Text of a content value (string, or parts with text); null when there is none. */
function textOf(content: Json | undefined): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.filter(isObject).flatMap((p) => (typeof p.text === "string" ? [p.text] : []));
  return texts.length > 0 ? texts.join("") : null;
}

function userContent(content: Json | undefined): string | JsonObject[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: JsonObject[] = content.filter(isObject).flatMap((p): JsonObject[] => {
    if (typeof p.text === "string") return [{ type: "text", text: p.text }];
    if (p.type === "input_image" && typeof p.image_url === "string") {
      return [{ type: "image_url", image_url: { url: p.image_url } }];
    }
    return [];
  });
  if (parts.every((p) => p.type === "text")) return parts.map((p) => p.text as string).join("");
  return parts;
}

/** A request's functions: built-in tools (web_search, ...) have no chat equivalent and are dropped. */
const REQUEST_TOOLS: ToolStyle<JsonObject> = {
  keepBuiltIn: false,
  nestedFunction: false,
  customParameters: CUSTOM_PARAMETERS,
  def: (t) => {
    if (t.custom) {
      const description = typeof t.description === "string" ? t.description : "";
      return {
        type: "function",
        function: { name: (t.name ?? "") as Json, description, parameters: CUSTOM_PARAMETERS },
      };
    }
    const fn: JsonObject = {
      name: (t.name ?? "") as Json,
      parameters: (t.parameters ?? { type: "object" }) as Json,
    };
    if (typeof t.description === "string") fn.description = t.description;
    return { type: "function", function: fn };
  },
};

function toolChoice(choice: Json): Json {
  if (typeof choice === "string") return choice;
  if (
    isObject(choice) &&
    (choice.type === "function" || choice.type === "custom") &&
    typeof choice.name === "string"
  ) {
    return { type: "function", function: { name: choice.name } };
  }
  return "auto";
}
