#!/usr/bin/env bash
# t0402: contained-run outcomes the real engine only gives on demand with a
# nudge. OOM is real (a memory hog under a 128m limit). Cleanup failures,
# a lost create answer and a dropped attach stream are injected by the FAULT
# INJECTOR tests/fakes/fake-engine, which forwards everything else to the
# real engine: the container really stays after a refused removal (exit 8,
# workspace retained, the primary failure kept when execution failed too),
# and `agentguard cleanup` then recovers the retained runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-engine.sh"

config c
make_repo

# --- OOM: the outcome comes from docker's state, not from exit code 137
run -- /bin/dd if=/dev/zero of=/dev/null bs=400M count=1
t_is "oom: the agent failed (exit 1)" "$AG_RC" 1
t_is "oom: outcome oom_killed" "$(art 'a["command_result"]["outcome"]')" oom_killed
t_is "oom: recorded in the containment evidence" "$(art 'a["containment_evidence"]["execution"]["oom_killed"]')" True
check_clean "oom"

# --- the injector refuses the removal of the run's own container (the
# preflight probe's removal still works)
fake_engine_start "$T/fe"
fault '[{"method":"DELETE","path":"^/containers/","not_name":"agentguard-preflight-","action":"status","status":500,"body":"{\"message\":\"injected fault\"}"}]'

run --docker-socket "$FE_SOCK" -- /bin/true
t_is "fault: cleanup failure after a passing agent exits 8" "$AG_RC" 8
t_is "fault: cleanup state" "$(art '(a["cleanup"]["status"], a["cleanup_complete"], a["failure"]["stage"])')" "('cleanup_incomplete', False, 'cleanup')"
t_is "fault: the workspace is retained while the container lives" "$(art 'a["cleanup"]["workspace_status"]')" retained
t_like "fault: the output names the next step" "$AG_OUT" 'next step: run agentguard cleanup'
t_is "fault: liveness not verified" "$(art 'a["containment_evidence"]["cleanup"]["liveness_verified"]')" False
d=$(ls -1d "$W"/.agentguard/contained-runs/*/ | sort | tail -n 1)
t_ok "fault: the container really is still there" test -n "$("$AG_DOCKER" ps -aq --filter label=agentguard.owner=contained-run --filter "label=agentguard.contained-run.id=$(run_suffix "$d")")"

run --docker-socket "$FE_SOCK" --timeout 2 -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done'
t_is "fault: timeout stays the primary failure (exit 7)" "$AG_RC" 7
t_is "fault: the cleanup failure is recorded separately" "$(art '(a["failure"]["stage"], a["cleanup_failure"]["stage"], a["cleanup_failure"]["exit_code"])')" "('timeout', 'cleanup', 8)"
t_like "fault: a secondary cleanup failure names the next step too" "$AG_OUT" 'next step: run agentguard cleanup'

# --- the engine makes the container but its create answer is lost
fault '[{"method":"POST","path":"^/containers/create$","not_name":"agentguard-preflight-","action":"lost"}]'
run --docker-socket "$FE_SOCK" -- /bin/true
t_is "fault: a create whose answer is lost is a Docker failure (exit 6)" "$AG_RC" 6
t_is "fault: the container Docker made anyway is found by label and removed" "$(art '(a["cleanup"]["status"], a["cleanup_complete"])')" "('removed', True)"
t_is "fault: and no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# --- the attach stream is dropped mid-run
fault '[{"method":"POST","path":"/attach$","not_name":"agentguard-preflight-","action":"attach_drop"}]'
run --docker-socket "$FE_SOCK" -- /bin/sh -c 'sleep 1; echo done'
t_is "fault: a dropped attach stream is a Docker failure (exit 6)" "$AG_RC" 6
t_is "fault: dropped attach: cleanup complete" "$(art '(a["cleanup"]["status"] in ("removed", "cleanly_terminated", "force_killed"), a["cleanup_complete"])')" "(True, True)"
t_is "fault: dropped attach: no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# --- the probe's verdict fails after the agent's container was created
# beside it: that container never starts and is removed by its id
fault '[{"method":"GET","path":"^/containers/[0-9a-f]{64}/json$","name":"agentguard-preflight-","action":"patch","set":{"HostConfig.Memory":67108864}}]'
run --docker-socket "$FE_SOCK" -- /bin/true
t_is "failed verdict: a preflight failure (exit 3)" "$AG_RC" 3
t_is "failed verdict: the reason is the probe's" "$(art 'a["failure"]["reason"]')" preflight.probe.memory
agent_name=agentguard-$(run_suffix "$(dirname "$REPORT")")
t_like "failed verdict: the agent's container had been created" "$(cat "$FE_RULES.log")" \
	"POST /containers/create\\?name=$agent_name"
t_unlike "failed verdict: and was never started" "$(cat "$FE_RULES.log")" \
	"POST /containers/[0-9a-f]{64}/start"
t_is "failed verdict: it was removed by id" "$(art '(a["cleanup"]["status"], a["cleanup_complete"])')" "('removed', True)"
t_is "failed verdict: no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# Both retained runs are recovered by `agentguard cleanup` (their processes are gone).
t_run as_user "$AG_BIN" cleanup --probe-label "$AG_TEST_LABEL"
t_is "fault: cleanup recovers the retained runs" "$AG_RC" 0
t_like "fault: it says so" "$AG_OUT" '2 recovered'
check_clean "fault"
t_done
