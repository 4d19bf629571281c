#!/usr/bin/env bash
# t1113: evidence the agent cannot evict (issue 19 item 1), in real
# `agentguard study-egress run` trials. The agent floods the gateway with
# denied requests (long URLs, ten hosts) before one approved request; the
# sealed manifest's aggregates still count the approved destination's
# request and bytes and every denied key, and the trial is failed
# (destination_denied), not incomplete: 70 and then 20,000 junk requests.
# 2,000 honest approved requests give a complete trial whose events are a
# sample (the rest counted as sampled out). A gateway killed while two
# approved tunnels are open still leaves each judged connection counted.
# The artifact seals the gateway's stream and aggregates by SHA-256 and
# length, and `evidence verify` checks them. Creates Docker networks (its
# subnet slice: lib-netlock.sh).
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t1113
. "$(dirname "$0")/lib-study-net.sh"
st_start
st_policy '{"host":"canary.test","port":80,"test_only":true}'

long=$(printf 'a%.0s' $(seq 1 900))
# agg FILTER: a jq expression over the sealed manifest's aggregates
agg() { jq -r ".aggregates|$1" "$ST_MANIFEST" 2>&1; }
REPORT() { printf '%s/%s' "$ST_W" "$(jq -r '.report' <<<"$ST_RUN_SUMMARY")"; }

flood_then_real() { # NAME N
	st_agent "$1" "\$P probe flood \$GW $2 10 'http://junk{k}.test/$long'
\$P probe get \$GW http://canary.test/real-$1"
	t_like "$1: the approved request reached the canary after $2 denied ones" \
		"$ST_AGENT_OUT" "probe get http://canary.test/real-$1: reached"
	t_like "$1: every junk request was refused 403" "$ST_AGENT_OUT" \
		"probe flood .*: blocked sent=$2 status200=0 status403=$2 other=0"
	t_is "$1: the sealed aggregates count the approved destination's request, with bytes" \
		"$(agg '.keys[]|select(.decision=="allow")|"\(.host):\(.port) \(.reason) \(.requests) \(.bytes_in>0) \(.bytes_out>0)"')" \
		"canary.test:80 approved_destination 1 true true"
	t_is "$1: ... and every denied key, each with its count" \
		"$(agg '[.keys[]|select(.decision=="deny")|"\(.requests)"]|"\(length) keys, \(unique|join(","))"')" \
		"10 keys, $(($2 / 10))"
	t_is "$1: ... nothing in the overflow, the aggregates complete" \
		"$(agg '[.overflow.requests_allowed,.overflow.requests_denied,.complete]|map(tostring)|join(" ")')" \
		"0 0 true"
	st_check_manifest "$1" failed destination_denied
	t_is "$1: the artifact counts every request and every deny" \
		"$(jq -r '.study_egress|"\(.events) \(.denied)"' "$(REPORT)")" "$(($2 + 1)) $2"
}

flood_then_real t1113-flood70 70
t_is "flood70: the approved request's record is in the sample (first of its key)" \
	"$(jq -r '[.events[]|select(.decision=="allow")]|length' "$ST_MANIFEST")" 1
flood_then_real t1113-flood20k 20000
t_ok "flood20k: the manifest's events stay a bounded sample" \
	test "$(jq '.events|length' "$ST_MANIFEST")" -le 256
t_ok "flood20k: the gateway's stream stays small (no flood fills it)" \
	test "$(stat -c %s "$ST_EVENTS")" -lt 4194304
t_is "flood20k: the stream is complete, and says how many it sampled out" \
	"$(jq -r 'select(.record=="end")|"\(.complete) \(.sampled_out>19000)"' "$ST_EVENTS")" "true true"

# --- honest: 2,000 approved requests, a complete trial
st_agent t1113-honest "\$P probe flood \$GW 2000 0 http://canary.test/honest"
t_like "honest: every request reached the canary" "$ST_AGENT_OUT" \
	'probe flood http://canary.test/honest: reached sent=2000 status200=2000'
st_check_manifest "honest" complete complete
t_is "honest: one key, 2,000 requests" \
	"$(agg '.keys|map("\(.decision) \(.host):\(.port) \(.requests)")|join(";")')" \
	"allow canary.test:80 2000"
t_ok "honest: the events are a sample, the rest counted" \
	test "$(agg '.sampled_out')" -ge $((2000 - 256))

# --- sealed: the stream and the aggregates by hash and length; verify checks them
R=$(REPORT)
RD=${R%/*}
t_is "the artifact seals the stream's SHA-256 and length" \
	"$(jq -r '.study_egress.gateway_stream|"\(.file) \(.sha256) \(.bytes)"' "$R")" \
	"egress/events.jsonl $(sha256sum <"$RD/egress/events.jsonl" | cut -d' ' -f1) $(stat -c %s "$RD/egress/events.jsonl")"
t_is "... and the aggregates'" \
	"$(jq -r '.study_egress.gateway_aggregates|"\(.file) \(.sha256)"' "$R")" \
	"egress/aggregates.jsonl $(sha256sum <"$RD/egress/aggregates.jsonl" | cut -d' ' -f1)"
t_run runuser -u "$AG_TEST_USER" -- env HOME="$ST_W" "$AG_BIN" evidence verify "$RD"
t_is "evidence verify accepts the run" "$AG_RC" 0
cp "$RD/egress/aggregates.jsonl" "$T/aggs.bak"
sed -i 's/"requests":2000/"requests":1999/' "$RD/egress/aggregates.jsonl"
t_run runuser -u "$AG_TEST_USER" -- env HOME="$ST_W" "$AG_BIN" evidence verify "$RD"
t_like "an edited aggregates file fails verification, named" "$AG_OUT" 'evidence.egress_stream.mismatch'
cp "$T/aggs.bak" "$RD/egress/aggregates.jsonl"

# --- the gateway killed while two approved tunnels are open
kill_when_counted() { # the run's gateway, once 3 denies and 2 allows are counted
	local gw i f
	for i in $(seq 1 300); do
		# the gateway on this test's own outbound network (as _st_watch_run finds it)
		gw=$("$AG_DOCKER" ps -q --no-trunc --filter label=agentguard.study-egress.role=gateway \
			--filter "network=$ST_OUT" 2>/dev/null | head -1)
		f=$(find "$ST_W" -path "*/egress/aggregates.jsonl" -newer "$T/kill.mark" 2>/dev/null | head -1)
		if [ -n "$f" ] && [ "$(grep -o '"requests":[0-9]*' "$f" | cut -d: -f2 | awk '{s+=$1} END {print s+0}')" = 5 ] &&
			grep -q '"requests_denied":0' "$f"; then
			[ -n "$gw" ] && "$AG_DOCKER" kill "$gw" >/dev/null && return 0
		fi
		sleep 0.2
	done
	return 1
}
touch "$T/kill.mark"
kill_when_counted &
killer=$!
st_agent t1113-killed "\$P probe flood \$GW 3 3 'http://junk{k}.test/x'
\$P probe hold \$GW canary.test:80 40 & \$P probe hold \$GW canary.test:80 40 & sleep 30"
t_ok "killed: the gateway was killed with both tunnels open" wait "$killer"
t_is "killed: the trial failed on its denies, not hidden behind the crash" \
	"$(jq -r '[.completion.status,.completion.reason,.gateway_status.state]|join(" ")' "$ST_MANIFEST")" \
	"failed destination_denied crashed"
t_is "killed: every judged connection is counted, the open tunnels too" \
	"$(agg '[.keys[]|"\(.decision) \(.requests)"]|group_by(.)|map(.[0])|sort|join(";")')" \
	"allow 2;deny 1"
t_is "killed: ... three denies" "$(agg '[.keys[]|select(.decision=="deny")|.requests]|add')" 3

st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
