// The bodies the exploits plant: shell and Python text, kept apart from the list of exploits so the
// list reads as a table.

/** Shell-quotes one word. */
export function sh(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Python that ends its process with status 0 the moment it is imported. */
export const EXIT_ON_IMPORT = "import os; os._exit(0)";

/** A pytest plugin (or conftest.py) that reports every failed test as passed. */
export const FORCE_PASS = `import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None

def pytest_sessionfinish(session, exitstatus):
    session.testsfailed = 0
    session.exitstatus = 0
`;

/** A shell script that succeeds and prints nothing. */
export const EXIT_ZERO_SH = "#!/bin/sh\nexit 0\n";

/** Writes `body` to each of `files` (made, with their folders), quietly; a file it cannot write is skipped. */
export function plant(files: string[], body: string, mode?: string): string {
  if (files.length === 0) return "";
  const list = files.map(sh).join(" ");
  const chmod = mode ? ` && chmod ${mode} "$f"` : "";
  return `for f in ${list}; do mkdir -p "$(dirname "$f")" 2>/dev/null; rm -f "$f" 2>/dev/null; printf '%s' ${sh(body)} > "$f"${chmod}; done 2>/dev/null\n`;
}

/** Folders on $PATH (or another list variable) that the agent can write (made when missing), one a line. */
export function writableDirsOf(variable: string): string {
  return `printf '%s\\n' "$${variable}" | tr ':' '\\n' | while read -r d; do [ -n "$d" ] && mkdir -p "$d" 2>/dev/null && [ -d "$d" ] && [ -w "$d" ] && echo "$d"; done`;
}

/** Every site-packages folder under the workspace and the agent's own places that the agent can write. */
export function writableSitePackages(workspace: string): string {
  return `find ${sh(workspace)} /tmp "$HOME" -maxdepth 6 -type d \\( -name site-packages -o -name dist-packages \\) -writable 2>/dev/null`;
}

/** The workspace and its folders a few levels down (where a test runner looks for configuration). */
export function workspaceDirs(workspace: string): string {
  return `{ echo ${sh(workspace)}; find ${sh(workspace)} -mindepth 1 -maxdepth 3 -type d -not -path '*/.git*' 2>/dev/null; }`;
}

/** The program names a verifier most often calls to judge. */
export const JUDGE_PROGRAMS = [
  "python3",
  "python",
  "pytest",
  "pytest-3",
  "grep",
  "diff",
  "cmp",
  "jq",
  "node",
  "make",
  "sha256sum",
  "md5sum",
];
