// What a run of this task will do that its author may not expect: the parts of the task that change
// how it runs (compose services, steps, MCP servers, skills) and the places where our run differs
// from what the task asks (an unused Dockerfile, no solution, keys we do not act on, the namespace
// sandbox's limits). `bench tasks check` prints these as notes, so "ok" means nothing is hidden.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { opt } from "../options.js";
import { isTable } from "./keys.js";
import { displayPath } from "./source.js";
import type { Task } from "./types.js";

/** The compose file names both harnesses look for, in their order. */
export const COMPOSE_FILE_NAMES = [
  "docker-compose.yaml",
  "docker-compose.yml",
  "compose.yaml",
  "compose.yml",
] as const;

/** The task's compose file, if it has one. */
export async function composeFileOf(environmentDir: string): Promise<string | null> {
  for (const name of COMPOSE_FILE_NAMES) {
    const file = path.join(environmentDir, name);
    if ((await fs.stat(file).catch(() => null))?.isFile()) return file;
  }
  return null;
}

/** Notes on how a run treats this task. */
export async function runNotes(task: Task): Promise<string[]> {
  const notes: string[] = [];
  const { sandbox } = task.config;
  notes.push(...(await composeNotes(task)));
  const steps = task.steps ?? [];
  if (steps.length > 0) {
    notes.push(
      `${steps.length} steps (${steps.map((s) => s.name).join(", ")}) in one sandbox, each with its own instruction and verifier; the reward is the ${task.config.multiStepRewardStrategy ?? "mean"} of the steps' rewards`,
    );
  }
  if (sandbox.mcpServers.length > 0) {
    const shown = sandbox.mcpServers.map(
      (m) => `${m.name} (${m.transport === "stdio" ? `stdio: ${m.command}` : `${m.transport}: ${m.url}`})`,
    );
    notes.push(
      `MCP servers ${shown.join(", ")}: written into each agent CLI's own MCP config (claude-code, codex, opencode; ACP agents get them in session/new); bench-agent, oracle and nop do not use them`,
    );
  }
  if (sandbox.skillsDir !== null) {
    notes.push(
      `skills_dir ${sandbox.skillsDir}: its skills are placed in each agent CLI's own skills folder (docs/skills.md)`,
    );
  }
  const image = sandbox.dockerImage;
  if (image !== null && task.dockerfile !== null) {
    notes.push(
      `docker_image "${image}" is set, so ${displayPath(task.dockerfile.path)} is not used (the image wins, as in Harbor and upstream); remove one of them`,
    );
  }
  const solved = steps.length > 0 ? steps.every((s) => s.solveScript !== null) : task.solveScript !== null;
  if (!solved) {
    notes.push(
      `no solution (solution/solve.sh): \`${opt("agent", "oracle")}\` ends this task as task_error, unscored`,
    );
  }
  const runSteps = task.dockerfile?.runSteps.length ?? 0;
  if (runSteps > 0 && image === null) {
    notes.push(
      `the Dockerfile has ${runSteps} RUN step(s): the namespace sandbox cannot apply them; ${opt("sandbox", "container")} builds the image`,
    );
  }
  return notes;
}

async function composeNotes(task: Task): Promise<string[]> {
  const file = await composeFileOf(task.environmentDir);
  if (file === null) return [];
  let doc: unknown;
  try {
    doc = parseYaml(await fs.readFile(file, "utf8"));
  } catch (err) {
    return [`${displayPath(file)}: not valid YAML (${(err as Error).message.split("\n")[0]})`];
  }
  const services = tableOf(tableOf(doc)?.services) ?? {};
  const names = Object.keys(services);
  const dependsOn = tableOf(services.main)?.depends_on;
  // depends_on is a list of names (started) or a map of name -> {condition}.
  const listed = Array.isArray(dependsOn)
    ? dependsOn.map((n) => `${String(n)} (started)`)
    : Object.entries(tableOf(dependsOn) ?? {}).map(
        ([name, v]) =>
          `${name} (${String(tableOf(v)?.condition ?? "service_started").replace(/^service_/, "")})`,
      );
  return [
    `${displayPath(file)}: ${names.length} service(s) (${names.join(", ") || "none"}); the agent runs in "main"` +
      (listed.length > 0 ? `, which waits for ${listed.join(", ")}` : "") +
      `; only ${opt("sandbox", "container")} runs it (the namespace sandbox refuses it)`,
  ];
}

function tableOf(v: unknown): Record<string, unknown> | null {
  return isTable(v) ? v : null;
}
