#!/usr/bin/env bash
# bench/gateway/run.sh: the cost of agentguard-gateway on loopback, side by
# side with the same traffic sent directly, in one run (see README.md).
#
#   bench/gateway/run.sh [MiB per tunnel run (64)] [runs (5)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gw=$root/${BUILD:-build}/agentguard-gateway
fake=$root/tests/fakes/netcanary.py
[ -x "$gw" ] || { echo "build the gateway first (make)" >&2; exit 1; }
mib=${1:-64} runs=${2:-5}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf -- "$tmp"' EXIT
start() { # NAME MODE ARGS...
	local n=$1 m=$2
	shift 2
	python3 "$fake" "$m" --port-file "$tmp/$n.port" --log "$tmp/$n.log" --lifetime 600 "$@" &
	pids+=($!)
	for _ in $(seq 1 100); do [ -s "$tmp/$n.port" ] && return 0; sleep 0.1; done
	echo "fake $n did not start" >&2
	exit 1
}
start echo echo --echo-max $(((mib + 1) << 20))
start http http
EP=$(cat "$tmp/echo.port") HP=$(cat "$tmp/http.port")
printf 'echo.test A 127.0.0.1\ncanary.test A 127.0.0.1\n' >"$tmp/table"
start dns dns --table "$tmp/table" --max 100000
cat >"$tmp/policy.json" <<EOP
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1, "destinations": [
 {"host": "echo.test", "port": $EP, "test_only": true},
 {"host": "canary.test", "port": $HP, "test_only": true}]}
EOP
GP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$gw" --listen-address 127.0.0.1 --listen-port "$GP" --resolver "127.0.0.1:$(cat "$tmp/dns.port")" \
	--policy "$tmp/policy.json" --events "$tmp/events.jsonl" --test-allow-loopback 2>"$tmp/gw.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q listening "$tmp/gw.err" && break; sleep 0.1; done

echo "== tunnel throughput (CONNECT, bytes both ways)"
python3 "$here/tunnel.py" "$EP" "$GP" echo.test "$mib" "$runs"
echo "== one plain HTTP request (curl), direct vs through the gateway (DNS + judgement + connect)"
hyperfine -N --warmup 3 --runs 50 --export-markdown "$tmp/http.md" \
	-n direct "curl -s --noproxy * http://127.0.0.1:$HP/" \
	-n gateway "curl -s --noproxy '' -x http://127.0.0.1:$GP http://canary.test:$HP/" >/dev/null
cat "$tmp/http.md"
