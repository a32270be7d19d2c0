// The package as a user gets it: the tarball `npm pack` made, installed in an empty project, and a
// typed script that does what the docs show. The dependencies come from npm's cache through a
// lockfile pinned to this repository's versions (npm ci --offline), and from the registry only when
// the cache lacks them.
import { execFile, spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { REPO } from "./bench.js";

const exec = promisify(execFile);
const TSC = path.join(REPO, "node_modules/typescript/bin/tsc");

interface Lock {
  packages: Record<string, { dev?: boolean; link?: boolean; [k: string]: unknown }>;
}

export interface ScriptOutput {
  exitCode: number;
  trials: number;
  rewards: (number | null)[];
  rows: number;
  valid: boolean;
  advantages: number;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * README's "From code", run-a-benchmark.md's Evaluation, read-the-results.md's loadJob and
 * export-training-data.md's convertJob and validateFile, in one typed script. The tasks are the
 * package's own examples; the policy is the package's `bench policy scripted` (BASE_URL). The
 * namespace sandbox is named so the check does not depend on a container engine.
 */
const SCRIPT = `import { readFileSync } from "node:fs";
import { convertJob, Evaluation, type EvaluationEvent, loadJob, validateFile } from "benchflow";

const tasks = "node_modules/benchflow/examples/tasks/half-life";
const ends: EvaluationEvent[] = [];
const run = await new Evaluation({
  tasks,
  agent: "bench-agent",
  model: "vllm/scripted",
  trials: 4,
  concurrency: 2,
  jobsDir: "jobs/group",
  sandbox: "namespace",
  policy: { baseUrl: process.env.BASE_URL, captureTokens: true },
  onEvent: (e) => e.type === "rollout-end" && ends.push(e),
}).run();

// @ts-expect-error an option the library does not have is a type error (and refused when run)
void new Evaluation({ tasks, agent: "oracle", trails: 2 });

const job = await loadJob("jobs/group/bench-agent");
const rewards: (number | null)[] = job.trials.map((t) => t.reward).sort((a, b) => (a ?? -1) - (b ?? -1));
const { rows } = await convertJob({
  jobs: "jobs/group/bench-agent",
  out: "train/group.jsonl",
  groupAdvantage: "grpo",
  groupBy: ["task", "agent", "model"],
});
const report = await validateFile("train/group.jsonl", { requireToolCalls: true, expectedRows: rows });
const advantages = readFileSync("train/group.jsonl", "utf8")
  .trim()
  .split("\\n")
  .filter((line) => typeof JSON.parse(line).advantage === "number").length;
console.log(
  JSON.stringify({ exitCode: run.exitCode, trials: job.trials.length, rewards, rows, valid: report.ok, advantages, ends: ends.length }),
);
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2023",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2023"],
    strict: true,
    // The package's own .d.ts files are checked too: a type it names must resolve from what it ships.
    skipLibCheck: false,
    outDir: "out",
    types: ["node"],
    typeRoots: [path.join(REPO, "node_modules/@types")],
  },
  files: ["script.ts"],
};

export class InstalledApp {
  constructor(readonly dir: string) {}

  private bin(): string {
    return path.join(this.dir, "node_modules/.bin/bench");
  }

  /** The installed `bench`, as `npx bench` runs it. */
  bench(args: string[]): Promise<Ran> {
    return ran(exec(this.bin(), args, { cwd: this.dir }));
  }

  /** A snippet as an ES module (or CommonJS) file of the project. */
  async node(code: string, type: "module" | "commonjs" = "module"): Promise<Ran> {
    const file = path.join(this.dir, type === "module" ? "snippet.mjs" : "snippet.cjs");
    await fs.writeFile(file, `${code}\n`);
    return ran(exec(process.execPath, [file], { cwd: this.dir }));
  }

  /**
   * Every ```ts block of the shipped README and docs/, each a module of its own, typechecked against
   * the shipped types. A block without imports continues its page: it gets the page's first imports.
   * `trainer` is the reader's own (connect-a-trainer.md), declared here. Returns tsc's output.
   */
  async typecheckDocs(): Promise<{ blocks: number; errors: string }> {
    const pkgDir = path.join(this.dir, "node_modules/benchflow");
    const pages = ["README.md", ...(await fs.readdir(path.join(pkgDir, "docs"))).map((f) => `docs/${f}`)];
    const check = path.join(this.dir, "docs-check");
    await fs.mkdir(check, { recursive: true });
    const files: string[] = [];
    for (const page of pages.filter((p) => p.endsWith(".md"))) {
      const text = await fs.readFile(path.join(pkgDir, page), "utf8");
      let imports = "";
      for (const [i, m] of [...text.matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
        const code = m[1] ?? "";
        const own = code.match(/^import .*$/gm)?.join("\n") ?? "";
        if (!imports) imports = own;
        const file = `${page.replace(/\W+/g, "-")}-${i + 1}.ts`;
        const preamble = `export {};\n${own ? "" : `${imports}\n`}declare const trainer: { add(record: unknown): void };\n`;
        await fs.writeFile(path.join(check, file), `${preamble}${code}`);
        files.push(`docs-check/${file}`);
      }
    }
    const config = { ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true }, files };
    await fs.writeFile(path.join(this.dir, "tsconfig.docs.json"), JSON.stringify(config, null, 2));
    const tsc = await ran(exec(process.execPath, [TSC, "-p", "tsconfig.docs.json"], { cwd: this.dir }));
    return { blocks: files.length, errors: `${tsc.stdout}${tsc.stderr}`.trim() };
  }

  /** Typechecks the script with tsc, then runs what tsc emitted against the scripted endpoint. */
  async typedScript(): Promise<ScriptOutput> {
    await fs.writeFile(path.join(this.dir, "script.ts"), SCRIPT);
    await fs.writeFile(path.join(this.dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
    const tsc = await ran(exec(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: this.dir }));
    if (tsc.code !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
    const policy = spawn(
      this.bin(),
      [
        "policy",
        "scripted",
        "--script",
        "node_modules/benchflow/examples/policies/half-life-one-wrong.json",
        "--port",
        "0",
      ],
      { cwd: this.dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        let text = "";
        policy.stdout.on("data", (d) => {
          text += d;
          const url = /(http:\/\/\S+\/v1)/.exec(text)?.[1];
          if (url) resolve(url);
        });
        policy.on("exit", (code) => reject(new Error(`bench policy scripted exited ${code}: ${text}`)));
      });
      const env = { ...process.env, BASE_URL: baseUrl };
      const r = await ran(exec(process.execPath, ["out/script.js"], { cwd: this.dir, env }));
      if (r.code !== 0) throw new Error(`the script failed (${r.code}):\n${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "") as ScriptOutput;
    } finally {
      policy.kill("SIGTERM");
    }
  }
}

async function ran(p: Promise<{ stdout: string; stderr: string }>): Promise<Ran> {
  try {
    const { stdout, stderr } = await p;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** An empty project with the tarball installed, its dependencies at this repository's versions. */
export async function installApp(tarball: string, dir: string): Promise<InstalledApp> {
  await fs.mkdir(dir, { recursive: true });
  const spec = `file:${path.relative(dir, tarball)}`;
  const pkg = { name: "app", private: true, type: "module", dependencies: { benchflow: spec } };
  await fs.writeFile(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  const lock = JSON.parse(await fs.readFile(path.join(REPO, "package-lock.json"), "utf8")) as Lock;
  const own = lock.packages[""] ?? {};
  // What a user's install resolves: the package's dependencies, none of its devDependencies.
  const deps = Object.fromEntries(
    Object.entries(lock.packages).filter(([k, v]) => k !== "" && !v.dev && !v.link),
  );
  const appLock = {
    name: "app",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "app", dependencies: pkg.dependencies },
      "node_modules/benchflow": {
        version: own.version,
        resolved: spec,
        license: own.license,
        dependencies: own.dependencies,
        bin: own.bin,
        engines: own.engines,
      },
      ...deps,
    },
  };
  await fs.writeFile(path.join(dir, "package-lock.json"), JSON.stringify(appLock, null, 2));
  const npm = (args: string[]) => ran(exec("npm", [...args, "--no-audit", "--no-fund"], { cwd: dir }));
  let r = await npm(["ci", "--offline"]);
  if (r.code !== 0 && /ENOTCACHED/.test(r.stderr)) r = await npm(["ci", "--prefer-offline"]);
  if (r.code !== 0) throw new Error(`npm ci of ${tarball} failed:\n${r.stderr}`);
  return new InstalledApp(dir);
}
