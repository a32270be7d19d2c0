// Harbor's `artifacts`: files or folders of the sandbox the rollout keeps after the agent, for people
// and for graders that run later. Entries are a path, or {source, destination, exclude}.
import type { FieldReader } from "./config-reader.js";
import { isTable } from "./keys.js";

export interface ArtifactSpec {
  /** Absolute path inside the sandbox. */
  source: string;
  /** Where it lands under the rollout's artifacts/ folder (relative); default: the source's path. */
  destination: string;
  /** Names (globs) left out when the source is a folder. */
  exclude: string[];
}

export function readArtifacts(r: FieldReader, value: unknown, field = "artifacts"): ArtifactSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    r.problem(field, "must be a list", `write ${field} = ["/app/output.txt"]`);
    return [];
  }
  const out: ArtifactSpec[] = [];
  value.forEach((entry, i) => {
    const at = `${field}[${i}]`;
    const table: Record<string, unknown> = isTable(entry) ? entry : { source: entry };
    if (isTable(entry) && entry.service !== undefined && entry.service !== "main") {
      r.problem(`${at}.service`, "names a sidecar; only artifacts of main are collected", "remove service");
      return;
    }
    const source = table.source;
    if (typeof source !== "string" || !source.startsWith("/")) {
      r.problem(at, "needs an absolute source path inside the sandbox", `write { source = "/app/out.txt" }`);
      return;
    }
    const destination = table.destination ?? source.replace(/^\/+/, "");
    if (typeof destination !== "string" || destination.split("/").includes("..") || destination === "") {
      r.problem(`${at}.destination`, "must be a relative path without ..", 'write destination = "out.txt"');
      return;
    }
    const exclude = table.exclude ?? [];
    if (!Array.isArray(exclude) || !exclude.every((e) => typeof e === "string")) {
      r.problem(`${at}.exclude`, "must be a list of names or globs", 'write exclude = ["*.pyc"]');
      return;
    }
    out.push({ source, destination: destination.replace(/^\/+/, ""), exclude });
  });
  return out;
}
