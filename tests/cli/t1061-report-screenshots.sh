#!/usr/bin/env bash
# t1061: the HTML report of a failing and of a passing run, rendered by
# headless Chromium (Debian's `chromium`, when installed: it is not added to
# scripts/deps, 290 MB for one test) into PNG screenshots kept in
# $AG_BUILD/test-output/t1061/. Chromium runs in a network namespace of its
# own (unshare -n), so it cannot reach any network; the report needs none
# (its CSP allows no external resource). The screenshots are checked: the
# failing run's shows the red FAIL verdict, the passing run's the green one.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
CHROMIUM=$(command -v chromium || true)
[ -n "$CHROMIUM" ] || skip_all "headless Chromium (Debian's chromium package) is not installed"
command -v unshare >/dev/null || skip_all "unshare(1) is needed to keep Chromium off the network"
[ "$(id -u)" = 0 ] || skip_all "unshare -n needs root"
. "$(dirname "$0")/lib-contained.sh"

OUT="$AG_BUILD/test-output/t1061"
rm -rf "$OUT"
mkdir -p "$OUT"
config c
make_repo

shot() { # HTML PNG
	timeout -k 5 90 unshare -n "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$T/chromium-profile" \
		--hide-scrollbars --window-size=1280,1600 --screenshot="$2" "file://$1" >"$T/chromium.log" 2>&1
}
# colour PNG R G B: how many pixels are within 24 of that colour
colour() {
	"$PY" - "$@" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, lace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and lace == 0, (depth, ctype, lace)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, want, count = bytearray(stride), [int(x) for x in sys.argv[2:5]], 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        if all(abs(line[x + k] - want[k]) <= 24 for k in range(3)):
            count += 1
    prev = line
print(count)
PY
}

# a failing run (the agent exits 3) and a passing one (it edits a file)
run -- /bin/sh -c 'echo failing on purpose; exit 3'
t_is "failing run: the result is FAIL" "$(art 'a["result"]')" FAIL
"$AG_BIN" report --format html --public-key "$(pubkey)" "$(dirname "$REPORT")" >"$OUT/failing.html"
run -- /bin/sh -c 'cd /agentguard-workspace && echo four >> src/edit.txt && echo passing'
t_is "passing run: exit 0" "$AG_RC" 0
"$AG_BIN" report --format html --public-key "$(pubkey)" "$(dirname "$REPORT")" >"$OUT/passing.html"

for k in failing passing; do
	rm -rf "$T/chromium-profile"
	shot "$OUT/$k.html" "$OUT/$k.png" || true
	t_ok "$k: Chromium wrote a screenshot" test -s "$OUT/$k.png"
	[ -s "$OUT/$k.png" ] || diag "$(tail -n 20 "$T/chromium.log")"
done
if [ -s "$OUT/failing.png" ] && [ -s "$OUT/passing.png" ]; then
	red_f=$(colour "$OUT/failing.png" 207 34 46)
	green_p=$(colour "$OUT/passing.png" 26 127 55)
	red_p=$(colour "$OUT/passing.png" 207 34 46)
	t_ok "failing: the red FAIL verdict is on screen ($red_f red pixels)" test "$red_f" -gt 500
	t_ok "passing: the green PASS verdict is on screen ($green_p green pixels)" test "$green_p" -gt 500
	t_ok "passing: less red than the failing run ($red_p < $red_f)" test "$red_p" -lt "$red_f"
	diag "screenshots kept in $OUT"
fi
check_clean "screenshot runs"
t_done
