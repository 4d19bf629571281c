#!/usr/bin/env bash
# bench/gateway/line-rate.sh: a spliced CONNECT tunnel of agentguard-gateway
# against direct TCP on loopback, with 1, 8 and 64 tunnels at once, and the
# gateway's peak RSS (see README.md, "Line rate").
#
#   bench/gateway/line-rate.sh [MiB in all per run (1024)] [rounds (5)]
#   GATEWAYS="spliced=build/agentguard-gateway buffered=/tmp/old-gateway" bench/gateway/line-rate.sh
#
# Both ends are tcpbench.c (C, threads; the sink counts what it read and
# the sender checks the count), so neither end is the bottleneck. Each
# round runs direct, then each gateway, for each concurrency: medians and
# ratios come from the same run. Never a pass/fail on time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mib=${1:-1024} rounds=${2:-5}
GATEWAYS=${GATEWAYS:-spliced=$root/${BUILD:-build}/agentguard-gateway}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf -- "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/tcpbench" "$here/tcpbench.c"
"$tmp/tcpbench" sink "$tmp/sink.port" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/sink.port" ] && break; sleep 0.1; done
SP=$(cat "$tmp/sink.port")
printf 'sink.test A 127.0.0.1\n' >"$tmp/table"
python3 "$root/tests/fakes/netcanary.py" dns --port-file "$tmp/dns.port" --log "$tmp/dns.log" \
	--lifetime 3600 --table "$tmp/table" --max 100000 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/dns.port" ] && break; sleep 0.1; done
cat >"$tmp/policy.json" <<EOP
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1, "destinations": [
 {"host": "sink.test", "port": $SP, "test_only": true}]}
EOP
declare -A gwport gwpid
labels=()
for g in $GATEWAYS; do
	l=${g%%=*} bin=${g#*=}
	[ -x "$bin" ] || { echo "no gateway binary: $bin" >&2; exit 1; }
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$bin" --listen-address 127.0.0.1 --listen-port "$port" --resolver "127.0.0.1:$(cat "$tmp/dns.port")" \
		--policy "$tmp/policy.json" --events "$tmp/$l.events.jsonl" --test-allow-loopback 2>"$tmp/$l.err" &
	gwpid[$l]=$! gwport[$l]=$port
	pids+=($!)
	for _ in $(seq 1 100); do grep -q listening "$tmp/$l.err" && break; sleep 0.1; done
	labels+=("$l")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "== $mib MiB in all per run, client to sink; median of $rounds interleaved rounds"
printf '%-8s %-10s %10s %10s %8s\n' tunnels path seconds MiB/s ratio
for conns in 1 8 64; do
	declare -A t=()
	for _ in $(seq 1 "$rounds"); do
		t[direct]+=" $("$tmp/tcpbench" send "$SP" "$mib" "$conns")"
		for l in "${labels[@]}"; do
			r=$("$tmp/tcpbench" send "$SP" "$mib" "$conns" "${gwport[$l]}" sink.test) || {
				echo "through $l, $conns tunnels: failed; its stderr and last records:" >&2
				cat "$tmp/$l.err" >&2
				tail -n 3 "$tmp/$l.events.jsonl" >&2
				exit 1
			}
			t[$l]+=" $r"
		done
	done
	d=$(median ${t[direct]})
	for p in direct "${labels[@]}"; do
		m=$(median ${t[$p]})
		awk -v c="$conns" -v p="$p" -v m="$m" -v d="$d" -v mib="$mib" \
			'BEGIN { printf "%-8s %-10s %10.3f %10.0f %8.2f\n", c, p, m, mib / m, d / m }'
	done
	unset t
done
echo "(ratio: direct seconds / path seconds, so 1.00 is line rate)"
for l in "${labels[@]}"; do
	echo "$l gateway peak RSS: $(awk '/^VmHWM/ {print $2, $3}' "/proc/${gwpid[$l]}/status")"
done
