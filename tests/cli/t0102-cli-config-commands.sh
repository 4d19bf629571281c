#!/usr/bin/env bash
# CLI behaviour of validate, schema, init, help and --version: exit codes,
# messages that name file/line/column/key, refusals, and that no configured
# value is ever printed.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"

DIGEST=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
good="$T/good.yaml"
cat >"$good" <<YAML
task_id: demo
description: d
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 1}
sandbox: {type: docker, image: "127.0.0.1:5000/x@sha256:$DIGEST"}
contained_execution:
  version: 1
  platform: linux-docker-engine
  environment:
    - {name: AGENT_MODE, value: CANARY-SECRET-literal}
YAML

t_ok "--version exits 0" "$AG_BIN" --version
t_run "$AG_BIN" --version
t_like "--version prints the version" "$AG_OUT" '^agentguard [0-9]+\.[0-9]+\.[0-9]+'
t_ok "--help exits 0" "$AG_BIN" --help
t_run "$AG_BIN" help
t_like "help lists validate, schema, init" "$AG_OUT" 'validate.*schema.*init'
for c in validate schema init; do
	t_run "$AG_BIN" "$c" --help
	t_is "$c --help exits 0" "$AG_RC" 0
	t_like "$c --help shows its usage" "$AG_OUT" "Usage: agentguard $c"
	t_run "$AG_BIN" help "$c"
	t_like "help $c shows its usage" "$AG_OUT" "Usage: agentguard $c"
done
ag_must_fail 2 usage "unknown command is a usage error" "$AG_BIN" frobnicate
ag_must_fail 2 usage "validate without CONFIG" "$AG_BIN" validate
ag_must_fail 2 usage "validate with an unknown option" "$AG_BIN" validate "$good" --bogus
ag_must_fail 2 usage "schema takes no argument" "$AG_BIN" schema extra

# validate: text and JSON
t_run "$AG_BIN" validate "$good"
t_is "valid config exits 0" "$AG_RC" 0
t_like "summary shows the platform and claim" "$AG_OUT" 'linux-docker-engine'
t_like "summary shows the filled-in defaults" "$AG_OUT" 'memory 512m, pids 256, tmpfs 256m'
t_unlike "summary never prints environment values" "$AG_OUT" 'CANARY-SECRET'
t_run "$AG_BIN" validate "$good" --json
t_is "--json exits 0" "$AG_RC" 0
t_run /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); e=d["effective"]["contained_execution"]; assert d["valid"] is True and e["memory_bytes"]==536870912 and e["pids_limit"]==256 and e["environment"][0]=={"name":"AGENT_MODE","required":False,"sensitive":False,"source":"literal"}' "$AG_OUT"
t_is "--json effective settings are complete and exact" "$AG_RC" 0

bad="$T/bad.yaml"
sed 's/max: 1}/max: 1}\nforbiden_paths: []/' "$good" >"$bad"
ag_must_fail 2 config.unknown_key "typo'd key is refused" "$AG_BIN" validate "$bad"
t_like "text error names file, line and column" "$AG_OUT" "config '$bad' line 6 column 1: forbiden_paths:"
t_like "text error suggests the right key" "$AG_OUT" "did you mean 'forbidden_paths'"
sed 's/CANARY-SECRET-literal/"CANARY-SECRET-x\\ty"/' "$good" >"$bad"
ag_must_fail 2 config.env.value_control "control character in a value is refused" "$AG_BIN" validate "$bad"
t_unlike "the refused value is not printed" "$AG_OUT" 'CANARY'
t_run "$AG_BIN" validate "$bad" --json
t_unlike "nor in JSON" "$AG_OUT" 'CANARY'
t_like "JSON error carries the key path" "$AG_OUT" '"key":"contained_execution.environment\[0\].value"'
printf 'task_id: "\033]0;owned\007"\n' >"$T/esc.yaml"
t_run "$AG_BIN" validate "$T/esc.yaml"
t_unlike "no raw escape sequence reaches the terminal" "$AG_OUT" $'\033'
ln -s "$good" "$T/link.yaml"
ag_must_fail 2 config.io.symlink "a symlinked config is not followed" "$AG_BIN" validate "$T/link.yaml"

# schema
t_run "$AG_BIN" schema
t_is "schema exits 0" "$AG_RC" 0
"$AG_BIN" schema >"$T/schema.json"
t_ok "schema output is the shipped file, byte for byte" cmp "$T/schema.json" "$AG_ROOT/data/schemas/agentguard-config-v1.schema.json"

# init
mkdir "$T/proj"
t_run "$AG_BIN" init "$T/proj" --dry-run
t_is "init --dry-run exits 0" "$AG_RC" 0
t_like "--dry-run shows the file" "$AG_OUT" 'contained_execution:'
t_ok "--dry-run writes nothing" test ! -e "$T/proj/agentguard.yaml" -a ! -e "$T/proj/.gitignore"
t_ok "init writes the starter" "$AG_BIN" init "$T/proj" --preset untrusted-agent
t_ok "the starter validates" "$AG_BIN" validate "$T/proj/agentguard.yaml"
t_is ".gitignore gets .agentguard/" "$(grep -c '^\.agentguard/$' "$T/proj/.gitignore")" 1
cp "$T/proj/agentguard.yaml" "$T/before.yaml"
ag_must_fail 1 init.exists "init refuses to overwrite" "$AG_BIN" init "$T/proj"
t_ok "the existing file is untouched" cmp "$T/before.yaml" "$T/proj/agentguard.yaml"
echo "# edited" >>"$T/proj/agentguard.yaml"
t_ok "init --force replaces it" "$AG_BIN" init "$T/proj" --force
t_ok "the replacement is the starter again" cmp "$T/before.yaml" "$T/proj/agentguard.yaml"
t_is ".gitignore entry is not duplicated" "$(grep -c '^\.agentguard/$' "$T/proj/.gitignore")" 1
mkdir "$T/proj2"
printf 'node_modules/' >"$T/proj2/.gitignore"
t_ok "init into a dir with a .gitignore lacking a final newline" "$AG_BIN" init "$T/proj2"
t_is "existing entries are kept on their own line" "$(head -1 "$T/proj2/.gitignore")" "node_modules/"
mkdir "$T/proj3"
ln -s /etc/hostname "$T/proj3/agentguard.yaml"
ag_must_fail 1 init.exists "init does not write through a symlink" "$AG_BIN" init "$T/proj3"
ag_must_fail 2 init.not_regular "nor with --force" "$AG_BIN" init "$T/proj3" --force
ag_must_fail 2 usage "unknown preset" "$AG_BIN" init "$T/proj" --preset strict
ag_must_fail 2 init.dir "missing directory" "$AG_BIN" init "$T/nope"
t_done
