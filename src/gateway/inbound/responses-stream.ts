// OpenAI Responses streaming: chat chunks in, the documented event lifecycle out. Items open when the
// model starts producing them (reasoning, message text, a tool call) and close when the next begins.
import type { ChatAccumulator } from "../assemble.js";
import type { GatewayError } from "../errors.js";
import type { StreamTranslator } from "../inbound.js";
import { firstDelta, randomId } from "../inbound.js";
import { namedEvent } from "../sse.js";
import type { Json, JsonObject } from "../types.js";
import { isObject } from "../types.js";
import {
  messageItem,
  type ResponseState,
  reasoningItem,
  responseObject,
  responsesUsage,
  statusOf,
  toolItem,
} from "./responses-answer.js";
import { type RequestTools, requestTools } from "./responses-request.js";

interface OpenItem {
  kind: "reasoning" | "message" | "tool";
  index: number;
  text: string;
  toolIndex?: number;
}

export class ResponsesStream implements StreamTranslator {
  private seq = 0;
  private readonly state: ResponseState;
  private readonly requestTools: RequestTools;
  private readonly tools = new Map<number, number>(); // chat tool index -> output index
  private open: OpenItem | null = null;
  private acc: ChatAccumulator | null = null;
  private final: JsonObject | null = null;

  constructor(private readonly request: JsonObject) {
    const now = Math.floor(Date.now() / 1000);
    this.state = {
      id: randomId("resp_"),
      createdAt: now,
      model: "",
      status: "in_progress",
      output: [],
      usage: null,
    };
    this.requestTools = requestTools(request);
  }

  chunk(chunk: JsonObject, acc: ChatAccumulator): string {
    let out = this.start(acc);
    const delta = firstDelta(chunk);
    if (!delta) return out;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") out += this.text("reasoning", reasoning);
    if (typeof delta.content === "string" && delta.content !== "") out += this.text("message", delta.content);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) out += this.tool(call);
    return out;
  }

  finish(acc: ChatAccumulator): string {
    let out = this.start(acc) + this.close();
    for (const [toolIndex, index] of this.tools)
      this.syncTool(toolIndex, this.state.output[index] as JsonObject);
    const completion = acc.toCompletion();
    this.state.status = statusOf(completion.choices[0]);
    this.state.usage = responsesUsage(completion.usage);
    this.final = responseObject(this.request, this.state);
    out += this.emit({ type: `response.${this.state.status}`, response: this.final });
    return out;
  }

  fail(error: GatewayError, acc: ChatAccumulator): string {
    // The item in progress is left incomplete, never "done": an agent keeps done items in its
    // history, and a half answer from a failed call would then pass for the policy's turn.
    let out = this.start(acc);
    if (this.open) {
      (this.state.output[this.open.index] as JsonObject).status = "incomplete";
      this.open = null;
    }
    this.state.status = "failed";
    this.state.error = { code: "server_error", message: error.message };
    this.final = responseObject(this.request, this.state);
    out += this.emit({ type: "response.failed", response: this.final });
    return out;
  }

  assembled(acc: ChatAccumulator): JsonObject {
    return this.final ?? responseObject(this.request, { ...this.state, model: acc.model });
  }

  private start(acc: ChatAccumulator): string {
    if (this.acc) return "";
    this.acc = acc;
    this.state.model = acc.model;
    const snapshot = responseObject(this.request, this.state);
    return (
      this.emit({ type: "response.created", response: snapshot }) +
      this.emit({ type: "response.in_progress", response: snapshot })
    );
  }

  private emit(event: JsonObject & { type: string }): string {
    return namedEvent({ ...event, sequence_number: this.seq++ });
  }

  private text(kind: "reasoning" | "message", delta: string): string {
    let out = "";
    if (this.open?.kind !== kind) {
      out += this.close();
      const index = this.state.output.length;
      const id = randomId(kind === "reasoning" ? "rs_" : "msg_");
      const item =
        kind === "reasoning" ? reasoningItem(id, "", "in_progress") : messageItem(id, "", "in_progress");
      const part = (item.content as JsonObject[])[0] as JsonObject;
      item.content = [];
      this.state.output.push(item);
      this.open = { kind, index, text: "" };
      out += this.emit({ type: "response.output_item.added", output_index: index, item });
      out += this.emit({
        type: "response.content_part.added",
        item_id: id,
        output_index: index,
        content_index: 0,
        part,
      });
    }
    const open = this.open as OpenItem;
    open.text += delta;
    const item = this.state.output[open.index] as JsonObject;
    const type = kind === "reasoning" ? "response.reasoning_text.delta" : "response.output_text.delta";
    const event: JsonObject & { type: string } = {
      type,
      item_id: item.id as string,
      output_index: open.index,
      content_index: 0,
      delta,
    };
    if (kind === "message") event.logprobs = [];
    return out + this.emit(event);
  }

  private tool(raw: Json): string {
    if (!isObject(raw)) return "";
    const toolIndex = typeof raw.index === "number" ? raw.index : 0;
    let out = "";
    let index = this.tools.get(toolIndex);
    if (index === undefined) {
      out += this.close();
      index = this.state.output.length;
      const fn = isObject(raw.function) ? raw.function : {};
      const call = {
        id: String(raw.id ?? ""),
        type: "function" as const,
        function: { name: String(fn.name ?? ""), arguments: "" },
      };
      const item = toolItem(call, this.requestTools, undefined, "in_progress");
      if (item.type === "custom_tool_call") item.input = "";
      this.state.output.push(item);
      this.tools.set(toolIndex, index);
      this.open = { kind: "tool", index, text: "", toolIndex };
      out += this.emit({ type: "response.output_item.added", output_index: index, item: { ...item } });
    }
    const fn = isObject(raw.function) ? raw.function : {};
    const item = this.state.output[index] as JsonObject;
    if (typeof fn.arguments === "string" && fn.arguments !== "" && item.type === "function_call") {
      item.arguments = `${item.arguments}${fn.arguments}`;
      if (this.open?.index === index) {
        out += this.emit({
          type: "response.function_call_arguments.delta",
          item_id: item.id as string,
          output_index: index,
          delta: fn.arguments,
        });
      }
    }
    return out;
  }

  /** Ends the open item: its done events, with the item as it finally is. */
  private close(): string {
    const open = this.open;
    if (!open) return "";
    this.open = null;
    const item = this.state.output[open.index] as JsonObject;
    const id = item.id as string;
    let out = "";
    if (open.kind === "tool") return out + this.closeTool(open);
    const done = open.kind === "reasoning" ? reasoningItem(id, open.text) : messageItem(id, open.text);
    const part = (done.content as JsonObject[])[0] as JsonObject;
    const textDone = open.kind === "reasoning" ? "response.reasoning_text.done" : "response.output_text.done";
    const doneEvent: JsonObject & { type: string } = {
      type: textDone,
      item_id: id,
      output_index: open.index,
      content_index: 0,
      text: open.text,
    };
    if (open.kind === "message") doneEvent.logprobs = [];
    out += this.emit(doneEvent);
    out += this.emit({
      type: "response.content_part.done",
      item_id: id,
      output_index: open.index,
      content_index: 0,
      part,
    });
    this.state.output[open.index] = done;
    return out + this.emit({ type: "response.output_item.done", output_index: open.index, item: done });
  }

  private closeTool(open: OpenItem): string {
    const item = this.state.output[open.index] as JsonObject;
    let out = "";
    item.status = "completed";
    this.syncTool(open.toolIndex ?? 0, item);
    if (item.type === "function_call") {
      out += this.emit({
        type: "response.function_call_arguments.done",
        item_id: item.id as string,
        output_index: open.index,
        name: item.name as string,
        arguments: item.arguments as string,
      });
    }
    return (
      out + this.emit({ type: "response.output_item.done", output_index: open.index, item: { ...item } })
    );
  }

  /** The accumulated arguments are the truth (deltas for a closed item still count). */
  private syncTool(toolIndex: number, item: JsonObject): void {
    const call = this.acc?.states.get(0)?.tools.get(toolIndex);
    if (!call) return;
    if (item.type === "function_call") item.arguments = call.function.arguments;
    else item.input = (toolItem(call, this.requestTools).input as string) ?? "";
  }
}
