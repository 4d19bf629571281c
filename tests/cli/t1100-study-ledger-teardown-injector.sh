#!/usr/bin/env bash
# t1100: the study's objects are entries of the run's ledger (issue 18):
# one teardown removes them with the agent, newest created first, each by
# its id. With the Engine API FAULT INJECTOR (tests/fakes/fake-engine,
# forwarding to the real engine; its request log shows what reached the
# engine, in order):
#   - a whole study run: the agent's container goes first, then the gateway
#     (SIGTERM by its id, then its removal by the same id), then the study
#     network, then AgentGuard's own outbound network, each by the id the
#     artifact's bridges name; the artifact and the manifest say removed;
#   - the gateway's create answer is lost (the engine made it, the client
#     never heard): the create reached the engine once, the run fails closed
#     before the agent exists, and the gateway is found by the run's label,
#     removed before its networks, and recorded as removed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-engine.sh"
STUDY_TEST=t1100
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-study.sh"
[ "$(id -u)" -eq 0 ] || skip_all "root-owned sockets need root"

study_begin
fake_engine_start "$T/fe"

# removals_since LINE: the container and network DELETEs and the SIGTERMs
# that reached the engine after the log line LINE, in order, one per line
# as KIND ID (KIND: rm, term, netrm).
removals_since() {
	sed -n "\|^$1\$|,\$p" "$FE_RULES.log" |
		sed -nE 's|^DELETE /containers/([0-9a-f]{64})\?.*|rm \1|p
			s|^POST /containers/([0-9a-f]{64})/kill\?signal=SIGTERM$|term \1|p
			s|^DELETE /networks/([0-9a-f]{64})$|netrm \1|p'
}
kinds() { awk '{print $1}' | tr '\n' ' '; }
# bridge N: the 12-hex id prefix of the artifact's Nth bridge
bridge() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_egress"]["bridges"][int(sys.argv[2])][3:])' "$REPORT" "$1"; }
cleanup_word() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["study_egress"]["cleanup"][sys.argv[2]])' "$REPORT" "$1"; }

# --- a whole run: every removal after the agent's create, in order
TRIAL=t1100-a-$$-$RANDOM
fault '[]'
study_subnet || exit 1
study_run --policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET" \
	--outbound-internal --docker-socket "$FE_SOCK" --trial-id "$TRIAL" -- /bin/true
t_is "a whole study run passes" "$AG_RC" 0
agent=agentguard-$(run_suffix "$RUN_DIR")
# (the preflight probe runs beside the agent's create and is removed
# before the agent starts: the teardown is the last five)
t_is "the teardown: agent, gateway (SIGTERM, then removal), study network, outbound network" \
	"$(removals_since "POST /containers/create?name=$agent" | tail -5 | kinds)" "rm term rm netrm netrm "
mapfile -t steps < <(removals_since "POST /containers/create?name=$agent" | tail -5 | awk '{print $2}')
t_ok "the gateway is removed by the id it was stopped by, not the agent's" \
	test "${steps[1]:-x}" = "${steps[2]:-y}" -a "${steps[0]:-x}" != "${steps[1]:-x}"
t_is "the study network goes first, by the id its bridge names" "${steps[3]:0:12}" "$(bridge 0)"
t_is "then the outbound network, by its id" "${steps[4]:0:12}" "$(bridge 1)"
t_is "the artifact renders each entry's cleanup" \
	"$(cleanup_word gateway) $(cleanup_word probe) $(cleanup_word study_network) $(cleanup_word outbound_network)" \
	"removed removed removed removed"
t_is "the manifest says the same" \
	"$("$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cleanup_status"]; print(c["gateway"], c["internal_network"], c["outbound_network"])' "$RUN_DIR/live-study-egress-manifest.json" 2>/dev/null || echo none)" \
	"removed removed removed"
t_ok "... nothing left" study_nothing_left "$RUN_DIR"

# --- the gateway's create answer is lost
TRIAL=t1100-b-$$-$RANDOM
fault '[{"method":"POST","path":"^/containers/create$","name_re":"-gateway$","action":"lost"}]'
study_subnet || exit 1
study_run --policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET" \
	--outbound-internal --docker-socket "$FE_SOCK" --trial-id "$TRIAL" -- /bin/true
agent=agentguard-$(run_suffix "$RUN_DIR")
t_is "lost gateway answer: a Docker failure before the agent (exit 6)" "$AG_RC" 6
t_is "... the gateway's create reached the engine exactly once" \
	"$(grep -cE "^POST /containers/create\?name=$agent-gateway\$" "$FE_RULES.log" || true)" 1
# shellcheck disable=SC2016 # expanded by the inner shell
t_ok "... the agent was never created" \
	bash -c '! grep -qx "POST /containers/create?name=$1" "$2"' _ "$agent" "$FE_RULES.log"
# (the preflight probe, on its own thread, may be removed after the
# gateway's create too, but always before the teardown: the last three)
t_is "... the gateway found by the run's label is removed before its networks" \
	"$(removals_since "POST /containers/create?name=$agent-gateway" | tail -3 | kinds)" "rm netrm netrm "
t_is "... and recorded as removed" \
	"$(cleanup_word gateway) $(cleanup_word study_network) $(cleanup_word outbound_network)" \
	"removed removed removed"
t_ok "... nothing left" study_nothing_left "$RUN_DIR"
fault '[]'
t_done
