// Dialect conversion to OpenAI chat, pure (no I/O, no errors of its own): the Anthropic Messages and
// OpenAI Responses histories walked one way, for the gateway (requests it relays upstream as chat) and
// for train (recorded requests turned into training rows), and their tool definitions. Each caller
// gives a style: the differences between a chat request and a row (text joins, empty text, reasoning
// kept or dropped, ids, parts, which tools are kept and how a definition is written).
export { type AnthropicStyle, anthropicAssistant, anthropicTurns } from "./anthropic.js";
export { type ResponsesStyle, responsesTurns } from "./responses.js";
export {
  anthropicToolDefs,
  namespacedName,
  responsesToolDefs,
  type ToolFields,
  type ToolStyle,
} from "./tools.js";
export { isObj, type Obj, type Turn } from "./turn.js";
