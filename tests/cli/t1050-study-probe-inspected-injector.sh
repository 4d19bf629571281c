#!/usr/bin/env bash
# t1050: the study's self-test probe is inspected against the spec that
# rendered it before it runs, like every other container AgentGuard creates
# (ag_inspect_expect_from_spec). With the Engine API FAULT INJECTOR
# (tests/fakes/fake-engine, forwarding to the real engine except the answers
# it rewrites): the probe's inspection shows a sysctl its spec never asked
# for; the study stops before the agent exists (exit 3), names the reason in
# the study's vocabulary, and removes everything.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-engine.sh"
STUDY_TEST=t1050
. "$(dirname "$0")/lib-study.sh"

study_begin
TRIAL=t1050-$$-$RANDOM
fake_engine_start "$T/fe"
fault '[{"method":"GET","path":"^/containers/[0-9a-f]{64}/json$","name_re":"-probe$","action":"patch","set":{"HostConfig.Sysctls":{"net.ipv4.ip_forward":"1"}}}]'
study_subnet || exit 1
study_run --policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET" \
	--outbound-internal --docker-socket "$FE_SOCK" --trial-id "$TRIAL" -- /bin/true
fault '[]'
t_is "a probe showing a sysctl its spec never asked for: exit 3" "$AG_RC" 3
t_like "... named in the study's vocabulary" "$AG_OUT" '"failure_reason":"study.selftest.sysctls"'
t_ok "... the agent was never created" bash -c '! grep -qx "POST /containers/create?name=agentguard-$1" "$2"' _ \
	"$(run_suffix "$RUN_DIR")" "$FE_RULES.log"
t_is "... the probe was removed" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_egress"]["cleanup"]["probe"])' "$REPORT")" removed
t_ok "... nothing left" study_nothing_left "$RUN_DIR"
t_done
