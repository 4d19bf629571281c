#!/usr/bin/env bash
# t0581: the runs root's chain lock (issue 9, finding 13). With the lock held
# by another process, a run waits a bounded time, then fails with a named
# reason (evidence.seal.lock_timeout, exit 4) and still leaves a signed
# artifact, sealed outside the chain, that says so. A SIGTERM while it waits
# ends the run cleanly within a second or two (exit 143, artifact says
# evidence.seal.cancelled, the container is gone). Before the fix the run
# waited forever and ignored SIGTERM.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
R="$W/.agentguard/contained-runs"
run -- /bin/true
t_is "a first run: exit 0" "$AG_RC" 0
HEAD0=$(cat "$R/agentguard-chain-head.json")

# hold_lock: another process holds the chain lock until killed ($HOLDER).
hold_lock() {
	rm -f "$T/ready"
	"$PY" -c 'import fcntl, sys, time
f = open(sys.argv[1], "r+")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(120)' "$R/.agentguard-chain.lock" "$T/ready" &
	HOLDER=$!
	t_cleanup kill "$HOLDER"
	for _ in $(seq 1 50); do [ -e "$T/ready" ] && break; sleep 0.1; done
}

# --- a lock held past the bound: a named failure, not a hang
hold_lock
start=$(date +%s)
run -- /bin/true
took=$(($(date +%s) - start))
t_is "held lock: exit 4" "$AG_RC" 4
t_like "held lock: the reason is named" "$AG_OUT" '"failure_reason":"evidence.seal.lock_timeout"'
t_like "held lock: says the artifact is signed outside the chain" "$AG_OUT" 'sealed and signed outside the runs root.s chain \[evidence.chain.lock_timeout\]'
t_ok "held lock: bounded (under 60 s, took ${took}s)" test "$took" -lt 60
t_is "held lock: the artifact records the failure" "$(art 'a["failure"]["reason"]')" evidence.seal.lock_timeout
t_ok "held lock: the artifact still verifies (signed)" as_user "$AG_BIN" evidence verify "$(dirname "$REPORT")"
t_is "held lock: its seal says it is outside the chain" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain_start"])' "$(dirname "$REPORT")/contained-run.seal.json")" lock_timeout
t_is "held lock: the head was not moved" "$(cat "$R/agentguard-chain-head.json")" "$HEAD0"

# --- SIGTERM while waiting for the lock ends the run cleanly
PIDFILE="$W/ag.pid"
rm -f "$PIDFILE"
(PIDFILE="$PIDFILE" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- /bin/true >"$T/term.out" 2>&1 && echo 0 >"$T/term.rc" || echo $? >"$T/term.rc") &
waiting=
for _ in $(seq 1 300); do
	d=$(ls -1td "$R"/*/ | head -n 1)
	if [ -e "$d/contained-run.json" ] && [ ! -e "$d/contained-run.seal.json" ] && [ "$d" != "$(dirname "$REPORT")/" ]; then
		waiting=$d
		break
	fi
	sleep 0.1
done
t_ok "the run reached the lock wait" test -n "$waiting"
sleep 0.5
kill -TERM "$(cat "$PIDFILE")"
t0=$(date +%s%N)
for _ in $(seq 1 100); do [ -e "$T/term.rc" ] && break; sleep 0.1; done
ms=$((($(date +%s%N) - t0) / 1000000))
t_is "SIGTERM: exit 143" "$(cat "$T/term.rc" 2>/dev/null)" 143
t_ok "SIGTERM: ended promptly (${ms} ms)" test "$ms" -lt 5000
t_like "SIGTERM: the reason is named" "$(cat "$T/term.out")" '"failure_reason":"evidence.seal.cancelled"'
t_ok "SIGTERM: the artifact verifies" as_user "$AG_BIN" evidence verify "$waiting"
t_is "SIGTERM: its seal says cancelled" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain_start"])' "$waiting/contained-run.seal.json")" cancelled
kill "$HOLDER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true

# --- the lock free again: runs link as before
run -- /bin/true
t_is "after the holder: exit 0" "$AG_RC" 0
t_unlike "after the holder: no warning" "$AG_OUT" 'warning'
t_ok "no AgentGuard container is left" no_containers

t_done
