// The in-sandbox half of hardening: one bash script, run as root with a fixed PATH after the agent's
// processes are gone and before the tests are uploaded. It reads the snapshot the host uploaded to
// $BF_U (checked against its digest), undoes what the agent could have planted for the verifier, and
// prints one line per thing it did: `step\taction\tpath` (the path %q-quoted), or `env\tkeep|drop\tN`
// for the Nth path entry of the pinned environment.

import { GIT_STEP } from "./git-script.js";
import { BUILD_NAMES, bash, HASH_CAP_BYTES, HOOK_NAMES, shq, WRITABLE } from "./snapshot-script.js";
import { NEW_BUILD_NAMES } from "./tool-configs.js";

/** The lists in the uploaded snapshot, in the order their digest is taken. */
export const SNAPSHOT_LISTS = [
  "processes",
  "shadow",
  "modules",
  "areas",
  "files.tsv",
  "links.tsv",
  "entries.tsv",
] as const;

function findArgs(names: string[]): string {
  return names.map((n) => `-name ${shq(n)}`).join(" -o ");
}

/**
 * Env: BF_U (the uploaded snapshot), BF_DIGEST, BF_W, BF_AHOME, BF_AUID, BF_AGIDS, BF_MOUNT (the
 * verifier mount, made fresh), BF_ROOT_AGENT (1: kill every process the snapshot did not see),
 * BF_CONFTESTS (0: leave conftest.py files alone, upstream's cleanup_conftests = false).
 * BF_BUILD_FILES (0: leave the other build files alone, our restore_build_files = false).
 */
export function hardenScript(): string {
  const prelude = [
    `BUILD=(${findArgs(BUILD_NAMES)})`,
    `HOOKS=(${findArgs(HOOK_NAMES)} -o -path '*.dist-info/entry_points.txt')`,
    `LISTS=(${SNAPSHOT_LISTS.join(" ")})`,
    `is_build() { case "\${1##*/}" in ${BUILD_NAMES.join("|")}) return 0;; esac; return 1; }`,
    `is_new_build() { case "\${1##*/}" in ${NEW_BUILD_NAMES.join("|")}) return 0;; esac; return 1; }`,
    `HASHCAP=${HASH_CAP_BYTES}`,
  ].join("\n");
  return `${prelude}\n${bash(WRITABLE)}\n${bash(HARDEN.replace("#GIT_STEP#", () => GIT_STEP))}`;
}

const HARDEN = String.raw`set -u
shopt -s nullglob dotglob
U=$BF_U W=$BF_W AH=$BF_AHOME AU=$BF_AUID AG=$BF_AGIDS M=$BF_MOUNT
tab=$'\t'
rec() { printf '%s\t%s\t%q\n' "$1" "$2" "$3"; }
stat1() { local st; read -r st < "$1/stat" 2>/dev/null || return 1; st=$\{st##*) }; set -f; S=($st); set +f; }
# A root agent's processes, whatever their environment says: all but the snapshot's (pid and start
# time), pid 1 and this script's own ancestry; twice, so that a fork in between is caught too.
if [[ $BF_ROOT_AGENT == 1 ]]; then
  declare -A keep=(); while IFS= read -r k; do [[ -n $k ]] && keep[$k]=1; done < "$U/processes"
  for round in 1 2; do
    declare -A mine=(); p=$$
    while [[ $p -gt 0 ]] && stat1 /proc/$p; do mine[$p]=1; p=$\{S[1]}; done
    for d in /proc/[0-9]*; do pid=$\{d#/proc/}
      [[ $pid == 1 || -n $\{mine[$pid]-} ]] && continue
      stat1 "$d" || continue
      [[ $\{S[0]} == Z || -n $\{keep[$pid:$\{S[19]}]-} ]] && continue
      kill -9 "$pid" 2>/dev/null && rec processes killed "$pid"
    done
    [[ $round == 1 ]] && sleep 0.2
  done
fi
got=$(cd "$U" && cat -- "$\{LISTS[@]}" | sha256sum)
if [[ $\{got%% *} != "$BF_DIGEST" ]]; then echo "the verifier snapshot in $U does not match its digest" >&2; exit 3; fi
mapfile -t areas < "$U/areas"
# Symlinks the agent made that lead out of the workspace (into /tests, /logs/verifier, ...), and any
# new one in /tmp and /var/tmp; a symlink the snapshot saw, pointing the same way, stays.
declare -A oldlink=(); while IFS=$tab read -r t l; do [[ -n $l ]] && oldlink[$l]=$t; done < "$U/links.tsv"
while IFS= read -r -d '' l && IFS= read -r -d '' t; do
  [[ $\{oldlink[$l]-} == "$t" ]] && continue
  case "$l" in "$W"/*) r=$(readlink -m -- "$l"); [[ $r == "$W" || $r == "$W"/* ]] && continue;; esac
  rm -f -- "$l" && rec symlinks removed "$l"
done < <(find "$W" /tmp /var/tmp -xdev -path "$U" -prune -o -type l -printf '%p\0%l\0' 2>/dev/null)
# Watched files the task shipped: changed, missing or replaced ones come back from the snapshot.
conf() { if [[ $\{1##*/} == conftest.py ]]; then [[ $BF_CONFTESTS == 1 ]]; else [[ $BF_BUILD_FILES == 1 ]] || ! is_build "$1"; fi; }
kind() { if is_build "$1"; then echo build_files; else echo startup_hooks; fi; }
declare -A ship=()
while IFS=$tab read -r sha own f; do [[ -n $f ]] && conf "$f" && ship[$f]=$sha:$own; done < "$U/files.tsv"
# Hashed only when a regular file of the shipped size, at most HASHCAP bytes: a file too big (a
# sparse 6 GiB one) counts as changed without a byte read.
declare -A now=() size=()
while IFS=$tab read -r -d '' sz ty f; do [[ $ty == regular* ]] && size[$f]=$sz; done < <(
  for f in "$\{!ship[@]}"; do printf '%s\0' "$f"; done | xargs -0 -r stat --printf '%s\t%F\t%n\0' -- 2>/dev/null)
while IFS= read -r line; do now[$\{line#*  }]=$\{line%%  *}; done < <(
  for f in "$\{!ship[@]}"; do e=$\{ship[$f]}; sz=$\{size[$f]-x}
    [[ $sz == "$\{e##*:}" && $sz -le $HASHCAP ]] && printf '%s\0' "$f"; done | xargs -0 -r sha256sum -- 2>/dev/null)
for f in "$\{!ship[@]}"; do e=$\{ship[$f]}; sha=$\{e%%:*}; own=$\{e#*:}
  [[ $sha == - || $\{now[$f]-} == "$sha" ]] && continue
  src=$U/files$f; s2=$(sha256sum -- "$src" 2>/dev/null)
  rm -rf -- "$f"
  if [[ $\{s2%% *} == "$sha" ]] && mkdir -p -- "$\{f%/*}" && cp -- "$src" "$f"; then
    t=$\{own%:*}; chown "$\{t%:*}" -- "$f"; chmod "$\{t##*:}" -- "$f"; rec "$(kind "$f")" restored "$f"
  else rec "$(kind "$f")" removed "$f"; fi
done
# New build files in the workspace (and at /, where pytest looks up from /tests); new conftest.py
# anywhere the agent writes (never the tests').
while IFS= read -r -d '' f; do
  [[ -z $\{ship[$f]-} ]] && is_new_build "$f" && conf "$f" && rm -f -- "$f" || continue
  if [[ $\{f##*/} == conftest.py ]]; then rec conftests removed "$f"; else rec build_files removed "$f"; fi
done < <(find "$W" -xdev -path '*/.git/objects' -prune -o \( -type f -o -type l \) \( "$\{BUILD[@]}" \) -print0 2>/dev/null
  find / -maxdepth 1 \( -type f -o -type l \) \( "$\{BUILD[@]}" \) -print0 2>/dev/null)
if [[ $BF_CONFTESTS == 1 ]]; then
  while IFS= read -r -d '' f; do
    [[ -z $\{ship[$f]-} ]] && rm -f -- "$f" && rec conftests removed "$f"
  done < <(find "$\{areas[@]}" -xdev \( -path "$U" -o -path "$M" \) -prune -o \( -type f -o -type l \) -name conftest.py -print0 2>/dev/null)
fi
# New startup hooks (.pth, sitecustomize, usercustomize) and new pytest plugins (a pytest11 entry point).
while IFS= read -r -d '' f; do
  [[ -n $\{ship[$f]-} ]] && continue
  case "$f" in
    # One too big to read counts as a plugin (a sparse file must not make this step read gigabytes).
    *.dist-info/entry_points.txt) { [[ $(stat -c %s -- "$f" 2>/dev/null || echo 0) -gt $HASHCAP ]] || grep -qs '^\[pytest11\]' -- "$f"; } && rm -f -- "$f" && rec pytest_plugins removed "$f";;
    *) rm -f -- "$f" && rec startup_hooks removed "$f";;
  esac
done < <(find "$\{areas[@]}" -xdev -path "$U" -prune -o \( -type f -o -type l \) \( "$\{HOOKS[@]}" \) -print0 2>/dev/null)
# Bytecode: every __pycache__ and every sourceless .pyc where the agent writes.
while IFS= read -r -d '' f; do rm -rf -- "$f" && rec bytecode removed "$f"
done < <(find "$\{areas[@]}" -xdev -path "$U" -prune -o \( -name __pycache__ -type d -prune -print0 \) -o \( -type f \( -name '*.pyc' -o -name '*.pyo' \) -print0 \) 2>/dev/null)
# Python files in /tmp and /var/tmp.
while IFS= read -r -d '' f; do
  [[ -z $\{ship[$f]-} ]] && rm -f -- "$f" && rec tmp_python removed "$f"
done < <(find /tmp /var/tmp -xdev -path "$U" -prune -o \( -type f -o -type l \) -name '*.py' -print0 2>/dev/null)
# New modules named like a stdlib or installed one, at the workspace's top (the verifier's cwd) and
# in its tests/ and test/ folders (where a verifier may copy its tests: pytest puts that folder first
# on sys.path), a package reached through a symlink too; and a new __init__.py in those folders (it
# would make the copied tests a package whose __init__ pytest runs).
declare -A shadow=(); while IFS= read -r n; do [[ -n $n ]] && shadow[$n]=1; done < "$U/shadow"
declare -A had=(); while IFS= read -r n; do [[ -n $n ]] && had[$n]=1; done < "$U/modules"
for e in "$W"/* "$W"/tests/* "$W"/test/*; do n=$\{e##*/}; pre=$\{e#"$W"/}; pre=$\{pre%"$n"}
  if [[ -d $e ]]; then [[ -f $e/__init__.py ]] || continue; m=$n
  else case "$n" in *.py|*.pyc|*.pyw|*.so) m=$\{n%%.*};; *) continue;; esac; fi
  [[ -n $m && -z $\{had[$pre$m]-} ]] || continue
  [[ -n $\{shadow[$m]-} || ( -n $pre && $m == __init__ ) ]] || continue
  rm -rf -- "$e" && rec shadowing_modules removed "$e"
done
#GIT_STEP#
# /logs/verifier a real folder (a root agent could have made it a symlink to a reward of its own).
if [[ -L /logs/verifier || ! -d /logs/verifier ]]; then
  rm -rf -- /logs/verifier && mkdir -p -m 755 -- /logs/verifier && rec verifier_mount fresh /logs/verifier; fi
# The tests' mount, made fresh: never merged into what the agent left there.
rm -rf -- "$M" && mkdir -p -m 755 -- "$M" && rec verifier_mount fresh "$M"
# Path entries of the verifier's environment the agent could write.
mapfile -t ents < <(cut -f2- "$U/entries.tsv"); learn_writable "$\{ents[@]}"
i=0; while IFS=$tab read -r v e; do
  if [[ -z $e ]] || writable "$e"; then printf 'env\tdrop\t%s\n' "$i"; else printf 'env\tkeep\t%s\n' "$i"; fi
  i=$((i+1)); done < "$U/entries.tsv"
rm -rf -- "$U"
true`;
