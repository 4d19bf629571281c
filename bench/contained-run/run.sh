#!/usr/bin/env bash
# bench/contained-run/run.sh: wall time of `agentguard contained-run -- /bin/true`
# on a small repository, side by side with
#   (a) a bare `docker run --rm --network none IMAGE /bin/true`, and
#   (b) a shell script issuing the same docker command sequence back to back.
#
#   bench/contained-run/run.sh [N]     (root; scripts/test-env up; default N=10)
#   AG_BIN=build/agentguard bench/contained-run/run.sh 20
#
# Method: one recording run of contained-run through a root-owned logging
# wrapper (--docker) captures the exact docker argv list, NUL-separated. The
# shell baseline replays that list with the real client, substituting the ids
# its own `create` calls print and creating the bind-mount source directory
# the run had (the run deletes it afterwards). It parses and checks nothing.
# All three run as the unprivileged test user (the contained-run rule), in
# N interleaved rounds; medians and ratios from one run (the machine is noisy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-10}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (the logging wrapper must be root-owned)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
docker=${AG_DOCKER:-/usr/bin/docker}
U=$AG_TEST_USER

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/w/repo/src"
for i in $(seq 1 20); do printf 'line %d\n' "$i" >"$work/w/repo/src/f$i.txt"; done
cat >"$work/w/bench.yaml" <<CFG
task_id: run-bench
description: contained-run benchmark
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox: {type: docker, image: "$AG_TEST_IMAGE", network: none}
contained_execution:
  version: 1
  platform: linux-docker-engine
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
CFG
chown -R "$U:$U" "$work/w"
as_user() { runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$work/w" bash -c 'cd "$1" && shift && exec "$@"' _ "$work/w" "$@"; }

# 1. record
mkdir -m 755 "$work/wrap" "$work/log"
chmod 777 "$work/log"
cat >"$work/wrap/docker" <<WRAP
#!/bin/bash
n=\$(ls "$work/log" | wc -l)
printf '%s\0' "\$@" >"$work/log/\$(printf '%03d' "\$n")"
exec $docker "\$@"
WRAP
chmod 755 "$work/wrap/docker"
as_user "$AG_BIN" contained-run bench.yaml --repo repo --docker "$work/wrap/docker" -- /bin/true >/dev/null
echo "recorded $(ls "$work/log" | wc -l) docker calls:"
for f in "$work"/log/*; do printf '  docker %s\n' "$(tr '\0' ' ' <"$f" | cut -c1-90)"; done

# 2. the shell baseline: replay, mapping recorded ids to fresh ones in order
cat >"$work/replay.sh" <<'REPLAY'
#!/bin/bash
docker=$1 logdir=$2
declare -A map=()
old_ids=() new_ids=()
for f in "$logdir"/*; do
	mapfile -d '' args <"$f"
	for k in "${!old_ids[@]}"; do
		args=("${args[@]//${old_ids[$k]}/${new_ids[$k]}}")
	done
	if [ "${args[0]}" = create ]; then
		for a in "${args[@]}"; do
			case $a in type=bind,source=*) s=${a#type=bind,source=}; mkdir -p "${s%%,*}" ;; esac
		done
		new_ids+=("$("$docker" "${args[@]}")")
		old_ids+=(PENDING)
	else
		for a in "${args[@]}"; do
			if [[ $a =~ ^[0-9a-f]{64}$ ]] && [ "${old_ids[-1]:-}" = PENDING ]; then
				old_ids[-1]=$a
				args=("${args[@]//$a/${new_ids[-1]}}")
			fi
		done
		"$docker" "${args[@]}" >/dev/null 2>&1 || true
	fi
done
REPLAY
chmod 755 "$work/replay.sh"

now() { date +%s%N; }
ag_t=() sh_t=() bare_t=()
for _ in $(seq 1 "$N"); do
	t0=$(now)
	as_user "$AG_BIN" contained-run bench.yaml --repo repo -- /bin/true >/dev/null
	t1=$(now)
	as_user "$work/replay.sh" "$docker" "$work/log"
	t2=$(now)
	as_user "$docker" run --rm --network none "$AG_TEST_IMAGE" /bin/true
	t3=$(now)
	ag_t+=($(((t1 - t0) / 1000000)))
	sh_t+=($(((t2 - t1) / 1000000)))
	bare_t+=($(((t3 - t2) / 1000000)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
ag_m=$(median "${ag_t[@]}")
sh_m=$(median "${sh_t[@]}")
bare_m=$(median "${bare_t[@]}")
echo "runs: $N each, interleaved"
echo "agentguard contained-run: median ${ag_m} ms  (all: ${ag_t[*]})"
echo "shell, same docker calls: median ${sh_m} ms  (all: ${sh_t[*]})"
echo "bare docker run --rm:     median ${bare_m} ms  (all: ${bare_t[*]})"
awk -v a="$ag_m" -v b="$sh_m" -v c="$bare_m" 'BEGIN {printf "ratio agentguard/shell: %.2f (target <= 1.15)\nratio agentguard/bare:  %.2f (target <= 2.5)\n", a / b, a / c}'
left=$("$docker" ps -aq --filter label=agentguard.owner=contained-run)
[ -z "$left" ] || { echo "containers left behind: $left" >&2; exit 1; }
