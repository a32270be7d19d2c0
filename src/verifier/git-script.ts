// The git step of hardening: a git the verifier runs as root in the workspace reads the workspace's
// own repository config, which may name programs (core.fsmonitor, diff.external, a textconv, an
// include of a file that names one). Structural, by allowlist: each repository config the agent
// could have written keeps only keys that configure data, never a program or another file; what it
// dropped is recorded. Without git in the image (a test may install one), a config naming anything
// beyond the allowlist's sections is replaced by a minimal one.

/** Keys kept (git prints section and key lowercased; a subsection keeps its case). */
export const GIT_SAFE_KEYS = [
  String.raw`core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|checkstat|trustctime|abbrev|compression)`,
  String.raw`extensions\.[a-z]+`,
  String.raw`remote\..+\.(url|pushurl|fetch|tagopt|mirror)`,
  String.raw`branch\..+\.(remote|merge|rebase)`,
  String.raw`submodule\..+\.(url|active|branch)`,
  String.raw`(user\.(name|email)|init\.defaultbranch)`,
  String.raw`(color|advice|index|pack|gc|status)\.[a-z]+`,
];

// Needs W AH rec; $tab. Bash expansions are written $\{...} (see snapshot-script.ts).
export const GIT_STEP = String.raw`safe_git_re="^(${GIT_SAFE_KEYS.join("|")})$"
ours() { local r; r=$(readlink -m -- "$1"); case "$r/" in "$W"/*|/tmp/*|/var/tmp/*|/dev/shm/*|"$AH"/*) return 0;; esac; return 1; }
neutralise() { local c=$1 kv k v tmp dropped=0
  [[ -e $c || -L $c ]] || return 0
  if [[ -L $c || ! -f $c ]]; then rm -rf -- "$c" && rec git_config removed "$c"; return 0; fi
  tmp=$(mktemp)
  if command -v git >/dev/null 2>&1; then
    if ! git config --file "$c" --null --list > "$tmp.all" 2>/dev/null; then : > "$tmp"; dropped=1
    else while IFS= read -r -d '' kv; do k=$\{kv%%$'\n'*}; v=$\{kv#*$'\n'}; [[ $kv == *$'\n'* ]] || v=true
        if [[ $k =~ $safe_git_re ]]; then git config --file "$tmp" --add "$k" "$v" 2>/dev/null || dropped=1; else dropped=1; fi
      done < "$tmp.all"; fi
    rm -f -- "$tmp.all"
  elif grep -qviE '^[[:space:]]*([#;].*|\[(core|remote|branch|user|init|color|advice|index|pack|gc|status|extensions)( "[^"]*")?\]|(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|url|fetch|remote|merge|name|email)[[:space:]]*=.*|)$' -- "$c"; then
    printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n' > "$tmp"; dropped=1
  fi
  [[ $dropped == 1 ]] && cat -- "$tmp" > "$c" && rec git_config neutralised "$c"
  rm -f -- "$tmp"; }
while IFS= read -r -d '' g; do
  d=$g
  if [[ -f $g && ! -L $g ]]; then d=$(sed -n '1s/^gitdir: //p' -- "$g"); [[ $d == /* ]] || d=$\{g%/*}/$d; fi
  ours "$d" || continue
  neutralise "$d/config"; neutralise "$d/config.worktree"
  if [[ -f $d/commondir ]]; then cd_=$(head -c 4096 -- "$d/commondir"); [[ $cd_ == /* ]] || cd_=$d/$cd_; ours "$cd_" && neutralise "$cd_/config"; fi
done < <(find "$W" -xdev -name .git -prune -print0 2>/dev/null)`;
