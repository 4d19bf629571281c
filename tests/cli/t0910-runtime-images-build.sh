#!/usr/bin/env bash
# t0910: scripts/runtime-images on the real engine. The agent image builds
# from the checkout (network only for the Debian and npm registries, and
# only on a cache miss; `docker build` itself runs with --network none),
# is pushed to the local registry and printed as a pinned reference. A
# second build with --no-cache gives a different Docker image id but the
# same canonical identity (rootfs digest, runtime config, identity). The
# image runs the real Codex CLI 0.159.2 as 10001:10001 under a hardened
# `docker run`, holds no shell and no package manager, and its entrypoint
# refuses interactive use. The gateway image is not built: its binary
# (issue 12) does not exist yet, and the script says so.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-runtime-images.sh"
require_docker
for c in npm musl-gcc jq apt-get dpkg-deb; do
	command -v "$c" >/dev/null || skip_all "$c missing (scripts/deps)"
done
LABEL=agentguard.test=t0910
t_cleanup sh -c "'$AG_DOCKER' ps -aq --filter label=$LABEL | xargs -r '$AG_DOCKER' rm -f"
REG=127.0.0.1:5000
build() { AGENTGUARD="$AG_BIN" "$AG_ROOT/scripts/runtime-images" "$@" "$REG" 2>"$T/build.err"; }
ident() { "$AG_BIN" runtime-image identity "$1" --role agent --json; }
jf() { jq -r "$1" <<<"$2"; }

start=$SECONDS
out1=$(build) || { diag "$(tail -n 20 "$T/build.err")"; }
t_like "first build prints the pinned agent reference" "$out1" "^agent $REG/agentguard-runtime-agent@sha256:[0-9a-f]{64}\$"
t_like "the gateway is reported as not built" "$(cat "$T/build.err")" 'gateway: NOT BUILT: the egress gateway binary \(issue 12\)'
t_unlike "no gateway line is printed" "$out1" '^gateway '
A1=${out1#agent }
out2=$(build --no-cache) || { diag "$(tail -n 20 "$T/build.err")"; }
A2=${out2#agent }
diag "two builds (the second --no-cache) took $((SECONDS - start)) s"
t_like "second build prints a pinned reference" "$out2" "^agent $REG/agentguard-runtime-agent@sha256:"

i1=$(ident "$A1")
i2=$(ident "$A2")
cli_conforms "identity --json: the CLI output schema" agentguard.runtime-image-identity "$i1"
t_like "identity: a rootfs digest" "$(jf .rootfs_digest "$i1")" '^sha256:[0-9a-f]{64}$'
t_is "identity: equal rootfs digests" "$(jf .rootfs_digest "$i2")" "$(jf .rootfs_digest "$i1")"
t_is "identity: equal runtime configs" "$(jf .runtime_config_digest "$i2")" "$(jf .runtime_config_digest "$i1")"
t_is "identity: equal canonical identities" "$(jf .identity_digest "$i2")" "$(jf .identity_digest "$i1")"
t_unlike "the Docker image ids differ (diagnostic only)" "$(jf .image_id_diagnostic "$i2")" "^$(jf .image_id_diagnostic "$i1")\$"
t_like "the identity names the pinned base" "$(jf .base_image "$i1")" "^$REG/agentguard-runtime-base@sha256:[0-9a-f]{64}\$"
t_is "runtime config: user" "$(jf .runtime_config.user "$i1")" 10001:10001
t_is "runtime config: entrypoint" "$(jf '.runtime_config.entrypoint|join(" ")' "$i1")" /usr/local/bin/agentguard-codex-entrypoint
t_is "runtime config: linux/amd64" "$(jf '.runtime_config.os + "/" + .runtime_config.architecture' "$i1")" linux/amd64

# The image runs the real Codex CLI, hardened, as its fixed non-root user.
# shellcheck disable=SC2054 # the commas are tmpfs options
hard=(run --rm --pull never --label "$LABEL" --network none --dns 127.0.0.1 --read-only
	--cap-drop ALL --security-opt no-new-privileges --pids-limit 64 --memory 512m
	--tmpfs /tmp:rw,nosuid,nodev,size=64m,uid=10001,gid=10001,mode=0700)
t_run timeout -k 5 60 "$AG_DOCKER" "${hard[@]}" "$A1" codex --version
t_is "codex --version: exit 0" "$AG_RC" 0
t_like "codex --version: the pinned CLI" "$AG_OUT" 'codex-cli 0\.159\.2'
t_run timeout -k 5 60 "$AG_DOCKER" "${hard[@]}" "$A1"
t_is "no arguments (interactive): refused with 64" "$AG_RC" 64
t_like "the refusal says non-interactive only" "$AG_OUT" 'only non-interactive use'
t_run timeout -k 5 60 "$AG_DOCKER" "${hard[@]}" "$A1" login
t_is "codex login: refused with 64" "$AG_RC" 64
t_run timeout -k 5 60 "$AG_DOCKER" "${hard[@]}" --entrypoint /bin/sh "$A1" -c true
t_unlike "there is no /bin/sh to start" "$AG_RC" '^0$'

# No shell and no package manager anywhere in the filesystem.
cid=$("$AG_DOCKER" create --pull never --label "$LABEL" --network none "$A1")
"$AG_DOCKER" export "$cid" | tar -t >"$T/files"
"$AG_DOCKER" rm -f "$cid" >/dev/null
t_unlike "no shell in the image" "$(grep -E '(^|/)(sh|bash|dash|busybox)$' "$T/files" || true)" .
t_unlike "no package manager in the image" "$(grep -E '(^|/)(dpkg|apt|apt-get|npm|node)$' "$T/files" || true)" .
t_like "the CA bundle is there" "$(cat "$T/files")" 'etc/ssl/certs/ca-certificates\.crt'

t_unlike "identity output holds no host path" "$i1" "$T|$AG_ROOT|agentguard-export|/var/lib|/home/"
t_is "identity leaves no export container behind" \
	"$("$AG_DOCKER" ps -aq --filter label=org.agentguard.runtime-image.export)" ""
ag_must_fail 6 docker.api.not_found "identity of an image the engine does not have is a Docker failure" \
	"$AG_BIN" runtime-image identity "$REG/agentguard-runtime-agent@sha256:$(printf '0%.0s' {1..64})" --role agent
j=$("$AG_BIN" runtime-image identity "$REG/agentguard-runtime-agent@sha256:$(printf '0%.0s' {1..64})" --role agent --json 2>/dev/null || true)
cli_conforms "identity --json failure: one agentguard.error document" agentguard.error "$j"

# Role rules.
ag_must_fail 2 images.role.user "the agent image is not a gateway (uid)" \
	"$AG_BIN" runtime-image identity "$A1" --role gateway
ag_must_fail 2 images.role.user "the bare base is no agent image" \
	"$AG_BIN" runtime-image identity "$(jf .base_image "$i1")" --role agent
ag_must_fail 2 images.freeze.gateway_missing "freeze without the gateway writes nothing" \
	"$AG_BIN" runtime-image freeze --source-commit 0123456789abcdef0123456789abcdef01234567 \
	--agent "$A1" --output "$T/m.json"
t_ok "...and no manifest exists" test ! -e "$T/m.json"
ag_must_fail 2 images.role.user "freeze refuses the agent image standing in as gateway" \
	"$AG_BIN" runtime-image freeze --source-commit 0123456789abcdef0123456789abcdef01234567 \
	--gateway "$A1" --agent "$A1" --root "$AG_ROOT" --output "$T/m.json"
t_ok "...and no manifest exists" test ! -e "$T/m.json"
t_done
