#!/usr/bin/env bash
# t1021: the engine refuses to remove the preflight probe (issue 18, item 9),
# through the FAULT INJECTOR tests/fakes/fake-engine (the real engine removes
# a stopped container on demand; only an injected 500 makes it refuse). The
# run fails closed before any agent starts, with a named reason, and its
# artifact records the truthful cleanup state in a word its own schema has,
# so `agentguard evidence verify` accepts it.
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
fake_engine_start "$T/fe"
# The probe really stays after the refusal: remove it by the name it was
# created with (from the injector's request log), and only that.
remove_probes() {
	local n
	for n in $(grep -o 'name=agentguard-preflight-[0-9a-f]*' "$FE_RULES.log" 2>/dev/null | cut -d= -f2 | sort -u); do
		"$AG_DOCKER" rm -f -v "$n" >/dev/null 2>&1 || true
	done
}
t_cleanup remove_probes

fault '[{"method":"DELETE","path":"^/containers/","name":"agentguard-preflight-","action":"status","status":500,"body":"{\"message\":\"injected: removal refused\"}"}]'
run --docker-socket "$FE_SOCK" -- /bin/sh -c 'echo agent-ran >/workspace/ran'
t_is "refused probe removal: the run fails closed as a preflight failure (exit 3)" "$AG_RC" 3
t_like "refused probe removal: a named preflight reason is on stderr" "$AG_OUT" '\[preflight\.[a-z_.]+\]|\[docker\.[a-z_.]+\]'
t_ok "refused probe removal: an artifact was written" test -s "$REPORT"
# On a quiet engine the refused removal is the first failed check; on a
# loaded one the probe may time out first, and the refusal is still recorded.
t_is "refused probe removal: the artifact names the stage" "$(art 'a["failure"]["stage"]')" preflight
t_is "refused probe removal: the probe's cleanup is recorded truthfully" \
	"$(art '(a["preflight"]["cleanup"]["status"], a["preflight"]["cleanup"]["complete"])')" \
	"('cleanup_incomplete', False)"
t_is "refused probe removal: the probe_cleanup check failed with its reason" \
	"$(art '[(c["status"], c["reason"]) for c in a["preflight"]["checks"] if c["name"] == "probe_cleanup"]')" \
	"[('unsafe', 'preflight.cleanup.failed')]"
t_like "the injector really refused a probe removal" "$(cat "$FE_RULES.log")" 'DELETE /containers/[^ ]*'
t_is "no agent started: the only container started was the probe" \
	"$(grep -c 'POST /containers/[0-9a-f]*/start' "$FE_RULES.log" || true)" 1
t_is "no agent started: the artifact says so" \
	"$(art '(a["command_result"], a["containment_evidence"]["execution"]["status"])')" "(None, 'preflight_blocked')"
t_ok "no agent started: nothing reached the source repository" repo_unchanged
t_ok "no container of the run is left" no_containers

t_run as_user "$AG_BIN" evidence verify "$(dirname "$REPORT")"
t_is "the artifact of the failure verifies (evidence verify exit 0)" "$AG_RC" 0
t_like "evidence verify: valid" "$AG_OUT" 'valid'
t_done
