/*
 * Progress of the workspace snapshots (snapshot.h): reported from the
 * calling thread only, listing before reading, counts within their totals,
 * one "done" last with the real totals, and none when the snapshot fails.
 */
#include "fixtures/workspace/ws_test.h"

#include <pthread.h>
#include <sys/stat.h>

struct rec {
	pthread_t caller;
	int events, done, reading_seen, other_thread, listing_after_reading, over_total;
	struct ag_ws_progress last;
};

static void on_progress(void *ctx, const struct ag_ws_progress *p)
{
	struct rec *r = ctx;
	r->events++;
	if (!pthread_equal(pthread_self(), r->caller))
		r->other_thread++;
	if (p->reading)
		r->reading_seen = 1;
	else if (r->reading_seen)
		r->listing_after_reading++;
	if (p->reading && (p->entries > p->entries_total || p->bytes > p->bytes_total))
		r->over_total++;
	r->done += p->done;
	r->last = *p;
}

static void tree(int fd)
{
	char data[1000];
	memset(data, 'x', sizeof(data));
	for (int d = 0; d < 3; d++) {
		char dir[16];
		snprintf(dir, sizeof(dir), "d%d", d);
		mkd(fd, dir);
		for (int i = 0; i < 100; i++) {
			char p[32];
			snprintf(p, sizeof(p), "d%d/f%03d", d, i);
			wfile(fd, p, data, sizeof(data), 0644);
		}
	}
}

static void check(const struct rec *r)
{
	assert_true(r->events >= 2); /* reading starts, done */
	assert_int_equal(r->other_thread, 0);
	assert_int_equal(r->listing_after_reading, 0);
	assert_int_equal(r->over_total, 0);
	assert_int_equal(r->done, 1);
	assert_true(r->last.done);
	assert_int_equal(r->last.entries, 300);
	assert_int_equal(r->last.entries_total, 300);
	assert_int_equal(r->last.bytes, 300000);
	assert_int_equal(r->last.bytes_total, 300000);
}

static void test_prepare_and_capture(void **state)
{
	struct fx *f = *state;
	tree(f->srcfd);
	struct rec r = {.caller = pthread_self()};
	struct ag_ws_prepare_opts o = {.progress = on_progress, .progress_ctx = &r};
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "run1", &o, &p, &e), &e);
	check(&r);

	struct rec c = {.caller = pthread_self()};
	struct ag_ws_capture_opts co = {.progress = on_progress, .progress_ctx = &c};
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "run1", &co, &m, &e), &e);
	check(&c);
	ag_ws_mutations_release(&m);
}

static void test_no_done_on_failure(void **state)
{
	struct fx *f = *state;
	tree(f->srcfd);
	assert_int_equal(mkfifoat(f->srcfd, "zz-fifo", 0644), 0);
	struct rec r = {.caller = pthread_self()};
	struct ag_ws_prepare_opts o = {.progress = on_progress, .progress_ctx = &r};
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	assert_true(prep(f, "run1", &o, &p, &e) < 0);
	assert_string_equal(e->reason, "workspace.special_file");
	ag_error_free(e);
	assert_int_equal(r.done, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_prepare_and_capture, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_no_done_on_failure, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
