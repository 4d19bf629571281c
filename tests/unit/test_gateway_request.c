/*
 * The egress gateway's request-head parser (src/lib/egress/request.c):
 * every request-smuggling form is refused with its own word and the word
 * sealed in the manifest, accepted heads give the one framing the gateway
 * relays, and the manifest's event reason is a closed vocabulary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/egress/manifest.h"
#include "lib/egress/policy.h"
#include "lib/egress/request.h"

/* Parses `text` (a head ending in CRLF CRLF) in a copy of its own. */
static int parse(const char *text, size_t n, struct ag_egress_request *r, char **keep)
{
	char *h = ag_xmalloc(n + 1);
	memcpy(h, text, n);
	h[n] = 0;
	int rc = ag_egress_request_parse(h, n, r);
	*keep = h;
	return rc;
}

#define GET "GET http://api.example.com/x HTTP/1.1\r\n"
#define POST "POST http://api.example.com/x HTTP/1.1\r\n"

static void test_smuggling_forms(void **state)
{
	(void)state;
	static const struct {
		const char *head, *detail, *sealed;
		int status;
	} t[] = {
	    /* a blank before the colon: some servers trim it, some keep the name */
	    {POST "Content-Length : 3\r\n\r\n", "header_name_whitespace", "request_smuggling", 400},
	    {POST "Transfer-Encoding : chunked\r\n\r\n", "header_name_whitespace",
	     "request_smuggling", 400},
	    {POST "Transfer-Encoding\t: chunked\r\n\r\n", "header_name_whitespace",
	     "request_smuggling", 400},
	    {GET "X-Any  : 1\r\n\r\n", "header_name_whitespace", "request_smuggling", 400},
	    /* signed, non-decimal, lists, leading zeros */
	    {POST "Content-Length: +3\r\n\r\n", "content_length_invalid", "request_smuggling", 400},
	    {POST "Content-Length: -1\r\n\r\n", "content_length_invalid", "request_smuggling", 400},
	    {POST "Content-Length: 0x3\r\n\r\n", "content_length_invalid", "request_smuggling",
	     400},
	    {POST "Content-Length: 3,3\r\n\r\n", "content_length_invalid", "request_smuggling",
	     400},
	    {POST "Content-Length: 3 3\r\n\r\n", "content_length_invalid", "request_smuggling",
	     400},
	    {POST "Content-Length: 03\r\n\r\n", "content_length_invalid", "request_smuggling", 400},
	    {POST "Content-Length: 00\r\n\r\n", "content_length_invalid", "request_smuggling", 400},
	    {POST "Content-Length: 3.0\r\n\r\n", "content_length_invalid", "request_smuggling",
	     400},
	    {POST "Content-Length:\r\n\r\n", "content_length_invalid", "request_smuggling", 400},
	    /* duplicate and conflicting framing */
	    {POST "Content-Length: 3\r\nContent-Length: 3\r\n\r\n", "content_length_duplicate",
	     "request_smuggling", 400},
	    {POST "Content-Length: 0\r\ncontent-length: 5\r\n\r\n", "content_length_duplicate",
	     "request_smuggling", 400},
	    {POST "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
	     "content_length_with_transfer_encoding", "request_smuggling", 400},
	    {POST "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
	     "content_length_with_transfer_encoding", "request_smuggling", 400},
	    {POST "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	     "transfer_encoding_duplicate", "request_smuggling", 400},
	    {POST "Transfer-Encoding: gzip, chunked\r\n\r\n", "transfer_encoding_invalid",
	     "request_smuggling", 400},
	    {POST "Transfer-Encoding: xchunked\r\n\r\n", "transfer_encoding_invalid",
	     "request_smuggling", 400},
	    {POST "Transfer-Encoding: chunked, identity\r\n\r\n", "transfer_encoding_invalid",
	     "request_smuggling", 400},
	    {POST "Transfer-Encoding:\r\n\r\n", "transfer_encoding_invalid", "request_smuggling",
	     400},
	    /* obs-fold continuation lines */
	    {GET "X: a\r\n b\r\n\r\n", "obs_fold", "request_smuggling", 400},
	    {POST "Content-Length: 1\r\n\t2\r\n\r\n", "obs_fold", "request_smuggling", 400},
	    {GET " X: a\r\n\r\n", "obs_fold", "request_smuggling", 400},
	    /* valid HTTP the gateway does not relay */
	    {POST "Transfer-Encoding: chunked\r\n\r\n", "transfer_encoding_unsupported",
	     "request_unsupported", 400},
	    {POST "Transfer-Encoding: Chunked\r\n\r\n", "transfer_encoding_unsupported",
	     "request_unsupported", 400},
	    /* too large */
	    {POST "Content-Length: 1000000000001\r\n\r\n", "content_length_too_large",
	     "request_oversized", 413},
	    {POST "Content-Length: 99999999999999999999999\r\n\r\n", "content_length_too_large",
	     "request_oversized", 413},
	    /* not a header line */
	    {GET "NoColon\r\n\r\n", "header_malformed", "request_malformed", 400},
	    {GET ": empty-name\r\n\r\n", "header_malformed", "request_malformed", 400},
	    {GET "Bad(Name): 1\r\n\r\n", "header_malformed", "request_malformed", 400},
	    /* bytes and the request line */
	    {"GARBAGE\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {"GET  http://a.example/ HTTP/1.1\r\n\r\n", "malformed_request", "request_malformed",
	     400},
	    {"get http://a.example/ HTTP/1.1\r\n\r\n", "malformed_request", "request_malformed",
	     400},
	    {"GET http://a.example/ HTTP/2.0\r\n\r\n", "malformed_request", "request_malformed",
	     400},
	    {"GET\thttp://a.example/ HTTP/1.1\r\n\r\n", "malformed_request", "request_malformed",
	     400},
	    {GET "X: a\nY: b\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {GET "X: a\rY: b\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {GET "X: \x7f\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {GET "X: \xc3\xa9\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {GET "\r\nX: behind the head\r\n\r\n", "malformed_request", "request_malformed", 400},
	    {GET "X: a\r\n", "malformed_request", "request_malformed", 400},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_egress_request r;
		char *h;
		int rc = parse(t[i].head, strlen(t[i].head), &r, &h);
		if (rc == 0 || !r.detail || strcmp(r.detail, t[i].detail))
			print_error("case %zu: %s\n", i, r.detail ? r.detail : "(accepted)");
		assert_int_equal(rc, -1);
		assert_string_equal(r.detail, t[i].detail);
		assert_string_equal(ag_egress_refusal_reason(r.detail), t[i].sealed);
		assert_true(ag_egress_event_reason_known(t[i].sealed));
		assert_int_equal(r.status, t[i].status);
		assert_non_null(r.status_text);
		free(h);
	}
}

/* A refusal after the request line still names the request. */
static void test_refusal_keeps_request_line(void **state)
{
	(void)state;
	struct ag_egress_request r;
	char *h;
	const char *s = POST "Content-Length: +3\r\n\r\n";
	assert_int_equal(parse(s, strlen(s), &r, &h), -1);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.target, "http://api.example.com/x");
	free(h);
	/* an embedded NUL is refused before anything else */
	static const char nul[] = "GET http://a.example/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
	assert_int_equal(parse(nul, sizeof(nul) - 1, &r, &h), -1);
	assert_string_equal(r.detail, "malformed_request");
	assert_null(r.method);
	free(h);
}

static void test_accepted_heads(void **state)
{
	(void)state;
	static const struct {
		const char *head;
		int64_t cl;
		size_t n_headers;
	} t[] = {
	    {GET "\r\n", -1, 0},
	    {GET "Host: api.example.com\r\nAccept: */*\r\n\r\n", -1, 2},
	    {POST "Content-Length: 0\r\n\r\n", 0, 1},
	    {POST "content-length:\t 12 \t\r\n\r\n", 12, 1},
	    {POST "Content-Length: 1000000000000\r\n\r\n", 1000000000000LL, 1},
	    {"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n", -1, 1},
	    {"GET http://a.example/ HTTP/1.0\r\nX-Tab:\tv\r\n\r\n", -1, 1},
	    {GET "Content-Lengthy: +3\r\nTransfer-Encodings: gzip\r\n\r\n", -1, 2},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_egress_request r;
		char *h;
		int rc = parse(t[i].head, strlen(t[i].head), &r, &h);
		if (rc != 0)
			print_error("case %zu: %s\n", i, r.detail);
		assert_int_equal(rc, 0);
		assert_null(r.detail);
		assert_int_equal(r.content_length, t[i].cl);
		assert_int_equal(r.n_headers, t[i].n_headers);
		/* the header block is whole lines, without the final empty one */
		assert_true(r.headers_len == 0 ||
			    memcmp(r.headers + r.headers_len - 2, "\r\n", 2) == 0);
		assert_true(r.headers + r.headers_len + 2 == h + strlen(t[i].head));
		free(h);
	}
}

static void test_header_line_bound(void **state)
{
	(void)state;
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	fputs(GET, f);
	for (int i = 0; i < AG_GW_HEADER_LINES_MAX; i++)
		fprintf(f, "X-%d: v\r\n", i);
	fputs("\r\n", f);
	fclose(f);
	struct ag_egress_request r;
	char *h;
	assert_int_equal(parse(s, n, &r, &h), 0);
	free(h);
	free(s);
	f = open_memstream(&s, &n);
	fputs(GET, f);
	for (int i = 0; i <= AG_GW_HEADER_LINES_MAX; i++)
		fprintf(f, "X-%d: v\r\n", i);
	fputs("\r\n", f);
	fclose(f);
	assert_int_equal(parse(s, n, &r, &h), -1);
	assert_string_equal(r.detail, "too_many_headers");
	assert_string_equal(ag_egress_refusal_reason(r.detail), "request_oversized");
	assert_int_equal(r.status, 431);
	free(h);
	free(s);
}

/* Every word the gateway refuses with maps into the closed vocabulary;
 * words outside it map to nothing. */
static void test_refusal_vocabulary(void **state)
{
	(void)state;
	static const struct {
		const char *detail, *sealed;
	} t[] = {
	    {"header_timeout", "request_slow"},
	    {"header_too_large", "request_oversized"},
	    {"unsupported_request", "request_unsupported"},
	    {"invalid_url", "invalid_url"},
	    {"client_closed_before_request", "request_incomplete"},
	    {"connection_limit", "connection_limit"},
	    {"evidence_lost", "evidence_lost"},
	    {"socket_failed", "gateway_error"},
	    {"checked_address_invalid", "gateway_error"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		assert_string_equal(ag_egress_refusal_reason(t[i].detail), t[i].sealed);
		assert_true(ag_egress_event_reason_known(t[i].sealed));
	}
	assert_null(ag_egress_refusal_reason("connect_failed"));
	assert_null(ag_egress_refusal_reason(NULL));
	assert_true(ag_egress_event_reason_known("approved_destination"));
	assert_true(ag_egress_event_reason_known("resolution_uncertain"));
	assert_true(ag_egress_event_reason_known("unknown"));
	assert_false(ag_egress_event_reason_known("resolution_required"));
	assert_false(ag_egress_event_reason_known("header_name_whitespace"));
	assert_false(ag_egress_event_reason_known("x"));
	assert_false(ag_egress_event_reason_known(NULL));
}

/* ---- the manifest seals the word, and only words of the vocabulary ---- */

static struct ag_egress_policy *policy(void)
{
	static const char doc[] =
	    "{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"
	    "\"destinations\":[{\"host\":\"api.example.com\",\"port\":80}]}";
	struct ag_egress_policy *p = NULL;
	struct ag_error *e = NULL;
	if (ag_egress_policy_parse(doc, strlen(doc), &p, &e) < 0)
		print_error("%s: %s\n", e->reason, e->msg);
	assert_non_null(p);
	return p;
}

static json_t *event_with_reason(const char *reason)
{
	struct ag_egress_event ev = {.protocol = "http", .url = "http://api.example.com/x"};
	struct ag_egress_decision d = {.allow = false, .reason = reason, .port = 80, .rule = 0};
	snprintf(d.host, sizeof(d.host), "api.example.com");
	struct ag_egress_event_meta meta = {.event_type = "request",
					    .started = "2026-12-01T10:00:00Z",
					    .ended = "2026-12-01T10:00:01Z",
					    .evidence_complete = true};
	return ag_egress_event_record(&ev, &d, &meta);
}

static json_t *build(struct ag_egress_policy *p, json_t *events)
{
#define HEX64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	static const char h[] = HEX64;
	json_t *id = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s}", "configured_reference",
			       "127.0.0.1:5000/gw@sha256:" HEX64, "registry_digest",
			       "127.0.0.1:5000/gw@sha256:" HEX64, "local_image_id", "sha256:" HEX64,
			       "container_bound_image_id", "sha256:" HEX64, "platform",
			       "pull_policy", "never", "cache_status", "local");
	struct ag_egress_manifest_inputs in = {
	    .plan_digest = h,
	    .profile_hash = h,
	    .fixture_hash = h,
	    .trial_id = "trial-1",
	    .authorization_id = "auth-1",
	    .policy = p,
	    .gateway_image_identity = id,
	    .events = events,
	    .gateway_state = "running",
	    .gateway_evidence_complete = true,
	    .cleanup_agent = "removed",
	    .cleanup_gateway = "removed",
	    .cleanup_internal_network = "removed",
	    .cleanup_outbound_network = "removed",
	    .liveness_verified = true,
	};
	json_t *m = NULL;
	struct ag_error *e = NULL;
	if (ag_egress_manifest_build(&in, &m, &e) < 0)
		print_error("%s: %s\n", e->reason, e->msg);
	assert_non_null(m);
	json_decref(id);
	return m;
}

static void test_manifest_seals_reason(void **state)
{
	(void)state;
	struct ag_egress_policy *p = policy();
	static const char *const words[] = {
	    "request_smuggling", "request_malformed",	"request_oversized",
	    "request_slow",	 "request_unsupported", "request_incomplete",
	    "connection_limit",	 "evidence_lost",	"gateway_error"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(words); i++) {
		json_t *events = json_array();
		json_array_append_new(events, event_with_reason(words[i]));
		json_t *m = build(p, events);
		const json_t *ev = json_array_get(json_object_get(m, "events"), 0);
		assert_string_equal(json_string_value(json_object_get(ev, "reason")), words[i]);
		const json_t *co = json_object_get(m, "completion");
		assert_string_equal(json_string_value(json_object_get(co, "status")), "failed");
		assert_string_equal(json_string_value(json_object_get(co, "reason")),
				    "destination_denied");
		/* and the written manifest validates with its word */
		char *text = NULL;
		size_t len = 0;
		struct ag_error *e = NULL;
		assert_int_equal(ag_egress_manifest_dump(m, &text, &len, &e), 0);
		struct ag_egress_completion c;
		assert_int_equal(ag_egress_manifest_validate(text, len, p, &c, &e), 0);
		free(text);
		json_decref(m);
		json_decref(events);
	}
	ag_egress_policy_free(p);
}

static void test_manifest_refuses_unknown_reason(void **state)
{
	(void)state;
	struct ag_egress_policy *p = policy();
	/* The builder turns a word outside the vocabulary into "unknown" and
	 * marks the event incomplete: no made-up reason is ever sealed. */
	json_t *events = json_array();
	json_array_append_new(events, event_with_reason("made_up_reason"));
	json_t *m = build(p, events);
	const json_t *ev = json_array_get(json_object_get(m, "events"), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "reason")), "unknown");
	assert_true(json_is_false(json_object_get(ev, "evidence_complete")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(m, "completion"), "reason")),
	    "event_evidence_incomplete");
	/* The validator refuses a manifest that states one. */
	json_object_set_new((json_t *)ev, "reason", json_string("made_up_reason"));
	char *text = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	assert_int_equal(ag_egress_manifest_dump(m, &text, &len, &e), 0);
	struct ag_egress_completion c;
	assert_int_equal(ag_egress_manifest_validate(text, len, p, &c, &e), -1);
	assert_string_equal(e->reason, "egress.manifest.status");
	assert_string_equal(e->key, "events[0].reason");
	ag_error_free(e);
	free(text);
	json_decref(m);
	json_decref(events);
	ag_egress_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_smuggling_forms),
	    cmocka_unit_test(test_refusal_keeps_request_line),
	    cmocka_unit_test(test_accepted_heads),
	    cmocka_unit_test(test_header_line_bound),
	    cmocka_unit_test(test_refusal_vocabulary),
	    cmocka_unit_test(test_manifest_seals_reason),
	    cmocka_unit_test(test_manifest_refuses_unknown_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
