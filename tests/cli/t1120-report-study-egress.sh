#!/usr/bin/env bash
# t1120: `agentguard report` of a REAL study run (issue 19 item 5). The agent,
# alone on the study network, makes two requests to the approved canary and
# one to a destination the policy does not approve, then exits 0: every check
# passes (score 100) and the trial fails (destination_denied). The text, md
# and html reports show the egress section (verdict, the destinations grouped
# by decision/host/port/reason with their request and byte counts as the
# sealed manifest records them, the self-tests, the gateway image), no false
# "network ... MISMATCH" (the agent's network is the run's study network by
# design), and FAIL never beside a bare score. The HTML is rendered by
# headless Chromium (as t1061 does, when installed) into a PNG kept in
# $AG_BUILD/test-output/t1120/.
# Creates Docker networks: lib-study-net.sh takes a subnet-slice lock.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t1120
. "$(dirname "$0")/lib-study-net.sh"
st_start
st_policy '{"host":"canary.test","port":80,"test_only":true}'

OUT="$AG_BUILD/test-output/t1120"
rm -rf "$OUT"
mkdir -p "$OUT"

st_agent report '$P probe get $GW http://canary.test/ok-1120
$P probe get $GW http://canary.test/ok-1120-b
$P probe get $GW http://nothere-1120.test/denied
true'
st_check_manifest "report trial" failed destination_denied
t_is "the run failed (exit 1)" "$ST_RUN_RC" 1
ART=$ST_RUN_DIR/contained-run.json
t_is "every check passed: score 100 beside result FAIL" \
	"$(jq -r '[.result, .score, .failure.reason]|map(tostring)|join(" ")' "$ART")" \
	"FAIL 100 study.egress_failed"

# report FORMAT: as the test user who ran it (its signing key, HOME=$ST_W)
report() {
	runuser -u "$AG_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$ST_W" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$ST_W" \
		"$AG_BIN" report "$ST_RUN_DIR" --format "$1" 2>&1
}
for f in text md html; do
	report "$f" >"$OUT/report.$f" || true
done
TXT=$(cat "$OUT/report.text") MD=$(cat "$OUT/report.md") HTML=$(cat "$OUT/report.html")

# what the sealed manifest records, for the expected rows
sums() { # DECISION HOST: "requests bytes_in bytes_out" of the manifest's events
	jq -r --arg d "$1" --arg h "$2" '[.events[]|select(.decision==$d and .requested.host==$h)]|
		"\(length) \(map(.bytes.in)|add) \(map(.bytes.out)|add)"' "$ST_MANIFEST"
}
read -r areq ain aout <<<"$(sums allow canary.test)"
read -r dreq din dout <<<"$(sums deny nothere-1120.test)"
t_is "the manifest: two approved requests with bytes, one denied" "$areq $dreq $((ain > 0 && aout > 0))" "2 1 1"
GW=$(jq -r '.study_egress.gateway_image' "$ART")
t_is "the artifact names the pinned gateway image" "$GW" "$ST_GW_IMAGE"

# --- text
t_like "text: the egress section" "$TXT" $'\nEgress \\(study run\\):\n  Verdict: failed \\(destination_denied\\); trial report, 3 events, 1 denied; topology verified yes; gateway running, its stream complete\n'
t_like "text: the manifest is the sealed one" "$TXT" 'Manifest: live-study-egress-manifest.json, its SHA-256 the one the sealed artifact records'
t_like "text: the denied destination first, with its count" "$TXT" \
	$'\n    deny \\| nothere-1120.test \\| 80 \\| destination_not_approved \\| 1 \\| '"$din"' \| '"$dout"$'\n    allow \\| canary.test \\| 80 \\| approved_destination \\| 2 \\| '"$ain"' \| '"$aout"$'\n'
t_like "text: the counts are the gateway's aggregates" "$TXT" \
	'Destinations: 2 \(decision, host, port, reason\) keys from the manifest.s aggregates \(complete counts\)'
t_like "text: the self-tests that ran" "$TXT" 'Self-tests: .*gateway_port = open'
t_like "text: the gateway image" "$TXT" "Gateway image: ${GW//./\\.} \\(local image id sha256:"
t_like "text: the score says it grades the checks only, beside FAIL" "$TXT" \
	'Result: +FAIL  score 100 \(checks only; the run failed: study\.egress_failed\)  exit 1'

# --- md
t_like "md: the egress section" "$MD" $'## Egress \\(study run\\)\n\n\\*\\*Verdict:\\*\\* failed \\(destination\\\\_denied\\)'
t_like "md: the destinations table" "$MD" \
	$'\\| Decision \\| Host \\| Port \\| Reason \\| Requests \\| Bytes in \\| Bytes out \\|\n\\|---\\|---\\|---\\|---\\|---\\|---\\|---\\|\n\\| deny \\| nothere-1120.test \\| 80 \\| destination\\\\_not\\\\_approved \\| 1 \\| '"$din"' \| '"$dout"$' \\|\n\\| allow \\| canary.test \\| 80 \\| approved\\\\_destination \\| 2 \\| '"$ain"' \| '"$aout"' \|'
t_like "md: self-tests and gateway image" "$MD" $'\\*\\*Self-tests:\\*\\* .*gateway\\\\_port = open.*\n\n\\*\\*Gateway image:\\*\\* '"${GW//./\\.}"
t_like "md: FAIL with the score's qualifier" "$MD" '\| \*\*FAIL\*\* \| 100 \(checks only; the run failed: study\.egress_failed\) \|'

# --- html
t_like "html: the egress section" "$HTML" '<h2 id="egress">Egress \(study run\)</h2>'
t_like "html: the verdict" "$HTML" '<p><strong>Verdict:</strong> failed \(destination_denied\)'
t_like "html: the denied row" "$HTML" \
	"<tr><td><span class=\"bad\">deny</span></td><td>nothere-1120.test</td><td>80</td><td>destination_not_approved</td><td>1</td><td>$din</td><td>$dout</td></tr>"
t_like "html: the approved row" "$HTML" \
	"<tr><td><span>allow</span></td><td>canary.test</td><td>80</td><td>approved_destination</td><td>2</td><td>$ain</td><td>$aout</td></tr>"
t_like "html: the gateway image" "$HTML" "<strong>Gateway image:</strong> ${GW//./\\.} "
t_like "html: the score with its qualifier" "$HTML" '<tr><th>Score</th><td>100 \(checks only; the run failed: study\.egress_failed\)</td></tr>'

# --- no false MISMATCH; never FAIL beside a bare score
for f in text md html; do
	s=$(cat "$OUT/report.$f")
	t_unlike "$f: no MISMATCH (the agent is on the run's study network)" "$s" 'MISMATCH|differs from what Docker reported'
	t_unlike "$f: no bare score beside FAIL" "$s" 'FAIL  score [0-9]+  |\*\*FAIL\*\* \| [0-9]+ \||<th>Score</th><td>[0-9]+</td>'
	t_unlike "$f: no private host path" "$s" "$T|/home/|/root/"
done
t_like "md: the network row names the study network, verified" "$MD" \
	'\| network \(study\) \| agentguard-[a-z0-9-]+-study \| agentguard-[a-z0-9-]+-study \| verified \|'

# --- the HTML, as a person sees it (headless Chromium, no network)
CHROMIUM=$(command -v chromium || true)
if [ -z "$CHROMIUM" ] || ! command -v unshare >/dev/null || [ "$(id -u)" != 0 ]; then
	diag "no screenshot: headless Chromium, unshare(1) and root are needed"
else
	timeout -k 5 90 unshare -n "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$T/chromium-profile" \
		--hide-scrollbars --window-size=1280,3600 --screenshot="$OUT/study-report.png" \
		"file://$OUT/report.html" >"$T/chromium.log" 2>&1 || true
	t_ok "html: Chromium wrote a screenshot" test -s "$OUT/study-report.png"
	[ -s "$OUT/study-report.png" ] || diag "$(tail -n 20 "$T/chromium.log")"
	t_is "html: the screenshot is a 1280x3600 PNG of more than 50 KB" "$(python3 -c 'import struct,sys,os
d=open(sys.argv[1],"rb").read(32)
w,h=struct.unpack(">II",d[16:24])
print(d[:8]==b"\x89PNG\r\n\x1a\n", w, h, os.path.getsize(sys.argv[1])>50000)' "$OUT/study-report.png" 2>&1)" "True 1280 3600 True"
	diag "screenshot kept in $OUT/study-report.png"
fi

st_check_run_gone "report trial"
st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
