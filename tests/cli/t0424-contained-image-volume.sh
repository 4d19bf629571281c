#!/usr/bin/env bash
# t0424: an image VOLUME leaves no volume behind (issue 9, finding 9).
# An image with `VOLUME /data` makes Docker create an anonymous volume for
# every container of it. The preflight probe refuses the extra mount, and
# used to report its probe "removed" while the volume stayed. Containers are
# now removed with their anonymous volumes (rm -v), and each volume the
# container showed is verified gone: after a preflight, after a run, and
# after `agentguard cleanup` of a crashed run's container.
#
# The image puts a file with a per-test nonce in /data, which Docker copies
# into each new anonymous volume: a volume of this test is found by that
# file in Docker's volume directory, so nobody else's volume is ever looked
# at or touched.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

make_repo
t_cleanup remove_run_containers
nonce="t0424-$$-$RANDOM$RANDOM"
voldir="$("$AG_DOCKER" info --format '{{.DockerRootDir}}')/volumes"
# our_volumes: the anonymous volumes holding this test's nonce
our_volumes() {
	local f
	for f in "$voldir"/*/_data/"$nonce"; do
		[ -e "$f" ] && basename "$(dirname "$(dirname "$f")")"
	done
	return 0
}
# Whatever happens, no volume of this test outlives it.
drop_volumes() { our_volumes | xargs -r "$AG_DOCKER" volume rm -f >/dev/null 2>&1 || true; }
t_cleanup drop_volumes

IMG_REF=
build_image_ctx() { # like build_image, with the nonce file in the build context
	local ctx="$T/image-t0424-vol" repo="127.0.0.1:5000/agentguard-test-t0424-vol" iid out digest
	mkdir -p "$ctx"
	printf '%s\n' "$nonce" >"$ctx/$nonce"
	printf 'FROM %s\nCOPY %s /data/%s\nVOLUME /data\nLABEL agentguard.test=t0424-vol\n' \
		"$AG_TEST_IMAGE" "$nonce" "$nonce" >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 "$AG_DOCKER" build -q --pull=false --network none -t "$repo:$$" "$ctx" >/dev/null || return 1
	iid=$("$AG_DOCKER" image inspect --format '{{.Id}}' "$repo:$$") || return 1
	t_cleanup "$AG_DOCKER" image rm -f "$iid"
	out=$("$AG_DOCKER" push "$repo:$$" 2>&1) || return 1
	digest=$(printf '%s\n' "$out" | sed -n 's/.*digest: \(sha256:[0-9a-f]\{64\}\).*/\1/p')
	[ -n "$digest" ] && IMG_REF="$repo@$digest"
}
build_image_ctx || true
t_like "build: the VOLUME image is pinned by digest" "$IMG_REF" '@sha256:[0-9a-f]{64}$'
t_is "build: no volume of this test exists yet" "$(our_volumes)" ""

config c
use_image "$IMG_REF"

# --- agentguard preflight: the probe's volume goes with the probe
t_run as_user "$AG_BIN" preflight "$W/c.yaml" --json
t_is "preflight: an image VOLUME is refused (exit 3)" "$AG_RC" 3
t_like "preflight: because of the extra volume mount" "$AG_OUT" "volume"
t_like "preflight: the probe was removed" "$AG_OUT" '"cleanup":\{"complete":true,"status":"removed"\}'
t_is "preflight: no volume of it remains" "$(our_volumes)" ""

# --- contained-run: refused at preflight, and nothing remains
run -- /bin/true
t_is "run: refused at preflight (exit 3)" "$AG_RC" 3
t_is "run: no volume of it remains" "$(our_volumes)" ""
check_clean "run"

# --- a crashed run's container with an anonymous volume: `agentguard cleanup`
# removes the volume with the container. A real run (of the plain test image,
# which the preflight admits) is SIGKILLed, so its directory and signed marker
# are exactly what a crashed AgentGuard leaves; its container is then replaced
# by one of the VOLUME image with the run's name and owner labels (the VOLUME
# image itself never gets past the preflight).
use_image "$AG_TEST_IMAGE"
PIDFILE="$W/ag.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --timeout 60 \
	-- /bin/sleep 60 >/dev/null 2>&1 &
runner=$!
for _ in $(seq 1 100); do [ -s "$W/ag.pid" ] && break; sleep 0.1; done
wait_running || true
kill -KILL "$(cat "$W/ag.pid")" 2>/dev/null || true
wait "$runner" 2>/dev/null || true
rd=$(ls -1d "$W"/.agentguard/contained-runs/*/ | sort | tail -n 1)
suffix=$(run_suffix "$rd")
t_ledger_run "$suffix"
for id in $("$AG_DOCKER" ps -aq --no-trunc --filter "label=agentguard.contained-run.id=$suffix"); do
	"$AG_DOCKER" rm -f -v "$id" >/dev/null 2>&1 || true
done
cid=$("$AG_DOCKER" create --name "agentguard-$suffix" --label agentguard.owner=contained-run \
	--label "agentguard.contained-run.id=$suffix" --label "agentguard.test-run=$AG_TEST_RUN_ID" \
	--network none "$IMG_REF" /bin/true)
t_like "crash: the crashed run's container exists" "$cid" '^[0-9a-f]{64}$'
t_is "crash: it has an anonymous volume of this test" "$(our_volumes | wc -l)" 1
t_run as_user "$AG_BIN" cleanup
t_is "crash: cleanup exits 0" "$AG_RC" 0
t_like "crash: the run is recovered" "$AG_OUT" '1 recovered'
t_run "$AG_DOCKER" container inspect "$cid"
t_is "crash: the container is gone" "$AG_RC" 1
t_is "crash: and so is its volume" "$(our_volumes)" ""
t_done
