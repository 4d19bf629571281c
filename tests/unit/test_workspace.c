/*
 * test_workspace.c: prepare / capture / cleanup on real trees, with hostile
 * sources and hostile agents. Assertions are on reason tokens.
 */
#include "fixtures/workspace/ws_test.h"

#include <jansson.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

static void basic_tree(int fd)
{
	wstr(fd, "README.md", "hello\nworld\n");
	mkd(fd, "src");
	wstr(fd, "src/main.c", "int main(void)\n{\n\treturn 0;\n}\n");
	wfile(fd, "src/tool.sh", "#!/bin/sh\necho hi\n", 18, 04775); /* setuid + g+w: masked */
	wfile(fd, "blob.bin", "a\0b\0c", 5, 0644);
	sym("src/main.c", fd, "link-to-main");
	sym("../README.md", fd, "src/up-readme");
	mkd(fd, "empty-dir");
}

static void read_evidence(struct fx *f, const char *id, const char *name, char **out)
{
	char p[160];
	snprintf(p, sizeof(p), "%s/evidence/%s", id, name);
	*out = read_rel(f->rootfd, p);
}

static void test_prepare_layout_and_metadata(void **state)
{
	struct fx *f = *state;
	basic_tree(f->srcfd);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "run-1", NULL, &p, &e), &e);
	assert_int_equal(p.source_kind, AG_WS_SOURCE_DIRECTORY);
	assert_int_equal(p.entries, 8);
	assert_int_equal(p.files, 4);
	assert_int_equal(count_dir(f->rootfd, "."), 1); /* no staging left */
	assert_int_equal(count_dir(f->rootfd, "run-1"), 2);

	int ws = wsfd(f, "run-1");
	struct stat st;
	assert_int_equal(fstatat(ws, "src/tool.sh", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(fstatat(ws, "link-to-main", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	char t[64] = {0};
	assert_int_equal(readlinkat(ws, "src/up-readme", t, sizeof(t)), 12);
	assert_string_equal(t, "../README.md");
	assert_int_equal(fstatat(ws, "empty-dir", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(ws);

	_cleanup_free_ char *meta = NULL;
	_cleanup_free_ char *base = NULL;
	read_evidence(f, "run-1", AG_WS_METADATA_FILE, &meta);
	read_evidence(f, "run-1", AG_WS_BASELINE_FILE, &base);
	assert_null(strstr(meta, f->dir));
	assert_null(strstr(base, f->dir));
	assert_null(strstr(meta, "/tmp"));
	json_error_t je;
	json_t *j = json_loads(meta, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "schema_version")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "workspace_id")), "run-1");
	assert_string_equal(json_string_value(json_object_get(j, "source_kind")), "directory");
	assert_string_equal(json_string_value(json_object_get(j, "agent_mount")),
			    "/agentguard-workspace");
	assert_string_equal(json_string_value(json_object_get(j, "evidence_mount")),
			    "/agentguard-evidence");
	assert_string_equal(json_string_value(json_object_get(j, "agentguard_evidence")),
			    "evidence");
	json_t *wp = json_object_get(j, "agent_visible_writable_paths");
	assert_int_equal(json_array_size(wp), 1);
	assert_string_equal(json_string_value(json_array_get(wp, 0)), ".");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "baseline"), "digest")), p.digest);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "limits"), "max_entries")),
	    100000);
	assert_int_equal(json_array_size(json_object_get(j, "reserved_paths")), 3);
	json_decref(j);
	/* sorted keys: "agent_mount" is the first key */
	assert_non_null(strstr(meta, "{\n  \"agent_mount\""));
	/* baseline digest is the SHA-256 of the file */
	char hex[65];
	ag_sha256_hex(base, strlen(base), hex);
	assert_string_equal(hex, p.digest);
	assert_non_null(strstr(base, "\nsource_kind\tdirectory\n"));
	assert_non_null(strstr(base, "e\tREADME.md\tf\t0644\t12\t"));
	assert_non_null(strstr(base, "\ttext\t2\t"));
	assert_non_null(strstr(base, "e\tblob.bin\tf\t0644\t5\t"));
	assert_non_null(strstr(base, "\tbinary\t0\t"));
	assert_non_null(strstr(base, "e\tlink-to-main\tl\t0777\t10\t"));

	/* capture right away: no changes; same id twice is refused */
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "run-1", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	assert_true(m.lines_complete);
	assert_string_equal(m.baseline_digest, p.digest);
	ag_ws_mutations_release(&m);
	expect_fail(f, prep(f, "run-1", NULL, &p, &e), &e, "workspace.exists");
	assert_int_equal(mkdirat(f->rootfd, "run-2.preparing", 0700), 0);
	expect_fail(f, prep(f, "run-2", NULL, &p, &e), &e, "workspace.exists");
	expect_fail(f, prep(f, "../x", NULL, &p, &e), &e, "workspace.id_invalid");
	expect_fail(f, prep(f, "x.preparing", NULL, &p, &e), &e, "workspace.id_invalid");
}

static void test_capture_classifies(void **state)
{
	struct fx *f = *state;
	basic_tree(f->srcfd);
	wstr(f->srcfd, "five.txt", "1\n2\n3\n4\n5\n");
	wstr(f->srcfd, "gone.txt", "a\nb\nc");
	wstr(f->srcfd, "moved.txt", "unique content for a rename\n");
	wstr(f->srcfd, "dup1.txt", "same\n");
	wstr(f->srcfd, "dup2.txt", "same\n");
	wstr(f->srcfd, "chmod.txt", "x\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "r", NULL, &p, &e), &e);
	int ws = wsfd(f, "r");
	wstr(ws, "five.txt", "1\n2\nthree\n4\n5\n6\n");	  /* +2 -1 */
	assert_int_equal(unlinkat(ws, "gone.txt", 0), 0); /* -3 */
	assert_int_equal(renameat(ws, "moved.txt", ws, "src/moved-here.txt"), 0);
	assert_int_equal(unlinkat(ws, "dup1.txt", 0), 0); /* ambiguous: two deleted... */
	assert_int_equal(unlinkat(ws, "dup2.txt", 0), 0);
	wstr(ws, "dup3.txt", "same\n"); /* ...one added: no rename */
	assert_int_equal(fchmodat(ws, "chmod.txt", 0600, 0), 0);
	wfile(ws, "blob.bin", "a\0b\0d", 5, 0644);
	wstr(ws, "new.txt", "n1\nn2\n");
	close(ws);

	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "r",
				&(struct ag_ws_capture_opts){.expected_digest = p.digest}, &m, &e),
		  &e);
	const struct ag_ws_change *c = find_change(&m, "five.txt");
	assert_non_null(c);
	assert_int_equal(c->kind, AG_WS_MODIFIED);
	assert_int_equal(c->lines, AG_WS_LINES_EXACT);
	assert_int_equal(c->lines_added, 2);
	assert_int_equal(c->lines_deleted, 1);
	c = find_change(&m, "gone.txt");
	assert_int_equal(c->kind, AG_WS_DELETED);
	assert_int_equal(c->lines_deleted, 3);
	c = find_change(&m, "src/moved-here.txt");
	assert_int_equal(c->kind, AG_WS_RENAMED);
	assert_string_equal(c->old_path, "moved.txt");
	assert_int_equal(c->lines_added + c->lines_deleted, 0);
	assert_null(find_change(&m, "moved.txt"));
	assert_int_equal(find_change(&m, "dup1.txt")->kind, AG_WS_DELETED);
	assert_int_equal(find_change(&m, "dup2.txt")->kind, AG_WS_DELETED);
	assert_int_equal(find_change(&m, "dup3.txt")->kind, AG_WS_ADDED);
	c = find_change(&m, "chmod.txt");
	assert_int_equal(c->kind, AG_WS_MODIFIED);
	assert_int_equal(c->lines, AG_WS_LINES_EXACT);
	assert_int_equal(c->lines_added + c->lines_deleted, 0);
	c = find_change(&m, "blob.bin");
	assert_int_equal(c->kind, AG_WS_MODIFIED);
	assert_int_equal(c->lines, AG_WS_LINES_BINARY);
	c = find_change(&m, "new.txt");
	assert_int_equal(c->kind, AG_WS_ADDED);
	assert_int_equal(c->lines_added, 2);
	assert_int_equal(m.added, 2);
	assert_int_equal(m.deleted, 3);
	assert_int_equal(m.modified, 3);
	assert_int_equal(m.renamed, 1);
	assert_false(m.lines_complete); /* the binary change */
	for (size_t i = 1; i < m.n; i++)
		assert_true(strcmp(m.v[i - 1].path, m.v[i].path) < 0);
	ag_ws_mutations_release(&m);

	/* the same capture twice is deterministic */
	struct ag_ws_mutations m2, m3;
	expect_ok(ag_ws_capture(f->rootfd, "r", NULL, &m2, &e), &e);
	expect_ok(
	    ag_ws_capture(f->rootfd, "r", &(struct ag_ws_capture_opts){.threads = 1}, &m3, &e), &e);
	assert_string_equal(m2.current_digest, m3.current_digest);
	assert_int_equal(m2.n, m3.n);
	ag_ws_mutations_release(&m2);
	ag_ws_mutations_release(&m3);
	expect_fail(f,
		    ag_ws_capture(f->rootfd, "r",
				  &(struct ag_ws_capture_opts){.expected_digest =
								   "0000000000000000000000000000"
								   "000000000000000000000000000000"
								   "000000"},
				  &m, &e),
		    &e, "workspace.baseline_mismatch");
}

/* Finding 15: changes are files and symlinks; directories are not changes. */
static void test_capture_counts_files_not_dirs(void **state)
{
	struct fx *f = *state;
	mkd(f->srcfd, "empty");
	mkd(f->srcfd, "chmoddir");
	wstr(f->srcfd, "becomes-dir", "file first\n");
	mkd(f->srcfd, "was-dir");
	wstr(f->srcfd, "was-dir/inner.txt", "i\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "dirs", NULL, &p, &e), &e);
	int ws = wsfd(f, "dirs");
	mkd(ws, "new");
	mkd(ws, "new/deeper");
	wstr(ws, "new/deeper/file.txt", "one new file\n");	  /* one change, not three */
	assert_int_equal(unlinkat(ws, "empty", AT_REMOVEDIR), 0); /* none */
	assert_int_equal(fchmodat(ws, "chmoddir", 0700, 0), 0);	  /* none */
	mkd(ws, "also-empty");					  /* none */
	assert_int_equal(unlinkat(ws, "becomes-dir", 0), 0);
	mkd(ws, "becomes-dir");
	wstr(ws, "becomes-dir/x.txt", "x\n"); /* file deleted + file added */
	assert_int_equal(unlinkat(ws, "was-dir/inner.txt", 0), 0);
	assert_int_equal(unlinkat(ws, "was-dir", AT_REMOVEDIR), 0);
	wstr(ws, "was-dir", "now a file\n"); /* file deleted + file added */
	close(ws);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "dirs", NULL, &m, &e), &e);
	static const struct {
		const char *path;
		enum ag_ws_change_kind kind;
	} want[] = {
	    {"becomes-dir", AG_WS_DELETED},	  {"becomes-dir/x.txt", AG_WS_ADDED},
	    {"new/deeper/file.txt", AG_WS_ADDED}, {"was-dir", AG_WS_ADDED},
	    {"was-dir/inner.txt", AG_WS_DELETED},
	};
	for (size_t i = 0; i < m.n; i++)
		print_message("change: %s %s\n", ag_ws_change_name(m.v[i].kind), m.v[i].path);
	assert_int_equal(m.n, AG_ARRAY_SIZE(want));
	for (size_t i = 0; i < m.n; i++) {
		assert_string_equal(m.v[i].path, want[i].path);
		assert_int_equal(m.v[i].kind, want[i].kind);
	}
	assert_int_equal(m.added, 3);
	assert_int_equal(m.deleted, 2);
	ag_ws_mutations_release(&m);
}

static void test_text_budget_incomplete(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "a.txt", "a\nb\n");	    /* retained (4 bytes) */
	wstr(f->srcfd, "b.txt", "1\n2\n3\n4\n5\n"); /* 10 bytes: past the 8-byte budget */
	struct ag_ws_limits l;
	ag_ws_limits_default(&l);
	l.max_text_bytes = 8;
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "r", &(struct ag_ws_prepare_opts){.limits = &l}, &p, &e), &e);
	assert_int_equal(p.text_bytes, 4);
	int ws = wsfd(f, "r");
	wstr(ws, "a.txt", "a\nc\n");
	wstr(ws, "b.txt", "1\n2\n3\n4\n");
	close(ws);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "r", &(struct ag_ws_capture_opts){.limits = &l}, &m, &e),
		  &e);
	assert_int_equal(find_change(&m, "a.txt")->lines, AG_WS_LINES_EXACT);
	assert_int_equal(find_change(&m, "a.txt")->lines_added, 1);
	assert_int_equal(find_change(&m, "b.txt")->lines, AG_WS_LINES_INCOMPLETE);
	assert_false(m.lines_complete);
	ag_ws_mutations_release(&m);

	/* tampered text store: fails closed, never guesses */
	char p2[64];
	snprintf(p2, sizeof(p2), "r/evidence/%s", AG_WS_TEXT_FILE);
	int fd = openat(f->rootfd, p2, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "Z", 1, 0), 1);
	close(fd);
	expect_fail(
	    f, ag_ws_capture(f->rootfd, "r", &(struct ag_ws_capture_opts){.limits = &l}, &m, &e),
	    &e, "workspace.baseline_corrupt");
}

/* ------------------------------------------------------ reserved paths */

static void test_reserved_at_prepare(void **state)
{
	struct fx *f = *state;
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	/* .git is skipped silently (any case), never copied */
	GIT(f->src, "init", "-q");
	mkd(f->srcfd, "sub");
	wstr(f->srcfd, "sub/.GIT", "gitdir: elsewhere\n");
	wstr(f->srcfd, "sub/file", "x\n");
	expect_ok(prep(f, "ok", NULL, &p, &e), &e);
	int ws = wsfd(f, "ok");
	struct stat st;
	assert_true(fstatat(ws, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_true(fstatat(ws, "sub/.GIT", &st, AT_SYMLINK_NOFOLLOW) < 0);
	close(ws);
	assert_int_equal(p.entries, 2);

	static const struct {
		const char *name;
		const char *reason;
	} cases[] = {
	    {".agentguard", "workspace.reserved_path"},
	    {".AgentGuard", "workspace.reserved_path"},
	    {".agentguard_agent_events.jsonl", "workspace.reserved_path"},
	    {".git-credentials", "workspace.reserved_prefix"},
	    {".git_hooks", "workspace.reserved_prefix"},
	    {".agentguard-cache", "workspace.reserved_prefix"},
	    {".agentguard.d", "workspace.reserved_prefix"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		wstr(f->srcfd, "sub/victim", "x\n");
		char path[128];
		snprintf(path, sizeof(path), "sub/%s", cases[i].name);
		wstr(f->srcfd, path, "secret\n");
		char id[16];
		snprintf(id, sizeof(id), "bad%zu", i);
		expect_fail(f, prep(f, id, NULL, &p, &e), &e, cases[i].reason);
		assert_int_equal(unlinkat(f->srcfd, path, 0), 0);
	}
	assert_int_equal(count_dir(f->rootfd, "."), 1); /* only "ok" */
	/* look-alikes are fine */
	wstr(f->srcfd, ".github", "x\n");
	wstr(f->srcfd, ".gitignore", "x\n");
	wstr(f->srcfd, ".gitx", "x\n");
	expect_ok(prep(f, "ok2", NULL, &p, &e), &e);
}

static void test_exclude_agentguard_root(void **state)
{
	struct fx *f = *state;
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	wstr(f->srcfd, "a", "a\n");
	mkd(f->srcfd, ".agentguard");
	wstr(f->srcfd, ".agentguard/run.json", "{}");
	expect_fail(f, prep(f, "no", NULL, &p, &e), &e, "workspace.reserved_path");
	struct ag_ws_prepare_opts o = {.exclude_agentguard_root = true};
	expect_ok(prep(f, "yes", &o, &p, &e), &e);
	assert_int_equal(p.entries, 1);
	int ws = wsfd(f, "yes");
	assert_int_equal(count_dir(ws, "."), 1);
	close(ws);
	_cleanup_free_ char *meta = NULL;
	read_evidence(f, "yes", AG_WS_METADATA_FILE, &meta);
	assert_non_null(strstr(meta, "\"excluded_paths\": [\n    \".agentguard\"\n  ]"));
	/* only a real directory at the root: nested, or a link, still fails */
	mkd(f->srcfd, "sub");
	mkd(f->srcfd, "sub/.agentguard");
	expect_fail(f, prep(f, "nested", &o, &p, &e), &e, "workspace.reserved_path");
	assert_int_equal(unlinkat(f->srcfd, "sub/.agentguard", AT_REMOVEDIR), 0);
	uint64_t a = 0, b = 0;
	assert_int_equal(ag_ws_remove_tree(f->srcfd, ".agentguard", &a, &b), 0);
	sym("sub", f->srcfd, ".agentguard");
	expect_fail(f, prep(f, "link", &o, &p, &e), &e, "workspace.reserved_path");
	/* a snapshot with NULL limits takes the defaults */
	struct ag_ws_snapshot s = AG_WS_SNAPSHOT_INIT;
	struct ag_ws_snapshot_opts so = {.mode = AG_WS_PREPARE, .dest_rootfd = -1, .text_fd = -1};
	expect_fail(f, ag_ws_snapshot_take(f->srcfd, &so, &s, &e), &e, "workspace.reserved_path");
	assert_int_equal(unlinkat(f->srcfd, ".agentguard", 0), 0);
	expect_ok(ag_ws_snapshot_take(f->srcfd, &so, &s, &e), &e);
	assert_int_equal(s.n, 2);
	ag_ws_snapshot_release(&s);
}

static void test_git_spoofing_at_capture(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "a", "a\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "r", NULL, &p, &e), &e);
	int ws = wsfd(f, "r");
	struct ag_ws_mutations m;
	static const struct {
		const char *mk;
		bool dir;
		const char *reason;
	} cases[] = {
	    {".git", true, "workspace.git_spoofing"},
	    {".Git", false, "workspace.git_spoofing"},
	    {".agentguard", true, "workspace.reserved_path"},
	    {".agentguard_agent_events.jsonl", false, "workspace.reserved_path"},
	    {".git-credentials", false, "workspace.reserved_prefix"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		mkd(ws, "deep");
		char path[128];
		snprintf(path, sizeof(path), "deep/%s", cases[i].mk);
		if (cases[i].dir)
			mkd(ws, path);
		else
			wstr(ws, path, "x\n");
		expect_fail(f, ag_ws_capture(f->rootfd, "r", NULL, &m, &e), &e, cases[i].reason);
		uint64_t a = 0, b = 0;
		assert_int_equal(ag_ws_remove_tree(ws, "deep", &a, &b), 0);
	}
	close(ws);
	expect_ok(ag_ws_capture(f->rootfd, "r", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	ag_ws_mutations_release(&m);
}

/* ------------------------------------------------------------ symlinks */

struct link_case {
	const char *link;
	const char *target;
	const char *reason; /* NULL: accepted */
};

static const struct link_case link_cases[] = {
    {"ok1", "dir/file", NULL},
    {"dir/ok2", "../dir/./file", NULL},
    {"ok3", "dir", NULL},
    {"ok4", "chain1", NULL},	   /* chain1 -> dir/file */
    {"ok5", "dirlink/file", NULL}, /* through a link to a directory */
    {"ok6", ".", NULL},
    {"abs", "/etc/passwd", "workspace.symlink.absolute"},
    {"esc1", "../outside", "workspace.symlink.escaping"},
    {"dir/esc2", "../../outside", "workspace.symlink.escaping"},
    {"esc3", "dir/../../x", "workspace.symlink.escaping"},
    {"esc4", "esclink/x", "workspace.symlink.escaping"}, /* via a link that escapes */
    {"dang1", "missing", "workspace.symlink.dangling"},
    {"dang2", "dir/file/x", "workspace.symlink.dangling"}, /* through a file */
    {"dang3", "dir/file/", "workspace.symlink.dangling"},  /* a file used as a directory */
    {"loop", "loop", "workspace.symlink.dangling"},
    {"git1", ".git/config", "workspace.symlink.git"},
    {"git2", "dir/../.git", "workspace.symlink.git"},
    {"git3", ".GIT/HEAD", "workspace.symlink.git"},
};

static void link_fixture(int fd)
{
	mkd(fd, "dir");
	wstr(fd, "dir/file", "f\n");
	sym("dir/file", fd, "chain1");
	sym("dir", fd, "dirlink");
}

static void test_symlinks_at_prepare(void **state)
{
	struct fx *f = *state;
	link_fixture(f->srcfd);
	GIT(f->src, "init", "-q");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	for (size_t i = 0; i < AG_ARRAY_SIZE(link_cases); i++) {
		const struct link_case *c = &link_cases[i];
		if (!strcmp(c->link, "esc4"))
			sym("../out", f->srcfd, "esclink");
		sym(c->target, f->srcfd, c->link);
		char id[16];
		snprintf(id, sizeof(id), "l%zu", i);
		int rc = prep(f, id, NULL, &p, &e);
		if (c->reason) {
			expect_fail(f, rc, &e, c->reason);
			assert_int_equal(unlinkat(f->srcfd, c->link, 0), 0);
			if (!strcmp(c->link, "esc4"))
				assert_int_equal(unlinkat(f->srcfd, "esclink", 0), 0);
		} else {
			expect_ok(rc, &e);
			int ws = wsfd(f, id);
			char t[64] = {0};
			assert_true(readlinkat(ws, c->link, t, sizeof(t)) > 0);
			assert_string_equal(t, c->target);
			close(ws);
		}
	}
	/* a tree with the accepted links only, then capture with each bad link */
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "l5", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	ag_ws_mutations_release(&m);
	int ws = wsfd(f, "l5");
	for (size_t i = 0; i < AG_ARRAY_SIZE(link_cases); i++) {
		const struct link_case *c = &link_cases[i];
		if (!c->reason || !strncmp(c->target, ".git", 4) || !strncmp(c->target, ".GIT", 4))
			continue;
		if (!strcmp(c->link, "esc4"))
			sym("../out", ws, "esclink");
		sym(c->target, ws, c->link);
		expect_fail(f, ag_ws_capture(f->rootfd, "l5", NULL, &m, &e), &e, c->reason);
		assert_int_equal(unlinkat(ws, c->link, 0), 0);
		if (!strcmp(c->link, "esc4"))
			assert_int_equal(unlinkat(ws, "esclink", 0), 0);
	}
	/* link into .git at capture: the .git itself is spoofing first; a bare link
	 * to .git/x (no .git present) is still a Git link */
	sym(".git/hooks/pre-commit", ws, "hook");
	expect_fail(f, ag_ws_capture(f->rootfd, "l5", NULL, &m, &e), &e, "workspace.symlink.git");
	assert_int_equal(unlinkat(ws, "hook", 0), 0);
	/* agent adds a valid link: captured as added symlink */
	sym("dir/file", ws, "newlink");
	expect_ok(ag_ws_capture(f->rootfd, "l5", NULL, &m, &e), &e);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.v[0].new_kind, AG_WS_SYMLINK);
	assert_int_equal(m.v[0].lines, AG_WS_LINES_NOT_APPLICABLE);
	ag_ws_mutations_release(&m);
	close(ws);
}

/* ---------------------------------------------- hardlinks, special files */

static void test_hardlink_and_special(void **state)
{
	struct fx *f = *state;
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	struct ag_ws_mutations m;
	wstr(f->srcfd, "a", "a\n");
	assert_int_equal(linkat(f->srcfd, "a", f->srcfd, "b", 0), 0);
	expect_fail(f, prep(f, "h", NULL, &p, &e), &e, "workspace.hardlink");
	assert_int_equal(unlinkat(f->srcfd, "b", 0), 0);

	assert_int_equal(mkfifoat(f->srcfd, "fifo", 0644), 0);
	alarm(20); /* a FIFO must never hang the walk */
	expect_fail(f, prep(f, "f", NULL, &p, &e), &e, "workspace.special_file");
	assert_int_equal(unlinkat(f->srcfd, "fifo", 0), 0);

	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", f->src);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	expect_fail(f, prep(f, "s", NULL, &p, &e), &e, "workspace.special_file");
	close(s);
	assert_int_equal(unlinkat(f->srcfd, "sock", 0), 0);

	if (mknodat(f->srcfd, "null", S_IFCHR | 0600, makedev(1, 3)) == 0) {
		expect_fail(f, prep(f, "d", NULL, &p, &e), &e, "workspace.special_file");
		assert_int_equal(unlinkat(f->srcfd, "null", 0), 0);
	}
	expect_root_empty(f);

	/* the agent does the same: capture fails closed, never blocks */
	expect_ok(prep(f, "r", NULL, &p, &e), &e);
	int ws = wsfd(f, "r");
	assert_int_equal(linkat(ws, "a", ws, "hard", 0), 0);
	expect_fail(f, ag_ws_capture(f->rootfd, "r", NULL, &m, &e), &e, "workspace.hardlink");
	assert_int_equal(unlinkat(ws, "hard", 0), 0);
	assert_int_equal(mkfifoat(ws, "fifo", 0644), 0);
	expect_fail(f, ag_ws_capture(f->rootfd, "r", NULL, &m, &e), &e, "workspace.special_file");
	assert_int_equal(unlinkat(ws, "fifo", 0), 0);
	alarm(0);
	close(ws);
}

/* ------------------------------------------------------------- TOCTOU */

struct swap_ctx {
	int dirfd;
	const char *victim;
	int how; /* 0: symlink, 1: other regular file, 2: fifo, 3: dir->symlink */
};

static void swap_hook(void *arg)
{
	struct swap_ctx *c = arg;
	if (c->how == 3) {
		assert_int_equal(renameat(c->dirfd, "d", c->dirfd, "d.moved"), 0);
		assert_int_equal(symlinkat("d.moved", c->dirfd, "d"), 0);
		return;
	}
	assert_int_equal(unlinkat(c->dirfd, c->victim, 0), 0);
	if (c->how == 0)
		assert_int_equal(symlinkat("other", c->dirfd, c->victim), 0);
	else if (c->how == 1)
		wstr(c->dirfd, c->victim, "swapped content\n");
	else
		assert_int_equal(mkfifoat(c->dirfd, c->victim, 0644), 0);
}

static void swap_fixture(int fd)
{
	wstr(fd, "other", "other\n");
	wstr(fd, "victim", "original content\n");
	mkd(fd, "d");
	wstr(fd, "d/inner", "inner\n");
}

static void run_toctou(struct fx *f)
{
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	alarm(20);
	for (int how = 0; how < 4; how++) {
		struct ag_ws_limits l;
		ag_ws_limits_default(&l);
		uint64_t a = 0, b = 0;
		ag_ws_remove_tree(f->srcfd, "victim", &a, &b);
		ag_ws_remove_tree(f->srcfd, "other", &a, &b);
		ag_ws_remove_tree(f->srcfd, "d", &a, &b);
		ag_ws_remove_tree(f->srcfd, "d.moved", &a, &b);
		swap_fixture(f->srcfd);
		struct swap_ctx c = {f->srcfd, "victim", how};
		struct ag_ws_prepare_opts o = {.after_walk = swap_hook, .hook_ctx = &c};
		expect_fail(f, prep(f, "t", &o, &p, &e), &e, "workspace.source_changed");
		expect_root_empty(f);
	}
	/* and at capture: the agent swaps a file between walk and hash */
	uint64_t a = 0, b = 0;
	ag_ws_remove_tree(f->srcfd, "d", &a, &b);
	ag_ws_remove_tree(f->srcfd, "d.moved", &a, &b);
	ag_ws_remove_tree(f->srcfd, "victim", &a, &b);
	ag_ws_remove_tree(f->srcfd, "other", &a, &b);
	swap_fixture(f->srcfd);
	expect_ok(prep(f, "c", NULL, &p, &e), &e);
	int ws = wsfd(f, "c");
	for (int how = 0; how < 3; how++) {
		struct swap_ctx c = {ws, "victim", how};
		struct ag_ws_mutations m;
		struct ag_ws_capture_opts o = {.after_walk = swap_hook, .hook_ctx = &c};
		expect_fail(f, ag_ws_capture(f->rootfd, "c", &o, &m, &e), &e,
			    "workspace.source_changed");
		ag_ws_remove_tree(ws, "victim", &a, &b);
		wstr(ws, "victim", "original content\n");
	}
	close(ws);
	alarm(0);
}

static void test_toctou_swap(void **state)
{
	run_toctou(*state);
}

static void test_toctou_swap_no_openat2(void **state)
{
	ag_ws_force_no_openat2 = true;
	run_toctou(*state);
	/* and a full prepare/capture on the fallback path */
	struct fx *f = *state;
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	mkd(f->srcfd, "x");
	mkd(f->srcfd, "x/y");
	wstr(f->srcfd, "x/y/z", "z\n");
	expect_ok(prep(f, "fb", NULL, &p, &e), &e);
	int ws = wsfd(f, "fb");
	wstr(ws, "x/y/z", "zz\n");
	close(ws);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "fb", NULL, &m, &e), &e);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.v[0].path, "x/y/z");
	ag_ws_mutations_release(&m);
	ag_ws_force_no_openat2 = false;
	/* the fallback refuses an intermediate symlink */
	ag_ws_force_no_openat2 = true;
	sym("x", f->srcfd, "lx");
	int fd = ag_ws_open_beneath(f->srcfd, "lx/y/z", O_RDONLY, 0);
	assert_true(fd < 0);
	assert_int_equal(errno, ELOOP);
	fd = ag_ws_open_beneath(f->srcfd, "../src/x/y/z", O_RDONLY, 0);
	assert_true(fd < 0);
	ag_ws_force_no_openat2 = false;
	fd = ag_ws_open_beneath(f->srcfd, "lx/y/z", O_RDONLY, 0);
	assert_true(fd < 0);
	fd = ag_ws_open_beneath(f->srcfd, "x/y/z", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
}

/* Racing thread: swaps a file for a symlink in a tight loop while prepare runs. */
struct racer {
	int dirfd;
	atomic_bool stop;
};

static void *race_loop(void *arg)
{
	struct racer *r = arg;
	while (!atomic_load(&r->stop)) {
		(void)!symlinkat("target", r->dirfd, "racy.tmp");
		(void)renameat(r->dirfd, "racy.tmp", r->dirfd, "racy");
		int fd =
		    openat(r->dirfd, "racy.new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			(void)!write(fd, "regular\n", 8);
			close(fd);
		}
		(void)renameat(r->dirfd, "racy.new", r->dirfd, "racy");
	}
	return NULL;
}

static void test_toctou_racing_thread(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "target", "t\n");
	for (int i = 0; i < 200; i++) {
		char n[32];
		snprintf(n, sizeof(n), "f%03d", i);
		wstr(f->srcfd, n, "filler\n");
	}
	wstr(f->srcfd, "racy", "regular\n"); /* exists before the race starts */
	struct racer r = {.dirfd = f->srcfd};
	atomic_init(&r.stop, false);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, race_loop, &r), 0);
	enum { N = 30 };
	int rc[N];
	char *reason[N] = {0};
	char *msg[N] = {0};
	for (int i = 0; i < N; i++) {
		char id[16];
		snprintf(id, sizeof(id), "race%d", i);
		struct ag_ws_prepared p;
		struct ag_error *e = NULL;
		rc[i] = prep(f, id, NULL, &p, &e);
		if (rc[i] < 0) {
			reason[i] = ag_xstrdup(e->reason);
			msg[i] = ag_xstrdup(e->msg);
			ag_error_freep(&e);
		}
	}
	/* stop the racer before any assertion can leave this frame */
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	int ok = 0, failed = 0;
	for (int i = 0; i < N; i++) {
		char id[16];
		snprintf(id, sizeof(id), "race%d", i);
		struct stat st;
		if (rc[i] == 0) {
			/* whatever was captured is self-consistent: a link to "target" or
			 * the regular content; never a swapped mix */
			int ws = wsfd(f, id);
			assert_int_equal(fstatat(ws, "racy", &st, AT_SYMLINK_NOFOLLOW), 0);
			if (S_ISREG(st.st_mode))
				assert_int_equal(st.st_size, 8);
			close(ws);
			ok++;
			continue;
		}
		if (strcmp(reason[i], "workspace.source_changed"))
			fail_msg("run %d failed with %s: %s", i, reason[i], msg[i]);
		free(reason[i]);
		free(msg[i]);
		/* nothing partial */
		assert_true(fstatat(f->rootfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0);
		char sp[32];
		snprintf(sp, sizeof(sp), "%s.preparing", id);
		assert_true(fstatat(f->rootfd, sp, &st, AT_SYMLINK_NOFOLLOW) < 0);
		failed++;
	}
	print_message("# race: %d prepared, %d failed closed\n", ok, failed);
}

/* --------------------------------------------------------------- names */

static void test_hostile_names(void **state)
{
	struct fx *f = *state;
	static const char *const names[] = {
	    "with space",
	    "new\nline",
	    "tab\there",
	    "ctl\x01\x1f\x7f",
	    "bad\xff\xfeutf8",
	    "caf\xc3\xa9",
	    "100%",
	    "back\\slash",
	    "-dash",
	    "trail ",
	    "\xed\xa0\x80surrogate",
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(names); i++)
		wstr(f->srcfd, names[i], names[i]);
	mkd(f->srcfd, "dir\nwith\nnewlines");
	wstr(f->srcfd, "dir\nwith\nnewlines/f\xc0", "x\n");
	sym("with space", f->srcfd, "link\xff");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "n", NULL, &p, &e), &e);
	_cleanup_free_ char *base = NULL;
	read_evidence(f, "n", AG_WS_BASELINE_FILE, &base);
	assert_non_null(strstr(base, "e\tnew%0Aline\t"));
	assert_non_null(strstr(base, "e\tbad%FF%FEutf8\t"));
	assert_non_null(strstr(base, "e\tcaf\xc3\xa9\t"));
	assert_non_null(strstr(base, "e\t100%25\t"));
	assert_non_null(strstr(base, "e\tctl%01%1F%7F\t"));
	assert_non_null(strstr(base, "\tl\t0777\t10\t"));
	assert_non_null(strstr(base, "\twith space\n")); /* link target */
	/* every line is printable except the separators */
	for (const char *c = base; *c; c++)
		assert_true(*c == '\n' || *c == '\t' || (unsigned char)*c >= 0x20);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "n", NULL, &m, &e), &e);
	assert_int_equal(m.n, 0);
	ag_ws_mutations_release(&m);
	int ws = wsfd(f, "n");
	wstr(ws, "bad\xff\xfeutf8", "changed\n");
	assert_int_equal(renameat(ws, "new\nline", ws, "new\nname\x80"), 0);
	close(ws);
	expect_ok(ag_ws_capture(f->rootfd, "n", NULL, &m, &e), &e);
	assert_int_equal(m.n, 2);
	const struct ag_ws_change *c = find_change(&m, "bad\xff\xfeutf8");
	assert_non_null(c);
	assert_int_equal(c->kind, AG_WS_MODIFIED);
	c = find_change(&m, "new\nname\x80");
	assert_non_null(c);
	assert_int_equal(c->kind, AG_WS_RENAMED);
	assert_string_equal(c->old_path, "new\nline");
	ag_ws_mutations_release(&m);
	/* an error about a hostile name is escaped and bounded */
	char longname[256];
	memset(longname, 'A', 250);
	longname[0] = '\n';
	longname[250] = '\0';
	assert_int_equal(mkfifoat(f->srcfd, longname, 0600), 0);
	assert_true(prep(f, "n2", NULL, &p, &e) < 0);
	assert_non_null(e);
	assert_string_equal(e->reason, "workspace.special_file");
	assert_null(strchr(e->msg, '\n'));
	assert_non_null(strstr(e->msg, "%0AAAA"));
	assert_true(strlen(e->msg) < 300);
	ag_error_freep(&e);
}

static void test_path_encoding(void **state)
{
	(void)state;
	static const char *const in[] = {
	    "plain",	"a b", "%", "\n", "\xff", "caf\xc3\xa9", "\xe2\x82", "\xf0\x9f\x98\x80",
	    "\xc0\xaf", ""};
	static const char *const want[] = {
	    "plain",  "a b", "%25", "%0A", "%FF", "caf\xc3\xa9", "%E2%82", "\xf0\x9f\x98\x80",
	    "%C0%AF", ""};
	for (size_t i = 0; i < AG_ARRAY_SIZE(in); i++) {
		struct ag_buf b = AG_BUF_INIT(1024, NULL);
		struct ag_error *e = NULL;
		assert_int_equal(ag_ws_path_encode(&b, in[i], strlen(in[i]), &e), 0);
		assert_string_equal(b.buf, want[i]);
		size_t n;
		char *d = ag_ws_path_decode(b.buf, b.len, &n);
		assert_non_null(d);
		assert_int_equal(n, strlen(in[i]));
		assert_memory_equal(d, in[i], n);
		free(d);
		ag_buf_release(&b);
	}
	assert_null(ag_ws_path_decode("%Z1", 3, NULL));
	assert_null(ag_ws_path_decode("%1", 2, NULL));
	assert_null(ag_ws_path_decode("a\nb", 3, NULL));
	assert_true(ag_ws_utf8_valid((const unsigned char *)"caf\xc3\xa9", 5));
	assert_false(ag_ws_utf8_valid((const unsigned char *)"\xed\xa0\x80", 3));
	assert_false(ag_ws_utf8_valid((const unsigned char *)"\xf4\x90\x80\x80", 4));
}

static void test_content_kinds(void **state)
{
	struct fx *f = *state;
	/* a multi-byte character split across the 256 KiB read chunk stays text */
	size_t n = 256 * 1024 + 10;
	char *big = ag_xmalloc(n);
	memset(big, 'a', n);
	big[256 * 1024 - 1] = (char)0xe2;
	big[256 * 1024] = (char)0x82;
	big[256 * 1024 + 1] = (char)0xac;
	big[n - 1] = '\n';
	wfile(f->srcfd, "split-utf8.txt", big, n, 0644);
	big[256 * 1024 + 1] = 'x'; /* now invalid */
	wfile(f->srcfd, "bad-utf8.txt", big, n, 0644);
	free(big);
	wstr(f->srcfd, "latin1.txt", "caf\xe9\nx");
	wstr(f->srcfd, "empty.txt", "");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "k", NULL, &p, &e), &e);
	_cleanup_free_ char *base = NULL;
	read_evidence(f, "k", AG_WS_BASELINE_FILE, &base);
	assert_non_null(strstr(base, "e\tsplit-utf8.txt\tf\t0644\t262154\t"));
	char *l = strstr(base, "e\tsplit-utf8.txt");
	assert_non_null(strstr(l, "\ttext\t1\t"));
	l = strstr(base, "e\tbad-utf8.txt");
	assert_true(strstr(l, "\tnon_utf8\t1\t") < strstr(l, "\n"));
	l = strstr(base, "e\tlatin1.txt");
	assert_true(strstr(l, "\tnon_utf8\t2\t") < strstr(l, "\n"));
	l = strstr(base, "e\tempty.txt");
	assert_true(strstr(l, "\ttext\t0\t-\t") < strstr(l, "\n"));
	/* line diff over non-UTF-8 text is exact too */
	int ws = wsfd(f, "k");
	wstr(ws, "latin1.txt", "caf\xe9\ny\nz\n");
	close(ws);
	struct ag_ws_mutations m;
	expect_ok(ag_ws_capture(f->rootfd, "k", NULL, &m, &e), &e);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.v[0].lines, AG_WS_LINES_EXACT);
	assert_int_equal(m.v[0].lines_added, 2);
	assert_int_equal(m.v[0].lines_deleted, 1);
	ag_ws_mutations_release(&m);
}

static void test_line_diff(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		uint64_t add, del;
	} t[] = {
	    {"", "", 0, 0},
	    {"a\n", "a\n", 0, 0},
	    {"", "a\nb\n", 2, 0},
	    {"a\nb\n", "", 0, 2},
	    {"a\nb\nc\n", "a\nc\n", 0, 1},
	    {"a\nb\nc\n", "a\nB\nc\n", 1, 1},
	    {"a", "a\n", 1, 1}, /* newline at EOF changes the last line */
	    {"a\nb\nc\nd\n", "d\nc\nb\na\n", 3, 3},
	    {"x\ny\nx\ny\n", "y\nx\ny\nx\n", 1, 1},
	    {"1\n2\n3\n4\n5\n", "1\n2\nthree\n4\n5\n6\n", 2, 1},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		uint64_t a = 99, d = 99;
		assert_int_equal(
		    ag_ws_line_diff(t[i].a, strlen(t[i].a), t[i].b, strlen(t[i].b), &a, &d), 0);
		if (a != t[i].add || d != t[i].del)
			fail_msg("case %zu: +%" PRIu64 " -%" PRIu64, i, a, d);
	}
}

/* ------------------------------------------------------------- unreadable */

static void unreadable_body(struct fx *f)
{
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	mkd(f->srcfd, "locked");
	wstr(f->srcfd, "locked/x", "x\n");
	wstr(f->srcfd, "ok", "ok\n");
	assert_int_equal(fchmodat(f->srcfd, "locked", 0000, 0), 0);
	expect_fail(f, prep(f, "u", NULL, &p, &e), &e, "workspace.unreadable");
	expect_root_empty(f);
	assert_int_equal(fchmodat(f->srcfd, "locked", 0755, 0), 0);
	wfile(f->srcfd, "noread", "secret\n", 7, 0000);
	expect_fail(f, prep(f, "u2", NULL, &p, &e), &e, "workspace.unreadable");
	expect_root_empty(f);
	/* the agent locks a directory / a file of the workspace: capture fails closed */
	assert_int_equal(unlinkat(f->srcfd, "noread", 0), 0);
	expect_ok(prep(f, "u3", NULL, &p, &e), &e);
	int ws = wsfd(f, "u3");
	assert_int_equal(fchmodat(ws, "locked", 0000, 0), 0);
	struct ag_ws_mutations m;
	expect_fail(f, ag_ws_capture(f->rootfd, "u3", NULL, &m, &e), &e, "workspace.unreadable");
	assert_int_equal(fchmodat(ws, "locked", 0755, 0), 0);
	assert_int_equal(fchmodat(ws, "ok", 0000, 0), 0);
	expect_fail(f, ag_ws_capture(f->rootfd, "u3", NULL, &m, &e), &e, "workspace.unreadable");
	/* cleanup still removes what the agent locked */
	assert_int_equal(fchmodat(ws, "locked", 0000, 0), 0);
	close(ws);
	struct ag_ws_cleanup_report rep;
	expect_ok(ag_ws_cleanup(f->rootfd, "u3", &rep, &e), &e);
	expect_root_empty(f);
}

static void test_unreadable(void **state)
{
	struct fx *f = *state;
	if (geteuid() != 0) {
		unreadable_body(f);
		return;
	}
	/* root reads everything: run the body as nobody in a child process */
	assert_int_equal(chown(f->dir, 65534, 65534), 0);
	assert_int_equal(chown(f->src, 65534, 65534), 0);
	assert_int_equal(chown(f->root, 65534, 65534), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(3);
		unreadable_body(f);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* --------------------------------------------------------- cleanup, misc */

static void test_cleanup_owned_only(void **state)
{
	struct fx *f = *state;
	basic_tree(f->srcfd);
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	struct ag_ws_cleanup_report rep;
	expect_ok(prep(f, "c1", NULL, &p, &e), &e);
	expect_ok(prep(f, "c2", NULL, &p, &e), &e);
	/* hostile agent: read-only dirs, a link pointing out of the tree */
	int ws = wsfd(f, "c1");
	mkd(ws, "ro");
	wstr(ws, "ro/f", "f\n");
	assert_int_equal(fchmodat(ws, "ro", 0500, 0), 0);
	assert_int_equal(fchmodat(ws, ".", 0500, 0), 0);
	sym("../../../c2", ws, "escape");
	close(ws);
	expect_ok(ag_ws_cleanup(f->rootfd, "c1", &rep, &e), &e);
	assert_true(rep.complete);
	assert_int_equal(rep.remaining, 0);
	assert_true(rep.removed > 10);
	assert_int_equal(count_dir(f->rootfd, "."), 1);
	assert_int_equal(count_dir(f->rootfd, "c2/workspace/src"), 3); /* untouched */
	/* something nobody recorded stays, and cleanup says so */
	wstr(f->rootfd, "c2/not-ours", "x\n");
	expect_fail(f, ag_ws_cleanup(f->rootfd, "c2", &rep, &e), &e,
		    "workspace.cleanup_incomplete");
	assert_false(rep.complete);
	assert_int_equal(count_dir(f->rootfd, "c2"), 1);
	expect_fail(f, ag_ws_cleanup(f->rootfd, "nope", &rep, &e), &e, "workspace.not_found");
	/* a run dir replaced by a symlink is not ours */
	assert_int_equal(symlinkat("c2", f->rootfd, "c3"), 0);
	expect_fail(f, ag_ws_cleanup(f->rootfd, "c3", &rep, &e), &e, "workspace.not_owned");
	assert_int_equal(count_dir(f->rootfd, "c2"), 1);
}

static void test_writable_and_mounts(void **state)
{
	(void)state;
	static const struct {
		const char *p[4];
		size_t n;
		const char *reason; /* NULL: ok */
		const char *first;
	} t[] = {
	    {{"."}, 1, NULL, "."},
	    {{"./"}, 1, NULL, "."},
	    {{"src", "docs/"}, 2, NULL, "docs"},
	    {{"src", "."}, 2, "workspace.writable.root_not_alone", NULL},
	    {{"src", "src"}, 2, "workspace.writable.duplicate", NULL},
	    {{"src", "src/sub"}, 2, "workspace.writable.overlap", NULL},
	    {{"src/sub", "src"}, 2, "workspace.writable.overlap", NULL},
	    {{"src", "srcx"}, 2, NULL, "src"},
	    {{"../x"}, 1, "workspace.writable.invalid", NULL},
	    {{"/abs"}, 1, "workspace.writable.invalid", NULL},
	    {{"a//b"}, 1, "workspace.writable.invalid", NULL},
	    {{"a/./b"}, 1, "workspace.writable.invalid", NULL},
	    {{"a\\b"}, 1, "workspace.writable.invalid", NULL},
	    {{".git"}, 1, "workspace.writable.reserved", NULL},
	    {{"x/.agentguard/y"}, 1, "workspace.writable.reserved", NULL},
	    {{".git-credentials"}, 1, "workspace.writable.reserved", NULL},
	    {{""}, 1, "workspace.writable.invalid", NULL},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_strv out = AG_STRV_INIT;
		struct ag_error *e = NULL;
		int rc = ag_ws_writable_normalise(t[i].p, t[i].n, &out, &e);
		if (t[i].reason) {
			assert_true(rc < 0);
			if (strcmp(e->reason, t[i].reason))
				fail_msg("case %zu: %s", i, e->reason);
			ag_error_free(e);
		} else {
			expect_ok(rc, &e);
			assert_string_equal(out.v[0], t[i].first);
		}
		ag_strv_release(&out);
	}
	struct ag_error *e = NULL;
	assert_int_equal(ag_ws_mounts_validate("/agentguard-workspace", "/agentguard-evidence", &e),
			 0);
	static const char *const bad[][2] = {
	    {"/w", "/w"}, {"/w", "/w/e"}, {"/w/e", "/w"},    {"/", "/e"},
	    {"w", "/e"},  {"/w/", "/e"},  {"/w/../x", "/e"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++) {
		assert_true(ag_ws_mounts_validate(bad[i][0], bad[i][1], &e) < 0);
		ag_error_freep(&e);
	}
	assert_int_equal(ag_ws_mounts_validate("/w", "/wx", &e), 0);
}

static void test_baseline_tamper(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "a", "a\n");
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	expect_ok(prep(f, "r", NULL, &p, &e), &e);
	_cleanup_free_ char *base = NULL;
	read_evidence(f, "r", AG_WS_BASELINE_FILE, &base);
	char *x = strstr(base, "e\ta\t");
	x[2] = 'b';
	char path[64];
	snprintf(path, sizeof(path), "r/evidence/%s", AG_WS_BASELINE_FILE);
	wfile(f->rootfd, path, base, strlen(base), 0600);
	struct ag_ws_mutations m;
	expect_fail(f, ag_ws_capture(f->rootfd, "r", NULL, &m, &e), &e,
		    "workspace.baseline_mismatch");
}

/* Rollback that cannot finish says so: the staging tree is made immutable. */
struct imm_ctx {
	int rootfd;
	bool applied;
};

static void set_immutable(int rootfd, bool on, bool *applied)
{
	int fd = openat(rootfd, "rb.preparing/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	int fl = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0) {
		fl = on ? (fl | FS_IMMUTABLE_FL) : (fl & ~FS_IMMUTABLE_FL);
		if (ioctl(fd, FS_IOC_SETFLAGS, &fl) == 0 && applied)
			*applied = true;
	}
	close(fd);
}

static void immutable_hook(void *arg)
{
	struct imm_ctx *c = arg;
	set_immutable(c->rootfd, true, &c->applied);
}

static void test_rollback_failed(void **state)
{
	struct fx *f = *state;
	wstr(f->srcfd, "a", "a\n");
	struct imm_ctx c = {.rootfd = f->rootfd};
	struct ag_ws_prepare_opts o = {.after_walk = immutable_hook, .hook_ctx = &c};
	struct ag_ws_prepared p;
	struct ag_error *e = NULL;
	int rc = prep(f, "rb", &o, &p, &e);
	if (!c.applied) {
		ag_error_freep(&e);
		skip(); /* no CAP_LINUX_IMMUTABLE or no ext2-style flags here */
	}
	set_immutable(f->rootfd, false, NULL);
	assert_true(rc < 0);
	assert_string_equal(e->reason, "workspace.rollback_failed");
	assert_int_equal(e->code, AG_E_CLEANUP);
	assert_non_null(strstr(e->msg, "rollback left"));
	assert_null(strstr(e->msg, f->dir));
	ag_error_freep(&e);
	/* the leftover is the staging tree, never a published workspace */
	struct stat st;
	assert_true(fstatat(f->rootfd, "rb", &st, AT_SYMLINK_NOFOLLOW) < 0);
	assert_int_equal(fstatat(f->rootfd, "rb.preparing", &st, AT_SYMLINK_NOFOLLOW), 0);
}

int main(int argc, char **argv)
{
	/* this binary is also the git reader the prepare starts (gitinfo.h) */
	if (argc > 1 && !strcmp(argv[1], AG_WS_GIT_READER_ARG))
		return ag_ws_git_reader_main(argc, argv);
	if (ag_ws_git_reader_enable() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_prepare_layout_and_metadata, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_capture_classifies, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_capture_counts_files_not_dirs, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_text_budget_incomplete, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_reserved_at_prepare, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_exclude_agentguard_root, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_git_spoofing_at_capture, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_symlinks_at_prepare, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_hardlink_and_special, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_toctou_swap, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_toctou_swap_no_openat2, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_toctou_racing_thread, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_names, fx_setup, fx_teardown),
	    cmocka_unit_test(test_path_encoding),
	    cmocka_unit_test_setup_teardown(test_content_kinds, fx_setup, fx_teardown),
	    cmocka_unit_test(test_line_diff),
	    cmocka_unit_test_setup_teardown(test_unreadable, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_cleanup_owned_only, fx_setup, fx_teardown),
	    cmocka_unit_test(test_writable_and_mounts),
	    cmocka_unit_test_setup_teardown(test_baseline_tamper, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_rollback_failed, fx_setup, fx_teardown),
	};
	const char *only = getenv("WS_FILTER");
	if (only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
