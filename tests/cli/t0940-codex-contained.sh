#!/usr/bin/env bash
# t0940: the real Codex CLI 0.159.2 as the agent under `agentguard
# contained-run`, with the agent image that scripts/runtime-images builds.
# The preflight's static probe (issue 10) needs nothing of the image; the
# image's tools layer (bash, coreutils) is for Codex's own commands.
#
# The argv runs exactly (the image's ENTRYPOINT never wraps it): `codex` on
# the image's PATH is its entrypoint wrapper (a link), which sets Codex's
# offline-safe options, so the argv is typed as a user would.
#
# Shows: `codex --version` runs contained and its output is recorded; a
# `codex exec` (no --skip-git-repo-check: the workspace is the git
# repository AgentGuard wrote, so Codex trusts it) with network none fails
# promptly and by itself: Codex 0.159.2
# would wait "for network" without end, but the image's entrypoint turns
# off its unbounded connection retries and its request retries, so codex
# exits 1 with its own connection error within seconds, long before
# AgentGuard's timeout (60 s here; exit 7 would mean the timeout ended it).
# Its credential comes from CODEX_API_KEY only (a canary value never
# appears in the artifact), and both runs' evidence verifies.
#
# Then the real work (tests/cli/lib-agents.sh): `study-egress run ... --
# codex exec ...` against the mock provider (OpenAI Responses), which Codex
# reaches only through the gateway: Codex reads README.md, applies a patch
# (a new NOTES.md, README.md changed), runs `wc` through bash (the image's
# tools layer), and exits 0; the patch AgentGuard sealed applies with `git
# apply` to the source and reproduces the change; the egress shows exactly
# one destination, the mock, allowed; the evidence verifies. With the mock
# removed from the policy the same run fails, the mock is named as denied,
# and the mock sees no request.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t0940
. "$(dirname "$0")/lib-study.sh"
. "$(dirname "$0")/lib-agents.sh"

out=$(AGENTGUARD="$AG_BIN" "$AG_ROOT/scripts/runtime-images" --only agent 127.0.0.1:5000 2>"$T/build.err") ||
	{ diag "$(tail -n 20 "$T/build.err")"; }
AGENT=${out##*agent }
t_like "the agent image is built and pinned" "$AGENT" '@sha256:[0-9a-f]{64}$'

# codex_config NAME TIMEOUT_SECONDS: a config that runs the agent image.
codex_config() {
	{
		printf '%s\n' "task_id: t0940" "description: codex contained" "test_command: 'true'" \
			"mode: ci" "expected_modified_files: {min: 0, max: 50}" \
			"command_timeout_seconds: $2" "max_output_bytes: 65536" \
			"sandbox: {type: docker, image: '$AGENT', network: none}" \
			"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
			"  required_uid: $AG_TEST_UID" "  required_gid: $AG_TEST_GID" \
			"  memory_limit: 512m" "  pids_limit: 64" "  tmpfs_size: 64m" \
			"  environment:" \
			"    - {name: CODEX_API_KEY, source: host, required: true, allow_sensitive: true}"
	} >"$W/c.yaml"
	chown "$U:$U" "$W/c.yaml"
}
make_repo

codex_config c 60
export CODEX_API_KEY=CANARY-CODEX-KEY-5d1e
as_user_codex() {
	runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" CODEX_API_KEY="$CODEX_API_KEY" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$W" "$@"
}
t_run as_user_codex "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- codex --version
t_is "codex --version contained: exit 0" "$AG_RC" 0
REPORT=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' | jq -r '.report // empty')
REPORT="$W/$REPORT"
t_like "codex --version: the pinned CLI ran" "$(art 'a["command_result"]["stdout"]')" 'codex-cli 0\.159\.2'
t_ok "codex --version: evidence verifies" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$REPORT"

start=$SECONDS
t_run as_user_codex "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json --timeout 60 -- \
	codex exec "print hello"
took=$((SECONDS - start))
diag "contained codex exec without network took $took s"
t_is "codex exec without network: the agent failed (exit 1), not the timeout (7)" "$AG_RC" 1
REPORT=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' | jq -r '.report // empty')
REPORT="$W/$REPORT"
t_ok "... promptly: well before the 60 s timeout" test "$took" -lt 40
t_is "... codex's own exit status is recorded" "$(art 'a["command_result"]["exit_code"]')" 1
t_like "... with codex's own connection error" "$(art 'a["command_result"]["stderr"]')" 'Connection failed'
t_unlike "... and it never waited for the network" "$(art 'a["command_result"]["stderr"]')" 'waiting for network'
t_unlike "... and it trusted the workspace (a git repository)" "$(art 'a["command_result"]["stderr"]')" 'trusted directory'
t_unlike "the credential value is never recorded" "$(cat "$REPORT")" 'CANARY-CODEX-KEY'
t_ok "codex exec: evidence verifies" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$REPORT"
t_ok "codex exec: the repository is unchanged" repo_unchanged

# ---- real work, through the gateway, against the mock provider ----
if ! agents_setup; then
	t_fail "the mock provider's topology is set up" "see the diagnostics above"
	t_done
fi
agents_repo
agents_config "$AGENT" "{name: CODEX_API_KEY, source: host, required: true, allow_sensitive: true}"
agents_policy mock approve
# The study's options in the config (study_egress), none on the command
# line: `agentguard study-egress run c.yaml -- codex exec ...`; the subnet
# is chosen from this file's slice, the trial id generated.
agents_study_block mock
t_run as_user "$AG_BIN" validate "$W/c.yaml"
t_like "validate shows the study_egress block" "$AG_OUT" 'study_egress .*policy: +mock\.json'
codex_task=(codex exec -m mock-model
	-c "model_providers.agentguard-openai.base_url=\"http://$AGENTS_MOCK_HOST:$AGENTS_MOCK_PORT/v1\""
	"Review README.md and leave a note.")
agents_study - CODEX_API_KEY CANARY-CODEX-KEY-5d1e -- "${codex_task[@]}"
t_is "codex exec through the gateway (options from the config): exit 0" "$AG_RC" 0
t_like "... the trial id was generated" "$(jq -r '.study_egress.trial_id // empty' <<<"$SUMMARY")" \
	'^trial-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$'
# (a /26 pool holds two /28 pairs; the run's id picks where the scan starts)
t_like "... the study subnet was chosen in the pool (this file's slice)" \
	"$(jq -r '.study_egress.study_subnet // empty' <<<"$SUMMARY")" \
	"^198\.51\.100\.($AG_NET_SLICE_LO|$((AG_NET_SLICE_LO + 32)))/28\$"
agents_check_done codex responses 4 CANARY-CODEX-KEY

: >"$AGENTS_MOCK_LOG"
agents_policy empty
sed -i 's/^  policy: mock\.json$/  policy: empty.json/' "$W/c.yaml"
agents_study - CODEX_API_KEY CANARY-CODEX-KEY-5d1e -- "${codex_task[@]}"
agents_check_denied
t_done
