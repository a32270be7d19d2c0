// After tsc: the plain files under src/ that the code runs by path (a .cjs a sandbox helper starts with
// node, outside our TypeScript build) go to the same place under dist/, since tsc copies only what it
// compiles. Tests, their helpers and fixtures stay out, as in tsconfig.build.json.
import { chmodSync, copyFileSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";

for (const rel of readdirSync("src", { recursive: true })) {
  if (!rel.endsWith(".cjs") || /(^|\/)(testing|fixtures)\//.test(rel) || rel.includes(".test.")) continue;
  const to = path.join("dist", rel);
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(path.join("src", rel), to);
}
chmodSync("dist/cli/main.js", 0o755);
