#!/usr/bin/env bash
# t1011: the agent never outlives its timeout, even when AgentGuard is
# SIGKILLed mid-run. The in-container init (agentguard-init, the agent's
# entrypoint) holds the deadline on its own: with --timeout 8 and an agent
# that sleeps 120 s, the container must have stopped within 8 s plus a small
# grace of its start, with AgentGuard dead; `agentguard cleanup` then leaves
# nothing. Before the init the container ran on for the whole 120 s.
# Also: the argv reaches the child exactly (spaces, leading dashes, empty
# strings, --help, the init's own "--"), a normal run's exit code and output
# are unchanged, the timeout with AgentGuard alive is still exit 7 and says
# which deadline held, and the agent's environment is only the allowlist.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

. "$(dirname "$0")/lib-contained.sh"
t_cleanup remove_run_containers

config c
make_repo

# newest_suffix: the container label value of the newest run of $W
newest_suffix() {
	local d
	d=$(ls -1d "$W"/.agentguard/contained-runs/*/ 2>/dev/null | sort | tail -n 1)
	[ -n "$d" ] && run_suffix "$d"
}

# --- SIGKILL AgentGuard ~2 s after its container starts
# running_or_gone PID: until the newest run's container runs (0), or AgentGuard
# PID ended first (1); bounded (60 s).
running_or_gone() {
	local s
	for _ in $(seq 1 300); do
		s=$(newest_suffix)
		[ -n "$s" ] && [ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}
# A shared, loaded engine can fail the preflight (docker.engine.timeout)
# before the agent starts: such a run is retried, at most three times.
running=1
for attempt in 1 2 3; do
	rm -f "$W/kill.pid"
	PIDFILE="$W/kill.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --timeout 8 \
		-- /bin/sleep 120 >"$T/kill.out" 2>&1 &
	job=$!
	if running_or_gone "$job"; then
		running=0
		break
	fi
	wait "$job" 2>/dev/null || true
	ledger_runs
	diag "kill: attempt $attempt ended before its container ran: $(grep -m1 '^Failure:' "$T/kill.out" 2>/dev/null || true)"
done
t_is "kill: the agent's container is running" "$running" 0
[ "$running" = 0 ] || diag "kill: AgentGuard said: $(tail -n 2 "$T/kill.out" 2>/dev/null || true)"
start=$(date +%s%N)
s=$(newest_suffix || true)
sleep 2
kill -KILL "$(cat "$W/kill.pid")" 2>/dev/null || true
wait "$job" 2>/dev/null || true
t_ok "kill: AgentGuard is dead" bash -c '! kill -0 "$1" 2>/dev/null' _ "$(cat "$W/kill.pid" 2>/dev/null || echo 0)"
stopped_ms=
while :; do # bounded: 30 s of wall time, however slow the engine answers
	now_ms=$((($(date +%s%N) - start) / 1000000))
	[ "$now_ms" -le 30000 ] || break
	if [ -z "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ]; then
		stopped_ms=$now_ms
		break
	fi
	sleep 0.1
done
diag "kill: the container stopped ${stopped_ms:-never} ms after it was seen running"
t_ok "kill: the container stopped within 8 s + 5 s of being seen running, AgentGuard dead" \
	test -n "$stopped_ms" -a "${stopped_ms:-99999}" -le 13000
id=$("$AG_DOCKER" ps -aq --no-trunc --filter "label=agentguard.contained-run.id=$s" | head -n 1)
t_ok "kill: the stopped container is still there for cleanup" test -n "$id"
if [ -n "$id" ]; then
	# the engine's own clock: from the container's start to its end
	ran=$("$AG_DOCKER" inspect -f '{{.State.StartedAt}} {{.State.FinishedAt}}' "$id" |
		"$PY" -c 'import sys,datetime as d
def t(s):
    s=s.rstrip("Z"); b,_,f=s.partition("."); return d.datetime.fromisoformat(b).timestamp()+float("0."+(f or "0"))
a,b=sys.stdin.read().split(); print(int((t(b)-t(a))*1000) if not b.startswith("0001") else 999999)')
	diag "kill: the container ran ${ran} ms by the engine's clock"
	t_ok "kill: by the engine's clock it ran at least 8 s and at most 8 s + 5 s" \
		test "$ran" -ge 8000 -a "$ran" -le 13000
	t_is "kill: the init's deadline status (124)" \
		"$("$AG_DOCKER" inspect -f '{{.State.ExitCode}}' "$id")" 124
	t_is "kill: the init is the entrypoint, the deadline the timeout + 1 s, then the argv" \
		"$("$AG_DOCKER" inspect -f '{{.Path}} {{json .Args}}' "$id")" '/agentguard-init ["9","--","/bin/sleep","120"]'
	t_is "kill: one read-only bind of the init beside the workspace, nothing else" \
		"$("$AG_DOCKER" inspect -f '{{range .Mounts}}{{.Type}}:{{.Destination}}:{{.RW}} {{end}}' "$id" | tr ' ' '\n' | sort | tr '\n' ' ')" \
		' bind:/agentguard-init:false bind:/agentguard-workspace:true '
else
	t_fail "kill: the init's deadline status (124)"
fi
t_run as_user "$AG_BIN" cleanup
t_is "kill: cleanup exits 0" "$AG_RC" 0
t_ok "kill: nothing of the run is left" no_containers

# --- with AgentGuard alive the timeout is its own: exit 7, timed_out
run --timeout 2 -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done'
t_is "timeout: exit 7" "$AG_RC" 7
t_is "timeout: recorded as timed out" "$(art '(a["command_result"]["outcome"], a["command_result"]["timed_out"], a["command_result"]["exit_code"])')" "('timed_out', True, None)"
t_is "timeout: the evidence says which deadline held" \
	"$(art '(a["containment_evidence"]["execution"]["timeout_enforced_by"], a["containment_evidence"]["execution"]["in_container_deadline_seconds"])')" "('agentguard', 3)"
t_ok "timeout: the artifact verifies" "$AG_BIN" evidence verify "$(dirname "$REPORT")" --public-key "$(pubkey)"
check_clean "timeout"

# --- a normal run: exit code and output as before, no deadline named
run -- /bin/sh -c 'echo out-line; echo err-line >&2; exit 0'
t_is "normal: exit 0" "$AG_RC" 0
t_is "normal: output unchanged" "$(art '(a["command_result"]["stdout"], a["command_result"]["stderr"], a["command_result"]["exit_code"])')" "('out-line\\n', 'err-line\\n', 0)"
t_is "normal: no timeout, the init's deadline recorded" \
	"$(art '(a["containment_evidence"]["execution"]["timeout_enforced_by"], a["containment_evidence"]["execution"]["in_container_deadline_seconds"])')" "(None, 31)"
run -- /bin/sh -c 'exit 42'
t_is "normal: the agent's own status is kept (42 -> exit 1)" "$(art 'a["command_result"]["exit_code"]')" 42
run -- /bin/sh -c 'kill -TERM $$'
t_is "normal: a signal that ends the agent is 128+N, as Docker says" "$(art 'a["command_result"]["exit_code"]')" 143

# --- the argv reaches the child exactly (the init's "--" is its own)
run -- /bin/sh -c 'for a in "$0" "$@"; do printf "[%s]" "$a"; done; echo' \
	'--help' '' 'two words' '-x' '--' '--deadline' 5 ' lead'
t_is "argv: every element arrives exactly" "$(art 'a["command_result"]["stdout"]')" \
	"[--help][][two words][-x][--][--deadline][5][ lead]"
t_is "argv: the evidence records the argv, not the init" "$(art 'a["containment_evidence"]["execution"]["command"][:3]')" "['/bin/sh', '-c', 'for a in \"\$0\" \"\$@\"; do printf \"[%s]\" \"\$a\"; done; echo']"

# --- the environment is the fixed defaults plus the allowlist (and the
# HOSTNAME the engine itself adds to every container), nothing of the init
run -- env
t_is "env: exactly the defaults and the allowlist" \
	"$(art '",".join(sorted(l.split("=")[0] for l in a["command_result"]["stdout"].splitlines()))')" \
	"AGENT_API_TOKEN,AGENT_MODE,HOME,HOSTNAME,LANG,LC_ALL,PATH"

# --- a name looked up in PATH, and one that is not there
run -- sh -c 'echo found'
t_is "path: a bare name is found through PATH" "$(art 'a["command_result"]["stdout"]')" found
run -- no-such-program-here
t_is "path: a missing executable is still a launch failure (exit 6)" "$AG_RC" 6
t_like "path: and says the executable was not found" "$AG_OUT" 'was not found in the image'
t_is "path: no score, no agent output kept" "$(art '(a["command_result"]["outcome"], a["command_result"]["stderr"], a["score"])')" "('docker_launch_failure', '', None)"

check_clean "end"
t_done
