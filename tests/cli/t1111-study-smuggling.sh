#!/usr/bin/env bash
# t1111: request smuggling inside a real `agentguard study-egress run`
# (issue 19 item 3). The agent, alone on the study network, sends framing
# forms that two HTTP parsers can read differently to the approved canary
# through the gateway (tests/gear/agtest-net `probe send`, the bytes as
# given). Each is refused 400 with its reason; the canary, which logs every
# connection it accepts, sees none of them (a well-framed control POST in
# the same trial does reach it); and the SEALED manifest (its SHA-256 is in
# the artifact) keeps each refusal's word, request_smuggling, not an interim
# destination-check word. The trial is failed (destination_denied).
# Creates Docker networks: run under the study-tests lock.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"
require_docker
ST_TEST=t1111
. "$(dirname "$0")/lib-study-net.sh"
st_start
st_policy '{"host":"canary.test","port":80,"test_only":true}'

# name | gateway_reason | header lines (the agent decodes \r \n \t)
forms=(
	'cl-plus|content_length_invalid|Content-Length: +3'
	'cl-leading-zero|content_length_invalid|Content-Length: 03'
	'cl-blank-colon|header_name_whitespace|Content-Length : 3'
	'te-blank-colon|header_name_whitespace|Transfer-Encoding : chunked'
	'cl-cl|content_length_duplicate|Content-Length: 3\r\nContent-Length: 3'
	'cl-te|content_length_with_transfer_encoding|Content-Length: 3\r\nTransfer-Encoding: chunked'
	'te-list|transfer_encoding_invalid|Transfer-Encoding: gzip, chunked'
	'obs-fold|obs_fold|Content-Length: 1\r\n\t2'
)
tail='\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled-1111 HTTP/1.1\r\nHost: canary.test\r\n\r\n'
script="\$P probe send \$GW 'POST http://canary.test/ok-1111 HTTP/1.1\\r\\nContent-Length: 3\\r\\n\\r\\nabc'"$'\n'
for f in "${forms[@]}"; do
	IFS='|' read -r name _ hdrs <<<"$f"
	script+="\$P probe send \$GW 'POST http://canary.test/$name HTTP/1.1\\r\\n$hdrs$tail'"$'\n'
done
st_agent smuggle "$script"
line() { grep -F "probe send POST http://canary.test/$1 " <<<"$ST_AGENT_OUT" | head -1; }

t_like "control: a well-framed POST reaches the approved canary" "$(line ok-1111)" \
	'reached status=200'
for f in "${forms[@]}"; do
	IFS='|' read -r name detail _ <<<"$f"
	t_like "$name: refused 400 naming $detail" "$(line "$name")" \
		"blocked status=400 reason=$detail "
done
t_is "the canary saw the control request only" \
	"$(st_log canary http 80 | sed -n 's/.* line=\([A-Z]* [^ ]*\).*/\1/p')" "POST /ok-1111"

# The gateway's own record of each refusal: a deny, its detail, the word.
t_is "the gateway recorded each refusal with its detail and word, connecting nowhere" \
	"$(jq -r 'select(.record=="decision" and .event.decision=="deny")|[.gateway_reason,.event.reason,(.connected_address//"none")]|join(" ")' "$ST_EVENTS" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')" \
	"1 content_length_duplicate request_smuggling none;2 content_length_invalid request_smuggling none;1 content_length_with_transfer_encoding request_smuggling none;2 header_name_whitespace request_smuggling none;1 obs_fold request_smuggling none;1 transfer_encoding_invalid request_smuggling none;"

# The sealed manifest keeps the word (never resolution_uncertain).
REPORT=$ST_W/$(jq -r '.report' <<<"$ST_RUN_SUMMARY")
t_is "the artifact seals the manifest's SHA-256" \
	"$(sha256sum <"$ST_MANIFEST" | cut -d' ' -f1)" \
	"$(jq -r '.study_egress.manifest_sha256' "$REPORT")"
t_is "the sealed manifest: eight denies, each request_smuggling; one allow" \
	"$(jq -r '[.events[]|"\(.decision) \(.reason)"]|group_by(.)|map("\(length) \(.[0])")|join(";")' "$ST_MANIFEST")" \
	"1 allow approved_destination;8 deny request_smuggling"
t_unlike "... no interim destination-check word" "$(jq -c '.events' "$ST_MANIFEST")" \
	'resolution_uncertain|unsupported_protocol'
st_check_manifest "smuggling trial" failed destination_denied
t_is "the run failed (exit 1)" "$ST_RUN_RC" 1
st_check_run_gone "smuggling trial"

st_teardown
t_is "nothing is left: no container, network or bridge device of this test" "$(st_leftovers)" ""
t_done
