#!/usr/bin/env bash
# t1030: what the engine says reaches neither the terminal nor the evidence
# unsanitized. The REAL engine refuses the run's create with its 409: another
# container (made here, with this test's labels only) already holds the
# run's container name. Docker's text names that container and gives its
# full id; the run fails closed (exit 6) and neither its stdout, its stderr
# nor its artifact shows the id (full or short), the name, or any 64-hex run
# on screen. The name is learnt from the run directory the moment it exists
# and the look-alike is made before the run reaches its create (a workspace
# of many files gives the time; a lost race is retried).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo
# Many small files: copying the workspace takes long enough to win the race.
mkdir -p "$W/repo/many"
for i in $(seq 1 3000); do printf '%s\n' "$i" >"$W/repo/many/f$i"; done
chown -R "$U:$U" "$W/repo"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
t_cleanup t_docker_rm_own agentguard.test=t1030

RUNS="$W/.agentguard/contained-runs"
# conflict_run: one contained run with a look-alike holding its name. Sets
# AG_RC, OUT, ERR, REPORT, NAME, OTHER_ID (empty when the race was lost).
conflict_run() {
	local before d='' i
	before=$( (ls -1 "$RUNS" 2>/dev/null || true) | sort | tr "\n" " ")
	as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/true >"$T/out" 2>"$T/err" &
	local pid=$!
	for i in $(seq 1 1000); do
		for d in "$RUNS"/*/; do
			[ -d "$d" ] || continue
			case " $before " in *" $(basename "$d") "*) d='' ;; *) break ;; esac
		done
		[ -n "$d" ] && break
		sleep 0.005
	done
	NAME='' OTHER_ID=''
	if [ -n "$d" ]; then
		NAME=agentguard-$(run_suffix "$d")
		OTHER_ID=$("$AG_DOCKER" create --pull never --name "$NAME" --network none \
			--label agentguard.test=t1030 --label "$AG_TEST_LABEL" "$AG_TEST_IMAGE" \
			/bin/true 2>/dev/null) || OTHER_ID=''
	fi
	AG_RC=0
	wait "$pid" || AG_RC=$?
	ledger_runs
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	REPORT=$(printf '%s\n' "$OUT" | sed -n 's/^Contained run report path: //p' | head -n 1)
	[ -z "$REPORT" ] || REPORT="$W/$REPORT"
	diag "i=$i name=$NAME rc=$AG_RC other=${OTHER_ID:0:12}"
}

won=''
for attempt in 1 2 3 4 5; do
	conflict_run
	if [ -n "$OTHER_ID" ] && [ "$AG_RC" -ne 0 ]; then
		won=$attempt
		break
	fi
	# Lost the race: the run made its container first. Remove the look-alike if any.
	[ -z "$OTHER_ID" ] || "$AG_DOCKER" rm -f "$OTHER_ID" >/dev/null
	diag "attempt $attempt: the run created its container first"
done
if [ -z "$won" ]; then
	t_fail "the engine refused the run's create with a 409 (5 attempts lost the race)"
	t_done
fi
short=${OTHER_ID:0:12}
t_is "409: the refused create is a Docker failure (exit 6)" "$AG_RC" 6
t_like "409: the run says the daemon answered 409" "$ERR" 'answered 409'
t_like "409: the failure's reason is the conflict" "$ERR" 'docker\.api\.conflict'
t_like "409: the engine's words are kept, its id as [REDACTED_ID]" "$ERR" \
	'already in use by container "\[REDACTED_ID\]"'
screen="$OUT
$ERR"
t_unlike "409: no 64-hex id on screen" "$screen" '[0-9a-f]{64}'
t_unlike "409: not the other container's short id on screen" "$screen" "$short"
t_unlike "409: not the other container's name on screen" "$screen" "$NAME"
t_ok "409: the artifact exists" test -s "$REPORT"
t_is "409: the artifact records the conflict" "$(art 'a["failure"]["reason"]')" docker.api.conflict
t_unlike "409: not the other container's id in the artifact" "$(cat "$REPORT")" "$short"
t_unlike "409: not the other container's name in the artifact" "$(cat "$REPORT")" "$NAME"
t_like "409: the artifact's message has the placeholders" "$(art 'a["failure"]["message"]')" \
	'name "\[REDACTED\]" is already in use by container "\[REDACTED_ID\]"'
t_is "409: the look-alike is untouched (not the run's to remove)" \
	"$("$AG_DOCKER" inspect --format '{{.Id}}' "$OTHER_ID")" "$OTHER_ID"
"$AG_DOCKER" rm -f "$OTHER_ID" >/dev/null
t_run "$AG_BIN" evidence verify --public-key "$(pubkey)" "$REPORT"
t_is "409: the artifact verifies" "$AG_RC" 0
check_clean "409"
t_done
