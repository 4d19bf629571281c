# shellcheck shell=bash
# tests/cli/lib-study.sh: helpers for tests that drive `agentguard
# study-egress run` on the real engine (source after lib-test.sh,
# require_docker and lib-contained.sh). The rules for tests that create
# networks (shared notes, test-environment.md) hold throughout: explicit
# subnets from 198.51.100.0/24 (study) and 203.0.113.0/24 (outbound), never
# 192.0.2.0/24; every network labelled and removed by id; every container
# with DNS set and never pulled (AgentGuard's own rules do both).
#
#   study_gateway_image          GW_IMAGE: the pinned gateway reference
#                                (scripts/gateway-image on the local registry)
#   study_policy NAME JSON-RULES $W/NAME.json, a policy with those destinations
#   study_run [options] -- ARGV  study-egress run as the test user (contained-run
#                                options, --json); sets AG_RC, AG_OUT, REPORT, RUN_DIR
#   outbound_create NAME SUBNET  an --internal outbound network the test owns
#                                (labelled, removed by id at exit); OUT_ID
#   study_nothing_left RUN_DIR   no container or network carries the run's
#                                label, and no bridge device the artifact names
#                                remains

study_gateway_image() {
	GW_IMAGE=$(BUILD=${AG_BUILD##*/} "$AG_ROOT/scripts/gateway-image" 127.0.0.1:5000 2>"$T/gateway-image.log" | tail -1)
	[[ "$GW_IMAGE" == 127.0.0.1:5000/agentguard-gateway@sha256:* ]]
}

study_policy() {
	printf '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":%s}' \
		"$2" >"$W/$1.json"
	chown "$U:$U" "$W/$1.json"
}

study_run() {
	t_run as_user "$AG_BIN" study-egress run "$W/c.yaml" --repo repo --json "$@"
	REPORT=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin).get("report") or "")' 2>/dev/null || true)
	RUN_DIR=
	if [ -n "$REPORT" ]; then
		REPORT="$W/$REPORT"
		RUN_DIR=$(dirname "$REPORT")
	fi
	ledger_runs
	return 0
}

# Every study object of the runs made from $W, by each run's own label, at exit.
# shellcheck disable=SC2317 # called from the EXIT trap
remove_own_studies() {
	local d s ids
	for d in "$W"/.agentguard/contained-runs/*/; do
		[ -d "$d" ] || continue
		s=$(run_suffix "$d")
		ids=$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$s" \
			--filter label=agentguard.owner=study-egress) || continue
		# shellcheck disable=SC2086 # one id per word
		[ -z "$ids" ] || "$AG_DOCKER" rm -f $ids >/dev/null 2>&1 || true
		ids=$("$AG_DOCKER" network ls -q --filter "label=agentguard.contained-run.id=$s" \
			--filter label=agentguard.owner=study-egress) || continue
		# shellcheck disable=SC2086
		[ -z "$ids" ] || "$AG_DOCKER" network rm $ids >/dev/null 2>&1 || true
	done
}
t_cleanup remove_own_studies

outbound_create() {
	OUT_ID=$("$AG_DOCKER" network create --internal --subnet "$2" --ipv6=false \
		--label "$AG_TEST_LABEL" --label "agentguard.test=$STUDY_TEST" "$1")
	t_cleanup "$AG_DOCKER" network rm "$OUT_ID"
}

study_nothing_left() {
	local s b
	s=$(run_suffix "$1")
	[ -z "$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$s")" ] || return 1
	[ -z "$("$AG_DOCKER" network ls -q --filter "label=agentguard.contained-run.id=$s")" ] || return 1
	for b in $("$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); print(" ".join((a.get("study_egress") or {}).get("bridges") or []))' "$1/contained-run.json" 2>/dev/null); do
		! ip link show "$b" >/dev/null 2>&1 || return 1
	done
	return 0
}
