/*
 * manifest.h: the live-study egress manifest
 * `agentguard.live-study-egress-manifest` v1 (upstream-reference 9.3,
 * data/schemas/live-study-egress-manifest-v1.schema.json,
 * docs/study-egress.md): build it from a trial's inputs and the gateway's
 * event records, sanitize and bound it, write it canonically, and
 * validate one by recomputing its completion.
 *
 * COMPLETION (first rule that applies wins):
 *   events not a list ................................ incomplete events_missing
 *   gateway image identity missing or inconsistent ... incomplete gateway_identity_missing
 *   an aggregate key (or the overflow) with a deny ... failed     destination_denied
 *     (not the gateway's own loss: evidence_lost, gateway_error)
 *   an allowed aggregate key outside the approved .... failed     unexpected_destination
 *     destination or (with a policy) its rules
 *   gateway state "crashed" .......................... failed     gateway_crashed
 *   gateway state not "running" ...................... incomplete gateway_not_running
 *   gateway evidence incomplete or truncated, or ..... incomplete gateway_evidence_incomplete
 *     aggregates not complete, or a key of the
 *     gateway's own loss, or allowed requests only
 *     the aggregates' overflow counted
 *   cleanup not complete (or contradictory) .......... incomplete cleanup_incomplete
 *   liveness not verified ............................ incomplete liveness_unverified
 *   an event's evidence incomplete or truncated ...... incomplete event_evidence_incomplete
 *   an event contradicting itself .................... incomplete event_contradictory
 *     (allow without "approved_destination" or deny with it, an allow
 *      whose resolution is not stable and single, requested != effective,
 *      an allow whose address is not safe: see ag_egress_manifest_completion)
 *   a decision other than allow/deny ................. incomplete decision_unknown
 *   any deny ......................................... failed     destination_denied
 *     ("an unexpected destination or bypass was blocked")
 *   an allow to other than approved_destination, or .. failed     unexpected_destination
 *     (with a policy) to a destination it has no rule for
 *   otherwise ........................................ complete   complete
 * success_eligible is true exactly for "complete".
 *
 * AGGREGATES (optional; every study run writes them): the gateway's counts
 * per (decision, host, port, reason), complete whatever the agent sends:
 *   "aggregates": {"keys": [{"decision","host","port","reason","requests",
 *                  "bytes_in","bytes_out"}...] (at most AG_GW_AGG_KEYS_MAX),
 *                  "overflow": {"requests_allowed","requests_denied",
 *                  "bytes_in","bytes_out"} (the keys past the bound),
 *                  "complete": B, "sampled_out": N}
 * With them, "events" is a sample of the individual records and
 * "sampled_out" counts the records left out of it.
 *
 * CREDENTIAL INJECTION (optional; a policy with inject rules): an allowed
 * CONNECT event carries "tls": {"mode": "terminated"|"spliced"|
 * "not_established", "injected_header": NAME|null}, and the manifest lists the destinations
 * the gateway terminated: "tls_terminated": [{"host","port","header"}].
 * Validated against the policy (egress.manifest.tls): the list is exactly
 * its inject rules; a terminated event is to one of them with its header
 * (never another header, never to a host without inject); an allowed
 * CONNECT to an inject rule's host is never spliced; a header is named
 * only on a terminated tunnel; every allowed CONNECT carries "tls". Only
 * the recorded events are judged (the aggregates carry no "tls").
 *
 * SANITIZING: every string passes the one sanitizer's egress profile
 * (base/sanitize.h, AG_SANITIZE_EGRESS, bound AG_EGRESS_MANIFEST_MAX_STRING):
 * cut at a character boundary; a URL loses its query and fragment; any
 * other "?k=v" run becomes [REDACTED_QUERY]; a private host path (/home/,
 * /root/, /tmp/, /Users/, ...) becomes [REDACTED_PATH]. The validator
 * refuses any string the sanitizer would have changed.
 */
#ifndef AG_EGRESS_MANIFEST_H
#define AG_EGRESS_MANIFEST_H

#include "lib/base/ag.h"
#include "lib/egress/decision.h"

#include <jansson.h>

struct ag_error;
struct ag_egress_policy;

#define AG_EGRESS_MANIFEST_SCHEMA "agentguard.live-study-egress-manifest"
#define AG_EGRESS_MANIFEST_FILE "live-study-egress-manifest.json"

struct ag_egress_completion {
	const char *status; /* "complete" | "incomplete" | "failed" */
	const char *reason; /* token of the table above */
	bool success_eligible;
};

/* Recomputes the completion of a manifest value (any shape). With a
 * policy, every allowed event must name one of its rules
 * (unexpected_destination otherwise) and its address must be safe for
 * that rule; without one, at least global or documentation. */
void ag_egress_manifest_completion(const json_t *m, const struct ag_egress_policy *policy,
				   struct ag_egress_completion *c);

/* What a gateway knows about one event besides the decision. */
struct ag_egress_event_meta {
	const char *event_type; /* request | redirect | new_destination | blocked_route */
	const char *route;	/* blocked_route kind, or NULL */
	int64_t bytes_in, bytes_out;
	const char *started, *ended; /* RFC 3339 UTC, e.g. 2026-11-30T13:00:00Z */
	bool evidence_complete, evidence_truncated;
	/* an allowed CONNECT: "terminated" (an inject rule's) or "spliced";
	 * NULL: no "tls" in the event. injected_header: the header name
	 * (lower case) when one was added, else NULL. */
	const char *tls_mode, *injected_header;
};

/* One sanitized event record (the manifest's events[] item). */
json_t *ag_egress_event_record(const struct ag_egress_event *ev, const struct ag_egress_decision *d,
			       const struct ag_egress_event_meta *meta);

struct ag_egress_manifest_inputs {
	const char *plan_digest, *profile_hash, *fixture_hash; /* 64 hex each */
	const char *trial_id, *authorization_id;
	const struct ag_egress_policy *policy;
	const json_t *gateway_image_identity; /* 7-field object, or NULL */
	const json_t *events;		      /* gateway event records (list) */
	const json_t *aggregates;	      /* {keys, overflow, complete}, or NULL */
	int64_t sampled_out;		      /* records the gateway left out of its sample */
	const char *gateway_state;	      /* running exited crashed not_started unknown */
	bool gateway_evidence_complete, gateway_evidence_truncated;
	const char *cleanup_agent, *cleanup_gateway, *cleanup_internal_network,
	    *cleanup_outbound_network; /* removed already_absent not_created incomplete */
	bool liveness_verified;
};

/*
 * Builds the manifest: sanitizes every string, keeps at most
 * AG_EGRESS_MANIFEST_MAX_EVENTS events (more marks the gateway evidence
 * truncated), turns an event reason outside the closed vocabulary
 * (request.h, ag_egress_event_reason_known) into "unknown" and marks that
 * event's evidence incomplete, fills approved_destination for a single-rule policy, and
 * computes completion. The result passes ag_egress_manifest_validate.
 * Reasons: every egress.manifest.* of the validator.
 */
int ag_egress_manifest_build(const struct ag_egress_manifest_inputs *in, json_t **out,
			     struct ag_error **err);

/* Canonical bytes (sorted keys, compact, ASCII) of a manifest, bounded. */
int ag_egress_manifest_dump(const json_t *m, char **out, size_t *len, struct ag_error **err);

/*
 * Validates a manifest document: size, JSON, shape bounds (depth, lists,
 * keys, strings, numbers), sanitization, every field (an event's reason
 * in the closed vocabulary, else .status), and the stated
 * completion against the recomputed one. With `policy`, the policy digest
 * and approved destination must match it. *c receives the recomputed
 * completion (also on a completion mismatch). AG_E_CONFIG / AG_E_LIMIT,
 * err->key the JSON path, reasons:
 *   egress.manifest.size .json .depth .list .keys .string .number .query
 *   .private_path .type .unknown_key .missing .schema .version .hash .id
 *   .identity .event .status .completion_mismatch .policy_digest
 *   .approved_destination
 */
int ag_egress_manifest_validate(const char *data, size_t len, const struct ag_egress_policy *policy,
				struct ag_egress_completion *c, struct ag_error **err);

/*
 * The egress_manifest check of `evidence verify` (plugged into verify.h by
 * the CLI): when the artifact records a study run's manifest, the file
 * AG_EGRESS_MANIFEST_FILE in run_fd must be an O_NOFOLLOW regular file of
 * at most AG_EGRESS_MANIFEST_MAX_BYTES whose SHA-256 is the recorded one,
 * and a manifest that validates. An artifact without study_egress, or whose
 * study wrote no manifest (both fields absent), passes. Reasons:
 * evidence.egress_manifest.symlink/.not_regular/.missing/.too_large/
 * .mismatch/.invalid, or the validator's own. The gateway's stream and
 * aggregates files the artifact records (study_egress.gateway_stream,
 * .gateway_aggregates) must have the recorded SHA-256 and length:
 * evidence.egress_stream.symlink/.not_regular/.missing/.too_large/.mismatch.
 */
int ag_egress_manifest_check_run(int run_fd, const json_t *artifact, struct ag_error **err);

#endif
