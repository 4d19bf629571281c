#!/usr/bin/env bash
# t0582: the evidence schemas are strict where the contract asks for it
# (issue 9, finding 12): outcome, notes, role-token paths and the preflight
# evidence accept only what AgentGuard writes. Each edit is re-sealed and
# re-signed with the real key, so the schema check itself must refuse it;
# python3-jsonschema agrees with the C interpreter on each. Before the fix
# every one of these verified.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
run -- /bin/sh -c 'echo hi'
t_is "a real run: exit 0" "$AG_RC" 0
RUN=$(basename "$(dirname "$REPORT")")
user_pub
t_ok "the real artifact verifies" "$AG_BIN" evidence verify "$W/.agentguard/contained-runs/$RUN" --public-key "$AG_PUB"
t_ok "jsonschema accepts the real artifact" ev_schema "$REPORT"

n=0
# strict DESC REASON PYTHON: edit a copy, re-seal and re-sign it, expect REASON
strict() {
	n=$((n + 1))
	local X
	X=$(ev_copy_root "strict$n")
	ev_py "$X/$RUN/contained-run.json" "$3"
	ev_reseal "$X/$RUN"
	ag_must_fail 2 "$2" "$1" "$AG_BIN" evidence verify "$X/$RUN" --public-key "$AG_PUB"
	t_run ev_schema "$X/$RUN/contained-run.json"
	t_is "jsonschema also refuses: $1" "$AG_RC" 1
}

strict "execution.outcome: an unknown outcome" evidence.schema.enum 'a["containment_evidence"]["execution"]["outcome"] = "succeeded"'
strict "command_result.outcome: an unknown outcome" evidence.schema.enum 'a["command_result"]["outcome"] = "it went fine"'
strict "notes: a note AgentGuard never writes" evidence.schema.enum 'a["containment_evidence"]["notes"].append("This run is VM-grade isolated.")'
strict "requested.source_dir: a host path instead of the role" evidence.schema.enum 'a["containment_evidence"]["requested"]["source_dir"] = "${RUN_ROOT}"'
strict "requested.run_dir: another role" evidence.schema.enum 'a["containment_evidence"]["requested"]["run_dir"] = "${HOME}"'
strict "artifact source_dir: not the role token" evidence.schema.enum 'a["source_dir"] = "[REDACTED_PATH]"'
strict "artifact config_path: not the role token" evidence.schema.enum 'a["config_path"] = "${REPOSITORY_ROOT}/x.yaml"'
strict "workspace.evidence_location: free text" evidence.schema.enum 'a["containment_evidence"]["workspace"]["evidence_location"] = "mounted read-write"'
strict "workspace.agent_mount: another mount" evidence.schema.enum 'a["containment_evidence"]["workspace"]["agent_mount"] = "/"'
strict "preflight.status: an unknown verdict" evidence.schema.enum 'a["preflight"]["status"] = "mostly-supported"'
strict "preflight.claim_level: an unknown claim" evidence.schema.enum 'a["preflight"]["claim_level"] = "vm-grade"'
strict "preflight.checks[].status: an unknown status" evidence.schema.enum 'a["preflight"]["checks"][0]["status"] = "waived"'
strict "preflight.reason: not a reason token" evidence.schema.pattern 'a["preflight"]["reason"] = "see the logs"'
strict "preflight: an unknown key" evidence.schema.additional 'a["preflight"]["verified_by"] = "admin"'
strict "preflight.schema: another schema" evidence.schema.const 'a["preflight"]["schema"] = "something-else"'
strict "preflight.image.pull_policy: pulls" evidence.schema.enum 'a["preflight"]["image"]["pull_policy"] = "always"'

t_done
