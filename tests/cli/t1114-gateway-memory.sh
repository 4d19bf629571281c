#!/usr/bin/env bash
# t1114: a gateway that degrades instead of dying (issue 19 item 2, its
# memory part), in a real `agentguard study-egress run`. The agent opens 300
# approved CONNECT tunnels to a canary port that never reads, stuffs each
# with as much as it takes without ever reading either, and holds them all.
# Every tunnel is bounded (bounds.h "Memory": small fixed socket buffers, a
# relay high-water mark, a read bound) and the most connections times that
# bound fits the gateway container's memory, so the gateway stays alive:
# the tunnels past --max-connections are refused 503 and recorded
# (connection_limit, sealed in the aggregates), and once the agent lets go a
# new request still passes. The gateway is never found crashed.
# Creates Docker networks (its subnet slice: lib-netlock.sh).
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t1114
. "$(dirname "$0")/lib-study-net.sh"
st_start
st_policy '{"host":"canary.test","port":80,"test_only":true},{"host":"canary.test","port":9000,"test_only":true}'

st_agent t1114-stuff "\$P probe stuff \$GW canary.test:9000 300 15
\$P probe get \$GW http://canary.test/after-stuff"
stuff=$(grep -m1 '^probe stuff ' <<<"$ST_AGENT_OUT" || true)
diag "agent: $stuff"
t_like "the agent held up to the connection bound, stuffed" "$stuff" \
	'reached established=2[0-9][0-9] refused503=[0-9]+ other=[0-9]+ pushed=[1-9]'
est=$(sed -n 's/.*established=\([0-9]*\).*/\1/p' <<<"$stuff")
ref=$(sed -n 's/.*refused503=\([0-9]*\).*/\1/p' <<<"$stuff")
t_is "every one of the 300 was either established or refused 503" "$((est + ref))" 300
t_like "after the agent let go, a new request still passed (the gateway lived)" \
	"$ST_AGENT_OUT" 'probe get http://canary.test/after-stuff: reached'
t_is "the gateway was running to the end, never crashed" \
	"$(jq -r '.gateway_status.state' "$ST_MANIFEST")" running
t_is "the refusals are sealed: connection_limit, as many as the agent saw" \
	"$(jq -r '[.aggregates.keys[]|select(.reason=="connection_limit")|.requests]|add' "$ST_MANIFEST")" \
	"$ref"
t_is "the tunnels are sealed as approved, each counted" \
	"$(jq -r '.aggregates.keys[]|select(.decision=="allow" and .port==9000)|.requests' "$ST_MANIFEST")" \
	"$est"
st_check_manifest "stuffed trial" failed destination_denied

st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
