#!/usr/bin/env bash
# bench/batch/run.sh: `agentguard batch` of 8 contained trials of
# /bin/sleep 1 against 8 bare `docker run`s of the same image and command,
# at concurrency 1, 2 and 4, interleaved in one run; then 4 study trials at
# concurrency 2 (every one must pass, each on its own subnet).
#
#   bench/batch/run.sh [ROUNDS]     (root; scripts/test-env up; make; default 3)
#
# Method: each round, for each concurrency C, times (date +%s%N) one batch
# (a fresh output directory, --jobs C, as the unprivileged test user) and 8
# bare runs (`docker run --rm --network none --read-only --cap-drop ALL
# --security-opt no-new-privileges --user UID:GID --memory 128m
# --pids-limit 64`, the test image, started C at a time by xargs -P). The
# medians and their ratio come from the same run: the machine is shared and
# noisy. A bare run proves nothing about its container; a trial verifies
# its engine, workspace, container and cleanup and writes signed evidence.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
R=${1:-3}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (scripts/test-env env)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"
U=$AG_TEST_USER
# shellcheck source=bench/lib-fixture.sh
. "$here/../lib-fixture.sh"
bench_fixture batch-bench "batch benchmark"
cat >"$work/w/b.yaml" <<'EOF'
version: 1
trials:
  - {name: s, config: bench.yaml, repo: repo, argv: [/bin/sleep, "1"], repetitions: 8}
EOF
chown "$U:$U" "$work/w/b.yaml"
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
bare() {
	seq 1 8 | xargs -P "$1" -I{} docker run --rm --network none --read-only --cap-drop ALL \
		--security-opt no-new-privileges --user "$AG_TEST_UID:$AG_TEST_GID" --memory 128m \
		--pids-limit 64 --pull never --label "agentguard.bench=batch" "$AG_TEST_IMAGE" /bin/sleep 1
}
declare -A bt rt
for r in $(seq 1 "$R"); do
	for c in 1 2 4; do
		t0=$(now)
		as_user "$AG_BIN" batch b.yaml --out "out-$r-$c" --jobs "$c" --quiet >/dev/null || {
			echo "batch failed at concurrency $c" >&2
			cat "$work/w/out-$r-$c/batch-summary.txt" >&2 || true
			exit 1
		}
		t1=$(now)
		bare "$c"
		t2=$(now)
		bt[$c]+="$(ms "$t0" "$t1") " rt[$c]+="$(ms "$t1" "$t2") "
	done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "8 trials of /bin/sleep 1, $R rounds, medians (ms):"
printf '%-12s %10s %10s %8s\n' concurrency batch docker-run ratio
for c in 1 2 4; do
	b=$(med <<<"${bt[$c]}") d=$(med <<<"${rt[$c]}")
	printf '%-12s %10s %10s %8s\n' "$c" "$b" "$d" "$(awk -v a="$b" -v b="$d" 'BEGIN {printf "%.2f", a / b}')"
done

# --- 4 study trials at concurrency 2: no subnet clash
GW=$("$root/scripts/gateway-image" 127.0.0.1:5000 2>/dev/null | tail -1)
printf '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[]}' >"$work/w/p.json"
cp "$work/w/bench.yaml" "$work/w/study.yaml"
printf 'study_egress: {policy: p.json, gateway_image: "%s", outbound_internal: true}\n' "$GW" >>"$work/w/study.yaml"
printf '%s\n' 'version: 1' 'trials:' \
	'  - {name: st, mode: study, config: study.yaml, repo: repo, argv: [/bin/true], repetitions: 4}' >"$work/w/s.yaml"
chown "$U:$U" "$work/w/p.json" "$work/w/study.yaml" "$work/w/s.yaml"
t0=$(now)
rc=0
as_user "$AG_BIN" batch s.yaml --out study --jobs 2 --quiet >/dev/null || rc=$?
t1=$(now)
python3 - "$work/w/study" "$rc" "$(ms "$t0" "$t1")" <<'PY'
import glob, ipaddress, json, os, re, sys
out, rc, ms = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = json.load(open(os.path.join(out, "batch-summary.json")))
nets = set()
for t in s["trials"]:
    p = t["evidence"]["path"]
    found = None
    for f in glob.glob(os.path.join(out, p, "**"), recursive=True) if p else []:
        if os.path.isfile(f):
            m = re.search(r'"(10\.254\.[0-9]+\.[0-9]+)"', open(f, errors="replace").read())
            if m and not found:
                found = str(ipaddress.ip_network(m.group(1) + "/26", strict=False))
    nets.add(found)
print(f"4 study trials at concurrency 2: exit {rc}, {s['passed']} passed, "
      f"{s['failed']} failed, {s['not_run']} not run, {ms} ms; "
      f"study subnets: {sorted(n for n in nets if n)} "
      f"({'no clash' if len(nets - {None}) == 4 else 'CLASH OR MISSING'})")
PY
