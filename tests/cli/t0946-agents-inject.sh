#!/usr/bin/env bash
# t0946: the preset agents (Codex, Claude Code) do the mock provider's
# scripted task (tests/cli/lib-agents.sh) with credential injection instead
# of a key in their environment (issue 21). The mock is behind an HTTPS
# front (mock-provider.test:443, its own test CA); the policy's rule for it
# injects the key from AgentGuard's environment; the agent gets only the
# placeholder, and trusts the trial CA through the variables the run sets
# (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, ...), with no flag of its own.
#
# Shows, for each agent: the task is done (the mock's turns, the patch, the
# evidence verifies); every request reached the provider with the real key
# in the agent's own header and never with the placeholder; the key is
# nowhere in the evidence; the manifest says the tunnel was terminated.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t0946
. "$(dirname "$0")/lib-study.sh"
. "$(dirname "$0")/lib-agents.sh"
command -v openssl >/dev/null || skip_all "openssl makes the test certificates"
[ -x "$AG_BUILD/tests/agtest-tls-upstream" ] || skip_all "the test gear is not built: make tests"

out=$(AGENTGUARD="$AG_BIN" "$AG_ROOT/scripts/runtime-images" --only agent 127.0.0.1:5000 2>"$T/build.err") ||
	{ diag "$(tail -n 20 "$T/build.err")"; }
AGENT=${out##*agent }
t_like "the Codex image is built and pinned" "$AGENT" '@sha256:[0-9a-f]{64}$'
out=$(AGENTGUARD="$AG_BIN" "$AG_ROOT/scripts/runtime-images" --only claude-code 127.0.0.1:5000 2>"$T/build2.err") ||
	{ diag "$(tail -n 20 "$T/build2.err")"; }
CLAUDE=${out##*claude-code }
t_like "the Claude Code image is built and pinned" "$CLAUDE" '@sha256:[0-9a-f]{64}$'

AGENTS_TLS=1
if ! agents_setup; then
	t_fail "the mock provider's topology (with its HTTPS front) is set up" "see the diagnostics above"
	t_done
fi

# front_check AGENT HEADER KEY: every request the front passed on carried
# HEADER with the real KEY (no placeholder anywhere)
front_check() {
	local heads
	heads=$(grep -c '^REQUEST POST' "$AGENTS_FRONT_LOG" 2>/dev/null || true)
	t_like "$1: requests reached the provider through the terminated tunnel" "$heads" '^[1-9][0-9]*$'
	t_is "$1: ... each with the real key in its $2 header" \
		"$(grep -ciF "H $2: $3" "$AGENTS_FRONT_LOG" || true)" "$(grep -c '^REQUEST' "$AGENTS_FRONT_LOG")"
	t_unlike "$1: ... and never the placeholder" "$(cat "$AGENTS_FRONT_LOG")" 'agentguard-placeholder-'
	t_is "$1: the manifest says the provider's tunnel was terminated, with that header" \
		"$(jq -c '[.events[]|select(.protocol=="connect")|.tls]|unique' "$MANIFEST")" \
		"[{\"injected_header\":\"$(tr 'A-Z' 'a-z' <<<"$2")\",\"mode\":\"terminated\"}]"
}

# ---- Codex: OpenAI Responses, Authorization: Bearer ----
agents_repo
agents_config "$AGENT" "{name: AGENT_MODE, value: inject}"
agents_policy codex inject AGENTS_PROVIDER_KEY Authorization "Bearer " CODEX_API_KEY
: >"$AGENTS_MOCK_LOG"
rm -f "$AGENTS_FRONT_LOG"
agents_study codex AGENTS_PROVIDER_KEY CANARY-CODEX-REAL-KEY-77aa -- codex exec -m mock-model \
	-c "model_providers.agentguard-openai.base_url=\"https://$AGENTS_MOCK_HOST/v1\"" \
	"Review README.md and leave a note."
t_is "codex exec with the key injected: exit 0" "$AG_RC" 0
t_last_ok || diag "gateway records:" "$(jq -c 'select(.record=="decision")|[.event.requested, .tls, .tls_error, .tunnel_refusal, .close_reason]' "$EVENTS" 2>&1 | head -5)"
agents_check_done codex responses 4 CANARY-CODEX-REAL-KEY
front_check codex Authorization "Bearer CANARY-CODEX-REAL-KEY-77aa"

# ---- Claude Code: Anthropic Messages, x-api-key ----
agents_repo
agents_config "$CLAUDE" "{name: AGENT_MODE, value: inject}"
agents_policy claude inject AGENTS_PROVIDER_KEY x-api-key "" ANTHROPIC_API_KEY
: >"$AGENTS_MOCK_LOG"
rm -f "$AGENTS_FRONT_LOG"
agents_study claude AGENTS_PROVIDER_KEY CANARY-CLAUDE-REAL-KEY-88bb -- \
	claude --settings "{\"env\":{\"ANTHROPIC_BASE_URL\":\"https://$AGENTS_MOCK_HOST\"}}" \
	-p "Review README.md and leave a note."
t_is "claude -p with the key injected: exit 0" "$AG_RC" 0
t_last_ok || diag "gateway records:" "$(jq -c 'select(.record=="decision")|[.event.requested, .tls, .tls_error, .tunnel_refusal, .close_reason]' "$EVENTS" 2>&1 | head -5)"
agents_check_done claude messages 5 CANARY-CLAUDE-REAL-KEY
front_check claude x-api-key CANARY-CLAUDE-REAL-KEY-88bb
t_done
