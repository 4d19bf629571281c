#!/usr/bin/env bash
# Credential injection in agentguard-gateway on loopback (issue 21): a test
# HTTPS destination (tests/gear/agtest-tls-upstream, its own test CA) on
# 127.0.0.1:443 that logs the headers it receives, the fake resolver, and
# the gateway with an inject file made here. The terminated destination
# gets the real credential and never the agent's placeholder; the spliced
# one is the destination's own TLS and never sees the credential; a Host
# other than the approved name, an h2-only client, an unverifiable
# destination and a wrong SNI are refused and recorded; the evidence names
# the header, never a value. Port 443 needs root.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-gateway.sh"

command -v python3 >/dev/null || skip_all "python3 is needed for the loopback fakes"
command -v curl >/dev/null || skip_all "curl is needed as the proxy client"
command -v jq >/dev/null || skip_all "jq is needed to read the evidence"
command -v openssl >/dev/null || skip_all "openssl makes the test certificates"
[ "$(id -u)" = 0 ] || skip_all "the destination listens on port 443 (root)"
UPSTREAM=$AG_BUILD/tests/agtest-tls-upstream
[ -x "$UPSTREAM" ] || skip_all "the test gear is not built: make tests"
python3 -c 'import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",443))' 2>/dev/null ||
	skip_all "127.0.0.1:443 is in use"

REAL=sk-real-$RANDOM$RANDOM-0882
PLACEHOLDER=agentguard-placeholder-0882
# ---- certificates: the destination's own CA, another CA, the trial CA ----
mkcert() { # NAME SUBJECT CA:true|false [SIGNER] [SAN]
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
		-keyout "$T/$1.key" -out "$T/$1.csr" 2>/dev/null
	local ext="$T/$1.ext"
	if [ "$3" = true ]; then
		printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' >"$ext"
	else
		printf 'basicConstraints=CA:FALSE\nsubjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$5" >"$ext"
	fi
	if [ -n "${4:-}" ]; then
		openssl x509 -req -in "$T/$1.csr" -CA "$T/$4.pem" -CAkey "$T/$4.key" -CAcreateserial \
			-days 2 -extfile "$ext" -out "$T/$1.pem" 2>/dev/null
	else
		openssl x509 -req -in "$T/$1.csr" -signkey "$T/$1.key" -days 2 -extfile "$ext" \
			-out "$T/$1.pem" 2>/dev/null
	fi
}
mkcert upca "agtest upstream CA" true
mkcert server tls.test false upca "DNS:tls.test,DNS:plain.test"
mkcert otherca "agtest other CA" true
mkcert trial "AgentGuard trial CA t0882" true

mkdir -p "$T/up"
"$UPSTREAM" --listen 127.0.0.1:443 --cert "$T/server.pem" --key "$T/server.key" \
	--log-dir "$T/up" --lifetime 600 --name loopback &
t_cleanup kill "$!"
for _ in $(seq 1 100); do
	[ -f "$T/up/ready" ] && break
	sleep 0.1
done
: >"$T/up/headers.log"

printf 'tls.test A 127.0.0.1\nplain.test A 127.0.0.1\n' >"$T/table"
gw_fake dns dns --table "$T/table"
jq -n '{schema: "agentguard.live-study-egress-policy", schema_version: 1, destinations: [
  {host: "tls.test", port: 443, test_only: true,
   inject: {header: "Authorization", prefix: "Bearer ", from_env: "AG_T0882_KEY",
            placeholder_env: "T0882_API_KEY"}},
  {host: "plain.test", port: 443, test_only: true}]}' >"$T/policy.json"
inject_file() { # FILE CA-NAME VALUE [HOST] [KEY-OF]
	jq -n --rawfile c "$T/$2.pem" --rawfile k "$T/${5:-$2}.key" --arg v "$3" \
		--arg h "${4:-tls.test}" \
		'{ca_cert: $c, ca_key: $k, credentials: [{host: $h, port: 443, value: $v}]}' >"$1"
}
inject_file "$T/inject.json" trial "Bearer $REAL"

# ---- start-up refusals ----
port=$(gw_free_port)
start_args=(--listen-address 127.0.0.1 --listen-port "$port" --resolver "127.0.0.1:$GW_PORT_dns"
	--policy "$T/policy.json" --test-allow-loopback)
ag_must_fail 2 gateway.inject "a policy that injects needs --inject" \
	"$GW_BIN" "${start_args[@]}" --events "$T/r1.jsonl"
inject_file "$T/wronghost.json" trial "Bearer $REAL" plain.test
ag_must_fail 2 gateway.inject "a credential for a rule without inject is refused" \
	"$GW_BIN" "${start_args[@]}" --events "$T/r2.jsonl" --inject "$T/wronghost.json"
t_unlike "... and the refusal does not print the credential" "$AG_OUT" "$REAL"
inject_file "$T/mismatch.json" trial "Bearer $REAL" tls.test otherca
ag_must_fail 2 gateway.inject "a CA key that is not the certificate's is refused" \
	"$GW_BIN" "${start_args[@]}" --events "$T/r3.jsonl" --inject "$T/mismatch.json"

gw_start gw --test-allow-loopback --trial-id t0882 --inject "$T/inject.json" \
	--upstream-ca "$T/upca.pem" || exit 1
EV=$T/gw.jsonl
rec() { jq -c --arg h "$1" 'select(.record=="decision" and .event.requested.host==$h)' "$EV"; }
tcurl() { gw_curl "$@"; }

# ---- terminated: the real credential arrives, never the placeholder ----
out=$(tcurl --cacert "$T/trial.pem" -H "Authorization: Bearer $PLACEHOLDER" \
	-H "x-api-key: $PLACEHOLDER" https://tls.test/v1/models 2>&1 || true)
t_is "through the terminated tunnel the agent gets the destination's answer" "$out" \
	"upstream-ok loopback"
log=$(cat "$T/up/headers.log")
t_like "... the destination got the real credential" "$log" "H Authorization: Bearer $REAL"
t_is "... exactly once" "$(grep -c -i '^H authorization:' "$T/up/headers.log")" 1
t_unlike "... and never the placeholder, in any header" "$log" "$PLACEHOLDER"
t_like "... Host is the approved name" "$log" 'H Host: tls.test'
out=$(tcurl --cacert "$T/upca.pem" https://tls.test/ 2>&1 || true)
t_unlike "the agent cannot see the destination's own certificate there (the trial CA's leaf)" \
	"$out" 'upstream-ok'
out=$(printf 'Authorization: Bearer in-the-body\r\n\r\n' |
	tcurl --cacert "$T/trial.pem" -X POST --data-binary @- https://tls.test/a 2>&1 || true)
t_is "a POST body passes unchanged (a header in a body is body)" "$out" "upstream-ok loopback"
t_is "... one Authorization header per request reached the destination" \
	"$(grep -c -i '^H authorization:' "$T/up/headers.log")" 2

# ---- spliced: the destination's own TLS, no credential ----
: >"$T/up/headers.log"
out=$(tcurl --cacert "$T/upca.pem" -H "Authorization: Bearer $PLACEHOLDER" \
	https://plain.test/ 2>&1 || true)
t_is "a rule without inject is spliced: the agent sees the destination's own certificate" \
	"$out" "upstream-ok loopback"
t_like "... the destination got only what the agent sent (the placeholder is worth nothing)" \
	"$(cat "$T/up/headers.log")" "H Authorization: Bearer $PLACEHOLDER"
t_unlike "... and never the credential" "$(cat "$T/up/headers.log")" "$REAL"
out=$(tcurl --cacert "$T/trial.pem" https://plain.test/ 2>&1 || true)
t_unlike "... the trial CA vouches for nothing there" "$out" 'upstream-ok'

# ---- refusals inside the tunnel ----
: >"$T/up/headers.log"
out=$(tcurl -i --cacert "$T/trial.pem" -H 'Host: plain.test' https://tls.test/ 2>&1 || true)
t_like "a Host other than the approved name is refused (421)" "$out" 'HTTP/1.1 421'
t_like "... with its reason" "$out" 'X-AgentGuard-Reason: host_mismatch'
t_is "... and nothing reached the destination" "$(grep -c REQUEST "$T/up/headers.log" || true)" 0
out=$(tcurl -i --cacert "$T/trial.pem" -X TRACE https://tls.test/ 2>&1 || true)
t_like "TRACE (whose answer would echo the real header back) is refused (405)" "$out" \
	'X-AgentGuard-Reason: inner_method'
t_is "... and never reached the destination" "$(grep -c REQUEST "$T/up/headers.log" || true)" 0
alpn=$(timeout 10 openssl s_client -proxy "$GW_ADDR" -connect tls.test:443 -servername tls.test \
	-alpn h2 -CAfile "$T/trial.pem" </dev/null 2>&1 || true)
t_like "an agent offering only h2 gets no TLS session (ALPN offers http/1.1 only)" "$alpn" \
	'no application protocol|alert|handshake failure'
timeout 10 openssl s_client -proxy "$GW_ADDR" -connect tls.test:443 -servername plain.test \
	-CAfile "$T/trial.pem" </dev/null >/dev/null 2>&1 || true

kill -TERM "$GW_PID"
wait "$GW_PID" 2>/dev/null || true
t_like "the start record lists the terminated destination and its header" "$(head -1 "$EV")" \
	'"tls_terminated":\[\{"header":"Authorization","host":"tls.test","port":443\}\]'
r=$(rec tls.test | sed -n 1p)
t_like "the terminated request's record says terminated" "$r" '"tls":"terminated"'
t_like "... names the injected header" "$r" '"injected_header":"authorization"'
t_like "... and counts the requests" "$r" '"tunnel_requests":1'
t_like "the Host mismatch is recorded" "$(rec tls.test)" '"tunnel_refusal":"host_mismatch"'
t_like "the h2-only client is recorded" "$(rec tls.test)" '"tls_error":"client_alpn_refused"'
t_like "the wrong SNI is recorded" "$(rec tls.test)" '"tls_error":"client_sni_mismatch"'
t_like "the spliced request's record says so" "$(rec plain.test | sed -n 1p)" \
	'"tls":"client-owned-not-intercepted"'
t_like "... and its event says spliced, with no header" "$(rec plain.test | sed -n 1p)" \
	'"tls":\{"injected_header":null,"mode":"spliced"\}'
t_unlike "... and carries no tunnel counts" "$(rec plain.test | sed -n 1p)" 'tunnel_requests'
t_like "the terminated request's event (what the manifest keeps) says terminated and the header" \
	"$(rec tls.test | sed -n 1p)" '"tls":\{"injected_header":"authorization","mode":"terminated"\}'
t_unlike "no evidence holds the credential" "$(cat "$EV" "$T/gw.err")" "$REAL"
t_unlike "... nor the placeholder the agent sent" "$(cat "$EV" "$T/gw.err")" "$PLACEHOLDER"

# ---- a destination whose certificate the bundle does not vouch for ----
: >"$T/up/headers.log"
gw_start gw2 --test-allow-loopback --trial-id t0882 --inject "$T/inject.json" \
	--upstream-ca "$T/otherca.pem" || exit 1
out=$(tcurl -i --cacert "$T/trial.pem" https://tls.test/ 2>&1 || true)
t_like "an unverifiable destination gets no request: 502" "$out" 'HTTP/1.1 502'
t_like "... with its reason" "$out" 'X-AgentGuard-Reason: destination_certificate_unverified'
t_is "... the destination saw no request" "$(grep -c REQUEST "$T/up/headers.log" || true)" 0
kill -TERM "$GW_PID"
wait "$GW_PID" 2>/dev/null || true
t_like "... recorded" "$(cat "$T/gw2.jsonl")" '"tls_error":"destination_certificate_unverified"'
# Under the ASan pass (tests/asan-cli) a leak or a memory error of the TLS
# paths shows here, when each gateway ends.
t_unlike "neither gateway reported a sanitizer finding" "$(cat "$T/gw.err" "$T/gw2.err")" 'Sanitizer'
t_done
