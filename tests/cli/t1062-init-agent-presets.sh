#!/usr/bin/env bash
# t1062: `agentguard init --preset codex` and `--preset claude-code` write a
# config and an egress policy that validate as written: the agent image (a
# placeholder, or the --image given), the key from the host's environment
# (sensitive), a 30-minute timeout, the limits such an agent needs, and a
# study_egress block naming the policy (the provider's API host on 443, the
# only destination), the gateway image (--gateway-image) and a resolver.
# Existing files are never replaced without --force; --dry-run writes
# nothing; --gateway-image without an agent preset is a usage error. No
# engine is needed for references already pinned.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

A64=$(printf 'a%.0s' {1..64})
B64=$(printf 'b%.0s' {1..64})
GW="127.0.0.1:5000/agentguard-gateway@sha256:$A64"
check_preset() { # PRESET KEY HOST
	local d=$T/$1
	mkdir -p "$d"
	t_run "$AG_BIN" init "$d" --preset "$1"
	t_is "$1: init exits 0" "$AG_RC" 0
	t_like "$1: it says what it wrote" "$AG_OUT" "wrote agentguard.yaml and agentguard-egress-policy.json \\(preset $1\\)"
	t_like "$1: and the next steps, the key included" "$AG_OUT" "export $2="
	t_ok "$1: the config validates as written" "$AG_BIN" validate "$d/agentguard.yaml"
	t_run "$AG_BIN" validate "$d/agentguard.yaml"
	t_like "$1: the key comes from the host, required and sensitive" "$AG_OUT" "$2 \\(host, required, sensitive\\)"
	t_like "$1: limits for a real agent" "$AG_OUT" 'memory 4g, pids 1024, tmpfs 1g'
	t_like "$1: the study block names the policy" "$AG_OUT" 'policy: +agentguard-egress-policy\.json'
	t_like "$1: ... and a subnet chosen per run" "$AG_OUT" 'subnet: +\(chosen per run'
	t_like "$1: a 30-minute timeout" "$(cat "$d/agentguard.yaml")" 'command_timeout_seconds: 1800'
	t_run "$AG_BIN" study-egress policy validate "$d/agentguard-egress-policy.json"
	t_is "$1: the policy validates" "$AG_RC" 0
	t_like "$1: ... its one destination is the provider's API host on 443" "$AG_OUT" "1 destination rule.*$3:443"
}
check_preset codex CODEX_API_KEY 'api\.openai\.com'
check_preset claude-code ANTHROPIC_API_KEY 'api\.anthropic\.com'

d=$T/codex
t_run "$AG_BIN" init "$d" --preset codex
t_is "an existing config is not replaced: exit 1" "$AG_RC" 1
t_like "... saying so" "$AG_OUT" 'already exists.*--force'
rm "$d/agentguard.yaml"
before=$(sha256sum <"$d/agentguard-egress-policy.json")
t_run "$AG_BIN" init "$d" --preset codex
t_is "an existing policy is not replaced either: exit 1" "$AG_RC" 1
t_like "... naming it" "$AG_OUT" 'agentguard-egress-policy\.json already exists'
t_is "... and nothing was written" "$(ls "$d" | tr '\n' ' ')" "agentguard-egress-policy.json "
t_is "... the policy is untouched" "$(sha256sum <"$d/agentguard-egress-policy.json")" "$before"

t_run "$AG_BIN" init "$d" --preset claude-code --force --image "127.0.0.1:5000/agentguard-runtime-claude-code@sha256:$B64" \
	--gateway-image "$GW" --docker-socket /nonexistent/docker.sock
t_is "--force with pinned images: exit 0 without the engine" "$AG_RC" 0
t_like "the images are written as given" "$(cat "$d/agentguard.yaml")" "image: \"127\\.0\\.0\\.1:5000/agentguard-runtime-claude-code@sha256:$B64\""
t_like "... the gateway's too" "$(cat "$d/agentguard.yaml")" "gateway_image: \"127\\.0\\.0\\.1:5000/agentguard-gateway@sha256:$A64\""
t_like "the policy now names Anthropic's API" "$(cat "$d/agentguard-egress-policy.json")" '"host": "api\.anthropic\.com", "port": 443'
t_ok "and validates" "$AG_BIN" validate "$d/agentguard.yaml"

d=$T/dry
mkdir -p "$d"
t_run "$AG_BIN" init "$d" --preset codex --dry-run
t_is "--dry-run: exit 0" "$AG_RC" 0
t_like "... prints both files" "$AG_OUT" 'agentguard-egress-policy\.json:.*api\.openai\.com'
t_is "... writes nothing" "$(ls -A "$d")" ""

ag_must_fail 2 "" "--gateway-image needs an agent preset" "$AG_BIN" init "$T/x" --gateway-image "$GW"
ag_must_fail 2 "" "an unknown preset is a usage error" "$AG_BIN" init "$T/x" --preset aider
t_like "... listing the presets" "$AG_OUT" 'available: untrusted-agent, codex, claude-code'
t_done
