#!/usr/bin/env bash
# bench/preflight/run.sh: wall time of `agentguard preflight` against a
# shell script that issues the SAME docker commands back to back.
#
#   bench/preflight/run.sh [N]        (root; scripts/test-env up; default N=10)
#   AG_BIN=build/agentguard bench/preflight/run.sh 20
#
# Method: one recording run of `agentguard preflight --docker <logging
# wrapper>` captures the exact docker argv list it issues (NUL-separated,
# one file per call). The baseline replays that list with /usr/bin/docker
# from bash, substituting only the container id that `create` returns
# (later calls use it). Then N rounds, interleaved (agentguard, baseline,
# agentguard, ...), each timed with date +%s%N; medians and the ratio are
# printed. Both sides leave no container behind (checked at the end).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-10}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (the logging wrapper must be root-owned)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
docker=${AG_DOCKER:-/usr/bin/docker}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat >"$work/bench.yaml" <<CFG
task_id: preflight-bench
description: preflight benchmark
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox:
  type: docker
  image: "$AG_TEST_IMAGE"
  network: none
contained_execution:
  version: 1
  platform: linux-docker-engine
  network: none
  required_uid: ${AG_TEST_UID:-2001}
  required_gid: ${AG_TEST_GID:-2001}
  cpu_limit: 1.0
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
CFG

# 1. record the command list through a root-owned logging wrapper
mkdir -m 755 "$work/wrap" "$work/log"
cat >"$work/wrap/docker" <<WRAP
#!/bin/bash
n=\$(ls "$work/log" | wc -l)
f=$work/log/\$(printf '%03d' "\$n")
printf '%s\0' "\$@" >"\$f"
exec $docker "\$@"
WRAP
chmod 755 "$work/wrap/docker"
"$AG_BIN" preflight "$work/bench.yaml" --docker "$work/wrap/docker" >/dev/null
ncalls=$(ls "$work/log" | wc -l)
echo "recorded $ncalls docker calls (including docker --version):"
for f in "$work"/log/*; do
	printf '  docker %s\n' "$(tr '\0' ' ' <"$f" | cut -c1-100)"
done

# 2. the baseline: the same calls from bash, back to back
baseline() {
	local f id="" old args
	old=$(cat "$work/created_id")
	for f in "$work"/log/*; do
		mapfile -d '' args <"$f"
		if [ -n "$id" ]; then
			args=("${args[@]//$old/$id}")
		fi
		if [ "${args[0]}" = create ]; then
			id=$("$docker" "${args[@]}")
		else
			"$docker" "${args[@]}" >/dev/null 2>&1 || true
		fi
	done
}
# the id the recording run's create printed: the arg of its `start -a -- ID`
for f in "$work"/log/*; do
	mapfile -d '' a <"$f"
	if [ "${a[0]}" = start ]; then echo "${a[-1]}" >"$work/created_id"; fi
done

now() { date +%s%N; }
ag_t=() sh_t=()
for i in $(seq 1 "$N"); do
	t0=$(now)
	"$AG_BIN" preflight "$work/bench.yaml" >/dev/null
	t1=$(now)
	baseline
	t2=$(now)
	ag_t+=($(((t1 - t0) / 1000000)))
	sh_t+=($(((t2 - t1) / 1000000)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
ag_m=$(median "${ag_t[@]}")
sh_m=$(median "${sh_t[@]}")
echo "runs: $N each, interleaved"
echo "agentguard preflight: median ${ag_m} ms  (all: ${ag_t[*]})"
echo "shell, same commands: median ${sh_m} ms  (all: ${sh_t[*]})"
awk -v a="$ag_m" -v b="$sh_m" 'BEGIN {printf "ratio agentguard/shell: %.2f\n", a / b}'
left=$("$docker" ps -aq --filter label=agentguard.owner=preflight)
[ -z "$left" ] || { echo "containers left behind: $left" >&2; exit 1; }
