#!/usr/bin/env bash
# t0500: post-execution policy checks on real contained runs (Docker Engine,
# unprivileged test user): every check failing for real, its exit code
# (1 for a failed error/critical check, 0 when only a warning failed), its
# passed flag, the score, that a planted secret never reaches the terminal
# or any file of the run directory, that a rename out of secrets/ is judged
# on its source path, and that no container of the run is left.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker

. "$(dirname "$0")/lib-contained.sh"

# the repository: lib-contained's plus a secrets/ directory
make_repo2() {
	make_repo
	mkdir -p "$W/repo/secrets"
	printf 'not really a token\n' >"$W/repo/secrets/token.txt"
	chown -R "$U:$U" "$W/repo"
	(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
}

# cfg NAME TOP-LEVEL-LINE...: a contained config plus top-level keys; a
# given expected_modified_files replaces the default one.
cfg() {
	local name=$1
	shift
	config "$name"
	local l
	for l in "$@"; do
		case "$l" in
		expected_modified_files:*) sed -i '/^expected_modified_files:/d' "$W/$name.yaml" ;;
		esac
		printf '%s\n' "$l" >>"$W/$name.yaml"
	done
}

# runc NAME [options] -- ARGV...: contained-run with $W/NAME.yaml (JSON summary)
runc() {
	local name=$1
	shift
	t_run as_user "$AG_BIN" contained-run "$W/$name.yaml" --repo repo --json "$@"
	REPORT=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin).get("report") or "")' 2>/dev/null || true)
	[ -n "$REPORT" ] && REPORT="$W/$REPORT"
	return 0
}

# ck NAME FIELD: a field of one check in the artifact
ck() { art "next(c for c in a['checks'] if c['name']=='$1')['$2']"; }

# this run's containers only (other suites may share the engine)
run_container_gone() {
	local suffix
	suffix=$("$PY" -c 'import json,sys,re
r=json.load(open(sys.argv[1]))["run_id"][-32:].lower()
print(re.sub(r"^[^a-z0-9]+","",r))' "$REPORT")
	[ -n "$suffix" ] && [ -z "$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$suffix")" ]
}

gone() { # DESC
	t_ok "$1: no container of the run is left" run_container_gone
	t_ok "$1: the source repository is untouched" repo_unchanged
}

SH='cd /agentguard-workspace &&'

# schema_ok DESC: the artifact still validates against the contained-run schema
SCHEMA="$AG_ROOT/data/schemas/contained-run-v1.schema.json"
schema_ok() {
	if [ -f "$SCHEMA" ] && "$PY" -c 'import jsonschema' 2>/dev/null; then
		# only a validation error fails; an unusable schema (being edited, remote
		# references) is not this test's concern
		t_ok "$1: the artifact validates against contained-run-v1.schema.json" "$PY" -c '
import json, sys, jsonschema
try:
    schema = json.load(open(sys.argv[2]))
    jsonschema.validate(json.load(open(sys.argv[1])), schema)
except jsonschema.exceptions.ValidationError as e:
    print(e); sys.exit(1)
except Exception as e:
    print("schema unusable, not judged:", type(e).__name__)' "$REPORT" "$SCHEMA"
	else
		t_skip "$1: schema validation" "no schema or no python jsonschema"
	fi
}

make_repo2

# --- every check configured, nothing violated: 7 checks, all passed, score 100
cfg all "forbidden_paths: ['secrets/**']" "test_paths: ['tests/**']" \
	"allowed_paths: ['src/**', 'docs/**']" "secret_patterns: ['*.pem']" \
	"diff_limits: {max_files_changed: 5, max_lines_added: 10, max_lines_deleted: 10}" \
	"secret_content_builtin_detectors: [aws-access-key-id-shape, generic-api-key-assignment, github-token-shape, npm-token-shape, private-key-header]" \
	"secret_content_patterns: [{id: canary-lit, contains: CANARY-LIT-0a9b8c7d}]" \
	"unsafe_commands: ['rm -rf /']"
runc all -- /bin/sh -c "$SH echo four >> src/edit.txt"
t_is "clean: exit 0" "$AG_RC" 0
t_is "clean: PASS, score 100" "$(art '(a["result"], a["score"])')" "('PASS', 100)"
t_is "clean: every check evaluated, in registry order" "$(art '[c["name"] for c in a["checks"]]')" \
	"['tests-passed', 'forbidden-paths', 'test-tampering', 'unsafe-commands', 'scope-adherence', 'diff-size', 'secret-scan']"
t_is "clean: every check passed" "$(art 'all(c["passed"] for c in a["checks"])')" True
t_is "clean: check fields" "$(art 'sorted(a["checks"][0])')" \
	"['display_name', 'evidence', 'evidence_total', 'message', 'name', 'passed', 'severity']"
t_is "clean: tests-passed evidence" "$(ck tests-passed evidence)" "['\`contained-run\` exited 0']"
t_is "clean: content scan complete" "$(ck secret-scan content_scan | "$PY" -c 'import ast,sys; d=ast.literal_eval(sys.stdin.read()); print(d["status"], d["files_scanned"])')" "complete 1"
t_like "clean: the summary carries the score" "$AG_OUT" '"score":100'
gone "clean"
schema_ok "clean"

# --- forbidden-paths (critical): exit 1, score 50
cfg forb "forbidden_paths: ['secrets/**']"
runc forb -- /bin/sh -c "$SH echo x > secrets/new.txt"
t_is "forbidden: exit 1" "$AG_RC" 1
t_is "forbidden: check failed" "$(ck forbidden-paths passed)" False
t_is "forbidden: severity" "$(ck forbidden-paths severity)" critical
t_is "forbidden: evidence" "$(ck forbidden-paths evidence)" "['\`secrets/new.txt\` matched forbidden pattern \`secrets/**\`']"
t_is "forbidden: FAIL, score 50" "$(art '(a["result"], a["score"])')" "('FAIL', 50)"
t_is "forbidden: no failure stage (a check failure is not a run failure)" "$(art 'a["failure"]')" None
t_like "forbidden: the summary names the failed check" "$AG_OUT" '"failed_checks":\["forbidden-paths \(critical\): `secrets/new.txt` matched forbidden pattern `secrets/\*\*`"\]'
gone "forbidden"

# the text summary: score and the failed checks with their first evidence line
t_run as_user "$AG_BIN" contained-run "$W/forb.yaml" --repo repo -- /bin/sh -c "$SH echo x > secrets/new.txt"
t_is "forbidden text: exit 1" "$AG_RC" 1
t_like "forbidden text: score line, beside FAIL never alone" "$AG_OUT" \
	$'Score: 50/100 \\(checks only; the run failed: run.checks_failed\\)\n'
t_like "forbidden text: failed checks list" "$AG_OUT" $'Failed checks:\n- forbidden-paths \\(critical\\): \'secrets/new.txt\' matched forbidden pattern \'secrets/\\*\\*\''
runc forb --allow-fail-result -- /bin/sh -c "$SH echo x > secrets/new.txt"
t_is "forbidden: --allow-fail-result gives 0" "$AG_RC" 0

# --- test-tampering (error): exit 1, score 70
cfg tamper "test_paths: ['tests/**']"
runc tamper -- /bin/sh -c "$SH echo 'exit 0' > tests/test_a.sh"
t_is "tampering: exit 1" "$AG_RC" 1
t_is "tampering: check failed" "$(ck test-tampering passed)" False
t_is "tampering: evidence" "$(ck test-tampering evidence)" "['\`tests/test_a.sh\` matched test pattern \`tests/**\`']"
t_is "tampering: score 70" "$(art 'a["score"]')" 70
gone "tampering"

# --- scope-adherence (warning): outside allowed paths -> exit 0, score 90
cfg scope "allowed_paths: ['src/**']"
runc scope -- /bin/sh -c "$SH echo x > docs/extra.md && echo y >> src/edit.txt"
t_is "scope: a warning alone exits 0" "$AG_RC" 0
t_is "scope: check failed" "$(ck scope-adherence passed)" False
t_is "scope: evidence" "$(ck scope-adherence evidence)" "['Outside allowed paths: docs/extra.md']"
t_is "scope: PASS with score 90" "$(art '(a["result"], a["score"])')" "('PASS', 90)"
gone "scope"
# over the maximum count, severity raised to error: exit 1, score 70
cfg scopemax "expected_modified_files: {min: 0, max: 1}" "policy: {scope_adherence: {severity: error}}"
runc scopemax -- /bin/sh -c "$SH echo x > src/a.txt && echo y > src/b.txt"
t_is "scope max: exit 1" "$AG_RC" 1
t_is "scope max: evidence" "$(ck scope-adherence evidence)" "['Changed 2 files; expected between 0 and 1.']"
t_is "scope max: severity override" "$(ck scope-adherence severity)" error
t_is "scope max: score 70" "$(art 'a["score"]')" 70
gone "scope max"

# --- diff-size: over a line limit (error by override), then binary fails closed
cfg diff "diff_limits: {max_lines_added: 2}" "policy: {diff_size: {severity: error}}"
runc diff -- /bin/sh -c "$SH printf 'a\nb\nc\n' >> src/edit.txt"
t_is "diff: exit 1" "$AG_RC" 1
t_is "diff: evidence" "$(ck diff-size evidence)" "['Added 3 lines; limit is 2.']"
t_is "diff: score 70" "$(art 'a["score"]')" 70
gone "diff"
cfg diffbin "diff_limits: {max_lines_added: 1000}"
runc diffbin -- /bin/sh -c "$SH printf 'a\000b' > src/blob.bin"
t_is "diff binary: a warning alone exits 0" "$AG_RC" 0
t_is "diff binary: line status" "$(art 'a["diff_summary"]["line_count_status"]')" binary
t_is "diff binary: fails closed" "$(ck diff-size evidence)" "['Diff line count evidence is incomplete or unavailable; failing closed for configured line limits (binary).']"
t_is "diff binary: score 90" "$(art 'a["score"]')" 90
gone "diff binary"

# --- secret-scan: a built-in detector and a configured literal, built inside the
# container from pieces so the whole value exists only in the written file
GHTOK=ghp_0123456789abcdefghijABCDEFGHIJ012345
LIT=CANARY-LIT-0a9b8c7d
cfg secret "secret_content_builtin_detectors: [github-token-shape]" \
	"secret_content_patterns: [{id: canary-lit, contains: $LIT}]"
runc secret -- /bin/sh -c "$SH a=ghp_0123456789; b=abcdefghijABCDEFGHIJ012345; c=CANARY-LIT-; d=0a9b8c7d; printf 'x = 1\ntoken %s%s\n' \$a \$b > src/config.txt; printf 'one\n%s%s\n' \$c \$d > docs/notes.md"
t_is "secret: exit 1" "$AG_RC" 1
t_is "secret: check failed" "$(ck secret-scan passed)" False
t_is "secret: evidence" "$(ck secret-scan evidence)" "['\`docs/notes.md:2\` matched secret-content detector \`canary-lit\`', '\`src/config.txt:2\` matched secret-content detector \`github-token-shape\`']"
t_is "secret: score 50" "$(art 'a["score"]')" 50
for s in "$GHTOK" "$LIT"; do
	t_unlike "secret: '${s:0:8}...' is not on the terminal" "$AG_OUT" "$s"
	t_ok "secret: '${s:0:8}...' is in no file of the run directory" bash -c '! grep -rqF -- "$1" "$2"' _ "$s" "$(dirname "$REPORT")"
done
t_run as_user "$AG_BIN" contained-run "$W/secret.yaml" --repo repo -- /bin/sh -c "$SH a=ghp_0123456789; b=abcdefghijABCDEFGHIJ012345; printf 'token %s%s\n' \$a \$b > src/config.txt"
t_unlike "secret text: the value is not on the terminal" "$AG_OUT" "$GHTOK"
# (on the terminal the names evidence quotes with backticks get plain quotes)
t_like "secret text: the failed check is listed" "$AG_OUT" "secret-scan \\(critical\\): 'src/config.txt:1' matched secret-content detector 'github-token-shape'"
gone "secret"
schema_ok "secret"

# --- a secret file renamed out of secrets/: judged on its source path
cfg rename "forbidden_paths: ['secrets/**']" "secret_patterns: ['secrets/**']"
runc rename -- /bin/sh -c "$SH mv secrets/token.txt src/x"
t_is "rename: exit 1" "$AG_RC" 1
t_is "rename: recorded as a rename" "$(art '[(r["source_path"], r["destination_path"]) for r in a["mutations"]["renamed_files"]]')" "[('secrets/token.txt', 'src/x')]"
t_is "rename: forbidden on the source path" "$(ck forbidden-paths evidence)" "['\`secrets/token.txt\` (rename source) matched forbidden pattern \`secrets/**\`']"
t_is "rename: secret pattern on the source path" "$(ck secret-scan evidence)" "['\`secrets/token.txt\` (rename source) matched pattern \`secrets/**\`']"
t_is "rename: two criticals, score 0" "$(art '(a["score"], a["result"])')" "(0, 'FAIL')"
gone "rename"
schema_ok "rename"

# --- tests-passed: a nonzero agent exit
cfg plain
runc plain -- /bin/sh -c 'exit 3'
t_is "tests-passed: exit 1" "$AG_RC" 1
t_is "tests-passed: check failed" "$(ck tests-passed passed)" False
t_is "tests-passed: evidence" "$(ck tests-passed evidence)" "['\`contained-run\` exited 3']"
t_is "tests-passed: score 70" "$(art 'a["score"]')" 70
gone "tests-passed"

# --- unsafe-commands in audit mode: recorded, passes
cfg audit "unsafe_commands: ['rm -rf']"
runc audit -- /bin/sh -c "$SH rm -rf docs"
t_is "audit: exit 0" "$AG_RC" 0
t_is "audit: passes" "$(ck unsafe-commands passed)" True
t_is "audit: the match is recorded" "$(ck unsafe-commands evidence)" "['The agent argv matched unsafe_commands entry \`rm -rf\`; allowed and recorded (audit).']"
gone "audit"

t_done
