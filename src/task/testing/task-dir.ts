// Test helper: writes a task folder from a map of relative paths to contents, in a temp dir.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";

export const MINIMAL_SPLIT_TASK: Record<string, string> = {
  "task.toml": "[verifier]\ntimeout_sec = 30\n",
  "instruction.md": "Write hello to /app/hello.txt.\n",
  "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
  "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
  "solution/solve.sh": "#!/bin/bash\necho hello > /app/hello.txt\n",
};

export async function tempRoot(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), "bf-task-"));
}

/** Writes `files` under `root/name` and returns that folder; a null content makes an empty folder. */
export async function writeTask(
  root: string,
  name: string,
  files: Record<string, string | null>,
): Promise<string> {
  const dir = path.join(root, name);
  await fs.mkdir(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    if (content === null) {
      await fs.mkdir(file, { recursive: true });
      continue;
    }
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, content);
  }
  return dir;
}

export async function removeRoot(root: string): Promise<void> {
  await fs.rm(root, { recursive: true, force: true });
}
