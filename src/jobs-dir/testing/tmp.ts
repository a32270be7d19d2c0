// Temp folders for the train tests, removed when the test file ends.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";

const roots: string[] = [];
let registered = false;

export function tmp(prefix = "bf-train-"): string {
  if (!registered) {
    registered = true;
    after(() => {
      for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
    });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(dir);
  return dir;
}
