#!/usr/bin/env bash
# scripts/gateway-image on the real engine and the local registry: the image
# is built from local files, pinned by digest, has no shell, and the gateway
# in it runs as 65532 with a read-only root, no capabilities and no network,
# writing a complete evidence stream into its mount on SIGTERM. Containers
# carry this test's label and are removed by it; no network is created.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker

docker=$AG_DOCKER
label=agentguard.test=t0851-$$
REGISTRY=127.0.0.1:5000
# shellcheck disable=SC2317 # called from the EXIT trap
remove_labelled() {
	local ids
	ids=$("$docker" ps -aq --filter "label=$label") || return 0
	# shellcheck disable=SC2086 # one id per word
	[ -z "$ids" ] || "$docker" rm -f $ids >/dev/null 2>&1 || true
}
t_cleanup remove_labelled

t_run env BUILD="$(basename "$AG_BUILD")" "$AG_ROOT/scripts/gateway-image" "$REGISTRY"
t_is "gateway-image succeeds" "$AG_RC" 0
ref=$(tail -n 1 <<<"$AG_OUT")
t_like "... its last line is the pinned reference" "$ref" \
	"^$REGISTRY/agentguard-gateway@sha256:[0-9a-f]{64}\$"
t_run env BUILD="$(basename "$AG_BUILD")" "$AG_ROOT/scripts/gateway-image" "$REGISTRY"
t_is "a second build of the same inputs gives the same pin" "$(tail -n 1 <<<"$AG_OUT")" "$ref"
ag_must_fail 1 "" "a registry that is not host[:port] is refused" \
	"$AG_ROOT/scripts/gateway-image" 'bad registry'

t_is "the image runs as 65532 with the gateway as entrypoint" \
	"$("$docker" image inspect --format '{{.Config.User}} {{json .Config.Entrypoint}}' "$ref")" \
	'65532:65532 ["/usr/local/bin/agentguard-gateway"]'

hardened=(run --pull never --label "$label" --network none --dns 127.0.0.1
	--user 65532:65532 --read-only --cap-drop ALL --security-opt no-new-privileges
	--pids-limit 64 --memory 64m --memory-swap 64m)
t_run "$docker" "${hardened[@]}" --rm "$ref" --self-check
t_like "the gateway runs hardened in its image (self-check as uid 65532)" "$AG_OUT" \
	'self-check ok uid=65532 libevent='
t_run "$docker" "${hardened[@]}" --rm --entrypoint /bin/sh "$ref" -c true
t_is "the image has no shell" "$AG_RC" 127

# The real gateway in the container: its own loopback, a bind-mounted
# evidence directory, SIGTERM through the engine.
ev=$T/evidence
mkdir -p "$ev"
chmod 0777 "$ev" # written by 65532 inside; the parent stays private
cat >"$ev/policy.json" <<'EOF'
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1,
 "destinations": [{"host": "canary.test", "port": 8080, "test_only": true}]}
EOF
chmod 0644 "$ev/policy.json"
cid=$("$docker" "${hardened[@]}" -d -v "$ev:/agentguard-egress" "$ref" \
	--listen-address 127.0.0.1 --listen-port 8080 --resolver 127.0.0.1 \
	--policy /agentguard-egress/policy.json --events /agentguard-egress/events.jsonl \
	--trial-id t0851 2>/dev/null) || true
t_like "the gateway starts detached in its image" "$cid" '^[0-9a-f]{64}$'
for _ in $(seq 1 50); do
	[ -s "$ev/events.jsonl" ] && break
	sleep 0.1
done
t_is "... it wrote its start record as uid 65532" \
	"$(head -n 1 "$ev/events.jsonl" | jq -r '[.record,.uid]|join(" ")')" "start 65532"
"$docker" kill --signal TERM "$cid" >/dev/null 2>&1 || true
state=
for _ in $(seq 1 100); do
	state=$("$docker" inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$cid" 2>/dev/null) || break
	[ "${state%% *}" = exited ] && break
	sleep 0.1
done
t_is "SIGTERM through the engine: the gateway exits 0" "$state" "exited 0"
t_is "... the stream ends complete" "$(tail -n 1 "$ev/events.jsonl" | jq -r '[.record,.complete]|join(" ")')" \
	"end true"
"$docker" rm -f "$cid" >/dev/null 2>&1 || true
t_is "no container of this test is left" "$("$docker" ps -aq --filter "label=$label")" ""
t_done
