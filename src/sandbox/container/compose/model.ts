// A task's environment/docker-compose.yaml read into the part of the compose model we run: its
// services, each with build or image, environment, command, entrypoint, healthcheck, depends_on,
// expose, working_dir and user. Everything else in the file is named in a warning (or, when it is
// malformed, an error that names the file, the field and the fix): nothing is dropped silently.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { interpolateTree } from "./interpolate.js";

/** The service the agent runs in (Harbor and upstream both hard-code it). */
export const MAIN_SERVICE = "main";

export type Condition = "service_started" | "service_healthy" | "service_completed_successfully";

export interface HealthCheck {
  /** The argv to exec: CMD's arguments, or ["/bin/sh", "-c", CMD-SHELL's command]. */
  argv: string[];
  intervalMs: number;
  timeoutMs: number;
  retries: number;
  startPeriodMs: number;
  /** The interval inside start_period (compose's start_interval; defaults to interval). */
  startIntervalMs: number;
}

export interface ServiceBuild {
  /** Absolute host path of the build context. */
  context: string;
  /** The Dockerfile's path inside the context. */
  dockerfile: string;
  args: Record<string, string>;
}

export interface ComposeService {
  name: string;
  build: ServiceBuild | null;
  image: string | null;
  environment: Record<string, string>;
  command: string[] | null;
  entrypoint: string[] | null;
  /** null: none declared (the image's HEALTHCHECK, if any, applies); "disabled": NONE or disable. */
  healthcheck: HealthCheck | "disabled" | null;
  dependsOn: { service: string; condition: Condition }[];
  expose: string[];
  workingDir: string | null;
  user: string | null;
}

export interface ComposeProject {
  file: string;
  /** Every service but main. */
  sidecars: ComposeService[];
  /** What the task's file says about main (its build, image and command are ours). */
  main: ComposeService;
  warnings: string[];
}

export class ComposeError extends Error {
  override name = "ComposeError";
}

/** Reads, interpolates and checks the file; `env` is what ${VAR} reads (host env plus the task's). */
export async function loadCompose(
  file: string,
  env: Record<string, string | undefined>,
): Promise<ComposeProject> {
  const shown = `environment/${path.basename(file)}`;
  let doc: unknown;
  try {
    doc = parseYaml(await fs.readFile(file, "utf8"));
  } catch (err) {
    throw new ComposeError(`${shown}: not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  return parseCompose(doc, { file, shown, env });
}

interface ParseContext {
  file: string;
  /** The file as messages name it. */
  shown: string;
  env: Record<string, string | undefined>;
}

const SERVICE_KEYS = new Set([
  "build",
  "image",
  "environment",
  "command",
  "entrypoint",
  "healthcheck",
  "depends_on",
  "expose",
  "working_dir",
  "user",
]);
/** Keys of main the sandbox sets itself; the task's values are not used. */
const MAIN_OURS = new Set(["build", "image", "command"]);
/** Keys of main that apply to it; the rest are named in a warning. */
const MAIN_APPLIED = new Set(["environment", "depends_on", "expose"]);

export function parseCompose(doc: unknown, ctx: ParseContext): ComposeProject {
  const { shown } = ctx;
  if (!isMap(doc)) throw new ComposeError(`${shown}: must be a mapping with a services: table`);
  const tree = interpolateWithContext(doc, ctx);
  const warnings: string[] = [];
  for (const key of Object.keys(tree)) {
    if (key === "services" || key === "version" || key === "name" || key.startsWith("x-")) continue;
    warnings.push(`${shown}: top-level ${key}: is not applied (only services are run)`);
  }
  const services = tree.services;
  if (!isMap(services) || Object.keys(services).length === 0) {
    throw new ComposeError(`${shown}: services: must be a mapping of service names to their settings`);
  }
  const parsed: ComposeService[] = [];
  for (const [name, raw] of Object.entries(services)) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) {
      throw new ComposeError(
        `${shown}: services.${name}: a service name has letters, digits, "_", "." or "-" only`,
      );
    }
    const body = raw === null ? {} : raw;
    if (!isMap(body)) throw new ComposeError(`${shown}: services.${name}: must be a mapping`);
    const isMain = name === MAIN_SERVICE;
    for (const key of Object.keys(body)) {
      if (key.startsWith("x-")) continue;
      if (isMain && MAIN_OURS.has(key)) {
        warnings.push(
          `${shown}: services.main.${key} is not used: the sandbox sets main's ${key} itself (the task's image and the agent's command)`,
        );
      } else if (isMain && !MAIN_APPLIED.has(key)) {
        warnings.push(
          `${shown}: services.main.${key} is not applied to main (only environment, depends_on and expose are)`,
        );
      } else if (!SERVICE_KEYS.has(key)) {
        warnings.push(`${shown}: services.${name}.${key} is not applied (${unsupportedWhy(key)})`);
      }
    }
    parsed.push(parseService(name, body, ctx, isMain, warnings));
  }
  const names = new Set(parsed.map((s) => s.name));
  for (const s of parsed) {
    for (const d of s.dependsOn) {
      if (!names.has(d.service)) {
        throw new ComposeError(
          `${shown}: services.${s.name}.depends_on names ${d.service}, which is not a service of the file`,
        );
      }
      if (d.service === MAIN_SERVICE) {
        throw new ComposeError(
          `${shown}: services.${s.name}.depends_on names main: main starts after its sidecars, so nothing may wait for it`,
        );
      }
    }
  }
  checkAcyclic(parsed, shown);
  const main = parsed.find((s) => s.name === MAIN_SERVICE) ?? emptyService(MAIN_SERVICE);
  const sidecars = parsed.filter((s) => s.name !== MAIN_SERVICE);
  for (const s of sidecars) {
    if (!s.build && !s.image) throw new ComposeError(`${shown}: services.${s.name}: needs build: or image:`);
  }
  return { file: ctx.file, sidecars, main, warnings };
}

function unsupportedWhy(key: string): string {
  if (key === "ports")
    return "services reach each other by name on the trial's network; nothing is published on the host";
  if (key === "volumes")
    return "no volumes or bind mounts are made; copy files in with the service's Dockerfile";
  if (key === "networks" || key === "network_mode") return "every service joins the trial's one network";
  return "the sandbox runs build, image, environment, command, entrypoint, healthcheck, depends_on, expose, working_dir and user";
}

function interpolateWithContext(doc: Record<string, unknown>, ctx: ParseContext): Record<string, unknown> {
  try {
    return interpolateTree(doc, ctx.env, "") as Record<string, unknown>;
  } catch (err) {
    throw new ComposeError(`${ctx.shown}: ${(err as Error).message}`);
  }
}

function emptyService(name: string): ComposeService {
  return {
    name,
    build: null,
    image: null,
    environment: {},
    command: null,
    entrypoint: null,
    healthcheck: null,
    dependsOn: [],
    expose: [],
    workingDir: null,
    user: null,
  };
}

function parseService(
  name: string,
  body: Record<string, unknown>,
  ctx: ParseContext,
  isMain: boolean,
  warnings: string[],
): ComposeService {
  const at = `${ctx.shown}: services.${name}`;
  const s = emptyService(name);
  s.environment = parseEnvironment(body.environment, `${at}.environment`, ctx.env);
  s.dependsOn = parseDependsOn(body.depends_on, `${at}.depends_on`, warnings);
  s.expose = listOf(body.expose, `${at}.expose`).map(String);
  if (isMain) return s;
  s.image = optionalString(body.image, `${at}.image`);
  s.build = parseBuild(body.build, `${at}.build`, ctx);
  s.command = parseArgv(body.command, `${at}.command`);
  s.entrypoint = parseArgv(body.entrypoint, `${at}.entrypoint`);
  s.healthcheck = parseHealthcheck(body.healthcheck, `${at}.healthcheck`);
  s.workingDir = optionalString(body.working_dir, `${at}.working_dir`);
  s.user = body.user === undefined || body.user === null ? null : String(body.user);
  return s;
}

function parseBuild(value: unknown, at: string, ctx: ParseContext): ServiceBuild | null {
  if (value === undefined || value === null) return null;
  const spec = typeof value === "string" ? { context: value } : value;
  if (!isMap(spec)) throw new ComposeError(`${at}: must be a path or a mapping with context:`);
  const environmentDir = path.dirname(ctx.file);
  const contextText = optionalString(spec.context, `${at}.context`) ?? ".";
  if (/^[a-z]+:\/\//i.test(contextText) || contextText.startsWith("git@")) {
    throw new ComposeError(
      `${at}.context: ${contextText} is a remote context; only folders of the task are built — fix: put the service's files under environment/`,
    );
  }
  const context = path.resolve(environmentDir, contextText);
  const rel = path.relative(environmentDir, context);
  if (rel.startsWith("..") || path.isAbsolute(rel)) {
    throw new ComposeError(
      `${at}.context: ${contextText} is outside environment/ — fix: put the service's files under environment/`,
    );
  }
  for (const key of Object.keys(spec)) {
    if (!["context", "dockerfile", "args"].includes(key)) {
      throw new ComposeError(
        `${at}.${key}: is not supported (only context, dockerfile and args) — fix: remove it`,
      );
    }
  }
  return {
    context,
    dockerfile: optionalString(spec.dockerfile, `${at}.dockerfile`) ?? "Dockerfile",
    args: parseEnvironment(spec.args, `${at}.args`, {}),
  };
}

/** A list of NAME=value (NAME alone passes the host's value through) or a map. */
function parseEnvironment(
  value: unknown,
  at: string,
  env: Record<string, string | undefined>,
): Record<string, string> {
  if (value === undefined || value === null) return {};
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== "string")
        throw new ComposeError(`${at}: each item must be a string NAME=value (got ${JSON.stringify(item)})`);
      const eq = item.indexOf("=");
      if (eq < 0) {
        const passed = env[item];
        if (passed !== undefined) out[item] = passed;
      } else out[item.slice(0, eq)] = item.slice(eq + 1);
    }
    return out;
  }
  if (!isMap(value)) throw new ComposeError(`${at}: must be a list of NAME=value or a mapping`);
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) {
      const passed = env[k];
      if (passed !== undefined) out[k] = passed;
    } else if (typeof v === "object")
      throw new ComposeError(`${at}.${k}: must be a string, number or boolean`);
    else out[k] = String(v);
  }
  return out;
}

function parseDependsOn(value: unknown, at: string, warnings: string[]): ComposeService["dependsOn"] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    return value.map((v) => {
      if (typeof v !== "string") throw new ComposeError(`${at}: each item must be a service name`);
      return { service: v, condition: "service_started" as const };
    });
  }
  if (!isMap(value))
    throw new ComposeError(`${at}: must be a list of service names or a mapping of name to { condition }`);
  return Object.entries(value).map(([service, spec]) => {
    for (const key of Object.keys(isMap(spec) ? spec : {})) {
      if (key !== "condition") warnings.push(`${at}.${service}.${key} is not applied (only condition is)`);
    }
    const condition = isMap(spec) ? (spec.condition ?? "service_started") : "service_started";
    if (
      !["service_started", "service_healthy", "service_completed_successfully"].includes(String(condition))
    ) {
      throw new ComposeError(
        `${at}.${service}.condition: ${String(condition)} is not one of service_started, service_healthy, service_completed_successfully`,
      );
    }
    return { service, condition: condition as Condition };
  });
}

function parseHealthcheck(value: unknown, at: string): ComposeService["healthcheck"] {
  if (value === undefined || value === null) return null;
  if (!isMap(value)) throw new ComposeError(`${at}: must be a mapping with test:`);
  if (value.disable === true) return "disabled";
  const test = value.test;
  let argv: string[];
  if (typeof test === "string") argv = ["/bin/sh", "-c", test];
  else if (Array.isArray(test) && test.length > 0 && test.every((t) => typeof t === "string")) {
    const [kind, ...rest] = test as string[];
    if (kind === "NONE") return "disabled";
    if (kind === "CMD" && rest.length > 0) argv = rest;
    else if (kind === "CMD-SHELL" && rest.length === 1) argv = ["/bin/sh", "-c", rest[0] as string];
    else
      throw new ComposeError(
        `${at}.test: must start with "CMD" (then the argv), "CMD-SHELL" (then one command) or be ["NONE"]`,
      );
  } else
    throw new ComposeError(
      `${at}.test: must be a command string or a list ["CMD", ...] / ["CMD-SHELL", "..."]`,
    );
  const interval = duration(value.interval, `${at}.interval`, 30_000);
  return {
    argv,
    intervalMs: interval,
    timeoutMs: duration(value.timeout, `${at}.timeout`, 30_000),
    retries: value.retries === undefined ? 3 : positiveInteger(value.retries, `${at}.retries`),
    startPeriodMs: duration(value.start_period, `${at}.start_period`, 0),
    startIntervalMs: duration(value.start_interval, `${at}.start_interval`, interval),
  };
}

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A compose duration ("2s", "1m30s", "500ms"; a bare number is seconds). */
export function duration(value: unknown, at: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" && value >= 0) return value * 1000;
  const text = String(value).trim();
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) {
    throw new ComposeError(
      `${at}: ${JSON.stringify(value)} is not a duration — fix: write it like 2s, 500ms or 1m30s`,
    );
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * (UNITS[p[2] as string] ?? 0), 0);
}

function positiveInteger(value: unknown, at: string): number {
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  throw new ComposeError(`${at}: must be a whole number above 0 (got ${JSON.stringify(value)})`);
}

/** command/entrypoint: a list, or a string split as a POSIX shell would (compose does the same). */
function parseArgv(value: unknown, at: string): string[] | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === "string") return shellSplit(value, at);
  throw new ComposeError(`${at}: must be a string or a list of strings`);
}

export function shellSplit(text: string, at: string): string[] {
  const out: string[] = [];
  // null between words; "" is an empty word that quotes made ('').
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word = `${word ?? ""}${c}`;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < text.length && '"\\$`'.includes(text[i + 1] as string))
        word = `${word ?? ""}${text[++i]}`;
      else word = `${word ?? ""}${c}`;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < text.length) word = `${word ?? ""}${text[++i]}`;
    else if (/\s/.test(c)) {
      if (word !== null) out.push(word);
      word = null;
    } else word = (word ?? "") + c;
  }
  if (quote) throw new ComposeError(`${at}: an unclosed ${quote} in ${JSON.stringify(text)}`);
  if (word !== null) out.push(word);
  return out;
}

function checkAcyclic(services: ComposeService[], shown: string): void {
  const byName = new Map(services.map((s) => [s.name, s]));
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, trail: string[]) => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      throw new ComposeError(`${shown}: depends_on goes round in a circle: ${[...trail, name].join(" -> ")}`);
    }
    state.set(name, "visiting");
    for (const d of byName.get(name)?.dependsOn ?? []) visit(d.service, [...trail, name]);
    state.set(name, "done");
  };
  for (const s of services) visit(s.name, []);
}

function listOf(value: unknown, at: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ComposeError(`${at}: must be a list`);
  return value;
}

function optionalString(value: unknown, at: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value === "") throw new ComposeError(`${at}: must be a non-empty string`);
  return value;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
