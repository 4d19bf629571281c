#!/usr/bin/env bash
# t0921: `runtime-image identity` exports through the ledger and streams the
# export into the digest. Its failures fail closed with a named reason and
# leave no container, whatever the daemon does; the daemon's faults come
# from the FAULT INJECTOR tests/fakes/fake-engine, which forwards
# everything else to the real engine:
#  - an export that is not a tar, a 500, a connection dropped mid-answer;
#  - a create whose answer is lost (the container exists; the ledger finds
#    it by its unique label and removes it);
#  - an export larger than AG_IMAGES_EXPORT_MAX_BYTES (2 GiB), streamed:
#    refused at the bound as images.export.too_large, never held in memory.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-engine.sh"
[ "$(id -u)" -eq 0 ] || skip_all "root-owned sockets need root"
command -v readelf >/dev/null || skip_all "readelf missing (scripts/deps)"
chmod 755 "$T"
REG=127.0.0.1:5000
host_libs=
[ "$(basename "$AG_BUILD")" = build ] || host_libs=1
out=$(BUILD=$AG_BUILD AG_GATEWAY_HOST_LIBS=$host_libs "$AG_ROOT/scripts/runtime-images" --only gateway \
	"$REG" 2>"$T/build.err") || diag "$(tail -n 20 "$T/build.err")"
G=$(sed -n 's/^gateway //p' <<<"$out")
t_like "the gateway image is built and pinned" "$G" "^$REG/agentguard-gateway@sha256:[0-9a-f]{64}\$"

fake_engine_start "$T/fe"
ident() { "$AG_BIN" runtime-image identity "$G" --role gateway --docker-socket "$FE_SOCK" "$@"; }
# none_left: no export container created through the injector exists.
none_left() { named_gone agentguard-export-; }
EXPORT='"method": "GET", "path": "^/containers/[0-9a-f]{64}/export$"'

fault '[]'
t_run ident --json
t_is "through the injector with no fault: the identity is computed" "$AG_RC" 0
want=$(jq -r .rootfs_digest <<<"$AG_OUT")
t_like "... a rootfs digest" "$want" '^sha256:[0-9a-f]{64}$'
t_like "the export container was created through the ledger, by name" "$(cat "$FE_RULES.log")" \
	'POST /containers/create\?name=agentguard-export-[0-9a-f]{16}'
t_like "... removed by its id with its volumes" "$(cat "$FE_RULES.log")" \
	'DELETE /containers/[0-9a-f]{64}\?force=1&v=1'
t_like "... and its absence verified by id" "$(grep -A1 '^DELETE' "$FE_RULES.log" | tail -n 1)" \
	'^GET /containers/[0-9a-f]{64}/json'
t_ok "... none left" none_left

fault "[{$EXPORT, \"action\": \"status\", \"status\": 200, \"body\": \"this is not a tar\"}]"
ag_must_fail 2 images.rootfs.read "an export that is not a tar is refused" ident
t_ok "... and its container is removed" none_left

fault "[{$EXPORT, \"action\": \"status\", \"status\": 500, \"body\": \"{\\\"message\\\": \\\"boom\\\"}\"}]"
ag_must_fail 6 docker.api.daemon_error "the daemon failing the export is a Docker failure" ident
t_ok "... and its container is removed" none_left

fault "[{$EXPORT, \"action\": \"drop\"}]"
ag_must_fail 6 docker.engine.dropped "an export dropped without an answer is a Docker failure" ident
t_ok "... and its container is removed" none_left

fault '[{"method": "POST", "path": "^/containers/create$", "action": "lost"}]'
ag_must_fail 6 docker.engine.dropped "a create whose answer is lost fails" ident
t_like "... the container was created all the same" "$(cat "$FE_RULES.log")" 'name=agentguard-export-'
t_ok "... the ledger found it by its label and removed it" none_left

# The 2 GiB stream is hashed as it arrives: minutes under a sanitizer's
# instrumented SHA-256, so it runs in the plain build only.
if [ -z "$host_libs" ]; then
	start=$SECONDS
	fault "[{$EXPORT, \"action\": \"tar_stream\", \"bytes\": $((2 * 1024 * 1024 * 1024 + 4 * 1024 * 1024))}]"
	t_run /usr/bin/time -f 'peak-rss-kb %M' "$AG_BIN" runtime-image identity "$G" --role gateway \
		--docker-socket "$FE_SOCK"
	diag "the 2 GiB stream was refused after $((SECONDS - start)) s"
	t_like "an export over 2 GiB is refused at the bound" "$AG_OUT" '\[images\.export\.too_large\]'
	rss=$(sed -n 's/^peak-rss-kb //p' <<<"$AG_OUT")
	t_ok "... streamed: peak memory stays under 64 MiB (was $rss KiB)" test "${rss:-999999}" -lt 65536
	t_ok "... and its container is removed" none_left
fi

fault '[]'
t_run ident --json
t_is "after the faults, the same digest again" "$(jq -r .rootfs_digest <<<"$AG_OUT")" "$want"
t_is "no export container of anyone's is left from this test" \
	"$(for n in $(grep -o 'name=agentguard-export-[0-9a-f]*' "$FE_RULES.log" | cut -d= -f2); do
		docker ps -aq --filter "name=^$n\$"; done)" ""
t_done
