#!/usr/bin/env bash
# t0910: scripts/runtime-images on the real engine. The agent image builds
# from the checkout (network only for the Debian and npm registries, and
# only on a cache miss; `docker build` itself runs with --network none),
# is pushed to the local registry and printed as a pinned reference. A
# second build with --no-cache gives a different Docker image id but the
# same canonical identity (rootfs digest, runtime config, identity). The
# image runs the real Codex CLI 0.159.2 as 10001:10001 under a hardened
# `docker run`, holds no package manager, its only shell is the pinned
# bash of its tools layer (what Codex runs commands with), and its
# entrypoint refuses interactive use. The gateway image (agentguard-gateway and the
# libraries it needs from pinned .debs, FROM the same pinned base) is built
# first, twice too, with equal canonical identities; it runs as
# 65532:65532, holds no shell and no package manager.
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
# A sanitizer build's gateway needs libasan & co., which no pin supplies:
# only then may the image take them from the host (and it says so).
plain=1 host_libs=
[ "$(basename "$AG_BUILD")" = build ] || { plain= host_libs=1; }
build() {
	BUILD=$AG_BUILD AG_GATEWAY_HOST_LIBS=$host_libs AGENTGUARD="$AG_BIN" \
		"$AG_ROOT/scripts/runtime-images" "$@" "$REG" 2>"$T/build.err"
}
ident() { "$AG_BIN" runtime-image identity "$1" --role "${2:-agent}" --json; }
line() { sed -n "s/^$1 //p" <<<"$2"; }
jf() { jq -r "$1" <<<"$2"; }

start=$SECONDS
out1=$(build) || { diag "$(tail -n 20 "$T/build.err")"; }
t_is "first build prints two lines, gateway first" "$(cut -d' ' -f1 <<<"$out1" | paste -sd' ')" "gateway agent"
t_like "... the pinned gateway reference" "$(line gateway "$out1")" "^$REG/agentguard-gateway@sha256:[0-9a-f]{64}\$"
t_like "... the pinned agent reference" "$(line agent "$out1")" "^$REG/agentguard-runtime-agent@sha256:[0-9a-f]{64}\$"
A1=$(line agent "$out1")
G1=$(line gateway "$out1")
out2=$(build --no-cache) || { diag "$(tail -n 20 "$T/build.err")"; }
A2=$(line agent "$out2")
G2=$(line gateway "$out2")
diag "two builds (the second --no-cache) took $((SECONDS - start)) s"
t_like "second build prints a pinned agent reference" "$A2" "^$REG/agentguard-runtime-agent@sha256:"
t_like "second build prints a pinned gateway reference" "$G2" "^$REG/agentguard-gateway@sha256:"

g1=$(ident "$G1" gateway)
g2=$(ident "$G2" gateway)
cli_conforms "gateway identity --json: the CLI output schema" agentguard.runtime-image-identity "$g1"
t_is "gateway identity: equal rootfs digests" "$(jf .rootfs_digest "$g2")" "$(jf .rootfs_digest "$g1")"
t_is "gateway identity: equal canonical identities" "$(jf .identity_digest "$g2")" "$(jf .identity_digest "$g1")"
t_unlike "gateway: the Docker image ids differ (diagnostic only)" "$(jf .image_id_diagnostic "$g2")" "^$(jf .image_id_diagnostic "$g1")\$"
t_is "gateway runtime config: user" "$(jf .runtime_config.user "$g1")" 65532:65532
t_is "gateway runtime config: entrypoint" "$(jf '.runtime_config.entrypoint|join(" ")' "$g1")" /usr/local/bin/agentguard-gateway
[ -z "$plain" ] || t_is "the gateway image names no host library" \
	"$("$AG_DOCKER" image inspect --format '{{index .Config.Labels "org.agentguard.runtime-image.host-libraries"}}' "$G1")" ""
t_run timeout -k 5 60 "$AG_DOCKER" run --rm --pull never --label "$LABEL" --network none --read-only \
	--cap-drop ALL --security-opt no-new-privileges "$G1" --self-check
t_like "the gateway runs in its image as 65532 (self-check)" "$AG_OUT" 'self-check ok uid=65532 libevent='
cid=$("$AG_DOCKER" create --pull never --label "$LABEL" --network none "$G1")
"$AG_DOCKER" export "$cid" | tar -t >"$T/gwfiles"
"$AG_DOCKER" rm -f "$cid" >/dev/null
t_unlike "no shell or package manager in the gateway image" \
	"$(grep -E '(^|/)(sh|bash|dash|busybox|dpkg|apt|apt-get)$' "$T/gwfiles" || true)" .
t_like "the gateway's libraries come from the pinned packages" \
	"$(grep -cE 'usr/lib/x86_64-linux-gnu/lib(event-2\.1\.so\.7|jansson\.so\.4|crypto\.so\.3)$' "$T/gwfiles")" '^3$'

i1=$(ident "$A1")
i2=$(ident "$A2")
cli_conforms "identity --json: the CLI output schema" agentguard.runtime-image-identity "$i1"
t_like "identity: a rootfs digest" "$(jf .rootfs_digest "$i1")" '^sha256:[0-9a-f]{64}$'
t_is "identity: equal rootfs digests" "$(jf .rootfs_digest "$i2")" "$(jf .rootfs_digest "$i1")"
t_is "identity: equal runtime configs" "$(jf .runtime_config_digest "$i2")" "$(jf .runtime_config_digest "$i1")"
t_is "identity: equal canonical identities" "$(jf .identity_digest "$i2")" "$(jf .identity_digest "$i1")"
t_unlike "the Docker image ids differ (diagnostic only)" "$(jf .image_id_diagnostic "$i2")" "^$(jf .image_id_diagnostic "$i1")\$"
t_like "the identity names the pinned base" "$(jf .base_image "$i1")" "^$REG/agentguard-runtime-base@sha256:[0-9a-f]{64}\$"
t_is "gateway and agent are built FROM the same pinned base" "$(jf .base_image "$g1")" "$(jf .base_image "$i1")"
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
# shellcheck disable=SC2016 # expanded by the image's shell
t_run timeout -k 5 60 "$AG_DOCKER" "${hard[@]}" --entrypoint /bin/sh "$A1" -c 'echo "$BASH_VERSION"; wc -l </etc/passwd'
t_like "/bin/sh is the pinned bash of the tools layer, with coreutils" "$AG_OUT" '5\.2\.15\(1\)-release.3'
t_unlike "... and the C.UTF-8 locale the image sets (no setlocale warning)" "$AG_OUT" 'setlocale'

# The tools layer's shell and no other; no package manager anywhere.
cid=$("$AG_DOCKER" create --pull never --label "$LABEL" --network none "$A1")
"$AG_DOCKER" export "$cid" | tar -t >"$T/files"
"$AG_DOCKER" rm -f "$cid" >/dev/null
# (Codex's package carries its own zsh under codex-resources, off PATH.)
t_is "the only shells on PATH are bash and /bin/sh (a link to it)" \
	"$(grep -E '^(usr/local/bin|usr/bin|bin|usr/sbin|sbin)/(sh|bash|dash|busybox|zsh)$' "$T/files" | sort | tr '\n' ' ')" \
	"bin/bash bin/sh "
t_like "the tools are there (coreutils, grep, sed, find, diff)" \
	"$(grep -cE '^(bin/(cat|ls|grep|sed)|usr/bin/(find|diff|wc))$' "$T/files")" '^7$'
t_unlike "no package manager in the image" "$(grep -E '(^|/)(dpkg|apt|apt-get|npm|node)$' "$T/files" || true)" .
t_like "the CA bundle is there" "$(cat "$T/files")" 'etc/ssl/certs/ca-certificates\.crt'

t_unlike "identity output holds no host path" "$i1" "$T|$AG_ROOT|agentguard-export|/var/lib|/home/"
t_is "identity leaves no export container behind" \
	"$("$AG_DOCKER" ps -aq --filter label=agentguard.owner=runtime-image-export)" ""
ag_must_fail 6 docker.api.not_found "identity of an image the engine does not have is a Docker failure" \
	"$AG_BIN" runtime-image identity "$REG/agentguard-runtime-agent@sha256:$(printf '0%.0s' {1..64})" --role agent
j=$("$AG_BIN" runtime-image identity "$REG/agentguard-runtime-agent@sha256:$(printf '0%.0s' {1..64})" --role agent --json 2>/dev/null || true)
cli_conforms "identity --json failure: one agentguard.error document" agentguard.error "$j"

# Role rules.
ag_must_fail 2 images.role.user "the agent image is not a gateway (uid)" \
	"$AG_BIN" runtime-image identity "$A1" --role gateway
ag_must_fail 2 images.role.user "the bare base is no agent image" \
	"$AG_BIN" runtime-image identity "$(jf .base_image "$i1")" --role agent
ag_must_fail 2 images.role.user "the gateway image is not an agent (uid)" \
	"$AG_BIN" runtime-image identity "$G1" --role agent
ag_must_fail 2 images.freeze.gateway_missing "freeze without the gateway writes nothing" \
	"$AG_BIN" runtime-image freeze --source-commit 0123456789abcdef0123456789abcdef01234567 \
	--agent "$A1" --output "$T/m.json"
t_ok "...and no manifest exists" test ! -e "$T/m.json"
ag_must_fail 2 images.role.user "freeze refuses the agent image standing in as gateway" \
	"$AG_BIN" runtime-image freeze --source-commit 0123456789abcdef0123456789abcdef01234567 \
	--gateway "$A1" --agent "$A1" --root "$AG_ROOT" --output "$T/m.json"
t_ok "...and no manifest exists" test ! -e "$T/m.json"
t_done
