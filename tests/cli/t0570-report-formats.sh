#!/usr/bin/env bash
# t0570: `agentguard report` in every format on real contained-run artifacts
# (run as the unprivileged test user): text, md (GitHub step summary with
# "## Containment Evidence"), json (the canonical bytes), SARIF 2.1.0 and
# JUnit of the checks only, --list; an invalid artifact is refused; hostile
# file names are escaped; no canary or private host path in any format.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
rep() { as_user "$AG_BIN" report "$@"; }

run -- /bin/sh -c 'cd /agentguard-workspace && echo four >> src/edit.txt && echo new > src/added.txt && rm src/delete.txt && mv docs/old-name.md docs/new-name.md && echo "token=$AGENT_API_TOKEN host=$AG_CANARY_HOST"'
t_is "pass run: exit 0" "$AG_RC" 0
P=$(dirname "$REPORT")
run -- /bin/sh -c 'exit 3'
t_is "fail run: exit 1" "$AG_RC" 1
F=$(dirname "$REPORT")
run -- /bin/sh -c "$EV_HOSTILE_AGENT"
t_is "hostile-names run: exit 0" "$AG_RC" 0
H=$(dirname "$REPORT")
user_pub
config missing
sed -i "s|@sha256:[0-9a-f]*|@sha256:$(printf '%064d' 7)|" "$W/missing.yaml"
t_run as_user "$AG_BIN" contained-run "$W/missing.yaml" --repo repo --runs-root pf-runs --json -- /bin/true
PF=$(ls -d "$W"/pf-runs/*/ | head -1)
PF=${PF%/}

# --- text (the default)
t_run rep "$P"
t_is "text: exit 0" "$AG_RC" 0
t_like "text: result, score, exit" "$AG_OUT" 'Result: +PASS  score 100  exit 0'
t_like "text: preflight status and claim" "$AG_OUT" 'Preflight: +supported \(claim linux-docker-engine\)'
t_like "text: changed files" "$AG_OUT" 'R docs/old-name.md -> docs/new-name.md'
t_like "text: counts and lines" "$AG_OUT" '1 modified, 1 added, 1 deleted, 1 renamed; \+2/-1 lines \(exact\)'
t_like "text: cleanup and liveness" "$AG_OUT" 'Cleanup: +container removed, liveness verified, workspace removed, overall complete'
t_run rep "$F" --format text
t_like "text: a failed check with its evidence" "$AG_OUT" 'FAIL \[error\] tests-passed: The contained command did not exit 0.'$'\n'"      - 'contained-run' exited 3"
t_like "text: the failed run's verdict" "$AG_OUT" 'Result: +FAIL'
t_run rep "$PF"
t_like "text: a preflight failure names stage and reason" "$AG_OUT" 'Failure: +stage preflight \[preflight\.'
t_like "text: a preflight failure warns loudly" "$AG_OUT" 'WARNING: +No containment claim'

# --- md
t_run rep "$P" --format md
t_is "md: exit 0" "$AG_RC" 0
t_like "md: the Containment Evidence section" "$AG_OUT" $'\n''## Containment Evidence'$'\n'
t_like "md: requested vs verified side by side" "$AG_OUT" '\| memory limit \| 128m \| 134217728 \| verified \|'
t_like "md: verified network" "$AG_OUT" '\| network \| none \| none \| verified \|'
t_like "md: image identity" "$AG_OUT" '\| Container-bound image id \| sha256:[0-9a-f]{64} \|'
t_like "md: environment names" "$AG_OUT" '\| Sensitive \| AGENT\\_API\\_TOKEN \|'
t_like "md: cleanup and liveness" "$AG_OUT" '\| Liveness verified \| yes \|'
t_unlike "md: no warning when all is verified" "$AG_OUT" 'Warning'
t_run rep "$PF" --format md
t_like "md: a loud warning when no claim / not verified" "$AG_OUT" '> \*\*Warning\*\*'
X=$(ev_copy_root reduced)
XP="$X/$(basename "$P")"
ev_py "$XP/contained-run.json" 'c = a["containment_evidence"]; c["security_claim_level"] = "docker-desktop-reduced"; c["preflight"]["claim_level"] = "docker-desktop-reduced"; c["preflight"]["reduced_claim"] = True; c["cleanup"]["liveness_verified"] = False; a["cleanup_complete"] = False; c["cleanup"]["overall_complete"] = False; c["controls"]["verified_resource_controls"]["pids_limit"] = 4096'
ev_reseal "$XP"
t_run "$AG_BIN" report "$XP" --format md --public-key "$AG_PUB"
t_like "md: warning for a reduced claim" "$AG_OUT" '> - Reduced claim \(docker-desktop-reduced\)'
t_like "md: warning for unverified liveness" "$AG_OUT" '> - Container liveness was not verified'
t_like "md: warning for incomplete cleanup" "$AG_OUT" '> - Cleanup was not verified complete'
t_like "md: warning for a control mismatch" "$AG_OUT" '> - A requested control differs'
t_like "md: the mismatching control" "$AG_OUT" '\| pids limit \| 64 \| 4096 \| MISMATCH \|'
t_run rep "$H" --format md
t_unlike "md: no raw <script> from a file name" "$AG_OUT" '<script>'
t_like "md: the name is escaped" "$AG_OUT" '&lt;script&gt;alert\\\(1\\\)&lt;/script&gt;'
t_like "md: markdown punctuation is escaped" "$AG_OUT" '\\\*star\\\*\\_\\\[link\\\]\\\(x\\\)\\\|pipe\\#\.md'
t_unlike "md: no raw control character" "$AG_OUT" $'\x1b'

# --- json: the canonical artifact as-is
t_run rep "$P" --format json
t_is "json: byte-identical to the artifact" "$(rep "$P" --format json | sha256sum)" "$(sha256sum <"$P/contained-run.json")"

# --- sarif: the checks only
rep "$F" --format sarif >"$T/f.sarif"
t_ok "sarif: 2.1.0 with the required top keys, one run, a driver, rules" "$PY" - "$T/f.sarif" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["version"] == "2.1.0" and "sarif-2.1.0" in s["$schema"], s.keys()
assert len(s["runs"]) == 1
r = s["runs"][0]
d = r["tool"]["driver"]
assert d["name"] == "AgentGuard" and d["version"]
ids = [x["id"] for x in d["rules"]]
assert "tests-passed" in ids, ids
res = r["results"]
assert [x["ruleId"] for x in res] == ["tests-passed"], res
assert res[0]["level"] == "error" and "exited 3" in res[0]["message"]["text"]
assert ids[res[0]["ruleIndex"]] == res[0]["ruleId"]
assert r["properties"]["agentguard"]["export"] == "sarif"
PYEOF
t_unlike "sarif: no containment evidence" "$(cat "$T/f.sarif")" 'containment|verified_resource_controls|registry_digest'
t_run rep "$P" --format sarif
t_like "sarif: a passing run has no results" "$AG_OUT" '"results": \[\]'

# --- junit: the checks only
rep "$F" --format junit >"$T/f.xml"
t_ok "junit: parses; testsuites/testsuite/testcase task::check; AgentGuardFailure" "$PY" - "$T/f.xml" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites"
suites = root.findall("testsuite")
assert len(suites) == 1
cases = suites[0].findall("testcase")
names = [c.get("name") for c in cases]
assert "t0400::tests-passed" in names, names
assert all(n.startswith("t0400::") for n in names)
fails = [c for c in cases if c.find("failure") is not None]
assert [c.get("name") for c in fails] == ["t0400::tests-passed"]
assert fails[0].find("failure").get("type") == "AgentGuardFailure"
assert int(suites[0].get("tests")) == len(cases) and int(suites[0].get("failures")) == 1
assert int(root.get("failures")) == 1 and suites[0].get("errors") == "0"
PYEOF
t_unlike "junit: no containment evidence" "$(cat "$T/f.xml")" 'containment|verified_resource_controls|registry_digest'
rep "$PF" --format junit >"$T/pf.xml"
t_ok "junit: a preflight-failed run fails visibly" "$PY" -c 'import sys, xml.etree.ElementTree as ET; r = ET.parse(sys.argv[1]).getroot(); assert int(r.get("failures")) >= 1 and any(c.find("failure") is not None for c in r.find("testsuite").findall("testcase"))' "$T/pf.xml"
rep "$H" --format junit >"$T/h.xml"
t_ok "junit: hostile names still make well-formed XML" "$PY" -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$T/h.xml"

# --- --list: newest first, one line each
t_run as_user "$AG_BIN" report --list
t_is "list: exit 0" "$AG_RC" 0
t_is "list: one line per run" "$(printf '%s\n' "$AG_OUT" | wc -l)" 3
t_like "list: newest first (the hostile run, then fail, then pass)" "$AG_OUT" "^$(basename "$H")  PASS  exit 0 +[0-9T:-]+Z  verified"$'\n'"$(basename "$F")  FAIL  exit 1 .*"$'\n'"$(basename "$P")  PASS"
t_run as_user "$AG_BIN" report --list --runs-root pf-runs
t_like "list: --runs-root" "$AG_OUT" "^$(basename "$PF")  FAIL  exit 3 "
X=$(ev_copy_root listbad)
ev_py "$X/$(basename "$F")/contained-run.json" 'a["result"] = "PASS"'
t_run "$AG_BIN" report --list --runs-root "$X" --public-key "$AG_PUB"
t_like "list: a tampered run is flagged, without its claims" "$AG_OUT" "$(basename "$F")  -     exit -   .*INVALID \[evidence.seal.mismatch\]"
t_run "$AG_BIN" report --list --runs-root "$T/none"
t_like "list: a missing runs root is no runs" "$AG_OUT" 'no runs'

# --- refusal and usage
ag_must_fail 2 evidence.seal.mismatch "report: a tampered artifact is refused" "$AG_BIN" report "$X/$(basename "$F")" --public-key "$AG_PUB"
t_like "report: says why it refuses" "$AG_OUT" 'refusing to report'
ag_must_fail 2 usage "report: unknown format" "$AG_BIN" report "$P" --format pdf
ag_must_fail 2 usage "report: no path" "$AG_BIN" report
ag_must_fail 2 usage "report: --list with a path" "$AG_BIN" report --list "$P"

# --- no canary, no private host path, in any format
for f in text md html json sarif junit; do
	out=$(rep "$P" --format "$f")
	for canary in CANARY-HOST-ENV-7f3a CANARY-SENSITIVE-91c2 CANARY-PATH; do
		t_unlike "$f: no '$canary'" "$out" "$canary"
	done
	t_unlike "$f: no private host path" "$out" '/tmp/|/home/|/root/'
done
t_run as_user "$AG_BIN" report --list
t_unlike "list: no private host path" "$AG_OUT" '/tmp/|/home/|CANARY'

t_done
