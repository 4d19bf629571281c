/*
 * Post-execution policy checks: path pattern semantics, every check passing
 * and failing, both ends of a rename, severity overrides, scoring, the
 * fail-closed line-count cases, the content-scan bounds (at and past each)
 * and that no message or evidence ever carries a planted secret value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/redact.h"
#include "lib/config/config.h"
#include "lib/policy/checks.h"
#include "lib/config/env_allowlist.h"
#include "lib/policy/pathmatch.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/snapshot.h"

#include <ftw.h>
#include <jansson.h>
#include <sys/stat.h>

/* ---- path patterns ---- */

static void test_pathmatch_table(void **state)
{
	(void)state;
	static const struct {
		const char *pat, *path;
		int want;
	} t[] = {
	    {"secrets/**", "secrets/a/b.txt", 1},
	    {"secrets/**", "secrets/token.txt", 1},
	    {"secrets/**", "secrets", 0},
	    {"secrets/**", "src/secrets/a", 0},
	    {"src/*", "src/a/b.c", 1}, /* '*' crosses '/' */
	    {"*.py", "a/b/c.py", 1},
	    {"*.py", "a/b/c.pyc", 0},
	    {"*", "any/thing/at/all", 1},
	    {"?.txt", "a.txt", 1},
	    {"?.txt", "ab.txt", 0},
	    {"?", "/", 0}, /* the path "/" normalises to "" */
	    {"a?c", "a/c", 1},
	    {"[abc].c", "b.c", 1},
	    {"[abc].c", "d.c", 0},
	    {"[!abc].c", "b.c", 0},
	    {"[!abc].c", "d.c", 1},
	    {"[a-c]x", "bx", 1},
	    {"[a-c]x", "dx", 0},
	    {"[z-a]x", "zx", 0}, /* reversed range: empty */
	    {"[]]x", "]x", 1},	 /* ']' first is literal */
	    {"[!]]x", "ax", 1},
	    {"[!]]x", "]x", 0},
	    {"[x", "[x", 1}, /* no closing ']': literal '[' */
	    {"[a-]", "-", 1},
	    {"Secrets/*", "secrets/a", 0}, /* case-sensitive */
	    {"secrets/*", "Secrets/a", 0},
	    {"/secrets/", "secrets", 1}, /* leading/trailing '/' stripped */
	    {"/docs/*", "docs/a.md", 1},
	    {"secrets\\*", "secrets/a", 1}, /* '\' is '/' */
	    {"secrets/*", "secrets\\a", 1},
	    {"a*b*c", "axxbyyc", 1},
	    {"a*b*c", "axxbyy", 0},
	    {"**/test_*.py", "pkg/tests/test_x.py", 1},
	    {"tests/**", "tests/test_a.sh", 1},
	    {"?", "\xc3\xbc", 1}, /* one code point */
	    {"??", "\xc3\xbc", 0},
	    {"[\xc3\xbc]", "\xc3\xbc", 1},
	    {"*.txt", ".txt", 1}, /* no special leading-dot rule */
	    {"src/*.c", "src/.hidden.c", 1},
	    {"exact/path.txt", "exact/path.txt", 1},
	    {"exact/path.txt", "exact/path.txt2", 0},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		int got = ag_pm_match(t[i].pat, t[i].path);
		if (got != t[i].want)
			print_error("pattern '%s' path '%s': got %d want %d\n", t[i].pat, t[i].path,
				    got, t[i].want);
		assert_int_equal(got, t[i].want);
	}
	char *n = ag_pm_normalise("\\\\a\\b//");
	assert_string_equal(n, "a/b");
	free(n);
}

static void test_pathmatch_bounded(void **state)
{
	(void)state;
	/* A pathological pattern: the work bound answers, quickly, with LIMIT. */
	char path[4097], pat[1002];
	memset(path, 'a', 4096);
	path[4096] = '\0';
	for (size_t i = 0; i < 1000; i += 2) {
		pat[i] = '*';
		pat[i + 1] = 'a';
	}
	pat[1000] = 'b';
	pat[1001] = '\0';
	assert_int_equal(ag_pm_match_bounded(pat, path, 1000), AG_PM_LIMIT);
	int r = ag_pm_match(pat, path); /* default bound: an answer or LIMIT, never a hang */
	assert_true(r == AG_PM_LIMIT || r == AG_PM_NOMATCH);
	assert_int_equal(ag_pm_match_bounded("*b", "ab", 1000), AG_PM_MATCH);
}

/* ---- fixtures ---- */

static const char base_yaml[] = "task_id: t\n"
				"description: d\n"
				"test_command: 'true'\n"
				"mode: ci\n";

static struct ag_config *cfg(const char *extra)
{
	char *doc = ag_xasprintf("%s%s%s", base_yaml,
				 strstr(extra, "expected_modified_files")
				     ? ""
				     : "expected_modified_files: {min: 0, max: 100}\n",
				 extra);
	struct ag_config *c = NULL;
	struct ag_error *e = NULL;
	if (ag_config_load_mem(doc, strlen(doc), "t.yaml", &c, &e) < 0) {
		print_error("config: %s [%s]\n", e->msg, e->reason);
		fail();
	}
	free(doc);
	return c;
}

static void add(struct ag_ws_mutations *m, enum ag_ws_change_kind k, const char *path,
		const char *old, enum ag_ws_lines lines, uint64_t la, uint64_t ld)
{
	m->v = ag_xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	struct ag_ws_change *c = &m->v[m->n++];
	memset(c, 0, sizeof(*c));
	c->kind = k;
	c->path = ag_xstrdup(path);
	c->old_path = old ? ag_xstrdup(old) : NULL;
	c->old_kind = k == AG_WS_ADDED ? 0 : AG_WS_FILE;
	c->new_kind = k == AG_WS_DELETED ? 0 : AG_WS_FILE;
	c->lines = lines;
	c->lines_added = la;
	c->lines_deleted = ld;
	if (lines == AG_WS_LINES_EXACT) {
		m->lines_added += la;
		m->lines_deleted += ld;
	}
}

struct run_in {
	const struct ag_ws_mutations *mut;
	bool ran;
	int exit;
	int wsfd;
	const char *const *argv;
	size_t argc;
	bool blocked;
	const struct ag_scan_limits *lim;
	const struct ag_env_resolved *env;
};

static void eval(const struct ag_config *c, const struct run_in *ri, struct ag_checks *out)
{
	struct ag_check_input in = {
	    .cfg = c,
	    .mut = ri->mut,
	    .command_ran = ri->ran,
	    .command_exit = ri->exit,
	    .argv = ri->argv,
	    .argc = ri->argc,
	    .policy_blocked = ri->blocked,
	    .workspace_fd = ri->wsfd,
	    .limits = ri->lim,
	    .env = ri->env,
	};
	struct ag_error *e = NULL;
	assert_int_equal(ag_checks_evaluate(&in, out, &e), 0);
	assert_null(e);
}

static bool has_ev(const struct ag_check_result *r, const char *want)
{
	for (size_t i = 0; i < r->evidence.n; i++)
		if (strcmp(r->evidence.v[i], want) == 0)
			return true;
	for (size_t i = 0; i < r->evidence.n; i++)
		print_error("  evidence[%zu]: %s\n", i, r->evidence.v[i]);
	print_error("  wanted: %s\n", want);
	return false;
}

/* Every string a check produces, JSON included, must be free of `secret`. */
static void assert_no_secret(const struct ag_checks *k, const char *secret)
{
	for (int i = 0; i < AG_CK__COUNT; i++) {
		if (k->v[i].message)
			assert_null(strstr(k->v[i].message, secret));
		for (size_t j = 0; j < k->v[i].evidence.n; j++)
			assert_null(strstr(k->v[i].evidence.v[j], secret));
	}
	json_t *j = ag_checks_json(k, NULL);
	char *s = json_dumps(j, JSON_COMPACT);
	assert_null(strstr(s, secret));
	free(s);
	json_decref(j);
}

/* ---- tests-passed, not-run ---- */

static void test_tests_passed(void **state)
{
	(void)state;
	struct ag_config *c = cfg("");
	struct ag_ws_mutations m = {0};
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .exit = 0, .wsfd = -1};
	eval(c, &ri, &k);
	assert_true(k.v[AG_CK_TESTS_PASSED].passed);
	assert_true(has_ev(&k.v[AG_CK_TESTS_PASSED], "`contained-run` exited 0"));
	assert_int_equal(k.score, 100);
	assert_true(k.pass);
	for (int i = 0; i < AG_CK__COUNT; i++)
		assert_true(k.v[i].evaluated && k.v[i].passed);
	ag_checks_release(&k);

	ri.exit = 3;
	eval(c, &ri, &k);
	assert_false(k.v[AG_CK_TESTS_PASSED].passed);
	assert_int_equal(k.v[AG_CK_TESTS_PASSED].severity, AG_SEV_ERROR);
	assert_true(has_ev(&k.v[AG_CK_TESTS_PASSED], "`contained-run` exited 3"));
	assert_int_equal(k.score, 70);
	assert_false(k.pass);
	ag_checks_release(&k);

	/* never ran: tests-passed fails, change checks are not evaluated */
	ri.ran = false;
	ri.mut = NULL;
	eval(c, &ri, &k);
	assert_false(k.v[AG_CK_TESTS_PASSED].passed);
	assert_true(k.v[AG_CK_UNSAFE_COMMANDS].evaluated);
	assert_false(k.v[AG_CK_FORBIDDEN_PATHS].evaluated);
	assert_false(k.v[AG_CK_SECRET_SCAN].evaluated);
	json_t *j = ag_checks_json(&k, NULL);
	assert_int_equal(json_array_size(j), 2);
	json_decref(j);
	ag_checks_release(&k);
	ag_config_free(c);
}

/* ---- path checks, renames ---- */

static void test_forbidden_and_tampering(void **state)
{
	(void)state;
	struct ag_config *c = cfg("forbidden_paths: ['secrets/**', '*.pem']\n"
				  "test_paths: ['tests/**']\n");
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_MODIFIED, "src/a.c", NULL, AG_WS_LINES_EXACT, 1, 1);
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k);
	assert_true(k.v[AG_CK_FORBIDDEN_PATHS].passed);
	assert_true(k.v[AG_CK_TEST_TAMPERING].passed);
	ag_checks_release(&k);

	add(&m, AG_WS_ADDED, "secrets/new.txt", NULL, AG_WS_LINES_EXACT, 1, 0);
	add(&m, AG_WS_MODIFIED, "tests/test_a.sh", NULL, AG_WS_LINES_EXACT, 1, 0);
	add(&m, AG_WS_DELETED, "keys/server.pem", NULL, AG_WS_LINES_EXACT, 0, 3);
	eval(c, &ri, &k);
	const struct ag_check_result *f = &k.v[AG_CK_FORBIDDEN_PATHS];
	assert_false(f->passed);
	assert_int_equal(f->severity, AG_SEV_CRITICAL);
	assert_int_equal(f->evidence_total, 2);
	assert_true(has_ev(f, "`secrets/new.txt` matched forbidden pattern `secrets/**`"));
	assert_true(has_ev(f, "`keys/server.pem` matched forbidden pattern `*.pem`"));
	const struct ag_check_result *t = &k.v[AG_CK_TEST_TAMPERING];
	assert_false(t->passed);
	assert_int_equal(t->severity, AG_SEV_ERROR);
	assert_true(has_ev(t, "`tests/test_a.sh` matched test pattern `tests/**`"));
	assert_int_equal(k.score, 100 - 50 - 30);
	assert_false(k.pass);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

static void test_rename_both_ends(void **state)
{
	(void)state;
	struct ag_config *c = cfg("forbidden_paths: ['secrets/**']\n"
				  "secret_patterns: ['secrets/**']\n"
				  "allowed_paths: ['src/**']\n"
				  "test_paths: ['tests/**']\n");
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_RENAMED, "src/x", "secrets/token.txt", AG_WS_LINES_EXACT, 0, 0);
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k);
	assert_int_equal(k.changed_paths, 2);
	assert_false(k.v[AG_CK_FORBIDDEN_PATHS].passed);
	assert_true(
	    has_ev(&k.v[AG_CK_FORBIDDEN_PATHS],
		   "`secrets/token.txt` (rename source) matched forbidden pattern `secrets/**`"));
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	assert_true(has_ev(&k.v[AG_CK_SECRET_SCAN],
			   "`secrets/token.txt` (rename source) matched pattern `secrets/**`"));
	assert_false(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_true(has_ev(&k.v[AG_CK_SCOPE_ADHERENCE],
			   "Outside allowed paths: secrets/token.txt (rename source)"));
	assert_int_equal(k.v[AG_CK_SCOPE_ADHERENCE].evidence_total, 1);
	assert_true(k.v[AG_CK_TEST_TAMPERING].passed);
	ag_checks_release(&k);
	ag_config_free(c);

	/* but a rename counts as ONE changed file toward the scope and diff limits */
	c = cfg("expected_modified_files: {min: 1, max: 1}\n"
		"diff_limits: {max_files_changed: 1}\n");
	eval(c, &ri, &k);
	assert_true(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_string_equal(k.v[AG_CK_SCOPE_ADHERENCE].message,
			    "Changed 1 files within the expected scope.");
	assert_true(k.v[AG_CK_DIFF_SIZE].passed);
	ag_checks_release(&k);
	ag_config_free(c);
	c = cfg("forbidden_paths: ['secrets/**']\n"
		"secret_patterns: ['secrets/**']\n"
		"allowed_paths: ['src/**']\n"
		"test_paths: ['tests/**']\n");
	ag_ws_mutations_release(&m);

	/* the destination end */
	add(&m, AG_WS_RENAMED, "tests/moved.sh", "src/ok.sh", AG_WS_LINES_EXACT, 0, 0);
	eval(c, &ri, &k);
	assert_false(k.v[AG_CK_TEST_TAMPERING].passed);
	assert_true(
	    has_ev(&k.v[AG_CK_TEST_TAMPERING],
		   "`tests/moved.sh` (rename destination) matched test pattern `tests/**`"));
	assert_true(has_ev(&k.v[AG_CK_SCOPE_ADHERENCE],
			   "Outside allowed paths: tests/moved.sh (rename destination)"));
	assert_true(k.v[AG_CK_FORBIDDEN_PATHS].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

static void test_scope(void **state)
{
	(void)state;
	struct ag_config *c = cfg("expected_modified_files: {min: 1, max: 2}\n");
	struct ag_ws_mutations m = {0};
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k); /* 0 < min */
	assert_false(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_int_equal(k.v[AG_CK_SCOPE_ADHERENCE].severity, AG_SEV_WARNING);
	assert_true(
	    has_ev(&k.v[AG_CK_SCOPE_ADHERENCE], "Changed 0 files; expected between 1 and 2."));
	assert_int_equal(k.score, 90);
	assert_true(k.pass); /* a warning does not fail the run */
	ag_checks_release(&k);
	add(&m, AG_WS_ADDED, "a", NULL, AG_WS_LINES_EXACT, 1, 0);
	add(&m, AG_WS_ADDED, "b", NULL, AG_WS_LINES_EXACT, 1, 0);
	eval(c, &ri, &k); /* at max */
	assert_true(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	ag_checks_release(&k);
	add(&m, AG_WS_ADDED, "c", NULL, AG_WS_LINES_EXACT, 1, 0);
	eval(c, &ri, &k); /* past max */
	assert_false(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_true(
	    has_ev(&k.v[AG_CK_SCOPE_ADHERENCE], "Changed 3 files; expected between 1 and 2."));
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);

	c = cfg("allowed_paths: ['src/**', 'README.md']\n");
	add(&m, AG_WS_MODIFIED, "src/a.c", NULL, AG_WS_LINES_EXACT, 1, 1);
	add(&m, AG_WS_MODIFIED, "README.md", NULL, AG_WS_LINES_EXACT, 1, 1);
	eval(c, &ri, &k);
	assert_true(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	ag_checks_release(&k);
	add(&m, AG_WS_ADDED, "docs/x.md", NULL, AG_WS_LINES_EXACT, 1, 0);
	eval(c, &ri, &k);
	assert_false(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_true(has_ev(&k.v[AG_CK_SCOPE_ADHERENCE], "Outside allowed paths: docs/x.md"));
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

/* ---- diff-size, fail-closed line counts ---- */

static void test_diff_size(void **state)
{
	(void)state;
	struct ag_config *c = cfg("diff_limits: {max_files_changed: 2, max_lines_added: 10, "
				  "max_lines_deleted: 5}\n");
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_MODIFIED, "a", NULL, AG_WS_LINES_EXACT, 10, 5);
	add(&m, AG_WS_MODIFIED, "b", NULL, AG_WS_LINES_EXACT, 0, 0);
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k); /* exactly at every limit */
	assert_true(k.v[AG_CK_DIFF_SIZE].passed);
	ag_checks_release(&k);
	add(&m, AG_WS_MODIFIED, "c", NULL, AG_WS_LINES_EXACT, 1, 1);
	eval(c, &ri, &k);
	const struct ag_check_result *d = &k.v[AG_CK_DIFF_SIZE];
	assert_false(d->passed);
	assert_int_equal(d->severity, AG_SEV_WARNING);
	assert_true(has_ev(d, "Changed 3 files; limit is 2."));
	assert_true(has_ev(d, "Added 11 lines; limit is 10."));
	assert_true(has_ev(d, "Deleted 6 lines; limit is 5."));
	assert_int_equal(k.score, 90);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

static void test_diff_fail_closed(void **state)
{
	(void)state;
	static const char *const limits[] = {"diff_limits: {max_lines_added: 1000}\n",
					     "diff_limits: {max_lines_deleted: 1000}\n"};
	static const struct {
		enum ag_ws_lines lines;
		bool no_capture;
		const char *status;
	} cases[] = {
	    {AG_WS_LINES_BINARY, false, "binary"},
	    {AG_WS_LINES_INCOMPLETE, false, "incomplete"},
	    {AG_WS_LINES_EXACT, true, "unavailable"},
	};
	for (size_t l = 0; l < AG_ARRAY_SIZE(limits); l++) {
		struct ag_config *c = cfg(limits[l]);
		for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
			struct ag_ws_mutations m = {0};
			add(&m, AG_WS_MODIFIED, "a.txt", NULL, AG_WS_LINES_EXACT, 1, 1);
			add(&m, AG_WS_MODIFIED, "b.bin", NULL, cases[i].lines, 0, 0);
			struct ag_checks k;
			struct run_in ri = {
			    .mut = cases[i].no_capture ? NULL : &m, .ran = true, .wsfd = -1};
			eval(c, &ri, &k);
			const struct ag_check_result *d = &k.v[AG_CK_DIFF_SIZE];
			assert_false(d->passed);
			assert_string_equal(k.line_count_status, cases[i].status);
			if (!cases[i].no_capture) {
				char *want = ag_xasprintf("Diff line count evidence is incomplete "
							  "or unavailable; failing "
							  "closed for configured line limits (%s).",
							  cases[i].status);
				assert_true(has_ev(d, want));
				free(want);
			}
			ag_checks_release(&k);
			ag_ws_mutations_release(&m);
		}
		ag_config_free(c);
	}
	/* worst status wins: binary over incomplete */
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_MODIFIED, "a", NULL, AG_WS_LINES_INCOMPLETE, 0, 0);
	add(&m, AG_WS_MODIFIED, "b", NULL, AG_WS_LINES_BINARY, 0, 0);
	assert_string_equal(ag_checks_line_status(&m), "binary");
	/* a file-count limit alone does not need line evidence */
	struct ag_config *c = cfg("diff_limits: {max_files_changed: 5}\n");
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k);
	assert_true(k.v[AG_CK_DIFF_SIZE].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

/* ---- unsafe-commands (audit evidence), capture unavailable ---- */

static void test_unsafe_commands(void **state)
{
	(void)state;
	struct ag_config *c = cfg("unsafe_commands: ['rm -rf', 'curl']\n");
	const char *argv[] = {"/bin/sh", "-c", "rm -rf build"};
	struct ag_ws_mutations m = {0};
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1, .argv = argv, .argc = 3};
	eval(c, &ri, &k);
	const struct ag_check_result *u = &k.v[AG_CK_UNSAFE_COMMANDS];
	assert_true(u->passed);
	assert_true(has_ev(u, "The agent argv matched unsafe_commands entry `rm -rf`; allowed and "
			      "recorded (audit)."));
	assert_int_equal(u->evidence_total, 1);
	ag_checks_release(&k);
	ri.blocked = true;
	ri.ran = false;
	eval(c, &ri, &k);
	assert_true(has_ev(&k.v[AG_CK_UNSAFE_COMMANDS],
			   "The agent argv matched unsafe_commands entry `rm -rf`; blocked before "
			   "launch (enforce)."));
	ag_checks_release(&k);
	ag_config_free(c);

	/* ran, but no capture: every configured change check fails closed */
	c = cfg("forbidden_paths: ['x']\nsecret_patterns: ['y']\n");
	struct run_in r2 = {.mut = NULL, .ran = true, .wsfd = -1};
	eval(c, &r2, &k);
	assert_false(k.v[AG_CK_FORBIDDEN_PATHS].passed);
	assert_false(k.v[AG_CK_SCOPE_ADHERENCE].passed);
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	assert_true(k.v[AG_CK_TEST_TAMPERING].passed); /* nothing configured */
	ag_checks_release(&k);
	ag_config_free(c);
}

/* ---- severities and score ---- */

static void test_severity_and_score(void **state)
{
	(void)state;
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_ADDED, "secrets/a", NULL, AG_WS_LINES_EXACT, 1, 0);
	add(&m, AG_WS_MODIFIED, "tests/t", NULL, AG_WS_LINES_EXACT, 1, 0);
	struct run_in ri = {.mut = &m, .ran = true, .exit = 1, .wsfd = -1};
	struct ag_checks k;
	static const struct {
		const char *yaml;
		int score;
		bool pass;
	} t[] = {
	    /* forbidden critical + tampering error + tests error + scope warning */
	    {"forbidden_paths: ['secrets/**']\ntest_paths: ['tests/**']\n"
	     "expected_modified_files: {min: 0, max: 1}\n",
	     0, false},
	    {"forbidden_paths: ['secrets/**']\n", 100 - 50 - 30, false},
	    {"forbidden_paths: ['secrets/**']\npolicy: {forbidden_paths: {severity: warning}, "
	     "tests_pass: {severity: info}}\n",
	     90, true},
	    {"test_paths: ['tests/**']\npolicy: {test_tampering: {severity: critical}, "
	     "tests_pass: {severity: warning}}\n",
	     100 - 50 - 10, false},
	    {"expected_modified_files: {min: 0, max: 1}\npolicy: {scope_adherence: {severity: "
	     "error}, tests_pass: {severity: info}}\n",
	     70, false},
	    {"diff_limits: {max_files_changed: 1}\npolicy: {diff_size: {severity: critical}, "
	     "tests_pass: {severity: info}}\n",
	     50, false},
	    {"secret_patterns: ['secrets/**']\npolicy: {secret_scan: {severity: info}, tests_pass: "
	     "{severity: info}}\n",
	     100, true},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_config *c = cfg(t[i].yaml);
		eval(c, &ri, &k);
		if (k.score != t[i].score || k.pass != t[i].pass)
			print_error("case %zu: score %d pass %d\n", i, k.score, k.pass);
		assert_int_equal(k.score, t[i].score);
		assert_int_equal(k.pass, t[i].pass);
		ag_checks_release(&k);
		ag_config_free(c);
	}
	struct ag_config *c = cfg("policy: {unsafe_commands: {severity: info}}\n");
	eval(c, &ri, &k);
	assert_int_equal(k.v[AG_CK_UNSAFE_COMMANDS].severity, AG_SEV_INFO);
	assert_int_equal(k.v[AG_CK_FORBIDDEN_PATHS].severity, AG_SEV_CRITICAL);
	json_t *j = ag_checks_json(&k, NULL);
	json_t *first = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(first, "name")), "tests-passed");
	assert_string_equal(json_string_value(json_object_get(first, "display_name")),
			    "Tests passed");
	assert_string_equal(json_string_value(json_object_get(first, "severity")), "error");
	assert_true(json_is_false(json_object_get(first, "passed")));
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(first, "evidence"), 0)),
	    "`contained-run` exited 1");
	json_decref(j);
	ag_checks_release(&k);
	ag_config_free(c);
	ag_ws_mutations_release(&m);
}

/* ---- content scan ---- */

static char wsdir[64];

static int ws_setup(void **state)
{
	(void)state;
	snprintf(wsdir, sizeof(wsdir), "/tmp/ag-checks.XXXXXX");
	assert_non_null(mkdtemp(wsdir));
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static int ws_teardown(void **state)
{
	(void)state;
	nftw(wsdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void put(const char *rel, const void *data, size_t n)
{
	char *p = ag_xasprintf("%s/%s", wsdir, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	mkdir(p, 0755); /* one level is enough for these tests */
	*slash = '/';
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
	free(p);
}

static void puts_file(const char *rel, const char *s)
{
	put(rel, s, strlen(s));
}

static int ws_fd(void)
{
	int fd = open(wsdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

#define ALL_DETECTORS                                                                              \
	"secret_content_builtin_detectors: [aws-access-key-id-shape, generic-api-key-assignment, " \
	"github-token-shape, npm-token-shape, private-key-header]\n"                               \
	"secret_content_patterns: [{id: canary-literal, contains: CANARY-LITERAL-5e1f}]\n"

#define GH "ghp_0123456789abcdefghijABCDEFGHIJ012345"  /* 36 after ghp_ */
#define NPM "npm_0123456789abcdefghijABCDEFGHIJ012345" /* 36 after npm_ */
#define AWS "AKIAABCDEFGHIJ012345"		       /* 16 after AKIA */
#define GEN "api_key = \"Zq9Xw8Vu7Ts6Rp5On4\""	       /* 18 token chars */
#define LIT "CANARY-LITERAL-5e1f"

static void test_detectors(void **state)
{
	(void)state;
	static const struct {
		const char *line, *det; /* det NULL: no match expected */
	} t[] = {
	    {"key: " AWS, "aws-access-key-id-shape"},
	    {"AKIAabcdefghij012345", NULL},
	    {"AKIAABCDEFGHIJ01234", NULL},
	    {GEN, "generic-api-key-assignment"},
	    {"TOKEN:'ABCDEFGHIJKLMNOPQRS'", "generic-api-key-assignment"},
	    {"secret=0123456789abcdef", "generic-api-key-assignment"},
	    {"Api-Key : x-y_z0123456789abcd", "generic-api-key-assignment"},
	    {"token = short", NULL},
	    {"tokenizer(0123456789abcdef0123)", NULL},
	    {"x " GH " y", "github-token-shape"},
	    {"gho_0123456789abcdefghijABCDEFGHIJ01234", NULL}, /* 35 */
	    {"github_pat_0123456789abcdefghij_K", "github-token-shape"},
	    {"github_pat_short", NULL},
	    {NPM, "npm-token-shape"},
	    {"npm_0123456789abcdefghijABCDEFGHIJ01234", NULL},
	    {"-----BEGIN RSA PRIVATE KEY-----", "private-key-header"},
	    {"-----BEGIN PRIVATE KEY-----", "private-key-header"},
	    {"x -----BEGIN OPENSSH PRIVATE KEY----- y", "private-key-header"},
	    {"-----BEGIN PUBLIC KEY-----", NULL},
	    {"-----BEGIN RSA PRIVATE KEY", NULL},
	    {"-----BEGIN rsa PRIVATE KEY-----", NULL},
	    {"see " LIT " here", "canary-literal"},
	    {"CANARY-LITERAL-5e1", NULL},
	    {"nothing to see", NULL},
	};
	struct ag_config *c = cfg(ALL_DETECTORS);
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		ws_setup(NULL);
		puts_file("f.txt", t[i].line);
		struct ag_ws_mutations m = {0};
		add(&m, AG_WS_ADDED, "f.txt", NULL, AG_WS_LINES_EXACT, 1, 0);
		int fd = ws_fd();
		struct ag_checks k;
		struct run_in ri = {.mut = &m, .ran = true, .wsfd = fd};
		eval(c, &ri, &k);
		close(fd);
		assert_true(k.scan.complete);
		if (t[i].det) {
			if (k.scan.n_matches != 1)
				print_error("line %zu '%s': %zu matches\n", i, t[i].line,
					    k.scan.n_matches);
			assert_int_equal(k.scan.n_matches, 1);
			assert_string_equal(k.scan.matches[0].detector, t[i].det);
			assert_false(k.v[AG_CK_SECRET_SCAN].passed);
			char *want = ag_xasprintf("`f.txt:1` matched secret-content detector `%s`",
						  t[i].det);
			assert_true(has_ev(&k.v[AG_CK_SECRET_SCAN], want));
			free(want);
		} else {
			if (k.scan.n_matches != 0)
				print_error("line %zu '%s': unexpected %s\n", i, t[i].line,
					    k.scan.matches[0].detector);
			assert_int_equal(k.scan.n_matches, 0);
			assert_true(k.v[AG_CK_SECRET_SCAN].passed);
		}
		ag_checks_release(&k);
		ag_ws_mutations_release(&m);
		ws_teardown(NULL);
	}
	ag_config_free(c);
}

static void test_content_scan_files(void **state)
{
	(void)state;
	struct ag_config *c = cfg(ALL_DETECTORS);
	puts_file("src/app.py", "import os\nx = 1\n" GEN "\nprint(x)\n");
	puts_file("src/key.pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n");
	puts_file("src/lit.txt", "a\nb\nc\n" LIT "\n");
	put("bin/blob.bin", "AKIA\0" AWS, 25); /* binary: skipped */
	puts_file("docs/moved.md", GH "\n");   /* exact rename: skipped */
	puts_file("src/clean.txt", "hello\n");
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_ADDED, "bin/blob.bin", NULL, AG_WS_LINES_BINARY, 0, 0);
	add(&m, AG_WS_RENAMED, "docs/moved.md", "docs/old.md", AG_WS_LINES_EXACT, 0, 0);
	add(&m, AG_WS_MODIFIED, "src/app.py", NULL, AG_WS_LINES_EXACT, 1, 0);
	add(&m, AG_WS_DELETED, "src/gone.txt", NULL, AG_WS_LINES_EXACT, 0, 1);
	add(&m, AG_WS_ADDED, "src/key.pem", NULL, AG_WS_LINES_EXACT, 2, 0);
	add(&m, AG_WS_ADDED, "src/lit.txt", NULL, AG_WS_LINES_EXACT, 4, 0);
	add(&m, AG_WS_MODIFIED, "src/clean.txt", NULL, AG_WS_LINES_EXACT, 1, 0);
	int fd = ws_fd();
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = fd};
	eval(c, &ri, &k);
	close(fd);
	assert_true(k.scan.complete);
	assert_int_equal(k.scan.n_matches, 3);
	assert_int_equal(k.scan.files_skipped_binary, 1);
	assert_int_equal(k.scan.files_skipped_rename, 1);
	assert_int_equal(k.scan.files_scanned, 5);
	const struct ag_check_result *s = &k.v[AG_CK_SECRET_SCAN];
	assert_false(s->passed);
	assert_true(has_ev(
	    s, "`src/app.py:3` matched secret-content detector `generic-api-key-assignment`"));
	assert_true(
	    has_ev(s, "`src/key.pem:1` matched secret-content detector `private-key-header`"));
	assert_true(has_ev(s, "`src/lit.txt:4` matched secret-content detector `canary-literal`"));
	assert_int_equal(k.score, 50);
	assert_false(k.pass);
	/* the planted values never appear anywhere */
	assert_no_secret(&k, "Zq9Xw8Vu7Ts6Rp5On4");
	assert_no_secret(&k, LIT);
	assert_no_secret(&k, AWS);
	assert_no_secret(&k, GH);
	json_t *sj = ag_checks_scan_json(&k, NULL);
	char *d = json_dumps(sj, JSON_COMPACT);
	assert_null(strstr(d, LIT));
	assert_null(strstr(d, "Zq9Xw8Vu7Ts6Rp5On4"));
	assert_non_null(strstr(d, "\"status\":\"complete\""));
	free(d);
	json_decref(sj);
	ag_checks_release(&k);

	/* a link where the capture saw a file, or no workspace: fail closed */
	char *lp = ag_xasprintf("%s/src/clean.txt", wsdir);
	unlink(lp);
	assert_int_equal(symlink("/etc/passwd", lp), 0);
	free(lp);
	fd = ws_fd();
	ri.wsfd = fd;
	eval(c, &ri, &k);
	close(fd);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.open");
	assert_true(has_ev(&k.v[AG_CK_SECRET_SCAN],
			   "Secret content scan incomplete (policy.scan.open); failing closed."));
	ag_checks_release(&k);
	ri.wsfd = -1;
	eval(c, &ri, &k);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.unavailable");
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

/* One added file per entry; returns the scan of them with default limits. */
static void scan_files(const struct ag_config *c, struct ag_ws_mutations *m, struct ag_checks *k,
		       const struct ag_scan_limits *lim)
{
	int fd = ws_fd();
	struct run_in ri = {.mut = m, .ran = true, .wsfd = fd, .lim = lim};
	eval(c, &ri, k);
	close(fd);
}

static void test_scan_bound_files(void **state)
{
	(void)state;
	struct ag_config *c = cfg("secret_content_builtin_detectors: [private-key-header]\n");
	struct ag_ws_mutations m = {0};
	char name[32];
	for (int i = 0; i < AG_CHECK_SCAN_MAX_FILES; i++) {
		snprintf(name, sizeof(name), "d/f%04d", i);
		puts_file(name, "x\n");
		add(&m, AG_WS_ADDED, name, NULL, AG_WS_LINES_EXACT, 1, 0);
	}
	struct ag_checks k;
	scan_files(c, &m, &k, NULL);
	assert_true(k.scan.complete);
	assert_int_equal(k.scan.files_scanned, AG_CHECK_SCAN_MAX_FILES);
	assert_true(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	snprintf(name, sizeof(name), "d/f%04d", AG_CHECK_SCAN_MAX_FILES);
	puts_file(name, "x\n");
	add(&m, AG_WS_ADDED, name, NULL, AG_WS_LINES_EXACT, 1, 0);
	scan_files(c, &m, &k, NULL);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.files");
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

static void test_scan_bound_bytes(void **state)
{
	(void)state;
	struct ag_config *c = cfg("secret_content_builtin_detectors: [private-key-header]\n");
	char *big = ag_xmalloc(AG_CHECK_SCAN_MAX_FILE_BYTES + 1);
	memset(big, 'a', AG_CHECK_SCAN_MAX_FILE_BYTES + 1);
	for (size_t i = 100; i < AG_CHECK_SCAN_MAX_FILE_BYTES + 1; i += 100)
		big[i] = '\n';
	struct ag_checks k;
	/* per file: at the bound, then one past it */
	struct ag_ws_mutations m = {0};
	put("f/at", big, AG_CHECK_SCAN_MAX_FILE_BYTES);
	add(&m, AG_WS_ADDED, "f/at", NULL, AG_WS_LINES_EXACT, 1, 0);
	scan_files(c, &m, &k, NULL);
	assert_true(k.scan.complete);
	assert_int_equal(k.scan.bytes_scanned, AG_CHECK_SCAN_MAX_FILE_BYTES);
	ag_checks_release(&k);
	put("f/past", big, AG_CHECK_SCAN_MAX_FILE_BYTES + 1);
	add(&m, AG_WS_ADDED, "f/past", NULL, AG_WS_LINES_EXACT, 1, 0);
	scan_files(c, &m, &k, NULL);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.file_bytes");
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ws_teardown(NULL);
	ws_setup(NULL);

	/* total: 8 files at the per-file bound are exactly the total; one byte more is past */
	char name[32];
	for (int i = 0; i < AG_CHECK_SCAN_MAX_TOTAL_BYTES / AG_CHECK_SCAN_MAX_FILE_BYTES; i++) {
		snprintf(name, sizeof(name), "t/f%d", i);
		put(name, big, AG_CHECK_SCAN_MAX_FILE_BYTES);
		add(&m, AG_WS_ADDED, name, NULL, AG_WS_LINES_EXACT, 1, 0);
	}
	scan_files(c, &m, &k, NULL);
	assert_true(k.scan.complete);
	assert_int_equal(k.scan.bytes_scanned, AG_CHECK_SCAN_MAX_TOTAL_BYTES);
	ag_checks_release(&k);
	put("t/g", "x", 1);
	add(&m, AG_WS_ADDED, "t/g", NULL, AG_WS_LINES_EXACT, 1, 0);
	scan_files(c, &m, &k, NULL);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.total_bytes");
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	free(big);
	ag_config_free(c);
}

static void test_scan_bound_line(void **state)
{
	(void)state;
	struct ag_config *c = cfg("secret_content_builtin_detectors: [private-key-header]\n");
	size_t n = AG_CHECK_SCAN_MAX_LINE_BYTES + 1;
	char *line = ag_xmalloc(n + 1);
	memset(line, 'b', n);
	line[n] = '\n';
	struct ag_ws_mutations m = {0};
	put("l/at", line, n - 1); /* exactly the bound, no newline */
	add(&m, AG_WS_ADDED, "l/at", NULL, AG_WS_LINES_EXACT, 1, 0);
	struct ag_checks k;
	scan_files(c, &m, &k, NULL);
	assert_true(k.scan.complete);
	ag_checks_release(&k);
	put("l/past", line, n + 1);
	add(&m, AG_WS_ADDED, "l/past", NULL, AG_WS_LINES_EXACT, 1, 0);
	scan_files(c, &m, &k, NULL);
	assert_false(k.scan.complete);
	assert_string_equal(k.scan.reason, "policy.scan.line_bytes");
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	free(line);
	ag_config_free(c);
}

static void test_scan_bound_matches(void **state)
{
	(void)state;
	struct ag_config *c = cfg("secret_content_builtin_detectors: [private-key-header]\n");
	/* 7 matching lines in one file: 5 recorded (per detector per file) */
	struct ag_ws_mutations m = {0};
	char buf[7 * 40];
	size_t bl = 0;
	for (int i = 0; i < 7; i++)
		bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "-----BEGIN PRIVATE KEY-----\n");
	puts_file("m/one", buf);
	add(&m, AG_WS_ADDED, "m/one", NULL, AG_WS_LINES_EXACT, 7, 0);
	struct ag_checks k;
	scan_files(c, &m, &k, NULL);
	assert_int_equal(k.scan.n_matches, AG_CHECK_SCAN_MAX_PER_DETECTOR_FILE);
	assert_false(k.scan.match_limit_reached);
	/* evidence is bounded to 6 entries; the total is kept */
	assert_int_equal(k.v[AG_CK_SECRET_SCAN].evidence.n, AG_CHECK_SCAN_MAX_PER_DETECTOR_FILE);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);

	/* 20 files x 5 = 100 matches exactly: at the bound; one more file: past it */
	char name[32];
	for (int i = 0; i < AG_CHECK_SCAN_MAX_MATCHES / AG_CHECK_SCAN_MAX_PER_DETECTOR_FILE; i++) {
		snprintf(name, sizeof(name), "m/f%02d", i);
		puts_file(name, buf);
		add(&m, AG_WS_ADDED, name, NULL, AG_WS_LINES_EXACT, 7, 0);
	}
	scan_files(c, &m, &k, NULL);
	assert_int_equal(k.scan.n_matches, AG_CHECK_SCAN_MAX_MATCHES);
	assert_false(k.scan.match_limit_reached);
	assert_int_equal(k.v[AG_CK_SECRET_SCAN].evidence.n, AG_CHECK_EVIDENCE_MAX_ITEMS);
	assert_int_equal(k.v[AG_CK_SECRET_SCAN].evidence_total, AG_CHECK_SCAN_MAX_MATCHES);
	ag_checks_release(&k);
	puts_file("m/z", buf);
	add(&m, AG_WS_ADDED, "m/z", NULL, AG_WS_LINES_EXACT, 7, 0);
	scan_files(c, &m, &k, NULL);
	assert_int_equal(k.scan.n_matches, AG_CHECK_SCAN_MAX_MATCHES);
	assert_true(k.scan.match_limit_reached);
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	json_t *j = ag_checks_json(&k, NULL);
	for (size_t i = 0; i < json_array_size(j); i++) {
		json_t *ev = json_object_get(json_array_get(j, i), "evidence");
		assert_true(json_array_size(ev) <= AG_CHECK_EVIDENCE_MAX_ITEMS);
		for (size_t e = 0; e < json_array_size(ev); e++)
			assert_true(strlen(json_string_value(json_array_get(ev, e))) <=
				    AG_CHECK_EVIDENCE_MAX_BYTES);
	}
	json_decref(j);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

/* Evidence built from a hostile path stays bounded and escaped; redaction applies. */
static void test_evidence_hostile_path(void **state)
{
	(void)state;
	struct ag_config *c =
	    cfg("forbidden_paths: ['*']\n"
		"secret_content_patterns: [{id: lit, contains: CANARY-LITERAL-5e1f}]\n");
	char longp[2000];
	memset(longp, 'p', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_DELETED, "a\x1b[31m\nb", NULL, AG_WS_LINES_EXACT, 0, 1);
	add(&m, AG_WS_DELETED, longp, NULL, AG_WS_LINES_EXACT, 0, 1);
	add(&m, AG_WS_DELETED, "dir/CANARY-LITERAL-5e1f.txt", NULL, AG_WS_LINES_EXACT, 0, 1);
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = -1};
	eval(c, &ri, &k);
	const struct ag_check_result *f = &k.v[AG_CK_FORBIDDEN_PATHS];
	assert_int_equal(f->evidence_total, 3);
	for (size_t i = 0; i < f->evidence.n; i++) {
		assert_true(strlen(f->evidence.v[i]) <= AG_CHECK_EVIDENCE_MAX_BYTES);
		assert_null(strchr(f->evidence.v[i], '\x1b'));
		assert_null(strchr(f->evidence.v[i], '\n'));
	}
	/* a configured literal in a path name is redacted in the artifact form */
	struct ag_redactor red = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&red, "CANARY-LITERAL-5e1f");
	json_t *j = ag_checks_json(&k, &red);
	char *s = json_dumps(j, JSON_COMPACT);
	assert_null(strstr(s, "CANARY-LITERAL-5e1f"));
	free(s);
	json_decref(j);
	ag_redactor_release(&red);
	ag_checks_release(&k);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

/* A configured secret (a sensitive environment value) in a changed file: a
 * content match naming the file and line, never the value; short values and
 * values of entries that are not sensitive are not searched for. */
static void test_configured_secret(void **state)
{
	(void)state;
	struct ag_config *c = cfg(""); /* no detector, no literal pattern */
	puts_file("notes.txt", "hello\nsee tok-0123456789 here\n");
	puts_file("mode.txt", "batch mode\nab\n");
	struct ag_ws_mutations m = {0};
	add(&m, AG_WS_ADDED, "mode.txt", NULL, AG_WS_LINES_EXACT, 2, 0);
	add(&m, AG_WS_ADDED, "notes.txt", NULL, AG_WS_LINES_EXACT, 2, 0);
	struct ag_env_resolved env = {0};
	ag_strv_push(&env.assignments, "AGENT_MODE=batch mode");
	ag_strv_push(&env.assignments, "API_TOKEN=tok-0123456789");
	ag_strv_push(&env.assignments, "SHORT_TOKEN=ab");
	ag_strv_push(&env.sensitive, "API_TOKEN");
	ag_strv_push(&env.sensitive, "SHORT_TOKEN");
	int fd = ws_fd();
	struct ag_checks k;
	struct run_in ri = {.mut = &m, .ran = true, .wsfd = fd, .env = &env};
	eval(c, &ri, &k);
	assert_true(k.scan.configured);
	assert_int_equal(k.scan.n_matches, 1);
	assert_string_equal(k.scan.matches[0].path, "notes.txt");
	assert_int_equal(k.scan.matches[0].line, 2);
	assert_string_equal(k.scan.matches[0].detector, "configured-secret");
	assert_false(k.v[AG_CK_SECRET_SCAN].passed);
	assert_true(has_ev(&k.v[AG_CK_SECRET_SCAN],
			   "`notes.txt:2` matched secret-content detector `configured-secret`"));
	for (size_t i = 0; i < k.v[AG_CK_SECRET_SCAN].evidence.n; i++)
		assert_null(strstr(k.v[AG_CK_SECRET_SCAN].evidence.v[i], "tok-0123456789"));
	ag_checks_release(&k);
	/* without the environment: nothing configured, the check passes */
	ri.env = NULL;
	eval(c, &ri, &k);
	assert_false(k.scan.configured);
	assert_true(k.v[AG_CK_SECRET_SCAN].passed);
	ag_checks_release(&k);
	close(fd);
	ag_strv_release(&env.assignments);
	ag_strv_release(&env.sensitive);
	ag_ws_mutations_release(&m);
	ag_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pathmatch_table),
	    cmocka_unit_test(test_pathmatch_bounded),
	    cmocka_unit_test(test_tests_passed),
	    cmocka_unit_test(test_forbidden_and_tampering),
	    cmocka_unit_test(test_rename_both_ends),
	    cmocka_unit_test(test_scope),
	    cmocka_unit_test(test_diff_size),
	    cmocka_unit_test(test_diff_fail_closed),
	    cmocka_unit_test(test_unsafe_commands),
	    cmocka_unit_test(test_severity_and_score),
	    cmocka_unit_test(test_detectors),
	    cmocka_unit_test_setup_teardown(test_content_scan_files, ws_setup, ws_teardown),
	    cmocka_unit_test_setup_teardown(test_configured_secret, ws_setup, ws_teardown),
	    cmocka_unit_test_setup_teardown(test_scan_bound_files, ws_setup, ws_teardown),
	    cmocka_unit_test_setup_teardown(test_scan_bound_bytes, ws_setup, ws_teardown),
	    cmocka_unit_test_setup_teardown(test_scan_bound_line, ws_setup, ws_teardown),
	    cmocka_unit_test_setup_teardown(test_scan_bound_matches, ws_setup, ws_teardown),
	    cmocka_unit_test(test_evidence_hostile_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
