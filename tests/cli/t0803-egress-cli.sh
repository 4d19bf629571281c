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
t_done
