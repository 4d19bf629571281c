/*
 * test_workspace_git.c: Git baselines on real repositories: dirty trees,
 * staged renames, deletions, untracked and ignored files, empty
 * repositories, a source that commits after preparation, and hostile
 * repository configuration and environment.
 */
#include "fixtures/workspace/ws_test.h"

#include "lib/base/proc.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>

/* Under AddressSanitizer (gcc's macro, clang's feature test) the address-
 * space bound is not set (its shadow memory is terabytes). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

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
	/* with ignored files copied, the baseline is git's status, file by file */
	struct ag_ws_prepare_opts all = {.include_ignored = true};
	expect_ok(prep(f, "g", &all, &p, &e), &e);
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
	assert_non_null(strstr(meta, "\"rule\": \"all-files\""));
	assert_null(strstr(meta, f->dir));

	/* by default ignored files stay out, and an ignored directory is one
	 * status entry that nothing enters */
	expect_ok(prep(f, "d", NULL, &p, &e), &e);
	assert_true(p.git_copy_rule);
	assert_int_equal(p.excluded_ignored, 2); /* build/ and ignored.log */
	run = ag_ws_open_run(f->rootfd, "d", &e);
	expect_ok(ag_ws_baseline_load(run, p.digest, &bl, &e), &e);
	close(run);
	assert_null(ag_ws_snapshot_find(&bl.snap, "ignored.log"));
	assert_null(ag_ws_snapshot_find(&bl.snap, "build"));
	assert_null(ag_ws_snapshot_find(&bl.snap, "build/out.o"));
	assert_non_null(ag_ws_snapshot_find(&bl.snap, "untracked\nnl.txt"));
	assert_non_null(ag_ws_snapshot_find(&bl.snap, ".gitignore"));
	assert_int_equal(bl.git.nstatus, 6);
	assert_string_equal(bl.git.status[2].path, "build/");
	assert_string_equal(bl.git.status[2].xy, "!!");
	ag_ws_baseline_release(&bl);
	_cleanup_free_ char *meta2 = read_rel(f->rootfd, "d/evidence/" AG_WS_METADATA_FILE);
	assert_non_null(strstr(meta2, "\"rule\": \"git-tracked-and-unignored\""));
	assert_non_null(strstr(meta2, "\"excluded_ignored_entries\": 2"));
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

/* git's stdout as a string (NUL bytes kept), its length and exit status. */
static char *git_out(const char *dir, const char *const *args, size_t *len, int *status)
{
	struct ag_buf b = AG_BUF_INIT(64 * 1024 * 1024, NULL);
	*status = git_capture(dir, args, &b);
	*len = b.len;
	if (!b.len)
		return ag_xstrdup("");
	return b.buf;
}

/* The baseline's git facts equal what real git prints for the same repository. */
static void expect_same_as_git(const char *dir, int dirfd)
{
	struct ag_ws_gitinfo g;
	struct ag_error *e = NULL;
	expect_ok(ag_ws_gitinfo_collect(dirfd, NULL, &g, &e), &e);
	size_t len;
	int st;
	static const char *const a_head[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}",
					     NULL};
	_cleanup_free_ char *head = git_out(dir, a_head, &len, &st);
	if (st == 0) {
		head[strcspn(head, "\n")] = '\0';
		assert_int_equal(g.kind, AG_WS_SOURCE_GIT);
		assert_string_equal(g.head, head);
	} else {
		assert_int_equal(g.kind, AG_WS_SOURCE_GIT_EMPTY);
		assert_string_equal(g.head, "");
	}
	static const char *const a_st[] = {"status",	"--porcelain=v1",	 "-z",
					   "--ignored", "--untracked-files=all", NULL};
	_cleanup_free_ char *out = git_out(dir, a_st, &len, &st);
	assert_int_equal(st, 0);
	/* git's entries, sorted as the baseline sorts them */
	struct ag_ws_git_status want[256];
	size_t nw = 0;
	for (const char *p = out, *end = out + len; p < end;) {
		assert_true(nw < AG_ARRAY_SIZE(want));
		struct ag_ws_git_status *w = &want[nw++];
		memcpy(w->xy, p, 2);
		w->xy[2] = '\0';
		w->path = (char *)p + 3;
		w->source_path = NULL;
		p += strlen(p) + 1;
		if (w->xy[0] == 'R' || w->xy[0] == 'C') {
			w->source_path = (char *)p;
			p += strlen(p) + 1;
		}
	}
	for (size_t i = 1; i < nw; i++)
		for (size_t j = i; j > 0 && strcmp(want[j - 1].path, want[j].path) > 0; j--) {
			struct ag_ws_git_status t = want[j];
			want[j] = want[j - 1];
			want[j - 1] = t;
		}
	for (size_t i = 0; i < nw || i < g.nstatus; i++) {
		const char *wp = i < nw ? want[i].path : "(none)";
		const char *gp = i < g.nstatus ? g.status[i].path : "(none)";
		const char *wx = i < nw ? want[i].xy : "--";
		const char *gx = i < g.nstatus ? g.status[i].xy : "--";
		if (strcmp(wp, gp) || strcmp(wx, gx))
			fail_msg("status entry %zu: git '%s' %s, baseline '%s' %s", i, wx, wp, gx,
				 gp);
		const char *ws = want[i].source_path, *gs = g.status[i].source_path;
		if ((ws == NULL) != (gs == NULL) || (ws && strcmp(ws, gs)))
			fail_msg("status entry %zu (%s): rename source differs", i, wp);
	}
	print_message("%zu status entries equal git's\n", nw);
	ag_ws_gitinfo_release(&g);
}

/* An ordinary repository in every state git status distinguishes. */
static void test_git_same_facts_as_git(void **state)
{
	struct fx *f = *state;
	GIT(f->src, "init", "-q");
	mkd(f->srcfd, "dir");
	mkd(f->srcfd, "dir/sub");
	wstr(f->srcfd, "a.txt", "a1\na2\n");
	wstr(f->srcfd, "b.txt", "b\n");
	wstr(f->srcfd, "staged-del.txt", "sd\n");
	wstr(f->srcfd, "old name.txt", "renamed content that is long enough\nto be similar\n");
	wstr(f->srcfd, "mv-mod.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n");
	wstr(f->srcfd, "mm.txt", "mm\n");
	wstr(f->srcfd, "dir/sub/c.txt", "c\n");
	wstr(f->srcfd, "dir/.gitignore", "local-*\n");
	wfile(f->srcfd, "exec.sh", "#!/bin/sh\n", 10, 0755);
	wstr(f->srcfd, "crlf.txt", "x\r\ny\r\n");
	wstr(f->srcfd, ".gitattributes", "crlf.txt text eol=lf\n");
	sym("a.txt", f->srcfd, "link");
	wstr(f->srcfd, "tolink.txt", "becomes a link\n");
	wstr(f->srcfd, "same.txt", "same content\n");
	wstr(f->srcfd, ".gitignore", "*.log\nbuild/\n!keep.log\n/only-top\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "seed");
	wstr(f->srcfd, ".git/info/exclude", "excluded.txt\n");

	wstr(f->srcfd, "a.txt", "a1\nchanged\n");	     /* " M" */
	assert_int_equal(unlinkat(f->srcfd, "b.txt", 0), 0); /* " D" */
	GIT(f->src, "rm", "-q", "staged-del.txt");	     /* "D " */
	GIT(f->src, "mv", "old name.txt", "new name.txt");   /* "R " */
	GIT(f->src, "mv", "mv-mod.txt", "moved.txt");	     /* "RM" */
	wstr(f->srcfd, "moved.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT\n");
	wstr(f->srcfd, "mm.txt", "mm2\n");
	GIT(f->src, "add", "mm.txt");
	wstr(f->srcfd, "mm.txt", "mm3\n"); /* "MM" */
	wstr(f->srcfd, "added.txt", "new\n");
	GIT(f->src, "add", "added.txt"); /* "A " */
	wstr(f->srcfd, "added-mod.txt", "new\n");
	GIT(f->src, "add", "added-mod.txt");
	wstr(f->srcfd, "added-mod.txt", "newer\n");		     /* "AM" */
	assert_int_equal(fchmodat(f->srcfd, "exec.sh", 0644, 0), 0); /* " M" (mode) */
	assert_int_equal(unlinkat(f->srcfd, "tolink.txt", 0), 0);
	sym("a.txt", f->srcfd, "tolink.txt");	      /* " T" */
	wstr(f->srcfd, "same.txt", "same content\n"); /* new mtime, clean */
	wstr(f->srcfd, "crlf.txt", "x\r\ny\r\n");     /* rewritten, same */
	mkd(f->srcfd, "newdir");
	mkd(f->srcfd, "newdir/deep");
	wstr(f->srcfd, "newdir/deep/u.txt", "u\n"); /* "??" recursed */
	wstr(f->srcfd, "newdir/n.txt", "n\n");
	wstr(f->srcfd, "untracked\nnl.txt", "u\n");
	wstr(f->srcfd, "\xc3\xa9t\xc3\xa9 \xe2\x80\xae.txt", "unicode\n");
	wstr(f->srcfd, "x.log", "ignored\n");	 /* "!!" */
	wstr(f->srcfd, "keep.log", "negated\n"); /* "??" */
	mkd(f->srcfd, "build");
	mkd(f->srcfd, "build/deep");
	wstr(f->srcfd, "build/out.o", "o\n"); /* "!!" file by file */
	wstr(f->srcfd, "build/deep/y.o", "y\n");
	wstr(f->srcfd, "dir/local-z", "z\n"); /* nested .gitignore */
	wstr(f->srcfd, "dir/sub/local-w", "w\n");
	wstr(f->srcfd, "excluded.txt", "e\n"); /* info/exclude */
	wstr(f->srcfd, "only-top", "t\n");
	wstr(f->srcfd, "dir/only-top", "t\n"); /* anchored pattern: not ignored */
	mkd(f->srcfd, "emptydir");	       /* not listed */
	mkd(f->srcfd, "onlyignored");
	wstr(f->srcfd, "onlyignored/z.log", "z\n");
	expect_same_as_git(f->src, f->srcfd);

	/* the .git directory is not written by reading it (no index refresh, no lock) */
	struct stat s0, s1;
	assert_int_equal(fstatat(f->srcfd, ".git/index", &s0, 0), 0);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "same", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT);
	assert_int_equal(fstatat(f->srcfd, ".git/index", &s1, 0), 0);
	assert_int_equal(s0.st_ino, s1.st_ino);
	assert_int_equal(s0.st_mtim.tv_nsec, s1.st_mtim.tv_nsec);
	assert_true(faccessat(f->srcfd, ".git/index.lock", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
}

/* Unmerged paths get git's two-letter codes; an unborn HEAD is git-empty. */
static void test_git_same_facts_conflicts(void **state)
{
	struct fx *f = *state;
	GIT(f->src, "init", "-q");
	wstr(f->srcfd, "first.txt", "1\n");
	expect_same_as_git(f->src, f->srcfd); /* unborn HEAD */
	wstr(f->srcfd, "both.txt", "base\n");
	wstr(f->srcfd, "delus.txt", "base\n");
	wstr(f->srcfd, "delthem.txt", "base\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "base");
	GIT(f->src, "checkout", "-q", "-b", "other");
	wstr(f->srcfd, "both.txt", "other\n");
	wstr(f->srcfd, "delus.txt", "other\n");
	assert_int_equal(unlinkat(f->srcfd, "delthem.txt", 0), 0);
	wstr(f->srcfd, "added.txt", "other\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "other");
	GIT(f->src, "checkout", "-q", "main");
	wstr(f->srcfd, "both.txt", "main\n");
	assert_int_equal(unlinkat(f->srcfd, "delus.txt", 0), 0);
	wstr(f->srcfd, "delthem.txt", "main\n");
	wstr(f->srcfd, "added.txt", "main\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "main");
	const char *const merge[] = {"merge", "-q", "other", NULL};
	assert_int_equal(git(f->src, merge), 1); /* conflicts */
	expect_same_as_git(f->src, f->srcfd);
}

/* A script that leaves a marker named after its first argument; as a
 * filter it passes its input through. */
static void write_marker_script(struct fx *f, char *path, size_t n)
{
	snprintf(path, n, "%s/evil.sh", f->dir);
	char body[512];
	snprintf(body, sizeof(body), "#!/bin/sh\ntouch '%s/marker-'\"$1\"\ncat\n", f->dir);
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	wfile(dfd, "evil.sh", body, strlen(body), 0755);
	close(dfd);
}

static bool any_marker(struct fx *f)
{
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(dfd);
	bool found = false;
	struct dirent *de;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "marker-", 7)) {
			print_message("marker found: %s\n", de->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

/* Each program a repository's own configuration can name: none runs. */
static void test_git_hostile_config(void **state)
{
	struct fx *f = *state;
	char sh[160];
	write_marker_script(f, sh, sizeof(sh));
	static const struct {
		const char *name, *key, *prefix, *attr;
	} cases[] = {
	    {"clean", "filter.evil.clean", "", "* filter=evil\n"},
	    {"smudge", "filter.evil.smudge", "", "* filter=evil\n"},
	    {"process", "filter.evil.process", "", "* filter=evil\n"},
	    {"required", "filter.evil.clean", "", "* filter=evil\n"},
	    {"diffext", "diff.external", "", NULL},
	    {"textconv", "diff.evil.textconv", "", "* diff=evil\n"},
	    {"fsmonitor", "core.fsmonitor", "", NULL},
	    {"hookspath", "core.hooksPath", NULL, NULL},
	    {"ssh", "core.sshCommand", "", NULL},
	    {"credential", "credential.helper", "!", NULL},
	    {"askpass", "core.askPass", "", NULL},
	    {"pager", "core.pager", "", NULL},
	    {"include", "include.path", NULL, "* filter=evil diff=evil\n"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		char dir[200], val[400], id[32];
		snprintf(dir, sizeof(dir), "%s/h%zu", f->dir, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		GIT(dir, "init", "-q");
		wstr(dfd, "a.txt", "a\n");
		wstr(dfd, "b.bin", "b\n");
		if (cases[i].attr)
			wstr(dfd, ".gitattributes", cases[i].attr);
		GIT(dir, "add", "-A");
		GIT(dir, "commit", "-q", "-m", "seed");
		if (!strcmp(cases[i].name, "hookspath")) {
			/* hooks git knows about, in a directory the config names */
			mkd(dfd, "hooks");
			static const char *const hooks[] = {
			    "pre-commit", "post-checkout", "post-index-change",
			    "fsmonitor-watchman", "reference-transaction"};
			for (size_t k = 0; k < AG_ARRAY_SIZE(hooks); k++) {
				char hp[64], body[400];
				snprintf(hp, sizeof(hp), "hooks/%s", hooks[k]);
				snprintf(body, sizeof(body), "#!/bin/sh\nexec %s hook-%s\n", sh,
					 hooks[k]);
				wfile(dfd, hp, body, strlen(body), 0755);
			}
			snprintf(val, sizeof(val), "%s/hooks", dir);
			GIT(dir, "config", cases[i].key, val);
			GIT(dir, "config", "core.fsmonitor", "true"); /* the hook variant */
		} else if (!strcmp(cases[i].name, "include")) {
			char body[1200], rel[64];
			snprintf(body, sizeof(body),
				 "[filter \"evil\"]\n\tclean = %s inc-clean\n\tprocess = %s "
				 "inc-process\n[diff \"evil\"]\n\ttextconv = %s inc-textconv\n"
				 "[core]\n\tfsmonitor = %s inc-fsmonitor\n",
				 sh, sh, sh, sh);
			/* in the source: the reader reads nothing outside it */
			snprintf(rel, sizeof(rel), ".git/h%zu-included.cfg", i);
			wfile(dfd, rel, body, strlen(body), 0644);
			snprintf(val, sizeof(val), "%s/%s", dir, rel);
			GIT(dir, "config", cases[i].key, val);
		} else {
			snprintf(val, sizeof(val), "%s%s %s", cases[i].prefix, sh, cases[i].name);
			GIT(dir, "config", cases[i].key, val);
			if (!strcmp(cases[i].name, "required"))
				GIT(dir, "config", "filter.evil.required", "true");
		}
		/* dirty, with stale stat data: git would have to hash (and filter) */
		wstr(dfd, "a.txt", "a changed\n");
		wstr(dfd, "b.bin", "b\n");
		wstr(dfd, "untracked.txt", "u\n");
		struct ag_ws_prepared p;
		struct ag_error *e = NULL;
		snprintf(id, sizeof(id), "h%zu", i);
		expect_ok(ag_ws_prepare(dfd, f->rootfd, id, NULL, &p, &e), &e);
		assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT);
		if (any_marker(f))
			fail_msg("case %s: a configured program ran", cases[i].name);
		close(dfd);
	}
}

/* The path API: tracked paths, and untracked ones no ignore rule matches,
 * read without entering ignored directories. */
static void test_git_paths_api(void **state)
{
	struct fx *f = *state;
	GIT(f->src, "init", "-q");
	wstr(f->srcfd, ".gitignore", ".env\nnode_modules/\nbuild/\n*.log\n");
	mkd(f->srcfd, "src");
	wstr(f->srcfd, "src/main.c", "int main;\n");
	mkd(f->srcfd, "build");
	wstr(f->srcfd, "build/keep.txt", "tracked despite the rule\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "add", "-f", "build/keep.txt");
	GIT(f->src, "commit", "-q", "-m", "seed");
	wstr(f->srcfd, ".env", "SECRET=1\n");
	wstr(f->srcfd, "build/out.o", "o\n");
	mkd(f->srcfd, "node_modules");
	mkd(f->srcfd, "node_modules/pkg");
	for (int i = 0; i < 50; i++) {
		char p[64];
		snprintf(p, sizeof(p), "node_modules/pkg/f%d.js", i);
		wstr(f->srcfd, p, "x\n");
	}
	wstr(f->srcfd, "src/debug.log", "l\n");
	wstr(f->srcfd, "src/new.c", "n\n");
	struct ag_ws_gitinfo g;
	struct ag_error *e = NULL;
	expect_same_as_git(f->src, f->srcfd);
	struct ag_ws_git_opts o = {.what = AG_WS_GIT_PATHS};
	expect_ok(ag_ws_gitinfo_collect(f->srcfd, &o, &g, &e), &e);
	assert_int_equal(g.nstatus, 0);
	assert_int_equal(g.ntracked, 3);
	assert_string_equal(g.tracked[0], ".gitignore");
	assert_string_equal(g.tracked[1], "build/keep.txt");
	assert_string_equal(g.tracked[2], "src/main.c");
	/* untracked and not ignored: only src/new.c (node_modules/ is not entered,
	 * build/out.o is ignored although build/ holds a tracked file) */
	assert_int_equal(g.nuntracked, 1);
	assert_string_equal(g.untracked[0], "src/new.c");
	assert_true(ag_ws_git_is_tracked(&g, "src/main.c"));
	assert_false(ag_ws_git_is_tracked(&g, "src/new.c"));
	static const struct {
		const char *path;
		bool dir;
		enum ag_ws_git_incl want;
	} q[] = {
	    {".env", false, AG_WS_GIT_EXCLUDED},
	    {".gitignore", false, AG_WS_GIT_INCLUDED},
	    {"node_modules", true, AG_WS_GIT_EXCLUDED},
	    {"node_modulesx", true, AG_WS_GIT_EXCLUDED},
	    {"build", true, AG_WS_GIT_INCLUDED},
	    {"bui", true, AG_WS_GIT_EXCLUDED},
	    {"build/keep.txt", false, AG_WS_GIT_INCLUDED},
	    {"build/out.o", false, AG_WS_GIT_EXCLUDED},
	    {"src", true, AG_WS_GIT_INCLUDED},
	    {"src/new.c", false, AG_WS_GIT_INCLUDED},
	    {"src/debug.log", false, AG_WS_GIT_EXCLUDED},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(q); i++)
		if (ag_ws_git_included(&g, q[i].path, q[i].dir) != q[i].want)
			fail_msg("%s: expected %d", q[i].path, (int)q[i].want);
	ag_ws_gitinfo_release(&g);
	/* a plain directory has no git facts at all */
	int sub = openat(f->srcfd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	expect_ok(ag_ws_gitinfo_collect(sub, &o, &g, &e), &e);
	assert_int_equal(g.kind, AG_WS_SOURCE_DIRECTORY);
	assert_int_equal(g.ntracked + g.nuntracked, 0);
	close(sub);
}

static int test_match(const char *pattern, const char *path)
{
	if (!strcmp(pattern, "undecided"))
		return -1;
	size_t l = strlen(pattern);
	if (l && pattern[l - 1] == '*')
		return !strncmp(pattern, path, l - 1);
	return !strcmp(pattern, path);
}

/* What is copied: tracked and untracked-not-ignored files; exclude
 * patterns; include_ignored; counts per rule; the source check uses the
 * same rules. */
static void test_git_copy_rules(void **state)
{
	struct fx *f = *state;
	GIT(f->src, "init", "-q");
	wstr(f->srcfd, ".gitignore", ".env\nnode_modules/\n*.log\n");
	mkd(f->srcfd, "src");
	wstr(f->srcfd, "src/main.c", "int main;\n");
	wstr(f->srcfd, "README", "r\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "seed");
	wstr(f->srcfd, ".env", "SECRET=hunter2\n");
	mkd(f->srcfd, "node_modules");
	for (int i = 0; i < 20; i++) {
		char p[64];
		snprintf(p, sizeof(p), "node_modules/m%d", i);
		wstr(f->srcfd, p, "x\n");
	}
	/* what a walk would refuse is fine where nothing enters */
	assert_int_equal(mkfifoat(f->srcfd, "node_modules/fifo", 0644), 0);
	sym("/etc/passwd", f->srcfd, "node_modules/escape");
	wstr(f->srcfd, "src/debug.log", "l\n");
	wstr(f->srcfd, "src/new.c", "n\n");
	mkd(f->srcfd, "dist");
	wstr(f->srcfd, "dist/bundle.js", "b\n");
	wstr(f->srcfd, "src/gen.tmp", "t\n");

	/* default: ignored files stay out */
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "def", NULL, &p, &e), &e);
	assert_true(p.git_copy_rule);
	assert_int_equal(p.excluded_ignored, 3); /* .env, node_modules/, src/debug.log */
	int ws = wsfd(f, "def");
	struct stat st;
	assert_true(fstatat(ws, ".env", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_true(fstatat(ws, "node_modules", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_true(fstatat(ws, "src/debug.log", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_int_equal(fstatat(ws, "src/new.c", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(ws, "dist/bundle.js", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(ws, ".gitignore", &st, AT_SYMLINK_NOFOLLOW), 0);
	close(ws);
	assert_string_equal(ag_ws_copy_rule_name(&p), "git-tracked-and-unignored");

	/* the source, seen under the same rules, equals the baseline */
	struct ag_ws_snapshot now = AG_WS_SNAPSHOT_INIT;
	expect_ok(ag_ws_source_snapshot(f->srcfd, NULL, &now, &e), &e);
	struct ag_ws_baseline bl;
	int run = ag_ws_open_run(f->rootfd, "def", &e);
	expect_ok(ag_ws_baseline_load(run, p.digest, &bl, &e), &e);
	close(run);
	assert_int_equal(now.n, bl.snap.n);
	for (size_t i = 0; i < now.n; i++) {
		assert_string_equal(now.v[i].path, bl.snap.v[i].path);
		assert_int_equal(now.v[i].kind, bl.snap.v[i].kind);
		assert_memory_equal(now.v[i].sha, bl.snap.v[i].sha, 32);
	}
	ag_ws_snapshot_release(&now);
	ag_ws_baseline_release(&bl);

	/* exclude patterns: the first matching pattern counts; a directory once */
	const char *pats[] = {"dist", "src/*", "never"};
	uint64_t counts[3] = {9, 9, 9};
	struct ag_ws_prepare_opts o = {
	    .exclude = pats, .nexclude = 3, .exclude_match = test_match, .exclude_counts = counts};
	expect_ok(prep(f, "ex", &o, &p, &e), &e);
	assert_int_equal(counts[0], 1); /* dist */
	assert_int_equal(counts[1], 4); /* src/main.c, src/new.c, src/gen.tmp, src/debug.log */
	assert_int_equal(counts[2], 0);
	assert_int_equal(p.excluded_ignored, 2); /* .env, node_modules/ */
	ws = wsfd(f, "ex");
	assert_true(fstatat(ws, "dist", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_true(fstatat(ws, "src/main.c", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_int_equal(fstatat(ws, "src", &st, AT_SYMLINK_NOFOLLOW), 0);
	close(ws);
	_cleanup_free_ char *meta = read_rel(f->rootfd, "ex/evidence/" AG_WS_METADATA_FILE);
	assert_non_null(strstr(meta, "\"pattern\": \"src/*\""));
	assert_non_null(strstr(meta, "\"excluded_entries\": 4"));

	/* a pattern that cannot decide fails closed */
	const char *und[] = {"undecided"};
	struct ag_ws_prepare_opts ou = {.exclude = und, .nexclude = 1, .exclude_match = test_match};
	expect_fail(f, prep(f, "und", &ou, &p, &e), &e, "workspace.exclude.undecided");

	/* opting in copies ignored files too (and then the FIFO fails closed) */
	struct ag_ws_prepare_opts oi = {.include_ignored = true};
	expect_fail(f, prep(f, "all", &oi, &p, &e), &e, "workspace.symlink.absolute");
	assert_int_equal(unlinkat(f->srcfd, "node_modules/fifo", 0), 0);
	assert_int_equal(unlinkat(f->srcfd, "node_modules/escape", 0), 0);
	expect_ok(prep(f, "all", &oi, &p, &e), &e);
	assert_false(p.git_copy_rule);
	assert_int_equal(p.excluded_ignored, 0);
	ws = wsfd(f, "all");
	_cleanup_free_ char *env = read_rel(ws, ".env");
	assert_string_equal(env, "SECRET=hunter2\n");
	assert_int_equal(fstatat(ws, "node_modules/m19", &st, AT_SYMLINK_NOFOLLOW), 0);
	close(ws);
}

/* A FIFO where git reads a file (.gitignore) cannot stall the baseline. */
static void test_git_reader_bounded(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	mkd(f->srcfd, "d");
	wstr(f->srcfd, "d/x", "x\n");
	assert_int_equal(mkfifoat(f->srcfd, "d/.gitignore", 0644), 0);
	struct ag_ws_prepare_opts o = {.git_timeout_ms = 500};
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_fail(f, prep(f, "fifo", &o, &p, &e), &e, "workspace.git_timeout");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	expect_root_empty(f);
}

/*
 * Fault injection: a lock held by another thread when the reader starts.
 * A thread holds `held` for the whole read, and an atfork child handler
 * takes it, as code in a fork()ed child that needs a lock (an allocator's,
 * a library's) would. A reader forked without exec deadlocks on it (the
 * owner does not exist in the child) until the deadline; the reader is a
 * fresh image started by posix_spawn, which runs no atfork handlers and
 * inherits no lock, so it finishes.
 */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t atfork_armed;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool holding, release_lock;

static void atfork_child_takes_lock(void)
{
	if (atfork_armed)
		pthread_mutex_lock(&held);
}

static void *hold_lock(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	pthread_mutex_lock(&gate);
	holding = true;
	pthread_cond_broadcast(&gate_cv);
	while (!release_lock)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void test_git_reader_lock_held_at_spawn(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	static bool registered;
	if (!registered)
		assert_int_equal(pthread_atfork(NULL, NULL, atfork_child_takes_lock), 0);
	registered = true;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, hold_lock, NULL), 0);
	pthread_mutex_lock(&gate);
	while (!holding)
		pthread_cond_wait(&gate_cv, &gate);
	pthread_mutex_unlock(&gate);
	atfork_armed = 1;
	struct ag_ws_git_opts o = {.what = AG_WS_GIT_STATUS | AG_WS_GIT_PATHS, .timeout_ms = 3000};
	struct ag_ws_gitinfo g;
	struct ag_error *e = NULL;
	int rc = ag_ws_gitinfo_collect(f->srcfd, &o, &g, &e);
	atfork_armed = 0;
	pthread_mutex_lock(&gate);
	release_lock = true;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate);
	assert_int_equal(pthread_join(th, NULL), 0);
	expect_ok(rc, &e);
	assert_int_equal(g.kind, AG_WS_SOURCE_GIT);
	assert_true(g.ntracked == 4);
	ag_ws_gitinfo_release(&g);
}

/*
 * The same without injection: two threads allocate and free without pause
 * (the preflight's thread does the like during the workspace stage) while
 * the reader is started 40 times. Under ASan a reader forked without exec
 * could inherit the sanitizer allocator's lock held and hang (issue 10's
 * overlap); every read must finish, each well inside its deadline.
 */
static volatile int churn_stop;

static void *churn(void *arg)
{
	(void)arg;
	void *keep[64] = {0};
	for (unsigned i = 0; !churn_stop; i++) {
		unsigned k = i % 64;
		free(keep[k]);
		keep[k] = malloc(16 + (i * 37) % 4096);
	}
	for (unsigned k = 0; k < 64; k++)
		free(keep[k]);
	return NULL;
}

static void test_git_reader_while_threads_allocate(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	pthread_t th[2];
	churn_stop = 0;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn, NULL), 0);
	int fails = 0;
	char reason[64] = "";
	for (int i = 0; i < 40; i++) {
		struct ag_ws_git_opts o = {.what = AG_WS_GIT_STATUS_COLLAPSED | AG_WS_GIT_PATHS,
					   .timeout_ms = 5000};
		struct ag_ws_gitinfo g;
		struct ag_error *e = NULL;
		if (ag_ws_gitinfo_collect(f->srcfd, &o, &g, &e) < 0) {
			fails++;
			snprintf(reason, sizeof(reason), "%s", e->reason);
			ag_error_free(e);
			continue;
		}
		if (g.ntracked != 4)
			fails++;
		ag_ws_gitinfo_release(&g);
	}
	churn_stop = 1;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	if (fails)
		print_error("%d of 40 reads failed (last: %s)\n", fails, reason);
	assert_int_equal(fails, 0);
}

/* Runs the real reader (this binary, as agentguard runs it: an image fd
 * through the process runner) with `what` in the source; its records. */
static int run_reader(struct fx *f, unsigned what, struct ag_proc_result *r)
{
	int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(exe >= 0);
	int hi = fcntl(exe, F_DUPFD_CLOEXEC, 4);
	close(exe);
	char w[16], parent[24];
	snprintf(w, sizeof(w), "%u", what);
	snprintf(parent, sizeof(parent), "%ld", (long)getpid());
	const char *const argv[] = {"reader", AG_WS_GIT_READER_ARG, w, parent, NULL};
	const struct ag_proc_spec spec = {.argv = argv,
					  .stdout_max = 1 << 20,
					  .stderr_max = 4096,
					  .timeout_ms = 30000,
					  .has_cwd_fd = true,
					  .cwd_fd = f->srcfd,
					  .has_exe_fd = true,
					  .exe_fd = hi};
	ag_proc_result_init(r);
	struct ag_error *e = NULL;
	assert_int_equal(ag_proc_run(&spec, r, &e), 0);
	close(hi);
	return r->status == AG_PROC_EXITED ? r->exit_code : -r->term_signal;
}

/* The value of the reader's probe record "P<name> <value>". */
static const char *probe_of(const struct ag_proc_result *r, const char *name)
{
	static char v[64];
	size_t l = strlen(name);
	for (const char *p = r->out.buf; p < r->out.buf + r->out.len; p += strlen(p) + 1)
		if (p[0] == 'P' && !strncmp(p + 1, name, l) && p[1 + l] == ' ') {
			snprintf(v, sizeof(v), "%s", p + l + 2);
			return v;
		}
	return "(none)";
}

/*
 * The reader can only read: inside its real sandbox (the reader itself,
 * started as agentguard starts it, with the test-only probe argv) a socket,
 * a connect, the Docker socket, creating a file, writing any fd but its
 * output pipe, reading outside the source, execve and allocating past the
 * bound all fail; reading the source works.
 */
static void test_git_reader_sandbox(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	struct ag_proc_result r;
	assert_int_equal(run_reader(f, AG_WS_GIT_SANDBOX_PROBE, &r), 0);
	assert_string_equal(probe_of(&r, "socket"), "EPERM");
	assert_string_equal(probe_of(&r, "connect"), "EPERM");
	assert_string_equal(probe_of(&r, "open_docker_socket"), "EPERM");     /* O_RDWR: seccomp */
	assert_string_equal(probe_of(&r, "open_docker_socket_ro"), "EACCES"); /* Landlock */
	assert_string_equal(probe_of(&r, "create_file"), "EPERM");
	assert_string_equal(probe_of(&r, "create_outside"), "EPERM");
	assert_string_equal(probe_of(&r, "chmod_path"), "EPERM");
	assert_string_equal(probe_of(&r, "read_inside"), "ok");
	assert_string_equal(probe_of(&r, "write_read_only_fd"), "EPERM");
	assert_string_equal(probe_of(&r, "write_stderr"), "EPERM");
	assert_string_equal(probe_of(&r, "read_outside"), "EACCES"); /* Landlock */
	assert_string_equal(probe_of(&r, "execve"), "EPERM");
#if !TEST_ASAN
	assert_string_equal(probe_of(&r, "allocate_limit"), "ENOMEM");
#endif
	assert_int_equal(r.err.len, 0); /* nothing reached stderr */
	ag_proc_result_release(&r);
	struct stat st;
	assert_int_equal(fstatat(f->srcfd, ".agentguard-reader-probe", &st, 0), -1);
	assert_int_equal(errno, ENOENT);
}

/* The baseline writer's sandbox (gitbase.h): it may create files beneath
 * its working directory and nothing else: no socket, no Docker socket, no
 * file outside, no chmod or utimes by path, no exec, the memory bound. */
static void test_git_writer_sandbox(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	struct ag_proc_result r;
	assert_int_equal(run_reader(f, AG_WS_GIT_WRITE_BASELINE | AG_WS_GIT_SANDBOX_PROBE, &r), 0);
	assert_string_equal(probe_of(&r, "socket"), "EPERM");
	assert_string_equal(probe_of(&r, "connect"), "EPERM");
	assert_string_equal(probe_of(&r, "open_docker_socket"), "EACCES"); /* Landlock */
	assert_string_equal(probe_of(&r, "open_docker_socket_ro"), "EACCES");
	assert_string_equal(probe_of(&r, "create_file"), "ok");
	assert_string_equal(probe_of(&r, "create_outside"), "EACCES");
	assert_string_equal(probe_of(&r, "chmod_path"), "EPERM");
	assert_string_equal(probe_of(&r, "utimes_path"), "EPERM");
	assert_string_equal(probe_of(&r, "read_outside"), "EACCES");
	assert_string_equal(probe_of(&r, "execve"), "EPERM");
#if !TEST_ASAN
	assert_string_equal(probe_of(&r, "allocate_limit"), "ENOMEM");
#endif
	ag_proc_result_release(&r);
	struct stat st;
	assert_int_equal(fstatat(AT_FDCWD, "/tmp/.agentguard-reader-probe", &st, 0), -1);
	assert_int_equal(fstatat(f->srcfd, ".agentguard-reader-probe", &st, 0), -1);
}

/* The CPU-time bound: a reader that computes past it dies of SIGXCPU. */
static void test_git_sandbox_cpu_bound(void **state)
{
	struct fx *f = *state;
	pid_t pid = fork();
	if (pid == 0) {
		const struct ag_ws_git_limits lim = {.as_bytes = 1UL << 30, .cpu_seconds = 1};
		if (fchdir(f->srcfd) < 0 || ag_ws_git_sandbox_enter(&lim) < 0)
			_exit(2);
		for (volatile unsigned long i = 0;; i++)
			;
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGXCPU);
}

/* A `.git` file, a commondir or an alternates file naming a place outside
 * the source is refused by name; inside the source they are read. */
static void test_git_outside_source_refused(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	/* another repository on the host, named by a .git file */
	char other[160];
	snprintf(other, sizeof(other), "%s/other", f->dir);
	assert_int_equal(mkdir(other, 0700), 0);
	GIT(other, "init", "-q");
	char gitfile[200];
	snprintf(gitfile, sizeof(gitfile), "gitdir: %s/.git\n", other);
	assert_int_equal(renameat(f->srcfd, ".git", f->srcfd, "real.git"), 0);
	wstr(f->srcfd, ".git", gitfile);
	expect_fail(f, prep(f, "gitfile", NULL, &p, &e), &e, "workspace.git_outside_source");
	/* a relative one that climbs out */
	wstr(f->srcfd, ".git", "gitdir: ../other/.git\n");
	expect_fail(f, prep(f, "climb", NULL, &p, &e), &e, "workspace.git_outside_source");
	/* nothing there at all: still not in the source */
	wstr(f->srcfd, ".git", "gitdir: /nonexistent/elsewhere\n");
	expect_fail(f, prep(f, "nowhere", NULL, &p, &e), &e, "workspace.git_outside_source");
	/* the same pointer to a git dir inside the source is read */
	wstr(f->srcfd, ".git", "gitdir: real.git\n");
	expect_ok(prep(f, "inside", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_GIT);
	assert_int_equal(unlinkat(f->srcfd, ".git", 0), 0);
	assert_int_equal(renameat(f->srcfd, "real.git", f->srcfd, ".git"), 0);
	/* a commondir elsewhere */
	char common[200];
	snprintf(common, sizeof(common), "%s/.git\n", other);
	wstr(f->srcfd, ".git/commondir", common);
	expect_fail(f, prep(f, "commondir", NULL, &p, &e), &e, "workspace.git_outside_source");
	assert_int_equal(unlinkat(f->srcfd, ".git/commondir", 0), 0);
	/* alternates elsewhere */
	char alt[200];
	snprintf(alt, sizeof(alt), "%s/.git/objects\n", other);
	wstr(f->srcfd, ".git/objects/info/alternates", alt);
	expect_fail(f, prep(f, "alternates", NULL, &p, &e), &e, "workspace.git_outside_source");
	assert_int_equal(unlinkat(f->srcfd, ".git/objects/info/alternates", 0), 0);
	expect_ok(prep(f, "clean", NULL, &p, &e), &e);
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
	wstr(sub, ".git", "gitdir: .\n");
	expect_fail(f, ag_ws_prepare(sub, f->rootfd, "sub2", NULL, &p, &e), &e,
		    "workspace.git_failed");
	assert_int_equal(count_dir(f->rootfd, "."), 1);
	/* a work tree elsewhere (core.worktree), or a bare repository, is not this source */
	assert_int_equal(unlinkat(sub, ".git", 0), 0);
	close(sub);
	GIT(f->src, "config", "core.worktree", "/nonexistent");
	expect_fail(f, prep(f, "elsewhere", NULL, &p, &e), &e, "workspace.git_failed");
	GIT(f->src, "config", "--unset", "core.worktree");
	GIT(f->src, "config", "core.bare", "true");
	expect_fail(f, prep(f, "bare", NULL, &p, &e), &e, "workspace.git_failed");
	assert_int_equal(count_dir(f->rootfd, "."), 1); /* only "sub" */
}

/*
 * The workspace's baseline repository (gitbase.h): real git finds a clean
 * checkout of exactly the copied tree (bytes unfiltered, CRLF under
 * text=auto included, the executable bit, a link), one commit with the
 * fixed author and date on `main`, no hook that runs, no remote; git sees
 * an edit as the agent's change; what is done under `.git` is no
 * mutation, a `.git` elsewhere still fails closed, and the source's own
 * `.git` is untouched. The same tree gives the same commit.
 */
static void test_git_workspace_baseline(void **state)
{
	struct fx *f = *state;
	seed_repo(f);
	wstr(f->srcfd, ".gitattributes", "* text=auto\n");
	wstr(f->srcfd, "crlf.txt", "one\r\ntwo\r\n");
	wfile(f->srcfd, "run.sh", "#!/bin/sh\n", 10, 0755);
	sym("a.txt", f->srcfd, "link");
	/* names git on Linux checks out but libgit2 refuses by default */
	wstr(f->srcfd, "time 10:00.log", "colon\n");
	wstr(f->srcfd, "back\\slash.txt", "backslash\n");
	wstr(f->srcfd, "trailing.", "dot\n");
	GIT(f->src, "add", "-A");
	GIT(f->src, "commit", "-q", "-m", "more");
	_cleanup_free_ char *srcgit0 = read_rel(f->srcfd, ".git/index");
	struct ag_ws_prepared p, p2;
	struct ag_error *e = NULL;
	struct ag_ws_prepare_opts o = {.git_baseline = true};
	expect_ok(prep(f, "b", &o, &p, &e), &e);
	expect_ok(prep(f, "b2", &o, &p2, &e), &e);
	assert_int_equal(strlen(p.git_baseline), 40);
	assert_string_equal(p.git_baseline, p2.git_baseline);

	char ws[256];
	snprintf(ws, sizeof(ws), "%s/b/workspace", f->root);
	size_t len;
	int st;
	const char *const status[] = {"status", "--porcelain", NULL};
	_cleanup_free_ char *s0 = git_out(ws, status, &len, &st);
	assert_int_equal(st, 0);
	assert_string_equal(s0, "");
	const char *const log[] = {"log", "--format=%H|%an|%ae|%at|%cn|%ct|%s", NULL};
	_cleanup_free_ char *l = git_out(ws, log, &len, &st);
	char want[256];
	snprintf(want, sizeof(want),
		 "%s|AgentGuard|agentguard@localhost|946684800|AgentGuard|946684800|AgentGuard "
		 "baseline: the workspace as copied\n",
		 p.git_baseline);
	assert_string_equal(l, want);
	const char *const branch[] = {"symbolic-ref", "HEAD", NULL};
	_cleanup_free_ char *b = git_out(ws, branch, &len, &st);
	assert_string_equal(b, "refs/heads/main\n");
	const char *const crlf[] = {"cat-file", "-p", "HEAD:crlf.txt", NULL};
	_cleanup_free_ char *c = git_out(ws, crlf, &len, &st);
	assert_string_equal(c, "one\r\ntwo\r\n");
	const char *const modes[] = {"ls-tree", "HEAD", "run.sh", "link", NULL};
	_cleanup_free_ char *m = git_out(ws, modes, &len, &st);
	assert_non_null(strstr(m, "100755 blob"));
	assert_non_null(strstr(m, "120000 blob"));
	/* links and executable bits are real for the agent's git */
	const char *const symlinks[] = {"config", "core.symlinks", NULL};
	_cleanup_free_ char *sl = git_out(ws, symlinks, &len, &st);
	assert_string_equal(sl, "true\n");
	const char *const filemode[] = {"config", "core.filemode", NULL};
	_cleanup_free_ char *fm = git_out(ws, filemode, &len, &st);
	assert_string_equal(fm, "true\n");
	const char *const remotes[] = {"remote", NULL};
	_cleanup_free_ char *r = git_out(ws, remotes, &len, &st);
	assert_string_equal(r, "");
	int wfd = wsfd(f, "b");
	int hooks = openat(wfd, ".git/hooks", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(hooks >= 0);
	DIR *hd = fdopendir(hooks);
	for (struct dirent *de; (de = readdir(hd));) {
		struct stat hs;
		assert_int_equal(fstatat(dirfd(hd), de->d_name, &hs, AT_SYMLINK_NOFOLLOW), 0);
		assert_false(S_ISREG(hs.st_mode) && (hs.st_mode & 0111)); /* no hook can run */
	}
	closedir(hd);

	/* the agent edits a file and rewrites .git: git and the capture see the edit only */
	wstr(wfd, "a.txt", "a1\na2\na3\n");
	const char *const diff[] = {"diff", "--name-only", "HEAD", NULL};
	_cleanup_free_ char *d = git_out(ws, diff, &len, &st);
	assert_string_equal(d, "a.txt\n");
	wstr(wfd, ".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n");
	wstr(wfd, ".git/config", "[remote \"o\"]\n\turl = /elsewhere\n");
	assert_int_equal(unlinkat(wfd, ".git/index", 0), 0);
	struct ag_ws_mutations mu;
	struct ag_ws_capture_opts co = {.expected_digest = p.digest, .skip_root_git = true};
	expect_ok(ag_ws_capture(f->rootfd, "b", &co, &mu, &e), &e);
	assert_int_equal(mu.n, 1);
	assert_string_equal(mu.v[0].path, "a.txt");
	ag_ws_mutations_release(&mu);
	/* a .git below the top is still spoofing */
	mkd(wfd, "src");
	mkd(wfd, "src/.git");
	expect_fail(f, ag_ws_capture(f->rootfd, "b", &co, &mu, &e), &e, "workspace.git_spoofing");
	close(wfd);
	_cleanup_free_ char *srcgit1 = read_rel(f->srcfd, ".git/index");
	assert_string_equal(srcgit0, srcgit1);

	/* without the option: no repository */
	struct ag_ws_prepared p3;
	expect_ok(prep(f, "n", NULL, &p3, &e), &e);
	assert_string_equal(p3.git_baseline, "");
	int nfd = wsfd(f, "n");
	struct stat gs;
	assert_int_equal(fstatat(nfd, ".git", &gs, AT_SYMLINK_NOFOLLOW), -1);
	close(nfd);
}

/* The reader's exit statuses the parent names: libgit2 that could not be
 * loaded is lib.load, not a generic reader failure. */
static void test_git_child_statuses(void **state)
{
	(void)state;
	struct ag_error *e = NULL;
	assert_int_equal(
	    ag_ws_git_child_bounds(AG_WS_GIT_CHILD_NO_LIBGIT2, "the git reader", 1, "x", &e), -1);
	assert_string_equal(e->reason, "lib.load");
	assert_non_null(strstr(e->msg, "libgit2.so"));
	ag_error_free(e);
	e = NULL;
	assert_int_equal(
	    ag_ws_git_child_bounds(AG_WS_GIT_CHILD_NO_SANDBOX, "the git reader", 1, "x", &e), -1);
	assert_string_equal(e->reason, "workspace.git_sandbox_unavailable");
	ag_error_free(e);
	e = NULL;
	assert_int_equal(ag_ws_git_child_bounds(0, "the git reader", 1, "x", &e), 0);
	assert_null(e);
}

int main(int argc, char **argv)
{
	/* this binary is also the git reader it tests (gitinfo.h) */
	if (argc > 1 && !strcmp(argv[1], AG_WS_GIT_READER_ARG))
		return ag_ws_git_reader_main(argc, argv);
	assert_int_equal(ag_ws_git_reader_enable(), 0);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_git_dirty_baseline, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_empty_repository, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_commit_after_prepare, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_same_facts_as_git, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_same_facts_conflicts, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_reader_bounded, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_reader_sandbox, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_sandbox_cpu_bound, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_outside_source_refused, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_reader_lock_held_at_spawn, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_reader_while_threads_allocate, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_paths_api, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_copy_rules, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_hostile_config, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_workspace_baseline, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_writer_sandbox, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_not_toplevel_and_broken, fx_setup,
					    fx_teardown),
	    cmocka_unit_test(test_git_child_statuses),
	};
	(void)fx_base;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
