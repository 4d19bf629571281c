#!/usr/bin/env bash
# t0411: an agent that nests directories deeper than the capture walks (600,
# and 3000 with the deepest made read-only) gets a run that fails closed on
# capture with the depth bound named, and nothing of its workspace survives
# on the host: the run removes it, and `agentguard cleanup` has nothing left
# to do (exit 0). Also after AgentGuard is SIGKILLed mid-run: `cleanup`
# removes the deep tree and exits 0.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# nest DEPTH [shell to run after]: d/d/.../d/f, DEPTH levels, made 500
# levels at a time (`mkdir -p` of a 999-character path, then `cd -P` into
# it: physical, since ash's logical cd joins $PWD and fails past PATH_MAX;
# no path the agent uses nears PATH_MAX, and the whole chain costs a few
# processes; wrapping the chain in a new parent level by level cost three
# busybox spawns a level, 9000 for 3000 levels, minutes of CI), then the
# shell back at the workspace's top.
nest() {
	local left=$1 n chunk script='cd /agentguard-workspace'
	while [ "$left" -gt 0 ]; do
		n=$((left < 500 ? left : 500))
		chunk=$(printf 'd/%.0s' $(seq "$n"))
		chunk=${chunk%/}
		script+=" && mkdir -p $chunk && cd -P $chunk"
		left=$((left - n))
	done
	printf '%s && echo bottom > f && cd /agentguard-workspace && %s' "$script" "${2:-true}"
}
no_lifecycle() { ! ls -d "$W"/.agentguard/contained-runs/*/workspace-lifecycle/*/workspace 2>/dev/null | grep -q .; }

for depth in 600 3000; do
	extra=true
	[ "$depth" = 3000 ] && extra='chmod 500 d/d && chmod 500 d'
	run --timeout 600 -- /bin/sh -c "$(nest "$depth" "$extra")"
	t_is "$depth: capture fails closed (exit 4)" "$AG_RC" 4
	t_is "$depth: the agent itself succeeded" "$(art 'a["command_result"]["exit_code"]')" 0
	t_is "$depth: the depth bound is named" "$(art 'a["failure"]["reason"]')" limit.workspace.depth
	t_is "$depth: the workspace was removed" "$(art 'a["cleanup"]["workspace_status"]')" removed
	t_ok "$depth: no workspace is left on the host" no_lifecycle
	t_run as_user "$AG_BIN" cleanup
	t_is "$depth: cleanup exits 0" "$AG_RC" 0
	check_clean "$depth"
done

# --- SIGKILL mid-run after the agent nested 3000 directories
PIDFILE="$W/kill.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --timeout 900 -- \
	/bin/sh -c "$(nest 3000 'touch /agentguard-workspace/nested-done && sleep 600')" >/dev/null 2>&1 &
for _ in $(seq 1 6000); do # 10 min at most
	ls "$W"/.agentguard/contained-runs/*/workspace-lifecycle/*/workspace/nested-done >/dev/null 2>&1 && break
	sleep 0.1
done
t_ok "sigkill: the agent nested 3000 directories" bash -c 'ls "$1"/.agentguard/contained-runs/*/workspace-lifecycle/*/workspace/nested-done' _ "$W"
kill -KILL "$(cat "$W/kill.pid")"
wait || true
t_run as_user "$AG_BIN" cleanup
t_is "sigkill: cleanup exits 0" "$AG_RC" 0
t_ok "sigkill: no workspace is left on the host" no_lifecycle
t_run as_user "$AG_BIN" cleanup
t_is "sigkill: a second cleanup exits 0" "$AG_RC" 0
check_clean "sigkill"
t_done
