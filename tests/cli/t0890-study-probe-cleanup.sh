#!/usr/bin/env bash
# t0890: a self-test probe that was created but whose run failed before it
# printed a result, and whose removal then failed, is a cleanup failure
# the study reports (never "not_created", never a complete cleanup). With
# the Engine API FAULT INJECTOR (tests/fakes/fake-engine, forwarding to the
# real engine except the answers it rewrites): the probe's attach and its
# removal are refused. The test removes the probe it left (by the run's
# own labels) at exit.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-engine.sh"
STUDY_TEST=t0890
. "$(dirname "$0")/lib-study.sh"

study_begin
TRIAL=t0890-$$-$RANDOM
fake_engine_start "$T/fe"
fault '[{"method":"POST","path":"^/containers/[0-9a-f]{64}/attach$","name_re":"-probe$","action":"status","status":500,"body":"{\"message\":\"injected\"}"},
        {"method":"DELETE","path":"^/containers/[0-9a-f]{64}$","name_re":"-probe$","action":"status","status":500,"body":"{\"message\":\"injected\"}"}]'
study_subnet || exit 1
study_run --policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET" \
	--outbound-internal --docker-socket "$FE_SOCK" --trial-id "$TRIAL" -- /bin/true
fault '[]'
t_ok "the probe's refused attach fails the run" test "$AG_RC" -ne 0
t_ok "the run left an artifact" test -f "$REPORT"
probe=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_egress"]["cleanup"]["probe"])' "$REPORT" 2>/dev/null || echo none)
t_is "the probe left behind is reported as such, not as never created" "$probe" incomplete
t_is "... and the run's cleanup is not complete" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cleanup_complete"])' "$REPORT")" False
left=$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$(run_suffix "$RUN_DIR")" \
	--filter label=agentguard.owner=study-egress --filter label=agentguard.study-egress.role=probe)
t_ok "the probe really was left (the fault held)" test -n "$left"
t_done
