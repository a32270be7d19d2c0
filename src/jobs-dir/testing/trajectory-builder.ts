// llm_trajectory.jsonl lines as our gateway records them: the agent's own dialect in the bodies,
// a tool call per turn, and (optionally) token capture blocks whose prompts extend each other.
export type Wire = "openai-chat" | "openai-responses" | "anthropic-messages";

export interface CallSpec {
  /** HTTP status of the call; anything but 2xx is a failed call. Default 200. */
  status?: number;
  purpose?: string;
  policyVersion?: string;
}

export interface TrajectorySpec {
  task: string;
  model: string;
  calls: CallSpec[];
  wire: Wire;
  /** true: consistent token capture; "broken": call 1's prompt rewrites history. */
  tokens?: boolean | "broken";
}

const TOOL = {
  name: "bash",
  description: "Run a shell command",
  schema: { type: "object", properties: { command: { type: "string" } } },
};

function command(j: number): string {
  return `echo step ${j}`;
}

function chatBodies(spec: TrajectorySpec, i: number, last: boolean) {
  const messages: unknown[] = [
    { role: "system", content: "You are a careful agent." },
    { role: "user", content: `Solve the task ${spec.task}.` },
  ];
  for (let j = 0; j < i; j++) {
    const call = {
      id: `call_${j}`,
      type: "function",
      function: { name: "bash", arguments: JSON.stringify({ command: command(j) }) },
    };
    messages.push({ role: "assistant", content: null, tool_calls: [call] });
    messages.push({ role: "tool", tool_call_id: `call_${j}`, content: `step ${j}` });
  }
  const reply = last
    ? { role: "assistant", content: "Done." }
    : {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${i}`,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command: command(i) }) },
          },
        ],
      };
  const request = {
    model: spec.model,
    messages,
    tools: [
      {
        type: "function",
        function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema },
      },
    ],
  };
  const response = {
    id: `chatcmpl-${i}`,
    object: "chat.completion",
    choices: [{ index: 0, message: reply, finish_reason: last ? "stop" : "tool_calls" }],
    usage: { prompt_tokens: 10 + i, completion_tokens: 2 },
  };
  return { path: "/v1/chat/completions", request, response };
}

function responsesBodies(spec: TrajectorySpec, i: number, last: boolean) {
  const input: unknown[] = [
    {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: `Solve the task ${spec.task}.` }],
    },
  ];
  for (let j = 0; j < i; j++) {
    input.push({ type: "reasoning", id: `rs_${j}`, summary: [] });
    input.push({
      type: "function_call",
      call_id: `call_${j}`,
      name: "bash",
      arguments: JSON.stringify({ command: command(j) }),
    });
    input.push({ type: "function_call_output", call_id: `call_${j}`, output: `step ${j}` });
  }
  const output = last
    ? [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] }]
    : [
        {
          type: "function_call",
          call_id: `call_${i}`,
          name: "bash",
          arguments: JSON.stringify({ command: command(i) }),
        },
      ];
  const request = {
    model: spec.model,
    instructions: "You are a careful agent.",
    input,
    tools: [{ type: "function", name: TOOL.name, description: TOOL.description, parameters: TOOL.schema }],
  };
  return {
    path: "/v1/responses",
    request,
    response: { id: `resp_${i}`, object: "response", status: "completed", output },
  };
}

function anthropicBodies(spec: TrajectorySpec, i: number, last: boolean) {
  const messages: unknown[] = [{ role: "user", content: `Solve the task ${spec.task}.` }];
  for (let j = 0; j < i; j++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "tool_use", id: `toolu_${j}`, name: "bash", input: { command: command(j) } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${j}`, content: `step ${j}` }],
    });
  }
  const content = last
    ? [{ type: "text", text: "Done." }]
    : [
        { type: "text", text: "Running a command." },
        { type: "tool_use", id: `toolu_${i}`, name: "bash", input: { command: command(i) } },
      ];
  const request = {
    model: spec.model,
    system: [{ type: "text", text: "You are a careful agent." }],
    messages,
    tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }],
    max_tokens: 1024,
  };
  return {
    path: "/v1/messages",
    request,
    response: {
      id: `msg_${i}`,
      type: "message",
      role: "assistant",
      content,
      stop_reason: last ? "end_turn" : "tool_use",
    },
  };
}

/** Token ids whose prompts extend the previous prompt plus its sampled tokens. */
export function tokenIds(i: number): { prompt: number[]; sampled: number[]; logprobs: number[] } {
  let prompt = [1, 2, 3];
  for (let j = 0; j < i; j++) prompt = [...prompt, 100 + 2 * j, 101 + 2 * j, 50 + j];
  return { prompt, sampled: [100 + 2 * i, 101 + 2 * i], logprobs: [-0.5, -0.25] };
}

function tokenCapture(spec: TrajectorySpec, i: number) {
  const { prompt, sampled, logprobs } = tokenIds(i);
  const promptIds = spec.tokens === "broken" && i === 1 ? [9, ...prompt.slice(1)] : prompt;
  return {
    schema_version: "benchflow.token_capture.v1",
    wire: spec.wire,
    provider: "vllm",
    requested: { logprobs: true, top_logprobs: null, token_ids: true },
    prompt_token_ids: promptIds,
    completions: [
      { index: 0, token_ids: sampled, tokens: sampled.map(String), logprobs, top_logprobs: null },
    ],
    unavailable: {},
  };
}

export function trajectoryLines(spec: TrajectorySpec): string[] {
  const t0 = Date.parse("2026-01-01T12:00:00Z");
  return spec.calls.map((call, i) => {
    const last = i === spec.calls.length - 1;
    const b =
      spec.wire === "openai-responses"
        ? responsesBodies(spec, i, last)
        : spec.wire === "anthropic-messages"
          ? anthropicBodies(spec, i, last)
          : chatBodies(spec, i, last);
    const status = call.status ?? 200;
    const failed = status < 200 || status >= 300;
    const metadata: Record<string, unknown> = {
      request_model: spec.model,
      provider_model: spec.model,
      wire: spec.wire,
      call_purpose: call.purpose ?? "agent",
    };
    if (call.policyVersion !== undefined) metadata.policy_version = call.policyVersion;
    if (spec.tokens && !failed) metadata.token_capture = tokenCapture(spec, i);
    return JSON.stringify({
      request: {
        timestamp: new Date(t0 + i * 1000).toISOString(),
        method: "POST",
        path: b.path,
        headers: {},
        body: b.request,
      },
      response: {
        timestamp: new Date(t0 + i * 1000 + 500).toISOString(),
        status_code: status,
        headers: {},
        body: failed ? { error: { message: "upstream unavailable", type: "server_error" } } : b.response,
      },
      duration_ms: 500,
      metadata,
    });
  });
}
