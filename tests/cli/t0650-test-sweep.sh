#!/usr/bin/env bash
# t0650: the test suite's sweep (scripts/test-env sweep ID) removes only
# what its own test run created: objects labelled agentguard.test-run=ID and
# the containers of the AgentGuard runs in its ledger. A "developer's real
# run" (an AgentGuard-labelled container with no test label), another test
# run's container and a container with only half of a ledgered run's labels
# all survive. `sweep --stale` leaves a ledger whose owner is alive alone.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

rnd=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
own=$AG_TEST_RUN_ID-t0650-$rnd # a test run of this test's own, swept below
other=$AG_TEST_RUN_ID-t0650-other-$rnd
export AG_TEST_LEDGER_ROOT=$T/ledgers
mkdir -m 755 "$AG_TEST_LEDGER_ROOT" "$AG_TEST_LEDGER_ROOT/$own"
run_suffix=ownrun$rnd
foreign_suffix=realrun$rnd
printf '%s\n' "$run_suffix" 'not a valid suffix; ignored' >"$AG_TEST_LEDGER_ROOT/$own/runs"

names=()
mk() { # NAME LABEL...
	local n=agentguard-t0650-$1-$rnd a=()
	shift
	for l in "$@"; do a+=(--label "$l"); done
	names+=("$n")
	"$AG_DOCKER" create --pull never --network none --name "$n" "${a[@]}" "$AG_TEST_IMAGE" /bin/true >/dev/null
}
# Everything is removed by name at exit, whatever the sweep did.
rm_all() { "$AG_DOCKER" rm -f "${names[@]}" >/dev/null 2>&1 || true; "$AG_DOCKER" volume rm "vol-t0650-$rnd" >/dev/null 2>&1 || true; }
t_cleanup rm_all

mk tagged "agentguard.test-run=$own" agentguard.test=t0650
mk ledgered agentguard.owner=contained-run "agentguard.contained-run.id=$run_suffix"
mk real agentguard.owner=contained-run "agentguard.contained-run.id=$foreign_suffix"
mk realprobe agentguard.owner=preflight agentguard.preflight=resource-controls \
	"agentguard.preflight.name=agentguard-t0650-realprobe-$rnd"
mk othersuite "agentguard.test-run=$other" agentguard.owner=contained-run \
	"agentguard.contained-run.id=$run_suffix-x"
mk halflabel "agentguard.contained-run.id=$run_suffix" agentguard.test=t0650
"$AG_DOCKER" volume create --label "agentguard.test-run=$own" "vol-t0650-$rnd" >/dev/null

exists() { "$AG_DOCKER" container inspect "agentguard-t0650-$1-$rnd" >/dev/null 2>&1; }

t_run "$AG_ROOT/scripts/test-env" sweep "$own"
t_is "sweep ID: exit 0" "$AG_RC" 0
t_like "sweep ID: says what it removed" "$AG_OUT" "swept 1 container\(s\) labelled agentguard.test-run=$own"
t_run exists tagged
t_is "sweep ID: the container labelled with the run's id is gone" "$AG_RC" 1
t_run exists ledgered
t_is "sweep ID: the ledgered AgentGuard run's container is gone (found by the run's own labels)" "$AG_RC" 1
t_ok "sweep ID: a developer's real AgentGuard run survives" exists real
t_ok "sweep ID: a real preflight probe survives" exists realprobe
t_ok "sweep ID: another test run's container survives" exists othersuite
t_ok "sweep ID: a container with only the run-id label (no owner label) survives" exists halflabel
t_run "$AG_DOCKER" volume inspect "vol-t0650-$rnd"
t_is "sweep ID: the run's labelled volume is gone" "$AG_RC" 1
t_ok "sweep ID: the ledger is removed" test ! -e "$AG_TEST_LEDGER_ROOT/$own"

# --stale: a ledger whose owner (this shell) is alive is left alone; one
# whose owner is gone is swept.
live=$AG_TEST_RUN_ID-t0650-live-$rnd
dead=$AG_TEST_RUN_ID-t0650-dead-$rnd
mkdir -m 755 "$AG_TEST_LEDGER_ROOT/$live" "$AG_TEST_LEDGER_ROOT/$dead"
stat=$(cat /proc/$$/stat)
stat=${stat##*) }
printf '%s %s\n' "$$" "$(cut -d' ' -f20 <<<"$stat")" >"$AG_TEST_LEDGER_ROOT/$live/owner"
printf '%s %s\n' "$$" 1 >"$AG_TEST_LEDGER_ROOT/$dead/owner" # same pid, other start: gone
mk livec "agentguard.test-run=$live"
mk deadc "agentguard.test-run=$dead"
t_run "$AG_ROOT/scripts/test-env" sweep --stale
t_is "sweep --stale: exit 0" "$AG_RC" 0
t_ok "sweep --stale: a live test run's container survives" exists livec
t_run exists deadc
t_is "sweep --stale: a dead test run's container is gone" "$AG_RC" 1
t_ok "sweep --stale: the real run still survives" exists real

# A ledger writable by others is not trusted.
chmod 777 "$AG_TEST_LEDGER_ROOT/$live"
printf '%s\n' "$foreign_suffix" >"$AG_TEST_LEDGER_ROOT/$live/runs"
t_run "$AG_ROOT/scripts/test-env" sweep "$live"
t_ok "sweep ID: a ledger writable by others is ignored (the real run survives)" exists real
ag_must_fail 1 "" "sweep: an invalid id is refused" "$AG_ROOT/scripts/test-env" sweep 'a b'
t_done
