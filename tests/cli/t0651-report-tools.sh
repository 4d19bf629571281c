#!/usr/bin/env bash
# t0651: reports that tools accept, on real contained-run artifacts.
# SARIF: every result is located (a relative, percent-encoded URI of the
# changed path that triggered the check, with a start line; a check that
# names no path is located at the configuration file), the file validates
# against a SARIF 2.1.0 schema (tests/fixtures/sarif: a hand-written subset
# of the OASIS schema, no network) and meets GitHub code scanning's rules;
# a run refused before the agent ran is one located result. JUnit: a real
# XML parser reads it, and both suites carry the run's start as timestamp.
# Text: yes/no in plain words, no score when the agent never ran, the
# failing stage named.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

config c "forbidden_paths: ['secrets/**']" "secret_content_patterns: [{id: canary-lit, contains: CANARY-LIT-0a9b8c7d}]"
make_repo
rep() { as_user "$AG_BIN" report "$@"; }

# A failing run: a forbidden path with a space and a '#' in its name, a
# content match in another file, and a failing test command.
run -- /bin/sh -c 'cd /agentguard-workspace && mkdir -p secrets && echo x > "secrets/my key#1.txt" && printf "a\nb CANARY-LIT-0a9b8c7d\n" > src/leak.txt && exit 3'
t_is "failing run: exit 1" "$AG_RC" 1
F=$(dirname "$REPORT")
config missing
sed -i "s|@sha256:[0-9a-f]*|@sha256:$(printf '%064d' 7)|" "$W/missing.yaml"
t_run as_user "$AG_BIN" contained-run "$W/missing.yaml" --repo repo --runs-root pf-runs --json -- /bin/true
PF=$(ls -d "$W"/pf-runs/*/ | head -1)
PF=${PF%/}
run -- /bin/true
P=$(dirname "$REPORT")

sarif_check() { # FILE: schema + GitHub's rules; prints nothing on success
	"$PY" - "$AG_ROOT/tests/fixtures/sarif/sarif-2.1.0-subset.schema.json" "$1" <<'PYEOF'
import json, re, sys, urllib.parse
from jsonschema import Draft7Validator
schema = json.load(open(sys.argv[1]))
Draft7Validator.check_schema(schema)
s = json.load(open(sys.argv[2]))
errs = list(Draft7Validator(schema).iter_errors(s))
assert not errs, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errs[:5]]
run = s["runs"][0]
rules = run["tool"]["driver"]["rules"]
ids = [r["id"] for r in rules]
assert len(ids) == len(set(ids)), "rule ids are unique"
for r in run["results"]:
    assert rules[r["ruleIndex"]]["id"] == r["ruleId"], "ruleIndex names ruleId"
    assert r["message"]["text"], "a message"
    assert r.get("locations"), f"result {r['ruleId']} has no location"
    for l in r["locations"]:
        a = l["physicalLocation"]["artifactLocation"]
        u = urllib.parse.urlsplit(a["uri"])
        assert not u.scheme and not u.netloc and not a["uri"].startswith("/"), a["uri"]
        assert re.fullmatch(r"[A-Za-z0-9._~/%-]+", a["uri"]), a["uri"]
        assert ".." not in a["uri"].split("/"), a["uri"]
        assert a["uriBaseId"] == "%SRCROOT%"
        assert l["physicalLocation"]["region"]["startLine"] >= 1
inv = run["invocations"][0]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", inv["startTimeUtc"]), inv
PYEOF
}

# --- SARIF
rep "$F" --format sarif >"$T/f.sarif"
t_ok "sarif (failing run): valid SARIF 2.1.0, every result located (GitHub's rules)" sarif_check "$T/f.sarif"
loc() { "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); r=[x for x in s["runs"][0]["results"] if x["ruleId"]==sys.argv[2]][0]; print(" ".join(l["physicalLocation"]["artifactLocation"]["uri"]+":"+str(l["physicalLocation"]["region"]["startLine"]) for l in r["locations"]))' "$1" "$2"; }
t_is "sarif: forbidden-paths is located at the changed path, percent-encoded" "$(loc "$T/f.sarif" forbidden-paths)" "secrets/my%20key%231.txt:1"
t_is "sarif: a content match is located at its file and line" "$(loc "$T/f.sarif" secret-scan)" "src/leak.txt:2"
t_is "sarif: a failed test command (no path) is located at the config file" "$(loc "$T/f.sarif" tests-passed)" "agentguard.yaml:1"
t_unlike "sarif: no private host path" "$(cat "$T/f.sarif")" 'CANARY-PATH|/tmp/|/home/'
rep "$PF" --format sarif >"$T/pf.sarif"
t_ok "sarif (refused run): valid and located" sarif_check "$T/pf.sarif"
t_is "sarif (refused run): a result of the rule contained-run names the stage" "$("$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); r=[r for r in s["runs"][0]["results"] if r["ruleId"]=="contained-run"]; print(len(r), "preflight stage" in r[0]["message"]["text"], s["runs"][0]["invocations"][0]["executionSuccessful"])' "$T/pf.sarif")" "1 True False"
rep "$P" --format sarif >"$T/p.sarif"
t_ok "sarif (passing run): valid, no results" "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["runs"][0]["results"] == [] and s["runs"][0]["invocations"][0]["executionSuccessful"] is True' "$T/p.sarif"

# --- JUnit
rep "$F" --format junit >"$T/f.xml"
t_ok "junit: parsed by a real XML parser; timestamps on both levels, the run's start" "$PY" - "$T/f.xml" "$(basename "$F")" <<'PYEOF'
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites"
suite = root.find("testsuite")
m = re.search(r"-contained-(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)", sys.argv[2])
want = "%s-%s-%sT%s:%s:%s" % m.groups()
for el in (root, suite):
    assert el.get("timestamp") == want, (el.tag, el.get("timestamp"), want)
assert int(suite.get("failures")) >= 2 and int(suite.get("tests")) == len(suite.findall("testcase"))
PYEOF

# --- text
t_run rep "$P"
t_like "text: a passing run says yes" "$AG_OUT" $'\nPassed: +yes\n'
t_like "text: the agent ran and has a score" "$AG_OUT" $'Agent ran: +yes\nResult: +PASS  score 100 '
t_run rep "$F"
t_like "text: a failing run says no, naming the stage" "$AG_OUT" $'\nPassed: +no, it failed at the checks stage \\(3 failed\\)\n'
t_run rep "$PF"
t_like "text: a refused run says no, naming the stage" "$AG_OUT" $'\nPassed: +no, it failed at the preflight stage\n'
t_like "text: the agent never ran" "$AG_OUT" $'\nAgent ran: +no\n'
t_like "text: no score for a run that never ran the agent" "$AG_OUT" 'Result: +FAIL  score none \(the agent never ran\)'
t_unlike "text: no numeric score" "$AG_OUT" 'score [0-9]'
t_run rep "$PF" --format md
t_unlike "md: no numeric score either" "$AG_OUT" '\| \*\*FAIL\*\* \| [0-9]'
t_done
