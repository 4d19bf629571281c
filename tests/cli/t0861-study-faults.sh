#!/usr/bin/env bash
# t0861: `agentguard study-egress run` when things go wrong. With the Engine
# API FAULT INJECTOR (tests/fakes/fake-engine, forwarding to the real engine
# except the answers it rewrites): a daemon answer that breaks an inspection
# assertion of the topology (the study network shown non-internal; the
# gateway shown without its sysctl) stops the run before the agent exists
# (exit 3) and leaves nothing. On the real engine: AgentGuard killed with
# SIGKILL mid-study leaves its gateway and networks, and `agentguard
# cleanup` removes them (containers first, by label and id): nothing left.
# Also: a network create whose answer names no valid id fails by name
# (exit 6) and the network is found by its label and removed.
#
# Address plan: before each run a free /28 of 198.51.100.0/24 for the study
# subnet whose next /28 (AgentGuard's own internal outbound network) is free.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-engine.sh"
STUDY_TEST=t0861
. "$(dirname "$0")/lib-study.sh"

study_begin
TRIAL=t0861-$$-$RANDOM
common() {
	study_subnet || return 1
	common=(--policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET"
		--outbound-internal)
}

# --- fault injection: the daemon's inspection answers contradict the topology
fake_engine_start "$T/fe"
agent_never_created() {
	! grep -qx "POST /containers/create?name=agentguard-$(run_suffix "$RUN_DIR")" "$FE_RULES.log"
}
fault '[{"method":"GET","path":"^/networks/[0-9a-f]{64}$","action":"patch","set":{"Internal":false}}]'
common
study_run "${common[@]}" --docker-socket "$FE_SOCK" --trial-id "$TRIAL-n" -- /bin/true
t_is "injected non-internal study network: exit 3" "$AG_RC" 3
t_like "injected non-internal study network: named reason" "$AG_OUT" '"failure_reason":"study.network.internal"'
t_ok "injected non-internal study network: the agent was never even created" agent_never_created
t_is "injected non-internal study network: cleanup complete" "$(art 'a["cleanup_complete"]')" True
t_ok "injected non-internal study network: nothing left" study_nothing_left "$RUN_DIR"

fault '[{"method":"GET","path":"^/containers/[0-9a-f]{64}/json$","not_name":"agentguard-preflight-","action":"patch","set":{"HostConfig.Sysctls":{}}}]'
common
study_run "${common[@]}" --docker-socket "$FE_SOCK" --trial-id "$TRIAL-s" -- /bin/true
t_is "injected gateway without ip_forward=0: exit 3" "$AG_RC" 3
t_like "injected gateway without ip_forward=0: named reason" "$AG_OUT" '"failure_reason":"study.gateway.sysctl"'
t_ok "injected gateway without ip_forward=0: the agent was never created" agent_never_created
t_ok "injected gateway without ip_forward=0: nothing left" study_nothing_left "$RUN_DIR"

# The network is created, but the daemon's answer names no valid id: the
# run fails by name and the ledger finds the network by its label.
fault '[{"method":"POST","path":"^/networks/create$","action":"patch","set":{"Id":"not-an-id"}}]'
log_from=$(($(wc -l <"$FE_RULES.log") + 1))
common
study_run "${common[@]}" --docker-socket "$FE_SOCK" --trial-id "$TRIAL-b" -- /bin/true
t_is "injected bad network id: a Docker failure (exit 6)" "$AG_RC" 6
t_like "injected bad network id: named reason" "$AG_OUT" 'docker\.network\.bad_id'
t_ok "injected bad network id: the agent was never created" agent_never_created
t_ok "injected bad network id: nothing left (found by label)" study_nothing_left "$RUN_DIR"
t_like "injected bad network id: it was found and deleted by its id" \
	"$(tail -n "+$log_from" "$FE_RULES.log")" 'DELETE /networks/[0-9a-f]{64}'
fault '[]'

# --- SIGKILL of AgentGuard mid-study, then `agentguard cleanup`
common
PIDFILE=$W/ag.pid as_user "$AG_BIN" study-egress run "$W/c.yaml" --repo repo "${common[@]}" \
	--trial-id "$TRIAL-x" -- /bin/sleep 60 >/dev/null 2>&1 &
bg=$!
t_cleanup kill -9 "$bg"
if study_agent_running "$TRIAL-x"; then
	t_pass "crash: the study's agent runs"
else
	t_fail "crash: the study's agent runs"
fi
kill -9 "$(cat "$W/ag.pid")"
wait "$bg" || true
d=$(ls -1d "$W"/.agentguard/contained-runs/*/ | sort | tail -n 1)
t_ledger_run "$(run_suffix "$d")"
t_is "crash: the run is the one whose agent ran" "$(run_suffix "$d")" "$STUDY_SUFFIX"
STUDY_BRIDGES=$("$AG_DOCKER" network ls -q --no-trunc --filter "label=agentguard.contained-run.id=$STUDY_SUFFIX" | cut -c1-12 | sed 's/^/br-/' | tr '\n' ' ')
t_like "crash: the study's two networks outlived AgentGuard" "$STUDY_BRIDGES" '^br-[0-9a-f]{12} br-[0-9a-f]{12} $'
t_ok "crash: and its gateway" test -n "$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$STUDY_SUFFIX" --filter label=agentguard.owner=study-egress)"
t_run as_user "$AG_BIN" cleanup --probe-age 86400
t_is "cleanup: exit 0" "$AG_RC" 0
t_like "cleanup: the study's objects are named" "$AG_OUT" 'study: 1 container\(s\), 2 network\(s\) removed'
t_like "cleanup: the run is recovered" "$AG_OUT" '1 recovered'
t_ok "cleanup: nothing left (containers, networks, bridge devices)" study_nothing_left "$d"
STUDY_BRIDGES=

t_done
