// Tool definitions of the Anthropic and Responses dialects as chat functions: which field holds what
// (input_schema, parameters; a freeform tool's one string input) is the dialect's and lives here; how
// a definition is written, and whether tools without a chat function (Anthropic server tools,
// Responses built-ins) are kept, is the caller's style.
import { isObj, type Obj } from "./turn.js";

export interface ToolFields {
  name: unknown;
  description: unknown;
  parameters: unknown;
  /** A Responses custom (freeform) tool: its parameters are the style's customParameters. */
  custom: boolean;
}

export interface ToolStyle<Def> {
  /**
   * Tools that are not client functions: kept (a row: the agent saw them and its calls happened) or
   * dropped (a chat request: upstream cannot run them).
   */
  keepBuiltIn: boolean;
  /** Read a nested `function` object too (tools recorded in chat's shape); the gateway does not. */
  nestedFunction: boolean;
  /** The parameters given to a freeform tool. */
  customParameters: Obj;
  /** One definition, or null to leave the tool out. */
  def(fields: ToolFields): Def | null;
}

function defs<Def>(tools: unknown, style: ToolStyle<Def>, fieldsOf: (t: Obj) => ToolFields | null): Def[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter(isObj).flatMap((t) => {
    const fields = fieldsOf(t);
    const def = fields ? style.def(fields) : null;
    return def === null ? [] : [def];
  });
}

/**
 * Anthropic: client tools have no type or type "custom"; server tools (web search, ...) have another.
 * With `nestedFunction`, a tool in chat's shape ({type: "function", function: {...}}), which some
 * proxies record in a /v1/messages request, is read as the client tool it is.
 */
export function anthropicToolDefs<Def>(tools: unknown, style: ToolStyle<Def>): Def[] {
  return defs(tools, style, (t) => {
    if (style.nestedFunction && isObj(t.function)) {
      const fn = t.function;
      return { name: fn.name, description: fn.description, parameters: fn.parameters, custom: false };
    }
    if (!style.keepBuiltIn && t.type !== undefined && t.type !== "custom") return null;
    const parameters = t.input_schema ?? (style.nestedFunction ? t.parameters : undefined);
    return { name: t.name, description: t.description, parameters, custom: false };
  });
}

/**
 * A tool inside a Responses `namespace` tool (Codex puts each MCP server's tools in one, e.g.
 * mcp__lookup) as one flat function name: mcp__lookup__lookup_code, as Claude Code names MCP tools.
 */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** The tools of every `namespace` tool, each under its flat name. */
function flattenNamespaces(tools: unknown): unknown {
  if (!Array.isArray(tools)) return tools;
  return tools.flatMap((t) =>
    isObj(t) && t.type === "namespace" && typeof t.name === "string" && Array.isArray(t.tools)
      ? t.tools
          .filter(isObj)
          .map((inner) => ({ ...inner, name: namespacedName(t.name as string, String(inner.name)) }))
      : [t],
  );
}

/** Responses: function tools, custom (freeform) tools, namespaces of them, and built-ins (web_search, ...). */
export function responsesToolDefs<Def>(tools: unknown, style: ToolStyle<Def>): Def[] {
  return defs(flattenNamespaces(tools), style, (t) => {
    const custom = t.type === "custom";
    if (!style.keepBuiltIn && t.type !== "function" && !custom) return null;
    const fn = style.nestedFunction && isObj(t.function) ? t.function : t;
    return {
      name: fn.name,
      description: fn.description,
      parameters: custom ? style.customParameters : fn.parameters,
      custom,
    };
  });
}
