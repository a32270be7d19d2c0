#!/usr/bin/env node
// The entry a SLURM job starts on its node: `node trial-entry.js SPEC.json`. Not the whole CLI
// (commander and every command's code), only a rollout's: Node's start is paid once per rollout.
import { runRolloutOnNode } from "../job/slurm/node.js";

const spec = process.argv[2];
if (!spec) {
  process.stderr.write(
    "bench _trial: usage: trial-entry SPEC.json (written by bench run --executor slurm)\n",
  );
  process.exit(2);
}
runRolloutOnNode(spec).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench _trial: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
