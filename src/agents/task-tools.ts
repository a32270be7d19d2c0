// An agent that does not give the policy the task's MCP servers or skills_dir says so, once per task
// at plan time: the rollout still runs, but without tools its author meant the policy to have.
import type { Task } from "../task/types.js";
import type { Agent } from "./types.js";

const CLIS = "claude-code, codex, opencode or an ACP agent";

export function unofferedTaskTools(agent: Agent, task: Task): string[] {
  if (agent.offersTaskTools) return [];
  const { mcpServers, skillsDir } = task.config.sandbox;
  const why = agent.usesModel
    ? `${agent.name} has no MCP client and loads no skills; run ${CLIS} to offer them`
    : `${agent.name} calls no model`;
  const out: string[] = [];
  if (mcpServers.length > 0) {
    const names = mcpServers.map((s) => s.name).join(", ");
    out.push(`task ${task.name}: its MCP servers (${names}) are not offered to ${agent.name}: ${why}`);
  }
  if (skillsDir)
    out.push(`task ${task.name}: its skills_dir ${skillsDir} is not offered to ${agent.name}: ${why}`);
  return out;
}
