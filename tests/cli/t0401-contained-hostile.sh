#!/usr/bin/env bash
# t0401: hostile agents under `agentguard contained-run` on the real engine:
# each tries something the boundary must stop (writing outside the
# workspace, reading the host environment, reaching a network, fork-bombing,
# exhausting memory,
# filling tmpfs, flooding stdout, leaving background processes, planting
# escaping symlinks, hardlinks, FIFOs or a .git) and each is contained,
# recorded and cleaned, with no container left and the host untouched.
# Also: SIGKILL to AgentGuard mid-run, then `agentguard cleanup`.
# With AG_TEST_RUNTIME=gvisor (t0405) every case runs under gVisor; the one
# difference is the FIFO, which gVisor keeps inside its sandbox.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
host_sentinel=/var/tmp/agentguard-t0401-sentinel
rm -f "$host_sentinel"

# --- writing outside the workspace: root fs, /etc, and the host path itself
run -- /bin/sh -c 'touch /x 2>/dev/null && exit 77; touch /etc/x 2>/dev/null && exit 77; touch '"$host_sentinel"' 2>/dev/null && exit 77; echo contained'
t_is "outside: nothing outside the workspace is writable" "$AG_RC" 0
t_ok "outside: the host sentinel does not exist" test ! -e "$host_sentinel"
check_clean "outside"
if [ "${AG_TEST_RUNTIME:-runc}" = gvisor ]; then
	t_is "gVisor: the evidence records the runtime asked and the probe's proof" \
		"$(art '(a["preflight"]["requested"]["runtime"], a["preflight"]["requested"]["runtime_name"], a["preflight"]["inspected"]["runtime_proof"]["gvisor"], a["preflight"]["inspected"]["runtime_proof"]["kernel_release"])')" \
		"('gvisor', 'runsc', True, '4.4.0')"
fi
t_like "the report names the runtime" "$("$AG_BIN" report "$(dirname "$REPORT")" --public-key "$(pubkey)")" \
	"Runtime: +$([ "${AG_TEST_RUNTIME:-runc}" = gvisor ] && echo "gvisor \\(engine runtime runsc; gVisor's kernel shown from inside by the probe\\)" || echo "runc \\(the engine.s runtime runc\\)")"

# --- the host environment is not visible; only the allowlist and defaults are
run -- /bin/env
t_is "env: exit 0" "$AG_RC" 0
names=$(art '",".join(sorted(l.split("=",1)[0] for l in a["command_result"]["stdout"].splitlines()))')
t_is "env: exactly the defaults, the allowlist and Docker's HOSTNAME" "$names" "AGENT_API_TOKEN,AGENT_MODE,HOME,HOSTNAME,LANG,LC_ALL,PATH"
t_unlike "env: no host canary" "$(cat "$REPORT")" 'CANARY-HOST-ENV'

# --- no network: only loopback exists (no traffic is sent anywhere)
run -- /bin/ls /sys/class/net
t_is "network: only lo" "$(art 'a["command_result"]["stdout"].split()')" "['lo']"

# --- fork bomb: the pids limit holds, the run ends, everything is cleaned
run --timeout 5 -- /bin/sh -c 'b() { b | b & }; b; sleep 10'
t_like "forkbomb: contained (timeout or failure, never a pass)" "$AG_RC" '^(1|7)$'
check_clean "forkbomb"
t_ok "forkbomb: the host can still start processes" /bin/true

# --- memory bomb: the memory limit holds (the kernel, or gVisor's sandbox
# as a whole, kills it, or refuses the memory), recorded, everything cleaned
run --timeout 20 -- /bin/sh -c 'x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; done'
t_is "memory bomb: the agent failed (exit 1)" "$AG_RC" 1
# killed at the limit, or refused memory first (the shell then exits non-zero):
# either way the limit held and the run did not pass
t_like "memory bomb: OOM-killed, or refused memory and failed" \
	"$(art '(a["command_result"]["outcome"], a["command_result"]["exit_code"] not in (0, None))')" \
	"^\('(oom_killed|exited)', True\)$"
check_clean "memory bomb"

# --- filling tmpfs stops at its size
run -- /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/null; echo rc=$?; ls -l /tmp/fill | tr -s " " | cut -d" " -f5'
t_like "tmpfs: the write fails at the 16m bound" "$(art 'a["command_result"]["stdout"]')" 'rc=1'
t_like "tmpfs: no more than 16 MiB was written" "$(art 'a["command_result"]["stdout"].split()[-1]')" '^(1677721[0-9]|1[0-6][0-9]{6}|[0-9]{1,7})$'
check_clean "tmpfs"

# --- stdout flood: capture is bounded and says so
run --timeout 3 -- /bin/yes flood
t_is "flood: times out" "$AG_RC" 7
t_is "flood: stdout marked truncated" "$(art 'a["command_result"]["stdout_truncated"]')" True
t_ok "flood: the artifact stays small" test "$(stat -c %s "$REPORT")" -lt 400000
check_clean "flood"

# --- background processes die with the container
run -- /bin/sh -c 'sleep 300 & sleep 300 & echo started'
t_is "background: the run ends when the agent exits" "$AG_RC" 0
check_clean "background"

# --- planted escaping symlink, hardlink, FIFO, a .git below the top (the top
# one is the agent's repository, t0414): capture fails closed (exit 4)
for plant in 'ln -s /etc/passwd leak:workspace.symlink' 'ln -s ../../../../etc escape:workspace.symlink' \
	'ln src/edit.txt hard:workspace.hardlink' 'mkfifo pipe:workspace.special_file' \
	'mkdir src/.git:workspace.git_spoofing'; do
	cmd=${plant%%:*}
	reason=${plant##*:}
	run -- /bin/sh -c "cd /agentguard-workspace && $cmd"
	if [ "${AG_TEST_RUNTIME:-runc}" = gvisor ] && [ "$cmd" = "mkfifo pipe" ]; then
		# gVisor keeps a FIFO in its sandbox: the host's workspace never
		# holds one, so there is nothing special to refuse (docs/contained-run.md)
		t_is "plant '$cmd' (gVisor): the FIFO never reaches the host, the run passes" "$AG_RC" 0
		t_is "plant '$cmd' (gVisor): no change recorded" "$(art 'a["mutations"]["changed_files_total"]')" 0
		check_clean "plant '$cmd'"
		continue
	fi
	t_is "plant '$cmd': capture fails closed (exit 4)" "$AG_RC" 4
	t_like "plant '$cmd': the reason is named" "$(art 'a["failure"]["reason"]')" "^$reason"
	t_is "plant '$cmd': the container was removed first" "$(art 'a["cleanup"]["status"]')" removed
	check_clean "plant '$cmd'"
done

# --- SIGKILL to AgentGuard mid-run, then `agentguard cleanup`
PIDFILE="$W/kill.pid" as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sleep 120 >/dev/null 2>&1 &
wait_running || true
kill -KILL "$(cat "$W/kill.pid")"
wait || true
t_run no_containers
t_is "sigkill: a container is left by the crash" "$AG_RC" 1
# A look-alike that is not ours must survive cleanup. Names are random and
# every container made here carries this test run's label, so suites sharing
# the engine never collide; cleanup's probe pass is narrowed to that label.
rnd=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
look=agentguard-lookalike-$rnd
t_cleanup t_docker_rm_own agentguard.test=t0401
"$AG_DOCKER" create --pull never --name "$look" --label agentguard.owner=contained-run \
	--label agentguard.contained-run.id=not-a-run-of-ours --label agentguard.test=t0401 \
	--label "$AG_TEST_LABEL" "$AG_TEST_IMAGE" /bin/true >/dev/null
t_run as_user "$AG_BIN" cleanup --probe-label "$AG_TEST_LABEL"
t_is "cleanup: exit 0" "$AG_RC" 0
t_like "cleanup: reports the recovered run" "$AG_OUT" 'recovered'
t_ok "cleanup: the crashed run's container is gone" no_containers
t_ok "cleanup: the look-alike survives" "$AG_DOCKER" inspect "$look"
"$AG_DOCKER" rm -f "$look" >/dev/null
t_ok "cleanup: no workspace is left" bash -c '! ls -d "$1"/.agentguard/contained-runs/*/workspace-lifecycle 2>/dev/null | grep -q .' _ "$W"
t_run as_user "$AG_BIN" cleanup --probe-label "$AG_TEST_LABEL"
t_like "cleanup: a second pass finds nothing to do" "$AG_OUT" '0 recovered'
check_clean "sigkill"

# --- preflight probes orphaned by a crash: only a fully labelled one goes
# (--probe-label narrows the pass to this test run's own probes: a real
# preflight's probe, or another suite's, is never a candidate.)
pa=agentguard-preflight-${rnd}a
pb=agentguard-preflight-${rnd}b
pc=agentguard-preflight-${rnd}c
mkprobe() { # NAME NAME-LABEL [extra docker create args]
	local n=$1 nl=$2
	shift 2
	"$AG_DOCKER" create --pull never --name "$n" --label agentguard.owner=preflight \
		--label agentguard.preflight=resource-controls --label "agentguard.preflight.name=$nl" \
		--label agentguard.test=t0401 "$@" "$AG_TEST_IMAGE" /bin/true >/dev/null
}
mkprobe "$pa" "$pa" --label "$AG_TEST_LABEL"
mkprobe "$pb" agentguard-preflight-somebody-else --label "$AG_TEST_LABEL"
mkprobe "$pc" "$pc" --label agentguard.test-run=another-suite-run
t_cleanup "$AG_DOCKER" rm -f "$pc"
t_run as_user "$AG_BIN" cleanup --probe-label "$AG_TEST_LABEL"
t_ok "probes: a young probe is never touched (it may be a live preflight's)" "$AG_DOCKER" inspect "$pa"
t_run as_user "$AG_BIN" cleanup --probe-age 0 --probe-label "$AG_TEST_LABEL"
t_like "probes: the orphaned probe is reported" "$AG_OUT" 'orphaned preflight probe'
t_run "$AG_DOCKER" inspect "$pa"
t_is "probes: the fully labelled orphan is removed" "$AG_RC" 1
t_ok "probes: a probe whose name label is not its own survives" "$AG_DOCKER" inspect "$pb"
t_ok "probes: a probe of another test run (other label) survives --probe-age 0" "$AG_DOCKER" inspect "$pc"
ag_must_fail 2 usage "cleanup: a malformed --probe-label is a usage error" \
	"$AG_BIN" cleanup --probe-label 'no equals'
"$AG_DOCKER" rm -f "$pb" "$pc" >/dev/null
t_done
