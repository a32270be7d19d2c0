// Dialect conversion to OpenAI chat, pure (no I/O, no errors of its own): the Anthropic Messages and
// OpenAI Responses histories walked one way, for the gateway (requests it relays upstream as chat) and
// for train (recorded requests turned into training rows). Each caller gives a style: the differences
// between a chat request and a row (text joins, empty text, reasoning kept or dropped, ids, parts).
export { type AnthropicStyle, anthropicAssistant, anthropicTurns } from "./anthropic.js";
export { type ResponsesStyle, responsesTurns } from "./responses.js";
export { isObj, type Obj, type Turn } from "./turn.js";
