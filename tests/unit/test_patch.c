/*
 * test_patch.c: changes.patch built from hand-made change lists on real
 * trees: git's header lines and path quoting, the output bound
 * (limit.patch.size), a directory symlink on the path is not followed
 * (patch.open), a changed entry that is not a file (patch.special).
 * The full round trip through `git apply` is tests/cli/t0654-patch.sh.
 */
#include "fixtures/workspace/ws_test.h"
#include "lib/workspace/patch.h"

static struct ag_ws_change change(enum ag_ws_change_kind k, const char *path, const char *old)
{
	struct ag_ws_change c = {0};
	c.kind = k;
	c.path = (char *)path;
	c.old_path = (char *)old;
	c.old_kind = k == AG_WS_ADDED ? 0 : AG_WS_FILE;
	c.new_kind = k == AG_WS_DELETED ? 0 : AG_WS_FILE;
	return c;
}

static int build(struct fx *f, struct ag_ws_change *v, size_t n, size_t max, struct ag_buf *b,
		 struct ag_error **e)
{
	struct ag_ws_mutations m = {0};
	m.v = v;
	m.n = n;
	ag_buf_init(b, max, "limit.patch.size");
	struct ag_patch_stats st;
	return ag_patch_build(f->srcfd, f->rootfd, &m, b, &st, e);
}

static void test_patch_headers(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "m.txt", "a\nb\n");
	wstr(f->rootfd, "m.txt", "a\nc\n");
	wstr(f->srcfd, "gone.txt", "x\n");
	wstr(f->rootfd, "q\"t\tx", "new\n");
	wfile(f->srcfd, "run.sh", "#!/bin/sh\n", 10, 0644);
	wfile(f->rootfd, "run.sh", "#!/bin/sh\n", 10, 0755);
	struct ag_ws_change v[] = {
	    change(AG_WS_DELETED, "gone.txt", NULL), change(AG_WS_MODIFIED, "m.txt", NULL),
	    change(AG_WS_ADDED, "q\"t\tx", NULL), change(AG_WS_MODIFIED, "run.sh", NULL)};
	struct ag_buf b;
	struct ag_error *e = NULL;
	expect_ok(build(f, v, AG_ARRAY_SIZE(v), 1 << 20, &b, &e), &e);
	assert_non_null(strstr(b.buf, "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n"
				      "index "));
	assert_non_null(strstr(b.buf, "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"));
	assert_non_null(strstr(b.buf, "--- a/m.txt\n+++ b/m.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"));
	assert_non_null(
	    strstr(b.buf, "diff --git \"a/q\\\"t\\tx\" \"b/q\\\"t\\tx\"\nnew file mode 100644\n"));
	assert_non_null(strstr(b.buf, "+++ \"b/q\\\"t\\tx\"\n"));
	/* a mode change with the same content: header only */
	assert_non_null(strstr(b.buf, "diff --git a/run.sh b/run.sh\nold mode 100644\n"
				      "new mode 100755\n"));
	assert_null(strstr(b.buf, "+++ b/run.sh"));
	ag_buf_release(&b);
}

static void test_patch_bound(void **state)
{
	struct fx *f = *state;
	char big[4096];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\n';
	wfile(f->rootfd, "big.txt", big, sizeof(big), 0644);
	struct ag_ws_change v[] = {change(AG_WS_ADDED, "big.txt", NULL)};
	struct ag_buf b;
	struct ag_error *e = NULL;
	expect_fail(f, build(f, v, 1, 1024, &b, &e), &e, "limit.patch.size");
	ag_buf_release(&b);
}

static void test_patch_no_links_followed(void **state)
{
	struct fx *f = *state;
	mkd(f->srcfd, "real");
	wstr(f->srcfd, "real/secret.txt", "host secret\n");
	/* the new side's directory is a link to somewhere else */
	sym(f->src, f->rootfd, "dir");
	struct ag_ws_change v[] = {change(AG_WS_ADDED, "dir/real/secret.txt", NULL)};
	struct ag_buf b;
	struct ag_error *e = NULL;
	expect_fail(f, build(f, v, 1, 1 << 20, &b, &e), &e, "patch.open");
	ag_buf_release(&b);
	/* a FIFO where a file was expected */
	assert_int_equal(mkfifoat(f->rootfd, "fifo", 0644), 0);
	struct ag_ws_change w[] = {change(AG_WS_ADDED, "fifo", NULL)};
	expect_fail(f, build(f, w, 1, 1 << 20, &b, &e), &e, "patch.special");
	ag_buf_release(&b);
	/* a path that climbs out */
	struct ag_ws_change x[] = {change(AG_WS_ADDED, "../root/x", NULL)};
	expect_fail(f, build(f, x, 1, 1 << 20, &b, &e), &e, "patch.path");
	ag_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_patch_headers, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_patch_bound, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_patch_no_links_followed, fx_setup, fx_teardown),
	};
	(void)fx_base;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
