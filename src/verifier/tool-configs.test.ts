// The build-file lists hardening runs on come from one table (tool-configs.ts): each ecosystem our
// real tasks use is there with the files its tools document, and the generated bash (is_build,
// is_new_build in hardening's script) answers for exactly those names.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { hardenScript } from "./harden-script.js";
import { BUILD_NAMES, NEW_BUILD_NAMES, TOOL_CONFIGS } from "./tool-configs.js";

/** Files each tool's own documentation names as read from the project or working directory. */
const DOCUMENTED: Record<string, string[]> = {
  python: ["pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "conftest.py", "setup.py"],
  make: ["Makefile", "makefile", "GNUmakefile"],
  node: ["package.json", ".npmrc"],
  go: ["go.mod", "go.work"],
  rust: ["Cargo.toml", "build.rs"],
  cmake: ["CMakeLists.txt", "CMakePresets.json"],
  ruby: ["Gemfile", "Rakefile"],
  java: ["pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle"],
};

/** Runs the script's generated `is_build`/`is_new_build` on each name: the ones it says yes to. */
function answers(fn: string, names: string[]): string[] {
  const prelude = hardenScript()
    .split("\n")
    .filter((l) => l.startsWith("is_build()") || l.startsWith("is_new_build()"))
    .join("\n");
  const out = execFileSync("bash", [
    "-c",
    `${prelude}\nfor f in "$@"; do ${fn} "/app/x/$f" && echo "$f"; done; true`,
    "_",
    ...names,
  ]);
  return out.toString().split("\n").filter(Boolean);
}

describe("tool-configs: one table of what each tool reads", () => {
  it("covers Python, Make, Node, Go, Rust, CMake, Ruby and Java with their documented files", () => {
    for (const [ecosystem, files] of Object.entries(DOCUMENTED)) {
      const listed = TOOL_CONFIGS.filter((t) => t.ecosystem === ecosystem).flatMap((t) => t.files);
      for (const f of files) assert.ok(listed.includes(f), `${ecosystem}: ${f} is not in the table`);
    }
  });

  it("the script's is_build says yes to every watched name (globs too) and no to others", () => {
    const samples = [
      ...Object.values(DOCUMENTED).flat(),
      "requirements-dev.txt",
      "jest.config.js",
      "x.cmake",
    ];
    assert.deepEqual(answers("is_build", samples), samples);
    assert.deepEqual(answers("is_build", ["answer.txt", "main.py", "config.toml"]), []);
  });

  it("is_new_build: a new Python or Make file is removed, a new project file of another ecosystem stays", () => {
    assert.deepEqual(answers("is_new_build", ["pytest.ini", ".pytest.ini", "Makefile", ".npmrc"]), [
      "pytest.ini",
      ".pytest.ini",
      "Makefile",
      ".npmrc",
    ]);
    assert.deepEqual(answers("is_new_build", ["package.json", "Cargo.toml", "go.mod", "pom.xml"]), []);
    for (const n of NEW_BUILD_NAMES) assert.ok(BUILD_NAMES.includes(n));
  });
});
