// A chat message as the dialect walkers build it. Content and tool-call shapes are the caller's (the
// gateway sends chat requests upstream, train writes rows), so both are type parameters.
export interface Turn<Content, Call> {
  role: string;
  content: Content;
  tool_calls?: Call[];
  tool_call_id?: string;
  reasoning_content?: string;
}

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
