#!/usr/bin/env bash
# t1020: crash recovery leaves the repository usable (issue 18, item 8).
# The runs root lies inside the source repository; AgentGuard is SIGKILLed
# mid-run; `agentguard cleanup` recovers the run and signs a recovery
# record; the next contained run in the same repository is accepted by the
# repository audit (exit 0), and `report --list` shows the crashed run as
# `recovered`, never INVALID and never with a result. A directory planted to
# look like a crashed run (a forged marker) is not recovered, and a tampered
# recovery record is refused again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
RR="$W/repo/.agentguard/contained-runs"
RRARG=repo/.agentguard/contained-runs

# The helpers of lib-contained.sh look in $W/.agentguard; these look in $RR.
rr_runs() { ls -1d "$RR"/*/ 2>/dev/null | sort; }
rr_remove() {
	local d s id
	for d in $(rr_runs); do
		s=$(run_suffix "$d")
		t_ledger_run "$s"
		for id in $("$AG_DOCKER" ps -aq --no-trunc --filter "label=agentguard.contained-run.id=$s" \
			--filter label=agentguard.owner=contained-run); do
			"$AG_DOCKER" rm -f -v "$id" >/dev/null 2>&1 || true
		done
	done
}
t_cleanup rr_remove
rr_running() { # (30 s max: a loaded engine is slow to start a container)
	local d s
	for _ in $(seq 1 300); do
		d=$(rr_runs | tail -n 1)
		if [ -n "$d" ]; then
			s=$(run_suffix "$d")
			t_ledger_run "$s"
			[ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ] && return 0
		fi
		sleep 0.1
	done
	return 1
}
rr_no_containers() {
	local d s
	for d in $(rr_runs); do
		s=$(run_suffix "$d")
		[ -z "$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$s")" ] || return 1
	done
	return 0
}

# 1. A run in the repository's own runs root, SIGKILLed mid-run.
PIDFILE="$W/ag.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" \
	-- /bin/sleep 120 >/dev/null 2>&1 &
runner=$!
for _ in $(seq 1 50); do [ -s "$W/ag.pid" ] && break; sleep 0.1; done
agpid=$(cat "$W/ag.pid")
t_ok "crash: the run's container is running" rr_running
kill -KILL "$agpid" 2>/dev/null || true
wait "$runner" 2>/dev/null || true
crashed=$(basename "$(rr_runs | tail -n 1)")
t_like "crash: the run directory is in the repository's runs root" "$crashed" '-contained-'
t_ok "crash: the killed run left no artifact" test ! -e "$RR/$crashed/contained-run.json"

# 2. cleanup recovers it and records that, signed with the local key.
t_run as_user "$AG_BIN" cleanup --runs-root "$RRARG"
t_is "cleanup: exit 0" "$AG_RC" 0
t_like "cleanup: the run is recovered" "$AG_OUT" '1 recovered, 0 still running, 0 incomplete'
t_ok "cleanup: the run's container is gone" rr_no_containers
t_ok "cleanup: a recovery record is written" test -s "$RR/$crashed/recovered.json"
t_ok "cleanup: and its signature" test -s "$RR/$crashed/recovered.sig"
rec=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["schema"], r["run_id"]==sys.argv[2], r["outcome"], r["signer"][:8])' \
	"$RR/$crashed/recovered.json" "$crashed" 2>&1 || true)
t_is "cleanup: the record names the run, claims no result, names its signer" "$rec" \
	"agentguard.recovered-run True unknown ed25519:"
t_run as_user "$AG_BIN" cleanup --runs-root "$RRARG"
t_like "cleanup again: a recovered run is not examined again" "$AG_OUT" '0 run\(s\) examined'

# 3. The next run in the same repository works.
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" -- /bin/true
t_is "next run: exit 0 (the repository audit accepts the recovered run)" "$AG_RC" 0
t_unlike "next run: no agentguard_foreign refusal" "$AG_OUT" 'agentguard_foreign'

# 4. report --list: recovered, never INVALID, no result for the crashed run.
t_run as_user "$AG_BIN" report --list --runs-root "$RRARG"
t_is "report --list: exit 0" "$AG_RC" 0
t_unlike "report --list: no INVALID" "$AG_OUT" 'INVALID'
line=$(printf '%s\n' "$AG_OUT" | grep -F "$crashed" || true)
t_like "report --list: the crashed run is recovered" "$line" 'recovered'
t_like "report --list: with no result and no exit code" "$line" "^$crashed  -     exit -  "
t_run as_user "$AG_BIN" report --list --runs-root "$RRARG" --json
state=$(printf '%s\n' "$AG_OUT" | "$PY" -c 'import json,sys,collections
d=json.load(sys.stdin); print(sorted(collections.Counter(r["state"] for r in d["runs"]).items()), [r["result"] for r in d["runs"] if r["run_id"]==sys.argv[1]])' "$crashed" 2>&1 || true)
t_is "report --list --json: one recovered (result null), one verified" "$state" \
	"[('recovered', 1), ('verified', 1)] [None]"

# 5. A planted "crashed run" (a forged marker naming a dead process) is not
# recovered: cleanup cannot attribute it to AgentGuard, so it signs nothing.
fake="20261201T000000Z-t0400-contained-deadbeef"
mkdir "$RR/$fake"
"$PY" -c 'import json,sys
m={"schema":"agentguard.contained-run-artifact","schema_version":1,"owner":"agentguard",
"artifact_kind":"contained-run","run_id":sys.argv[1],"lifecycle_state":"created",
"owner_pid":999999,"owner_start_ticks":1}
open(sys.argv[2],"w").write(json.dumps(m,sort_keys=True,separators=(",",":"))+"\n")' \
	"$fake" "$RR/$fake/agentguard-contained-run-artifact.json"
chown -R "$U:$U" "$RR/$fake"
t_run as_user "$AG_BIN" cleanup --runs-root "$RRARG"
t_is "planted: cleanup does not call it complete (exit 8)" "$AG_RC" 8
t_like "planted: cleanup says why" "$AG_OUT" "$fake: .*not signed"
t_ok "planted: no recovery record is written for it" test ! -e "$RR/$fake/recovered.json"
ag_must_fail 4 workspace.agentguard_foreign "planted: the next run is refused" \
	as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" -- /bin/true
rm -rf "${RR:?}/$fake"

# 6. A recovery record edited after cleanup signed it no longer vouches.
cp -p "$RR/$crashed/recovered.json" "$T/recovered.json"
sed -i 's/"outcome":"unknown"/"outcome":"passed"/' "$RR/$crashed/recovered.json"
ag_must_fail 4 workspace.agentguard_foreign "tampered: the next run is refused" \
	as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" -- /bin/true
t_run as_user "$AG_BIN" report --list --runs-root "$RRARG"
t_like "tampered: report --list calls it INVALID" "$(printf '%s\n' "$AG_OUT" | grep -F "$crashed")" 'INVALID'
cp -p "$T/recovered.json" "$RR/$crashed/recovered.json"

# 7. The recovered run copied under another name is not a recovered run.
cp -a "$RR/$crashed" "$RR/${crashed}x"
ag_must_fail 4 workspace.agentguard_foreign "renamed copy: the next run is refused" \
	as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" -- /bin/true
rm -rf "${RR:?}/${crashed}x"
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$RRARG" -- /bin/true
t_is "restored: the next run works again" "$AG_RC" 0
t_ok "no container of any run is left" rr_no_containers
t_done
