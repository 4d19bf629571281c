#!/usr/bin/env bash
# t1055: a configured secret (a sensitive environment value) that the agent
# writes into a file is a failed secret-scan check naming the file, never
# the value; the patch is withheld and every output that mentions the patch
# says why (the run's summary, `agentguard patch`).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
# the token is written with no keyword before it: no built-in detector fires
run -- /bin/sh -c 'cd /agentguard-workspace && printf "hello\nsee %s here\n" "$AGENT_API_TOKEN" > notes.txt'
t_is "the run fails (exit 1)" "$AG_RC" 1
t_is "the secret-scan check failed" \
	"$(art '[c["passed"] for c in a["checks"] if c["name"] == "secret-scan"]')" "[False]"
t_like "its evidence names the file and line" \
	"$(art '[c["evidence"] for c in a["checks"] if c["name"] == "secret-scan"]')" 'notes\.txt:2.*configured-secret'
t_is "the content scan records the match (file, line, detector)" \
	"$(art '[(m["path"], m["line"], m["detector"]) for c in a["checks"] if c["name"] == "secret-scan" for m in c["content_scan"]["matches"]]')" \
	"[('notes.txt', 2, 'configured-secret')]"
t_is "the patch is withheld, the reason recorded" "$(art '(a["patch"]["status"], a["patch"]["reason"])')" \
	"('omitted', 'patch.secret_scan')"
RUN=$(dirname "$REPORT")
t_ok "the value is in no file of the run directory" bash -c '! grep -rqF CANARY-SENSITIVE-91c2 "$1"' _ "$RUN"
t_unlike "nor in the summary" "$AG_OUT" 'CANARY-SENSITIVE'

# `agentguard patch` on that run says why there is none
ag_must_fail 2 evidence.patch.none "agentguard patch refuses: no patch" "$AG_BIN" patch --public-key "$(pubkey)" "$RUN"
t_like "and says why: the secret scan" "$AG_OUT" 'withheld: the secret scan found a secret.*patch\.secret_scan'

# the human summary says why too
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c 'cd /agentguard-workspace && echo "$AGENT_API_TOKEN" > src/edit.txt'
ledger_runs
t_like "summary: the failed check names the file" "$AG_OUT" 'secret-scan \(critical\): .*src/edit\.txt:1'
t_like "summary: no patch, and why" "$AG_OUT" "The agent's changes: no patch, withheld: the secret scan found a secret.*\[patch\.secret_scan\]"
t_unlike "summary: never the value" "$AG_OUT" 'CANARY-SENSITIVE'

# a run that writes no secret still passes, its patch written
run -- /bin/sh -c 'cd /agentguard-workspace && echo "no secret here" > notes.txt'
t_is "a clean change passes" "$AG_RC" 0
t_is "its patch is written" "$(art 'a["patch"]["status"]')" written
check_clean "secret-in-file runs"
t_done
