# shellcheck shell=bash
# tests/cli/lib-runtime-images.sh: helpers of the runtime-image tests.
# Source after lib-test.sh.

# cli_conforms DESC SCHEMA JSON: a test point that JSON is one document of
# that `schema`, valid against data/schemas/agentguard-cli-output-v1.schema.json.
cli_conforms() {
	t_ok "$1" python3 -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
lines = sys.argv[3].splitlines()
assert len(lines) == 1, f"{len(lines)} lines"
d = json.loads(lines[0])
assert d.get("schema") == sys.argv[2], d.get("schema")
errs = [f"{list(e.absolute_path)}: {e.message[:160]}" for e in Draft202012Validator(schema).iter_errors(d)]
assert not errs, errs[:3]
' "$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json" "$2" "$3"
}
