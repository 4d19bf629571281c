#!/usr/bin/env bash
# agentguard-gateway refuses every request-smuggling form on real sockets
# (issue 19 item 3): each is answered 400 (413 for a length over the
# bound) naming its reason, the gateway's record seals the reason word
# (request_smuggling, request_malformed, ...) instead of an interim
# destination-check word, and NOTHING reaches the approved upstream: the
# test's own loopback canary logs every connection it accepts, and its log
# is unchanged. A control request of the same shape, well framed, does
# reach it. Loopback only (tests/cli/lib-gateway.sh); no Docker.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-gateway.sh"

command -v python3 >/dev/null || skip_all "python3 is needed for the loopback fakes"
command -v jq >/dev/null || skip_all "jq is needed to read the evidence"

gw_fake http http
printf 'canary.test A 127.0.0.1\n' >"$T/table"
gw_fake dns dns --table "$T/table"
HP=$GW_PORT_http
cat >"$T/policy.json" <<EOF
{"schema": "agentguard.live-study-egress-policy", "schema_version": 1,
 "destinations": [{"host": "canary.test", "port": $HP, "test_only": true}]}
EOF
gw_start gw --test-allow-loopback --trial-id t1110 || exit 1
EV=$T/gw.jsonl
log_count() { wc -l <"$T/$1.log"; }
# The last decision record (the one of the request just sent).
last_rec() { jq -c 'select(.record=="decision")' "$EV" | tail -n 1; }
recs() { jq -s '[.[]|select(.record=="decision")]|length' "$EV"; }

# ---- control: a well-framed POST with a body reaches the canary ----
printf 'POST http://canary.test:%s/ok HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' "$HP" >"$T/ok"
before=$(log_count http)
t_like "a well-framed POST to the approved destination is relayed" "$(gw_raw "$T/ok")" 'CANARY-OK'
t_is "... the canary saw it (the listener records what reaches it)" \
	"$(($(log_count http) - before))" 1
for _ in $(seq 50); do [ "$(recs)" -ge 1 ] && break; sleep 0.1; done
t_is "... recorded as an allow" "$(last_rec | jq -r '[.event.decision,.event.reason]|join(" ")')" \
	"allow approved_destination"

# ---- every smuggling form: refused, reason sealed, nothing forwarded ----
# name | expected status | gateway_reason | sealed event reason | header lines
cases=(
	"cl-plus|400|content_length_invalid|request_smuggling|Content-Length: +3"
	"cl-minus|400|content_length_invalid|request_smuggling|Content-Length: -1"
	"cl-hex|400|content_length_invalid|request_smuggling|Content-Length: 0x3"
	"cl-list|400|content_length_invalid|request_smuggling|Content-Length: 3,3"
	"cl-leading-zero|400|content_length_invalid|request_smuggling|Content-Length: 03"
	"cl-blank-colon|400|header_name_whitespace|request_smuggling|Content-Length : 3"
	"te-blank-colon|400|header_name_whitespace|request_smuggling|Transfer-Encoding : chunked"
	"te-tab-colon|400|header_name_whitespace|request_smuggling|Transfer-Encoding\t: chunked"
	"other-blank-colon|400|header_name_whitespace|request_smuggling|X-Pad : 1"
	"cl-cl|400|content_length_duplicate|request_smuggling|Content-Length: 3\r\nContent-Length: 3"
	"cl-cl-differ|400|content_length_duplicate|request_smuggling|Content-Length: 0\r\nContent-Length: 3"
	"cl-te|400|content_length_with_transfer_encoding|request_smuggling|Content-Length: 3\r\nTransfer-Encoding: chunked"
	"te-cl|400|content_length_with_transfer_encoding|request_smuggling|Transfer-Encoding: chunked\r\nContent-Length: 3"
	"te-te|400|transfer_encoding_duplicate|request_smuggling|Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
	"te-list|400|transfer_encoding_invalid|request_smuggling|Transfer-Encoding: gzip, chunked"
	"te-other|400|transfer_encoding_invalid|request_smuggling|Transfer-Encoding: xchunked"
	"obs-fold|400|obs_fold|request_smuggling|X-A: 1\r\n b"
	"obs-fold-cl|400|obs_fold|request_smuggling|Content-Length: 1\r\n\t2"
	"no-colon|400|header_malformed|request_malformed|NoColonHere"
	"cl-huge|413|content_length_too_large|request_oversized|Content-Length: 99999999999999"
	"te-chunked|400|transfer_encoding_unsupported|request_unsupported|Transfer-Encoding: chunked"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name status detail sealed hdrs <<<"$c"
	# The body makes each form's smuggled part concrete: "abc" for a
	# Content-Length reader, a chunk for a chunked one, then a second
	# request a desynchronised upstream would see.
	printf "POST http://canary.test:%s/%s HTTP/1.1\r\n$hdrs\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: canary.test\r\n\r\n" \
		"$HP" "$name" >"$T/$name"
	before=$(log_count http)
	n0=$(recs)
	out=$(gw_raw "$T/$name")
	t_like "$name: refused with $status" "$out" "^HTTP/1.1 $status "
	t_like "... the answer names the reason" "$out" "X-AgentGuard-Reason: $detail"
	for _ in $(seq 50); do [ "$(recs)" -gt "$n0" ] && break; sleep 0.1; done
	t_is "... one deny record, sealed reason $sealed, detail $detail" \
		"$(last_rec | jq -r '[.event.decision,.event.reason,.gateway_reason,.event.requested.host,(.connected_address//"none")]|join(" ")')" \
		"deny $sealed $detail canary.test none"
	t_is "... nothing reached the upstream" "$(($(log_count http) - before))" 0
done
t_unlike "the canary never saw a smuggled request" "$(cat "$T/http.log")" 'smuggled|cl-|te-|obs-|no-colon'

# ---- the records' events are the manifest's: the words validate ----
kill -TERM "$GW_PID"
rc=0
wait "$GW_PID" || rc=$?
t_is "SIGTERM: complete stream" "$rc" 0
h=$(printf 'a%.0s' {1..64})
jq -s --arg h "$h" --arg d "$(head -n 1 "$EV" | jq -r .policy_digest)" '{
  schema: "agentguard.live-study-egress-manifest", schema_version: 1,
  plan_digest: $h, profile_hash: $h, fixture_hash: $h, trial_id: "t1110",
  authorization_id: "auth-t1110", egress_policy_digest: $d,
  approved_destination: null,
  gateway_image_identity: {configured_reference: "127.0.0.1:5000/agentguard-gateway@sha256:\($h)",
    registry_digest: "127.0.0.1:5000/agentguard-gateway@sha256:\($h)", local_image_id: "sha256:\($h)",
    container_bound_image_id: "sha256:\($h)", platform: null, pull_policy: "never", cache_status: "local"},
  events: [.[] | select(.record == "decision" and .event.decision == "deny") | .event],
  gateway_status: {state: "running", evidence_complete: true, evidence_truncated: false},
  cleanup_status: {agent: "removed", gateway: "removed", internal_network: "removed",
    outbound_network: "removed", overall_complete: true},
  liveness_status: {verified: true},
  completion: {status: "failed", reason: "destination_denied", success_eligible: false}}' \
	"$EV" >"$T/manifest.json"
t_ok "a manifest of the refusals validates, failed (destination_denied)" \
	"$AG_BIN" study-egress manifest validate "$T/manifest.json"
t_is "... it seals each refusal's own word" \
	"$(jq -r '[.events[].reason]|group_by(.)|map("\(.[0])=\(length)")|join(" ")' "$T/manifest.json")" \
	"request_malformed=1 request_oversized=1 request_smuggling=18 request_unsupported=1"
jq '.events[0].reason = "made_up"' "$T/manifest.json" >"$T/bad.json"
t_run "$AG_BIN" study-egress manifest validate "$T/bad.json"
t_is "... and a word outside the vocabulary is refused (exit 2)" "$AG_RC" 2
t_like "... naming the field" "$AG_OUT" 'events\[0\]\.reason'
t_done
