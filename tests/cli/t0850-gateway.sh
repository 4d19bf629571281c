#!/usr/bin/env bash
# agentguard-gateway on loopback with real sockets: a DNS responder, HTTP
# canaries on 127.0.0.1 and 127.0.0.2 and a TCP echo, all owned by this
# test (tests/fakes/netcanary.py). Every blocked route is shown by an
# unchanged canary log (and, for unapproved names, an unchanged DNS log),
# not only by the client's error.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-gateway.sh"

command -v python3 >/dev/null || skip_all "python3 is needed for the loopback fakes"
command -v curl >/dev/null || skip_all "curl is needed as the proxy client"
command -v jq >/dev/null || skip_all "jq is needed to read the evidence"

# /redirect on the canary points at a host the policy does not approve.
gw_fake http http --redirect-to 'http://other.test:{port}/landed'
gw_fake unsafe http --bind 127.0.0.2
gw_fake echo echo --idle 30
gw_fake v6 http --bind ::1
cat >"$T/table" <<EOF
canary.test A 127.0.0.1
echo.test A 127.0.0.1
unsafe.test A 127.0.0.2
mixed.test A 127.0.0.1,127.0.0.2
rebind.test REBIND 127.0.0.1,127.0.0.2
other.test A 127.0.0.1
refused.test REFUSED -
v6.test AAAA ::1
EOF
gw_fake dns dns --table "$T/table"
HP=$GW_PORT_http UP=$GW_PORT_unsafe EP=$GW_PORT_echo V6P=$GW_PORT_v6

cat >"$T/policy.json" <<EOF
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1,
 "destinations": [
  {"host": "canary.test", "port": $HP, "test_only": true},
  {"host": "echo.test", "port": $EP, "test_only": true},
  {"host": "unsafe.test", "port": $UP, "test_only": true},
  {"host": "mixed.test", "port": $HP, "test_only": true},
  {"host": "rebind.test", "port": $HP, "test_only": true},
  {"host": "refused.test", "port": $HP, "test_only": true},
  {"host": "v6.test", "port": $V6P, "test_only": true}]}
EOF

# ---- start-up refusals ----
cat >"$T/prod.json" <<EOF
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1,
 "destinations": [{"host": "canary.test", "port": $HP}]}
EOF
t_run "$GW_BIN" --listen-address 127.0.0.1 --listen-port 1 --resolver 127.0.0.1:1 \
	--policy "$T/prod.json" --events "$T/x.jsonl" --test-allow-loopback
t_is "the loopback test flag is refused with a policy that is not test_only" "$AG_RC" 2
t_like "... and says why" "$AG_OUT" 'gateway.test_flag_needs_test_policy'
t_run "$GW_BIN" --listen-address 127.0.0.1 --listen-port 1 --resolver 127.0.0.1:1 \
	--policy "$T/policy.json" --events "$T/x.jsonl" --policy-digest "$(printf '0%.0s' {1..64})"
t_is "a policy whose digest is not --policy-digest is refused" "$AG_RC" 2
t_run "$GW_BIN" --listen-address canary.test --listen-port 1 --resolver 127.0.0.1:1 \
	--policy "$T/policy.json" --events "$T/x.jsonl"
t_is "a listen address that is a name is refused" "$AG_RC" 2
echo '{"record":"old"}' >"$T/exists.jsonl"
t_run "$GW_BIN" --listen-address 127.0.0.1 --listen-port "$(gw_free_port)" \
	--resolver "127.0.0.1:$GW_PORT_dns" --policy "$T/policy.json" --events "$T/exists.jsonl"
t_is "an evidence file that is not empty is never appended to" "$AG_RC" 3
t_like "... reason" "$AG_OUT" 'gateway.events.open'
t_is "no DNS query so far" "$(wc -l <"$T/dns.log")" 0

gw_start gw --test-allow-loopback --trial-id t0850 || exit 1
EV=$T/gw.jsonl
dns_count() { grep -c "name=$1 " "$T/dns.log" || true; }
log_count() { wc -l <"$T/$1.log"; }
# The decision record for host:port at position N (1 = first seen).
rec() { jq -c --arg h "$1" --argjson p "$2" \
	'select(.record=="decision" and .event.requested.host==$h and .event.requested.port==$p)' "$EV"; }

# ---- allowed ----
out=$(gw_curl -i "http://canary.test:$HP/hello?secret=QS0850" 2>&1 || true)
t_like "plain HTTP to the approved host:port reaches the canary" "$out" 'CANARY-OK'
t_like "... the canary got the request in origin-form with the query" \
	"$(cat "$T/http.log")" "GET /hello\\?secret=QS0850 host=canary.test:$HP"
r=$(rec canary.test "$HP" | head -1)
t_is "... recorded: allow, approved_destination" \
	"$(jq -r '[.event.decision,.event.reason,.event.protocol]|join(" ")' <<<"$r")" \
	"allow approved_destination http"
t_is "... the resolved and connected address" \
	"$(jq -r '[.event.resolved_addresses[0],.connected_address,.decision.address]|join(" ")' <<<"$r")" \
	"127.0.0.1 127.0.0.1 127.0.0.1"
t_like "... bytes both ways" "$(jq -c '.event.bytes' <<<"$r")" '^\{"in":[1-9][0-9]*,"out":[1-9][0-9]*\}$'
t_is "... the URL recorded without its query" "$(jq -r '.event.url' <<<"$r")" \
	"http://canary.test:$HP/hello"

out=$(gw_curl -p "http://canary.test:$HP/tunnel" 2>&1 || true)
t_like "CONNECT to the approved host:port reaches the canary through the tunnel" "$out" 'CANARY-OK'
t_like "... the canary saw the tunnelled request" "$(cat "$T/http.log")" 'GET /tunnel'
r=$(jq -c 'select(.record=="decision" and .event.protocol=="connect")' "$EV" | head -1)
t_is "... recorded: allow over CONNECT, TLS left to the client" \
	"$(jq -r '[.event.decision,.tls,.connected_address]|join(" ")' <<<"$r")" \
	"allow client-owned-not-intercepted 127.0.0.1"

out=$(gw_curl -i "http://v6.test:$V6P/six" 2>&1 || true)
t_like "a name with only an AAAA answer (::1) reaches the IPv6 canary" "$out" 'CANARY-OK'
t_is "... recorded with the IPv6 address connected" \
	"$(rec v6.test "$V6P" | jq -r '[.event.decision,(.event.resolved_addresses|join(",")),.connected_address]|join(" ")')" \
	"allow ::1 ::1"

printf 'CONNECT echo.test:%s HTTP/1.1\r\nHost: echo.test:%s\r\n\r\n' "$EP" "$EP" >"$T/connect"
printf 'PING-0850\n' >"$T/ping"
out=$(gw_raw "$T/connect" "$T/ping")
t_like "a CONNECT tunnel carries raw TCP to the echo" "$out" $'200 Connection established.*PING-0850'
t_is "... the echo saw one connection" "$(log_count echo)" 1

# An established tunnel is relayed through one fixed buffer each way
# (src/gateway/tunnel.c): bytes pipelined behind the CONNECT head go first,
# a transfer many times the buffer arrives whole and in order, and the
# record counts every byte each way exactly.
tun=$(python3 - "$GW_ADDR" "$EP" <<'PY'
import hashlib, socket, sys, threading
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
pre = b"PIPELINED-0850:" + b"p" * 985            # 1000 bytes behind the head
body = bytes((i * 7) & 0xFF for i in range(900 * 1024))
s.sendall(b"CONNECT echo.test:%s HTTP/1.1\r\n\r\n" % sys.argv[2].encode() + pre)
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
got = []
def reader():
    n, want = 0, len(pre) + len(body)
    while n < want:
        d = s.recv(65536)
        if not d:
            break
        got.append(d)
        n += len(d)
t = threading.Thread(target=reader)
t.start()
s.sendall(body)
t.join()
s.close()
back = b"".join(got)
print(head.split(b"\r\n")[0].decode(), len(back),
      hashlib.sha256(back).hexdigest() == hashlib.sha256(pre + body).hexdigest())
PY
)
t_is "a tunnel relays pipelined bytes and 900 KiB each way, whole and in order" "$tun" \
	"HTTP/1.1 200 Connection established $((1000 + 900 * 1024)) True"
for _ in $(seq 1 50); do [ "$(jq -s '[.[]|select(.record=="decision" and .event.protocol=="connect")]|length' "$EV")" -ge 3 ] && break; sleep 0.1; done
t_is "... its record counts every byte each way" \
	"$(jq -c 'select(.record=="decision" and .event.protocol=="connect")|.event.bytes' "$EV" | tail -1)" \
	"{\"in\":$((1000 + 900 * 1024)),\"out\":$((1000 + 900 * 1024))}"

# ---- denied: each proven by an unchanged canary (and DNS) log ----
before_http=$(log_count http) before_unsafe=$(log_count unsafe)
out=$(gw_curl -i "http://nothere.test:$HP/x?token=QS0850B" 2>&1 || true)
t_like "an unapproved host gets 403" "$out" '^HTTP/1.1 403'
t_is "... it was never looked up (DNS log)" "$(dns_count nothere.test)" 0
t_is "... deny record" "$(rec nothere.test "$HP" | jq -r '.event.reason')" destination_not_approved

out=$(gw_curl -i "http://canary.test:$EP/" 2>&1 || true)
t_like "an approved host on an unapproved port gets 403" "$out" '^HTTP/1.1 403'
t_is "... deny record" "$(rec canary.test "$EP" | jq -r '.event.reason')" destination_not_approved

out=$(gw_curl -i "http://127.0.0.1:$HP/" 2>&1 || true)
t_like "an IP literal (not approved) gets 403" "$out" '^HTTP/1.1 403'
t_is "... deny record" "$(rec 127.0.0.1 "$HP" | jq -r '.event.reason')" ip_literal_not_approved
printf 'CONNECT [::1]:%s HTTP/1.1\r\n\r\n' "$EP" >"$T/c6"
t_like "an IPv6 literal over CONNECT gets 403" "$(gw_raw "$T/c6")" '^HTTP/1.1 403'

out=$(gw_curl -i "http://unsafe.test:$UP/" 2>&1 || true)
t_like "a name answering an unsafe address (127.0.0.2) gets 403" "$out" '^HTTP/1.1 403'
t_is "... deny record names the unsafe address" \
	"$(rec unsafe.test "$UP" | jq -r '[.event.reason,.decision.address,.decision.address_class]|join(" ")')" \
	"resolution_unsafe 127.0.0.2 loopback"
t_is "... nothing was connected" "$(rec unsafe.test "$UP" | jq -r '.connected_address')" null

out=$(gw_curl -i "http://mixed.test:$HP/" 2>&1 || true)
t_like "a name whose answers include one unsafe address gets 403" "$out" '^HTTP/1.1 403'
t_is "... deny record (several answers are never picked from)" \
	"$(rec mixed.test "$HP" | jq -r '[.event.reason,(.event.resolved_addresses|join(","))]|join(" ")')" \
	"resolution_ambiguous 127.0.0.1,127.0.0.2"

out=$(gw_curl -L -i "http://canary.test:$HP/redirect" 2>&1 || true)
t_like "a redirect is passed to the client, not followed" "$out" '302 Found'
t_like "... the client's new request to the redirect's host gets 403" "$out" '403 Forbidden'
t_is "... deny record for the new host" "$(rec other.test "$HP" | jq -r '.event.reason')" \
	destination_not_approved
t_is "... the new host was never looked up" "$(dns_count other.test)" 0
t_unlike "... the canary never saw the landing request" "$(cat "$T/http.log")" 'landed'
t_is "the canary got only the redirect among the denied probes" \
	"$(($(log_count http) - before_http))" 1
t_is "the unsafe canary on 127.0.0.2 was never reached" "$(log_count unsafe)" "$before_unsafe"
t_is "... and never reached at all" "$before_unsafe" 0

# ---- rebinding: the answer alternates 127.0.0.1 / 127.0.0.2 ----
before_http=$(log_count http)
out1=$(gw_curl -i "http://rebind.test:$HP/r1" 2>&1 || true)
q1=$(grep -c 'name=rebind.test type=A$' "$T/dns.log" || true)
out2=$(gw_curl -i "http://rebind.test:$HP/r2" 2>&1 || true)
q2=$(grep -c 'name=rebind.test type=A$' "$T/dns.log" || true)
t_like "rebinding: the first answer (127.0.0.1) is used" "$out1" 'CANARY-OK'
t_is "... one A lookup for that request: no second lookup at connect time" "$q1" 1
t_like "rebinding: the next answer (127.0.0.2) is refused" "$out2" '^HTTP/1.1 403'
t_is "... one more lookup, for the new request only" "$q2" 2
t_is "... the evidence names the checked and connected address" \
	"$(rec rebind.test "$HP" | jq -r '[.event.decision,(.event.resolved_addresses|join(",")),(.connected_address//"none")]|join(" ")' | tr '\n' ';')" \
	"allow 127.0.0.1 127.0.0.1;deny 127.0.0.2 none;"
t_is "... only r1 reached the canary" "$(($(log_count http) - before_http))" 1
t_is "... nothing reached 127.0.0.2" "$(log_count unsafe)" 0

# ---- malformed and oversized requests ----
printf 'GARBAGE\r\n\r\n' >"$T/m1"
printf 'GET /local HTTP/1.1\r\nHost: canary.test\r\n\r\n' >"$T/m2"
printf 'GET https://canary.test:%s/ HTTP/1.1\r\n\r\n' "$HP" >"$T/m3"
printf 'GET http://canary.test:%s/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n' "$HP" >"$T/m4"
printf 'CONNECT canary.test:%s?q=QS0850C HTTP/1.1\r\n\r\n' "$HP" >"$T/m5"
printf 'POST http://canary.test:%s/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' "$HP" >"$T/m6"
printf 'POST http://canary.test:%s/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello' "$HP" >"$T/m8"
{ printf 'GET http://canary.test:%s/ HTTP/1.1\r\n' "$HP"; head -c 20000 /dev/zero | tr '\0' 'a'
  printf '\r\n\r\n'; } >"$T/m7"
before_http=$(log_count http)
before_recs=$(jq -s '[.[]|select(.record=="decision")]|length' "$EV")
for m in m1 m2 m3 m4 m5 m6 m8; do
	t_like "malformed request $m gets 4xx" "$(gw_raw "$T/$m")" '^HTTP/1.1 4[0-9][0-9] '
done
t_like "an oversized request head gets 431" "$(gw_raw "$T/m7")" '^HTTP/1.1 431 '
t_is "... each got a deny record" \
	"$(jq -s --argjson b "$before_recs" '[.[]|select(.record=="decision")][$b:]|map(.event.decision)|unique|join(",")' -r "$EV")" deny
t_is "... eight records" \
	"$(jq -s --argjson b "$before_recs" '[.[]|select(.record=="decision")][$b:]|length' "$EV")" 8
t_is "... none reached the canary" "$(log_count http)" "$before_http"
t_is "... the gateway says why" \
	"$(jq -s -r --argjson b "$before_recs" '[.[]|select(.record=="decision")][$b:]|map(.gateway_reason//.event.reason)|join(",")' "$EV")" \
	"malformed_request,unsupported_request,unsupported_request,obs_fold,invalid_authority,transfer_encoding_unsupported,content_length_duplicate,header_too_large"

# ---- a resolver that refuses: denied as uncertain ----
# libevent marks a refusing nameserver as failed and later probes it with a
# query for a name of its own choosing; the gateway resets the resolver so
# that no such probe is ever sent (checked at the end, after the probe delay).
refused_at=$SECONDS
# Meanwhile: a client that never finishes its request head, and one that
# connects and sends nothing at all.
printf 'GET http://canary.test:%s/slow HTTP/1.1\r\nX-Slow: 1\r\n' "$HP" >"$T/slow"
python3 "$GW_FAKE" client --proxy "$GW_ADDR" --send "$T/slow" --wait 15 >"$T/slow.out" 2>&1 &
slow_pid=$!
(exec 3<>"/dev/tcp/127.0.0.1/${GW_ADDR##*:}" && exec 3<&-) 2>/dev/null || true
out=$(gw_curl -i "http://refused.test:$HP/" 2>&1 || true)
t_like "a name the resolver refuses gets 403" "$out" '^HTTP/1.1 403'
t_is "... deny record: resolution_uncertain" "$(rec refused.test "$HP" | jq -r '.event.reason')" \
	resolution_uncertain

# ---- the resolver only ever saw approved names ----
# libevent's first probe of a failed nameserver would come 10 s after the
# failure (no lookup in between); wait that out, then look at every query
# the resolver got.
while ((SECONDS - refused_at < 13)); do sleep 1; done
wait "$slow_pid" || true
t_like "a request head not finished within 10 s gets 408" "$(cat "$T/slow.out")" '^HTTP/1.1 408 '
t_is "... with a deny record" "$(jq -r 'select(.gateway_reason=="header_timeout")|.event.decision' "$EV")" deny
t_is "every DNS query was for a name the policy approves" \
	"$(sed -n 's/^query name=\([^ ]*\) .*/\1/p' "$T/dns.log" | sort -u | tr '\n' ' ')" \
	"canary.test echo.test mixed.test rebind.test refused.test unsafe.test v6.test "

# ---- SIGTERM: the stream ends complete ----
# An idle tunnel is open when SIGTERM comes: the gateway stops accepting,
# waits its bounded drain time, cuts the tunnel and records it.
printf 'CONNECT echo.test:%s HTTP/1.1\r\n\r\n' "$EP" >"$T/hold"
python3 "$GW_FAKE" client --proxy "$GW_ADDR" --send "$T/hold" --wait 20 >"$T/hold.out" 2>&1 &
hold_pid=$!
before_echo=$(log_count echo)
for _ in $(seq 1 50); do [ "$(log_count echo)" -gt "$before_echo" ] && break; sleep 0.1; done
term_at=$SECONDS
kill -TERM "$GW_PID"
rc=0
wait "$GW_PID" || rc=$?
t_is "SIGTERM: the gateway exits 0" "$rc" 0
wait "$hold_pid" || true
t_like "... after the drain time (5 s), not at once and not never" "$((SECONDS - term_at))" '^[4-9]$'
t_is "... the cut tunnel was recorded" \
	"$(jq -r 'select(.close_reason=="shutdown")|[.event.decision,.event.protocol]|join(" ")' "$EV")" "allow connect"
last=$(tail -n 1 "$EV")
t_is "... the last record marks the stream complete" "$(jq -r '[.record,.complete,.reason]|join(" ")' <<<"$last")" \
	"end true sigterm"
t_is "... a connection that sent nothing is counted, not recorded as a request" \
	"$(jq -r '.empty_connections' <<<"$last")" 1
t_is "... it counts every decision record" "$(jq -r '.records' <<<"$last")" \
	"$(jq -s '[.[]|select(.record=="decision")]|length' "$EV")"
t_is "... the first record starts the stream" \
	"$(head -n 1 "$EV" | jq -r '[.record,.schema,.trial_id,.tls_interception,.follows_redirects]|join(" ")')" \
	"start agentguard.egress-gateway-stream t0850 false false"
t_ok "every line is canonical JSON (sorted keys, compact)" \
	bash -c 'while IFS= read -r l; do [ "$(jq -cS . <<<"$l")" = "$l" ] || exit 1; done <"$1"' _ "$EV"
t_ok "the seq numbers run 1..N without gaps" \
	bash -c '[ "$(jq -s "[.[]|select(.record==\"decision\")|.seq]==[range(1;(map(select(.record==\"decision\"))|length)+1)]" "$1")" = true ]' _ "$EV"
t_unlike "no query string anywhere in the evidence" "$(cat "$EV")" 'QS0850|secret=|token='

# The "event" of every decision record is the manifest's event item as is:
# a manifest assembled from them passes the egress library's validator,
# which recomputes the completion. These records come from loopback
# canaries (--test-allow-loopback), and the validator judges recorded
# addresses as a real study would: an allow that reached 127.0.0.1 can
# never certify a study, so the honest completion is incomplete
# (event_contradictory), and a claim of "complete" is refused.
h=$(printf 'a%.0s' {1..64})
jq -s --arg h "$h" --arg d "$(head -n 1 "$EV" | jq -r .policy_digest)" '{
  schema: "agentguard.live-study-egress-manifest", schema_version: 1,
  plan_digest: $h, profile_hash: $h, fixture_hash: $h, trial_id: "t0850",
  authorization_id: "auth-t0850", egress_policy_digest: $d, approved_destination: null,
  gateway_image_identity: {configured_reference: "127.0.0.1:5000/agentguard-gateway@sha256:\($h)",
    registry_digest: "127.0.0.1:5000/agentguard-gateway@sha256:\($h)", local_image_id: "sha256:\($h)",
    container_bound_image_id: "sha256:\($h)", platform: null, pull_policy: "never", cache_status: "local"},
  events: [.[] | select(.record == "decision") | .event],
  gateway_status: {state: "running", evidence_complete: true, evidence_truncated: false},
  cleanup_status: {agent: "removed", gateway: "removed", internal_network: "removed",
    outbound_network: "removed", overall_complete: true},
  liveness_status: {verified: true},
  completion: {status: "incomplete", reason: "event_contradictory", success_eligible: false}}' \
	"$EV" >"$T/manifest.json"
t_ok "the records' events make a manifest the egress validator accepts" \
	"$AG_BIN" study-egress manifest validate "$T/manifest.json"
jq -c '.events |= map(select(.decision == "allow")) | .completion = {status: "complete", reason: "complete", success_eligible: true}' \
	"$T/manifest.json" >"$T/manifest-allow.json"
t_run "$AG_BIN" study-egress manifest validate "$T/manifest-allow.json"
t_is "... and loopback allows alone can never claim complete (exit 2)" "$AG_RC" 2
t_like "... the validator names the contradiction" "$AG_OUT" "event_contradictory"

# ---- a killed gateway leaves an incomplete stream ----
gw_start killed --test-allow-loopback || exit 1
gw_curl "http://canary.test:$HP/k" >/dev/null 2>&1 || true
# The record is written when the gateway sees the client close, which can
# be after curl returns (slow under the sanitizers): wait for it (5 s max).
for _ in $(seq 50); do
	grep -q '"record":"decision"' "$T/killed.jsonl" 2>/dev/null && break
	sleep 0.1
done
{ kill -KILL "$GW_PID" && wait "$GW_PID"; } 2>/dev/null || true
t_is "SIGKILL: the stream has its records but no end record (incomplete)" \
	"$(jq -s -r '[(map(select(.record=="decision"))|length),(map(select(.record=="end"))|length)]|join(" ")' "$T/killed.jsonl")" \
	"1 0"


# ---- bounds: connections and idle time ----
gw_start limit --test-allow-loopback --max-connections 1 --idle-timeout 2 || exit 1
before_echo=$(log_count echo)
python3 "$GW_FAKE" client --proxy "$GW_ADDR" --send "$T/hold" --wait 20 >"$T/hold2.out" 2>&1 &
hold_pid=$!
for _ in $(seq 1 50); do [ "$(log_count echo)" -gt "$before_echo" ] && break; sleep 0.1; done
out=$(gw_curl -i "http://canary.test:$HP/over" 2>&1 || true)
t_like "one connection over --max-connections gets 503" "$out" '^HTTP/1.1 503'
t_like "... naming the bound" "$out" 'connection_limit'
wait "$hold_pid" || true
t_like "the idle tunnel is closed by --idle-timeout" "$(cat "$T/hold2.out")" '200 Connection established'
for _ in $(seq 1 30); do [ "$(wc -l <"$T/limit.jsonl")" -ge 3 ] && break; sleep 0.1; done
t_is "... both recorded (deny connection_limit, allow cut by idle_timeout)" \
	"$(jq -r 'select(.record=="decision")|[.event.decision,(.gateway_reason//.close_reason)]|join(" ")' "$T/limit.jsonl" | sort | tr '\n' ';')" \
	"allow idle_timeout;deny connection_limit;"
{ kill -KILL "$GW_PID" && wait "$GW_PID"; } 2>/dev/null || true

# ---- evidence that cannot be written: incomplete, and nothing more passes ----
GW_FSIZE_BLOCKS=1 gw_start full --test-allow-loopback || exit 1
before_http=$(log_count http)
gw_curl "http://canary.test:$HP/f1" >/dev/null 2>&1 || true
out=$(gw_curl -i "http://canary.test:$HP/f2" 2>&1 || true)
t_like "after a failed evidence write every request is refused" "$out" '^HTTP/1.1 503'
t_like "... naming the reason" "$out" 'evidence_lost'
t_is "... only the request before the failure reached the canary" \
	"$(($(log_count http) - before_http))" 1
kill -TERM "$GW_PID"
rc=0
wait "$GW_PID" || rc=$?
t_is "... SIGTERM then exits 1 (stream incomplete)" "$rc" 1
t_like "... and says so" "$(cat "$T/full.err")" 'gateway.evidence_incomplete'
t_is "... the stream has no end record saying complete" \
	"$(grep -c '"complete":true' "$T/full.jsonl" || true)" 0

# ---- the host's own addresses (--host-address): never connected to ----
t_run "$GW_BIN" --listen-address 127.0.0.1 --listen-port 1 --resolver 127.0.0.1:1 \
	--policy "$T/policy.json" --events "$T/x.jsonl" --host-address not-an-ip
t_is "a --host-address that is not an address is refused" "$AG_RC" 2
t_like "... and says why" "$AG_OUT" 'gateway.host_address'
gw_start hostaddr --test-allow-loopback --host-address 127.0.0.1 --host-address 10.9.8.7 || exit 1
before_http=$(log_count http)
out=$(gw_curl -i "http://canary.test:$HP/host" 2>&1 || true)
t_like "an approved name that resolves to a host address gets 403" "$out" '^HTTP/1.1 403'
t_is "... the canary saw nothing" "$(($(log_count http) - before_http))" 0
t_is "... deny record, nothing connected" \
	"$(jq -r 'select(.record=="decision" and .event.requested.host=="canary.test")|[.event.decision,.event.reason,(.connected_address//"none")]|join(" ")' "$T/hostaddr.jsonl")" \
	"deny resolution_unsafe none"
t_is "... the host address it resolved to is named nowhere in that record" \
	"$(jq -c 'select(.record=="decision" and .event.requested.host=="canary.test")' "$T/hostaddr.jsonl" | grep -c '127\.0\.0\.1' || true)" 0
out=$(gw_curl -i "http://v6.test:$V6P/six" 2>&1 || true)
t_like "... an address not listed still passes" "$out" 'CANARY-OK'
t_is "the start record counts the host addresses and names none of them" \
	"$(jq -r 'select(.record=="start")|.host_addresses' "$T/hostaddr.jsonl") $(grep -c '10\.9\.8\.7' "$T/hostaddr.jsonl" || true)" \
	"2 0"
kill -TERM "$GW_PID"
wait "$GW_PID" || true

t_done
