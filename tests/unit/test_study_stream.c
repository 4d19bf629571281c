/*
 * test_study_stream.c: reading the gateway's evidence stream back
 * (ag_study_stream_parse). Only a whole stream counts as complete: a start
 * line naming this trial and policy, decision lines, one end line that says
 * complete and counts them. Everything else (lost end line, a count that
 * disagrees, another trial or policy, a line after the end, a line cut
 * short, an unknown record) is incomplete, so the study cannot pass.
 * The aggregates file (ag_study_aggregates_parse): a header slot and one
 * slot per key, counted whole; a slot of the wrong shape, a key count that
 * disagrees or a header that says incomplete leaves it incomplete.
 */
#include "lib/base/ag.h"
#include "lib/run/study.h"
#include "lib/base/redact.h"
#include "lib/base/bounds.h"

#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#define D "1111111111111111111111111111111111111111111111111111111111111111"
#define START "{\"record\":\"start\",\"trial_id\":\"t-1\",\"policy_digest\":\"" D "\"}\n"
#define ALLOW                                                                                      \
	"{\"record\":\"decision\",\"decision\":{\"decision\":\"allow\"},\"event\":{\"n\":1}}\n"
#define DENY "{\"record\":\"decision\",\"decision\":{\"decision\":\"deny\"},\"event\":{\"n\":2}}\n"
#define END(n) "{\"record\":\"end\",\"complete\":true,\"records\":" #n "}\n"

static bool complete(const char *s, size_t *events, size_t *denied)
{
	struct ag_study_stream st;
	json_t *ev = ag_study_stream_parse(s, strlen(s), "t-1", D, &st);
	assert_int_equal(json_array_size(ev), st.events > 256 ? 256 : json_array_size(ev));
	json_decref(ev);
	if (events)
		*events = st.events;
	if (denied)
		*denied = st.denied;
	return st.complete;
}

static void test_complete(void **state)
{
	(void)state;
	size_t n = 0, d = 0;
	assert_true(complete(START END(0), &n, &d));
	assert_int_equal(n, 0);
	assert_true(complete(START ALLOW DENY END(2), &n, &d));
	assert_int_equal(n, 2);
	assert_int_equal(d, 1);
	struct ag_study_stream st;
	json_t *ev = ag_study_stream_parse(START ALLOW DENY END(2), strlen(START ALLOW DENY END(2)),
					   "t-1", D, &st);
	assert_int_equal(json_array_size(ev), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ev, 1), "n")), 2);
	json_decref(ev);
}

static void test_incomplete(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",			     /* nothing at all */
	    START,		     /* the end line lost */
	    START ALLOW,	     /* killed mid-trial */
	    START ALLOW END(2),	     /* a record lost */
	    START ALLOW DENY END(1), /* the count disagrees */
	    START "{\"record\":\"end\",\"complete\":false,\"records\":0}\n", /* says so */
	    START END(0) ALLOW,			    /* a line after the end */
	    START END(0) END(0),		    /* two end lines */
	    START ALLOW "{\"record\":\"decision\"", /* a line cut short */
	    START "not json\n" END(0),
	    START "{\"record\":\"other\"}\n" END(0),
	    ALLOW END(1), /* no start line */
	    "{\"record\":\"start\",\"trial_id\":\"t-2\",\"policy_digest\":\"" D "\"}\n" END(0),
	    "{\"record\":\"start\",\"trial_id\":\"t-1\",\"policy_digest\":\"2" D "\"}\n" END(0),
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++)
		if (complete(bad[i], NULL, NULL))
			fail_msg("stream %zu was taken as complete", i);
}

/* What the agent put into a URL or a host (a secret the run knows) is
 * redacted in every record; a stream without one comes back byte for byte. */
/* One slot as the gateway writes it: the JSON, blanks, a newline. */
static void slot(char *out, const char *json)
{
	size_t n = strlen(json);
	memset(out, ' ', AG_GW_AGG_SLOT);
	memcpy(out, json, n);
	out[AG_GW_AGG_SLOT - 1] = '\n';
}

#define HDR(k, d)                                                                                  \
	"{\"record\":\"aggregates\",\"keys\":" #k ",\"complete\":true,\"overflow\":{"              \
	"\"requests_allowed\":0,\"requests_denied\":" #d ",\"bytes_in\":0,\"bytes_out\":0}}"
#define KEY(dec, host, n)                                                                          \
	"{\"record\":\"aggregate\",\"decision\":\"" dec "\",\"host\":\"" host                      \
	"\",\"port\":80,\"reason\":\"approved_destination\",\"requests\":" #n                      \
	",\"bytes_in\":10,\"bytes_out\":5}"

static json_t *aggs(const char *const *lines, size_t n, struct ag_study_aggs *out)
{
	char *buf = calloc(n, AG_GW_AGG_SLOT);
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		slot(buf + i * AG_GW_AGG_SLOT, lines[i]);
	json_t *v = ag_study_aggregates_parse(buf, n * AG_GW_AGG_SLOT, out);
	free(buf);
	return v;
}

static void test_aggregates(void **state)
{
	(void)state;
	struct ag_study_aggs st;
	const char *good[] = {HDR(2, 7), KEY("allow", "canary.test", 2000),
			      KEY("deny", "j.test", 3)};
	json_t *v = aggs(good, 3, &st);
	assert_true(st.complete);
	assert_true(json_is_true(json_object_get(v, "complete")));
	assert_int_equal(st.requests, 2000 + 3 + 7);
	assert_int_equal(st.denied, 3 + 7);
	assert_int_equal(json_array_size(json_object_get(v, "keys")), 2);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(v, "keys"), 0), "host")),
			    "canary.test");
	json_decref(v);

	/* each of these leaves the aggregates incomplete */
	const char *count[] = {HDR(3, 0), KEY("allow", "canary.test", 1)};
	const char *shape[] = {HDR(1, 0), "{\"record\":\"aggregate\",\"decision\":\"maybe\"}"};
	const char *nohdr[] = {KEY("allow", "canary.test", 1)};
	const char *zero[] = {HDR(1, 0), KEY("allow", "canary.test", 0)};
	const char *extra[] = {HDR(1, 0),
			       "{\"record\":\"aggregate\",\"decision\":\"allow\",\"host\":\"h\","
			       "\"port\":80,\"reason\":\"approved_destination\",\"requests\":1,"
			       "\"bytes_in\":0,\"bytes_out\":0,\"more\":1}"};
	const char *const *bad[] = {count, shape, nohdr, zero, extra};
	size_t nbad[] = {2, 2, 1, 2, 2};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++) {
		v = aggs(bad[i], nbad[i], &st);
		assert_false(st.complete);
		assert_true(json_is_false(json_object_get(v, "complete")));
		json_decref(v);
	}
}

static void test_redact(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "S3CRET-VALUE-7f2a");
	static const char leak[] =
	    START "{\"decision\":{\"decision\":\"deny\",\"host\":\"S3CRET-VALUE-7f2a.example\"},"
		  "\"event\":{\"requested\":{\"host\":\"s3cret-value-7f2a.example\",\"port\":80},"
		  "\"url\":\"http://ok.example/x/"
		  "S3CRET-VALUE-7f2a\",\"resolved_addresses\":[\"S3CRET-VALUE-7f2a\"]},"
		  "\"record\":\"decision\"}\n" END(1) "not json S3CRET-VALUE-7f2a";
	size_t n = 0;
	char *out = ag_study_stream_redact(&r, leak, strlen(leak), &n);
	assert_int_equal(n, strlen(out));
	assert_null(strstr(out, "S3CRET-VALUE-7f2a"));
	assert_null(strstr(out, "s3cret-value-7f2a"));
	assert_non_null(strstr(out, "[REDACTED]"));
	/* the same records, counted the same (the cut last line stays cut) */
	struct ag_study_stream a, b;
	json_decref(ag_study_stream_parse(leak, strlen(leak), "t-1", D, &a));
	json_decref(ag_study_stream_parse(out, n, "t-1", D, &b));
	assert_int_equal(a.events, b.events);
	assert_int_equal(a.denied, b.denied);
	assert_false(b.complete);
	free(out);
	static const char clean[] = START ALLOW DENY END(2);
	out = ag_study_stream_redact(&r, clean, strlen(clean), &n);
	assert_int_equal(n, strlen(clean));
	assert_memory_equal(out, clean, n);
	free(out);
	ag_redactor_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_complete),
	    cmocka_unit_test(test_incomplete),
	    cmocka_unit_test(test_redact),
	    cmocka_unit_test(test_aggregates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
