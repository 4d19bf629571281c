#!/usr/bin/env bash
# t0560: `agentguard report --format html` loaded in a real headless Chromium:
# the verdict is in the rendered DOM, the page cannot make an external
# request (no external URL in src/href, no script, a CSP of default-src
# 'none'), there is no console error, hostile file names and environment
# names are escaped (no <script> element ever appears), and a screenshot is
# captured (kept in $AG_REPORT_SHOT_DIR when set, for a person to look at).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
command -v chromium >/dev/null 2>&1 || skip_all "chromium is not installed (scripts/deps installs it)"
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
run -- /bin/sh -c 'cd /agentguard-workspace && echo four >> src/edit.txt && echo new > src/added.txt && echo more > src/added2.txt && rm src/delete.txt && mv docs/old-name.md docs/new-name.md'
t_is "pass run: exit 0" "$AG_RC" 0
P=$(dirname "$REPORT")
run -- /bin/sh -c "$EV_HOSTILE_AGENT"
t_is "hostile-names run: exit 0" "$AG_RC" 0
H=$(dirname "$REPORT")
user_pub
# Environment names cannot be hostile in a config (the loader refuses them);
# a re-sealed artifact carries some to prove the page escapes them anyway.
X=$(ev_copy_root hostile-env)
XH="$X/$(basename "$H")"
ev_py "$XH/contained-run.json" 'e = a["containment_evidence"]["environment"]; e["supplied_names"] = ["<script>alert(2)</script>", "A\"B&C", "<img src=x onerror=alert(3)>"]; e["missing_names"] = ["x\u0001y"]'
ev_reseal "$XH"
t_ok "the re-sealed hostile-env artifact verifies" "$AG_BIN" evidence verify "$XH" --public-key "$AG_PUB"

as_user "$AG_BIN" report "$P" --format html >"$T/pass.html"
"$AG_BIN" report "$XH" --format html --public-key "$AG_PUB" >"$T/hostile.html"
t_ok "html: reports written" test -s "$T/pass.html" -a -s "$T/hostile.html"

chrome() { # PROFILE ARGS...: headless Chromium, no network services, own profile
	local prof=$1
	shift
	HOME="$T" timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$T/$prof" "$@"
}

for page in pass hostile; do
	f="$T/$page.html"
	html=$(cat "$f")
	t_unlike "$page: no external URL in src/href/url()" "$html" '(src|href|action|srcset)[[:space:]]*=[[:space:]]*["'"'"']?[[:space:]]*(https?:|//|[a-z]+:)|url\(|@import'
	t_unlike "$page: no script element" "$html" '<script'
	t_unlike "$page: no <link>, <img>, <iframe>, <object> elements" "$html" '<(link|img|iframe|object|embed|form)[[:space:]>]'
	t_like "$page: a CSP forbids every load" "$html" "Content-Security-Policy\" content=\"default-src 'none'"
	chrome "prof-$page" --dump-dom "file://$f" >"$T/$page.dom" 2>"$T/$page.dump.err" || true
	t_ok "$page: chromium rendered a DOM" grep -q '</html>' "$T/$page.dom"
	chrome "prof-$page-log" --enable-logging=stderr --v=0 --screenshot="$T/$page.png" --window-size=1100,2600 "file://$f" >"$T/$page.shot.out" 2>"$T/$page.log" || true
	t_ok "$page: a screenshot was captured" test -s "$T/$page.png"
	t_ok "$page: it is a PNG" bash -c 'head -c 8 "$1" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a"' _ "$T/$page.png"
	t_ok "$page: no console error, uncaught exception or CSP refusal" bash -c '! grep -E "Uncaught|CONSOLE.*([Ee]rror|ERROR)|Refused to|ERR_(BLOCKED|FAILED)" "$1"' _ "$T/$page.log"
	if [ -n "${AG_REPORT_SHOT_DIR:-}" ]; then
		cp "$T/$page.png" "$AG_REPORT_SHOT_DIR/$page.png"
		cp "$f" "$AG_REPORT_SHOT_DIR/$page.html"
	fi
done

dom=$(cat "$T/pass.dom")
t_like "pass: the verdict is in the DOM" "$dom" '<span id="verdict" class="verdict pass">PASS</span>'
t_like "pass: the mutation bar" "$dom" 'class="bar" aria-label="mutation summary"><div class="k-modified" style="width:20.00%;?" title="modified: 1">modified 1</div><div class="k-added" style="width:40.00%;?" title="added: 2">added 2</div>'
t_like "pass: the mutation counts table" "$dom" '<td>1</td><td>2</td><td>1</td><td>1</td><td>5</td><td>\+3</td><td>-1</td><td>exact</td>'
t_like "pass: Containment Evidence section" "$dom" '<h2>Containment Evidence</h2>'
t_like "pass: requested vs verified" "$dom" '<td>memory limit</td><td>128m</td><td>134217728</td><td class="ok">verified</td>'
t_like "pass: environment names" "$dom" '<th>Sensitive</th><td><code>AGENT_API_TOKEN</code></td>'
t_unlike "pass: no warning when everything was verified" "$dom" 'class="warn"'

hdom=$(cat "$T/hostile.dom")
t_unlike "hostile: no <script> element in the rendered DOM" "$hdom" '<script'
t_unlike "hostile: no <img> element in the rendered DOM" "$hdom" '<img'
t_unlike "hostile: no <b> or <i> element from a file name" "$hdom" '<b>|<i>'
t_like "hostile: the file name shows as text" "$hdom" '&lt;script&gt;alert\(1\)&lt;/script&gt;'
t_like "hostile: quotes and ampersands are text" "$hdom" 'q"uote&amp;amp;&lt;b&gt;bold&lt;i&gt;.txt'
t_like "hostile: the env name shows as text" "$hdom" '<code>&lt;img src=x onerror=alert\(3\)&gt;</code>'
t_like "hostile: a control character is shown escaped" "$hdom" '<code>x\\x01y</code>'
raw=$(cat "$T/hostile.html")
t_unlike "hostile: the raw HTML has no unescaped <script>" "$raw" '<script'
t_unlike "hostile: the raw HTML has no raw control character" "$raw" $'[\x01-\x08\x0b\x0c\x0e-\x1f]'

for canary in CANARY-HOST-ENV-7f3a CANARY-SENSITIVE-91c2 CANARY-PATH; do
	t_unlike "html: no '$canary'" "$(cat "$T/pass.html" "$T/hostile.html")" "$canary"
done

t_done
