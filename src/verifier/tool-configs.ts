// One table of the files each tool a verifier may run reads from its working directory or project
// (as the tool's own documentation lists them), from which hardening's build-file lists are made.
// A task-shipped one the agent changed is restored; a new one is removed where `removeNew` says so.
// New files of the other ecosystems stay: creating the project (a Cargo.toml, a package.json) is
// often the very task, so the verifier must not trust a project the agent wrote (docs say so).

export interface ToolConfigs {
  ecosystem: "python" | "make" | "node" | "go" | "rust" | "ruby" | "java" | "cmake";
  tool: string;
  /** File names (find -name globs) the tool reads, anywhere in the workspace. */
  files: string[];
  /** Remove new ones the task never shipped (Python and Make: what issue 12 settled). */
  removeNew: boolean;
}

export const TOOL_CONFIGS: ToolConfigs[] = [
  {
    ecosystem: "python",
    tool: "pytest",
    // pytest's ini files in its rootdir search order, and the conftest.py it loads on the way.
    files: [
      "pytest.ini",
      ".pytest.ini",
      "pytest.toml",
      ".pytest.toml",
      "pyproject.toml",
      "tox.ini",
      "setup.cfg",
      "conftest.py",
    ],
    removeNew: true,
  },
  {
    ecosystem: "python",
    tool: "setuptools, pip, uv, tox, nox, hatch, flit",
    files: [
      "setup.py",
      "noxfile.py",
      "hatch.toml",
      "flit.ini",
      "MANIFEST.in",
      "requirements*.txt",
      "uv.toml",
      ".python-version",
      "pip.conf",
      ".coveragerc",
    ],
    removeNew: true,
  },
  { ecosystem: "make", tool: "make", files: ["Makefile", "makefile", "GNUmakefile"], removeNew: true },
  { ecosystem: "node", tool: "npm, yarn", files: [".npmrc", ".yarnrc", ".yarnrc.yml"], removeNew: true },
  {
    ecosystem: "node",
    tool: "npm, yarn, pnpm (scripts), jest, vitest, mocha",
    files: [
      "package.json",
      ".pnpmfile.cjs",
      "jest.config.*",
      "vitest.config.*",
      ".mocharc.*",
      "babel.config.*",
      ".babelrc",
    ],
    removeNew: false,
  },
  { ecosystem: "go", tool: "go", files: ["go.mod", "go.work", "go.env"], removeNew: false },
  {
    ecosystem: "rust",
    tool: "cargo",
    files: ["Cargo.toml", "build.rs", "rust-toolchain", "rust-toolchain.toml"],
    removeNew: false,
  },
  {
    ecosystem: "cmake",
    tool: "cmake, ctest",
    files: ["CMakeLists.txt", "CMakePresets.json", "CMakeUserPresets.json", "*.cmake"],
    removeNew: false,
  },
  {
    ecosystem: "ruby",
    tool: "bundler, rake, rspec",
    files: ["Gemfile", "Rakefile", "*.gemspec", ".rspec"],
    removeNew: false,
  },
  {
    ecosystem: "java",
    tool: "maven, gradle",
    files: [
      "pom.xml",
      "maven.config",
      "jvm.config",
      "build.gradle",
      "build.gradle.kts",
      "settings.gradle",
      "settings.gradle.kts",
      "gradle.properties",
      "gradle-wrapper.properties",
    ],
    removeNew: false,
  },
];

/** Every watched name: a task-shipped one is restored when changed. */
export const BUILD_NAMES: string[] = [...new Set(TOOL_CONFIGS.flatMap((t) => t.files))];

/** The names a new file of is removed. */
export const NEW_BUILD_NAMES: string[] = [
  ...new Set(TOOL_CONFIGS.filter((t) => t.removeNew).flatMap((t) => t.files)),
];
