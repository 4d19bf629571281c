#!/usr/bin/env bash
# t1060: `agentguard init --image REF` pins a local image's digest from the
# engine's RepoDigests (the image pushed to the loopback registry), writes a
# pinned reference as given, and refuses, with the next step, an image the
# engine knows no digest for (built here, never pushed) and one that is not
# present; it never pulls.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

# an image pushed to the loopback registry: the engine records its digest
build_image t1060-pushed || t_fail "build and push the test image"
repo=${IMG_REF%@*}
tagged="$repo:$$"
d="$T/pushed"
mkdir -p "$d"
t_run "$AG_BIN" init "$d" --image "$tagged"
t_is "a pushed image: init exits 0" "$AG_RC" 0
t_like "it says which reference it pinned" "$AG_OUT" "image: ${IMG_REF//./\\.}"
t_like "the starter holds the pinned reference" "$(cat "$d/agentguard.yaml")" "image: \"${IMG_REF//./\\.}\""
t_ok "and validates" "$AG_BIN" validate "$d/agentguard.yaml"

# a reference already pinned: written as given, no engine needed
d="$T/given"
mkdir -p "$d"
t_run "$AG_BIN" init "$d" --image "$AG_TEST_IMAGE" --docker-socket /nonexistent/docker.sock
t_is "a pinned reference: exit 0 without the engine" "$AG_RC" 0
t_like "written as given" "$(cat "$d/agentguard.yaml")" "image: \"${AG_TEST_IMAGE//./\\.}\""

# built here and never pushed: no RepoDigests, refused with the next step
ctx="$T/local-ctx"
mkdir -p "$ctx"
printf 'FROM %s\nLABEL agentguard.test=t1060-local\n' "$AG_TEST_IMAGE" >"$ctx/Dockerfile"
local_tag="agentguard-test-t1060-local:$$"
if DOCKER_BUILDKIT=0 "$AG_DOCKER" build -q --pull=false --network none --label "$AG_TEST_LABEL" -t "$local_tag" "$ctx" >/dev/null; then
	t_cleanup "$AG_DOCKER" image rm -f "$local_tag"
	t_is "the local image has no RepoDigests" "$("$AG_DOCKER" image inspect --format '{{len .RepoDigests}}' "$local_tag")" 0
	d="$T/local"
	mkdir -p "$d"
	ag_must_fail 2 images.image.no_digest "an image with no digest is refused" "$AG_BIN" init "$d" --image "$local_tag"
	t_like "with the next step: push it to a registry" "$AG_OUT" 'next step: push the image to a registry'
	t_ok "and nothing is written" test ! -e "$d/agentguard.yaml"
else
	t_fail "build the local-only test image"
fi

# not present at all: refused, never pulled
d="$T/absent"
mkdir -p "$d"
ag_must_fail 2 images.image.absent "an absent image is refused" "$AG_BIN" init "$d" --image "127.0.0.1:5000/agentguard-test-t1060-absent:nope"
t_like "it says it is not present locally" "$AG_OUT" 'not present locally'
t_is "and it was not pulled" "$("$AG_DOCKER" image ls -q 127.0.0.1:5000/agentguard-test-t1060-absent)" ""
ag_must_fail 2 "" "a tag-only reference that does not parse is refused" "$AG_BIN" init "$d" --image "-bad"
t_done
