#!/usr/bin/env bash
# t0902: `agentguard runtime-image vuln-policy` decides every case of the
# stage-1 HIGH/CRITICAL policy from fixture Trivy reports (no scanner runs):
# no report is "not_scanned" (exit 1), never clean; CRITICAL fails; a
# fixable HIGH fails; an unfixed HIGH fails unless a gateway exception
# matches it exactly; agent exceptions, expired and stale exceptions fail;
# malformed reports and exceptions are input errors (exit 2, named).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
. "$(dirname "$0")/lib-runtime-images.sh"

V="$AG_ROOT/tests/fixtures/runtime-images/vuln"
vp() { "$AG_BIN" runtime-image vuln-policy "$@"; }
# decide NAME EXIT STATUS FAILURE_REASON ARGS...: one decision.
decide() {
	local name=$1 want_rc=$2 status=$3 reason=$4
	shift 4
	t_run vp "$@"
	t_is "$name: exit $want_rc" "$AG_RC" "$want_rc"
	local out=$AG_OUT
	t_like "$name: status $status" "$AG_OUT" "\"status\":\"$status\""
	t_like "$name: scanner failures never suppressed" "$AG_OUT" '"scanner_failures_suppressed":false'
	if [ -n "$reason" ]; then
		t_like "$name: failure $reason" "$AG_OUT" "\"reason\":\"$reason\""
	fi
	cli_conforms "$name: the CLI output schema" agentguard.runtime-image-vuln-policy \
		"$(vp "$@" 2>/dev/null || true)"
	AG_OUT=$out
}

decide "no report" 1 not_scanned "" --exceptions "$V/exceptions-none.json"
decide "clean report" 0 pass "" --exceptions "$V/exceptions-none.json" --role gateway "$V/report-clean.json"
decide "LOW/MEDIUM only" 0 pass "" --exceptions "$V/exceptions-none.json" --role agent "$V/report-low-medium.json"
decide "CRITICAL" 1 fail critical --exceptions "$V/exceptions-none.json" --role gateway "$V/report-critical.json"
decide "CRITICAL with a fix" 1 fail critical --exceptions "$V/exceptions-none.json" --role agent "$V/report-critical-fixed.json"
decide "fixable HIGH" 1 fail fixable_high --exceptions "$V/exceptions-none.json" --role gateway "$V/report-high-fixable.json"
decide "unfixed HIGH, no exception" 1 fail unexcepted_high --exceptions "$V/exceptions-none.json" --role gateway "$V/report-high-unfixed.json"
decide "unfixed HIGH, matching gateway exception" 0 pass "" --exceptions "$V/exceptions-gateway-high.json" --role gateway "$V/report-high-unfixed.json"
t_like "the excepted HIGH is counted" "$AG_OUT" '"high_excepted":1'
decide "unfixed HIGH on the agent (gateway exception does not apply)" 1 fail unexcepted_high \
	--exceptions "$V/exceptions-gateway-high.json" --role agent "$V/report-high-unfixed.json" --role gateway "$V/report-clean.json"
decide "exception for another installed version: unmatched" 1 fail unexcepted_high \
	--exceptions "$V/exceptions-gateway-high.json" --role gateway "$V/report-high-unfixed-other-version.json"
t_like "...and the exception is stale" "$AG_OUT" '"reason":"stale_exception"'
decide "stale exception" 1 fail stale_exception --exceptions "$V/exceptions-gateway-high.json" --role gateway "$V/report-clean.json"
decide "expired exception" 1 fail expired_exception --exceptions "$V/exceptions-expired.json" --role gateway "$V/report-high-unfixed.json"
t_like "...and the HIGH stays unexcepted" "$AG_OUT" '"reason":"unexcepted_high"'
decide "agent exception" 1 fail agent_exception_forbidden --exceptions "$V/exceptions-agent.json" --role agent "$V/report-high-unfixed.json"
decide "agent exception, even with no report" 1 fail agent_exception_forbidden --exceptions "$V/exceptions-agent.json"

# Malformed input is an error, never a decision.
ag_must_fail 2 images.vuln.report_results "a report without Results is not clean" \
	vp --exceptions "$V/exceptions-none.json" --role gateway "$V/report-no-results.json"
ag_must_fail 2 images.vuln.report_schema "a report of another schema is refused" \
	vp --exceptions "$V/exceptions-none.json" --role gateway "$V/report-schema-1.json"
ag_must_fail 2 images.vuln.finding_shape "a finding without severity is refused" \
	vp --exceptions "$V/exceptions-none.json" --role gateway "$V/report-finding-no-severity.json"
ag_must_fail 2 images.exceptions.approved_future "an approval in the future is refused" \
	vp --exceptions "$V/exceptions-future-approval.json"
ag_must_fail 2 images.exceptions.advisory "a non-HTTPS advisory is refused" \
	vp --exceptions "$V/exceptions-http-advisory.json"
ag_must_fail 2 images.exceptions.reachability "a reachability outside the list is refused" \
	vp --exceptions "$V/exceptions-bad-reachability.json"
ag_must_fail 2 images.exceptions.triggers "an exception without re-evaluation triggers is refused" \
	vp --exceptions "$V/exceptions-no-triggers.json"
ag_must_fail 2 images.exceptions.id "an exception that is not an exact CVE is refused" \
	vp --exceptions "$V/exceptions-not-cve.json"
ag_must_fail 2 images.exceptions.unknown_key "an unknown key in an exception is refused" \
	vp --exceptions "$V/exceptions-unknown-key.json"
ag_must_fail 2 images.exceptions.schema "an exceptions file of another schema is refused" \
	vp --exceptions "$V/exceptions-wrong-schema.json"
ag_must_fail 2 usage "a report needs a --role first" vp --exceptions "$V/exceptions-none.json" "$V/report-clean.json"
ag_must_fail 2 usage "--exceptions is required" vp --role gateway "$V/report-clean.json"
j=$(vp --exceptions "$V/exceptions-wrong-schema.json" 2>/dev/null || true)
t_is "an input error prints no policy document" "$j" ""
t_done
