// What a run shows while it goes. In a real terminal (a pseudo-terminal from script(1)): each running
// rollout's phase, the group filling with its rewards, an ETA and a ticking clock. Elsewhere (a pipe,
// a CI log): each finished rollout once, a warning once, and with -q only the final lines.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { stripVTControlCharacters } from "node:util";
import { bench, REPO, slowHelloTasks, useScratch } from "./testing/bench.js";

const scratch = useScratch("live-view");
const CLI = path.join(REPO, "src/cli/main.ts");
const TSX = path.join(REPO, "node_modules/tsx/dist/loader.mjs");

const quote = (w: string) => `'${w.replaceAll("'", `'"'"'`)}'`;

/** `bench ARGS` in a pseudo-terminal of 40 rows by 160 columns; everything the terminal got. */
function inTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [
    "stty rows 40 cols 160;",
    "exec",
    process.execPath,
    "--import",
    TSX,
    CLI,
    ...args.map(quote),
  ].join(" ");
  const typescript = path.join(scratch(), `typescript-${Date.now()}`);
  const child = spawn("script", ["-qfec", command, typescript], { stdio: ["ignore", "pipe", "pipe"] });
  let screen = "";
  child.stdout.on("data", (d) => {
    screen += d;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, screen })));
}

describe("the live view", () => {
  it("in a terminal: phases, the group's rewards as they land, an ETA and a clock that ticks", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks"), ["sleepy"], 3);
    const jobs = path.join(scratch(), "jobs-tty");
    const { code, screen } = await inTerminal([
      "run",
      tasks,
      "-a",
      "oracle",
      "--sandbox",
      "namespace",
      "--trials",
      "2",
      "--jobs-dir",
      jobs,
    ]);
    assert.equal(code, 0, screen);
    const text = stripVTControlCharacters(screen);
    for (const phase of ["image build / sandbox start", "agent", "verifier"])
      assert.match(text, new RegExp(`trial-0[12]  ${phase} \\d+:\\d\\d`), `phase ${phase}`);
    // The group fills: one reward landed, then both, with the mean so far.
    assert.match(text, /sleepy  1\/2 done · \d running · 0 failed · mean 1\.000 · rewards 1\.0/);
    assert.match(text, /1\/2 rollouts · ETA \d+:\d\d · \d+:\d\d elapsed/);
    // The clock ticked between events: the agent's sleep shows at least two different seconds.
    const ticks = new Set([...text.matchAll(/trial-01 {2}agent (\d+:\d\d)/g)].map((m) => m[1]));
    assert.ok(ticks.size >= 2, `the clock did not tick: ${[...ticks].join(", ")}`);
    // The seed's lines stay on the screen once the view is gone.
    assert.match(text, /trial-01 {2}reward 1\.0/);
    assert.match(text, /trial-02 {2}reward 1\.0/);
  });

  it("not a terminal: each finished rollout once, a warning once; -q only the final lines", async () => {
    const tasks = await slowHelloTasks(path.join(scratch(), "tasks-plain"), ["a", "b"], 0);
    const args = [
      "run",
      tasks,
      "-a",
      "oracle",
      "-m",
      "vllm/unused",
      "--sandbox",
      "namespace",
      "--trials",
      "2",
    ];
    const run = await bench([...args, "--jobs-dir", path.join(scratch(), "jobs-plain")]);
    assert.equal(run.code, 0, run.stderr);
    const out = `${run.stdout}${run.stderr}`;
    // Two tasks by two repeats: four result lines, each once, nothing else about a rollout.
    for (const repeat of ["trial-01", "trial-02"])
      for (const task of ["a", "b"]) {
        const lines = out.split("\n").filter((l) => l.startsWith(`${repeat}  ${task}  `));
        assert.equal(lines.length, 1, `${repeat} ${task}:\n${out}`);
      }
    assert.equal(out.match(/calls no model/g)?.length, 1, out);
    const quiet = await bench([...args, "--jobs-dir", path.join(scratch(), "jobs-quiet"), "-q"]);
    assert.equal(quiet.code, 0, quiet.stderr);
    // -q: only errors and the final lines: no progress, no note, no warning.
    assert.doesNotMatch(quiet.stderr, /^sandbox:|^note:|^warning:|bench: the run is in/m);
    assert.equal(quiet.stdout.trim().split("\n").length, 5, quiet.stdout);
  });
});
