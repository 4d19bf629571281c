#!/usr/bin/env bash
# t0310: every failure of the Engine API transport fails closed, with exit 3
# from `agentguard preflight`, and leaves nothing. The socket faults use real
# files and sockets; the daemon faults (500, malformed, oversized, slow,
# dropped attach, lost create answer) come from the FAULT INJECTOR
# tests/fakes/fake-engine, which forwards everything else to the real engine.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-engine.sh"
[ "$(id -u)" -eq 0 ] || skip_all "root-owned sockets need root"
chmod 755 "$T"

cat >"$T/ok.yaml" <<CFG
task_id: t0310
description: transport faults
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox: {type: docker, image: "$AG_TEST_IMAGE", network: none}
contained_execution:
  version: 1
  platform: linux-docker-engine
  network: none
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
CFG


pf() { # REASON DESC [--json]
	local reason=$1 desc=$2
	shift 2
	ag_must_fail 3 "$reason" "$desc (exit 3)" "$AG_BIN" preflight "$T/ok.yaml" \
		--docker-socket "$FE_SOCK" "$@"
}

# --- socket faults (no request is ever sent)
mkdir -m 755 "$T/s"
ag_must_fail 3 docker.socket.missing "socket missing: unavailable (exit 3)" \
	"$AG_BIN" preflight "$T/ok.yaml" --docker-socket "$T/s/none.sock"
t_like "socket missing: status unavailable" "$AG_OUT" '^Docker preflight: unavailable'
: >"$T/s/file.sock"
ag_must_fail 3 docker.socket.unsafe "not a socket: unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/ok.yaml" --docker-socket "$T/s/file.sock"

fake_engine_start "$T/fe"
t_run "$AG_BIN" preflight "$T/ok.yaml" --docker-socket "$FE_SOCK"
t_is "injector without a fault: supported through it" "$AG_RC" 0
t_like "injector without a fault: the probe ran through it" "$(cat "$FE_RULES.log")" \
	'POST /containers/[0-9a-f]{64}/attach'

chown "$AG_TEST_UID" "$FE_SOCK"
: >"$FE_RULES.log"
pf docker.socket.unsafe "socket owned by another user: unsafe"
t_is "socket owned by another user: not one request sent" "$(wc -c <"$FE_RULES.log")" 0
chown root "$FE_SOCK"

fake_engine_start "$T/fe-user" "$AG_TEST_USER"
ag_must_fail 3 docker.engine.peer_not_root "peer not root: unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/ok.yaml" --docker-socket "$FE_SOCK"
t_is "peer not root: not one request reached it" "$(wc -c <"$FE_RULES.log")" 0
fake_engine_start "$T/fe"

# --- daemon faults
fault '[{"method":"GET","path":"^/version$","action":"status","status":500,"body":"{\"message\":\"injected at unix:///run/x.sock /etc/secret\"}"}]'
pf docker.api.daemon_error "500 from the daemon: unavailable" --json
t_like "500: status unavailable" "$AG_OUT" '"status":"unavailable"'
t_unlike "500: the daemon's message is sanitized" "$AG_OUT" 'unix://|/etc/secret'

fault '[{"method":"GET","path":"^/version$","action":"body","body":"{\"Version\": nope}"}]'
pf docker.json.malformed "malformed JSON: unavailable"

fault '[{"method":"GET","path":"^/info$","action":"pad","bytes":100000}]'
pf docker.response.too_large "oversized (100 KB) answer: unavailable"

fault '[{"method":"GET","path":"^/version$","action":"slow","seconds":20}]'
start=$SECONDS
pf docker.engine.timeout "answer slower than its timeout: unavailable"
t_like "slow: gave up within the 15 s timeout" "$((SECONDS - start))" '^1[5-7]$'

fault '[{"method":"POST","path":"/attach$","action":"attach_drop"}]'
pf docker.engine.dropped "connection dropped mid-attach: unavailable" --json
t_like "dropped attach: the probe was created" "$AG_OUT" '"container_created":true'
t_like "dropped attach: probe removed (stopped first when it still ran)" "$AG_OUT" '"cleanup":\{"complete":true,"status":"(removed|cleanly_terminated|force_killed)"\}'
t_ok "dropped attach: nothing left" probes_gone

fault '[{"method":"POST","path":"^/containers/create$","action":"lost"}]'
pf docker.engine.dropped "create whose answer is lost: unavailable" --json
t_like "lost create: found by its label and removed" "$AG_OUT" \
	'"cleanup":\{"complete":true,"status":"removed"\}'
t_like "lost create: the ledger listed by the probe's label" "$(cat "$FE_RULES.log")" \
	'GET /containers/json\?all=1&filters=.*agentguard.preflight.name'
t_ok "lost create: nothing left" probes_gone

fault '[{"method":"POST","path":"^/containers/create$","action":"body","body":"{\"Id\":\"not-an-id\"}"}]'
pf preflight.probe.create_id "create answered without a valid id: unsafe" --json
t_like "bad id: found by label and removed" "$AG_OUT" '"cleanup":\{"complete":true,"status":"removed"\}'
t_ok "bad id: nothing left" probes_gone

t_done
