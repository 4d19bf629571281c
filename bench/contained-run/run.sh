#!/usr/bin/env bash
# bench/contained-run/run.sh: wall time of `agentguard contained-run -- /bin/true`
# and of `agentguard preflight`, each against a bare
# `docker run --rm --network none IMAGE /bin/true`, in one interleaved run.
#
#   bench/contained-run/run.sh [N]     (root; scripts/test-env up; default N=10)
#   AG_BIN=build/agentguard AG_BIN_BEFORE=/path/to/older/agentguard bench/contained-run/run.sh 20
#   BENCH_GIT=1 ...                    the repository is a git repository
#
# Method: N rounds; each round runs, as the unprivileged test user (the
# contained-run rule), a contained run of /bin/true, a preflight, a bare
# docker run, and (with AG_BIN_BEFORE, an older build that used the docker
# client binary) the same contained run and preflight with that build.
# Medians and ratios come from the same run (the machine is shared and
# noisy). The contained runs' --json `timings` are averaged per stage to say
# where the time goes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-10}
AG_BIN=${AG_BIN:-$root/build/agentguard}
AG_BIN_BEFORE=${AG_BIN_BEFORE:-}
[ "$(id -u)" -eq 0 ] || { echo "run as root (scripts/test-env env)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
docker=${AG_DOCKER:-/usr/bin/docker}
U=$AG_TEST_USER

# shellcheck source=bench/lib-fixture.sh
. "$here/../lib-fixture.sh"
bench_fixture run-bench "contained-run benchmark"
# BENCH_GIT=1: the repository is a git repository (one commit), so the
# workspace stage starts the git reader
if [ -n "${BENCH_GIT:-}" ]; then
	as_user git -C repo init -q
	as_user git -C repo add -A
	as_user git -C repo -c user.name=b -c user.email=b@b.invalid commit -q -m bench
fi

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
ag_t=() pf_t=() bare_t=() agb_t=() pfb_t=()
: >"$work/timings"
for _ in $(seq 1 "$N"); do
	t0=$(now)
	as_user "$AG_BIN" contained-run bench.yaml --repo repo --json -- /bin/true >"$work/out.json"
	t1=$(now)
	as_user "$AG_BIN" preflight bench.yaml >/dev/null
	t2=$(now)
	as_user "$docker" run --rm --network none "$AG_TEST_IMAGE" /bin/true
	t3=$(now)
	ag_t+=("$(ms "$t0" "$t1")") pf_t+=("$(ms "$t1" "$t2")") bare_t+=("$(ms "$t2" "$t3")")
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["timings"]))' \
		"$work/out.json" >>"$work/timings"
	if [ -n "$AG_BIN_BEFORE" ]; then
		t0=$(now)
		as_user "$AG_BIN_BEFORE" contained-run bench.yaml --repo repo --json -- /bin/true >"$work/out.json"
		t1=$(now)
		python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["timings"]))' \
			"$work/out.json" >>"$work/timings_before"
		as_user "$AG_BIN_BEFORE" preflight bench.yaml >/dev/null
		t2=$(now)
		agb_t+=("$(ms "$t0" "$t1")") pfb_t+=("$(ms "$t1" "$t2")")
	fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
ag_m=$(median "${ag_t[@]}")
pf_m=$(median "${pf_t[@]}")
bare_m=$(median "${bare_t[@]}")
echo "runs: $N each, interleaved"
echo "agentguard contained-run: median ${ag_m} ms  (all: ${ag_t[*]})"
echo "agentguard preflight:     median ${pf_m} ms  (all: ${pf_t[*]})"
echo "bare docker run --rm:     median ${bare_m} ms  (all: ${bare_t[*]})"
awk -v a="$ag_m" -v p="$pf_m" -v c="$bare_m" 'BEGIN {
	printf "ratio contained-run/bare: %.2f (target <= 2.2)\n", a / c
	printf "ratio preflight/bare:     %.2f (target <= 1.2)\n", p / c }'
if [ -n "$AG_BIN_BEFORE" ]; then
	agb_m=$(median "${agb_t[@]}")
	pfb_m=$(median "${pfb_t[@]}")
	echo "before: contained-run median ${agb_m} ms (all: ${agb_t[*]})"
	echo "before: preflight     median ${pfb_m} ms (all: ${pfb_t[*]})"
	awk -v a="$agb_m" -v p="$pfb_m" -v c="$bare_m" 'BEGIN {
		printf "before: ratio contained-run/bare: %.2f, preflight/bare: %.2f\n", a / c, p / c }'
fi
echo "mean per stage of the contained runs (ms, from --json timings; with"
echo "AG_BIN_BEFORE also its median, the before build's median and after/before):"
python3 - "$work/timings" "$work/timings_before" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
before = [json.loads(l) for l in open(sys.argv[2]) if l.strip()] if os.path.exists(sys.argv[2]) else []
for k in sorted(rows[0]):
    line = f"  {k:14s} {sum(r[k] for r in rows) / len(rows):8.1f}"
    if before:
        a, b = statistics.median(r[k] for r in rows), statistics.median(r[k] for r in before)
        line += f"   median {a:7.1f} before {b:7.1f}" + (f"  {a / b:5.2f}" if b else "")
    print(line)
PY
left=$("$docker" ps -aq --filter label=agentguard.owner=contained-run --filter label=agentguard.contained-run.id)
[ -z "$left" ] || echo "note: contained-run containers exist on this engine (other users?): $left" >&2
