#!/usr/bin/env bash
# t1058: what a person reads after a run: yes/no and "none", never
# True/False or a backtick, in the terminal summary and the text, md and
# html reports; a rename counts as one changed file; a cancelled run shows
# no score; the reports show the agent's last output lines (redacted,
# escaped) and how many ignored files the copy left out; `evidence verify`
# explains a chain segment that starts because the runs root was empty; a
# run refused at preflight shows no change counts (the agent never ran).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c "expected_modified_files: {min: 1, max: 1}"
sed -i '/^expected_modified_files: {min: 0, max: 50}$/d' "$W/c.yaml"
# a git repository with one ignored file, so the copy leaves one out
make_repo
printf 'ignored.log\n' >"$W/repo/.gitignore"
printf 'noise\n' >"$W/repo/ignored.log"
test_git "$W/repo" init -q
test_git "$W/repo" add -A
test_git "$W/repo" commit -qm base
chown -R "$U:$U" "$W/repo"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"

reports() { # RUN_DIR: text, md and html reports in $T/r.{text,md,html}
	local f
	for f in text md html; do
		"$AG_BIN" report --format "$f" --public-key "$(pubkey)" "$1" >"$T/r.$f" 2>&1 || true
	done
}
no_python_words() { # DESC FILE
	t_ok "$1: no True/False" bash -c '! grep -qwE "True|False" "$1"' _ "$2"
	t_ok "$1: no backtick" bash -c '! grep -qF "\`" "$1"' _ "$2"
}

# --- one rename (and output with a secret and a markup-looking last line)
AGENT='cd /agentguard-workspace && mv docs/old-name.md docs/moved.md &&
echo "first line" && echo "token $AGENT_API_TOKEN here" && echo "<b>LAST-LINE-CANARY-5e1f</b> & more"'
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c "$AGENT"
ledger_runs
t_is "rename run: passes" "$AG_RC" 0
printf '%s\n' "$AG_OUT" >"$T/summary.txt"
t_like "summary: cleanup complete says yes" "$AG_OUT" 'Cleanup complete: yes \('
no_python_words "summary" "$T/summary.txt"
RUN=$(ls -td "$W"/.agentguard/contained-runs/*/ | head -1)
REPORT=${RUN}contained-run.json
t_is "a rename counts as one changed file (scope within 1..1)" \
	"$(art '[c["message"] for c in a["checks"] if c["name"] == "scope-adherence"]')" \
	"['Changed 1 files within the expected scope.']"
t_is "the artifact counts it once" "$(art 'a["mutations"]["changed_files_total"]')" 1
t_is "the copy left out the ignored file" \
	"$(art 'a["containment_evidence"]["workspace"]["copy"]["excluded_ignored_entries"]')" 1
reports "$RUN"
for f in text md html; do
	no_python_words "$f report" "$T/r.$f"
	t_ok "$f report: the secret is not in it" bash -c '! grep -qF CANARY-SENSITIVE-91c2 "$1"' _ "$T/r.$f"
	t_like "$f report: the secret's line is there, redacted" "$(cat "$T/r.$f")" 'token \[REDACTED\] here'
	t_like "$f report: how many ignored files were left out" "$(cat "$T/r.$f")" '1 ignored file left out of the copy'
done
t_like "text report: the agent's last line" "$(cat "$T/r.text")" $'\n  \\| <b>LAST-LINE-CANARY-5e1f</b> & more\n'
t_like "md report: the agent's last line, escaped" "$(cat "$T/r.md")" '&lt;b&gt;LAST-LINE-CANARY-5e1f&lt;/b&gt; &amp; more'
t_like "html report: the agent's last line, escaped" "$(cat "$T/r.html")" '&lt;b&gt;LAST-LINE-CANARY-5e1f&lt;/b&gt; &amp; more'
t_unlike "html report: never as markup" "$(cat "$T/r.html")" '<b>LAST-LINE'
t_like "text report: the output section says what it shows" "$(cat "$T/r.text")" "Agent output: stdout, 3 lines \\(redacted\\)"

# the first run of this runs root starts the chain: explained
t_run "$AG_BIN" evidence verify --public-key "$(pubkey)" "$RUN"
t_like "evidence verify explains the empty chain segment" "$AG_OUT" \
	'chain: this run starts a chain segment \(empty\): it is the first run sealed in this runs root'

# --- no change: "none", and a failing check quoted without backticks
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c 'exit 3'
ledger_runs
printf '%s\n' "$AG_OUT" >"$T/summary2.txt"
t_like "no change: changed files none" "$AG_OUT" $'Changed files:\n- none\n'
t_like "no change: a failed check quotes its command plainly" "$AG_OUT" "tests-passed \\(error\\): 'contained-run' exited 3"
no_python_words "failing summary" "$T/summary2.txt"
RUN=$(ls -td "$W"/.agentguard/contained-runs/*/ | head -1)
reports "$RUN"
for f in text md html; do no_python_words "failing $f report" "$T/r.$f"; done
t_like "html report: a quoted name is a code element" "$(cat "$T/r.html")" '<code>contained-run</code> exited 3'

# --- cancelled: no score, in the terminal and in the report
PIDFILE="$W/cancel.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c 'sleep 60' >"$T/cancel.out" 2>&1 &
pid=$!
if wait_running; then
	sleep 0.5
	kill -TERM "$(cat "$W/cancel.pid")" || true
	rc=0
	wait "$pid" || rc=$?
	ledger_runs
	t_is "cancel: exit 143" "$rc" 143
	t_like "cancel: the terminal shows no score" "$(cat "$T/cancel.out")" 'Score: none \(the run was cancelled\)'
	t_unlike "cancel: no number as a score" "$(cat "$T/cancel.out")" 'Score: [0-9]'
	RUN=$(ls -td "$W"/.agentguard/contained-runs/*/ | head -1)
	reports "$RUN"
	t_like "cancel: the text report shows no score" "$(cat "$T/r.text")" 'score none \(the run was cancelled\)'
	t_like "cancel: nor the html report" "$(cat "$T/r.html")" 'none \(the run was cancelled\)'
else
	wait "$pid" || true
	ledger_runs
	t_fail "cancel: the run's container was running within 10 s" "$(tail -n 5 "$T/cancel.out")"
fi
# --- refused at preflight (an image that is not on the engine): the
# reports say the agent never ran, not "0 changed files" as if it had
absent=${AG_TEST_IMAGE%@*}@sha256:$(printf '1%.0s' $(seq 64))
sed "s|$AG_TEST_IMAGE|$absent|" "$W/c.yaml" >"$W/absent.yaml"
chown "$U:$U" "$W/absent.yaml"
t_run as_user "$AG_BIN" contained-run "$W/absent.yaml" --repo repo -- /bin/true
ledger_runs
t_is "refused at preflight: exit 3" "$AG_RC" 3
t_like "refused at preflight: the summary says the agent did not run" "$AG_OUT" 'Changed files: none \(the agent did not run\)'
RUN=$(ls -td "$W"/.agentguard/contained-runs/*/ | head -1)
reports "$RUN"
for f in text md html; do
	t_like "refused at preflight: $f report: no changes, the agent never ran" "$(cat "$T/r.$f")" 'none \(the agent never ran\)'
	t_unlike "refused at preflight: $f report: no file counts" "$(cat "$T/r.$f")" '0 modified|<th>Modified</th>'
done
# --- no backtick in any command's --help either (a terminal shows it raw)
for cmd in validate schema init render preflight contained-run study-egress report evidence cleanup patch runtime-image; do
	t_run "$AG_BIN" "$cmd" --help
	t_unlike "$cmd --help: no backtick" "$AG_OUT" '`'
done
check_clean "wording runs"
t_done
