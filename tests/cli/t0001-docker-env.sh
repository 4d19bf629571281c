#!/usr/bin/env bash
# t0001: the Docker test environment (scripts/test-env up) is healthy: a real
# engine, the digest-pinned busybox image, a locked-down container runs as
# 2001:2001 and cannot write its root fs, and user agtest can use the engine.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

label=agentguard.test=t0001
docker=$AG_DOCKER
t_cleanup t_docker_rm_own "$label"

# A locked-down, throwaway container of the test image, labelled for cleanup.
# shellcheck disable=SC2317 # called through t_run
run_locked() {
	"$docker" run --rm --pull never --label "$label" --label "$AG_TEST_LABEL" --network none --read-only \
		--cap-drop ALL --security-opt no-new-privileges \
		--user "$AG_TEST_UID:$AG_TEST_GID" "$@"
}

# --- engine
t_run "$docker" version --format '{{.Server.Os}}'
t_is "engine answers docker version, Server.Os is linux" "$AG_OUT" linux
t_ok "engine answers docker info" "$docker" info --format '{{.ServerVersion}}'

# --- pinned image
t_like "AG_TEST_IMAGE is a digest-pinned loopback ref" "$AG_TEST_IMAGE" \
	'^127\.0\.0\.1:5000/agentguard-test@sha256:[0-9a-f]{64}$'
t_run "$docker" image inspect --format '{{.Id}}' "$AG_TEST_IMAGE"
t_is "pinned ref resolves to AG_TEST_IMAGE_ID" "$AG_OUT" "$AG_TEST_IMAGE_ID"
t_run "$docker" image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$AG_TEST_IMAGE"
found=no
while IFS= read -r d; do
	if [ "$d" = "$AG_TEST_IMAGE" ]; then found=yes; fi
done <<<"$AG_OUT"
t_is "RepoDigests contains the pinned ref" "$found" yes

# --- a locked-down container
t_run run_locked "$AG_TEST_IMAGE" /bin/id -u
t_is "container runs as uid $AG_TEST_UID" "$AG_OUT" "$AG_TEST_UID"
t_run run_locked "$AG_TEST_IMAGE" /bin/id -g
t_is "container runs as gid $AG_TEST_GID" "$AG_OUT" "$AG_TEST_GID"

# Sentinel: exit 77 would mean the write to / succeeded.
t_run run_locked "$AG_TEST_IMAGE" /bin/sh -c 'touch /agentguard-t0001 && exit 77; exit 3'
t_is "writing the read-only root fs fails" "$AG_RC" 3
t_run run_locked --tmpfs /tmp:rw,nosuid,nodev,noexec,size=1m,uid=2001,gid=2001,mode=0700 \
	"$AG_TEST_IMAGE" /bin/sh -c 'echo x >/tmp/f && cat /tmp/f'
t_is "the same container can write its tmpfs" "$AG_OUT" x
t_run run_locked "$AG_TEST_IMAGE" /bin/grep -E '^Cap(Prm|Eff|Bnd):' /proc/self/status
t_unlike "all capability sets are zero" "$AG_OUT" 'Cap(Prm|Eff|Bnd):[[:space:]]*0*[1-9a-f]'

# --- the unprivileged test user
t_run id -u "$AG_TEST_USER"
t_is "user $AG_TEST_USER has uid $AG_TEST_UID" "$AG_OUT" "$AG_TEST_UID"
t_run id -g "$AG_TEST_USER"
t_is "user $AG_TEST_USER has gid $AG_TEST_GID" "$AG_OUT" "$AG_TEST_GID"
t_run id -nG "$AG_TEST_USER"
t_like "user $AG_TEST_USER is in group docker" " $AG_OUT " ' docker '
if [ "$(id -u)" -eq 0 ]; then
	t_ok "$AG_TEST_USER can run docker version" \
		runuser -u "$AG_TEST_USER" -- "$docker" version --format '{{.Server.Version}}'
else
	t_skip "$AG_TEST_USER can run docker version" "needs root for runuser"
fi

# --- nothing left behind
t_run "$docker" ps -aq --filter "label=$label" --filter "label=$AG_TEST_LABEL"
t_is "no t0001 container left behind" "$AG_OUT" ""

t_done
