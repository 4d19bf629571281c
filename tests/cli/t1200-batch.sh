#!/usr/bin/env bash
# t1200: `agentguard batch` on the real engine, as the unprivileged test user.
# A batch of three contained trials (two that pass, one whose agent fails)
# runs at the planned concurrency: each trial has its own runs root and
# verifying evidence, the summary's claims match that evidence, nothing is
# left behind. Run again, it resumes (no trial runs twice). Shards 1/3, 2/3
# and 3/3 run disjoint trials whose union is the list; their merge equals
# the unsharded summary (durations and run ids aside) and a merge refuses a
# shard whose evidence was altered, or whose summary lends one trial's
# evidence to another. A changed entry runs again on resume. Last, SIGINT in the middle of a batch:
# exit 130, every container gone, the cancelled trial not final, and the
# batch run again finishes it without running the others a second time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# batch_suffixes: the run labels of every trial run under $W/b*/trials.
batch_suffixes() {
	local d
	for d in "$W"/b*/trials/*/ "$W"/s*/trials/*/; do
		[ -d "$d" ] && t_run_suffixes "$d"
	done
	return 0
}
# shellcheck disable=SC2317 # called from the EXIT trap
remove_batch_runs() {
	local ids s
	local -a sfx=()
	mapfile -t sfx < <(batch_suffixes)
	for s in "${sfx[@]}"; do t_ledger_run "$s"; done
	ids=$(t_run_objects ps -- "${sfx[@]}")
	# shellcheck disable=SC2086 # one id per word
	[ -z "$ids" ] || "$AG_DOCKER" rm -f $ids >/dev/null 2>&1 || true
}
t_cleanup remove_batch_runs
batch_clean() {
	local -a sfx=()
	mapfile -t sfx < <(batch_suffixes)
	[ "${#sfx[@]}" -gt 0 ] && [ -z "$(t_run_objects ps -a -- "${sfx[@]}")" ]
}

cat >"$W/b.yaml" <<'EOF'
version: 1
trials:
  - name: ok
    config: c.yaml
    repo: repo
    argv: [/bin/sh, -c, "echo hi > /agentguard-workspace/out.txt"]
    repetitions: 2
  - name: bad
    config: c.yaml
    repo: repo
    argv: [/bin/sh, -c, "exit 3"]
EOF
chown "$U:$U" "$W/b.yaml"
# jget FILE EXPR: EXPR evaluated on the JSON document s
jget() { "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# --- the plan, nothing run
t_run as_user "$AG_BIN" batch b.yaml --plan --jobs 2
t_is "plan: exit 0" "$AG_RC" 0
t_like "plan: says the concurrency" "$AG_OUT" 'concurrency 2 for 3 trials \(asked 2\)'
t_ok "plan: nothing was run" test ! -e "$W/b1"

# --- the batch
t_run as_user "$AG_BIN" batch b.yaml --out b1 --jobs 2
t_is "batch: a failed trial exits 1" "$AG_RC" 1
S="$W/b1/batch-summary.json"
t_is "batch: counts" "$(jget "$S" '(s["trials_in_scope"], s["passed"], s["failed"], s["not_run"], s["complete"])')" "(3, 2, 1, 0, True)"
t_is "batch: pass rate" "$(jget "$S" 's["pass_rate"]')" 0.6667
t_is "batch: exit outcomes" "$(jget "$S" 'sorted(s["exit_outcomes"].items())')" "[('fail', 1), ('pass', 2)]"
t_is "batch: trial ids in file order" "$(jget "$S" '[t["id"] for t in s["trials"]]')" "['ok.1', 'ok.2', 'bad']"
t_is "batch: every trial's evidence verified" "$(jget "$S" '[t["evidence"]["verified"] for t in s["trials"]]')" "[True, True, True]"
t_is "batch: the plan is in the summary" "$(jget "$S" '(s["plan"]["jobs"], s["plan"]["asked"])')" "(2, 2)"
t_like "batch: the text summary" "$(cat "$W/b1/batch-summary.txt")" '3 trials: 2 passed, 1 failed, 0 not run'
t_like "batch: the Markdown summary" "$(cat "$W/b1/batch-summary.md")" '\| ok\.1 \| pass \|'
t_like "batch: the HTML summary" "$(cat "$W/b1/batch-summary.html")" '<td>bad</td><td>fail</td>'
ok=0
for p in $(jget "$S" '" ".join(t["evidence"]["path"] for t in s["trials"])'); do
	"$AG_BIN" evidence verify "$W/b1/$p" --public-key "$(pubkey)" >/dev/null 2>&1 || ok=1
done
t_is "batch: each trial's evidence verifies on its own" "$ok" 0
t_is "batch: the failed trial's claim is its artifact's" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command_result"]["exit_code"])' \
		"$W/b1/$(jget "$S" 's["trials"][2]["evidence"]["path"]')/contained-run.json")" 3
t_ok "batch: no container left" batch_clean
t_ok "batch: the repository untouched" repo_unchanged
t_unlike "batch: no host path or canary in any summary" \
	"$(cat "$W"/b1/batch-summary.* "$T/none" 2>/dev/null; printf '%s' "$AG_OUT")" 'CANARY|/tmp/|/home/|/root/'

runs_before=$(find "$W/b1/trials" -mindepth 2 -maxdepth 2 -type d | wc -l)

# --- run again: resumed, nothing runs twice
t_run as_user "$AG_BIN" batch b.yaml --out b1 --jobs 2
t_is "resume: exit 1 again" "$AG_RC" 1
t_is "resume: every trial resumed" "$(jget "$S" '[t["resumed"] for t in s["trials"]]')" "[True, True, True]"
t_is "resume: no new run" "$(find "$W/b1/trials" -mindepth 2 -maxdepth 2 -type d | wc -l)" "$runs_before"
t_like "resume: said per trial" "$AG_OUT" 'ok\.1 pass \(resumed\)'

# --- shards, and their merge
for k in 1 2 3; do
	t_run as_user "$AG_BIN" batch b.yaml --out "s$k" --shard "$k/3" --quiet --json
	t_is "shard $k/3: one trial" "$(jget "$W/s$k/batch-summary.json" 's["trials_in_scope"]')" 1
done
t_is "shards: disjoint, and their union is the list" \
	"$(for k in 1 2 3; do jget "$W/s$k/batch-summary.json" 's["trials"][0]["index"]'; done | sort | tr '\n' ' ')" "0 1 2 "
t_run as_user "$AG_BIN" batch merge s1 s2 s3 --out m
t_is "merge: exit 1 (one trial failed)" "$AG_RC" 1
norm='[(t["id"], t["entry"], t["repetition"], t["index"], t["mode"], t["exit_code"], t["exit_name"], t["result"], t["outcome"], t["evidence"]["verified"]) for t in s["trials"]] + [s["trials_total"], s["trials_in_scope"], s["passed"], s["failed"], s["not_run"], s["pass_rate"], s["complete"], sorted(s["exit_outcomes"].items())]'
t_is "merge: equals the unsharded summary" "$(jget "$W/m/batch-summary.json" "$norm")" "$(jget "$S" "$norm")"
t_is "merge: says it merged three shards" "$(jget "$W/m/batch-summary.json" 's["merged_shards"]')" 3
ag_must_fail 1 batch.merge.shards "merge: a missing shard is refused" as_user "$AG_BIN" batch merge s1 s2 --out m2
ag_must_fail 1 batch.merge.shards "merge: a shard given twice is refused" as_user "$AG_BIN" batch merge s1 s1 s2 --out m2
a=$(find "$W/s2/trials" -name contained-run.json | head -n 1)
sed -i 's/"result":"PASS"/"result":"FAIL"/; t; s/"result":"FAIL"/"result":"PASS"/' "$a"
ag_must_fail 1 batch.merge.evidence "merge: a shard whose evidence was altered is refused" \
	as_user "$AG_BIN" batch merge s1 s2 s3 --out m3
t_ok "merge: the refused merge wrote no summary" test ! -e "$W/m3/batch-summary.json"
# a shard summary (unsigned) that lends another trial's passing run to the
# failed one: the identities do not add up (s2's artifact restored first)
sed -i 's/"result":"PASS"/"result":"FAIL"/; t; s/"result":"FAIL"/"result":"PASS"/' "$a"
t_run as_user "$AG_BIN" batch merge s1 s2 s3 --out m5
t_is "merge: the restored shard merges again" "$AG_RC" 1
t_like "merge: ... with every trial's evidence verified" "$(jget "$W/m5/batch-summary.json" '[t["evidence"]["verified"] for t in s["trials"]]')" "\[True, True, True\]"
"$PY" - "$W/s3/batch-summary.json" <<'PY'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
t = s["trials"][0]
t["id"], t["entry"], t["repetition"] = "ok.1", "ok", 1
json.dump(s, open(p, "w"))
PY
ag_must_fail 1 batch.merge.identity "merge: a record claiming another trial's identity is refused" \
	as_user "$AG_BIN" batch merge s1 s2 s3 --out m4

# --- resume binds a run to its entry as it is now: a changed argv runs again
sed -i 's/exit 3/exit 4/' "$W/b.yaml"
t_run as_user "$AG_BIN" batch b.yaml --out b1 --jobs 2
t_is "changed entry: the unchanged trials resume, the changed one runs again" \
	"$(jget "$S" '[(t["id"], t["resumed"], t["exit_name"]) for t in s["trials"]]')" \
	"[('ok.1', True, 'pass'), ('ok.2', True, 'pass'), ('bad', False, 'fail')]"
t_is "changed entry: its new run is the one recorded" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command_result"]["exit_code"])' \
		"$W/b1/$(jget "$S" 's["trials"][2]["evidence"]["path"]')/contained-run.json")" 4
t_ok "changed entry: no container left" batch_clean

# --- SIGINT in the middle, then resume
cat >"$W/b2.yaml" <<'EOF'
version: 1
trials:
  - name: quick
    config: c.yaml
    repo: repo
    argv: [/bin/true]
  - name: slow
    config: c.yaml
    repo: repo
    argv: [/bin/sleep, "10"]
EOF
chown "$U:$U" "$W/b2.yaml"
PIDFILE="$W/batch.pid" as_user "$AG_BIN" batch b2.yaml --out b2 --jobs 2 >"$T/b2.out" 2>&1 &
bpid=$!
# until the slow trial's container runs (bounded: 60 s)
slow_running() {
	local d s
	d=$(find "$W/b2/trials/slow" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
	[ -n "$d" ] || return 1
	s=$(run_suffix "$d")
	[ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ]
}
# and until the quick trial has ended (its run bound to the entry: written
# once its process is gone): on a loaded machine the slow trial's container
# can be running before the quick one is done
quick_done() { compgen -G "$W/b2/trials/quick/.batch-run-*" >/dev/null; }
for _ in $(seq 1 300); do
	slow_running && quick_done && break
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.2
done
t_ok "sigint: the slow trial's container ran" slow_running
t_ok "sigint: the quick trial had ended" quick_done
kill -INT "$(cat "$W/batch.pid")"
rc=0
wait "$bpid" || rc=$?
t_is "sigint: the batch exits 130" "$rc" 130
S2="$W/b2/batch-summary.json"
t_is "sigint: the slow trial was cancelled, not final" "$(jget "$S2" '[(t["id"], t["exit_name"]) for t in s["trials"]]')" "[('quick', 'pass'), ('slow', 'cancelled')]"
t_is "sigint: the summary says incomplete" "$(jget "$S2" '(s["complete"], s["not_run"])')" "(False, 1)"
t_ok "sigint: no container left" batch_clean
t_ok "sigint: the cancelled run's artifact verifies" "$AG_BIN" evidence verify "$W/b2/$(jget "$S2" 's["trials"][1]["evidence"]["path"]')" --public-key "$(pubkey)"
t_run as_user "$AG_BIN" batch b2.yaml --out b2 --jobs 2
t_is "resume after sigint: exit 0" "$AG_RC" 0
t_is "resume after sigint: quick resumed, slow run again" "$(jget "$S2" '[(t["id"], t["exit_name"], t["resumed"]) for t in s["trials"]]')" "[('quick', 'pass', True), ('slow', 'pass', False)]"
t_is "resume after sigint: the cancelled attempt is kept" "$(find "$W/b2/trials/slow" -mindepth 1 -maxdepth 1 -type d | wc -l)" 2
t_ok "resume after sigint: no container left" batch_clean
t_done
