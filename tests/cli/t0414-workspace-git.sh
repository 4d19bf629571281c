#!/usr/bin/env bash
# t0414: the agent's workspace is a git repository AgentGuard wrote (config
# workspace.git, default baseline), and what the agent does under its `.git`
# is never a change. On the real engine, from a git source:
# - the agent finds `.git` on branch main; it edits two files, then acts as
#   a hostile agent would on the repository: writes objects and moves the
#   branch (a commit), adds an executable hook, points core.hooksPath and a
#   remote elsewhere, deletes `.git/index`;
# - the run passes; the mutation list and changes.patch hold exactly the
#   two file-tree changes; the artifact records the baseline commit, the
#   same for the same tree; the patch applies with `git apply` to the source;
# - the source, its `.git` included, is byte for byte unchanged (nothing
#   on the host runs git in the workspace, so the hook is never run; it is
#   planted to show that it changes nothing);
# - with workspace.git: none there is no `.git`, and the artifact says so.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
test_git "$W/repo" init -q
test_git "$W/repo" add -A
test_git "$W/repo" commit -q -m seed
chown -R "$U:$U" "$W/repo"
tree_sum() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }
tree_sum "$W/repo" >"$T/repo-all.sum"
cp "$T/repo-all.sum" "$T/repo.sum" # repo_unchanged (check_clean): .git included
cp -a "$W/repo" "$T/source-copy"

AGENT='set -e
cat .git/HEAD
echo four >> src/edit.txt
echo new > src/new.txt
mkdir -p .git/objects/ab
echo junk > .git/objects/ab/cdef0123456789abcdef0123456789abcdef01
echo abcdef0123456789abcdef0123456789abcdef01 > .git/refs/heads/main
printf "#!/bin/sh\ntouch /tmp/hook-ran\n" > .git/hooks/post-checkout
chmod +x .git/hooks/post-checkout
printf "[core]\n\thooksPath = /tmp\n[remote \"x\"]\n\turl = /etc\n" >> .git/config
rm .git/index
echo done'
run -- /bin/sh -c "cd /agentguard-workspace && $AGENT"
t_is "run: exit 0" "$AG_RC" 0
t_is "run: result PASS" "$(art 'a["result"]')" PASS
t_like "the agent found .git on main" "$(art 'a["command_result"]["stdout"]')" 'ref: refs/heads/main'
t_is "the changes are the two files, nothing under .git" "$(art 'a["mutations"]["changed_files"]')" \
	"['src/edit.txt', 'src/new.txt']"
t_is "the evidence counts two" "$(art 'a["containment_evidence"]["workspace"]["changed_files_count"]')" 2
t_is "the artifact records the baseline repository" \
	"$(art 'a["containment_evidence"]["workspace"]["git"]["mode"]')" baseline
C1=$(art 'a["containment_evidence"]["workspace"]["git"]["baseline_commit"]')
t_like "... and its commit" "$C1" '^[0-9a-f]{40}$'
RUN=$(dirname "$REPORT")
t_ok "changes.patch is written" test -f "$RUN/changes.patch"
t_is "changes.patch touches the two files only" \
	"$(grep '^diff --git' "$RUN/changes.patch" | sort | tr '\n' ';')" \
	"diff --git a/src/edit.txt b/src/edit.txt;diff --git a/src/new.txt b/src/new.txt;"
t_ok "the patch applies to the source with git apply" \
	test_git "$T/source-copy" apply --check "$RUN/changes.patch"
t_run "$AG_BIN" evidence verify --public-key "$(pubkey)" "$RUN" --json
t_like "evidence verifies" "$AG_OUT" '"valid":true'
t_ok "the source, .git included, is byte for byte unchanged" \
	cmp -s "$T/repo-all.sum" <(tree_sum "$W/repo")
check_clean "git"

# the same tree gives the same baseline commit
run -- /bin/true
t_is "same tree: the same baseline commit" \
	"$(art 'a["containment_evidence"]["workspace"]["git"]["baseline_commit"]')" "$C1"

# workspace.git: none
printf '%s\n' "workspace: {git: none}" >>"$W/c.yaml"
run -- /bin/sh -c 'cd /agentguard-workspace && if [ -e .git ]; then echo has-git; else echo no-git; fi'
t_is "none: exit 0" "$AG_RC" 0
t_like "none: no .git in the workspace" "$(art 'a["command_result"]["stdout"]')" 'no-git'
t_is "none: the artifact says so" \
	"$(art '(a["containment_evidence"]["workspace"]["git"]["mode"], a["containment_evidence"]["workspace"]["git"]["baseline_commit"])')" \
	"('none', None)"
check_clean "none"
t_done
