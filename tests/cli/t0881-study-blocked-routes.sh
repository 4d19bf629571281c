#!/usr/bin/env bash
# t0881: every route around the gateway is closed on the real engine. The
# agent of an `agentguard study-egress run` (tests/cli/lib-study-net.sh)
# ignores its proxy and tries direct TCP to the canary by address and by
# name, UDP to 443 and to another port, DNS for unique names through
# 127.0.0.11, the resolver's address and both of the gateway's addresses, a
# listener on every host bridge address, AF_PACKET, IPv6 and Unix sockets.
# Each is proven closed by an EMPTY canary, resolver or host log, not only by
# the client's error. The sensitivity control runs the same probes from a
# container on an ordinary bridge network that holds the same canaries:
# there they must succeed, so the probes can see a leak.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t0881
. "$(dirname "$0")/lib-study-net.sh"
st_start
C=$ST_CANARY R=$ST_RESOLVER HP=$ST_HOSTPORT
st_policy '{"host":"canary.test","port":80,"test_only":true}'

# host facts the topology relies on (engine notes, section 12.2)
t_is "host: bridged frames pass iptables (br_netfilter)" \
	"$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo absent)" 1

U=u$$-${RANDOM}
# Every host bridge address that is still the host's own (route: local).
HOST_ADDRS=$(st_live_host_addrs)
host_probes=
for a in $HOST_ADDRS "$ST_STUDY_BRIDGE_IP"; do host_probes+="\$P probe tcp $a $HP"$'\n'; done
probes="\$P probe tcp $C 7
\$P probe tcp canary.test 7
\$P probe tcp $U-byname.test 7
\$P probe tcp $ST_GW_OUT 8080
\$P probe udp $C 443 QUIC-LIKE-$U
\$P probe udp $C 9999 UDP-$U
\$P probe dns 127.0.0.11 $U-embedded.exfil.test
\$P probe dns $R $U-resolver.exfil.test
\$P probe dns $ST_GW_STUDY $U-gwstudy.exfil.test
\$P probe dns $ST_GW_OUT $U-gwout.exfil.test
${host_probes}\$P probe packet
\$P probe ipv6
\$P probe unix"
# The engine's DNS fingerprint (engine notes, section 3; it changes between
# engine versions): does 127.0.0.11 forward an internal-only container's
# query to its --dns (127.0.0.1, a logger inside the agent's own namespace)?
fingerprint='mkdir -p /tmp/fp && ($P serve --log-dir /tmp/fp --lifetime 4 --dns 127.0.0.1:53 &) &&
sleep 0.5 && $P probe dns 127.0.0.11 fingerprint.invalid >/dev/null; sleep 0.3;
echo "fingerprint: $(grep -c fingerprint.invalid /tmp/fp/dns-53.log 2>/dev/null)"'

gw_out_planned=$ST_GW_OUT
st_agent blocked "$(st_parallel "$probes")
$fingerprint"
t_is "host: the study bridge had no IPv4 address while the trial ran (inhibit_ipv4)" \
	"$(cat "$ST_INSPECT/study-bridge-ipv4.txt" 2>&1)" ""
t_is "the gateway's outbound address was the one probed" "$ST_GW_OUT" "$gw_out_planned"
diag "agent probes:" "$(grep -E '^(probe|fingerprint)' <<<"$ST_AGENT_OUT")"
line() { grep -F "probe $1" <<<"$ST_AGENT_OUT" | head -1; }
fp=$(sed -n 's/^fingerprint: //p' <<<"$ST_AGENT_OUT")
diag "engine forwards DNS from an internal-only container to its --dns inside its namespace: $([ "${fp:-0}" -gt 0 ] && echo yes || echo no)"

t_like "direct TCP to the canary by address fails" "$(line "tcp $C:7")" 'blocked'
t_like "direct TCP to the canary by name fails (the name does not resolve)" "$(line "tcp canary.test:7")" 'blocked'
t_like "direct TCP to a unique name fails" "$(line "tcp $U-byname.test:7")" 'blocked'
t_is "... the echo canary saw no connection" "$(st_log_count canary echo 7)" 0
t_like "direct TCP to the gateway's outbound address fails" "$(line "tcp $ST_GW_OUT:8080")" 'blocked'
t_is "UDP to 443 (QUIC-like): the sink saw nothing" "$(st_log_count canary udp 443)" 0
t_is "UDP to another port: the sink saw nothing" "$(st_log_count canary udp 9999)" 0
t_is "DNS for unique names via 127.0.0.11, the resolver and both gateway addresses: the resolver saw none" \
	"$(st_log resolver dns 53 | grep -c "$U" || true)" 0
t_like "... the resolver's address does not answer" "$(line "dns $R/")" 'blocked'
t_like "... the gateway's study address does not answer DNS" "$(line "dns $ST_GW_STUDY/")" 'blocked'
t_like "... the gateway's outbound address is unreachable" "$(line "dns $ST_GW_OUT/")" 'blocked'
for a in $HOST_ADDRS; do
	t_like "host bridge address $a: unreachable" "$(line "tcp $a:$HP")" 'blocked'
done
t_is "... the host listeners on every bridge address saw nothing" "$(st_log_count host http "$HP")" 0
t_like "the study bridge's would-be host address is unreachable" "$(line "tcp $ST_STUDY_BRIDGE_IP:$HP")" 'blocked'
t_like "AF_PACKET: EPERM" "$(line packet)" 'blocked EPERM'
t_like "IPv6 off, and it cannot be switched on" "$(line ipv6)" 'blocked all=1 default=1 eth0=1 inet6_addresses=0 enable_write=[A-Z]'
t_like "no Unix socket: /proc/net/unix empty, no Docker socket" "$(line unix)" 'blocked proc_net_unix=0$'
t_is "the gateway recorded no decision (nothing went through it)" \
	"$(jq -c 'select(.record=="decision")' "$ST_EVENTS" | wc -l)" 0
# What the topology dropped never reached the gateway, so the run's evidence
# cannot show it: the manifest has no event for any of these attempts.
t_is "... and the run's manifest has no event for the dropped attempts" \
	"$(jq -r '.events|length' "$ST_MANIFEST" 2>&1)" 0
st_check_run_gone "the bypass trial"
diag "the run: exit $ST_RUN_RC, $(jq -r '.study_egress|"completion \(.completion) (\(.completion_reason))"' <<<"$ST_RUN_SUMMARY")"

# ---- sensitivity control: the same probes on an ordinary bridge ----
st_control_setup || { t_fail "the control network is set up"; t_done; }
CC=$ST_CTL_CANARY CR=$ST_CTL_RESOLVER
for tgt in "$CC" "$CR" "$ST_CTL_HOST"; do
	st_route_ok "$tgt" || skip_all "the route to $tgt names no owned bridge"
done
host_before=$(st_log_count host http "$HP")
# Here only the bridges that stay for the whole test (docker0's and ours):
# another test's bridge may vanish between this line and the probe.
HOST_ADDRS=$(st_live_host_addrs | grep -xF -e "${ST_HOST_PRIVATE:-none}" -e "$ST_OUT_HOST" || true)
host_probes=
for a in $HOST_ADDRS "$ST_CTL_HOST"; do host_probes+="\$P probe tcp $a $HP"$'\n'; done
st_control "$(st_parallel "\$P probe tcp $CC 7
\$P probe tcp canary.test 7
\$P probe udp $CC 443 QUIC-LIKE-CTL-$U
\$P probe udp $CC 9999 UDP-CTL-$U
\$P probe dns 127.0.0.11 $U-ctl-embedded.exfil.test
\$P probe dns $CR $U-ctl-resolver.exfil.test
${host_probes}\$P probe packet
\$P probe ipv6
\$P probe unix")"
diag "control probes:" "$(grep '^probe' <<<"$ST_CTL_OUT")"
cline() { grep -F "probe $1" <<<"$ST_CTL_OUT" | head -1; }
t_like "control: direct TCP by address connects" "$(cline "tcp $CC:7")" 'reached'
t_like "control: direct TCP by name connects" "$(cline "tcp canary.test:7")" 'reached'
t_is "control: ... the echo canary logged both" "$(st_log_count canary echo 7)" 2
t_is "control: UDP 443 reached the sink" "$(st_log canary udp 443 | grep -c "QUIC-LIKE-CTL-$U" || true)" 1
t_is "control: UDP 9999 reached the sink" "$(st_log canary udp 9999 | grep -c "UDP-CTL-$U" || true)" 1
t_is "control: DNS via 127.0.0.11 is forwarded to the resolver" \
	"$(st_log resolver dns 53 | grep -c "$U-ctl-embedded" || true)" 1
t_is "control: DNS to the resolver's address arrives" \
	"$(st_log resolver dns 53 | grep -c "$U-ctl-resolver" || true)" 1
for a in $HOST_ADDRS "$ST_CTL_HOST"; do
	t_like "control: host bridge address $a answers" "$(cline "tcp $a:$HP")" 'reached'
done
t_is "control: ... and the host listeners logged each" \
	"$(($(st_log_count host http "$HP") - host_before + $(st_log_count host-ctl http "$HP")))" \
	"$(wc -w <<<"$HOST_ADDRS $ST_CTL_HOST")"
t_like "control: AF_PACKET opens (default capabilities)" "$(cline packet)" 'reached'
t_like "control: IPv6 on is seen" "$(cline ipv6)" 'reached'
t_like "control: a Unix socket at the Docker socket's path is seen" "$(cline unix)" 'reached .*docker.sock connect=ok'

st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
