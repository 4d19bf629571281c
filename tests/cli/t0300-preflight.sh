#!/usr/bin/env bash
# t0300: `agentguard preflight` against the real Docker Engine
# (scripts/test-env): supported as root and as the unprivileged test user,
# unsafe for a missing pinned image and for a platform claim the engine
# contradicts, unavailable when the real client cannot reach a daemon;
# boundary conflicts in the config (tag-only image, forbidden option) are
# unsafe (exit 3) before any Docker call, other config errors exit 2; the
# probe leaves no container behind, and a look-alike container
# with a foreign owner label survives.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

docker=$AG_DOCKER
owner_filter=label=agentguard.owner=preflight
# $T is 0700; the unprivileged user needs to read its configs.
chmod 755 "$T"

t_cleanup t_docker_rm_own agentguard.test=t0300

# write_config FILE IMAGE [PLATFORM] [EXTRA-CONTAINED-LINE]
write_config() {
	cat >"$1" <<CFG
task_id: preflight-t0300
description: preflight integration test
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox:
  type: docker
  image: "$2"
  network: none
contained_execution:
  version: 1
  platform: ${3:-linux-docker-engine}
  network: none
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  cpu_limit: 1.5
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
${4:-}
CFG
	chmod 644 "$1"
}

# Other suites' preflights share the engine, so "left behind" must mean this
# test's own probes: as root, preflight runs through a recording client (it
# notes each probe name it creates, then runs the real client; an explicit
# client's path is not recorded in the evidence) and leftovers are looked up
# by those names. Without root, every preflight probe on the engine counts.
rec=
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 755 "$T/rec"
	: >"$T/rec/names"
	chmod 666 "$T/rec/names" # the unprivileged preflight below records too
	cat >"$T/rec/docker" <<REC
#!/bin/bash
if [ "\${1:-}" = create ] && [ "\${2:-}" = --name ]; then printf '%s\n' "\$3" >>$T/rec/names; fi
exec $docker "\$@"
REC
	chmod 755 "$T/rec/docker"
	rec=$T/rec/docker
fi
pf() { "$AG_BIN" preflight "$@" ${rec:+--docker "$rec"}; }
leftovers() {
	local n
	if [ -z "$rec" ]; then
		"$docker" ps -aq --filter "$owner_filter"
		return
	fi
	while IFS= read -r n; do
		[[ "$n" =~ ^agentguard-preflight-[0-9a-f]+$ ]] || continue
		"$docker" ps -aq --filter "$owner_filter" --filter "name=^/$n\$"
	done <"$T/rec/names"
}

# --- supported, as root
write_config "$T/ok.yaml" "$AG_TEST_IMAGE"
t_run pf "$T/ok.yaml"
t_is "preflight: supported on the real engine (root): exit 0" "$AG_RC" 0
t_like "preflight: status line says supported, linux-docker-engine" "$AG_OUT" \
	'^Docker preflight: supported; claim: linux-docker-engine'
t_is "preflight: the probe left no container behind" "$(leftovers)" ""
[ -z "$rec" ] || t_like "the recording client saw this test's probe" "$(cat "$T/rec/names")" '^agentguard-preflight-[0-9a-f]+'


t_run pf "$T/ok.yaml" --json
t_is "preflight --json: exit 0" "$AG_RC" 0
json=$AG_OUT
t_like "preflight --json: status supported" "$json" '"status":"supported"'
t_like "preflight --json: claim linux-docker-engine" "$json" '"claim_level":"linux-docker-engine"'
t_like "preflight --json: probe created and started" "$json" \
	'"docker_accepted":\{"container_created":true,"container_started":true\}'
t_like "preflight --json: cleanup removed by id" "$json" '"cleanup":\{"complete":true,"status":"removed"\}'
t_like "preflight --json: local image id recorded" "$json" "\"local_image_id\":\"$AG_TEST_IMAGE_ID\""
t_like "preflight --json: registry digest recorded" "$json" "\"registry_digest\":\"$AG_TEST_IMAGE\""
t_like "preflight --json: inspected NanoCpus for 1.5 CPUs" "$json" '"nano_cpus":1500000000'
t_like "preflight --json: inspected pids limit" "$json" '"pids_limit":64'
t_like "preflight --json: inspected memory bytes" "$json" '"memory_bytes":134217728'
t_like "preflight --json: no host namespace sharing" "$json" '"host_namespace_sharing":false'
t_like "preflight --json: the uid/gid probe passed" "$json" \
	'"name":"uid_gid_writable_path_probe","passed":true'
t_unlike "preflight --json: no unavailable or ambiguous evidence" "$json" \
	'"unavailable_or_ambiguous":\[\{'
if command -v python3 >/dev/null; then
	canon=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, separators=(",", ":"), ensure_ascii=True))')
	t_is "preflight --json: evidence is canonical (sorted keys, compact, ASCII)" "$json" "$canon"
else
	t_skip "preflight --json: evidence is canonical (sorted keys, compact, ASCII)" "no python3"
fi
t_unlike "preflight --json: no private paths or endpoints in evidence" "$json" \
	'/home/|/root/|/tmp/ag-|unix://|tcp://'
t_is "preflight --json: no container left behind" "$(leftovers)" ""

# --- explicit bridge opt-in: the probe is inspected on the bridge network
sed 's/network: none/network: bridge/' "$T/ok.yaml" >"$T/bridge.yaml"
chmod 644 "$T/bridge.yaml"
t_run pf "$T/bridge.yaml" --json
t_is "preflight: bridge opt-in is supported: exit 0" "$AG_RC" 0
t_like "preflight: bridge opt-in: inspected NetworkMode bridge" "$AG_OUT" '"network":"bridge"'

# --- supported, as the unprivileged test user (config uid/gid 2001)
if [ "$(id -u)" -eq 0 ]; then
	t_run runuser -u "$AG_TEST_USER" -- "$AG_BIN" preflight "$T/ok.yaml" --docker "$rec"
	t_is "preflight: supported as $AG_TEST_USER via runuser: exit 0" "$AG_RC" 0
	t_like "preflight: $AG_TEST_USER status line" "$AG_OUT" \
		'^Docker preflight: supported; claim: linux-docker-engine'
else
	t_skip "preflight: supported as $AG_TEST_USER via runuser" "needs root"
	t_skip "preflight: $AG_TEST_USER status line" "needs root"
fi
t_is "preflight: still no container left behind" "$(leftovers)" ""

# --- unsafe: a well-formed digest that is not present locally (never pulled)
missing="${AG_TEST_IMAGE%@*}@sha256:$(printf '0%.0s' {1..64})"
write_config "$T/missing.yaml" "$missing"
ag_must_fail 3 preflight.image.missing "preflight: missing pinned image is unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/missing.yaml"
t_like "preflight: missing image status line" "$AG_OUT" '^Docker preflight: unsafe; claim: none'
t_run "$docker" image inspect "$missing"
t_is "preflight: the missing image was not pulled" "$AG_RC" 1

# --- boundary conflicts in the config are unsafe before any Docker call
write_config "$T/tag.yaml" "${AG_TEST_IMAGE%@*}:1"
ag_must_fail 3 config.contained.image_not_pinned "preflight: tag-only image is unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/tag.yaml"
t_like "preflight: tag-only status line" "$AG_OUT" 'Docker preflight: unsafe; claim: none'
write_config "$T/priv.yaml" "$AG_TEST_IMAGE" linux-docker-engine "  allow_privileged: true"
ag_must_fail 3 config.contained.forbidden "preflight: allow_privileged is unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/priv.yaml"
t_like "preflight: forbidden property status line" "$AG_OUT" 'Docker preflight: unsafe; claim: none'
t_run "$AG_BIN" preflight "$T/priv.yaml" --json
t_like "preflight: forbidden property JSON verdict" "$AG_OUT" '"status":"unsafe"'
t_like "preflight: names the contract check" "$AG_OUT" '"failed_check":"contained_execution_contract"'
printf 'task_id: x\n' >"$T/broken.yaml"
ag_must_fail 2 config.missing_required "preflight: other config errors stay exit 2" \
	"$AG_BIN" preflight "$T/broken.yaml"

# --- unsafe through Docker evidence: the engine contradicts the platform claim
write_config "$T/desktop.yaml" "$AG_TEST_IMAGE" docker-desktop-experimental
ag_must_fail 3 preflight.platform.not_desktop \
	"preflight: a desktop plan on Linux Docker Engine is unsafe (exit 3)" \
	"$AG_BIN" preflight "$T/desktop.yaml"
t_like "preflight: desktop mismatch status line" "$AG_OUT" '^Docker preflight: unsafe; claim: none'

# --- unavailable: the real client cannot reach a daemon. The wrapper lives
# in a root-owned 0755 directory (the client must be root-owned and not
# writable by others) and only adds -H with a dead socket; AgentGuard's
# fixed environment would ignore DOCKER_HOST, -H on the command line wins.
if [ "$(id -u)" -eq 0 ]; then
	wdir=$T/deadsock
	mkdir -m 755 "$wdir"
	printf '#!/bin/sh\nexec %s -H unix:///nonexistent-agentguard.sock "$@"\n' "$docker" >"$wdir/docker"
	chmod 755 "$wdir/docker"
	ag_must_fail 3 docker.call.exit "preflight: client that cannot reach a daemon is unavailable (exit 3)" \
		"$AG_BIN" preflight "$T/ok.yaml" --docker "$wdir/docker"
	t_like "preflight: dead daemon status line" "$AG_OUT" '^Docker preflight: unavailable; claim: none'
	t_unlike "preflight: dead daemon diagnostic hides the endpoint" "$AG_OUT" 'unix://|nonexistent-agentguard'
	t_run "$AG_BIN" preflight "$T/ok.yaml" --docker "$wdir/docker" --json
	t_like "preflight --json: dead daemon check is docker_daemon" "$AG_OUT" \
		'"failed_check":"docker_daemon"'
	t_like "preflight --json: explicit client path is a role, not a path" "$AG_OUT" \
		'"docker_client":\{"path":null,"path_role":"explicit"'
	# a client writable by others is refused before it is ever run
	chmod 777 "$wdir/docker"
	ag_must_fail 3 docker.cli.unsafe "preflight: a world-writable client is refused (exit 3)" \
		"$AG_BIN" preflight "$T/ok.yaml" --docker "$wdir/docker"
else
	for d in "dead daemon is unavailable" "dead daemon status line" "dead daemon diagnostic" \
		"dead daemon check" "explicit client path" "world-writable client"; do
		t_skip "preflight: $d" "needs root to create a root-owned wrapper"
	done
fi

# --- a look-alike container with a foreign owner label survives
look=agentguard-preflight-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
t_run "$docker" create --name "$look" --label agentguard.owner=someone-else \
	--label agentguard.preflight=resource-controls --label "agentguard.preflight.name=$look" \
	--label agentguard.test=t0300 --label "$AG_TEST_LABEL" --network none -- "$AG_TEST_IMAGE" /bin/true
t_is "look-alike container created" "$AG_RC" 0
t_run pf "$T/ok.yaml"
t_is "preflight: supported with a look-alike present" "$AG_RC" 0
t_run "$docker" container inspect --format '{{index .Config.Labels "agentguard.owner"}}' "$look"
t_is "preflight: the look-alike with a foreign owner survives" "$AG_OUT" someone-else
t_ok "look-alike removed by the test" "$docker" rm -f "$look"

# --- no contained_execution: unavailable, claim none, no Docker call
cat >"$T/plain.yaml" <<CFG
task_id: preflight-plain
description: no containment
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
CFG
ag_must_fail 3 preflight.config.no_contained_execution \
	"preflight: config without contained_execution is unavailable (exit 3)" \
	"$AG_BIN" preflight "$T/plain.yaml"
t_like "preflight: no contained_execution status line" "$AG_OUT" \
	'^Docker preflight: unavailable; claim: none'

# --- usage
ag_must_fail 2 usage "preflight: missing CONFIG is a usage error" "$AG_BIN" preflight
ag_must_fail 2 usage "preflight: relative --docker is a usage error" \
	"$AG_BIN" preflight "$T/ok.yaml" --docker docker
ag_must_fail 2 usage "preflight: unknown option is a usage error" \
	"$AG_BIN" preflight "$T/ok.yaml" --bogus
t_ok "preflight --help exits 0" "$AG_BIN" preflight --help

t_is "preflight: nothing owned by the preflight is left" "$(leftovers)" ""
t_done
