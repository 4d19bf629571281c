#!/usr/bin/env bash
# t0420: `agentguard cleanup` treats a zombie AgentGuard as dead (issue 9,
# finding 16). Under a PID 1 that never reaps (common in CI containers), an
# AgentGuard killed mid-run stays a zombie: its pid and start time are still
# in /proc, but it will never clean up its container. A real zombie is made
# here: AgentGuard runs as the child of a process that exec'd `sleep` (which
# never waits), and is then SIGKILLed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
t_cleanup remove_run_containers

# The parent: a shell that starts AgentGuard in the background, records its
# pid, then becomes `sleep`, which never reaps a child.
as_user bash -c '"$1" contained-run "$2" --repo repo -- /bin/sleep 120 >/dev/null 2>&1 &
echo $! >"$3"; echo $$ >"$4"; exec /bin/sleep 120' _ "$AG_BIN" "$W/c.yaml" "$W/ag.pid" "$W/parent.pid" &
for _ in $(seq 1 50); do [ -s "$W/parent.pid" ] && break; sleep 0.1; done
agpid=$(cat "$W/ag.pid")
parent=$(cat "$W/parent.pid")
t_cleanup kill "$parent"
t_ok "the run's container is running" wait_running
kill -KILL "$agpid"
state=
for _ in $(seq 1 50); do
	state=$(awk '{print $3}' "/proc/$agpid/stat" 2>/dev/null || true)
	[ "$state" = Z ] && break
	sleep 0.1
done
t_is "the killed AgentGuard is a zombie (never reaped)" "$state" Z
marker=$(ls -1 "$W"/.agentguard/contained-runs/*/agentguard-contained-run-artifact.json | tail -n 1)
t_is "the run's marker names the zombie as its owner" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["owner_pid"])' "$marker")" "$agpid"
t_run no_containers
t_is "the crash left the container behind" "$AG_RC" 1

t_run as_user "$AG_BIN" cleanup
t_is "cleanup: exit 0" "$AG_RC" 0
t_like "cleanup: the zombie's run is recovered, not taken for live" "$AG_OUT" '1 recovered, 0 still running'
t_ok "cleanup: the run's container is gone" no_containers
t_ok "cleanup: no workspace is left" bash -c '! ls -d "$1"/.agentguard/contained-runs/*/workspace-lifecycle 2>/dev/null | grep -q .' _ "$W"

# A live AgentGuard (same pid, same start time, running) is still left alone.
PIDFILE="$W/live.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sleep 120 >/dev/null 2>&1 &
runner=$!
for _ in $(seq 1 50); do [ -s "$W/live.pid" ] && break; sleep 0.1; done
live=$(cat "$W/live.pid")
t_cleanup kill "$live"
t_ok "live: the second run's container is running" wait_running
t_run as_user "$AG_BIN" cleanup
t_like "live: a running AgentGuard's run is left alone" "$AG_OUT" '0 recovered, 1 still running'
t_run no_containers
t_is "live: its container is untouched" "$AG_RC" 1
kill -TERM "$live"
wait "$runner" || true
t_ok "live: the cancelled run cleaned up after itself" no_containers

# The zombie goes to PID 1 with its parent (whether PID 1 reaps it is the
# machine's business, which is the point of this test).
kill "$parent" 2>/dev/null || true
wait 2>/dev/null || true
t_done
