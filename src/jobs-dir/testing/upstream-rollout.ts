// A rollout folder as upstream's own CLI tests write it (tests/test_train_cli.py `_write_rollout`):
// result.json with task_name, rewards and n_tool_calls, and one llm_trajectory.jsonl exchange whose
// reply calls the declared `finish` tool. Used to run upstream's examples through our CLI.
// rollout_name, agent and model are added: every result.json upstream writes has them, and our
// reader (src/schemas/result.ts) requires them, though upstream's test file leaves them out.
import fs from "node:fs";
import path from "node:path";

export function writeUpstreamRollout(dir: string, result: Record<string, unknown> = {}): string {
  fs.mkdirSync(path.join(dir, "trajectory"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "result.json"),
    JSON.stringify({
      task_name: "task-a",
      rollout_name: path.basename(dir),
      agent: "opencode",
      model: "m",
      rewards: { reward: 1.0 },
      n_tool_calls: 1,
      ...result,
    }),
  );
  const exchange = {
    request: {
      body: {
        model: "m",
        messages: [{ role: "user", content: "do it" }],
        tools: [
          { type: "function", function: { name: "finish", parameters: { type: "object", properties: {} } } },
        ],
      },
    },
    response: {
      status_code: 200,
      body: {
        choices: [
          {
            message: {
              role: "assistant",
              content: "",
              tool_calls: [{ id: "call_1", type: "function", function: { name: "finish", arguments: "{}" } }],
            },
          },
        ],
      },
    },
    duration_ms: 1,
  };
  fs.writeFileSync(path.join(dir, "trajectory", "llm_trajectory.jsonl"), `${JSON.stringify(exchange)}\n`);
  return dir;
}
