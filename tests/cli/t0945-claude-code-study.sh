#!/usr/bin/env bash
# t0945: the real Claude Code 2.1.332 binary as the agent, with the image
# `scripts/runtime-images --only claude-code` builds from the pinned lock
# (its native linux-x64 binary, the tools layer, the static entrypoint that
# `claude` on PATH links to), with its canonical identity as an agent image.
#
# Shows: `contained-run ... -- claude --version` prints the pinned version;
# interactive use is refused by the entrypoint (exit 64) without starting
# claude; then the real work (tests/cli/lib-agents.sh): `study-egress run
# ... -- claude -p ...` against the mock provider (Anthropic Messages),
# which Claude Code reaches only through the gateway: it reads README.md
# (Read), writes NOTES.md (Write), edits README.md (Edit), runs `wc`
# through bash (Bash) and exits 0; the sealed patch applies with `git
# apply` and reproduces the change; the egress shows exactly one
# destination, the mock, allowed (Claude Code's update checks, telemetry
# and error reports are off in the image); the evidence verifies; the key
# is never recorded. With the mock removed from the policy the run fails,
# the mock is named as denied, and the mock sees no request.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t0945
. "$(dirname "$0")/lib-study.sh"
. "$(dirname "$0")/lib-agents.sh"

out=$(AGENTGUARD="$AG_BIN" "$AG_ROOT/scripts/runtime-images" --only claude-code 127.0.0.1:5000 2>"$T/build.err") ||
	{ diag "$(tail -n 20 "$T/build.err")"; }
CLAUDE=${out##*claude-code }
t_like "the Claude Code image is built and pinned" "$CLAUDE" '^127\.0\.0\.1:5000/agentguard-runtime-claude-code@sha256:[0-9a-f]{64}$'
# Staged now (AgentGuard re-hashes the tarballs first), or unchanged
# inputs since a build on this machine that did (scripts/runtime-images'
# input cache; --no-cache is t0910's business).
if grep -q 'claude-code: inputs unchanged since' "$T/build.err"; then
	t_like "... from inputs AgentGuard verified when it was staged here" "$(cat "$T/build.err")" \
		"claude-code: inputs unchanged since ${CLAUDE//./\\.} was built here"
else
	t_like "... from inputs AgentGuard verified first" "$(cat "$T/build.err")" 'verified: @anthropic-ai/claude-code 2\.1\.332'
fi

i1=$("$AG_BIN" runtime-image identity "$CLAUDE" --role agent --json 2>"$T/ident.err" || true)
t_like "its canonical identity: a rootfs digest" "$(jq -r '.rootfs_digest // empty' <<<"$i1")" '^sha256:[0-9a-f]{64}$'
t_is "... run as 10001 through the Claude entrypoint" "$(jq -r '[.runtime_config.user, (.runtime_config.entrypoint|join(" "))]|join(" ")' <<<"$i1")" \
	"10001:10001 /usr/local/bin/agentguard-claude-entrypoint"
t_like "... FROM the pinned base" "$(jq -r '.base_image // empty' <<<"$i1")" '^127\.0\.0\.1:5000/agentguard-runtime-base@sha256:'

if ! agents_setup; then
	t_fail "the mock provider's topology is set up" "see the diagnostics above"
	t_done
fi
agents_repo
agents_config "$CLAUDE" "{name: ANTHROPIC_API_KEY, source: host, required: true, allow_sensitive: true}"
as_user_claude() {
	runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" ANTHROPIC_API_KEY=CANARY-ANTHROPIC-KEY-0c4f \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$W" "$@"
}
t_run as_user_claude "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- claude --version
t_is "claude --version contained: exit 0" "$AG_RC" 0
REPORT=$W/$(grep -m1 '^{' <<<"$AG_OUT" | jq -r '.report // empty')
t_like "... the pinned Claude Code ran" "$(art 'a["command_result"]["stdout"]')" '^2\.1\.332 \(Claude Code\)'
t_run as_user_claude "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- claude
t_is "interactive claude is refused by the entrypoint: the agent failed (exit 1)" "$AG_RC" 1
REPORT=$W/$(grep -m1 '^{' <<<"$AG_OUT" | jq -r '.report // empty')
t_is "... its exit status 64 is recorded" "$(art 'a["command_result"]["exit_code"]')" 64
t_like "... saying why" "$(art 'a["command_result"]["stderr"]')" 'only non-interactive use'
# A subcommand before -p never starts claude either (its image, straight).
t_run timeout -k 5 60 "$AG_DOCKER" run --rm --pull never --network none --dns 127.0.0.1 --read-only \
	--cap-drop ALL --label "$AG_TEST_LABEL" "$CLAUDE" update -p
t_is "a subcommand with -p (claude update -p) is refused too (64)" "$AG_RC" 64

agents_policy mock approve
# The endpoint in the argv, not the environment: every environment value is
# withheld from the evidence, which would leave the egress record's URL
# unreadable (and the manifest refuses such a record).
claude_task=(claude --settings "{\"env\":{\"ANTHROPIC_BASE_URL\":\"http://$AGENTS_MOCK_HOST:$AGENTS_MOCK_PORT\"}}"
	-p "Review README.md and leave a note.")
agents_study mock ANTHROPIC_API_KEY CANARY-ANTHROPIC-KEY-0c4f -- "${claude_task[@]}"
t_is "claude -p through the gateway: exit 0" "$AG_RC" 0
agents_check_done claude messages 5 CANARY-ANTHROPIC-KEY

: >"$AGENTS_MOCK_LOG"
agents_policy empty
agents_study empty ANTHROPIC_API_KEY CANARY-ANTHROPIC-KEY-0c4f -- "${claude_task[@]}"
agents_check_denied
t_done
