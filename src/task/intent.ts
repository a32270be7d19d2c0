// What a run of this task will do that its author may not expect: the parts of the task that change
// how it runs (compose services, steps, MCP servers, skills) and the places where our run differs
// from what the task asks (an unused Dockerfile, no solution, keys we do not act on, the namespace
// sandbox's limits). `bench tasks check` prints these as notes, so "ok" means nothing is hidden.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
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

/** Notes on how a run treats this task; `raw` is its parsed config (task.toml or task.md frontmatter). */
export async function runNotes(task: Task, raw: Record<string, unknown>): Promise<string[]> {
  const notes: string[] = [];
  const sandbox = tableOf(raw.sandbox) ?? tableOf(raw.environment) ?? {};
  notes.push(...(await composeNotes(task)));
  notes.push(...stepNotes(task, raw));
  notes.push(...mcpNotes(sandbox));
  if (typeof sandbox.skills_dir === "string" && sandbox.skills_dir !== "") {
    notes.push(
      `skills_dir ${sandbox.skills_dir}: its skills are placed in each agent CLI's own skills folder (docs/skills.md)`,
    );
  }
  const image = task.config.sandbox.dockerImage;
  if (image !== null && task.dockerfile !== null) {
    notes.push(
      `docker_image "${image}" is set, so ${displayPath(task.dockerfile.path)} is not used (the image wins, as in Harbor and upstream); remove one of them`,
    );
  }
  const solved = task.steps?.length
    ? task.steps.every((s) => s.solveScript !== null)
    : task.solveScript !== null;
  if (!solved) {
    notes.push("no solution (solution/solve.sh): `-a oracle` ends this task as task_error, unscored");
  }
  const runSteps = task.dockerfile?.runSteps.length ?? 0;
  if (runSteps > 0 && image === null) {
    notes.push(
      `the Dockerfile has ${runSteps} RUN step(s): the namespace sandbox cannot apply them; --sandbox container builds the image`,
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
      "; only --sandbox container runs it (the namespace sandbox refuses it)",
  ];
}

function stepNotes(task: Task, raw: Record<string, unknown>): string[] {
  if (!Array.isArray(raw.steps) || raw.steps.length === 0) return [];
  const names = raw.steps.map((s, i) => String(tableOf(s)?.name ?? `#${i + 1}`));
  if (task.layout === "native") {
    return [
      `${names.length} steps: upstream's task.md layout does not run [[steps]] (use the task.toml layout)`,
    ];
  }
  const strategy =
    typeof raw.multi_step_reward_strategy === "string" ? raw.multi_step_reward_strategy : "mean";
  return [
    `${names.length} steps (${names.join(", ")}) in one sandbox, each with its own instruction and verifier; the reward is the ${strategy} of the steps' rewards`,
  ];
}

function mcpNotes(sandbox: Record<string, unknown>): string[] {
  const servers = Array.isArray(sandbox.mcp_servers) ? sandbox.mcp_servers : [];
  if (servers.length === 0) return [];
  const shown = servers.map((s) => {
    const t = tableOf(s) ?? {};
    const transport = String(t.transport ?? "sse");
    return `${String(t.name ?? "?")} (${transport === "stdio" ? `stdio: ${String(t.command ?? "?")}` : `${transport}: ${String(t.url ?? "?")}`})`;
  });
  return [
    `MCP servers ${shown.join(", ")}: written into each agent CLI's own MCP config (claude-code, codex, opencode); bench-agent, oracle and nop do not use them`,
  ];
}

function tableOf(v: unknown): Record<string, unknown> | null {
  return isTable(v) ? v : null;
}
