#!/usr/bin/env bash
# t1070: tests/run itself, on a tree of stand-in test files (no Docker): it
# runs files in parallel; every CLI file gets a test-run id of its own
# (SUITE.tNNNN) and a sweep of that id when it ends; the files that create
# networks (the real lib-netlock.sh) run side by side, never two on one
# subnet slice and never more than four at once; a failing file is counted and
# shown; a skip list naming no test file is refused; AG_TEST_JOBS=1 runs
# one file at a time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

R=$T/tree
mkdir -p "$R/tests/cli" "$R/scripts" "$R/build/tests"
cp "$AG_ROOT/tests/run" "$R/tests/run"
printf '' >"$R/tests/durations"
# the sweep a file's end triggers: logged, nothing removed; the suite's
# one environment check: logged, healthy
cat >"$R/scripts/test-env" <<'SH'
#!/bin/sh
case $1 in
sweep) echo "$*" >>"$STUB_LOG/sweeps" ;;
*) echo "$*" >>"$STUB_LOG/env-calls" ;;
esac
SH
chmod +x "$R/scripts/test-env"
# a stand-in lib-study.sh: the real slice lock, then a record of the time
# the file holds its slice
cp "$AG_ROOT/tests/cli/lib-netlock.sh" "$R/tests/cli/lib-netlock.sh"
cat >"$R/tests/cli/lib-study.sh" <<'SH'
. "$(dirname "${BASH_SOURCE[0]}")/lib-netlock.sh"
t_network_lock
echo "start $(date +%s%N) $1 $AG_NET_SLICE_LO" >>"$STUB_LOG/net"
sleep 2
echo "end $(date +%s%N) $1 $AG_NET_SLICE_LO" >>"$STUB_LOG/net"
SH
mk() { # NAME BODY: a stand-in test file
	printf '#!/usr/bin/env bash\n%s\n' "$2" >"$R/tests/cli/$1"
}
for n in 1 2 3 4; do
	mk "t000$n-sleeper.sh" "echo \"id \$AG_TEST_RUN_ID\" >>\"\$STUB_LOG/ids\"
echo \"start \$(date +%s%N) $n\" >>\"\$STUB_LOG/spans\"; sleep 2
echo \"end \$(date +%s%N) $n\" >>\"\$STUB_LOG/spans\"; echo 1..1; echo ok 1 - slept"
done
mk t0005-net-a.sh '. "$(dirname "$0")/lib-study.sh" a; echo 1..1; echo ok 1 - net a'
mk t0006-net-b.sh '. "$(dirname "$0")/lib-study.sh" b; echo 1..1; echo ok 1 - net b'
export STUB_LOG=$T/log AG_TEST_NET_LOCK=$T/netlock
mkdir -p "$STUB_LOG"
# runner VAR=VALUE...: the stand-in tree's tests/run, with only what we set
runner() {
	t_run env -u AG_TEST_RUN_ID -u AG_TEST_FILTER -u AG_TEST_SKIP -u AG_TEST_JOBS \
		AG_TEST_LEDGER_ROOT="$T/ledgers" BUILD="$R/build" "$@" bash "$R/tests/run" cli
}

# overlaps FILE: how many pairs of the recorded spans overlap in time
overlaps() {
	python3 -c '
import sys, itertools
spans = {}
for kind, t, n in (l.split() for l in open(sys.argv[1])):
    spans.setdefault(n, {})[kind] = int(t)
print(sum(1 for a, b in itertools.combinations(spans.values(), 2)
          if a["start"] < b["end"] and b["start"] < a["end"]))' "$1"
}
# slices FILE: "OVERLAPS SAME-SLICE-OVERLAPS MOST-AT-ONCE" of the network spans
slices() {
	python3 -c '
import sys, itertools
spans = {}
for kind, t, n, lo in (l.split() for l in open(sys.argv[1])):
    spans.setdefault(n, {"lo": lo})[kind] = int(t)
s = list(spans.values())
ov = [(a, b) for a, b in itertools.combinations(s, 2)
      if a["start"] < b["end"] and b["start"] < a["end"]]
most = max(sum(1 for b in s if b["start"] <= a["start"] < b["end"]) for a in s)
print(len(ov), sum(1 for a, b in ov if a["lo"] == b["lo"]), most)' "$1"
}

runner AG_TEST_JOBS=4
t_is "six stand-in files pass" "$AG_RC" 0
t_like "the closing line counts every point" "$AG_OUT" $'\n6 passed, 0 failed$'
t_ok "the files ran in parallel (some ran at the same time)" test "$(overlaps "$STUB_LOG/spans")" -gt 0
ids=$(sort -u "$STUB_LOG/ids")
t_is "each file had its own test-run id" "$(wc -l <<<"$ids")" 4
t_like "an id is SUITE.tNNNN" "$ids" $'^id tr-[0-9]{10}-[0-9]+-[A-Za-z0-9]+\\.t0001\n'
t_is "each CLI file was swept by its own id when it ended" \
	"$(sed -E 's/^.*\.(t[0-9]{4})$/\1/' "$STUB_LOG/sweeps" | sort | tr '\n' ' ')" \
	"t0001 t0002 t0003 t0004 t0005 t0006 "
t_is "every sweep names one id of this suite" "$(grep -cvE '^sweep tr-[^ ]+\.t000[1-6]$' "$STUB_LOG/sweeps")" 0
t_is "the environment was checked once for the six files" "$(cat "$STUB_LOG/env-calls")" status
read -r nov nsame _ <<<"$(slices "$STUB_LOG/net")"
t_ok "the two network files ran side by side" test "$nov" -gt 0
t_is "... each on a slice of its own" "$nsame" 0

# six network files at once: at most four slices, so the others wait for one
for n in 1 2 3 4 5 6; do
	mk "t002$n-net.sh" ". \"\$(dirname \"\$0\")/lib-study.sh\" n$n; echo 1..1; echo ok 1 - net $n"
done
rm -f "$STUB_LOG/net"
runner AG_TEST_JOBS=6 AG_TEST_FILTER='t002'
read -r nov nsame most <<<"$(slices "$STUB_LOG/net")"
t_is "six network files pass" "$AG_RC" 0
t_is "never two on one slice at once" "$nsame" 0
usable=$(. "$AG_ROOT/tests/cli/lib-netlock.sh" && t_network_slices | wc -l)
t_is "at most one per usable slice at once, and that many did run at once ($usable here)" "$most" "$usable"
for n in 1 2 3 4 5 6; do rm -f "$R/tests/cli/t002$n-net.sh"; done

rm -f "$STUB_LOG/spans"
runner AG_TEST_JOBS=1 AG_TEST_FILTER='t000[1-3]'
t_is "AG_TEST_JOBS=1: one file at a time" "$AG_RC:$(overlaps "$STUB_LOG/spans")" 0:0

# a failing file: counted once (no plan), its output shown
mk t0007-broken.sh 'echo "BROKEN-OUTPUT-7c1"; exit 3'
runner AG_TEST_FILTER='t0001|t0007'
t_is "a failing file fails the run" "$AG_RC" 1
t_like "it is named and counted" "$AG_OUT" $'failing files: cli/t0007-broken.sh\n1 passed, 1 failed'
t_like "its output is shown" "$AG_OUT" 'BROKEN-OUTPUT-7c1'

# skip lists
printf '# why\nt0007-broken.sh    # skipped on purpose\n' >"$T/skip"
runner AG_TEST_SKIP="$T/skip" AG_TEST_FILTER='t0001|t0007'
t_is "a listed file is skipped" "$AG_RC" 0
t_unlike "the skipped file did not run" "$AG_OUT" 't0007'
printf 't0999-gone.sh\n' >"$T/skip-stale"
runner AG_TEST_SKIP="$T/skip-stale"
t_is "a skip list naming no test file is refused" "$AG_RC" 2
t_like "with the name" "$AG_OUT" 'names no test file: t0999-gone.sh'
# a list of the only files to run
printf 't0002-sleeper.sh  # why\n' >"$T/only"
runner AG_TEST_ONLY="$T/only" AG_TEST_FILTER='t000[1-3]'
t_is "AG_TEST_ONLY: passes" "$AG_RC" 0
t_like "AG_TEST_ONLY: the listed file ran" "$AG_OUT" 't0002-sleeper'
t_unlike "AG_TEST_ONLY: no other file ran" "$AG_OUT" 't000[13]-sleeper'
runner AG_TEST_ONLY="$T/skip-stale"
t_is "a list of files to run naming no test file is refused" "$AG_RC" 2
# the shipped ASan list names only files that exist
t_run env -u AG_TEST_RUN_ID AG_TEST_LEDGER_ROOT="$T/ledgers" AG_TEST_ONLY="$AG_ROOT/tests/asan-cli" \
	AG_TEST_FILTER='^$' BUILD="$R/build" bash "$AG_ROOT/tests/run" cli
t_is "tests/asan-cli names existing files only" "$AG_RC" 0
t_done
