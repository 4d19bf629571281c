#!/usr/bin/env bash
# bench/contained-run/gvisor.sh: `agentguard contained-run` with
# contained_execution.runtime: gvisor against the same run on runc, for
# /bin/true and for a syscall-heavy agent (a tree walk of a 2000-file
# workspace: open and read every file, stat every entry; a few processes,
# tens of thousands of system calls), interleaved in one run.
#
#   bench/contained-run/gvisor.sh [N]     (root; scripts/test-env up, which
#                                          registers runsc; default N=5)
#
# Method: N rounds; each round runs, as the unprivileged test user, the four
# runs (runc and gVisor, each agent). Same config but the runtime (a
# pids_limit of 256, which gVisor needs, and 512 MiB for both: a walk that
# started one `cat` per file was OOM-killed at 128 MiB under gVisor after
# 35 s, its sandbox's memory counting against the limit). Wall time from date
# +%s%N; medians and the gVisor/runc ratio per agent from the same run
# (the machine is shared and noisy); the runs' --json "execution_ms"
# (container start to exit) is reported beside the whole run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-5}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (scripts/test-env env)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
# shellcheck source=bench/lib-fixture.sh
. "$here/../lib-fixture.sh"
bench_fixture gvisor-bench "gVisor benchmark"
mkdir -p "$work/w/repo/tree"
for d in $(seq 1 40); do
	mkdir -p "$work/w/repo/tree/d$d"
	for f in $(seq 1 50); do printf 'file %d %d\n' "$d" "$f" >"$work/w/repo/tree/d$d/f$f.txt"; done
done
sed -i 's/pids_limit: 64/pids_limit: 256/; s/memory_limit: 128m/memory_limit: 512m/' "$work/w/bench.yaml"
cp "$work/w/bench.yaml" "$work/w/gvisor.yaml"
printf '  runtime: gvisor\n' >>"$work/w/gvisor.yaml"
chown -R "$AG_TEST_USER:$AG_TEST_USER" "$work/w"
walk='find /agentguard-workspace -type f -exec cat {} + | wc -c; ls -lR /agentguard-workspace | wc -l; find /agentguard-workspace -type f | wc -l'
now() { date +%s%N; }
declare -A wall exe
one() { # KEY CONFIG ARGV...
	local key=$1 cfg=$2 t0 t1
	shift 2
	t0=$(now)
	as_user "$AG_BIN" contained-run "$cfg" --repo repo --json --quiet -- "$@" >"$work/out.json" || {
		echo "$key failed" >&2
		cat "$work/out.json" >&2
		exit 1
	}
	t1=$(now)
	wall[$key]+="$(((t1 - t0) / 1000000)) "
	exe[$key]+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timings"]["execution_ms"])' "$work/out.json") "
}
for _ in $(seq 1 "$N"); do
	one runc-true bench.yaml /bin/true
	one gvisor-true gvisor.yaml /bin/true
	one runc-walk bench.yaml /bin/sh -c "$walk"
	one gvisor-walk gvisor.yaml /bin/sh -c "$walk"
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "contained-run, $N rounds, medians (ms): whole run / the container's execution"
printf '%-22s %10s %10s %10s %10s %7s %7s\n' agent runc gvisor runc-exec gvisor-exec ratio exec-ratio
for a in true walk; do
	rw=$(med <<<"${wall[runc-$a]}") gw=$(med <<<"${wall[gvisor-$a]}")
	re=$(med <<<"${exe[runc-$a]}") ge=$(med <<<"${exe[gvisor-$a]}")
	printf '%-22s %10s %10s %10s %10s %7s %7s\n' "$([ $a = true ] && echo /bin/true || echo 'tree walk (2000 files)')" \
		"$rw" "$gw" "$re" "$ge" "$(awk -v a="$gw" -v b="$rw" 'BEGIN {printf "%.2f", a / b}')" \
		"$(awk -v a="$ge" -v b="$re" 'BEGIN {printf "%.2f", a / b}')"
done
