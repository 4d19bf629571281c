/*
 * test_workspace_bounds.c: every bound at the bound and one past, at
 * preparation and at capture, with injected small limits; plus the real
 * entry bound (100,000 entries) and the real per-file, total-bytes and
 * path-length bounds where that is cheap (sparse files, deep names).
 */
#include "fixtures/workspace/ws_test.h"

#include <sys/resource.h>

static void small_limits(struct ag_ws_limits *l)
{
	ag_ws_limits_default(l);
	l->max_entries = 5;
	l->max_file_bytes = 10;
	l->max_total_bytes = 20;
	l->max_symlink_target_bytes = 8;
	l->max_path_bytes = 12;
	l->max_depth = 3;
}

static int prep_l(struct fx *f, const char *id, const struct ag_ws_limits *l, struct ag_error **e)
{
	struct ag_ws_prepared p;
	struct ag_ws_prepare_opts o = {.limits = l};
	return prep(f, id, &o, &p, e);
}

static int cap_l(struct fx *f, const char *id, const struct ag_ws_limits *l, struct ag_error **e)
{
	struct ag_ws_mutations m;
	struct ag_ws_capture_opts o = {.limits = l};
	int r = ag_ws_capture(f->rootfd, id, &o, &m, e);
	if (r == 0)
		ag_ws_mutations_release(&m);
	return r;
}

static void clear_src(struct fx *f)
{
	uint64_t a = 0, b = 0;
	assert_int_equal(ag_ws_remove_tree(AT_FDCWD, f->src, &a, &b), 0);
	close(f->srcfd);
	assert_int_equal(mkdir(f->src, 0755), 0);
	f->srcfd = open(f->src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void fill(int fd, const char *path, size_t n)
{
	char *b = ag_xmalloc(n + 1);
	memset(b, 'x', n);
	wfile(fd, path, b, n, 0644);
	free(b);
}

typedef void (*build_fn)(int fd, bool past);

static void b_entries(int fd, bool past)
{
	mkd(fd, "d");
	for (int i = 0; i < (past ? 5 : 4); i++) {
		char n[16];
		snprintf(n, sizeof(n), "d/%d", i);
		wstr(fd, n, "");
	}
}
static void b_file(int fd, bool past)
{
	fill(fd, "f", past ? 11 : 10);
}
static void b_total(int fd, bool past)
{
	fill(fd, "f1", 10);
	fill(fd, "f2", past ? 10 : 9);
	fill(fd, "f3", 1);
}
static void b_target(int fd, bool past)
{
	wstr(fd, "12345678", "t");
	wstr(fd, "123456789", "t");
	sym(past ? "123456789" : "12345678", fd, "l");
}
static void b_path(int fd, bool past)
{
	mkd(fd, "abcde");
	wstr(fd, past ? "abcde/fghijkl" : "abcde/fghijk", "p"); /* 12 / 13 bytes */
}
static void b_depth(int fd, bool past)
{
	mkd(fd, "a");
	mkd(fd, "a/b");
	mkd(fd, "a/b/c");
	if (past)
		mkd(fd, "a/b/c/d");
}

static const struct {
	const char *name;
	build_fn build;
	const char *reason;
} bounds[] = {
    {"entries", b_entries, "limit.workspace.entries"},
    {"file", b_file, "limit.workspace.file_bytes"},
    {"total", b_total, "limit.workspace.total_bytes"},
    {"target", b_target, "limit.workspace.symlink_target"},
    {"path", b_path, "limit.workspace.path_length"},
    {"depth", b_depth, "limit.workspace.depth"},
};

static void test_bounds_at_prepare(void **state)
{
	struct fx *f = *state;
	struct ag_ws_limits l;
	small_limits(&l);
	struct ag_error *e = NULL;
	for (size_t i = 0; i < AG_ARRAY_SIZE(bounds); i++) {
		clear_src(f);
		bounds[i].build(f->srcfd, false);
		char id[32];
		snprintf(id, sizeof(id), "at-%s", bounds[i].name);
		expect_ok(prep_l(f, id, &l, &e), &e);
		clear_src(f);
		bounds[i].build(f->srcfd, true);
		snprintf(id, sizeof(id), "past-%s", bounds[i].name);
		int rc = prep_l(f, id, &l, &e);
		assert_true(rc < 0);
		if (strcmp(e->reason, bounds[i].reason))
			fail_msg("%s: got %s", bounds[i].name, e->reason);
		assert_int_equal(e->code, AG_E_LIMIT);
		ag_error_freep(&e);
		struct stat st;
		assert_true(fstatat(f->rootfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0);
	}
	assert_int_equal(count_dir(f->rootfd, "."), AG_ARRAY_SIZE(bounds));
}

/* The agent grows a prepared tree past each bound: capture fails closed. */
static void test_bounds_at_capture(void **state)
{
	struct fx *f = *state;
	struct ag_ws_limits l;
	small_limits(&l);
	struct ag_error *e = NULL;
	for (size_t i = 0; i < AG_ARRAY_SIZE(bounds); i++) {
		char id[32];
		snprintf(id, sizeof(id), "c-%s", bounds[i].name);
		expect_ok(prep_l(f, id, &l, &e), &e); /* empty source */
		int ws = wsfd(f, id);
		bounds[i].build(ws, false);
		close(ws);
		expect_ok(cap_l(f, id, &l, &e), &e);
		uint64_t a = 0, b = 0;
		char wp[64];
		snprintf(wp, sizeof(wp), "%s/workspace", id);
		assert_int_equal(ag_ws_remove_tree(f->rootfd, wp, &a, &b), 0);
		assert_int_equal(mkdirat(f->rootfd, wp, 0755), 0);
		ws = wsfd(f, id);
		bounds[i].build(ws, true);
		close(ws);
		assert_true(cap_l(f, id, &l, &e) < 0);
		if (strcmp(e->reason, bounds[i].reason))
			fail_msg("%s: got %s", bounds[i].name, e->reason);
		ag_error_freep(&e);
	}
}

/* The real entry bound: 100,000 entries prepare and capture; 100,001 fail. */
static void test_real_entry_bound(void **state)
{
	struct fx *f = *state;
	const int dirs = 100, per = AG_WS_MAX_ENTRIES / 100 - 1; /* 100 + 100 * 999 = 100,000 */
	for (int d = 0; d < dirs; d++) {
		char n[32];
		snprintf(n, sizeof(n), "d%03d", d);
		mkd(f->srcfd, n);
		int dfd = openat(f->srcfd, n, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		for (int i = 0; i < per; i++) {
			char fn[16];
			snprintf(fn, sizeof(fn), "f%04d", i);
			int fd = openat(dfd, fn, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			assert_true(fd >= 0);
			close(fd);
		}
		close(dfd);
	}
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "big", NULL, &p, &e), &e);
	assert_int_equal(p.entries, AG_WS_MAX_ENTRIES);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "big", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.entries, AG_WS_MAX_ENTRIES);
	ag_ws_mutations_release(&m);
	/* one past, at preparation and at capture */
	wstr(f->srcfd, "one-more", "");
	expect_fail(f, prep(f, "big2", NULL, &p, &e), &e, "limit.workspace.entries");
	int ws = wsfd(f, "big");
	wstr(ws, "one-more", "");
	close(ws);
	expect_fail(f, ag_ws_capture(f->rootfd, "big", NULL, &m, &e), &e,
		    "limit.workspace.entries");
	struct ag_ws_cleanup_report rep;
	expect_ok(ag_ws_cleanup(f->rootfd, "big", &rep, &e), &e);
	assert_true(rep.complete);
	expect_root_empty(f);
}

/* Real byte bounds with sparse files (no real I/O for the holes past EOF). */
static void test_real_byte_bounds(void **state)
{
	struct fx *f = *state;
	int fd = openat(f->srcfd, "at", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_int_equal(ftruncate(fd, (off_t)AG_WS_MAX_FILE_BYTES), 0);
	close(fd);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "f64", NULL, &p, &e), &e);
	assert_int_equal(p.total_bytes, AG_WS_MAX_FILE_BYTES);
	fd = openat(f->srcfd, "past", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_int_equal(ftruncate(fd, (off_t)AG_WS_MAX_FILE_BYTES + 1), 0);
	close(fd);
	expect_fail(f, prep(f, "f64p", NULL, &p, &e), &e, "limit.workspace.file_bytes");
	assert_int_equal(unlinkat(f->srcfd, "past", 0), 0);
	/* 16 files of 64 MiB = 1 GiB exactly is the bound; one byte more fails
	 * before anything is copied (at-bound copy is covered by small limits) */
	for (int i = 0; i < 15; i++) {
		char n[16];
		snprintf(n, sizeof(n), "s%02d", i);
		fd = openat(f->srcfd, n, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_int_equal(ftruncate(fd, (off_t)AG_WS_MAX_FILE_BYTES), 0);
		close(fd);
	}
	wstr(f->srcfd, "z-one-byte", "!");
	expect_fail(f, prep(f, "t1g", NULL, &p, &e), &e, "limit.workspace.total_bytes");
	assert_int_equal(count_dir(f->rootfd, "."), 1);
}

/* Real path-length bound (4096 bytes), past PATH_MAX for a single open. */
static void test_real_path_bound(void **state)
{
	struct fx *f = *state;
	char comp[251];
	memset(comp, 'p', 250);
	comp[250] = '\0';
	char path[AG_WS_MAX_PATH_BYTES + 8] = "";
	size_t len = 0;
	int cur = dup(f->srcfd);
	for (int i = 0; i < 16; i++) { /* 16 * 251 = 4016 bytes with separators */
		assert_int_equal(mkdirat(cur, comp, 0755), 0);
		int n = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = n;
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%s", i ? "/" : "", comp);
	}
	/* len = 16*250 + 15 = 4015; a name of 80 makes 4096 with its '/' */
	char leaf[96];
	memset(leaf, 'l', 80);
	leaf[80] = '\0';
	wfile(cur, leaf, "x\n", 2, 0644);
	assert_int_equal(len + 1 + 80, AG_WS_MAX_PATH_BYTES);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "p4096", NULL, &p, &e), &e);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "p4096", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	ag_ws_mutations_release(&m);
	leaf[80] = 'l';
	leaf[81] = '\0';
	wfile(cur, leaf, "x\n", 2, 0644);
	close(cur);
	expect_fail(f, prep(f, "p4097", NULL, &p, &e), &e, "limit.workspace.path_length");
	assert_int_equal(count_dir(f->rootfd, "."), 1);
}

/* A chain of `depth` directories named "d" below dirfd/top, built one
 * relative mkdir at a time (paths longer than PATH_MAX), with a file at
 * every 100th level; the deepest directory gets `deep_mode`. */
static void deep_chain(int dirfd, const char *top, int depth, mode_t deep_mode)
{
	mkd(dirfd, top);
	int fd = openat(dirfd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < depth; i++) {
		mkd(fd, "d");
		if (i % 100 == 0)
			wstr(fd, "f.txt", "x\n");
		int nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(nfd >= 0);
		close(fd);
		fd = nfd;
	}
	wstr(fd, "bottom.txt", "b\n");
	assert_int_equal(fchmod(fd, deep_mode), 0);
	close(fd);
}

/* Removal has no depth limit, holds a constant number of fds, never follows
 * a link, and undoes the agent's chmods. */
static void test_remove_any_depth(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "victim.txt", "must survive\n");
	deep_chain(f->srcfd, "deep", 3000, 0);
	int fd = openat(f->srcfd, "deep/d/d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char target[160];
	snprintf(target, sizeof(target), "%s/victim.txt", f->src);
	sym(target, fd, "abs-link");
	sym("../../../victim.txt", fd, "rel-link");
	mkd(fd, "ro");
	wstr(fd, "ro/x", "x\n");
	assert_int_equal(fchmodat(fd, "ro", 0500, 0), 0);
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		/* 3000 levels with 16 fds: only a constant number is ever open */
		struct rlimit rl = {16, 16};
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(2);
		uint64_t rm = 0, left = 0;
		int r = ag_ws_remove_tree(f->srcfd, "deep", &rm, &left);
		_exit(r == 0 && left == 0 && rm > 3000 ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	struct stat sb;
	assert_true(fstatat(f->srcfd, "deep", &sb, AT_SYMLINK_NOFOLLOW) < 0);
	_cleanup_free_ char *v = read_rel(f->srcfd, "victim.txt");
	assert_string_equal(v, "must survive\n");
}

/* Finding 3: 600 nested directories from the agent fail capture closed on
 * the depth bound, and the owned cleanup still removes everything. */
static void test_deep_workspace_cleanup(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "a.txt", "a\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "deep", NULL, &p, &e), &e);
	int ws = wsfd(f, "deep");
	deep_chain(ws, "nest", 600, 0500);
	close(ws);
	struct ag_ws_mutations m;
	expect_fail(f, ag_ws_capture(f->rootfd, "deep", NULL, &m, &e), &e, "limit.workspace.depth");
	struct ag_ws_cleanup_report rep;
	expect_ok(ag_ws_cleanup(f->rootfd, "deep", &rep, &e), &e);
	assert_true(rep.complete);
	assert_int_equal(rep.remaining, 0);
	assert_true(rep.removed > 600);
	expect_root_empty(f);
}

int main(void)
{
	/* 100,000-entry trees: tmpfs when there is one (ext4 here creates files
	 * ten times slower); the rules under test do not depend on it */
	struct stat st;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		fx_base = "/dev/shm";
	const char *only = getenv("WS_FILTER");
	if (only)
		cmocka_set_test_filter(only);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bounds_at_prepare, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bounds_at_capture, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_real_entry_bound, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_real_byte_bounds, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_real_path_bound, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_remove_any_depth, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_deep_workspace_cleanup, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
