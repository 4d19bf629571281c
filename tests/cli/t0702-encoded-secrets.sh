#!/usr/bin/env bash
# t0702: a secret is removed in every encoded form the artifact applies
# (issue 9 finding 7). A configured value holding '%' names a file the agent
# creates: the artifact records paths percent-encoded ('%' -> %25), so the
# value used to survive there as "pct%25CANARY...". The agent also prints a
# value URL-encoded and JSON-escaped. None of it may reach the runs root or
# the summary, in any form.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c "    - {name: AGENT_PCT, value: 'pct%CANARY-PCT-5e1'}" \
	"    - {name: AGENT_UNI, value: 'caf$(printf '\303\251')-CANARY-UNI-2b'}"
make_repo
run -- /bin/sh -c 'cd /agentguard-workspace/src && echo x > "$AGENT_PCT.txt" && mkdir -p "d-$AGENT_PCT" &&
	echo y > "d-$AGENT_PCT/in.txt" &&
	echo "url: pct%25CANARY-PCT-5e1 lower: caf%c3%a9-CANARY-UNI-2b upper: caf%C3%A9-CANARY-UNI-2b" &&
	echo "json: {\"v\":\"caf\u00e9-CANARY-UNI-2b\"} raw: $AGENT_UNI $AGENT_PCT"'
t_is "the run completes (exit 0)" "$AG_RC" 0
t_like "three changes recorded" "$(art "a['mutations']['changed_files_total']")" '^[34]$'
t_like "the file's path is recorded, its secret part redacted" "$(art "a['mutations']['added_files']")" 'src/\[REDACTED\]\.txt'
t_run grep -rlaF CANARY-PCT "$W/.agentguard"
t_is "the '%' value is nowhere in the runs root, raw or encoded" "$AG_RC" 1
t_run grep -rlaF CANARY-UNI "$W/.agentguard"
t_is "the non-ASCII value is nowhere in the runs root, raw or encoded" "$AG_RC" 1
t_unlike "nor in the summary" "$AG_OUT" 'CANARY-(PCT|UNI)'
t_like "the output keeps its shape" "$(art "a['command_result']['stdout']")" 'url: \[REDACTED\] lower: \[REDACTED\] upper: \[REDACTED\]'
t_ok "the artifact verifies" "$AG_BIN" evidence verify "$(dirname "$REPORT")"
check_clean "after the run"
t_done
