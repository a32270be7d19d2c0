// `bench train ...` as its own process, in a folder, for the tests of the CLI's flags.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** `bench train` alone, without the rest of the command (node --import tsx TRAIN_CLI convert ...). */
export const TRAIN_CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "train-cli.ts");
const CLI = TRAIN_CLI;
const TSX = fileURLToPath(import.meta.resolve("tsx"));

export function benchTrain(
  cwd: string,
  ...args: string[]
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", TSX, CLI, ...args], { cwd, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function readRows(file: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}
