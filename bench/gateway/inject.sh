#!/usr/bin/env bash
# bench/gateway/inject.sh: a terminated tunnel (an inject rule's: the
# gateway ends the agent's TLS, rewrites each request head, opens its own
# TLS) against a spliced one (the agent's TLS passes through), on loopback,
# side by side in one run (see README.md, "Credential injection"). Root:
# the destination listens on 127.0.0.1:443, as inject rules are for 443.
#
#   bench/gateway/inject.sh [MiB per download (256)] [rounds (5)] [requests (50)]
#
# The destination is tests/gear/agtest-tls-upstream (GET /bytes/N sends N
# bytes); the client is curl through the gateway, trusting the trial CA
# for the terminated name and the destination's CA for the spliced one.
# Measured, medians of interleaved rounds:
#   - throughput: one download of N MiB through a fresh tunnel;
#   - added latency per request on a kept tunnel: REQUESTS small requests
#     over one connection (curl reuses it), wall time / REQUESTS;
#   - a fresh tunnel: one small request, connection and handshakes included.
# Never a pass/fail on time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/${BUILD:-build}
mib=${1:-256} rounds=${2:-5} nreq=${3:-50}
[ "$(id -u)" = 0 ] || { echo "bench/gateway/inject.sh: needs root (port 443)" >&2; exit 2; }
for b in "$build/agentguard-gateway" "$build/tests/agtest-tls-upstream"; do
	[ -x "$b" ] || { echo "not built: $b (make && make tests)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf -- "$tmp"' EXIT
cd "$tmp"
# the destination's CA and certificate (both names), the trial CA
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-dest-ca \
	-keyout dca.key -out dca.pem -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=tls.test \
	-keyout srv.key -out srv.csr 2>/dev/null
printf 'subjectAltName=DNS:tls.test,DNS:plain.test\nextendedKeyUsage=serverAuth\n' >srv.ext
openssl x509 -req -in srv.csr -CA dca.pem -CAkey dca.key -CAcreateserial -days 1 -extfile srv.ext \
	-out srv.pem 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-trial-ca \
	-keyout tca.key -out tca.pem -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign 2>/dev/null
mkdir up
"$build/tests/agtest-tls-upstream" --listen 127.0.0.1:443 --cert srv.pem --key srv.key --log-dir up \
	--lifetime 3600 --name bench &
pids+=($!)
printf 'tls.test A 127.0.0.1\nplain.test A 127.0.0.1\n' >table
python3 "$root/tests/fakes/netcanary.py" dns --port-file dns.port --log dns.log --lifetime 3600 \
	--table table --max 100000 &
pids+=($!)
for _ in $(seq 1 100); do [ -s dns.port ] && [ -f up/ready ] && break; sleep 0.1; done
jq -n '{schema: "agentguard.live-study-egress-policy", schema_version: 1, destinations: [
  {host: "tls.test", port: 443, test_only: true, inject: {header: "Authorization",
   prefix: "Bearer ", from_env: "K", placeholder_env: "P"}},
  {host: "plain.test", port: 443, test_only: true}]}' >policy.json
jq -n --rawfile c tca.pem --rawfile k tca.key \
	'{ca_cert: $c, ca_key: $k, credentials: [{host: "tls.test", port: 443, value: "Bearer bench"}]}' >inject.json
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$build/agentguard-gateway" --listen-address 127.0.0.1 --listen-port "$port" \
	--resolver "127.0.0.1:$(cat dns.port)" --policy policy.json --events events.jsonl \
	--test-allow-loopback --inject inject.json --upstream-ca dca.pem 2>gw.err &
gw=$!
pids+=($gw)
for _ in $(seq 1 100); do grep -q listening gw.err && break; sleep 0.1; done
# side: terminated (tls.test, trusting the trial CA) or spliced (plain.test)
c() { # SIDE CURL-ARGS...
	local side=$1 host ca
	shift
	if [ "$side" = terminated ]; then host=tls.test ca=tca.pem; else host=plain.test ca=dca.pem; fi
	curl -sS --noproxy '' -x "http://127.0.0.1:$port" --cacert "$ca" --http1.1 "${@//HOST/$host}"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A thr lat fresh
urls=()
for ((i = 0; i < nreq; i++)); do urls+=("https://HOST/small"); done
for ((r = 1; r <= rounds; r++)); do
	for side in spliced terminated; do
		t=$(c "$side" -o /dev/null -w '%{time_total}' "https://HOST/bytes/$((mib * 1048576))")
		thr[$side]+="$t "
		s=$(date +%s.%N)
		c "$side" "${urls[@]}" >/dev/null
		e=$(date +%s.%N)
		lat[$side]+="$(echo "($e - $s) * 1000 / $nreq" | bc -l) "
		t=$(c "$side" -o /dev/null -w '%{time_total}' "https://HOST/small")
		fresh[$side]+="$(echo "$t * 1000" | bc -l) "
	done
done
rss=$(awk '/VmHWM/ {print $2}' "/proc/$gw/status")
echo "== loopback, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); medians of $rounds interleaved rounds"
printf '%-44s %12s %12s %8s\n' measure spliced terminated ratio
ts=$(median ${thr[spliced]}) tt=$(median ${thr[terminated]})
printf '%-44s %10.0f/s %10.0f/s %8.2f\n' "download $mib MiB (MiB/s)" "$(echo "$mib / $ts" | bc -l)" \
	"$(echo "$mib / $tt" | bc -l)" "$(echo "$ts / $tt" | bc -l)"
ls=$(median ${lat[spliced]}) lt=$(median ${lat[terminated]})
printf '%-44s %10.3fms %10.3fms %8.2f\n' "per request, kept tunnel ($nreq requests)" "$ls" "$lt" \
	"$(echo "$lt / $ls" | bc -l)"
fs=$(median ${fresh[spliced]}) ft=$(median ${fresh[terminated]})
printf '%-44s %10.3fms %10.3fms %8.2f\n' "one request on a fresh tunnel" "$fs" "$ft" "$(echo "$ft / $fs" | bc -l)"
echo "gateway peak RSS: ${rss} kB"
echo "(throughput ratio: spliced/terminated time, so below 1 is the terminated tunnel's cost;"
echo " latency ratios: terminated/spliced)"
