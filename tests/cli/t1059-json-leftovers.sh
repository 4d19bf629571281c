#!/usr/bin/env bash
# t1059: --json leftovers. validate's I/O error (a config that cannot be
# read) has line and column null, as the error envelope does, and is valid
# against the CLI output schema; `evidence verify --json` of a run that
# does not verify prints its document on stdout and nothing on stderr.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
PY=/usr/bin/python3
SCHEMA=$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json

t_run bash -c '"$1" validate "$2" --json 2>/dev/null' _ "$AG_BIN" "$T/no-such.yaml"
t_is "validate --json of a missing file: exit 2" "$AG_RC" 2
J=$AG_OUT
t_is "its error has line and column null, not 0" \
	"$(printf '%s' "$J" | "$PY" -c 'import json,sys; e=json.load(sys.stdin)["error"]; print(e["line"], e["column"])')" "None None"
if "$PY" -c 'import jsonschema' 2>/dev/null; then
	t_ok "and the document is valid against the CLI output schema" "$PY" -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
d = json.loads(sys.argv[2])
errs = list(Draft202012Validator(schema).iter_errors(d))
assert not errs, [e.message[:200] for e in errs[:3]]
' "$SCHEMA" "$J"
	printf 'a: [\n' >"$T/bad.yaml"
	J=$("$AG_BIN" validate "$T/bad.yaml" --json 2>/dev/null || true)
	t_ok "a parse error (line known) is valid against the schema too" "$PY" -c '
import json, sys
from jsonschema import Draft202012Validator
d = json.loads(sys.argv[2])
assert isinstance(d["error"]["line"], int) and d["error"]["line"] >= 1, d
errs = list(Draft202012Validator(json.load(open(sys.argv[1]))).iter_errors(d))
assert not errs, [e.message[:200] for e in errs[:3]]
' "$SCHEMA" "$J"
else
	t_skip "schema validity" "python3-jsonschema is missing"
fi

mkdir -p "$T/nothing-here"
"$AG_BIN" evidence keygen "$T/k.pem" >/dev/null 2>&1
"$AG_BIN" evidence public-key --signing-key "$T/k.pem" >"$T/pub.pem" 2>/dev/null
rc=0
"$AG_BIN" evidence verify --public-key "$T/pub.pem" "$T/nothing-here" --json >"$T/out" 2>"$T/err" || rc=$?
t_is "evidence verify --json of a non-run: exit 2" "$rc" 2
t_like "its document is on stdout" "$(cat "$T/out")" '"valid":false'
t_is "and nothing on stderr" "$(cat "$T/err")" ""
rc=0
"$AG_BIN" evidence verify --public-key "$T/pub.pem" "$T/nothing-here" >"$T/out" 2>"$T/err" || rc=$?
t_like "without --json the error line is still on stderr" "$(cat "$T/err")" 'agentguard: error: '
t_done
