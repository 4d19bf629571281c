#!/usr/bin/env bash
# t1056: the errors a new user meets first each say what to do next:
# running as root (or with required_uid 0), a user outside the docker group
# (the socket's permission), an image not present locally (docker pull REF),
# the starter's placeholder image. (An incomplete cleanup's next step,
# `agentguard cleanup`, is asserted where the injector makes one: t0402.)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# --- as root: the uid check says to run as an unprivileged docker-group user
t_run bash -c 'cd "$1" && shift && exec "$@"' _ "$W" "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/true
t_is "as root: refused (exit 2)" "$AG_RC" 2
t_like "as root: the uid mismatch is named" "$AG_OUT" 'config\.cross\.uid_mismatch'
t_like "as root: the next step" "$AG_OUT" 'next step: run agentguard as an unprivileged user in the docker group, not as root'
sed "s/required_uid: $AG_TEST_UID/required_uid: 0/" "$W/c.yaml" >"$W/root0.yaml"
t_run "$AG_BIN" validate "$W/root0.yaml"
t_like "required_uid 0: refused" "$AG_OUT" 'required_uid.*\[config\.range\]'
t_like "required_uid 0: the next step" "$AG_OUT" 'next step: run agentguard as an unprivileged user in the docker group'

# --- outside the docker group: the socket's permission, and how to fix it
sock=/var/run/docker.sock
if [ -S "$sock" ] && ! runuser -u nobody -- test -w "$sock"; then
	t_run runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME=/nonexistent "$AG_BIN" preflight "$W/c.yaml"
	t_is "outside the docker group: preflight unavailable (exit 3)" "$AG_RC" 3
	t_like "outside the docker group: the socket's permission is named" "$AG_OUT" \
		'next step: this user may not use the Docker socket /var/run/docker\.sock'
	t_like "outside the docker group: and the fix" "$AG_OUT" 'usermod -aG docker'
else
	t_skip "outside the docker group" "no default socket, or nobody may write it"
fi

# --- an image that is not present locally: docker pull REF (never pulled here)
absent="${AG_TEST_IMAGE%@*}@sha256:$(printf '%064d' 0 | tr 0 e)"
sed "s|image: '[^']*'|image: '$absent'|" "$W/c.yaml" >"$W/absent.yaml"
chown "$U:$U" "$W/absent.yaml"
t_run as_user "$AG_BIN" contained-run "$W/absent.yaml" --repo repo -- /bin/true
ledger_runs
t_is "absent image: refused by the preflight (exit 3)" "$AG_RC" 3
t_like "absent image: the reason" "$AG_OUT" 'preflight\.image\.missing'
t_like "absent image: the next step names docker pull and the image" "$AG_OUT" \
	"next step: the image is not present locally .*: docker pull ${absent//./\\.}"
t_run as_user "$AG_BIN" preflight "$W/absent.yaml"
t_like "absent image: preflight says so too" "$AG_OUT" 'next step: the image is not present locally'

# --- the starter's placeholder image has its own message
install -d -o "$U" -g "$U" "$W/starter"
as_user "$AG_BIN" init "$W/starter" >/dev/null 2>&1 || true
if [ -f "$W/starter/agentguard.yaml" ]; then
	sed -i "s/required_uid: .*/required_uid: $AG_TEST_UID/; s/required_gid: .*/required_gid: $AG_TEST_GID/" "$W/starter/agentguard.yaml"
	t_run as_user "$AG_BIN" contained-run "$W/starter/agentguard.yaml" --repo repo -- /bin/true
	ledger_runs
	t_is "placeholder image: refused by the preflight (exit 3)" "$AG_RC" 3
	t_like "placeholder image: its own next step" "$AG_OUT" "next step: the config still names the starter's placeholder image"
	t_unlike "placeholder image: no docker pull of it" "$AG_OUT" 'docker pull registry\.example\.invalid'
else
	t_fail "agentguard init wrote a starter"
fi
check_clean "next-step runs"
t_done
