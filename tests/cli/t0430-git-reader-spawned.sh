#!/usr/bin/env bash
# t0430: the workspace's git reader is agentguard itself, re-executed with a
# hidden argv (no fork of a multithreaded process; docs/workspace.md). Its
# interface is small and strict: argv only (what to read, the parent's pid),
# the repository of its working directory, NUL-terminated records on stdout.
# Anything else, including a parent that is not the one named (an orphaned
# reader), exits 4 having written nothing. It is not a user command.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

R="$T/repo"
mkdir -p "$R/src"
g() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
	git -C "$R" -c user.name=t -c user.email=t@t.invalid "$@"; }
g init -q
printf 'a\n' >"$R/a.txt"
printf 'x\n' >"$R/src/x.c"
printf '*.log\n' >"$R/.gitignore"
g add -A
g commit -q -m seed
printf 'u\n' >"$R/new.txt"
printf 'i\n' >"$R/out.log"
head=$(g rev-parse HEAD)

# reader WHAT PARENT [EXTRA...]: runs the reader from python (its parent),
# PARENT "self" meaning python's own pid; prints "rc=N" then one record a line
reader() {
	python3 - "$AG_BIN" "$R" "$@" <<'PY'
import os, subprocess, sys
ag, repo, what, parent, *extra = sys.argv[1:]
if parent == "self":
    parent = str(os.getpid())
p = subprocess.run([ag, "__agentguard-git-reader", what, parent, *extra], cwd=repo,
                   stdin=subprocess.DEVNULL, capture_output=True, env={})
print("rc=%d" % p.returncode)
if p.stderr:
    print("stderr=%r" % p.stderr)
for rec in p.stdout.split(b"\0")[:-1]:
    print(rec.decode("utf-8", "backslashreplace"))
PY
}

out=$(reader 2 self)
t_is "paths: exit 0" "$(head -1 <<<"$out")" "rc=0"
t_is "paths: the first record is HEAD" "$(sed -n 2p <<<"$out")" "H$head"
t_is "paths: tracked, then untracked-not-ignored" "$(tail -n +3 <<<"$out" | tr '\n' ' ')" \
	"T.gitignore Ta.txt Tsrc/x.c Nnew.txt "
out=$(reader 1 self)
t_is "status: porcelain records, sorted by path" "$(tr '\n' ' ' <<<"$out")" \
	"rc=0 H$head S?? new.txt S!! out.log "

# the parent named is not the reader's parent: it stops before reading
out=$(reader 2 1)
t_is "another parent: exit 4, nothing written" "$out" "rc=4"
for bad in 0 16 -1 " 2" 2x 99999999999999999999; do
	out=$(reader "$bad" self)
	t_is "what '$bad': exit 4, nothing written" "$out" "rc=4"
done
out=$(reader 2 self extra)
t_is "an extra argument: exit 4, nothing written" "$out" "rc=4"
out=$(reader 2 0x10)
t_is "a parent that is not decimal: exit 4, nothing written" "$out" "rc=4"

# a source that is not the top of its work tree: exit 3
out=$(cd "$R/src" && python3 -c '
import os, subprocess, sys
p = subprocess.run([sys.argv[1], "__agentguard-git-reader", "2", str(os.getpid())], env={}, capture_output=True)
print(p.returncode, len(p.stdout))' "$AG_BIN")
t_is "a directory without its own .git: fails, nothing written" "$out" "4 0"

t_run "$AG_BIN" --help
t_unlike "not listed in --help" "$AG_OUT" 'git-reader'
t_done
