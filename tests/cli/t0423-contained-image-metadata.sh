#!/usr/bin/env bash
# t0423: the image's metadata cannot change what runs (issue 9, finding 10).
# Purpose-built images (docker build from local files, pushed to the
# loopback registry for a digest pin):
#   - an ENTRYPOINT that wraps the argv and writes a marker, a CMD, and a
#     HEALTHCHECK that writes a marker: the argv runs exactly (neither marker
#     appears, the image's CMD never runs), and the evidence records the
#     entrypoint as a fact (present + SHA-256, never its text) and the ENV
#     names (never values);
#   - ENV LD_PRELOAD=...: refused by the preflight (exit 3, named reason)
#     before any agent container exists.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-evidence.sh"

make_repo
t_cleanup remove_run_containers
ws=/agentguard-workspace

IMG_REF=
build_image t0423-wrap \
	'ENTRYPOINT ["/bin/sh","-c","echo WRAPPED; echo wrapped >'"$ws"'/entry-marker; exec \"$@\"","wrap"]' \
	'CMD ["/bin/echo","IMAGE-CMD-RAN"]' \
	'HEALTHCHECK --interval=1s --timeout=1s CMD ["/bin/touch","'"$ws"'/hc-marker"]' \
	'ENV AGENT_IMAGE_VAR=IMAGE-ENV-VALUE-5e1 HTTP_PROXY=http://127.0.0.1:9/IMAGE-PROXY-VALUE PATH=/nonexistent-image-path' || true
t_like "build: the wrapping image is pinned by digest" "$IMG_REF" '@sha256:[0-9a-f]{64}$'
wrap=$IMG_REF

config c
use_image "$wrap"
# The argv, exactly: argv[0] is what runs, with these arguments, for 4 s (a
# health check at a 1 s interval would have fired by then).
run -- /bin/sh -c 'sleep 4; printf "[%s]" "$0" "$@"' zero 'one two' ''
t_is "exact: the run passes" "$AG_RC" 0
t_is "exact: the argv ran exactly, nothing wrapped it" "$(art 'a["command_result"]["stdout"]')" '[zero][one two][]'
t_is "exact: no file appeared (no entrypoint or health-check marker)" \
	"$(art 'a["mutations"]["changed_files"]')" '[]'
t_unlike "exact: the image's CMD never ran" "$(art 'a["command_result"]["stdout"]+a["command_result"]["stderr"]')" 'IMAGE-CMD-RAN|WRAPPED'
check_clean "exact"

# A one-element argv: the image's CMD is not appended to it.
run -- /bin/echo
t_is "single: exit 0" "$AG_RC" 0
t_is "single: the image's CMD is not appended to a one-element argv" "$(art 'repr(a["command_result"]["stdout"])')" "'\\n'"

# What the image's ENV still gives the agent is recorded by name.
run -- /bin/env
t_is "env: exit 0" "$AG_RC" 0
t_like "env: AgentGuard's PATH wins over the image's" "$(art 'a["command_result"]["stdout"]')" 'PATH=/usr/local/sbin:/usr/local/bin'
t_is "evidence: the image's ENV names, sorted" "$(art '",".join(a["containment_evidence"]["image"]["env_names"])')" \
	AGENT_IMAGE_VAR,HTTP_PROXY,PATH
t_is "evidence: their count" "$(art 'a["containment_evidence"]["image"]["env_names_total"]')" 3
t_is "evidence: the image has an entrypoint" "$(art 'a["containment_evidence"]["image"]["entrypoint_present"]')" True
want=$("$AG_DOCKER" image inspect --format '{{json .Config.Entrypoint}}' "$wrap" |
	"$PY" -c 'import hashlib,json,sys; print(hashlib.sha256(json.dumps(json.load(sys.stdin),separators=(",",":")).encode()).hexdigest())')
t_is "evidence: the entrypoint is recorded as the SHA-256 of its JSON" \
	"$(art 'a["containment_evidence"]["image"]["entrypoint_sha256"]')" "$want"
# The agent itself prints the image's values here (env); the evidence
# outside its own output never holds them, nor the entrypoint's text.
t_unlike "evidence: no ENV value and no entrypoint text outside the agent's output" \
	"$(art 'json.dumps({k: v for k, v in a.items() if k != "command_result"})' 2>/dev/null || "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); a.pop("command_result"); print(json.dumps(a))' "$REPORT")" \
	'IMAGE-ENV-VALUE|IMAGE-PROXY-VALUE|nonexistent-image-path|entry-marker|WRAPPED'
t_run "$AG_BIN" evidence verify "$REPORT"
t_is "evidence: the artifact verifies" "$AG_RC" 0
check_clean "env"

# evidence verify holds the recorded image facts to the rule (re-sealed
# edits, so the check fires on its own, not only through the seal)
C=$(basename "$(dirname "$REPORT")")
X=$(ev_copy_root reserved)
ev_py "$X/$C/contained-run.json" 'i = a["containment_evidence"]["image"]; i["env_names"] = sorted(i["env_names"] + ["LD_PRELOAD"]); i["env_names_total"] += 1'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.image_env_reserved "verify: an executed run with a reserved image ENV name is refused" \
	"$AG_BIN" evidence verify "$X/$C"
X=$(ev_copy_root nohash)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["image"]["entrypoint_present"] = False'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.image_metadata "verify: an entrypoint hash without an entrypoint is refused" \
	"$AG_BIN" evidence verify "$X/$C"

# --- an image whose ENV sets a reserved name is refused before the agent starts
IMG_REF=
build_image t0423-preload 'ENV LD_PRELOAD=/CANARY-PRELOAD-VALUE.so' || true
t_like "build: the LD_PRELOAD image is pinned by digest" "$IMG_REF" '@sha256:[0-9a-f]{64}$'
use_image "$IMG_REF"
run -- /bin/sh -c "touch $ws/agent-ran"
t_is "reserved: refused by the preflight (exit 3)" "$AG_RC" 3
t_like "reserved: the reason is named" "$AG_OUT" 'preflight.image.env_reserved'
t_is "reserved: the agent never ran" "$(art 'a["command_result"]')" None
t_is "reserved: no agent container was created" "$(art 'a["containment_evidence"]["cleanup"]["container_attempted"]')" False
t_unlike "reserved: the value is never shown" "$AG_OUT$(cat "$REPORT")" 'CANARY-PRELOAD-VALUE'
t_like "reserved: the preflight's check says which name" \
	"$(art '[c["diagnostic"] for c in a["preflight"]["checks"] if not c["passed"]][0]')" 'LD_PRELOAD'
t_run as_user "$AG_BIN" preflight "$W/c.yaml"
t_is "reserved: agentguard preflight says unsafe too (exit 3)" "$AG_RC" 3
t_like "reserved: with the reason" "$AG_OUT" 'preflight.image.env_reserved'
check_clean "reserved"
t_done
