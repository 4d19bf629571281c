/*
 * test_workspace_git.c: Git baselines on real repositories: dirty trees,
 * staged renames, deletions, untracked and ignored files, empty
 * repositories, a source that commits after preparation, and hostile
 * repository configuration and environment.
 */
#include "fixtures/workspace/ws_test.h"

#include <time.h>

static char *head_of(struct fx *f)
{
	char *h = read_rel(f->srcfd, ".git/refs/heads/main");
	h[strcspn(h, "\n")] = '\0';
	return h;
}

static void seed_repo(struct fx *f)
{
	GIT(f->src, "init", "-q");
	wstr(f->srcfd, "a.txt", "a1\na2\n");
	wstr(f->srcfd, "b.txt", "b\n");
	wstr(f->srcfd, "old name.txt", "renamed content\n");
	wstr(f->srcfd, ".gitignore", "ignored.log\nbuild/\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "seed");
}

static void test_git_dirty_baseline(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	wstr(f->srcfd, "a.txt", "a1\nchanged\n");	     /* " M" */
	GIT(f->src, "mv", "old name.txt", "new name.txt");   /* "R " */
	assert_int_equal(unlinkat(f->srcfd, "b.txt", 0), 0); /* " D" */
	wstr(f->srcfd, "untracked\nnl.txt", "u\n");	     /* "??" */
	wstr(f->srcfd, "ignored.log", "i\n");		     /* "!!" */
	mkd(f->srcfd, "build");
	wstr(f->srcfd, "build/out.o", "o\n");
	_cleanup_free_ char *head = head_of(f);

	/* a hostile caller environment must not reach git */
	setenv("GIT_DIR", "/nonexistent", 1);
	setenv("GIT_WORK_TREE", "/nonexistent", 1);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "g", NULL, &p, &e), &e);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT);
	assert_string_equal(p.git_head, head);

	struct ag_ws_baseline bl;
	int run = ag_ws_open_run(f->rootfd, "g", &e);
	assert_true(run >= 0);
	expect_ok(ag_ws_baseline_load(run, p.digest, &bl, &e), &e);
	close(run);
	assert_int_equal(bl.source_kind, AG_WS_SOURCE_GIT);
	assert_string_equal(bl.git_head, head);
	static const struct {
		const char *xy, *path, *src;
	} want[] = {
	    {" M", "a.txt", NULL},
	    {" D", "b.txt", NULL},
	    {"!!", "build/out.o", NULL},
	    {"!!", "ignored.log", NULL},
	    {"R ", "new name.txt", "old name.txt"},
	    {"??", "untracked\nnl.txt", NULL},
	};
	assert_int_equal(bl.git.nstatus, AG_ARRAY_SIZE(want));
	for (size_t i = 0; i < AG_ARRAY_SIZE(want); i++) {
		assert_string_equal(bl.git.status[i].xy, want[i].xy);
		assert_string_equal(bl.git.status[i].path, want[i].path);
		if (want[i].src)
			assert_string_equal(bl.git.status[i].source_path, want[i].src);
		else
			assert_null(bl.git.status[i].source_path);
	}
	/* the workspace holds the working-tree state, .git excluded */
	assert_non_null(ag_ws_snapshot_find(&bl.snap, "new name.txt"));
	assert_null(ag_ws_snapshot_find(&bl.snap, "old name.txt"));
	assert_null(ag_ws_snapshot_find(&bl.snap, "b.txt"));
	assert_non_null(ag_ws_snapshot_find(&bl.snap, "ignored.log"));
	assert_non_null(ag_ws_snapshot_find(&bl.snap, "build/out.o"));
	assert_null(ag_ws_snapshot_find(&bl.snap, ".git"));
	ag_ws_baseline_release(&bl);
	_cleanup_free_ char *base = read_rel(f->rootfd, "g/evidence/" AG_WS_BASELINE_FILE);
	assert_non_null(strstr(base, "s\t??\tuntracked%0Anl.txt\t\n"));
	assert_non_null(strstr(base, "s\tR \tnew name.txt\told name.txt\n"));
	_cleanup_free_ char *meta = read_rel(f->rootfd, "g/evidence/" AG_WS_METADATA_FILE);
	assert_non_null(strstr(meta, "\"source_kind\": \"git\""));
	assert_null(strstr(meta, f->dir));
}

static void test_git_empty_repository(void **state)
{
	struct fx *f = *state;
	GIT(f->src, "init", "-q");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "empty", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT_EMPTY);
	assert_string_equal(p.git_head, "");
	assert_int_equal(p.entries, 0);
	wstr(f->srcfd, "first.txt", "1\n");
	expect_ok(prep(f, "empty2", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT_EMPTY);
	_cleanup_free_ char *base = read_rel(f->rootfd, "empty2/evidence/" AG_WS_BASELINE_FILE);
	assert_non_null(strstr(base, "source_kind\tgit-empty\ngit_head\t-\ngit_status\t1\n"
				     "s\t??\tfirst.txt\t\n"));
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "empty2", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	ag_ws_mutations_release(&m);
}

static void test_git_commit_after_prepare(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "c", NULL, &p, &e), &e);
	_cleanup_free_ char *head0 = head_of(f);
	_cleanup_free_ char *base0 = read_rel(f->rootfd, "c/evidence/" AG_WS_BASELINE_FILE);
	/* the source moves on: new commit, new branch, HEAD moves */
	wstr(f->srcfd, "a.txt", "rewritten\n");
	wstr(f->srcfd, "later.txt", "later\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "later");
	GIT(f->src, "checkout", "-q", "-b", "other");
	_cleanup_free_ char *head1 = read_rel(f->srcfd, ".git/refs/heads/main");
	assert_true(strncmp(head0, head1, strlen(head0)) != 0);
	/* the comparison point is unchanged: no mutation, same digest, same head */
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "c",
				&(struct ag_ws_capture_opts){.expected_digest = p.digest}, &m, &e),
		  &e);
	assert_int_equal(m.n, 0);
	assert_string_equal(m.baseline_digest, p.digest);
	ag_ws_mutations_release(&m);
	_cleanup_free_ char *base1 = read_rel(f->rootfd, "c/evidence/" AG_WS_BASELINE_FILE);
	assert_string_equal(base0, base1);
	/* the agent's change is measured against the old baseline */
	int ws = wsfd(f, "c");
	wstr(ws, "a.txt", "a1\na2\na3\n");
	close(ws);
	expect_ok(ag_ws_capture(f->rootfd, "c", NULL, &m, &e), &e);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.v[0].path, "a.txt");
	assert_int_equal(m.v[0].lines_added, 1);
	assert_int_equal(m.v[0].lines_deleted, 0);
	ag_ws_mutations_release(&m);
}

static void test_git_hostile_config(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	char marker[160];
	snprintf(marker, sizeof(marker), "%s/pwned", f->dir);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "core.fsmonitor=touch %s; false", marker);
	/* repository config that would run a program on `git status` */
	GIT(f->src, "config", "core.fsmonitor", cmd + strlen("core.fsmonitor="));
	GIT(f->src, "config", "core.hooksPath", "hooks");
	wstr(f->srcfd, "a.txt", "dirty\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "h", NULL, &p, &e), &e);
	struct stat st;
	assert_true(stat(marker, &st) < 0);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT);
}

static void test_git_not_toplevel_and_broken(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	mkd(f->srcfd, "sub");
	wstr(f->srcfd, "sub/x", "x\n");
	int sub = openat(f->srcfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	/* a subdirectory of a work tree has no .git of its own: a plain directory */
	expect_ok(ag_ws_prepare(sub, f->rootfd, "sub", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_DIRECTORY);
	/* a .git that git cannot use fails closed (and leaves nothing) */
	wstr(sub, ".git", "gitdir: /nonexistent/elsewhere\n");
	expect_fail(f, ag_ws_prepare(sub, f->rootfd, "sub2", NULL, &p, &e), &e,
		    "workspace.git_failed");
	assert_int_equal(count_dir(f->rootfd, "."), 1);
	/* git that does not exist */
	assert_int_equal(unlinkat(sub, ".git", 0), 0);
	close(sub);
	struct ag_ws_prepare_opts o = {.git_path = "/nonexistent/git"};
	expect_fail(f, prep(f, "nogit", &o, &p, &e), &e, "workspace.git_failed");
	o.git_path = "git";
	expect_fail(f, prep(f, "relgit", &o, &p, &e), &e, "workspace.git_failed");
	assert_int_equal(count_dir(f->rootfd, "."), 1); /* only "sub" */
}

/* A git that hangs with its pipes closed, or floods its output, is bounded. */
static void test_git_runner_bounds(void **state)
{
	struct fx *f = *state;
	mkd(f->srcfd, ".git");
	wstr(f->srcfd, "a", "a\n");
	char fake[160];
	snprintf(fake, sizeof(fake), "%s/fake-git", f->dir);
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char hang[] = "#!/bin/sh\nexec >&- 2>&-\nexec sleep 30\n";
	wfile(dfd, "fake-git", hang, sizeof(hang) - 1, 0755);
	struct ag_ws_prepare_opts o = {.git_path = fake, .git_timeout_ms = 300};
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_fail(f, prep(f, "hang", &o, &p, &e), &e, "workspace.git_timeout");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	/* the whole process group is gone: nothing holds the fake script open */
	const char flood[] = "#!/bin/sh\nexec head -c 40000000 /dev/zero\n";
	wfile(dfd, "fake-git", flood, sizeof(flood) - 1, 0755);
	o.git_timeout_ms = 0;
	expect_fail(f, prep(f, "flood", &o, &p, &e), &e, "limit.workspace.git_output");
	const char bad[] = "#!/bin/sh\nprintf 'not a prefix'\n";
	wfile(dfd, "fake-git", bad, sizeof(bad) - 1, 0755);
	expect_fail(f, prep(f, "bad", &o, &p, &e), &e, "workspace.git_failed");
	close(dfd);
	expect_root_empty(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_git_dirty_baseline, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_empty_repository, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_commit_after_prepare, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_runner_bounds, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_hostile_config, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_not_toplevel_and_broken, fx_setup,
					    fx_teardown),
	};
	(void)fx_base;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
