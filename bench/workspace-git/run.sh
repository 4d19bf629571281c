#!/usr/bin/env bash
# bench/workspace-git/run.sh: what the agent's workspace repository
# (workspace.git: baseline, the default; docs/workspace.md) costs a contained
# run, against workspace.git: none, in one interleaved run.
#
#   bench/workspace-git/run.sh [N] [FILES]   (root; scripts/test-env up;
#                                             default N=5, FILES=20000)
#
# Method: two repositories, the shared fixture's (20 small files) and one of
# FILES small files in 200 directories. N rounds; each round runs, as the
# unprivileged test user, `contained-run -- /bin/true` on each repository
# with workspace.git: none and with baseline, alternating. It reports the
# medians of the whole run's wall time and of the --json timings'
# workspace (copy, baseline, repository) and cleanup stages, and the ratio
# baseline/none of each, all from the same run (the machine is shared and
# noisy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-5}
FILES=${2:-20000}
AG_BIN=${AG_BIN:-$root/build/agentguard}
[ "$(id -u)" -eq 0 ] || { echo "run as root (scripts/test-env env)" >&2; exit 2; }
eval "$("$root/scripts/test-env" env)"

# shellcheck source=bench/lib-fixture.sh
. "$here/../lib-fixture.sh"
bench_fixture ws-git-bench "workspace repository benchmark"
python3 - "$work/w/big" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d.txt" % i), "w") as f:
        f.write("file %d\n" % i)
PY
sed 's/^expected_modified_files: .*/expected_modified_files: {min: 0, max: 5}/' "$work/w/bench.yaml" >"$work/w/none.yaml"
printf '%s\n' "workspace: {git: none}" >>"$work/w/none.yaml"
cp "$work/w/bench.yaml" "$work/w/baseline.yaml"
chown -R "$AG_TEST_USER:$AG_TEST_USER" "$work/w"

now() { date +%s%N; }
: >"$work/rows"
for _ in $(seq 1 "$N"); do
	for repo in repo big; do
		for mode in none baseline; do
			t0=$(now)
			as_user "$AG_BIN" contained-run "$mode.yaml" --repo "$repo" --json -- /bin/true >"$work/out.json" || true
			t1=$(now)
			python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["timings"]
print(sys.argv[2], sys.argv[3], (int(sys.argv[5]) - int(sys.argv[4])) // 1000000, t["workspace_ms"], t["cleanup_ms"])' \
				"$work/out.json" "$repo" "$mode" "$t0" "$t1" >>"$work/rows"
		done
	done
done
echo "runs: $N of each, interleaved; repo = 20 files, big = $FILES files"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(repo, mode, col):
    return statistics.median(int(r[col]) for r in rows if r[0] == repo and r[1] == mode)
for repo in ("repo", "big"):
    for col, name in ((2, "whole run"), (3, "workspace"), (4, "cleanup")):
        a, b = med(repo, "none", col), med(repo, "baseline", col)
        print("%-4s %-9s none %6d ms  baseline %6d ms  ratio %.2f" % (repo, name, a, b, b / a if a else float("nan")))
PY
