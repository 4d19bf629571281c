/*
 * test_study_stream.c: reading the gateway's evidence stream back
 * (ag_study_stream_parse). Only a whole stream counts as complete: a start
 * line naming this trial and policy, decision lines, one end line that says
 * complete and counts them. Everything else (lost end line, a count that
 * disagrees, another trial or policy, a line after the end, a line cut
 * short, an unknown record) is incomplete, so the study cannot pass.
 */
#include "lib/base/ag.h"
#include "lib/run/study.h"
#include "lib/base/redact.h"

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
