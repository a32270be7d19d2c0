// Reads one config field at a time: a wrong value becomes a problem naming the field and the fix,
// and the default stands in for it so that every other field is still checked.
import { isTable } from "./keys.js";
import type { TaskLayout } from "./source.js";

/** How a sandbox (or one phase in it) reaches the network: the values of network_mode. */
export type NetworkMode = "no-network" | "public" | "allowlist";

const NETWORK_MODES: readonly NetworkMode[] = ["no-network", "public", "allowlist"];

export class FieldReader {
  problems: string[] = [];
  warnings: string[] = [];
  constructor(private readonly file: string) {}

  problem(field: string, what: string, fix: string): void {
    this.problems.push(`${this.file}: ${field} ${what}; ${fix}`);
  }

  table(value: unknown, field: string): Record<string, unknown> {
    if (value === undefined || value === null) return {};
    if (isTable(value)) return value;
    this.problem(
      field,
      `must be a table of settings (got ${show(value)})`,
      `write it as [${field}] with key = value lines`,
    );
    return {};
  }

  section(
    raw: Record<string, unknown>,
    name: string,
    legacy: string,
  ): { table: Record<string, unknown>; name: string } {
    if (raw[name] !== undefined && raw[legacy] !== undefined && !isShorthand(raw[name])) {
      this.problem(
        name,
        `and ${legacy} are both set (${legacy} is the legacy spelling of ${name})`,
        `keep only ${name}`,
      );
    }
    const used =
      raw[name] !== undefined && !isShorthand(raw[name]) ? name : raw[legacy] !== undefined ? legacy : name;
    const value = isShorthand(raw[used]) ? undefined : raw[used];
    return { table: this.table(value, used), name: used };
  }

  shorthand(raw: Record<string, unknown>, key: string, folder: string): void {
    const value = raw[key];
    if (typeof value !== "string") return;
    if (value.replace(/^\.\//, "").replace(/\/+$/, "") !== folder) {
      this.problem(
        key,
        `shorthand must name the ${folder}/ folder (got ${show(value)})`,
        `write ${key}: ${folder}/`,
      );
    }
  }

  schemaVersion(value: unknown, field: string): void {
    if (value === undefined) return;
    const text = typeof value === "number" ? String(value) : value;
    if (typeof text !== "string" || !/^\d+(\.\d+)*$/.test(text)) {
      this.problem(field, `must be a version like "1.3" (got ${show(value)})`, `write ${field} = "1.3"`);
    } else if (text.split(".")[0] !== "1") {
      this.problem(
        field,
        `${text} is not supported (only schema major version 1 is)`,
        `write ${field} = "1.3"`,
      );
    }
  }

  seconds(value: unknown, field: string, fallback: number | null): number | null {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      const example = fallback ?? 600;
      this.problem(
        field,
        `must be a number of seconds greater than 0 (got ${show(value)})`,
        `write ${leaf(field)} = ${example}`,
      );
      return fallback;
    }
    return value;
  }

  positive(value: unknown, field: string, fallback: number, integer: boolean): number {
    if (value === undefined || value === null) return fallback;
    if (
      typeof value !== "number" ||
      !Number.isFinite(value) ||
      value <= 0 ||
      (integer && !Number.isInteger(value))
    ) {
      const kind = integer ? "a whole number" : "a number";
      this.problem(
        field,
        `must be ${kind} greater than 0 (got ${show(value)})`,
        `write ${leaf(field)} = ${fallback}`,
      );
      return fallback;
    }
    return value;
  }

  count(value: unknown, field: string): number {
    if (value === undefined || value === null) return 0;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      this.problem(
        field,
        `must be a whole number, 0 or more (got ${show(value)})`,
        `write ${leaf(field)} = 0`,
      );
      return 0;
    }
    return value;
  }

  size(
    table: Record<string, unknown>,
    section: string,
    base: "memory" | "storage",
    fallback: number,
  ): number {
    const mb = this.positive(table[`${base}_mb`], `${section}.${base}_mb`, fallback, true);
    const legacy = table[base];
    if (legacy === undefined || legacy === null) return mb;
    const parsed = typeof legacy === "string" ? parseSizeMb(legacy) : null;
    if (parsed === null) {
      this.problem(
        `${section}.${base}`,
        `must be a size like "2G" or "512M" (got ${show(legacy)})`,
        `write ${base}_mb = ${fallback} instead`,
      );
      return mb;
    }
    this.warnings.push(`${this.file}: ${section}.${base} is deprecated; write ${base}_mb = ${parsed}`);
    return parsed;
  }

  text(value: unknown, field: string): string | null {
    if (value === undefined || value === null) return null;
    if (typeof value !== "string" || value.trim() === "") {
      this.problem(
        field,
        `must be a non-empty string (got ${show(value)})`,
        `write ${leaf(field)} = "..." or remove it`,
      );
      return null;
    }
    return value;
  }

  user(value: unknown, field: string): string | null {
    if (typeof value === "number" && Number.isInteger(value) && value >= 0) return String(value);
    return this.text(value, field);
  }

  workdir(value: unknown, field: string): string | null {
    const dir = this.text(value, field);
    if (dir !== null && !dir.startsWith("/")) {
      this.problem(field, `must be an absolute path (got ${show(dir)})`, `write ${leaf(field)} = "/app"`);
      return null;
    }
    return dir;
  }

  strings(value: unknown, field: string): string[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
      this.problem(
        field,
        `must be a list of strings (got ${show(value)})`,
        `write ${leaf(field)} = ["example.com"]`,
      );
      return [];
    }
    return [...value];
  }

  env(value: unknown, field: string): Record<string, string> {
    if (value === undefined || value === null) return {};
    if (!isTable(value)) {
      this.problem(
        field,
        `must be a table of NAME = "value" (got ${show(value)})`,
        `write ${leaf(field)} = { NAME = "value" }`,
      );
      return {};
    }
    const env: Record<string, string> = {};
    for (const [name, v] of Object.entries(value)) {
      if (typeof v === "string") env[name] = v;
      else if (typeof v === "number" || typeof v === "boolean") env[name] = String(v);
      else this.problem(`${field}.${name}`, `must be a string (got ${show(v)})`, `write ${name} = "value"`);
    }
    return env;
  }

  rewardRange(value: unknown, field: string): [number, number] {
    if (value === undefined || value === null) return [0, 1];
    const ok =
      Array.isArray(value) &&
      value.length === 2 &&
      value.every((v) => typeof v === "number" && Number.isFinite(v));
    if (!ok) {
      this.problem(
        field,
        `must be two numbers [low, high] (got ${show(value)})`,
        "write reward_range = [0, 1]",
      );
      return [0, 1];
    }
    const [lo, hi] = value as [number, number];
    if (lo > 0 || hi < 1 || lo >= hi) {
      this.problem(
        field,
        `may only widen [0, 1] (got [${lo}, ${hi}])`,
        "use a low <= 0 and a high >= 1, e.g. [-1, 1]",
      );
      return [0, 1];
    }
    return [lo, hi];
  }

  networkMode(value: unknown, field: string): NetworkMode | null {
    if (value === undefined || value === null) return null;
    if (!NETWORK_MODES.includes(value as NetworkMode)) {
      this.problem(
        field,
        `must be one of ${NETWORK_MODES.join(", ")} (got ${show(value)})`,
        `write ${leaf(field)} = "no-network"`,
      );
      return null;
    }
    return value as NetworkMode;
  }

  /**
   * The baseline network. Both harnesses default to "public". The legacy allow_internet maps to
   * public / no-network only where network_mode is unset (Harbor); the task.md layout also refuses
   * allow_internet = false next to a mode that is not no-network (upstream BenchFlow). Allowlists
   * are refused: neither sandbox filters egress by host, and running one as public would be wrong.
   */
  sandboxNetwork(table: Record<string, unknown>, section: string, layout: TaskLayout): NetworkMode {
    const internet = table.allow_internet;
    if (internet !== undefined && typeof internet !== "boolean") {
      this.problem(
        `${section}.allow_internet`,
        `must be true or false (got ${show(internet)})`,
        'or write network_mode = "public"',
      );
    }
    const explicit = this.networkMode(table.network_mode, `${section}.network_mode`);
    if (layout === "native" && internet === false && explicit !== null && explicit !== "no-network") {
      this.problem(
        `${section}.allow_internet`,
        `= false contradicts network_mode = "${explicit}"`,
        "drop allow_internet (it is deprecated) and keep network_mode",
      );
    }
    const hosts = table.allowed_hosts !== undefined && table.allowed_hosts !== null;
    const mode = explicit ?? (hosts ? "allowlist" : internet === false ? "no-network" : "public");
    if (mode === "allowlist") this.refuseAllowlist(section, hosts && explicit === null);
    else this.strayHosts(table, section, mode);
    return mode;
  }

  /** [agent] / [verifier] network_mode: null when the phase keeps the baseline. */
  phaseNetwork(table: Record<string, unknown>, section: string): NetworkMode | null {
    const explicit = this.networkMode(table.network_mode, `${section}.network_mode`);
    const hosts = table.allowed_hosts !== undefined && table.allowed_hosts !== null;
    const mode = explicit ?? (hosts ? "allowlist" : null);
    if (mode === "allowlist") this.refuseAllowlist(section, hosts && explicit === null);
    else if (mode !== null) this.strayHosts(table, section, mode);
    return mode;
  }

  private strayHosts(table: Record<string, unknown>, section: string, mode: NetworkMode): void {
    if (Array.isArray(table.allowed_hosts) && table.allowed_hosts.length > 0) {
      this.problem(
        `${section}.allowed_hosts`,
        `is only valid with network_mode = "allowlist" (got "${mode}")`,
        "drop allowed_hosts",
      );
    }
  }

  private refuseAllowlist(section: string, impliedByHosts: boolean): void {
    this.problem(
      impliedByHosts ? `${section}.allowed_hosts` : `${section}.network_mode`,
      `${impliedByHosts ? "asks for" : '= "allowlist" is'} an allowlist network, which this runner cannot enforce (neither sandbox filters egress by host)`,
      `use network_mode = "public" or "no-network" in ${section} and drop allowed_hosts`,
    );
  }

  metadata(value: unknown): Record<string, unknown> {
    if (value !== undefined && value !== null) {
      this.problem(
        "metadata",
        `must be a table (got ${show(value)})`,
        "write [metadata] with key = value lines",
      );
    }
    return {};
  }
}

function isShorthand(value: unknown): boolean {
  return typeof value === "string";
}

function leaf(field: string): string {
  return field.slice(field.lastIndexOf(".") + 1);
}

export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`;
  if (isTable(value)) return "a table";
  return String(value);
}

/** Harbor's size strings: "2G", "512M", "1024K" (optionally "Gi"/"GB"), in MB. */
export function parseSizeMb(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:I?B)?\s*$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] as string).toUpperCase();
  const mb = unit === "K" ? n / 1024 : unit === "M" ? n : unit === "G" ? n * 1024 : n * 1024 * 1024;
  return Math.floor(mb) > 0 ? Math.floor(mb) : null;
}
