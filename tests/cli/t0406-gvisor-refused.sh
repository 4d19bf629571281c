#!/usr/bin/env bash
# t0406: runtime: gvisor fails closed. Against the real engine: a runtime
# name the engine does not list is refused by the preflight before the
# workspace is prepared (exit 3, preflight.runtime.absent, the fix named);
# a registered runtime that is really runc (test-env's
# "agtest-runc-as-gvisor") cannot pass for gVisor: the probe shows the
# host's kernel and an overlay root (exit 3,
# preflight.probe.runtime_unproven); study-egress run refuses gVisor
# (exit 2, study.runtime.gvisor). The config's own rules: runtime_name only
# with gvisor, a pids_limit of at least 256, both named by line and key.
# And the render: --runtime and HostConfig.Runtime.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"
make_repo

gv() { # NAME RUNTIME_NAME: a gVisor config
	config "$1" "  runtime: gvisor" "  runtime_name: $2"
	sed -i 's/pids_limit: 64/pids_limit: 256/' "$W/$1.yaml"
}
# workspaces: the lifecycle directories AgentGuard made for runs of $W
workspaces() { find "$W/.agentguard" -maxdepth 3 -name 'workspace*' 2>/dev/null | wc -l; }

gv absent agtest-no-such-runtime
t_run as_user "$AG_BIN" contained-run "$W/absent.yaml" --repo repo --json -- /bin/true
rep=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get("report") or "")')
ledger_runs
t_is "absent runtime: exit 3" "$AG_RC" 3
t_like "absent runtime: the reason" "$AG_OUT" '"failure_reason":"preflight.runtime.absent"'
t_like "absent runtime: the fix is named" "$("$AG_BIN" preflight "$W/absent.yaml" 2>&1 || true)" 'register gVisor.s runsc under "runtimes" in the engine.s daemon.json'
t_is "absent runtime: no workspace was prepared" "$(workspaces)" 0
t_ok "absent runtime: no container" no_containers
t_ok "absent runtime: the failure record is written" test -n "$rep"
t_ok "absent runtime: the failure record verifies (its runtime words fit the schema)" \
	"$AG_BIN" evidence verify "$W/$rep" --public-key "$(pubkey)"

gv fake agtest-runc-as-gvisor
t_run as_user "$AG_BIN" contained-run "$W/fake.yaml" --repo repo --json -- /bin/true
ledger_runs
t_is "runc under gVisor's name: exit 3" "$AG_RC" 3
t_like "runc under gVisor's name: unproven" "$AG_OUT" 'preflight.probe.runtime_unproven'
t_ok "runc under gVisor's name: no container" no_containers
t_ok "runc under gVisor's name: the source untouched" repo_unchanged

gv real runsc
t_run as_user "$AG_BIN" study-egress run "$W/real.yaml" --repo repo --policy "$W/none.json" --gateway-image x -- /bin/true
t_is "study-egress run: gVisor refused, exit 2" "$AG_RC" 2
t_like "study-egress run: the reason" "$AG_OUT" 'study.runtime.gvisor'

# the config's rules
config bad1 "  runtime_name: runsc"
ag_must_fail 2 config.contained.runtime_name "runtime_name without runtime: gvisor" "$AG_BIN" validate "$W/bad1.yaml"
t_like "runtime_name without gvisor: line and key" "$AG_OUT" "line [0-9]+ column [0-9]+: contained_execution.runtime_name"
config bad2 "  runtime: gvisor"
sed -i 's/pids_limit: 256/pids_limit: 64/' "$W/bad2.yaml"
ag_must_fail 2 config.contained.runtime_pids "gVisor with pids_limit 64" "$AG_BIN" validate "$W/bad2.yaml"
t_like "gVisor pids: the key" "$AG_OUT" "contained_execution.pids_limit"
config bad3 "  runtime: kata"
ag_must_fail 2 "" "an unknown runtime" "$AG_BIN" validate "$W/bad3.yaml"
t_like "an unknown runtime: the key" "$AG_OUT" "contained_execution.runtime"

# the render and the validate output
t_like "render: --runtime runsc" "$("$AG_BIN" render "$W/real.yaml" -- /bin/true)" '"--runtime","runsc"'
t_like "validate --json: the runtime" "$("$AG_BIN" validate "$W/real.yaml" --json)" '"runtime":"gvisor","runtime_name":"runsc"'
t_done
