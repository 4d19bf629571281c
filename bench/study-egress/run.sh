#!/usr/bin/env bash
# bench/study-egress/run.sh: wall time of `agentguard study-egress run --
# /bin/true` against `agentguard contained-run -- /bin/true` (same config,
# same repository), interleaved in one run: the live-study topology's cost
# made visible as a ratio.
#
#   bench/study-egress/run.sh [N]     (root; scripts/test-env up; make; default N=5)
#   LOAD=1 bench/study-egress/run.sh  the same with a CPU hog per core running
#                                     throughout (every self-test must still pass)
#
# Method: N rounds; each round runs, as the unprivileged test user, a
# contained run of /bin/true and a study run of /bin/true (AgentGuard's own
# --internal outbound network; the study subnet is a /28 of 198.51.100.0/24
# free at the start, with the outbound network on the next /28; an empty
# policy: no request is made). Medians
# and the ratio come from the same run (the machine is shared and noisy).
# The study runs' --json timings say where the time goes (the topology,
# its assertions and the self-test probe are in "workspace"+"container";
# the gateway's stop and the networks' removal in "cleanup").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-5}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (scripts/test-env env)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
U=$AG_TEST_USER
GW=$("$root/scripts/gateway-image" 127.0.0.1:5000 2>/dev/null | tail -1)

# shellcheck source=bench/lib-fixture.sh
. "$here/../lib-fixture.sh"
bench_fixture study-bench "study-egress benchmark"
printf '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[]}' >"$work/w/p.json"
chown "$U:$U" "$work/w/p.json"

# a free /28 pair of 198.51.100.0/24 (no Docker network or route overlaps it)
used=$({ docker network inspect --format '{{range .IPAM.Config}}{{.Subnet}}{{"\n"}}{{end}}' \
	$(docker network ls -q) 2>/dev/null; ip -4 route show | awk '{print $1}'; } |
	grep -E '^[0-9.]+/[0-9]+$' || true)
base=$(python3 -c 'import ipaddress,sys
used=[ipaddress.ip_network(u, strict=False) for u in sys.argv[1].split()]
for b in range(224, -1, -16):
    n=[ipaddress.ip_network("198.51.100.%d/28" % (b + 16 * i)) for i in range(2)]
    if not any(x.overlaps(u) for x in n for u in used):
        print(b); break' "$used")
[ -n "$base" ] || { echo "no free /28 pair in 198.51.100.0/24" >&2; exit 1; }
SUBNET=198.51.100.$base/28

if [ "${LOAD:-0}" = 1 ]; then
	# a busy loop per core, for the whole run (killed on exit)
	hogs=()
	for _ in $(seq 1 "$(nproc)"); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	trap 'kill "${hogs[@]}" 2>/dev/null || true; rm -rf -- "$work"' EXIT
	echo "synthetic load: ${#hogs[@]} busy loops"
fi
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
cr_t=() st_t=()
: >"$work/timings"
: >"$work/selftests"
for i in $(seq 1 "$N"); do
	t0=$(now)
	as_user "$AG_BIN" contained-run bench.yaml --repo repo -- /bin/true >/dev/null
	t1=$(now)
	as_user "$AG_BIN" study-egress run bench.yaml --repo repo --json --policy p.json \
		--trial-id "bench-$$-$i" --gateway-image "$GW" --study-subnet "$SUBNET" \
		--outbound-internal -- /bin/true >"$work/out.json" || {
		echo "study run failed:" >&2
		cat "$work/out.json" >&2
		exit 1
	}
	t2=$(now)
	cr_t+=("$(ms "$t0" "$t1")") st_t+=("$(ms "$t1" "$t2")")
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["timings"]))' \
		"$work/out.json" >>"$work/timings"
	# the self-test probe's own measures, one line per study run
	python3 -c 'import json,os,sys
s = json.load(open(sys.argv[1]))
a = json.load(open(os.path.join(sys.argv[2], s["report"])))
t = a["study_egress"]["self_tests"]
print("  self-test:", " ".join("%s=%s" % (k, t.get(k)) for k in
      ("control_tcp_us", "control_dns_us", "no_answer_wait_ms", "bridge", "gateway_outbound", "dns", "dns_forward")))' \
		"$work/out.json" "$work/w" >>"$work/selftests"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
cr_m=$(median "${cr_t[@]}")
st_m=$(median "${st_t[@]}")
echo "runs: $N each, interleaved"
echo "agentguard contained-run:    median ${cr_m} ms  (all: ${cr_t[*]})"
echo "agentguard study-egress run: median ${st_m} ms  (all: ${st_t[*]})"
awk -v s="$st_m" -v c="$cr_m" 'BEGIN { printf "ratio study/contained: %.2f\n", s / c }'
echo "the self-test probe of each study run:"
cat "$work/selftests"
echo "mean per stage of the study runs (ms, from --json timings):"
python3 - "$work/timings" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for k in sorted(rows[0]):
    print(f"  {k:14s} {sum(r[k] for r in rows) / len(rows):8.1f}")
PY
