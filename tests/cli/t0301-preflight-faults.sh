#!/usr/bin/env bash
# t0301: `agentguard preflight` fails closed on faults a real engine will
# not produce on demand, injected by tests/fakes/fake-docker (fault
# injection only; t0300 covers the real engine). Every fault must end in
# the expected status with exit 3, and a probe container is always removed.
#
# The fake must pass the client checks (root-owned, not writable by
# others, in a root-owned directory chain), so it is copied into a 0755
# directory under $T; the scenario file sits next to it because AgentGuard
# runs docker with a fixed environment.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip_all "the fake docker client must be root-owned: run as root"
fi

fake_dir=$T/fake
state=$T/state
mkdir -m 755 "$fake_dir"
mkdir "$state"
cp "$AG_ROOT/tests/fakes/fake-docker" "$fake_dir/docker"
chmod 755 "$fake_dir/docker"
fake=$fake_dir/docker

# The canned answers describe this image and these controls.
image=127.0.0.1:5000/agentguard-test@sha256:544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47
write_config() { # FILE [PLATFORM]
	cat >"$1" <<CFG
task_id: preflight-t0301
description: preflight fault injection
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox:
  type: docker
  image: "$image"
  network: none
contained_execution:
  version: 1
  platform: ${2:-linux-docker-engine}
  network: none
  required_uid: 2001
  required_gid: 2001
  cpu_limit: 1.0
  memory_limit: 512m
  pids_limit: 256
  tmpfs_size: 256m
CFG
}
write_config "$T/engine.yaml"
write_config "$T/desktop.yaml" docker-desktop-experimental

scenario() {
	rm -f "$state"/*
	printf 'scenario=%s\nfixtures=%s\nstate=%s\n' "$1" "$AG_ROOT/tests/fixtures/docker" "$state" \
		>"$fake_dir/fake-docker.scenario"
}

# fault SCENARIO STATUS REASON DESC [CONFIG]
fault() {
	local sc=$1 status=$2 reason=$3 desc=$4 cfg=${5:-$T/engine.yaml}
	scenario "$sc"
	ag_must_fail 3 "$reason" "fault: $desc -> $status (exit 3)" \
		"$AG_BIN" preflight "$cfg" --docker "$fake" --json
	t_like "fault: $desc: evidence status $status" "$AG_OUT" "\"status\":\"$status\""
	if [ -f "$state/exists" ]; then
		t_fail "fault: $desc: probe container removed" "the fake still holds the container"
	else
		t_pass "fault: $desc: probe container removed (or never created)"
	fi
}

# The fake itself answers like the real engine when no fault is selected.
scenario ok
t_run "$AG_BIN" preflight "$T/engine.yaml" --docker "$fake"
t_is "fault: (control) fake without a fault gives supported" "$AG_RC" 0

fault malformed unavailable docker.json.malformed "malformed docker version JSON"
fault truncated unavailable docker.json.malformed "truncated docker version JSON"
fault oversized unavailable docker.json.too_large "oversized (100 KiB) docker info"
fault contradictory-os unsafe preflight.engine.contradiction \
	"contradictory engine (version linux, info windows)"
fault contradictory-id unsafe preflight.probe.identity_id \
	"contradictory probe identity (inspect Id differs from create id)"
t_like "fault: contradictory id: the created id was removed" "$(cat "$state/calls")" \
	"rm -f -v -- 1111111111111111111111111111111111111111111111111111111111111111"

start=$SECONDS
fault slow unavailable docker.call.timeout "slow daemon (sleeps past the 5 s timeout)"
t_like "fault: slow daemon: gave up within the timeout" "$((SECONDS - start))" '^[5-9]$'

fault desktop unsafe preflight.platform.desktop "Docker Desktop identity with linux-docker-engine"
fault desktop-version unsafe preflight.platform.desktop \
	"Docker Desktop platform name with linux-docker-engine"
scenario desktop
t_run "$AG_BIN" preflight "$T/desktop.yaml" --docker "$fake" --json
t_is "fault: Docker Desktop with docker-desktop-experimental: exit 0" "$AG_RC" 0
t_like "fault: Docker Desktop with docker-desktop-experimental: experimental, reduced claim" \
	"$AG_OUT" '"claim_level":"docker-desktop-reduced".*"status":"experimental"'

fault downgraded-memory unsafe preflight.probe.memory "inspection shows Memory below the request"
fault downgraded-pids unsafe preflight.probe.pids "inspection shows PidsLimit 0"
fault downgraded-cpu unsafe preflight.probe.cpu "inspection shows NanoCpus 0 and no quota"
fault docker-sock unsafe preflight.probe.docker_socket "inspection shows a docker.sock bind"
fault no-memory-limit unsafe preflight.resources.memory_unsupported \
	"engine reports no memory limit support"
fault probe-root unsafe preflight.probe.identity "probe reports uid 0"
fault missing-image unsafe preflight.image.missing "pinned image absent"
t_unlike "fault: missing image: nothing was pulled or created" "$(cat "$state/calls")" \
	'pull|create'

fault create-bad-id unsafe preflight.probe.create_id "create prints no 64-hex id"
t_like "fault: create without id: owned container removed after a label check" \
	"$AG_OUT" '"cleanup":\{"complete":true,"status":"removed"\}'

scenario create-bad-id-foreign
ag_must_fail 3 preflight.probe.create_id \
	"fault: create prints no id, the name belongs to a foreign owner -> unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/engine.yaml" --docker "$fake" --json
t_is "fault: foreign look-alike: it survives" "$([ -f "$state/exists" ] && echo yes)" yes
t_like "fault: foreign look-alike: cleanup leaves it alone" "$AG_OUT" \
	'"status":"unowned_not_removed"'
t_unlike "fault: foreign look-alike: no rm was issued" "$(cat "$state/calls")" '^rm '
rm -f "$state/exists"

scenario rm-fails
ag_must_fail 3 preflight.cleanup.failed "fault: removal fails -> unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/engine.yaml" --docker "$fake"
t_like "fault: removal fails: reported as failed cleanup" "$AG_OUT" 'probe cleanup: remove_failed'

t_done
