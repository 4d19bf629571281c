#!/usr/bin/env bash
# t0703: credentials given as arguments of the agent argv (issue 9 finding
# 8): --token X, --api-key X, --password X, --client-secret X,
# --access-token X, --auth-token X, --token=X, -H "X-Api-Key: X" and
# -H "Authorization: Bearer X" are redacted at the argv level in `command`
# (every copy) and their values are removed from the captured output; an
# artifact edited to hold one again is refused by `evidence verify`.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
run -- /bin/sh -c 'echo "args: $*"; echo "$@" >&2' agent \
	--token TOK-ARG-0a1 --api-key KEY-ARG-0b2 --password PW-ARG-0c3 --client-secret CS-ARG-0d4 \
	--access-token AT-ARG-0e5 --auth-token AU-ARG-0f6 --token=INL-ARG-107 \
	-H "X-Api-Key: HDR-ARG-118" -H "Authorization: Bearer BR-ARG-129" --verbose
t_is "the run completes (exit 0)" "$AG_RC" 0
D=$(dirname "$REPORT")
t_run grep -rlaE -- '-ARG-[0-9a-f]{3}' "$W/.agentguard"
t_is "no credential value anywhere in the runs root" "$AG_RC" 1
t_unlike "nor in the summary" "$AG_OUT" '-ARG-[0-9a-f]{3}'
t_is "command: each credential redacted, the rest kept" "$(art "a['command']")" \
	"['/bin/sh', '-c', 'echo \"args: \$*\"; echo \"\$@\" >&2', 'agent', '--token', '[REDACTED]', '--api-key', '[REDACTED]', '--password', '[REDACTED]', '--client-secret', '[REDACTED]', '--access-token', '[REDACTED]', '--auth-token', '[REDACTED]', '--token=[REDACTED]', '-H', 'X-Api-Key: [REDACTED]', '-H', 'Authorization: Bearer [REDACTED]', '--verbose']"
t_is "the containment evidence's copies are the same" \
	"$(art "[a['containment_evidence'][k]['command'] == a['command'] for k in ('requested', 'execution')]")" "[True, True]"
t_like "captured stdout keeps its shape" "$(art "a['command_result']['stdout']")" \
	'^args: --token \[REDACTED\] --api-key \[REDACTED\] .*X-Api-Key: \[REDACTED\] -H Authorization: Bearer \[REDACTED\] --verbose'
t_ok "the artifact verifies" "$AG_BIN" evidence verify "$D"

# An artifact edited to hold a credential argument again is refused, even
# consistently re-sealed.
for edit in "a['command'][5] = 'TOK-EDIT-1'" "a['command'][16] = '--token=TOK-EDIT-2'" \
	"a['command'][18] = 'X-Api-Key: TOK-EDIT-3'" \
	"a['containment_evidence']['requested']['command'][20] = 'Authorization: Bearer TOK-EDIT-4'"; do
	cp "$REPORT" "$T/saved.json"
	ev_py "$REPORT" "$edit"
	ev_reseal "$D"
	ag_must_fail 2 evidence.credential_argument "verify refuses: $edit" "$AG_BIN" evidence verify "$D"
	cp "$T/saved.json" "$REPORT"
	ev_reseal "$D"
done
t_ok "restored, the artifact verifies again" "$AG_BIN" evidence verify "$D"
check_clean "after the run"
t_done
