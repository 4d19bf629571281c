#!/usr/bin/env bash
# t1115: a gateway the agent has compromised cannot fill the host's disk.
# The test builds a gateway image whose agentguard-gateway is
# tests/gear/agtest-hostile-gateway.c: it listens (so the run's self-tests
# pass and the agent starts), then writes 64 MiB into each evidence file it
# was given, 64 MiB into a new file beside them, and 64 MiB to its standard
# output and error. Through `agentguard study-egress run` on the real engine:
# - each evidence file on the host stops at the gateway's file size limit
#   (16 MiB, the stream's own bound), no new file appears in the run's
#   evidence directory, and the run's directory holds no more than those;
# - the gateway's container, as the test saw it running, has the log driver
#   "none" (no log file on the host), the fsize ulimit and only its three
#   evidence files bound (the policy read-only);
# - the run does not pass, and nothing of it is left.
# Before this bound, the same gateway wrote its 64 MiB (and more files) into
# the run directory through a writable bind mount of the whole directory,
# and the engine kept its output in a log file that grows without bound.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t1115
. "$(dirname "$0")/lib-study.sh"

HOSTILE=$AG_BUILD/tests/agtest-hostile-gateway
[ -x "$HOSTILE" ] || skip_all "$HOSTILE missing (make tests)"
study_begin
BOUND=16777216

# The hostile image: the pinned gateway image with its binary replaced,
# built with the network off, pushed to the local registry and pinned.
ctx=$T/hostile-image
mkdir -p "$ctx"
cp "$HOSTILE" "$ctx/agentguard-gateway"
printf 'FROM %s\nCOPY agentguard-gateway /usr/local/bin/agentguard-gateway\n' "$GW_IMAGE" >"$ctx/Dockerfile"
tag=127.0.0.1:5000/agentguard-gateway-hostile:t1115-$$
t_cleanup sh -c "'$AG_DOCKER' rmi -f '$tag' >/dev/null 2>&1 || true"
if ! "$AG_DOCKER" build -q --network none --label "agentguard.test-run=$AG_TEST_RUN_ID" \
	-t "$tag" "$ctx" >"$T/build.log" 2>&1 || ! "$AG_DOCKER" push "$tag" >"$T/push.log" 2>&1; then
	t_fail "the hostile gateway image could be built and pushed" "$(tail -5 "$T/build.log" "$T/push.log" 2>/dev/null)"
	t_done
fi
HOSTILE_IMAGE=$("$AG_DOCKER" image inspect --format '{{index .RepoDigests 0}}' "$tag")
t_like "the hostile image is pinned" "$HOSTILE_IMAGE" '^127\.0\.0\.1:5000/agentguard-gateway-hostile@sha256:[0-9a-f]{64}$'

# While the run goes on: the gateway's inspection as the engine shows it.
TRIAL=t1115-$$-$RANDOM
watch_gateway() {
	local g i
	for i in $(seq 1 150); do
		g=$("$AG_DOCKER" ps -q --filter "label=agentguard.study-egress.trial=$TRIAL" \
			--filter label=agentguard.study-egress.role=gateway)
		if [ -n "$g" ]; then
			"$AG_DOCKER" container inspect "$g" >"$T/gateway.json" 2>/dev/null && return 0
		fi
		sleep 0.2
	done
	return 1
}
watch_gateway &
watcher=$!
study_subnet
study_run --policy "$W/p.json" --gateway-image "$HOSTILE_IMAGE" --study-subnet "$STUDY_SUBNET" \
	--trial-id "$TRIAL" --outbound-internal -- /bin/sleep 5
wait "$watcher" || true
t_ok "the run does not pass" test "$AG_RC" -ne 0
t_ok "the run left its directory" test -d "$RUN_DIR/egress"

EG=$RUN_DIR/egress
size() { stat -c %s "$1" 2>/dev/null || echo absent; }
t_is "the stream stopped at the bound" "$(size "$EG/events.jsonl")" "$BOUND"
agg=$(size "$EG/aggregates.jsonl")
t_ok "the aggregates file stopped at the bound, or was dropped as not evidence ($agg)" \
	test "$agg" = "$BOUND" -o "$agg" = absent
t_is "no other file appeared in the evidence directory" \
	"$(find "$EG" -mindepth 1 -printf '%f\n' | grep -v -x -e policy.json -e events.jsonl -e aggregates.jsonl || true)" ""
total=$(du -s -B1 --apparent-size "$RUN_DIR" | cut -f1)
t_ok "the run's directory holds at most the two bounded files and a little more ($total bytes)" \
	test "$total" -le $((2 * BOUND + 4 * 1024 * 1024))

if [ -s "$T/gateway.json" ]; then
	g() { jq -r "$1" "$T/gateway.json"; }
	t_is "the gateway's log driver is none" "$(g '.[0].HostConfig.LogConfig.Type')" none
	t_is "... so the engine keeps no log file for it" "$(g '.[0].LogPath')" ""
	t_is "the gateway's file size limit is the bound (soft = hard)" \
		"$(g '.[0].HostConfig.Ulimits|map("\(.Name) \(.Soft) \(.Hard)")|join(";")')" "fsize $BOUND $BOUND"
	t_is "only its three evidence files are bound, the policy read-only" \
		"$(g '[.[0].Mounts[]|"\(.Type) \(.Destination) \(.RW)"]|sort|join(";")')" \
		"bind /agentguard-egress/aggregates.jsonl true;bind /agentguard-egress/events.jsonl true;bind /agentguard-egress/policy.json false"
else
	t_fail "the gateway was seen running"
fi
t_ok "nothing of the run is left" study_nothing_left "$RUN_DIR"
t_done
