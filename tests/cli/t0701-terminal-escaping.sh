#!/usr/bin/env bash
# t0701: one terminal escaper for every human-facing output (issue 9
# finding 6). An agent creates files whose names carry C1 controls (U+009B
# CSI, U+009D OSC, U+0085), bidirectional controls (U+202E, U+2066, U+200E,
# U+061C), line separators (U+2028), ESC and a raw byte that is not UTF-8;
# a run directory with such a name is planted in a runs root. The run
# summary, `report --format text|md` and `report --list` must show every
# one escaped (\u009b, \x1b, ...) and print none of them raw.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c
make_repo

# safe_output FILE: strict UTF-8, no C0 but \n and \t, no DEL, no C1, no
# bidi or line-separator character; prints the first offender otherwise.
safe_output() {
	"$PY" - "$1" <<'PYEOF'
import sys
b = open(sys.argv[1], "rb").read()
try:
    s = b.decode("utf-8", "strict")
except UnicodeDecodeError as e:
    print("not UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 20):e.start + 4])); sys.exit(1)
bad = set(range(0x20)) - {0x0a, 0x09}
bad |= {0x7f} | set(range(0x80, 0xa0)) | {0x061c, 0x200e, 0x200f, 0x2028, 0x2029}
bad |= set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
for i, ch in enumerate(s):
    if ord(ch) in bad:
        print("raw U+%04X at %d: %r" % (ord(ch), i, s[max(0, i - 20):i + 4])); sys.exit(1)
PYEOF
}

agent='cd /agentguard-workspace/src &&
for n in "csi\302\233[2Jx" "osc\302\2358;;evil\302\234y" "nel\302\205z" "rlo\342\200\256txt.exe" \
	"lri\342\201\246q" "lrm\342\200\216r" "alm\330\234s" "ls\342\200\250t" "esc\033[31mu" "raw\233v"; do
	f=$(printf "$n") && echo x > "$f"
done
printf "body csi\302\233[2J ls\342\200\250 rlo\342\200\256 esc\033[0m\n" > content.txt'
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c "$agent"
printf '%s' "$AG_OUT" >"$T/summary.txt"
t_is "the run completes (exit 0)" "$AG_RC" 0
t_ok "run summary: nothing dangerous printed raw" safe_output "$T/summary.txt"
for want in 'csi\u009b' 'osc\u009d8;;evil\u009c' 'nel\u0085' 'rlo\u202e' 'lri\u2066' 'lrm\u200e' \
	'alm\u061c' 'ls\u2028' 'esc%1B[31m' 'raw%9B'; do
	# (ESC and the raw byte are already %XX in the recorded path form)
	t_ok "run summary shows $want" grep -qF -- "$want" "$T/summary.txt"
done

R="$W/.agentguard/contained-runs"
D=$(ls -1d "$R"/*/ | head -1)
t_run as_user "$AG_BIN" report "$D" --format text
printf '%s' "$AG_OUT" >"$T/report.txt"
t_is "report --format text: exit 0" "$AG_RC" 0
t_ok "report text: nothing dangerous printed raw" safe_output "$T/report.txt"
for want in 'csi\u009b' 'osc\u009d' 'nel\u0085' 'rlo\u202e' 'lri\u2066' 'lrm\u200e' 'alm\u061c' \
	'ls\u2028' 'esc%1B[31m' 'raw%9B'; do
	t_ok "report text shows $want" grep -qF -- "$want" "$T/report.txt"
done
t_run as_user "$AG_BIN" report "$D" --format md
printf '%s' "$AG_OUT" >"$T/report.md"
t_ok "report md: nothing dangerous printed raw" safe_output "$T/report.md"

# agentguard patch on a terminal: the file content goes through the same escaper
if command -v script >/dev/null; then
	t_run script -qec "$AG_BIN patch $D" /dev/null
	printf '%s' "$AG_OUT" | tr -d '\r' >"$T/patch.txt"
	t_is "patch on a terminal: exit 0" "$AG_RC" 0
	t_ok "patch on a terminal: nothing dangerous printed raw" safe_output "$T/patch.txt"
	t_ok "patch on a terminal shows the content escaped" \
		grep -qF -- 'body csi\u009b[2J ls\u2028 rlo\u202e esc\x1b[0m' "$T/patch.txt"
else
	t_skip "patch on a terminal" "no script(1)"
	t_skip "patch on a terminal: nothing raw" "no script(1)"
	t_skip "patch on a terminal shows the content escaped" "no script(1)"
fi

# report --list: a run directory whose name carries the controls
L="$T/list-root"
mkdir -p "$L"
cp -a "$D" "$L/$(printf 'run\302\233[2J\342\200\256x\302\235y\233z')"
t_run "$AG_BIN" report --list --runs-root "$L"
printf '%s' "$AG_OUT" >"$T/list.txt"
t_is "report --list: exit 0" "$AG_RC" 0
t_ok "report --list: nothing dangerous printed raw" safe_output "$T/list.txt"
t_ok "report --list shows the name escaped" grep -qF -- 'run\u009b[2J\u202ex\u009dy\x9bz' "$T/list.txt"
check_clean "after the run"
t_done
