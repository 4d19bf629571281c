#!/usr/bin/env bash
# t0704: the environment allowlist refuses the host-control names issue 9
# (finding 11) found missing, and values carrying C1 controls, U+2028/9 or
# bytes that are not UTF-8, from the config file and from the host alike,
# with the usual error (reason token, never the value). The corpus
# (tests/config-corpus, t0100/t0101) holds the per-name documents; this
# drives the CLI end to end, including host values, which only
# contained-run resolves (before any Docker work).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

make_repo
for n in CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS GIT_SSL_CAINFO GIT_CONFIG_COUNT GIT_CONFIG_VALUE_0 \
	GIT_SSH_COMMAND DBUS_SESSION_BUS_ADDRESS TMUX; do
	config "r-$n" "    - {name: $n, value: CANARY-RES-VAL, allow_sensitive: true}"
	ag_must_fail 2 config.env.reserved "validate refuses $n" as_user "$AG_BIN" validate "$W/r-$n.yaml"
	t_unlike "... without echoing the value" "$AG_OUT" CANARY-RES-VAL
	t_like "... naming file, line and column" "$AG_OUT" "r-$n\\.yaml. line 20 column 14: contained_execution.environment\\[2\\].name"
done

config h "    - {name: HOST_X, source: host}"
for v in $'C1-CANARY-a\xc2\x9b31m' $'OSC-CANARY-b\xc2\x9d8;;' $'LS-CANARY-c\xe2\x80\xa8x' \
	$'PS-CANARY-d\xe2\x80\xa9x' $'RAW-CANARY-e\x9bx'; do
	t_run runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" AGENT_API_TOKEN=CANARY-SENSITIVE-91c2 \
		HOST_X="$v" "$AG_BIN" contained-run "$W/h.yaml" --repo "$W/repo" --runs-root "$W/h-runs" -- /bin/true
	t_is "a host value like ${v%%-*} is refused (exit 2)" "$AG_RC" 2
	t_like "... as config.env.host_value" "$AG_OUT" 'config\.env\.host_value'
	t_unlike "... without echoing it" "$AG_OUT" 'CANARY-[a-e]'
done
t_ok "no run was started for them" test ! -e "$W/h-runs/$(ls "$W/h-runs" 2>/dev/null | head -1)/contained-run.json"
t_done
