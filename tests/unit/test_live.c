/*
 * The live view of the agent's output (lib/run/live.h): lines split at
 * '\n', "\r\n" and a lone '\r' whatever the chunking, redacted and escaped
 * for a terminal, a long line cut, and the capture cap said once with
 * nothing after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/redact.h"
#include "lib/run/live.h"

struct seen {
	char text[8][256];
	int stream[8];
	enum ag_run_line_kind kind[8];
	int n, starts;
	uint64_t cap;
};

static void on_event(void *ctx, const struct ag_run_event *ev)
{
	struct seen *s = ctx;
	if (ev->kind != AG_RUN_EV_AGENT_LINE)
		return;
	assert_true(s->n < 8);
	size_t l = ev->len < 255 ? ev->len : 255;
	memcpy(s->text[s->n], ev->text, l);
	s->text[s->n][l] = '\0';
	s->stream[s->n] = ev->stream;
	s->kind[s->n] = ev->line;
	if (ev->line == AG_LINE_CAPPED)
		s->cap = ev->cap;
	s->n++;
}

static void feed(struct ag_live *l, int stream, const char *t)
{
	ag_live_output(l, stream, t, strlen(t));
}

static void test_lines(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "CANARY-UNIT-99");
	struct seen s = {0};
	const struct ag_run_observer obs = {on_event, &s};
	struct ag_live *l = ag_live_new(&r, 1000, &obs);
	feed(l, 1, "one\r");
	feed(l, 1, "\ntwo\rthree\n");
	feed(l, 2, "err CANARY-UN");
	feed(l, 2, "IT-99\t\033[2J\302\233 \342\200\256\n");
	feed(l, 1, "last, no newline");
	ag_live_finish(l);
	ag_live_free(l);
	ag_redactor_release(&r);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.text[0], "one");
	assert_string_equal(s.text[1], "two");
	assert_string_equal(s.text[2], "three");
	assert_string_equal(s.text[3], "err [REDACTED]\t\\x1b[2J\\u009b \\u202e");
	assert_int_equal(s.stream[3], 2);
	assert_string_equal(s.text[4], "last, no newline");
	for (int i = 0; i < s.n; i++)
		assert_int_equal(s.kind[i], AG_LINE_WHOLE);
}

static void test_capped(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "CANARY-UNIT-99");
	struct seen s = {0};
	const struct ag_run_observer obs = {on_event, &s};
	struct ag_live *l = ag_live_new(&r, 4096, &obs);
	feed(l, 1, "kept\nCANARY-UNIT");
	ag_live_output(l, 1, NULL, 0); /* the engine: stdout passed its cap */
	ag_live_output(l, 1, NULL, 0);
	feed(l, 1, "-99 more\n");
	feed(l, 2, "stderr goes on\n");
	ag_live_finish(l);
	ag_live_free(l);
	ag_redactor_release(&r);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.text[0], "kept");
	assert_int_equal(s.kind[1], AG_LINE_CAPPED);
	assert_int_equal(s.cap, 4096);
	assert_string_equal(s.text[2], "stderr goes on");
}

static void test_long_line(void **state)
{
	(void)state;
	struct seen s = {0};
	const struct ag_run_observer obs = {on_event, &s};
	struct ag_live *l = ag_live_new(NULL, 1u << 30, &obs);
	char *big = ag_xmalloc(AG_LIVE_LINE_MAX * 2);
	memset(big, 'z', AG_LIVE_LINE_MAX * 2);
	memcpy(big, "head ", 5);
	ag_live_output(l, 1, big, AG_LIVE_LINE_MAX * 2);
	feed(l, 1, " tail\nnext\n");
	ag_live_finish(l);
	ag_live_free(l);
	free(big);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.kind[0], AG_LINE_CUT);
	assert_string_equal(s.text[0], "head ");
	assert_string_equal(s.text[1], "next");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_capped),
	    cmocka_unit_test(test_long_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
