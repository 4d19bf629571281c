#!/usr/bin/env bash
# t0340: an image with nothing in it but one static binary (no shell, no
# libc, no coreutils: distroless/scratch style) passes `agentguard
# preflight` and runs under `contained-run`, because the preflight's
# controlled run is AgentGuard's own static probe, bind-mounted read-only
# as the probe container's entrypoint. Real engine; the image is imported
# from a root filesystem this test builds and pushed to the local registry
# for a digest.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
command -v musl-gcc >/dev/null || skip_all "musl-gcc is needed to build the static agent"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

# The one binary: writes a file into its workspace and says so.
mkdir -p "$T/rootfs" "$T/src"
cat >"$T/src/agent.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(void)
{
	int fd = open("/agentguard-workspace/from-distroless.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "written\n", 8) != 8)
		return 3;
	close(fd);
	return write(1, "hello from a distroless agent\n", 30) == 30 ? 0 : 4;
}
C
musl-gcc -static -O2 -o "$T/rootfs/agent" "$T/src/agent.c"
repo=127.0.0.1:5000/agentguard-t0340-distroless
tag=$repo:$$
tar -C "$T/rootfs" -c . |
	docker import --change 'ENTRYPOINT ["/agent"]' --change "LABEL $AG_TEST_LABEL" - "$tag" >/dev/null
t_cleanup docker rmi "$tag"
docker push "$tag" >/dev/null
digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$tag" | grep -m1 "^$repo@")
t_like "the distroless image has a registry digest" "$digest" '@sha256:[0-9a-f]{64}$'
t_run docker run --rm --label "$AG_TEST_LABEL" --entrypoint /bin/sh "$tag" -c true
t_unlike "the image really has no shell" "$AG_RC" '^0$'

config c
sed -i "s|image: '$AG_TEST_IMAGE'|image: '$digest'|" "$W/c.yaml"
make_repo

t_run as_user "$AG_BIN" preflight "$W/c.yaml" --json
t_is "distroless: preflight passes (exit 0)" "$AG_RC" 0
t_like "distroless: supported" "$AG_OUT" '"status":"supported"'
t_like "distroless: the probe ran and was removed" "$AG_OUT" \
	'"cleanup":\{"complete":true,"status":"removed"\}'

run -- /agent
t_is "distroless: contained-run passes (exit 0)" "$AG_RC" 0
t_like "distroless: the agent's output was captured" "$(art 'a["command_result"]["stdout"]')" \
	'hello from a distroless agent'
t_is "distroless: its workspace write was captured" "$(art 'a["mutations"]["added_files"]')" \
	"['from-distroless.txt']"
check_clean "distroless"
t_done
