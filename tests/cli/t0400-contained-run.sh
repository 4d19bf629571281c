#!/usr/bin/env bash
# t0400: `agentguard contained-run` end to end on the real Docker Engine, run
# as the unprivileged test user (uid/gid 2001) as the bind-mount rule needs:
# a passing run that edits, adds, deletes and renames; the argv kept exactly;
# each exit code the engine lets us reach; canaries (host environment,
# sensitive values, agent output, path names) never printed or recorded; and
# no container left behind after any of it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# --- a passing run that edits, adds, deletes and renames
run -- /bin/sh -c 'cd /agentguard-workspace && echo four >> src/edit.txt && echo new > src/added.txt && rm src/delete.txt && mv docs/old-name.md docs/new-name.md && echo "token=$AGENT_API_TOKEN mode=$AGENT_MODE host=$AG_CANARY_HOST"'
t_is "pass: exit 0" "$AG_RC" 0
t_ok "pass: the artifact exists" test -f "$REPORT"
t_is "pass: result PASS" "$(art 'a["result"]')" PASS
t_is "pass: modified" "$(art 'a["mutations"]["modified_files"]')" "['src/edit.txt']"
t_is "pass: added" "$(art 'a["mutations"]["added_files"]')" "['src/added.txt']"
t_is "pass: deleted" "$(art 'a["mutations"]["deleted_files"]')" "['src/delete.txt']"
t_is "pass: renamed" "$(art '[(r["source_path"], r["destination_path"]) for r in a["mutations"]["renamed_files"]]')" "[('docs/old-name.md', 'docs/new-name.md')]"
t_is "pass: exact line counts" "$(art '(a["diff_summary"]["lines_added"], a["diff_summary"]["lines_deleted"], a["diff_summary"]["line_count_status"])')" "(2, 1, 'exact')"
t_is "pass: outcome from docker state" "$(art 'a["command_result"]["outcome"]')" exited
t_is "pass: preflight supported" "$(art 'a["containment_evidence"]["preflight"]["status"]')" supported
t_is "pass: cleanup verified" "$(art '(a["cleanup"]["status"], a["cleanup"]["liveness_verified"], a["cleanup_complete"])')" "('removed', True, True)"
t_is "pass: workspace removed after absence" "$(art 'a["cleanup"]["workspace_status"]')" removed
t_is "pass: source integrity" "$(art 'a["source_integrity"]["source_unchanged"]')" True
t_is "pass: image identity consistent" "$(art 'a["containment_evidence"]["image"]["identity_consistent"]')" True
t_is "pass: daemon fingerprint unchanged" "$(art 'a["daemon_fingerprint"]["unchanged"]')" True
t_is "pass: no residue of this run" "$(art 'a["residue"]["this_run_after"]')" 0
t_is "pass: environment names only" "$(art 'a["containment_evidence"]["environment"]["values_recorded"]')" False
t_like "pass: agent output recorded, secret redacted" "$(art 'a["command_result"]["stdout"]')" 'token=\[REDACTED\] mode=\[REDACTED\] host=$'
t_is "pass: hashed container identity" "$(art 'sorted(a["containment_evidence"]["cleanup"]["container_identity"])')" "['id_sha256', 'image_id', 'name_sha256', 'owner_label_sha256']"
check_clean "pass"
for canary in CANARY-HOST-ENV-7f3a CANARY-SENSITIVE-91c2 CANARY-PATH; do
	t_unlike "pass: '$canary' is not on the terminal" "$AG_OUT" "$canary"
	t_ok "pass: '$canary' is not in the evidence" bash -c '! grep -rq -- "$1" "$2"' _ "$canary" "$(dirname "$REPORT")"
done
t_unlike "pass: no private host path in the artifact" "$(cat "$REPORT")" '/tmp/|/home/'
t_ok "pass: the artifact is canonical JSON (sorted, compact)" "$PY" -c 'import json,sys; s=open(sys.argv[1]).read().rstrip("\n"); assert s==json.dumps(json.loads(s),sort_keys=True,separators=(",",":"),ensure_ascii=True)' "$REPORT"

# --- source integrity can fail: something else edits the source during the run
# The edit waits for the agent's container to run (so the baseline is already
# taken) instead of a fixed delay, which lost the race on a loaded machine.
(
	for _ in $(seq 1 6); do wait_running && break; done
	echo "edited behind the agent's back" >>"$W/repo/src/edit.txt"
) &
run -- /bin/sleep 5
wait
t_is "source: recorded as changed" "$(art 'a["source_integrity"]["source_unchanged"]')" False
t_is "source: the differing path is named" "$(art 'a["source_integrity"]["differing_paths"]')" "['src/edit.txt']"
make_repo

# --- the argv after "--" is kept exactly
run -- /bin/printf '<%s>\n' --help -h -- '--empty=' '$(id);|&<>' 'ü-non-ascii' '' '--repo'
t_is "argv: exit 0" "$AG_RC" 0
t_is "argv: every token arrives verbatim" "$(art 'a["command_result"]["stdout"]')" "$(printf '<%s>\n' --help -h -- '--empty=' '$(id);|&<>' 'ü-non-ascii' '' '--repo')"

# --- a huge argv stays within the containment evidence's bounds
long=$(printf 'x%.0s' $(seq 1 700))
big=()
for _ in $(seq 1 100); do big+=("$long"); done
run -- /bin/true "${big[@]}"
t_is "big argv: exit 0" "$AG_RC" 0
t_is "big argv: the containment command list is cut and says so" "$(art 'a["containment_evidence"]["requested"]["command"][-1]')" "[TRUNCATED]"
t_is "big argv: the artifact's own command keeps every token" "$(art 'len(a["command"])')" 101

# --- usage errors before any Docker call (exit 2)
ag_must_fail 2 usage "usage: a missing boundary" as_user "$AG_BIN" contained-run "$W/c.yaml" /bin/true
ag_must_fail 2 usage "usage: an empty argv" as_user "$AG_BIN" contained-run "$W/c.yaml" --
ag_must_fail 2 usage "usage: the boundary before the config" as_user "$AG_BIN" contained-run -- /bin/true
t_like "usage: says the config is missing" "$AG_OUT" 'missing argument CONFIG'
ag_must_fail 2 usage "usage: an unknown option before the boundary" as_user "$AG_BIN" contained-run "$W/c.yaml" --bogus -- /bin/true
t_like "usage: names the unknown option" "$AG_OUT" "--bogus"
t_run as_user "$AG_BIN" contained-run --help
t_like "usage: --help before the boundary is AgentGuard's" "$AG_OUT" 'Run one explicit argv'
ag_must_fail 2 config.cross.uid_mismatch "config: uid must be the invoking user's" "$AG_BIN" contained-run "$W/c.yaml" --repo "$W/repo" -- /bin/true
config nouser "    - {name: MISSING_NEEDED, source: host, required: true}"
ag_must_fail 2 config.env.required_missing "config: a required host value is missing" as_user "$AG_BIN" contained-run "$W/nouser.yaml" --repo repo -- /bin/true
t_ok "no run directory for config errors" bash -c '! ls "$1"/.agentguard/contained-runs/*/ 2>/dev/null | grep -q nouser' _ "$W"

# --- a runs root whose path others could rename is refused (bind paths resolve late)
mkdir -p "$T/open"
chmod 777 "$T/open"
ag_must_fail 2 run.runs_root_unsafe "runs root: under a world-writable directory is refused" \
	as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root "$T/open/runs" -- /bin/true

# --- output cut at the cap never keeps part of a secret
run -- /bin/sh -c 'head -c 65530 /dev/zero | tr "\0" a; echo "$AGENT_API_TOKEN"'
t_is "cap: exit 0" "$AG_RC" 0
t_is "cap: stdout marked truncated" "$(art 'a["command_result"]["stdout_truncated"]')" True
t_ok "cap: no fragment of the secret survives" bash -c '! grep -q "CANARY-SEN" "$1"' _ "$REPORT"

# --- a corrupt chain head: the run cannot be sealed, so it fails closed (exit 4)
mkdir -p "$W/sealtest"
chown "$U:$U" "$W/sealtest"
as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root sealtest -- /bin/true >/dev/null 2>&1 || true
echo junk >"$W/sealtest/agentguard-chain-head.json"
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --runs-root sealtest --json -- /bin/true
t_is "seal: an unsealable run exits 4" "$AG_RC" 4
t_like "seal: the reason is named" "$AG_OUT" 'evidence.seal.head_corrupt'
t_like "seal: the result is not PASS" "$AG_OUT" '"result":"FAIL"'

# --- exit 1: the agent fails; --allow-fail-result turns it into 0
run -- /bin/sh -c 'exit 3'
t_is "agent failure: exit 1" "$AG_RC" 1
t_is "agent failure: exit status recorded" "$(art 'a["command_result"]["exit_code"]')" 3
run --allow-fail-result -- /bin/sh -c 'exit 3'
t_is "agent failure: --allow-fail-result gives 0" "$AG_RC" 0

# --- exit 3: a missing (well-formed, never pulled) image fails preflight
config missing
sed -i "s|@sha256:[0-9a-f]*|@sha256:$(printf '%064d' 7)|" "$W/missing.yaml"
t_run as_user "$AG_BIN" contained-run "$W/missing.yaml" --repo repo --json -- /bin/true
t_is "preflight: missing image exits 3" "$AG_RC" 3
t_like "preflight: stage recorded" "$AG_OUT" '"failure_stage":"preflight"'
config tag
sed -i "s|@sha256:[0-9a-f]*|:1|" "$W/tag.yaml"
ag_must_fail 2 config.contained.image_not_pinned "preflight: a tag-only image never gets that far" as_user "$AG_BIN" contained-run "$W/tag.yaml" --repo repo -- /bin/true

# --- exit 4: a workspace bound is exceeded (a 65 MiB file; the bound is 64 MiB)
truncate -s 65M "$W/repo/big.bin"
chown "$U:$U" "$W/repo/big.bin"
run -- /bin/true
t_is "workspace: a file over 64 MiB exits 4" "$AG_RC" 4
t_like "workspace: the bound is named" "$AG_OUT" 'limit.workspace.file_bytes'
rm -f "$W/repo/big.bin"
check_clean "workspace bound"

# --- exit 5: command policy enforce blocks before any container exists
config policy
printf '%s\n' "command_policy: {mode: enforce}" "unsafe_commands: ['rm -rf']" >>"$W/policy.yaml"
t_run as_user "$AG_BIN" contained-run "$W/policy.yaml" --repo repo --json -- /bin/rm -rf /agentguard-workspace
t_is "policy: exit 5" "$AG_RC" 5
check_clean "policy"

# --- exit 6: Docker cannot launch the command
run -- /no/such/program
t_is "docker: a missing executable is a Docker launch failure (exit 6)" "$AG_RC" 6
t_is "docker: outcome from docker state" "$(art 'a["command_result"]["outcome"]')" docker_launch_failure
check_clean "docker failure"

# --- exit 7: an agent that ignores SIGTERM times out
run --timeout 2 -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done'
t_is "timeout: exit 7" "$AG_RC" 7
t_is "timeout: recorded" "$(art '(a["command_result"]["timed_out"], a["failure"]["stage"])')" "(True, 'timeout')"
t_is "timeout: no exit status is invented for a stopped container" "$(art 'a["command_result"]["exit_code"]')" None
check_clean "timeout"

# --- cancellation: SIGTERM to AgentGuard cleans up and says so (128+15)
PIDFILE="$W/cancel.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- /bin/sh -c 'sleep 60' >"$T/cancel.out" 2>&1 &
pid=$!
wait_running || true
sleep 0.5
kill -TERM "$(cat "$W/cancel.pid")"
rc=0
wait "$pid" || rc=$?
t_is "cancel: exit 143" "$rc" 143
REPORT="$W/$(grep -m1 '^{' "$T/cancel.out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["report"])')"
t_is "cancel: the artifact says cancelled" "$(art '(a["command_result"]["outcome"], a["failure"]["stage"])')" "('cancelled', 'cancelled')"
check_clean "cancel"

t_done
