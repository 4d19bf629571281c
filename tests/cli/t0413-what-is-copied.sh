#!/usr/bin/env bash
# t0413: what a contained run copies from a git repository (issue 14, item
# 3). By default the workspace holds tracked files and untracked files no
# ignore rule matches: a git-ignored `.env` never reaches the agent, and an
# ignored 120,000-file `node_modules/` neither reaches it nor makes the run
# fail (the tree bound is 100,000 entries). `workspace.include_ignored: true`
# opts in, `workspace.exclude` leaves more out, the evidence records the
# rule and each rule's count, and a tree still too large fails with a
# message that names the bound and the config key that helps.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
R="$W/repo"
printf '.env\nnode_modules/\n*.log\n' >"$R/.gitignore"
g() { test_git "$R" "$@"; }
g init -q
g add -A
g commit -q -m seed
printf 'API_KEY=CANARY-DOTENV-5e1f\n' >"$R/.env"
printf 'untracked, not ignored\n' >"$R/src/new.txt"
printf 'log\n' >"$R/src/debug.log"
"$PY" - "$R/node_modules" <<'EOF'
import os, sys
root = sys.argv[1]
for d in range(120):
    p = os.path.join(root, "pkg%03d" % d)
    os.makedirs(p)
    for i in range(1000):
        os.close(os.open(os.path.join(p, "f%04d.js" % i), os.O_CREAT | os.O_WRONLY, 0o644))
EOF
chown -R "$U:$U" "$R"
(cd "$R" && find . -path ./node_modules -prune -o -path ./.git -prune -o -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
repo_unchanged() { (cd "$R" && find . -path ./node_modules -prune -o -path ./.git -prune -o -type f -exec sha256sum {} + | sort) | cmp -s - "$T/repo.sum"; }
t_is "setup: node_modules holds 120,000 files" "$(find "$R/node_modules" -type f | wc -l)" 120000

# --- default: ignored files stay out
run -- /bin/sh -c 'cd /agentguard-workspace && ls -A; test -e .env && echo DOTENV-VISIBLE; test -e node_modules && echo NODE-MODULES-VISIBLE; cat src/new.txt; echo more >> src/edit.txt'
t_is "default: exit 0" "$AG_RC" 0
t_is "default: result PASS" "$(art 'a["result"]')" PASS
out=$(art 'a["command_result"]["stdout"]')
t_unlike "default: .env never reaches the agent" "$out" 'DOTENV-VISIBLE'
t_unlike "default: node_modules never reaches the agent" "$out" 'NODE-MODULES-VISIBLE'
t_like "default: untracked, unignored files are copied" "$out" 'untracked, not ignored'
t_is "default: the rule is recorded" "$(art 'a["containment_evidence"]["workspace"]["copy"]["rule"]')" git-tracked-and-unignored
t_is "default: what ignore rules left out is counted (.env, node_modules/, src/debug.log)" \
	"$(art 'a["containment_evidence"]["workspace"]["copy"]["excluded_ignored_entries"]')" 3
t_is "default: the agent's change is seen" "$(art 'a["mutations"]["modified_files"]')" "['src/edit.txt']"
t_is "default: source integrity checked under the same rules" "$(art 'a["source_integrity"]["source_unchanged"]')" True
t_unlike "default: the .env value is nowhere in the artifact" "$(cat "$REPORT")" 'CANARY-DOTENV'
check_clean "default"

# --- opting in: ignored files copied, node_modules left out by a pattern
config c "workspace:" "  include_ignored: true" "  exclude: [node_modules, 'src/*.log']"
run -- /bin/sh -c 'cd /agentguard-workspace && test -e .env && echo DOTENV-VISIBLE; test -e node_modules && echo NODE-MODULES-VISIBLE; test -e src/debug.log && echo LOG-VISIBLE; true'
t_is "opt-in: exit 0" "$AG_RC" 0
out=$(art 'a["command_result"]["stdout"]')
t_like "opt-in: .env is copied" "$out" 'DOTENV-VISIBLE'
t_unlike "opt-in: the excluded node_modules is not" "$out" 'NODE-MODULES-VISIBLE'
t_unlike "opt-in: the excluded log is not" "$out" 'LOG-VISIBLE'
t_is "opt-in: the rule is recorded" "$(art 'a["containment_evidence"]["workspace"]["copy"]["rule"]')" all-files
t_is "opt-in: each pattern's count is recorded" \
	"$(art '[(p["pattern"], p["excluded_entries"]) for p in a["containment_evidence"]["workspace"]["copy"]["exclude"]]')" \
	"[('node_modules', 1), ('src/*.log', 1)]"
t_is "opt-in: source unchanged" "$(art 'a["source_integrity"]["source_unchanged"]')" True
check_clean "opt-in"
for d in "$W"/.agentguard/contained-runs/*/; do
	t_ok "evidence verify accepts the run with its copy record ($(basename "$d"))" as_user "$AG_BIN" evidence verify "$d"
done

# --- opting in without leaving node_modules out: too large, and the message says what helps
config c "workspace: {include_ignored: true}"
run -- /bin/true
t_is "too large: fails closed before the agent (exit 4)" "$AG_RC" 4
t_is "too large: the bound is the reason" "$(art 'a["failure"]["reason"]')" limit.workspace.entries
t_like "too large: the message names the bound and the config key" "$(art 'a["failure"]["message"]')" \
	'more than 100000 entries \(limit.workspace.entries\).*workspace.exclude'
t_is "too large: the agent never ran" "$(art '(a.get("command_result") or {}).get("exit_code")')" None
check_clean "too large"
t_done
