#!/usr/bin/env bash
# t0652: every JSON document the CLI prints carries schema and
# schema_version and validates against data/schemas/agentguard-cli-output-
# v1.schema.json (python3-jsonschema): validate, preflight, render --json,
# contained-run, evidence verify, cleanup, report --list, batch (plan,
# summary, merge). Under --json a
# usage or config error is one agentguard.error object on stdout, with the
# documented exit code (2), and nothing else on stdout.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"

SCHEMA=$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json
# conforms WANT-SCHEMA: stdout of the last t_json is exactly one JSON line
# of that schema, valid against the CLI output schema.
conforms() {
	printf '%s' "$J" | "$PY" -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, f"{len(lines)} lines on stdout"
d = json.loads(lines[0])
assert d.get("schema") == sys.argv[2], d.get("schema")
assert d.get("schema_version") == 1
errs = list(Draft202012Validator(schema).iter_errors(d))
# oneOf: report the errors of the matching branch
sub = [e for x in errs for e in (x.context or [x]) if sys.argv[2].split(".")[1] in str(e.schema_path)]
assert not errs, [f"{list(e.absolute_path)}: {e.message[:200]}" for e in (sub or errs)[:5]]
' "$SCHEMA" "$1"
}
# t_json CMD...: J = stdout only, AG_RC = exit code
t_json() {
	AG_RC=0
	J=$("$@" 2>/dev/null </dev/null) || AG_RC=$?
}
check() { # DESC SCHEMA EXIT
	if [ "$AG_RC" -ne "$3" ]; then
		t_fail "$1" "exit $AG_RC, expected $3" "$J"
	else
		t_ok "$1" conforms "$2"
	fi
}

config c
make_repo

t_json "$AG_BIN" validate "$W/c.yaml" --json
check "validate --json (valid)" agentguard.validate 0
printf 'task_id: [\n' >"$T/bad.yaml"
t_json "$AG_BIN" validate "$T/bad.yaml" --json
check "validate --json (invalid config)" agentguard.validate 2
t_json "$AG_BIN" preflight "$W/c.yaml" --json
check "preflight --json" agentguard.docker-preflight 0
t_json "$AG_BIN" render "$W/c.yaml" --json -- /bin/true
check "render --json" agentguard.render 0
t_like "render --json: argv starts with run --rm" "$J" '"argv":\["run","--rm",'
t_json "$AG_BIN" render "$W/c.yaml" -- /bin/true
t_like "render without --json: the bare argv array, as before" "$J" '^\["run","--rm",'
t_json as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- /bin/sh -c 'echo hi > /agentguard-workspace/new.txt'
check "contained-run --json" agentguard.contained-run-summary 0
ledger_runs
run_dir=$(ls -d "$W"/.agentguard/contained-runs/*/ | head -1)
t_json "$AG_BIN" evidence verify --public-key "$(pubkey)" "$run_dir" --json
check "evidence verify --json (valid)" agentguard.evidence-verify 0
t_json "$AG_BIN" evidence verify --public-key "$(pubkey)" "$T/nothing-here" --json
check "evidence verify --json (invalid)" agentguard.evidence-verify 2
t_json as_user "$AG_BIN" cleanup --json --probe-label "$AG_TEST_LABEL"
check "cleanup --json" agentguard.cleanup 0
t_like "cleanup --json: the runs root was read (a finished run has no marker: left alone)" "$J" '"runs_root_exists":true,"runs_unowned":1,'
t_json "$AG_BIN" cleanup --json --runs-root "$T/none"
check "cleanup --json (no runs root)" agentguard.cleanup 0
t_json as_user "$AG_BIN" report --list --json
check "report --list --json" agentguard.run-list 0
t_like "report --list --json: the run, verified" "$J" '"result":"PASS","run_id":"[^"]+","state":"verified","time":"[0-9T:Z-]+","verified":true'
t_json "$AG_BIN" report --list --json --runs-root "$T/none"
check "report --list --json (no runs root)" agentguard.run-list 0
printf '%s\n' 'version: 1' 'trials:' "  - {name: one, config: c.yaml, repo: repo, argv: [/bin/true]}" >"$W/b.yaml"
chown "$U:$U" "$W/b.yaml"
t_json as_user "$AG_BIN" batch b.yaml --plan --json
check "batch --plan --json" agentguard.batch-plan 0
t_json as_user "$AG_BIN" batch b.yaml --out b --json --quiet
check "batch --json" agentguard.batch-summary 0
for d in "$W"/b/trials/*/; do t_ledger_run "$(t_run_suffixes "$d")"; done
t_json as_user "$AG_BIN" batch merge b --out m --json
check "batch merge --json" agentguard.batch-summary 0

# --- errors under --json: one error object, exit 2
for cmd in "validate" "preflight" "render" "contained-run" "evidence verify" "cleanup" "report --list" "batch"; do
	# shellcheck disable=SC2086 # the subcommand words split on purpose
	t_json "$AG_BIN" $cmd --json --no-such-option
	check "$cmd --json: a usage error is a JSON error object (exit 2)" agentguard.error 2
	t_like "$cmd --json: kind usage" "$J" '"kind":"usage"'
done
t_json "$AG_BIN" preflight "$T/bad.yaml" --json
check "preflight --json: a config error is a JSON error object (exit 2)" agentguard.error 2
t_like "preflight --json: kind config, the reason token" "$J" '"kind":"config".*"reason":"config\.'
t_json "$AG_BIN" render "$T/bad.yaml" --json -- /bin/true
check "render --json: a config error is a JSON error object (exit 2)" agentguard.error 2
t_json "$AG_BIN" contained-run "$T/bad.yaml" --json -- /bin/true
check "contained-run --json: a config error is a JSON error object (exit 2)" agentguard.error 2
t_json "$AG_BIN" no-such-command --json
check "an unknown command under --json is a JSON error object (exit 2)" agentguard.error 2
t_json "$AG_BIN" render "$W/c.yaml" -- /bin/echo --json --bogus
t_like "--json after '--' belongs to the child argv (no JSON mode)" "$J" '^\["run",'
t_done
