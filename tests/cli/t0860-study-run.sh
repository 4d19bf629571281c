#!/usr/bin/env bash
# t0860: `agentguard study-egress run` end to end on the real engine, as the
# unprivileged test user: a trivial agent on the internal study network whose
# only way out is the gateway. Shows: the run passes with every inspection
# assertion and self-test done before the agent starts; the manifest beside
# the artifact (canonical, sealed by the artifact's hash, complete); nothing
# left (no container, network or bridge device, by the run's own label); an
# operator's outbound network used and left alone; refusals before the agent
# starts (exit 3): the gateway image equal to the agent's, a tag-only gateway
# image, outbound networks that fail verification, a study subnet a network
# of the engine uses (study.subnet.in_use, with the fix), no free subnet left
# in the configured pool (study.subnet.exhausted); the gateway killed
# mid-trial fails the study (never a pass) with cleanup complete.
#
# Address plan (test-environment rules): before each run a free /28 of
# 198.51.100.0/24 for the study subnet whose next /28 (AgentGuard's own
# outbound network) is free too; the test's outbound network is a free /28
# of 203.0.113.0/24, and the one made only to overlap the study subnet sits
# on that study slice. Nothing is ever sent off the host.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
STUDY_TEST=t0860
. "$(dirname "$0")/lib-study.sh"

study_begin
TRIAL=t0860-$$-$RANDOM
# common: the options of every run, with a study subnet free right now
common() {
	study_subnet || return 1
	common=(--policy "$W/p.json" --gateway-image "$GW_IMAGE" --study-subnet "$STUDY_SUBNET")
}
q() { art "$1"; }

# --- a trivial agent, AgentGuard's own (internal) outbound network
common
study_run "${common[@]}" --trial-id "$TRIAL-a" --outbound-internal -- \
	/bin/sh -c 'echo "hello-study $HTTPS_PROXY"'
t_is "pass: exit 0" "$AG_RC" 0
t_is "pass: result PASS" "$(q 'a["result"]')" PASS
t_is "pass: the agent ran, with the gateway as its proxy" "$(q 'a["command_result"]["stdout"].strip()')" \
	"hello-study http://agentguard-study-egress-gateway:8080"
t_is "pass: topology verified before the agent started" "$(q 'a["study_egress"]["topology_verified"]')" True
t_is "pass: self-test: the gateway answers on its port" "$(q 'a["study_egress"]["self_tests"]["gateway_port"]')" open
t_is "pass: self-test: no host address on the study bridge" \
	"$(q 'a["study_egress"]["self_tests"]["bridge"] in ("unreachable", "timeout")')" True
t_is "pass: self-test: the gateway's outbound address is not reachable directly" \
	"$(q 'a["study_egress"]["self_tests"]["gateway_outbound"] in ("unreachable", "timeout")')" True
# This engine forwards for internal containers (the egress notes' G4), to
# the DNS 127.0.0.1 every study container has: the probe's own listener
# there caught the unique name and its marker came back, so nothing was
# asked before it and no 3 s wait was needed.
t_is "pass: self-test: the unique name went only to the probe's own loopback" \
	"$(q '(a["study_egress"]["self_tests"]["dns"], a["study_egress"]["self_tests"]["dns_forward"])')" \
	"('loopback', 'caught')"
t_is "pass: manifest complete" "$(q '(a["study_egress"]["completion"], a["study_egress"]["completion_reason"])')" "('complete', 'complete')"
t_is "pass: the gateway ran until AgentGuard stopped it; its stream is complete" \
	"$(q '(a["study_egress"]["gateway_state"], a["study_egress"]["gateway_stream_complete"])')" "('running', True)"
t_is "pass: every study object removed" "$(q 'sorted(a["study_egress"]["cleanup"].values())')" \
	"['removed', 'removed', 'removed', 'removed']"
M=$RUN_DIR/live-study-egress-manifest.json
t_ok "pass: the manifest is beside the artifact" test -f "$M"
t_is "pass: the artifact's sealed hash is the manifest's" "$(sha256sum <"$M" | cut -d' ' -f1)" "$(q 'a["study_egress"]["manifest_sha256"]')"
t_ok "pass: the manifest validates against the policy" "$AG_BIN" study-egress manifest validate "$M" --policy "$W/p.json"
t_ok "pass: the manifest is canonical JSON" "$PY" -c 'import json,sys; s=open(sys.argv[1]).read().rstrip("\n"); assert s==json.dumps(json.loads(s),sort_keys=True,separators=(",",":"),ensure_ascii=True)' "$M"
t_is "pass: the manifest names the trial and the run" "$("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["trial_id"], m["authorization_id"]==sys.argv[2])' "$M" "$(basename "$RUN_DIR")")" "$TRIAL-a True"
t_run as_user "$AG_BIN" evidence verify "$RUN_DIR"
t_is "pass: evidence verifies" "$AG_RC" 0
t_like "pass: the egress manifest is among the checks" "$AG_OUT" 'egress_manifest'
t_ok "pass: nothing left (containers, networks, bridge devices)" study_nothing_left "$RUN_DIR"
t_is "pass: two bridges were made and named" "$(q 'len(a["study_egress"]["bridges"])')" 2
t_unlike "pass: no private host path in the artifact" "$(cat "$REPORT")" '/tmp/|/home/'
printf '%s\n' "$SUMMARY" >"$T/summary.json"
t_ok "pass: the --json summary validates against the CLI output schema" "$PY" -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
assert d["schema"] == "agentguard.study-egress-run-summary" and d["study_egress"]["completion"] == "complete", d
errs = list(Draft202012Validator(schema).iter_errors(d))
assert not errs, [e.message[:200] for e in errs[:3]]
' "$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json" "$T/summary.json"

# --- tampering with the manifest breaks verification
cp "$M" "$T/manifest.bak"
sed -i 's/"complete"/"completE"/' "$M"
t_run as_user "$AG_BIN" evidence verify "$RUN_DIR"
t_like "tamper: an edited manifest fails verification, named" "$AG_OUT" 'evidence.egress_manifest.mismatch'
t_is "tamper: exit 2" "$AG_RC" 2
cp "$T/manifest.bak" "$M"

# --- an operator's outbound network: used, verified, never removed
free_slice 203.0.113
outbound_create "t0860-out-$$" "$FREE_SLICE"
common
study_run "${common[@]}" --trial-id "$TRIAL-b" --outbound-network "t0860-out-$$" -- /bin/true
t_is "outbound: exit 0" "$AG_RC" 0
t_is "outbound: manifest complete" "$(q 'a["study_egress"]["completion"]')" complete
t_is "outbound: not AgentGuard's, so not removed" "$(q 'a["study_egress"]["cleanup"]["outbound_network"]')" not_owned
t_ok "outbound: the operator's network still exists" "$AG_DOCKER" network inspect "$OUT_ID"
t_ok "outbound: nothing of the run left" study_nothing_left "$RUN_DIR"

# --- refusals before the agent starts (exit 3, nothing left)
refuse() {
	local desc=$1 reason=$2
	shift 2
	study_run "$@"
	REFUSE_OUT=$AG_OUT
	t_is "$desc: exit 3" "$AG_RC" 3
	t_like "$desc: reason $reason" "$AG_OUT" "\"failure_reason\":\"$reason\""
	t_like "$desc: the agent never started" "$AG_OUT" '"outcome":null'
	[ -z "$RUN_DIR" ] || t_ok "$desc: nothing left" study_nothing_left "$RUN_DIR"
}
common
refuse "same image" egress.plan.same_image --policy "$W/p.json" --gateway-image "$AG_TEST_IMAGE" \
	--study-subnet "$STUDY_SUBNET" --trial-id "$TRIAL-c" --outbound-internal -- /bin/true
refuse "tag-only gateway image" egress.plan.image_not_pinned --policy "$W/p.json" \
	--gateway-image 127.0.0.1:5000/agentguard-gateway:latest --study-subnet "$STUDY_SUBNET" \
	--trial-id "$TRIAL-d" --outbound-internal -- /bin/true
refuse "outbound: missing" study.outbound.absent "${common[@]}" --trial-id "$TRIAL-e" \
	--outbound-network "t0860-no-such-network-$$" -- /bin/true
refuse "outbound: not a bridge" study.outbound.driver "${common[@]}" --trial-id "$TRIAL-f" \
	--outbound-network none -- /bin/true
# A network of the test's own that exists only to overlap the study subnet
# (internal, labelled, on the free study slice itself; no study network is
# made: the refusal comes first).
common
outbound_create "t0860-overlap-$$" "$STUDY_SUBNET"
# The study subnet is checked against every network of the engine (and the
# host's routes) before anything is created: refused, naming the fix.
refuse "outbound: overlapping the study subnet" study.subnet.in_use "${common[@]}" \
	--trial-id "$TRIAL-g" --outbound-network "t0860-overlap-$$" -- /bin/true
t_like "... the refusal says how to fix it" "$REFUSE_OUT" 'give a free one with --study-subnet'
# The same network, with AgentGuard's own outbound network: refused the same way.
refuse "study subnet used by a network of the engine" study.subnet.in_use "${common[@]}" \
	--trial-id "$TRIAL-h" --outbound-internal -- /bin/true
# No subnet given, and the pool (study_egress.subnet_pool: the /27 around
# that network) holds no free /28 pair: refused, naming the pool.
cp "$W/c.yaml" "$T/c.saved"
b=${STUDY_SUBNET%/*}
printf 'study_egress: {subnet_pool: %s.%d/27}\n' "${b%.*}" $((${b##*.} / 32 * 32)) >>"$W/c.yaml"
refuse "no free subnet left in the pool" study.subnet.exhausted --policy "$W/p.json" \
	--gateway-image "$GW_IMAGE" --trial-id "$TRIAL-i" --outbound-internal -- /bin/true
t_like "... the refusal names the pool and the fix" "$REFUSE_OUT" "no free /28 pair is left in ${b%.*}\\.[0-9]+/27.*subnet_pool"
cp "$T/c.saved" "$W/c.yaml"
"$AG_DOCKER" network rm "$OUT_ID" >/dev/null
ag_must_fail 2 "" "usage: run without a gateway image (flag or config)" as_user "$AG_BIN" \
	study-egress run "$W/c.yaml" --repo repo --policy "$W/p.json" -- /bin/true
t_like "usage: names what is missing, and both places to give it" "$AG_OUT" \
	'needs a policy and a gateway image: --policy and --gateway-image, or study_egress'

# --- the gateway killed mid-trial: the study fails, cleanup completes
kill_gateway_when_agent_runs() {
	study_agent_running "$1" && "$AG_DOCKER" kill "$STUDY_GW" >/dev/null
}
common
kill_gateway_when_agent_runs "$TRIAL-k" &
killer=$!
study_run "${common[@]}" --trial-id "$TRIAL-k" --outbound-internal -- /bin/sleep 8
t_is "gateway killed: the study fails (exit 1), never a pass" "$AG_RC" 1 ||
	diag "$(tail -c 3000 <<<"$AG_OUT")"
t_ok "gateway killed: the killer found the running agent" wait "$killer"
t_is "gateway killed: result FAIL" "$(q 'a["result"]')" FAIL
t_is "gateway killed: the manifest says the gateway crashed" \
	"$(q '(a["study_egress"]["gateway_state"], a["study_egress"]["completion"], a["study_egress"]["completion_reason"])')" \
	"('crashed', 'failed', 'gateway_crashed')"
t_is "gateway killed: cleanup complete" "$(q 'a["cleanup_complete"]')" True
t_ok "gateway killed: nothing left" study_nothing_left "$RUN_DIR"

# --- two studies at once, no subnet given, a pool (this file's /26 slice)
# that holds exactly two /28 pairs: the subnet lock makes the second choice
# see the first's networks, so both run, on different subnets (without it,
# half the time both would pick the same pair and the second would fail).
cp "$W/c.yaml" "$T/c.saved"
printf 'study_egress: {subnet_pool: 198.51.100.%d/26}\n' "$AG_NET_SLICE_LO" >>"$W/c.yaml"
for i in 1 2; do
	as_user "$AG_BIN" study-egress run "$W/c.yaml" --repo repo --json --policy "$W/p.json" \
		--gateway-image "$GW_IMAGE" --trial-id "$TRIAL-p$i" --outbound-internal \
		-- /bin/true >"$T/par$i.out" 2>"$T/par$i.err" &
	eval "par_pid$i=\$!"
done
# shellcheck disable=SC2154 # set by the eval above
wait "$par_pid1"
rc1=$?
# shellcheck disable=SC2154
wait "$par_pid2"
rc2=$?
t_is "two studies at once: both exit 0" "$rc1 $rc2" "0 0"
sub() { grep -m1 '^{' "$T/par$1.out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["study_egress"]["study_subnet"])' 2>&1; }
s1=$(sub 1) s2=$(sub 2)
t_like "... each chose a subnet of the pool" "$s1 $s2" "^198\.51\.100\.[0-9]+/28 198\.51\.100\.[0-9]+/28$"
t_ok "... different ones" test "$s1" != "$s2"
cp "$T/c.saved" "$W/c.yaml"
ledger_runs

# --- a runs root inside the repository (under its .agentguard/): the next
# run's audit of that root accepts what a study run leaves there (last: the
# repository then holds .agentguard/, which runs with a runs root outside it
# refuse)
for i in 1 2; do
	common
	study_run "${common[@]}" --trial-id "$TRIAL-r$i" --outbound-internal \
		--runs-root repo/.agentguard/runs -- /bin/true
	t_is "runs root in the repository: run $i exits 0" "$AG_RC" 0
done
t_ok "runs root in the repository: both runs' manifests are there" \
	test "$(ls "$W"/repo/.agentguard/runs/*/live-study-egress-manifest.json | wc -l)" -eq 2

t_done
