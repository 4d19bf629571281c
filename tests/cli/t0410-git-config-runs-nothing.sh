#!/usr/bin/env bash
# t0410: a repository's own git configuration runs nothing on the host. A
# repository delivered as a tarball (untouched after extraction, so git's
# index stat data is stale and git would have to filter every file) names a
# program in every place git's configuration can: clean/smudge/process
# filter drivers with .gitattributes, diff.external, a textconv driver,
# core.fsmonitor, core.hooksPath, core.sshCommand, a credential helper,
# core.askPass, core.pager, and include.path to a file that sets more of
# them. A full contained-run as the unprivileged user must leave no marker,
# and the run itself passes with the usual baseline facts. Also: the git
# library AgentGuard links cannot start a program at all.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
M="$W/markers"
mkdir -p "$M"
chown "$U:$U" "$M"
evil="$W/evil.sh"
printf '#!/bin/sh\ntouch "%s/ran-$1"\ncat\n' "$M" >"$evil"
chmod 755 "$evil"

# The repository is built here, by the test, with git in a tree the test
# trusts; the hostile configuration goes in only after the last git command.
B="$T/build/repo"
mkdir -p "$B/src" "$B/hooks"
g() { test_git "$B" "$@"; }
g init -q
printf 'a\n' >"$B/a.txt"
printf 'b\n' >"$B/b.txt"
printf 'c\n' >"$B/c.txt"
printf 'i\n' >"$B/src/x.inc"
printf 'd\n' >"$B/d.bin"
printf 'a.txt filter=fa\nb.txt filter=fb\nc.txt filter=fc diff=evil\n*.inc filter=finc diff=incdiff\n*.bin filter=freq\n' >"$B/.gitattributes"
printf '*.log\n' >"$B/.gitignore"
g add -A
g commit -q -m seed
for h in pre-commit post-checkout post-index-change fsmonitor-watchman reference-transaction pre-push; do
	printf '#!/bin/sh\nexec %s hook-%s\n' "$evil" "$h" >"$B/hooks/$h"
	chmod 755 "$B/hooks/$h"
done
cat >>"$B/.git/config" <<EOF
[filter "fa"]
	clean = $evil clean
[filter "fb"]
	smudge = $evil smudge
[filter "fc"]
	process = $evil process
[filter "freq"]
	clean = $evil required
	required = true
[diff]
	external = $evil diff-external
[diff "evil"]
	textconv = $evil textconv
[core]
	fsmonitor = $evil fsmonitor
	hooksPath = hooks
	sshCommand = $evil ssh
	askPass = $evil askpass
	pager = $evil pager
[credential]
	helper = !$evil credential
[include]
	path = ../included.cfg
EOF
cat >"$B/included.cfg" <<EOF
[filter "finc"]
	clean = $evil include-clean
	process = $evil include-process
[diff "incdiff"]
	textconv = $evil include-textconv
EOF
printf 'dirty\n' >"$B/a.txt"
printf 'ignored\n' >"$B/x.log"
tar -C "$T/build" -cf "$T/repo.tar" repo

# Delivered: extracted as the user, not touched by anything else.
rm -rf "$W/repo"
runuser -u "$U" -- tar -C "$W" -xf "$T/repo.tar"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"

run -- /bin/sh -c 'cd /agentguard-workspace && cat a.txt && echo more >> b.txt'
t_is "run: exit 0" "$AG_RC" 0
t_is "run: result PASS" "$(art 'a["result"]')" PASS
t_is "run: no configured program ran on the host" "$(ls -A "$M")" ""
t_is "run: the source is a git repository" "$(art 'a["containment_evidence"]["workspace"]["source_kind"]')" git
t_is "run: the agent's change is seen" "$(art 'a["mutations"]["modified_files"]')" "['b.txt']"
check_clean "run"

# libgit2 itself imports no function that starts a program.
# (loaded when first used, src/lib/base/lazylib.h: by the soname built in,
# which the loader's cache resolves)
soname=$(grep -ao 'libgit2\.so\.[0-9][0-9.]*' "$AG_BIN" | head -n 1 || true)
lib=$(ldconfig -p | awk -v s="$soname" '$1 == s {print $NF; exit}')
t_ok "the libgit2 AgentGuard loads is found" test -n "$soname" -a -f "$lib"
t_is "libgit2 imports nothing that execs" \
	"$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
		grep -cxE 'execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|fork|vfork|posix_spawnp?|popen|system' || true)" 0
t_is "agentguard itself never names git as a program" "$(strings "$AG_BIN" | grep -cx '/usr/bin/git' || true)" 0
t_is "no marker after everything" "$(ls -A "$M")" ""

t_done
