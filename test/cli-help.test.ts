// Every command's help, walked from `bench --help` down: the same sections everywhere (Examples,
// Environment where the command reads variables, Exit codes), required options marked, defaults
// stated, no `(default: [])` noise.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { bench, REPO } from "./testing/bench.js";

/** The subcommands a help page lists under "Commands:" (without commander's own `help`). */
function subcommands(help: string): string[] {
  const block = /\nCommands:\n([\s\S]*?)(\n\n|$)/.exec(help)?.[1] ?? "";
  return block
    .split("\n")
    .map((l) => /^ {2}(\S+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined && n !== "help");
}

async function helpOf(path: string[]): Promise<string> {
  const run = await bench([...path, "--help"]);
  assert.equal(run.code, 0, `bench ${path.join(" ")} --help: ${run.stderr}`);
  return run.stdout;
}

let walked: Promise<Map<string, string>> | null = null;

/** Every command path under the program, with its help text (walked once per test file). */
function allHelp(): Promise<Map<string, string>> {
  walked ??= walkHelp();
  return walked;
}

async function walkHelp(): Promise<Map<string, string>> {
  const pages = new Map<string, string>();
  let level: string[][] = [[]];
  while (level.length > 0) {
    const helps = await Promise.all(level.map(helpOf));
    const next: string[][] = [];
    level.forEach((p, i) => {
      const help = helps[i] as string;
      pages.set(["bench", ...p].join(" "), help);
      for (const sub of subcommands(help)) next.push([...p, sub]);
    });
    level = next;
  }
  return pages;
}

// What each command reads from the environment, and must say so.
const READS: Record<string, string[]> = {
  "bench run": [
    "BENCHFLOW_SANDBOX",
    "DOCKER_HOST",
    "BENCHFLOW_PROVIDER_BASE_URL",
    "BENCHFLOW_PROVIDER_API_KEY",
  ],
  "bench doctor": ["DOCKER_HOST"],
  "bench build": ["DOCKER_HOST"],
  "bench tasks check": ["BENCHFLOW_TASK_TOML_ALLOW_UNKNOWN_KEYS"],
  "bench train convert": ["HF_HUB_CACHE"],
};

const REQUIRED: Record<string, string[]> = {
  "bench run": ["-a, --agent <agent>"],
  "bench train convert": ["-o, --out <file>"],
  "bench policy scripted": ["--script <file>"],
  "bench train run sft": ["--config <file>"],
};

/** The help's line for an option, with its wrapped continuation lines. */
function optionText(help: string, flags: string): string {
  const lines = help.split("\n");
  const i = lines.findIndex((l) => l.trimStart().startsWith(flags));
  assert.ok(i >= 0, `no ${flags} in help`);
  const rest = lines.slice(i + 1);
  const end = rest.findIndex((l) => !/^ {10,}\S/.test(l));
  return [lines[i], ...rest.slice(0, end === -1 ? 0 : end)].join(" ").replace(/\s+/g, " ");
}

/** An example as argv: quoted words kept whole, a trailing `# comment` and leading VAR=value dropped. */
function exampleArgv(line: string): string[] {
  const code = line.replace(/\s+#\s.*$/, "");
  const words = (code.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((t) => t.replace(/^(['"])(.*)\1$/, "$2"));
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) words.shift();
  return words;
}

/** The flags a help page's Options list offers (short and long forms). */
function offeredFlags(help: string): Set<string> {
  const block = /\nOptions:\n([\s\S]*?)(\n\n|$)/.exec(help)?.[1] ?? "";
  const flags = new Set<string>();
  for (const line of block.split("\n")) {
    const head = /^ {2}(-[^ ].*?)(?: {2,}|$)/.exec(line)?.[1] ?? "";
    for (const f of head.matchAll(/(?:^|[ ,])(--?[\w-]+)/g)) flags.add(f[1] as string);
  }
  return flags;
}

/** The flags a help page marks (required). */
function requiredFlags(help: string): string[] {
  const block = /\nOptions:\n([\s\S]*?)(\n\n|$)/.exec(help)?.[1] ?? "";
  const entries = block.split(/\n(?= {2}-)/);
  return entries
    .filter((e) => /\(required\)/.test(e.replace(/\s+/g, " ")))
    .map((e) =>
      [...(/^ {2}(-[^ ].*?)(?: {2,}|$)/m.exec(e)?.[1] ?? "").matchAll(/--?[\w-]+/g)].map((m) => m[0]),
    )
    .map((forms) => forms.join("|"));
}

describe("bench --help, every command", () => {
  it("has Examples, Exit codes (2 among them), Environment where it reads variables, and no empty defaults", async () => {
    const pages = await allHelp();
    for (const cmd of [
      "bench",
      "bench run",
      "bench train convert",
      "bench train run sft",
      "bench tasks check",
    ])
      assert.ok(pages.has(cmd), `walked ${cmd}`);
    assert.ok(pages.size >= 14, `walked ${[...pages.keys()].join(", ")}`);
    for (const [cmd, help] of pages) {
      const examples = /\nExamples:\n((?: {2}\$ .*\n)+)/.exec(help);
      assert.ok(examples, `${cmd}: no Examples section`);
      assert.ok(examples[1]?.includes(`$ npx ${cmd}`), `${cmd}: an example of the command itself`);
      const codes = /\nExit codes:\n((?: {2}\S+ +.*\n(?: {6,}.*\n)*)+)/.exec(help);
      assert.ok(codes, `${cmd}: no Exit codes section`);
      assert.match(
        codes[1] ?? "",
        /^ {2}2 +bad input|^ {2}2 +an unknown flag/m,
        `${cmd}: exit 2 for bad input`,
      );
      assert.doesNotMatch(help, /\(default: (\[\]|\{\})\)/, `${cmd}: empty default shown`);
      for (const name of READS[cmd] ?? []) {
        const env = /\nEnvironment:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? "";
        assert.match(env, new RegExp(`^ {2}${name} `, "m"), `${cmd}: Environment names ${name}`);
      }
      for (const flags of REQUIRED[cmd] ?? [])
        assert.match(optionText(help, flags), /\(required\)/, `${cmd}: ${flags} marked required`);
    }
  });

  it("every example names a command there is, only flags that command offers, its required ones, and paths in the repository", async () => {
    const pages = await allHelp();
    let checked = 0;
    for (const [page, help] of pages) {
      const block = /\nExamples:\n((?: {2}\$ .*\n)+)/.exec(help)?.[1] ?? "";
      for (const line of block.split("\n").filter(Boolean)) {
        const argv = exampleArgv(line.replace(/^ {2}\$ /, ""));
        const where = `${page} --help, example "${line.trim()}"`;
        assert.deepEqual(argv.slice(0, 2), ["npx", "bench"], `${where}: runs bench as the README says`);
        // The longest command path the example starts with; what follows is its arguments.
        let cmd = "bench";
        let rest = argv.slice(2);
        while (rest.length > 0 && pages.has(`${cmd} ${rest[0]}`)) {
          cmd = `${cmd} ${rest[0]}`;
          rest = rest.slice(1);
        }
        const own = pages.get(cmd) as string;
        const offered = offeredFlags(own);
        for (const token of rest.filter((t) => /^--?[a-zA-Z]/.test(t))) {
          const flag = token.split("=")[0] as string;
          assert.ok(
            offered.has(flag),
            `${where}: ${cmd} has no ${flag} (it offers ${[...offered].join(" ")})`,
          );
        }
        if (!rest.includes("--help"))
          for (const forms of requiredFlags(own))
            assert.ok(
              forms.split("|").some((f) => rest.includes(f)),
              `${where}: ${cmd} requires ${forms}`,
            );
        for (const p of rest.filter((t) => t.startsWith("examples/")))
          assert.ok(existsSync(path.join(REPO, p)), `${where}: ${p} is not in the repository`);
        checked++;
      }
    }
    assert.ok(checked >= 30, `checked ${checked} examples`);
  });

  it("states the defaults the library computes: --job-name, --sandbox, --max-concurrent-trials", async () => {
    const help = await helpOf(["run"]);
    assert.match(
      optionText(help, "--job-name"),
      /\(default: the start time, e\.g\. \d{4}-\d\d-\d\d__\d\d-\d\d-\d\d/,
    );
    assert.match(optionText(help, "--sandbox"), /default: \$BENCHFLOW_SANDBOX, else auto/);
    assert.match(optionText(help, "--max-concurrent-trials"), /default: max\(-j, 4 x cores\)/);
    assert.match(optionText(help, "--include"), /repeatable\)$/, "no default after a repeatable flag");
  });

  it("no command is a usage error (2); help read by a reader that leaves (| head) is no crash", async () => {
    const none = await bench([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^Usage: bench /);
    const tsx = path.join(REPO, "node_modules/tsx/dist/esm/index.mjs");
    const main = path.join(REPO, "src/cli/main.ts");
    const piped = spawnSync(
      "bash",
      ["-c", `"${process.execPath}" --import "${tsx}" "${main}" help run | head -1; exit \${PIPESTATUS[0]}`],
      { encoding: "utf8" },
    );
    assert.equal(piped.stdout, "Usage: bench run [options] <task-or-dir>\n");
    assert.equal(piped.status, 0, piped.stderr);
    assert.doesNotMatch(piped.stderr, /EPIPE|\n\s+at /);
  });
});
