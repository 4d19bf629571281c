#!/usr/bin/env bash
# t0880: `agentguard study-egress run` on the real engine, through the
# gateway (tests/cli/lib-study-net.sh): the agent, alone on the run's
# --internal, inhibit_ipv4 study network, reaches the approved canary on the
# test's own outbound network through agentguard-gateway; the run passes and
# its manifest says complete. Every request the policy does not approve is
# refused with 403 and a deny record, and that run fails. Each refusal is
# proven by an EMPTY canary log (and, for names, by the resolver's log), not
# only by the client's error. Rebinding: a name whose answer alternates
# between the canary and 127.0.0.1 never reaches the listener on 127.0.0.1
# inside the gateway's own namespace; the record names the address
# connected. The engine's own view of the topology is checked against the
# plan while the run is alive.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t0880
. "$(dirname "$0")/lib-study-net.sh"
st_start
H=$ST_OUT_HOST HP=$ST_HOSTPORT C=$ST_CANARY
st_policy "$(printf '%s,' \
	'{"host":"canary.test","port":80,"test_only":true}' \
	'{"host":"mixed.test","port":80,"test_only":true}' \
	'{"host":"rebind.test","port":80,"test_only":true}' \
	"{\"host\":\"$H\",\"port\":$HP,\"test_only\":true,\"test_only_ip_literal\":true}" \
	"{\"host\":\"bridgehost.test\",\"port\":$HP,\"test_only\":true}" \
	"{\"host\":\"hostname.test\",\"port\":$HP,\"test_only\":true}" |
	sed 's/,$//')"
# D: a host bridge address outside the documentation ranges (docker0's)
D=${ST_HOST_PRIVATE:-}
host_hits() { st_log host http "$HP" | grep -c " to=$1:$HP\$" || true; }

# jq over the decision records of the last trial
recs() { jq -c 'select(.record=="decision")' "$ST_EVENTS"; }
rec_for() { recs | jq -c --arg u "$1" 'select(.event.url==$u or (.event.url==null and $u=="connect:"+.event.requested.host+":"+(.event.requested.port|tostring)))'; }
probe_line() { grep -F "probe $1" <<<"$ST_AGENT_OUT" | head -1; }

# ---- allowed: only approved requests, so the trial completes ----
st_agent allow '$P probe get $GW http://canary.test/plain-0880
$P probe connect $GW canary.test:80'
t_like "plain HTTP through the gateway reaches the approved canary" \
	"$(probe_line 'get http://canary.test/plain-0880')" 'reached status=200 body=CANARY-OK'
t_like "CONNECT through the gateway reaches it (the tunnel carries the request)" \
	"$(probe_line 'connect canary.test:80')" 'reached status=200 .*body=CANARY-OK'
t_is "the canary saw both, from the gateway's outbound address only" \
	"$(st_log canary http 80 | sed 's/:[0-9]* line=/ line=/' | cut -d' ' -f2-4)" \
	"from=$ST_GW_OUT line=GET /plain-0880
from=$ST_GW_OUT line=GET /tunnel"
r=$(rec_for http://canary.test/plain-0880)
t_is "record (plain HTTP): allow, host, port, resolved and connected address" \
	"$(jq -r '[.event.decision,.event.requested.host,.event.requested.port,(.event.resolved_addresses|join(",")),.connected_address,.tls]|join(" ")' <<<"$r")" \
	"allow canary.test 80 $C $C none"
t_like "... with bytes both ways" "$(jq -c .event.bytes <<<"$r")" '^\{"in":[1-9][0-9]*,"out":[1-9][0-9]*\}$'
r=$(rec_for connect:canary.test:80)
t_is "record (CONNECT): allow, resolved and connected address, TLS left to the client" \
	"$(jq -r '[.event.decision,.event.protocol,(.event.resolved_addresses|join(",")),.connected_address,.tls]|join(" ")' <<<"$r")" \
	"allow connect $C $C client-owned-not-intercepted"
t_like "... with bytes both ways" "$(jq -c .event.bytes <<<"$r")" '^\{"in":[1-9][0-9]*,"out":[1-9][0-9]*\}$'
st_check_complete "allowed trial" 2 0
st_check_manifest "allowed trial" complete complete
t_is "allowed trial: study-egress run passes (exit 0)" "$ST_RUN_RC" 0
t_is "allowed trial: the manifest records both allows with host, port, resolved address and bytes" \
	"$(jq -r '.events[]|[.decision,.requested.host,.requested.port,(.resolved_addresses|join(",")),(.bytes.in>0 and .bytes.out>0)]|map(tostring)|join(" ")' "$ST_MANIFEST" | sort | uniq -c | awk '{$1=$1};1')" \
	"2 allow canary.test 80 $C true"
st_check_inspect "allowed trial"
st_check_run_gone "allowed trial"

# ---- denied through the gateway ----
: >"$T/none"
dns_before=$(st_log_count resolver dns 53)
bridge_probes=
[ -z "$D" ] || bridge_probes="\$P probe get \$GW http://$D:$HP/bridge-literal
\$P probe connect \$GW $D:$HP"
st_agent deny '$P probe get $GW http://nothere-0880.test/unapproved-host
$P probe connect $GW nothere-0880.test:80
$P probe get $GW http://canary.test:8080/unapproved-port
$P probe connect $GW canary.test:8080
$P probe get $GW http://'"$C"'/ip-literal
$P probe connect $GW '"$C"':80
$P probe get $GW http://'"$H:$HP"'/host-literal
$P probe connect $GW '"$H:$HP"'
$P probe get $GW http://bridgehost.test:'"$HP"'/bridge-name
$P probe get $GW http://hostname.test:'"$HP"'/host-name
'"$bridge_probes"'
$P probe get $GW http://mixed.test/mixed-answers
$P probe get $GW http://canary.test/redirect-0880 follow
for i in 1 2 3 4; do $P probe get $GW http://rebind.test/rebind-$i; done'
denied() { # DESC PROBE URL-OR-connect:H:P REASON
	t_like "$1: 403" "$(probe_line "$2")" 'blocked status=403'
	t_is "$1: deny record" "$(rec_for "$3" | jq -r '[.event.decision,.event.reason,(.connected_address|tostring)]|join(" ")')" \
		"deny $4 null"
}
denied "unapproved host (plain HTTP)" "get http://nothere-0880.test/" http://nothere-0880.test/unapproved-host destination_not_approved
denied "unapproved host (CONNECT)" "connect nothere-0880.test:80" connect:nothere-0880.test:80 destination_not_approved
t_is "... the unapproved name was never looked up (resolver log)" \
	"$(st_log resolver dns 53 | grep -c nothere-0880 || true)" 0
denied "unapproved port (plain HTTP)" "get http://canary.test:8080/" http://canary.test:8080/unapproved-port destination_not_approved
denied "unapproved port (CONNECT)" "connect canary.test:8080" connect:canary.test:8080 destination_not_approved
t_is "... the canary's listener on that port saw nothing" "$(st_log_count canary http 8080)" 0
denied "IP literal, not approved (plain HTTP)" "get http://$C/" "http://$C/ip-literal" ip_literal_not_approved
denied "IP literal, not approved (CONNECT)" "connect $C:80" "connect:$C:80" ip_literal_not_approved
t_ok "the run told the gateway the host's own addresses (start record counts them)" st_gateway_knows_host_addresses
denied "approved literal that is the host's bridge address (plain HTTP)" "get http://$H:$HP/" "http://$H:$HP/host-literal" unsafe_ip_literal
denied "approved literal that is the host's bridge address (CONNECT)" "connect $H:$HP" "connect:$H:$HP" unsafe_ip_literal
denied "approved name answering the host's bridge address" "get http://hostname.test:$HP/" "http://hostname.test:$HP/host-name" resolution_unsafe
t_is "... the host listener on that address saw nothing" "$(host_hits "$H")" 0
if [ -n "$D" ]; then
	t_like "an approved name answering a host bridge address ($D): 403" "$(probe_line "get http://bridgehost.test:$HP/")" 'blocked status=403'
	t_like "... deny record names the address and an unsafe class, nothing connected" \
		"$(rec_for "http://bridgehost.test:$HP/bridge-name" | jq -r '[.event.decision,.event.reason,.decision.address,.decision.address_class,(.connected_address|tostring)]|join(" ")')" \
		"^deny resolution_unsafe ${D//./\\.} (private|docker-internal|link-local|cgnat|reserved) null\$"
	denied "a literal that is a host bridge address ($D, not approvable; plain HTTP)" "get http://$D:$HP/" "http://$D:$HP/bridge-literal" ip_literal_not_approved
	denied "a literal that is a host bridge address ($D; CONNECT)" "connect $D:$HP" "connect:$D:$HP" ip_literal_not_approved
	t_is "... the host listener on $D saw nothing" "$(host_hits "$D")" 0
else
	t_skip "a host bridge address outside the documentation ranges" "the host has none"
fi
t_like "a name whose answers include one unsafe address: 403" "$(probe_line 'get http://mixed.test/')" 'blocked status=403'
t_is "... deny record names both answers, nothing connected" \
	"$(rec_for http://mixed.test/mixed-answers | jq -r '[.event.decision,.event.reason,(.event.resolved_addresses|join(",")),(.connected_address|tostring)]|join(" ")')" \
	"deny resolution_ambiguous $C,127.0.0.1 null"
t_like "a redirect to a new host: the 302 is passed back, the new request gets 403" \
	"$(probe_line 'get http://canary.test/redirect-0880')" 'status=302 location=http://other.test:80/landed status=403'
t_is "... deny record for the new host" \
	"$(rec_for http://other.test:80/landed | jq -r '[.event.decision,.event.reason]|join(" ")')" \
	"deny destination_not_approved"
t_is "... the new host was never looked up" "$(st_log resolver dns 53 | grep -c other.test || true)" 0

# ---- rebinding: the answer alternates canary / 127.0.0.1 per query ----
allows=0 denies=0 bad= allowed_paths=
for i in 1 2 3 4; do
	r=$(rec_for "http://rebind.test/rebind-$i")
	case "$(jq -r '[.event.decision,.event.reason,(.event.resolved_addresses|join(",")),(.connected_address|tostring)]|join(" ")' <<<"$r")" in
	"allow approved_destination $C $C") allows=$((allows + 1)) allowed_paths+=" /rebind-$i" ;;
	"deny resolution_unsafe 127.0.0.1 null") denies=$((denies + 1)) ;;
	*) bad+="$i: $r " ;;
	esac
done
t_is "rebinding: every request is allowed to the checked canary address or denied as unsafe" "$bad" ""
t_is "... both answers were seen (2 allowed, 2 denied)" "$allows $denies" "2 2"
t_is "... the listener on 127.0.0.1 in the gateway's namespace was never reached" \
	"$(st_log_count "lo-deny" http 80)" 0
t_is "... the canary saw exactly the allowed rebinding requests" \
	"$(st_log canary http 80 | grep -c 'GET /rebind-' || true)" "$allows"

# ---- the canary log over the whole denied trial ----
t_is "the canary saw only the redirect and the allowed rebinding requests" \
	"$(st_log canary http 80 | sed -n '3,$p' | sed 's/.* line=[A-Z]* \([^ ]*\) .*/\1/' | sort | tr '\n' ' ')" \
	"$(printf '%s\n' /redirect-0880 $allowed_paths | sort | tr '\n' ' ')"
t_is "no denied path appears in any canary log" \
	"$(cat "$ST_LOGS"/canary/*.log "$ST_LOGS"/lo-deny/*.log | grep -cE 'unapproved|ip-literal|host-|bridge-|mixed-answers|landed' || true)" 0
t_is "the resolver was asked only about approved names" \
	"$(st_log resolver dns 53 | sed -n "$((dns_before + 1)),\$p" | sed 's/.* name=\([^ ]*\) .*/\1/' | sort -u | tr '\n' ' ')" \
	"bridgehost.test canary.test hostname.test mixed.test rebind.test "
st_check_stream "denied trial"
st_check_manifest "denied trial" failed destination_denied
t_is "denied trial: study-egress run fails (exit 1), never passes" "$ST_RUN_RC" 1
st_check_run_gone "denied trial"

st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
