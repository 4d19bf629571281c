#!/usr/bin/env bash
# t1031: a POST that creates an object is never sent twice. libcurl resends
# a request on a kept-alive connection that ends without one byte of answer
# ("Connection died, retrying a fresh connect"); for a create that would make
# a second object (or a 409 naming the first). The FAULT INJECTOR
# tests/fakes/fake-engine closes the kept-alive connection the create arrives
# on without answering ("drop": the engine never sees it) or after forwarding
# it ("lost": the container exists, the answer never comes), and counts the
# create requests that reached it: exactly one each time, and the run still
# resolves a lost answer by its unique label and fails closed (exit 6).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-engine.sh"
[ "$(id -u)" -eq 0 ] || skip_all "root-owned sockets need root"

config c
make_repo
fake_engine_start "$T/fe"

# creates NAME-REGEX: how many container creates for such a name reached the injector
creates() { grep -cE "^POST /containers/create\?name=$1" "$FE_RULES.log" || true; }

# --- the agent's create: the connection closes before any answer
fault '[{"method":"POST","path":"^/containers/create$","not_name":"agentguard-preflight-","action":"drop"}]'
run --docker-socket "$FE_SOCK" -- /bin/true
agent=agentguard-$(run_suffix "$(dirname "$REPORT")")
t_is "drop: a create without an answer is a Docker failure (exit 6)" "$AG_RC" 6
t_is "drop: the create reached the engine exactly once" "$(creates "$agent\$")" 1
t_is "drop: the failure is the transport's" "$(art 'a["failure"]["reason"]')" docker.engine.dropped
t_is "drop: nothing was made, cleanup complete" "$(art 'a["cleanup_complete"]')" True
t_is "drop: no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# --- the agent's create: the engine made it, the answer is lost
fault '[{"method":"POST","path":"^/containers/create$","not_name":"agentguard-preflight-","action":"lost"}]'
run --docker-socket "$FE_SOCK" -- /bin/true
agent=agentguard-$(run_suffix "$(dirname "$REPORT")")
t_is "lost: a create whose answer is lost is a Docker failure (exit 6)" "$AG_RC" 6
t_is "lost: the create reached the engine exactly once" "$(creates "$agent\$")" 1
t_is "lost: the failure is the transport's, not a 409 from a resent create" "$(art 'a["failure"]["reason"]')" docker.engine.dropped
t_is "lost: the container made anyway is found by its label and removed" \
	"$(art '(a["cleanup"]["status"], a["cleanup_complete"])')" "('removed', True)"
t_is "lost: no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# --- the preflight probe's create, through `agentguard preflight`
fault '[{"method":"POST","path":"^/containers/create$","name":"agentguard-preflight-","action":"lost"}]'
t_run "$AG_BIN" preflight "$W/c.yaml" --docker-socket "$FE_SOCK" --json
t_is "probe lost: preflight unavailable (exit 3)" "$AG_RC" 3
t_is "probe lost: the probe's create reached the engine exactly once" \
	"$(creates 'agentguard-preflight-')" 1
t_like "probe lost: found by its label and removed" "$AG_OUT" \
	'"cleanup":\{"complete":true,"status":"removed"\}'
t_ok "probe lost: nothing left" probes_gone

check_clean "creates"
t_done
