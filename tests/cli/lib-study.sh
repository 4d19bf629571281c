# shellcheck shell=bash
# tests/cli/lib-study.sh: helpers for tests that drive `agentguard
# study-egress run` on the real engine (source after lib-test.sh,
# require_docker and lib-contained.sh). The rules for tests that create
# networks (shared notes, test-environment.md) hold throughout: explicit
# subnets from 198.51.100.0/24 (study) and 203.0.113.0/24 (outbound), never
# 192.0.2.0/24; every network labelled and removed by id; every container
# with DNS set and never pulled (AgentGuard's own rules do both).
#
#   study_begin                  config c, the repository, policy p (empty), GW_IMAGE
#   study_gateway_image          GW_IMAGE: the pinned gateway reference
#                                (scripts/gateway-image on the local registry)
#   study_policy NAME JSON-RULES $W/NAME.json, a policy with those destinations
#   study_run [options] -- ARGV  study-egress run as the test user (contained-run
#                                options, --json); sets AG_RC, AG_OUT, SUMMARY (the
#                                --json line), REPORT, RUN_DIR
#   study_subnet                 STUDY_SUBNET: a free /28 of this file's slice of
#                                198.51.100.0/24 (t_network_lock) whose
#                                next /28 is free too (AgentGuard's own outbound
#                                network takes it), picked from the top down
#                                (other tests pick from the bottom); call it
#                                right before each run
#   free_slice PREFIX            FREE_SLICE: a free /28 of this file's slice of
#                                PREFIX.0/24 (top down)
#   outbound_create NAME SUBNET  an --internal outbound network the test owns
#                                (labelled, removed by id at exit); OUT_ID
#   study_nothing_left RUN_DIR   no container or network carries the run's
#                                label, and no bridge device the artifact names
#                                remains (nor one named in $STUDY_BRIDGES)
#   study_agent_running TRIAL    waits (about 45 s max) until the trial's agent runs;
#                                sets STUDY_GW (the gateway's id) and STUDY_SUFFIX

# One network-creating test file at a time on this machine (lib-test.sh).
t_network_lock

# study_begin: the config $W/c.yaml, the repository, the empty policy
# $W/p.json and GW_IMAGE; a test that cannot have them stops here.
study_begin() {
	config c
	make_repo
	study_policy p '[]'
	if ! study_gateway_image; then
		t_fail "the gateway image could be built and pinned" "$(cat "$T/gateway-image.log")"
		t_done
	fi
}

study_gateway_image() {
	GW_IMAGE=$(BUILD=${AG_BUILD##*/} "$AG_ROOT/scripts/gateway-image" 127.0.0.1:5000 2>"$T/gateway-image.log" | tail -1)
	[[ "$GW_IMAGE" == 127.0.0.1:5000/agentguard-gateway@sha256:* ]]
}

study_policy() {
	printf '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":%s}' \
		"$2" >"$W/$1.json"
	chown "$U:$U" "$W/$1.json"
}

_used_subnets() {
	# shellcheck disable=SC2046 # one network id per word
	"$AG_DOCKER" network inspect --format '{{range .IPAM.Config}}{{.Subnet}}{{"\n"}}{{end}}' \
		$("$AG_DOCKER" network ls -q) 2>/dev/null | grep -E '^[0-9.]+/[0-9]+$' || true
	ip -4 route show | awk '{print $1}' | grep -E '^[0-9.]+/[0-9]+$' || true
}

# _free28 PREFIX BLOCKS: the highest /28 base of this file's slice of
# PREFIX.0/24 (t_network_lock) such that BLOCKS consecutive /28s from it
# overlap no network and no route.
_free28() {
	"$PY" -c 'import ipaddress,sys
used=[ipaddress.ip_network(u, strict=False) for u in sys.argv[3].split()]
k=int(sys.argv[2])
lo=int(sys.argv[4])
for b in range(lo + 64 - 16 * k, lo - 1, -16):
    n=[ipaddress.ip_network("%s.%d/28" % (sys.argv[1], b + 16 * i)) for i in range(k)]
    if not any(x.overlaps(u) for x in n for u in used):
        print(b); break' "$1" "$2" "$(_used_subnets)" "$AG_NET_SLICE_LO"
}

study_subnet() {
	local b
	b=$(_free28 198.51.100 2)
	[ -n "$b" ] || { diag "no free /28 pair in slice $AG_NET_SLICE_LO+64 of 198.51.100.0/24"; return 1; }
	STUDY_SUBNET=198.51.100.$b/28
}

free_slice() {
	local b
	b=$(_free28 "$1" 1)
	[ -n "$b" ] || { diag "no free /28 in slice $AG_NET_SLICE_LO+64 of $1.0/24"; return 1; }
	FREE_SLICE=$1.$b/28
}

study_run() {
	t_run as_user "$AG_BIN" study-egress run "$W/c.yaml" --repo repo --json "$@"
	SUMMARY=$(grep -m1 '^{' <<<"$AG_OUT" || true)
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
	local ids
	local -a sfx=()
	mapfile -t sfx < <(t_run_suffixes "$W/.agentguard/contained-runs" "$W/repo/.agentguard/runs")
	ids=$(t_run_objects ps --filter label=agentguard.owner=study-egress -- "${sfx[@]}")
	# shellcheck disable=SC2086 # one id per word
	[ -z "$ids" ] || "$AG_DOCKER" rm -f $ids >/dev/null 2>&1 || true
	ids=$(t_run_objects network --filter label=agentguard.owner=study-egress -- "${sfx[@]}")
	# shellcheck disable=SC2086
	[ -z "$ids" ] || "$AG_DOCKER" network rm $ids >/dev/null 2>&1 || true
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
	for b in ${STUDY_BRIDGES:-} $("$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); print(" ".join((a.get("study_egress") or {}).get("bridges") or []))' "$1/contained-run.json" 2>/dev/null); do
		! ip link show "$b" >/dev/null 2>&1 || return 1
	done
	return 0
}

study_agent_running() {
	local trial=$1
	STUDY_GW= STUDY_SUFFIX=
	for _ in $(seq 1 150); do
		STUDY_GW=$("$AG_DOCKER" ps -q --filter "label=agentguard.study-egress.trial=$trial" \
			--filter label=agentguard.study-egress.role=gateway)
		if [ -n "$STUDY_GW" ]; then
			STUDY_SUFFIX=$("$AG_DOCKER" inspect -f '{{index .Config.Labels "agentguard.contained-run.id"}}' "$STUDY_GW" 2>/dev/null || true)
			if [ -n "$STUDY_SUFFIX" ] && [ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$STUDY_SUFFIX" \
				--filter label=agentguard.owner=contained-run)" ]; then
				return 0
			fi
		fi
		sleep 0.2 # two docker clients per turn: a light poll on a loaded machine
	done
	return 1
}
