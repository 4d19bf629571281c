#!/usr/bin/env bash
# t0870: second review of study-egress (issue 11). Each case was accepted
# before its fix: a "complete" manifest whose allowed event reached a
# metadata address, an allow to a host outside a multi-rule policy under
# --policy, an allow whose URL names another host, a URL query without '=',
# a stated completion reason that its contents do not give.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
SE() { "$AG_BIN" study-egress "$@"; }
printf '%s' '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"api.example.com","port":443},{"host":"upload.example.com","port":443}]}' >"$T/two.json"
D2=$(SE policy digest "$T/two.json")
python3 - "$AG_ROOT/tests/egress-corpus/manifests.jsonl" "$T" "$D2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    if c["id"].endswith("-complete"):
        m = c["doc"]
        break
e = m["events"][0]
def put(name, doc):
    json.dump(doc, open(sys.argv[2] + "/" + name, "w"))
put("m.json", m)
put("m-metadata.json", dict(m, events=[dict(e, resolved_addresses=["169.254.169.254"])]))
evil = {"host": "evil.example.org", "port": 443}
put("m-outside.json", dict(m, approved_destination=None, egress_policy_digest=sys.argv[3],
                           events=[dict(e, requested=evil, effective=evil)]))
put("m-url.json", dict(m, events=[dict(e, url="https://evil.example.org/")]))
put("m-query.json", dict(m, events=[dict(e, url="https://api.example.com/v1?SECRETVALUE")]))
put("m-reason.json", dict(m, completion=dict(m["completion"], reason="liveness_unverified")))
PY
t_ok "the corpus's complete manifest validates" SE manifest validate "$T/m.json"
ag_must_fail 2 egress.manifest.completion_mismatch "an allow to the metadata address is not complete" \
	SE manifest validate "$T/m-metadata.json"
t_like "it is a contradictory event" "$AG_OUT" 'event_contradictory'
t_ok "outside a multi-rule policy, without --policy: nothing says otherwise" \
	SE manifest validate "$T/m-outside.json"
ag_must_fail 2 egress.manifest.completion_mismatch "outside a multi-rule policy, with --policy: not complete" \
	SE manifest validate "$T/m-outside.json" --policy "$T/two.json"
t_like "it is an unexpected destination" "$AG_OUT" 'unexpected_destination'
ag_must_fail 2 egress.manifest.completion_mismatch "an allow whose URL names another host is not complete" \
	SE manifest validate "$T/m-url.json"
ag_must_fail 2 egress.manifest.query "a URL query without '=' is refused" \
	SE manifest validate "$T/m-query.json"
t_unlike "the refusal does not echo the query" "$AG_OUT" 'SECRETVALUE'
ag_must_fail 2 egress.manifest.completion_mismatch "a stated reason its contents do not give is refused" \
	SE manifest validate "$T/m-reason.json"
t_done
