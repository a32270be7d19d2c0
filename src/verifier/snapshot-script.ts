// The in-sandbox half of the verifier's snapshot, taken as root after the environment is ready and
// before the agent is set up: one bash script, one exec, everything on stdout (no file is left in
// the sandbox for the agent to read or change). Lines are `KIND\t...`; a path is always last and a
// path with a newline or a backslash is never recorded (so it counts as the agent's at hardening).

import { BUILD_NAMES } from "./tool-configs.js";

/** Task-shipped build and config files in the workspace (tool-configs.ts): restored when changed. */
export { BUILD_NAMES };

/** Files that make Python run code at startup or pytest load a plugin: watched in agent-writable areas. */
export const HOOK_NAMES = ["*.pth", "sitecustomize.py", "usercustomize.py"];

/** Environment variables whose entries are paths: an entry the agent could write is dropped. */
export const PATH_VARS = ["PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "NODE_PATH", "PERL5LIB"];
/** Variables naming one file that bash or sh reads before any command. */
export const FILE_VARS = ["BASH_ENV", "ENV"];

/** Largest file hashed, before the agent or after: a bigger one counts as changed, never read. */
export const HASH_CAP_BYTES = 16 * 1024 * 1024;

/** Largest file kept for a restore; a bigger one that changes is removed instead. */
export const MAX_STAGED_BYTES = 1024 * 1024;

/** `find` tests for any of the names, as bash array words: -name a -o -name b ... */
function findArgs(names: string[]): string {
  return names.map((n) => `-name ${shq(n)}`).join(" -o ");
}

/** A script written with $\\{ for bash's own ${ (see SNAPSHOT), made runnable. */
export function bash(raw: string): string {
  return raw.replaceAll("$\\{", "${");
}

// The Python facts: the stdlib's module names, the top-level modules importable from outside the
// workspace, and the site dirs. Read from the image's own interpreter, before the agent.
const PY_FACTS = String.raw`
import os, site, sys, sysconfig
def top_level(dirs):
    # What "import NAME" finds in these folders: NAME.py, NAME.*.so, NAME/__init__.py.
    for d in dirs:
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            n = e.name
            if n.endswith((".py", ".so", ".pyc")):
                yield n.split(".")[0]
            elif "." not in n and os.path.isfile(os.path.join(d, n, "__init__.py")):
                yield n
W = os.path.realpath(os.environ["BF_W"])
def inside(p):
    p = os.path.realpath(p)
    return p == W or p.startswith(W.rstrip("/") + "/")
names = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
if not hasattr(sys, "stdlib_module_names"):
        names |= set(top_level([sysconfig.get_paths()["stdlib"]]))
dirs = [p for p in sys.path if p and os.path.isdir(p) and not inside(p) and os.path.realpath(p) != "/"]
try:
    dirs += [d for d in site.getsitepackages() if os.path.isdir(d) and not inside(d)]
except Exception:
    pass
dirs = list(dict.fromkeys(dirs))
for n in sorted(names):
    print("S\t" + n)
for n in sorted(set(top_level(dirs)) - names):
    if n.isidentifier():
        print("I\t" + n)
for d in dirs:
    print("D\t" + d)
`;

/**
 * Env: BF_W (workspace), BF_AHOME (the agent's home), BF_AUID / BF_AGIDS (the agent's uid and
 * groups; empty for a root agent). Prints P (processes alive now), S/I (names a new workspace module
 * must not take), D (site dirs), A (agent-writable areas), E (path-valued variables), F (watched
 * files: sha256, owner:group:mode, staged as base64 in B), L (symlinks), M (top-level modules).
 */
export function snapshotScript(): string {
  const prelude = [
    `BUILD=(${findArgs(BUILD_NAMES)})`,
    `HOOKS=(${findArgs(HOOK_NAMES)} -o -path '*.dist-info/entry_points.txt')`,
    `VARS=(${[...PATH_VARS, ...FILE_VARS].join(" ")})`,
    `MAXB=${MAX_STAGED_BYTES}`,
    `HASHCAP=${HASH_CAP_BYTES}`,
    `PYFACTS=${shq(PY_FACTS)}`,
  ].join("\n");
  return `${prelude}\n${bash(WRITABLE)}\n${bash(SNAPSHOT)}`;
}

// Whether the agent could write a path: under the areas it always owns, or (a non-root agent) any
// folder on the way that its uid owns or its groups or everyone may write. For a root agent only
// the areas count: it may write the whole system, so dropping every writable entry would leave
// nothing (those families stay open; docs/write-a-task.md lists them). Needs W AH AU AG.
export const WRITABLE = String.raw`gtest=(); for g in $AG; do gtest+=(-o \( -perm -0020 -group "$g" \)); done
declare -A wset=()
# One find for every folder on the way to the given paths (a fork per folder costs too much).
learn_writable() { [[ -z $AU ]] && return; local d; declare -A up=()
  for d in "$@"; do [[ $d == /* ]] || continue; while :; do up[$d]=1; [[ $d == / ]] && break; d=$\{d%/*}; [[ -z $d ]] && d=/; done; done
  [[ $\{#up[@]} -eq 0 ]] && return
  while IFS= read -r -d '' d; do wset[$d]=1; done < <(find -H "$\{!up[@]}" -maxdepth 0 \( -uid "$AU" -o -perm -0002 "$\{gtest[@]}" \) -print0 2>/dev/null); }
writable() { local d=$1
  [[ $d == /* ]] || return 0
  case "$d/" in "$W"/*|/tmp/*|/var/tmp/*|/dev/shm/*|/logs/*|"$AH"/*) return 0;; esac
  [[ -z $AU ]] && return 1
  while :; do [[ -n $\{wset[$d]-} ]] && return 0; [[ $d == / ]] && return 1; d=$\{d%/*}; [[ -z $d ]] && d=/; done; }`;

// Bash expansions are written $\{...} here (a template would take ${...} for its own).
const SNAPSHOT = String.raw`set -u
shopt -s nullglob dotglob
W=$BF_W AH=$BF_AHOME AU=$BF_AUID AG=$BF_AGIDS
tab=$'\t'
ok_path() { [[ $1 != *$'\n'* && $1 != *\\* && $1 != *$tab* ]]; }
# Processes alive before the agent, by pid and start time (a pid the agent recycles has another).
declare -A mine=(); p=$$
while [[ $p -gt 0 ]] && read -r st < /proc/$p/stat 2>/dev/null; do mine[$p]=1; r=$\{st##*) }; set -f; set -- $r; set +f; p=$2; done
for d in /proc/[0-9]*; do pid=$\{d#/proc/}; [[ -n $\{mine[$pid]-} ]] && continue
  read -r st < "$d/stat" 2>/dev/null || continue; r=$\{st##*) }; set -f; set -- $r; set +f
  printf 'P\t%s:%s\n' "$pid" "$\{20}"; done
for v in "$\{VARS[@]}"; do
  [[ -v $v ]] || continue; val=$\{!v}; [[ $val == *$'\n'* ]] && continue; printf 'E\t%s\t%s\n' "$v" "$val"; done
py=$(command -v python3 2>/dev/null || command -v python 2>/dev/null)
sitedirs=()
if [[ -n $py ]]; then
  facts=$(cd / && "$py" -c "$PYFACTS" 2>/dev/null)
  [[ -n $facts ]] && printf '%s\n' "$facts"
  while IFS=$tab read -r k v; do [[ $k == D ]] && sitedirs+=("$v"); done <<< "$facts"
fi
areas=("$W" /tmp /var/tmp "$AH")
learn_writable "$\{sitedirs[@]}"
# A root agent may write every site dir not mounted read-only: all of those are watched then.
for d in "$\{sitedirs[@]}"; do { writable "$d" || { [[ -z $AU && -w $d ]]; }; } && areas+=("$d"); done
for a in "$\{areas[@]}"; do printf 'A\t%s\n' "$a"; done
# Watched files: the build files in the workspace, the startup hooks and entry points in every area.
list=$(mktemp); trap 'rm -f "$list"' EXIT
# The filesystem's root too: pytest looks for its ini file and conftest.py up from /tests.
{ find "$W" -xdev -path '*/.git/objects' -prune -o \( -type f -o -type l \) \( "$\{BUILD[@]}" \) -print0
  find / -maxdepth 1 \( -type f -o -type l \) \( "$\{BUILD[@]}" \) -print0
  find "$\{areas[@]}" -xdev \( -type f -o -type l \) \( "$\{HOOKS[@]}" \) -print0
} 2>/dev/null > "$list"
declare -A seen=()
while IFS= read -r -d '' f; do
  ok_path "$f" && [[ -z $\{seen[$f]-} ]] || continue; seen[$f]=1
  if [[ -L $f ]]; then printf 'F\t-\t-\t%s\n' "$f"; continue; fi
  own=$(stat -c '%u:%g:%a:%s' -- "$f") || continue
  if [[ $\{own##*:} -gt $HASHCAP ]]; then sha=big; else sha=$(sha256sum -- "$f") || continue; fi
  printf 'F\t%s\t%s\t%s\n' "$\{sha%% *}" "$own" "$f"
  [[ $\{own##*:} -le $MAXB ]] && printf 'B\t%s\t%s\n' "$(base64 -w0 -- "$f")" "$f"
done < "$list"
# Symlinks that were there before the agent (kept at hardening when they still point the same way).
find "$W" /tmp /var/tmp -xdev -type l -printf '%p\0%l\0' 2>/dev/null |
  while IFS= read -r -d '' l && IFS= read -r -d '' t; do ok_path "$l" && ok_path "$t" && printf 'L\t%s\t%s\n' "$t" "$l"; done
# Modules there before the agent, at the top and in tests/ and test/ (prefixed with the folder).
for e in "$W"/* "$W"/tests/* "$W"/test/*; do n=$\{e##*/}; pre=$\{e#"$W"/}; pre=$\{pre%"$n"}
  if [[ -d $e ]]; then [[ -f $e/__init__.py ]] && printf 'M\t%s\n' "$pre$n"
  else case "$n" in *.py|*.pyc|*.pyw|*.so) printf 'M\t%s\n' "$pre$\{n%%.*}";; esac; fi; done
true`;

/** Quoted for bash, as one word. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
