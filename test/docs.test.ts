// Every shell block of README.md and docs/ runs as printed, on a fresh clone, with `bench` on the PATH
// the way the README says to get it (`npm install`, then `npm link`), and with none of our variables
// set: what a new user types is what is tested. Each page runs in a clone of its own, its blocks in
// order, so a page that needs another page's files fails here as it would for a reader.
//
// Page conventions (README.md, "Develop", says the same):
// - a block marked `<!-- docs-test: skip (REASON) -->` on the line above is not run; REASON is printed
//   (an external model, a GPU, a real cluster, the whole test suite); a block that starts with `#!`
//   is a script file's listing, not commands;
// - a plain ``` block right after a shell block is that block's output: compared with what it
//   printed, after hex names, times, ports and temporary paths are normalised; `...` stands for any lines.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { stripVTControlCharacters } from "node:util";
import { REPO, tempDir } from "./testing/bench.js";

interface Block {
  page: string;
  line: number;
  code: string;
  skip: string | null;
  output: string | null;
}

const SHELL = new Set(["bash", "sh", "shell"]);

function blocksOf(page: string, text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && lines[end] !== "```") end++;
    const body = lines.slice(start + 1, end).join("\n");
    i = end;
    if (!SHELL.has(open[1] as string)) continue;
    const marker = /^<!-- docs-test: skip \((.+)\) -->$/.exec((lines[start - 1] ?? "").trim());
    // A script file's listing (an entrypoint, a hook), not commands to type.
    const listing = body.startsWith("#!") ? "a script file's listing, not commands to type" : null;
    // The output block: the next fence after blank lines only.
    let next = end + 1;
    while (next < lines.length && (lines[next] as string).trim() === "") next++;
    let output: string | null = null;
    if (lines[next] === "```") {
      let close = next + 1;
      while (close < lines.length && lines[close] !== "```") close++;
      output = lines.slice(next + 1, close).join("\n");
    }
    blocks.push({
      page,
      line: start + 1,
      code: body,
      skip: marker ? (marker[1] as string) : listing,
      output,
    });
  }
  return blocks;
}

/** What differs between two honest runs: hex names, durations, clock times, ports, absolute paths. */
function normalise(text: string): string {
  return (
    stripVTControlCharacters(text)
      // Absolute paths (the page's /home/me/..., the test's scratch folder), not URLs' paths.
      .replace(/(?<![\w.:/])\/(?:[\w.@+-]+\/)*[\w.@+-]+/g, "<path>")
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?/g, "<time>")
      // A job's default name is its start time.
      .replace(/\d{4}-\d\d-\d\d__\d\d-\d\d-\d\d/g, "<time>")
      .replace(/\b\d+ bytes\b/g, "<n> bytes")
      // Hex names, also after a rollout's `__` (a word character, so no \b there).
      .replace(/(?<![0-9A-Za-z])[0-9a-f]{8,}(?![0-9A-Za-z])/g, "<hex>")
      .replace(/\b\d+(\.\d+)?\s?(ms|s|min)\b/g, "<dur>")
      .replace(/:\d{2,5}\b/g, ":<port>")
      .split("\n")
      // Columns padded to their widest cell move with a number's width: spaces count as one.
      .map((l) => l.trimEnd().replace(/ {2,}/g, "  "))
      .join("\n")
      .trim()
  );
}

/** Expected lines in order; a `...` line stands for any number of lines. */
function outputMatches(expected: string, actual: string): boolean {
  const want = normalise(expected).split("\n");
  const got = normalise(actual).split("\n");
  const match = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length;
    if (want[w] === "...") {
      for (let k = g; k <= got.length; k++) if (match(w + 1, k)) return true;
      return false;
    }
    return g < got.length && got[g] === want[w] && match(w + 1, g + 1);
  };
  return match(0, 0);
}

async function pages(): Promise<string[]> {
  const docs = (await fs.readdir(path.join(REPO, "docs"))).filter((f) => f.endsWith(".md")).sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/** The environment a new user has: the machine's, without any variable of ours. */
function userEnv(prefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("BENCHFLOW_") && !k.startsWith("NODE_TEST") && k !== "NODE_OPTIONS") env[k] = v;
  // `npm link` writes into npm's global prefix: a temporary one, so the test leaves the machine as it was.
  env.npm_config_prefix = prefix;
  env.PATH = `${path.join(prefix, "bin")}:${process.env.PATH}`;
  return env;
}

/**
 * Runs a block in its own process group and ends the group when bash exits: a block that fails
 * before its `kill %1` leaves its background server behind, which would hold the output open.
 */
function runBlock(
  code: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", code], { cwd, env, detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const endGroup = () => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  // A guard against a hang, not a time limit on the block.
  const guard = setTimeout(endGroup, 600_000);
  let status: number | null = null;
  child.on("exit", (code) => {
    status = code;
    clearTimeout(guard);
    endGroup();
  });
  return new Promise((resolve) => child.on("close", () => resolve({ status, stdout, stderr })));
}

const ALL = await pages();
const BLOCKS = (
  await Promise.all(ALL.map(async (p) => blocksOf(p, await fs.readFile(path.join(REPO, p), "utf8"))))
).flat();

describe("every shell block of the README and docs/, run as printed on a fresh clone", () => {
  let scratch = "";
  let base = "";
  let env: NodeJS.ProcessEnv = {};
  before(async () => {
    scratch = await tempDir("docs");
    base = path.join(scratch, "clone");
    env = userEnv(path.join(scratch, "npm-global"));
    execFileSync("git", ["clone", "-q", REPO, base]);
    // The README's install and link, for real, in the fresh clone (npm's cache makes them quick).
    for (const command of [
      ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
      ["npm", "link", "--no-audit", "--no-fund", "--loglevel=error"],
    ])
      execFileSync(command[0] as string, command.slice(1), {
        cwd: base,
        env,
        stdio: "pipe",
        timeout: 600_000,
      });
  });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  it("compares outputs: what differs only in names and times matches, a changed line does not", () => {
    const page = "...\nrun: jobs/a/half-life__0d6bcf6f  0.5s\nmean reward 1.000";
    assert.ok(outputMatches(page, "sandbox: x\nrun: jobs/a/half-life__9f8e7d6c  12.1s\nmean reward 1.000"));
    assert.ok(!outputMatches(page, "run: jobs/a/half-life__9f8e7d6c  12.1s\nmean reward 0.667"));
    assert.ok(!outputMatches(page, "run: jobs/a/half-life__9f8e7d6c  12.1s"), "a missing line fails");
  });

  it("finds the shell blocks of every page", () => {
    assert.ok(BLOCKS.length >= 15, `only ${BLOCKS.length} blocks`);
    const install = BLOCKS.find((b) => b.page === "README.md" && /npm link/.test(b.code));
    assert.ok(install, "the README says how to put bench on the PATH (npm link)");
  });

  for (const page of ALL) {
    const blocks = BLOCKS.filter((b) => b.page === page);
    if (blocks.length === 0) continue;
    describe(page, () => {
      let cwd = "";
      before(async () => {
        // The README's quick start goes on in the clone it installed; every other page gets a fresh one.
        if (page === "README.md") {
          cwd = base;
          return;
        }
        cwd = path.join(scratch, page.replace(/[/.]/g, "_"));
        execFileSync("git", ["clone", "-q", "--shared", base, cwd]);
      });
      for (const block of blocks) {
        const name = `${page}:${block.line}`;
        // The README's own install block ran in before(), once, in the fresh clone.
        const installBlock = page === "README.md" && /^npm link/m.test(block.code);
        it(name, {
          skip: block.skip ?? (installBlock ? "the install itself: run once, above" : false),
        }, async () => {
          const run = await runBlock(block.code, cwd, env);
          const shown = `${name}:\n${block.code}\n--- exit ${run.status}\n${run.stdout}\n--- stderr\n${run.stderr}`;
          assert.equal(run.status, 0, shown);
          if (block.output !== null)
            assert.ok(
              outputMatches(block.output, `${run.stdout}`),
              `${name}: the output differs from the page's.\n--- page\n${normalise(block.output)}\n--- printed\n${normalise(run.stdout)}`,
            );
        });
      }
    });
  }
});
