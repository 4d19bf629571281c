#!/usr/bin/env bash
# t0402: contained-run outcomes the real engine only gives on demand with a
# nudge. OOM is real (a memory hog under a 128m limit). Cleanup failures
# are injected by a root-owned wrapper around the REAL docker client that
# refuses `docker rm` (a fault the engine will not produce on demand), so
# the container really stays: exit 8, workspace retained, and the primary
# failure kept when execution failed too. `agentguard cleanup` then
# recovers the retained run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# --- OOM: the outcome comes from docker's state, not from exit code 137
run -- /bin/dd if=/dev/zero of=/dev/null bs=400M count=1
t_is "oom: the agent failed (exit 1)" "$AG_RC" 1
t_is "oom: outcome oom_killed" "$(art 'a["command_result"]["outcome"]')" oom_killed
t_is "oom: recorded in the containment evidence" "$(art 'a["containment_evidence"]["execution"]["oom_killed"]')" True
check_clean "oom"

# --- a root-owned wrapper that passes everything to the real client but the
# run's own `rm` of its container (the preflight probe's `rm -f` still works)
wrap="$T/wrap"
mkdir -m 755 "$wrap"
cat >"$wrap/docker" <<WRAP
#!/bin/bash
if [ "\${1:-}" = rm ] && [ "\${2:-}" != -f ]; then echo "Error response from daemon: injected fault" >&2; exit 1; fi
exec $AG_DOCKER "\$@"
WRAP
chmod 755 "$wrap/docker"

run --docker "$wrap/docker" -- /bin/true
t_is "fault: cleanup failure after a passing agent exits 8" "$AG_RC" 8
t_is "fault: cleanup state" "$(art '(a["cleanup"]["status"], a["cleanup_complete"], a["failure"]["stage"])')" "('cleanup_incomplete', False, 'cleanup')"
t_is "fault: the workspace is retained while the container lives" "$(art 'a["cleanup"]["workspace_status"]')" retained
t_is "fault: liveness not verified" "$(art 'a["containment_evidence"]["cleanup"]["liveness_verified"]')" False
d=$(ls -1d "$W"/.agentguard/contained-runs/*/ | sort | tail -n 1)
t_ok "fault: the container really is still there" test -n "$("$AG_DOCKER" ps -aq --filter label=agentguard.owner=contained-run --filter "label=agentguard.contained-run.id=$(run_suffix "$d")")"

run --docker "$wrap/docker" --timeout 2 -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done'
t_is "fault: timeout stays the primary failure (exit 7)" "$AG_RC" 7
t_is "fault: the cleanup failure is recorded separately" "$(art '(a["failure"]["stage"], a["cleanup_failure"]["stage"], a["cleanup_failure"]["exit_code"])')" "('timeout', 'cleanup', 8)"

# --- create succeeds in the engine but the client reports failure and no id
hic="$T/hiccup"
mkdir -m 755 "$hic"
cat >"$hic/docker" <<WRAP
#!/bin/bash
if [ "\${1:-}" = create ] && [ "\${2:-}" = --name ] && [[ "\${3:-}" != agentguard-preflight-* ]]; then
	$AG_DOCKER "\$@" >/dev/null 2>&1
	echo "injected: lost the answer" >&2
	exit 1
fi
exec $AG_DOCKER "\$@"
WRAP
chmod 755 "$hic/docker"
run --docker "$hic/docker" -- /bin/true
t_is "fault: a create whose answer is lost is a Docker failure (exit 6)" "$AG_RC" 6
t_is "fault: the container Docker made anyway is found by label and removed" "$(art '(a["cleanup"]["status"], a["cleanup_complete"])')" "('removed', True)"
t_is "fault: and no residue of that run" "$(art 'a["residue"]["this_run_after"]')" 0

# Both retained runs are recovered by `agentguard cleanup` (their processes are gone).
t_run as_user "$AG_BIN" cleanup --probe-label "$AG_TEST_LABEL"
t_is "fault: cleanup recovers the retained runs" "$AG_RC" 0
t_like "fault: it says so" "$AG_OUT" '2 recovered'
check_clean "fault"
t_done
