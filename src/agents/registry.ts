// One table of agents: adding one is a file plus a line here.
import { UserInputError } from "../errors.js";
import { nearest } from "../util/nearest.js";
import { createBenchAgent } from "./bench-agent/index.js";
import { nopAgent, oracleAgent } from "./oracle.js";
import type { Agent } from "./types.js";

type AgentFactory = () => Agent;

const agents: Record<string, AgentFactory> = {
  oracle: () => oracleAgent,
  nop: () => nopAgent,
  "bench-agent": () => createBenchAgent(),
};

export function agentNames(): string[] {
  return Object.keys(agents);
}

export function registerAgent(name: string, factory: AgentFactory): void {
  agents[name] = factory;
}

export function resolveAgent(name: string): Agent {
  const factory = agents[name];
  if (!factory) {
    const near = nearest(name, agentNames());
    const hint = near.length > 0 ? ` Did you mean ${near.join(" or ")}?` : "";
    throw new UserInputError(
      `unknown agent "${name}" (-a).${hint} Known agents: ${agentNames().join(", ")}.`,
    );
  }
  return factory();
}
