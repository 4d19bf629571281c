#!/usr/bin/env bash
# t1010: a closed terminal ends a contained run like SIGTERM does. AgentGuard
# runs in its own session and process group (setsid), the agent sleeps long;
# once its container runs, SIGHUP goes to the whole process group (what a
# terminal hangup does). AgentGuard must exit 128+1, its container must be
# gone (by this run's label), and the artifact must exist and verify.
# Then SIGQUIT the same way (131). Before the fix SIGHUP killed AgentGuard at
# once and left the agent's container running.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

. "$(dirname "$0")/lib-contained.sh"
t_cleanup remove_run_containers

config c
make_repo

# signal_group SIG DESC: a run in its own process group, SIG to the group
# once the container runs; sets $rc and $REPORT.
# running_or_gone PID: until the newest run's container runs (0), or the
# process PID ended first (1); bounded (60 s).
running_or_gone() {
	local d s
	for _ in $(seq 1 300); do
		d=$(ls -1d "$W"/.agentguard/contained-runs/*/ 2>/dev/null | sort | tail -n 1)
		s=
		[ -n "$d" ] && s=$(run_suffix "$d")
		[ -n "$s" ] && [ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

signal_group() {
	local sig=$1 out="$T/$2.out" pid pgid up=1
	# A shared, loaded engine can fail the preflight (docker.engine.timeout)
	# before the agent starts: such a run is retried, at most three times.
	for attempt in 1 2 3; do
		rm -f "$W/sig.pid"
		PIDFILE="$W/sig.pid" as_user setsid "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json \
			-- /bin/sleep 120 >"$out" 2>&1 &
		pid=$!
		if running_or_gone "$pid"; then
			up=0
			break
		fi
		wait "$pid" 2>/dev/null || true
		ledger_runs
		diag "$2: attempt $attempt ended before its container ran: $(grep -m1 -o '"failure_reason":"[^"]*"' "$out" || true)"
	done
	t_is "$2: the agent's container is running" "$up" 0
	# setsid(1) execs in place (runuser's child is no group leader), so the
	# recorded pid leads the new process group.
	pgid=$(cat "$W/sig.pid")
	t_is "$2: AgentGuard leads its own process group" "$(ps -o pgid= -p "$pgid" | tr -d ' ')" "$pgid"
	kill -s "$sig" -- "-$pgid"
	rc=0
	# bounded: a run that ignores the signal is killed after 60 s
	(sleep 60 && kill -KILL -- "-$pgid" 2>/dev/null) &
	local guard=$!
	wait "$pid" || rc=$?
	kill "$guard" 2>/dev/null || true
	REPORT=$(grep -m1 '^{' "$out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get("report") or "")' 2>/dev/null || true)
	[ -n "$REPORT" ] && REPORT="$W/$REPORT"
	ledger_runs
}

for case in "HUP 129 hangup" "QUIT 131 quit"; do
	read -r sig code name <<<"$case"
	signal_group "$sig" "$name"
	t_is "$name: AgentGuard exits 128+N ($code)" "$rc" "$code"
	t_ok "$name: no container of the run is left (by its label)" no_containers
	t_ok "$name: the artifact exists" test -f "${REPORT:-/nonexistent}"
	if [ -f "${REPORT:-/nonexistent}" ]; then
		t_is "$name: the artifact says cancelled" "$(art '(a["command_result"]["outcome"], a["failure"]["stage"])')" "('cancelled', 'cancelled')"
		t_ok "$name: the artifact verifies" "$AG_BIN" evidence verify "$(dirname "$REPORT")" --public-key "$(pubkey)"
	else
		t_fail "$name: the artifact says cancelled"
		t_fail "$name: the artifact verifies"
	fi
	t_ok "$name: the source repository is untouched" repo_unchanged
done

# --- SIGPIPE: the reader of AgentGuard's output goes away mid-run. The
# agent prints a line a second; the reader reads one line and exits, so
# the next live line raises SIGPIPE: the run ends as cancelled (141), the
# container is removed, the artifact verifies.
# (a preflight the loaded shared engine failed, exit 3, is retried: at most 3)
for attempt in 1 2 3; do
	rm -f "$W/pipe.rc"
	(
		set +e
		as_user bash -c '"$@" 2>/dev/null; echo $? >"'"$W"'/pipe.rc"' _ \
			"$AG_BIN" contained-run "$W/c.yaml" --repo repo -- \
			/bin/sh -c 'while :; do echo tick; sleep 1; done' | head -n 1 >/dev/null
	) &
	pipe_job=$!
	for _ in $(seq 1 600); do [ -s "$W/pipe.rc" ] && break; sleep 0.1; done
	wait "$pipe_job" || true
	[ "$(cat "$W/pipe.rc" 2>/dev/null)" = 3 ] || break
	ledger_runs
	diag "pipe: attempt $attempt: the preflight failed (exit 3)"
done
t_is "pipe: AgentGuard exits 141 (SIGPIPE)" "$(cat "$W/pipe.rc" 2>/dev/null)" 141
t_ok "pipe: no container of the run is left (by its label)" no_containers
newest=$(ls -1d "$W"/.agentguard/contained-runs/*/ 2>/dev/null | sort | tail -n 1)
REPORT="${newest}contained-run.json"
ledger_runs
t_ok "pipe: the artifact exists" test -f "$REPORT"
if [ -f "$REPORT" ]; then
	t_is "pipe: the artifact says cancelled" "$(art 'a["command_result"]["outcome"]')" cancelled
	t_ok "pipe: the artifact verifies" "$AG_BIN" evidence verify "$(dirname "$REPORT")" --public-key "$(pubkey)"
else
	t_fail "pipe: the artifact says cancelled"
	t_fail "pipe: the artifact verifies"
fi

t_done
