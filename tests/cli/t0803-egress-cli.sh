#!/usr/bin/env bash
# t0803: the study-egress command surface beyond the corpus: help and usage
# errors, policy files (symlink, directory, missing, oversized), the digest
# (one digest for hosts differing in case or blanks), decide's exit codes
# and text form, manifest validate --policy (a policy digest that does not
# match, an approved destination that is not the policy's rule), and that no
# refusal echoes a private path or a query string from the input.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
SE() { "$AG_BIN" study-egress "$@"; }
P='{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"api.example.com","port":443}]}'
printf '%s' "$P" >"$T/p.json"
printf '%s' '{"schema_version":1,"destinations":[{"port":443,"host":"  API.Example.COM\t"}],"schema":"agentguard.live-study-egress-policy"}' >"$T/p2.json"
printf '%s' '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"api.example.com","port":8443}]}' >"$T/p3.json"

t_run SE --help
t_is "help exits 0" "$AG_RC" 0
t_like "help lists the commands" "$AG_OUT" 'policy validate.*decide.*manifest validate.*plan.*schema'
t_run "$AG_BIN" --help
t_like "main help lists study-egress" "$AG_OUT" 'study-egress'
ag_must_fail 2 usage "unknown subcommand" SE frobnicate
ag_must_fail 2 usage "policy without a file" SE policy validate
ag_must_fail 2 usage "unknown option" SE policy validate "$T/p.json" --yaml
ag_must_fail 2 usage "schema of an unknown kind" SE schema config

D1=$(SE policy digest "$T/p.json")
t_like "digest is 64 hex" "$D1" '^[0-9a-f]{64}$'
t_is "hosts differing in case and blanks, keys in another order: one digest" \
	"$(SE policy digest "$T/p2.json")" "$D1"
t_unlike "another port: another digest" "$(SE policy digest "$T/p3.json")" "^$D1\$"
t_run SE policy validate "$T/p.json"
t_is "text validate" "$AG_OUT" "policy valid: 1 destination rule, digest $D1
  api.example.com:443"
t_run SE policy validate "$T/p2.json" --json
t_like "normalised form in --json" "$AG_OUT" '"normalized":\{"destinations":\[\{"host":"api.example.com","port":443,"purpose":"approved-destination","test_only":false,"test_only_ip_literal":false\}\]'

ln -s p.json "$T/link.json"
ag_must_fail 2 egress.policy.symlink "a symlinked policy is refused" SE policy validate "$T/link.json"
mkdir "$T/dir.json"
ag_must_fail 2 egress.policy.not_regular "a directory is refused" SE policy validate "$T/dir.json"
ag_must_fail 2 egress.policy.read "a missing policy is refused" SE policy validate "$T/missing.json"
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big.json"
ag_must_fail 2 egress.policy.size "a policy over 64 KiB is refused" SE policy validate "$T/big.json"

printf '%s' '{"protocol":"connect","authority":"api.example.com:443","resolved_addresses":["93.184.216.34"],"resolution_status":"stable"}' >"$T/allow.json"
printf '%s' '{"protocol":"https","url":"https://evil.example.com/x?token=SECRET-QUERY","resolved_addresses":["93.184.216.34"],"resolution_status":"stable"}' >"$T/deny.json"
t_run SE decide "$T/p.json" "$T/allow.json"
t_is "decide allow: exit 0" "$AG_RC" 0
t_is "decide allow: text" "$AG_OUT" "allow approved_destination"
t_run SE decide "$T/p.json" "$T/deny.json"
t_is "decide deny: exit 1" "$AG_RC" 1
t_is "decide deny: text" "$AG_OUT" "deny destination_not_approved"
t_run SE decide "$T/p.json" "$T/deny.json" --json
t_unlike "the query string never reaches the output" "$AG_OUT" 'SECRET-QUERY|token'
printf '%s' '{"protocol":"connect","authority":"api.example.com:443","headers":{}}' >"$T/bad-event.json"
ag_must_fail 2 egress.event.unknown_key "an event with an unknown key is refused" \
	SE decide "$T/p.json" "$T/bad-event.json"
printf '%s' '{"protocol":"connect","authority":"api.example.com:443","resolved_addresses":"93.184.216.34"}' >"$T/type-event.json"
ag_must_fail 2 egress.event.type "an event whose addresses are not a list is refused" \
	SE decide "$T/p.json" "$T/type-event.json"
printf '%s' '{"protocol":' >"$T/broken-event.json"
ag_must_fail 2 egress.event.json "an event that is not JSON is refused" \
	SE decide "$T/p.json" "$T/broken-event.json"

# manifests against a policy: take the corpus's complete manifest
python3 - "$AG_ROOT/tests/egress-corpus/manifests.jsonl" "$T" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    c = json.loads(l)
    if c["id"].endswith("-complete"):
        m = c["doc"]
        json.dump(m, open(sys.argv[2] + "/m.json", "w"))
        m2 = dict(m, approved_destination={"host": "other.example.com", "port": 443})
        json.dump(m2, open(sys.argv[2] + "/m-dest.json", "w"))
        m3 = dict(m, events=[dict(m["events"][0], url="/home/alice/secret-file")])
        json.dump(m3, open(sys.argv[2] + "/m-path.json", "w"))
        break
PY
t_run SE manifest validate "$T/m.json"
t_is "complete manifest: text" "$AG_OUT" "manifest valid: completion complete (complete)"
t_ok "complete manifest matches its policy" SE manifest validate "$T/m.json" --policy "$T/p2.json"
ag_must_fail 2 egress.manifest.policy_digest "a policy digest that does not match is refused" \
	SE manifest validate "$T/m.json" --policy "$T/p3.json"
ag_must_fail 2 egress.manifest.approved_destination "an approved destination not in the policy is refused" \
	SE manifest validate "$T/m-dest.json" --policy "$T/p.json"
ag_must_fail 2 egress.manifest.private_path "a private path is refused" SE manifest validate "$T/m-path.json"
t_unlike "the refusal does not echo the private path" "$AG_OUT" 'alice|secret-file'
# Every --json document carries schema/schema_version and validates against
# the CLI output schema (docs/json-output.md).
conforms() { # WANT-SCHEMA JSON-TEXT
	/usr/bin/python3 -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
lines = sys.argv[3].splitlines()
assert len(lines) == 1, f"{len(lines)} lines on stdout"
d = json.loads(lines[0])
assert d.get("schema") == sys.argv[2] and d.get("schema_version") == 1, d.get("schema")
errs = [e.message[:200] for e in Draft202012Validator(schema).iter_errors(d)]
assert not errs, errs[:3]
' "$AG_ROOT/data/schemas/agentguard-cli-output-v1.schema.json" "$1" "$2"
}
json_of() { "$@" 2>/dev/null || true; }
t_ok "policy validate --json conforms" conforms agentguard.study-egress-policy "$(json_of SE policy validate "$T/p.json" --json)"
t_ok "policy validate --json (refused) conforms" conforms agentguard.study-egress-policy "$(json_of SE policy validate "$T/big.json" --json)"
t_ok "decide --json conforms" conforms agentguard.study-egress-decision "$(json_of SE decide "$T/p.json" "$T/deny.json" --json)"
t_ok "manifest validate --json conforms" conforms agentguard.study-egress-manifest-validate "$(json_of SE manifest validate "$T/m.json" --json)"
t_ok "manifest validate --json (refused) conforms" conforms agentguard.study-egress-manifest-validate "$(json_of SE manifest validate "$T/m-path.json" --json)"
D=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
printf '%s\n' "task_id: t0803" "description: d" "test_command: 'true'" "repo_template: repo" \
	"expected_modified_files: {min: 0, max: 3}" "sandbox:" "  type: docker" "  image: 'r/agent@$D'" \
	"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
	"  required_uid: 1000" "  required_gid: 1000" >"$T/c.yaml"
t_ok "plan --json conforms" conforms agentguard.study-egress-plan \
	"$(json_of SE plan "$T/c.yaml" --policy "$T/p.json" --trial-id t1 --gateway-image "r/gw@${D/0123/4567}" --json -- true)"
t_ok "a plan refusal under --json is one agentguard.error" conforms agentguard.error \
	"$(json_of SE plan "$T/c.yaml" --policy "$T/p.json" --trial-id t1 --gateway-image r/gw:latest --json -- true)"
t_ok "a decide refusal under --json is one agentguard.error" conforms agentguard.error \
	"$(json_of SE decide "$T/p.json" "$T/bad-event.json" --json)"
t_done
