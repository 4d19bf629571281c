#!/usr/bin/env bash
# bench/startup/run.sh [ROUNDS]: the CPU one agentguard process costs before
# it does anything, with libcurl, libgit2 and libarchive loaded when first
# used (this tree) against loaded at start as linking did (the same binary
# with the three in LD_PRELOAD, which the loader maps before main() exactly
# like DT_NEEDED entries). ROUNDS (default 5) interleaved rounds of 200
# `agentguard validate` and 200 `agentguard schema` runs each way; CPU
# (user+sys) from bash's `times`, medians and the ratio from one run.
set -euo pipefail
cd "$(dirname "$0")/../.."
AG_BIN=${AG_BIN:-build/agentguard}
ROUNDS=${1:-5}
[[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || { echo "usage: $0 [ROUNDS 1..99]" >&2; exit 2; }
[ -x "$AG_BIN" ] || { echo "$AG_BIN is not built (make)" >&2; exit 1; }
preload="libcurl.so.4 libgit2.so.1.5 libarchive.so.13"
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
cat >"$tmp/c.yaml" <<'CFG'
task_id: startup-bench
description: startup bench
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox: {type: docker, image: "busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000", network: none}
contained_execution: {version: 1, platform: linux-docker-engine, network: none, required_uid: 2001, required_gid: 2001, cpu_limit: 1, memory_limit: 128m, pids_limit: 64, tmpfs_size: 16m}
CFG
"$AG_BIN" validate "$tmp/c.yaml" >/dev/null

# cpu_ms CMD...: user+sys of 200 runs of CMD, in ms (children's times)
cpu_ms() {
	local t0 t1
	times >"$tmp/t0" # this shell's children, so far
	for _ in $(seq 200); do "$@" >/dev/null 2>&1 || true; done
	times >"$tmp/t1"
	t0=$(tail -n 1 "$tmp/t0")
	t1=$(tail -n 1 "$tmp/t1")
	python3 -c '
import re, sys
def ms(s):
    return sum(int(m) * 60000 + float(x) * 1000 for m, x in re.findall(r"(\d+)m([\d.]+)s", s))
print(round(ms(sys.argv[2]) - ms(sys.argv[1])))' "$t0" "$t1"
}
declare -a lazy_v=() linked_v=() lazy_s=() linked_s=()
for r in $(seq "$ROUNDS"); do
	lazy_v+=("$(cpu_ms env "$AG_BIN" validate "$tmp/c.yaml")")
	linked_v+=("$(cpu_ms env LD_PRELOAD="$preload" "$AG_BIN" validate "$tmp/c.yaml")")
	lazy_s+=("$(cpu_ms env "$AG_BIN" schema)")
	linked_s+=("$(cpu_ms env LD_PRELOAD="$preload" "$AG_BIN" schema)")
	echo "round $r: validate lazy ${lazy_v[-1]} ms, linked ${linked_v[-1]} ms; schema lazy ${lazy_s[-1]} ms, linked ${linked_s[-1]} ms (200 runs each)" >&2
done
python3 - "${lazy_v[*]}" "${linked_v[*]}" "${lazy_s[*]}" "${linked_s[*]}" <<'PY'
import statistics, sys
v = [[int(x) for x in a.split()] for a in sys.argv[1:]]
for name, lazy, linked in (("validate", v[0], v[1]), ("schema", v[2], v[3])):
    a, b = statistics.median(lazy) / 200, statistics.median(linked) / 200
    print(f"{name}: {a:.1f} ms of CPU a run lazy, {b:.1f} ms linked: ratio {a / b:.2f}")
PY
