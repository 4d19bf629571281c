/*
 * Redaction choke point and contained environment resolution: planted
 * canaries must never survive, roots become role tokens, output is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/redact.h"
#include "lib/base/termsafe.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"

#include <time.h>

static char *R(const struct ag_redactor *r, const char *s)
{
	return ag_redact(r, s, strlen(s), 4096, AG_REDACT_KEEP_NEWLINES, NULL);
}

static void expect_redacted(const struct ag_redactor *r, const char *in, const char *want)
{
	char *got = R(r, in);
	if (strcmp(got, want) != 0)
		print_error("in:   %s\ngot:  %s\nwant: %s\n", in, got, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_secrets_and_roots(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "CANARY-SECRET-1");
	ag_redactor_add_secret(&r, "CANARY-SECRET-12345");
	ag_redactor_add_secret(&r, "");
	ag_redactor_add_root(&r, "/srv/work/repo", "${REPOSITORY_ROOT}");
	ag_redactor_add_root(&r, "/srv/work/repo/.agentguard/contained-runs/r1", "${RUN_ROOT}");
	expect_redacted(&r, "x CANARY-SECRET-12345 y", "x [REDACTED] y");
	expect_redacted(&r, "aCANARY-SECRET-1b", "a[REDACTED]b");
	expect_redacted(&r, "/srv/work/repo/src/a.c", "${REPOSITORY_ROOT}/src/a.c");
	expect_redacted(&r, "/srv/work/repo/.agentguard/contained-runs/r1/evidence",
			"${RUN_ROOT}/evidence");
	expect_redacted(&r, "/srv/work/repository", "/srv/work/repository");
	expect_redacted(&r, "at /srv/work/repo: done", "at ${REPOSITORY_ROOT}: done");
	ag_redactor_release(&r);

	/* A secret that occurs inside a root must not break the root's match. */
	struct ag_redactor r2 = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r2, "batch");
	ag_redactor_add_root(&r2, "/opt/rv-batch-CANARY/runs", "${RUNS_ROOT}");
	expect_redacted(&r2, "/opt/rv-batch-CANARY/runs/x and batch",
			"${RUNS_ROOT}/x and [REDACTED]");
	ag_redactor_release(&r2);
}

static void test_shapes(void **state)
{
	(void)state;
	expect_redacted(NULL, "Authorization: Bearer abc.def", "Authorization: Bearer [REDACTED]");
	expect_redacted(NULL, "password=hunter2 ok", "password=[REDACTED] ok");
	expect_redacted(NULL, "API_TOKEN: s3cr3t", "API_TOKEN: [REDACTED]");
	expect_redacted(NULL, "--token=abc", "--token=[REDACTED]");
	expect_redacted(NULL, "https://user:pw@example.invalid/x",
			"https://[REDACTED]@example.invalid/x");
	expect_redacted(NULL, "t ghp_0123456789abcdefghij0123 e", "t [REDACTED] e");
	expect_redacted(NULL, "AKIAABCDEFGHIJKLMNOP", "[REDACTED]");
	expect_redacted(NULL, "-----BEGIN RSA PRIVATE KEY-----\nMII",
			"[REDACTED_PRIVATE_KEY]\nMII");
	expect_redacted(NULL, "open /home/alice/.ssh/id failed", "open [REDACTED_PATH] failed");
	expect_redacted(NULL, "cwd /tmp/agentguard-x1/y", "cwd [REDACTED_PATH]");
	expect_redacted(NULL, "in /tmp only", "in /tmp only");
	expect_redacted(NULL, "/usr/bin/docker", "/usr/bin/docker");
	expect_redacted(NULL, "a\x1b[31mb\tc\n", "a\\x1b[31mb\tc\n");
	expect_redacted(NULL, "mode=batch key_count=3", "mode=batch key_count=3");
}

static void test_bounds(void **state)
{
	(void)state;
	char big[5000];
	memset(big, 'a', sizeof(big));
	bool cut = false;
	char *s = ag_redact(NULL, big, sizeof(big), 100, 0, &cut);
	assert_true(cut);
	assert_int_equal(strlen(s), 100);
	assert_non_null(strstr(s, "[TRUNCATED]"));
	free(s);
	/* Never split a UTF-8 sequence. */
	const char *u = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
	s = ag_redact(NULL, u, strlen(u), 15, 0, &cut);
	assert_true(cut);
	assert_true(strlen(s) <= 15);
	free(s);
	s = ag_redact(NULL, "short", 5, 100, 0, &cut);
	assert_false(cut);
	assert_string_equal(s, "short");
	free(s);
}

/* One pass for roots and secrets: roots win, overlapping secrets go whole. */
static void test_literal_semantics(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "abcd");
	ag_redactor_add_secret(&r, "cdef");
	ag_redactor_add_secret(&r, "x/srv");
	ag_redactor_add_secret(&r, "ROOT");
	ag_redactor_add_root(&r, "/srv/repo", "${REPOSITORY_ROOT}");
	/* overlapping occurrences: no byte of either survives, one marker */
	expect_redacted(&r, "1abcdef2", "1[REDACTED]2");
	/* adjacent occurrences stay two */
	expect_redacted(&r, "abcdcdef", "[REDACTED][REDACTED]");
	/* a secret cut by a root goes in part; the root is whole */
	expect_redacted(&r, "x/srv/repo/a", "[REDACTED]${REPOSITORY_ROOT}/a");
	/* a role token is output, never input: a secret inside it is not searched */
	expect_redacted(&r, "/srv/repo and ROOT", "${REPOSITORY_ROOT} and [REDACTED]");
	/* the set may grow between calls (the automaton is rebuilt) */
	ag_redactor_add_secret(&r, "later-added");
	expect_redacted(&r, "a later-added b abcd", "a [REDACTED] b [REDACTED]");
	ag_redactor_release(&r);
}

/* Finding 7: a secret is found in every encoded form the artifact applies. */
static void test_encoded_forms(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "p%ss w\xc3\xb6rd\"1");
	expect_redacted(&r, "raw p%ss w\xc3\xb6rd\"1 .", "raw [REDACTED] .");
	/* the artifact's path encoding (%25 for '%') */
	expect_redacted(&r, "dir/p%25ss w\xc3\xb6rd\"1.txt", "dir/[REDACTED].txt");
	/* URL percent-encoding, both hex cases */
	expect_redacted(&r, "q=p%25ss%20w%C3%B6rd%221&", "q=[REDACTED]&");
	expect_redacted(&r, "q=p%25ss%20w%c3%b6rd%221&", "q=[REDACTED]&");
	/* JSON string escapes */
	expect_redacted(&r, "{\"v\":\"p%ss w\\u00f6rd\\\"1\"}", "{\"v\":\"[REDACTED]\"}");
	expect_redacted(&r, "{\"v\":\"p%ss w\\u00F6rd\\\"1\"}", "{\"v\":\"[REDACTED]\"}");
	ag_redactor_release(&r);
}

/* Finding 8: credential arguments of the agent argv. */
static void test_argv_credentials(void **state)
{
	(void)state;
	size_t off = 0;
	assert_int_equal(ag_cred_arg_kind("--token", &off), AG_CRED_NEXT);
	assert_int_equal(ag_cred_arg_kind("--API-KEY", &off), AG_CRED_NEXT);
	assert_int_equal(ag_cred_arg_kind("--client_secret", &off), AG_CRED_NEXT);
	assert_int_equal(ag_cred_arg_kind("--github-token", &off), AG_CRED_NEXT);
	assert_int_equal(ag_cred_arg_kind("--no-token", &off), AG_CRED_NONE);
	assert_int_equal(ag_cred_arg_kind("--tokenizer", &off), AG_CRED_NONE);
	assert_int_equal(ag_cred_arg_kind("--password-stdin", &off), AG_CRED_NONE);
	assert_int_equal(ag_cred_arg_kind("-H", &off), AG_CRED_HEADER_NEXT);
	assert_int_equal(ag_cred_arg_kind("--access-token=abc", &off), AG_CRED_INLINE);
	assert_string_equal(&"--access-token=abc"[off], "abc");
	assert_int_equal(ag_cred_arg_kind("-HX-Api-Key: k1", &off), AG_CRED_INLINE);
	assert_string_equal(&"-HX-Api-Key: k1"[off], "k1");
	assert_int_equal(ag_cred_arg_kind("DB_PASSWORD=pw", &off), AG_CRED_INLINE);
	assert_int_equal(ag_cred_arg_kind("MODE=fast", &off), AG_CRED_NONE);
	assert_true(ag_cred_header("Authorization: Bearer tok1", &off));
	assert_string_equal(&"Authorization: Bearer tok1"[off], "tok1");
	assert_false(ag_cred_header("Accept: text/plain", &off));

	const char *argv[] = {"tool",
			      "--token",
			      "T0KEN-VALUE-1",
			      "--api-key",
			      "K3Y-VALUE-2",
			      "--password",
			      "PW-VALUE-3",
			      "--client-secret",
			      "CS-VALUE-4",
			      "--access-token",
			      "AT-VALUE-5",
			      "--auth-token",
			      "AU-VALUE-6",
			      "-H",
			      "X-Api-Key: HK-VALUE-7",
			      "--token=INL-VALUE-8",
			      "-H",
			      "Authorization: Bearer BR-VALUE-9",
			      "plain"};
	size_t argc = AG_ARRAY_SIZE(argv);
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_argv(&r, argv, argc);
	const char *want[] = {"tool",
			      "--token",
			      "[REDACTED]",
			      "--api-key",
			      "[REDACTED]",
			      "--password",
			      "[REDACTED]",
			      "--client-secret",
			      "[REDACTED]",
			      "--access-token",
			      "[REDACTED]",
			      "--auth-token",
			      "[REDACTED]",
			      "-H",
			      "X-Api-Key: [REDACTED]",
			      "--token=[REDACTED]",
			      "-H",
			      "Authorization: Bearer [REDACTED]",
			      "plain"};
	for (size_t i = 0; i < argc; i++) {
		char *a = ag_redact_argv_item(&r, argv, argc, i, 512);
		assert_string_equal(a, want[i]);
		free(a);
		/* argv-level even with an empty secret set */
		a = ag_redact_argv_item(NULL, argv, argc, i, 512);
		assert_string_equal(a, want[i]);
		free(a);
		assert_int_equal(ag_argv_item_leaks_credential(argv, argc, i),
				 strcmp(argv[i], want[i]) != 0);
		assert_false(ag_argv_item_leaks_credential(want, argc, i));
	}
	/* any header value given with -H is redacted in the argv (the upstream
	 * rule), but only a credential header's value joins the secret set */
	const char *hv[] = {"curl", "-H", "Accept: text/plain", "--header=X-Trace: t1",
			    "-H",   "odd"};
	const char *hw[] = {
	    "curl", "-H", "Accept: [REDACTED]", "--header=X-Trace: [REDACTED]", "-H", "[REDACTED]"};
	struct ag_redactor r2 = AG_REDACTOR_INIT;
	ag_redactor_add_argv(&r2, hv, AG_ARRAY_SIZE(hv));
	assert_int_equal(r2.secrets.n, 0);
	for (size_t i = 0; i < AG_ARRAY_SIZE(hv); i++) {
		char *a = ag_redact_argv_item(&r2, hv, AG_ARRAY_SIZE(hv), i, 512);
		assert_string_equal(a, hw[i]);
		free(a);
		assert_false(ag_argv_item_leaks_credential(hw, AG_ARRAY_SIZE(hw), i));
	}
	assert_true(ag_argv_item_leaks_credential(hv, AG_ARRAY_SIZE(hv), 2));
	ag_redactor_release(&r2);
	/* the values are secrets of the run: captured output loses them too */
	char *o = R(&r, "echo T0KEN-VALUE-1 K3Y-VALUE-2 PW-VALUE-3 CS-VALUE-4 AT-VALUE-5 "
			"AU-VALUE-6 HK-VALUE-7 INL-VALUE-8 BR-VALUE-9\n");
	assert_null(strstr(o, "VALUE"));
	free(o);
	/* and in text, without the set, the shapes catch the flag forms */
	expect_redacted(NULL, "run tool --token abc123 --api-key=k2 -v",
			"run tool --token [REDACTED] --api-key=[REDACTED] -v");
	expect_redacted(NULL, "X-Api-Key: k3 ok", "X-Api-Key: [REDACTED] ok");
	expect_redacted(
	    NULL, "Proxy-Authorization: Basic dXNlcg==", "Proxy-Authorization: Basic [REDACTED]");
	ag_redactor_release(&r);
}

/* ---- a reference for the literal pass: quadratic, obviously right ---- */
static bool ref_boundary(const char *t, size_t e)
{
	char c = t[e];
	bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || c == '.';
	return c == '\0' || c == '/' || !word;
}

static char *ref_literal(const char *t, const char *const *roots, const char *const *roles,
			 size_t nr, const char *const *secs, size_t ns)
{
	size_t n = strlen(t);
	/* runs of covered bytes: one marker per run of overlapping occurrences */
	size_t cap = n * 20 + 1;
	char *o = ag_xcalloc(cap, 1);
	size_t ol = 0, root_end = 0;
	bool in_sec = false;
	size_t cov_end = 0;
	for (size_t p = 0; p < n; p++) {
		size_t furthest = 0;
		for (size_t k = 0; k < ns; k++) {
			size_t l = strlen(secs[k]);
			if (p + l <= n && memcmp(t + p, secs[k], l) == 0 && p + l > furthest)
				furthest = p + l;
		}
		if (in_sec && p >= cov_end)
			in_sec = false;
		if (furthest > cov_end)
			cov_end = furthest;
		if (p < root_end)
			continue;
		size_t best = 0, bi = 0;
		for (size_t k = 0; k < nr; k++) {
			size_t l = strlen(roots[k]);
			if (p + l <= n && memcmp(t + p, roots[k], l) == 0 &&
			    ref_boundary(t, p + l) && l > best) {
				best = l;
				bi = k;
			}
		}
		if (best) {
			ol += (size_t)snprintf(o + ol, cap - ol, "%s", roles[bi]);
			root_end = p + best;
			in_sec = false;
		} else if (cov_end > p) {
			if (!in_sec)
				ol += (size_t)snprintf(o + ol, cap - ol, "[REDACTED]");
			in_sec = true;
		} else {
			o[ol++] = t[p];
		}
	}
	return o;
}

/* The one-pass automaton agrees with the reference on random small cases. */
static void test_literal_random(void **state)
{
	(void)state;
	uint32_t seed = 12345;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	static const char alpha[] = "ab/. c";
	for (int iter = 0; iter < 4000; iter++) {
		char secs[4][8], roots[3][8], text[64];
		const char *sp[4], *rp[3];
		static const char *const roles[3] = {"${R0}", "${R1}", "${R2}"};
		size_t ns = 1 + RND() % 4, nr = RND() % 4;
		if (nr > 3)
			nr = 3;
		struct ag_redactor r = AG_REDACTOR_INIT;
		for (size_t k = 0; k < ns; k++) {
			size_t l = 1 + RND() % 4;
			for (size_t q = 0; q < l; q++)
				secs[k][q] = "abc"[RND() % 3];
			secs[k][l] = '\0';
			sp[k] = secs[k];
		}
		for (size_t k = 0; k < nr; k++) {
			size_t l = 2 + RND() % 4;
			roots[k][0] = '/';
			for (size_t q = 1; q < l; q++)
				roots[k][q] = "ab/"[RND() % 3];
			while (l > 1 && roots[k][l - 1] == '/')
				l--;
			if (l < 2) /* "/" is never a root */
				roots[k][l++] = 'a';
			roots[k][l] = '\0';
			rp[k] = roots[k];
		}
		/* the redactor drops duplicate secrets; the reference does not care */
		for (size_t k = 0; k < ns; k++)
			ag_redactor_add_secret(&r, sp[k]);
		for (size_t k = 0; k < nr; k++)
			ag_redactor_add_root(&r, rp[k], roles[k]);
		size_t tl = RND() % 60;
		for (size_t q = 0; q < tl; q++)
			text[q] = alpha[RND() % (sizeof(alpha) - 1)];
		text[tl] = '\0';
		char *want = ref_literal(text, rp, roles, nr, sp, ns);
		char *got = ag_redact(&r, text, tl, 100000, AG_REDACT_KEEP_NEWLINES, NULL);
		if (strcmp(got, want) != 0) {
			print_error("text '%s'\nsecrets:", text);
			for (size_t k = 0; k < ns; k++)
				print_error(" '%s'", sp[k]);
			print_error("\nroots:");
			for (size_t k = 0; k < nr; k++)
				print_error(" '%s'", rp[k]);
			print_error("\n");
		}
		assert_string_equal(got, want);
		free(got);
		free(want);
		ag_redactor_release(&r);
	}
#undef RND
}

/* What ag_redact writes, ag_redact leaves alone (evidence verify relies on it). */
static void test_idempotent(void **state)
{
	(void)state;
	static const char *const in[] = {
	    "Authorization: Bearer abc",
	    "password=hunter2 ok",
	    "--token abc --x",
	    "x --api-key=1",
	    "https://u:p@h/x",
	    "ghp_0123456789abcdefghij0123",
	    "-----BEGIN RSA PRIVATE KEY-----",
	    "/home/a/b and /tmp/x/y",
	    "X-Api-Key: k",
	    "a.token: v",
	    "cookie: s=1; x=2",
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(in); i++) {
		char *a = R(NULL, in[i]);
		char *b = R(NULL, a);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
}

/* Fills n bytes by repeating unit. */
static char *repeat(const char *unit, size_t n)
{
	char *b = ag_xmalloc(n + 1);
	size_t ul = strlen(unit);
	for (size_t i = 0; i < n; i++)
		b[i] = unit[i % ul];
	b[n] = '\0';
	return b;
}

/*
 * Finding 4: the work is linear in the text, counted (not timed): for each
 * adversarial shape, the steps per byte are bounded by a constant and
 * doubling the text at most doubles them. The old code spent O(n^2) steps
 * on the first shape (an a.a.a run was rescanned from every '.').
 */
static void test_linear_steps(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	char *long_secret = repeat("a", 4096);
	long_secret[4095] = 'b';
	ag_redactor_add_secret(&r, long_secret);
	ag_redactor_add_secret(&r, "CANARY-SECRET-0123456789");
	ag_redactor_add_secret(&r, "p%ss w\xc3\xb6rd");
	ag_redactor_add_root(&r, "/srv/work/repo", "${REPOSITORY_ROOT}");
	ag_redactor_add_root(&r, "/srv/work/repo/.agentguard/contained-runs", "${RUNS_ROOT}");
	ag_redactor_add_root(&r, "/srv/work", "${AGENTGUARD_ROOT}");
	static const char *const units[] = {
	    "a.",
	    "a",
	    "CANARY-SECRET-012345678 ",
	    "CANARY-SECRET-CANARY-",
	    "x.token.password ",
	    "token=token:",
	    "/srv/work/rep/srv/work/repo.x",
	    "--token --api-key ",
	    "ghp_0123456789abc ",
	    "://a:b://",
	    "-----BEGIN ",
	    "\x1b[0m\x01",
	    "a.b.c.d.e.f.g.h=",
	    "Authorization: ",
	    "/home/x/home/",
	    "p%25ss%20w%C3",
	};
	const size_t n = 256 * 1024;
	for (size_t u = 0; u < AG_ARRAY_SIZE(units); u++) {
		uint64_t s1 = 0, s2 = 0;
		char *t1 = repeat(units[u], n), *t2 = repeat(units[u], 2 * n);
		free(ag_redact_counted(&r, t1, n, 16 * n, AG_REDACT_KEEP_NEWLINES, NULL, &s1));
		free(ag_redact_counted(&r, t2, 2 * n, 32 * n, AG_REDACT_KEEP_NEWLINES, NULL, &s2));
		/* the same rule applies to the verifier's call (no redaction set) */
		uint64_t s3 = 0;
		free(
		    ag_redact_counted(NULL, t2, 2 * n, 32 * n, AG_REDACT_KEEP_NEWLINES, NULL, &s3));
		if (s1 > 40 * n || s2 > 40 * 2 * n || s2 > 2 * s1 + 64 * 1024 || s3 > 40 * 2 * n)
			print_error(
			    "shape %zu: %llu steps for %zu bytes, %llu for %zu, %llu unset\n", u,
			    (unsigned long long)s1, n, (unsigned long long)s2, 2 * n,
			    (unsigned long long)s3);
		assert_true(s1 <= 40 * n);
		assert_true(s2 <= 40 * 2 * n);
		assert_true(s2 <= 2 * s1 + 64 * 1024);
		assert_true(s3 <= 40 * 2 * n);
		free(t1);
		free(t2);
	}
	free(long_secret);
	ag_redactor_release(&r);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Finding 4 with a wall bound where the quadratic scanner of old would be
 * hopeless: 4 MiB of each shape through ag_redact (the run's call, with a
 * redaction set) and the verifier's call (no set). Linear code needs well
 * under a second per shape (a few under ASan); the old code needed about
 * 80 minutes for the first shape alone (50 s per 512 KiB, four times more
 * per doubling). The bound is 60 s of CPU per call, and SIGALRM after 180 s
 * of wall time ends a run that is stuck. (This test, with only the
 * ag_redact API, was also built against the old code: killed by the alarm.)
 */
static void test_adversarial_4mib(void **state)
{
	(void)state;
	alarm(180);
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "CANARY-SECRET-0123456789");
	ag_redactor_add_secret(&r, "value-a.a.a.a.b");
	ag_redactor_add_root(&r, "/srv/work/repo", "${REPOSITORY_ROOT}");
	ag_redactor_add_root(&r, "/srv/work", "${AGENTGUARD_ROOT}");
	static const char *const units[] = {
	    "a.",
	    "CANARY-SECRET-012345678.",
	    "x.token.password.",
	    "/srv/work/rep/srv/work/repo.",
	    "a.b.c.d=",
	};
	const size_t n = 4 * 1024 * 1024;
	for (size_t u = 0; u < AG_ARRAY_SIZE(units); u++) {
		char *t = repeat(units[u], n);
		for (int with_set = 0; with_set < 2; with_set++) {
			double t0 = cpu_seconds();
			char *o = ag_redact(with_set ? &r : NULL, t, n, 8 * n,
					    AG_REDACT_KEEP_NEWLINES, NULL);
			double dt = cpu_seconds() - t0;
			free(o);
			if (dt > 60)
				print_error("shape %zu (set %d): %.1f s of CPU for 4 MiB\n", u,
					    with_set, dt);
			assert_true(dt <= 60);
		}
		free(t);
	}
	ag_redactor_release(&r);
	alarm(0);
}

/* Finding 6: the one terminal escaper, class by class. */
static void test_termsafe(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	    {"plain ascii ~", "plain ascii ~"},
	    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
	    {"a\x1b[31mb\n\t\x7f", "a\\x1b[31mb\\x0a\\x09\\x7f"},
	    {"csi\xc2\x9b"
	     "31m osc\xc2\x9d"
	     "8;; nel\xc2\x85",
	     "csi\\u009b31m osc\\u009d8;; nel\\u0085"},
	    {"raw\x9b\x9d\x80\xff", "raw\\x9b\\x9d\\x80\\xff"},
	    {"rlo\xe2\x80\xae lre\xe2\x80\xaa lri\xe2\x81\xa6 pdi\xe2\x81\xa9",
	     "rlo\\u202e lre\\u202a lri\\u2066 pdi\\u2069"},
	    {"lrm\xe2\x80\x8e rlm\xe2\x80\x8f alm\xd8\x9c", "lrm\\u200e rlm\\u200f alm\\u061c"},
	    {"ls\xe2\x80\xa8ps\xe2\x80\xa9", "ls\\u2028ps\\u2029"},
	    {"overlong\xc0\xaf surrogate\xed\xa0\x80 big\xf4\x90\x80\x80 cut\xe2\x80",
	     "overlong\\xc0\\xaf surrogate\\xed\\xa0\\x80 big\\xf4\\x90\\x80\\x80 cut\\xe2\\x80"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		char *t = ag_termsafe(cases[i][0]);
		if (strcmp(t, cases[i][1]) != 0)
			print_error("case %zu: got %s\n", i, t);
		assert_string_equal(t, cases[i][1]);
		free(t);
	}
}

static const char *lookup(const char *name, void *data)
{
	(void)data;
	if (strcmp(name, "AGENT_API_TOKEN") == 0)
		return "CANARY-HOST-TOKEN";
	if (strcmp(name, "BAD_VALUE") == 0)
		return "a\nb";
	return NULL;
}

#define CONTAINED                                                                                  \
	"task_id: t\ndescription: d\ntest_command: c\nrepo_template: r\n"                          \
	"expected_modified_files: {min: 0, max: 1}\n"                                              \
	"sandbox: {type: docker, image: \"a@sha256:"                                               \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}\n"                    \
	"contained_execution:\n  version: 1\n  platform: linux-docker-engine\n  environment:\n"

static struct ag_config *load(const char *doc)
{
	struct ag_config *c = NULL;
	struct ag_error *e = NULL;
	if (ag_config_load_mem(doc, strlen(doc), "t.yaml", &c, &e) < 0) {
		print_error("%s\n", e->msg);
		fail();
	}
	return c;
}

static void test_env_resolve(void **state)
{
	(void)state;
	struct ag_config *c =
	    load(CONTAINED "    - {name: ZED, value: last}\n"
			   "    - {name: AGENT_API_TOKEN, source: host, required: true,"
			   " allow_sensitive: true}\n"
			   "    - {name: OPTIONAL_X, source: host}\n"
			   "    - {name: AGENT_MODE, value: batch}\n");
	struct ag_redactor r = AG_REDACTOR_INIT;
	struct ag_env_resolved env;
	struct ag_error *e = NULL;
	assert_int_equal(ag_env_resolve(&c->contained, lookup, NULL, &r, &env, &e), 0);
	const char *want[] = {
	    "AGENT_API_TOKEN=CANARY-HOST-TOKEN",
	    "AGENT_MODE=batch",
	    "HOME=/tmp/agentguard-home",
	    "LANG=C.UTF-8",
	    "LC_ALL=C.UTF-8",
	    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	    "ZED=last",
	};
	assert_int_equal(env.assignments.n, AG_ARRAY_SIZE(want));
	for (size_t i = 0; i < AG_ARRAY_SIZE(want); i++)
		assert_string_equal(env.assignments.v[i], want[i]);
	assert_int_equal(env.supplied.n, 3);
	assert_string_equal(env.supplied.v[0], "AGENT_API_TOKEN");
	assert_int_equal(env.sensitive.n, 1);
	assert_int_equal(env.missing.n, 1);
	assert_string_equal(env.missing.v[0], "OPTIONAL_X");
	assert_int_equal(env.defaults.n, 4);
	char *s = R(&r, "token is CANARY-HOST-TOKEN, mode batch");
	assert_null(strstr(s, "CANARY"));
	free(s);
	ag_env_resolved_release(&env);
	ag_redactor_release(&r);
	ag_config_free(c);

	c = load(CONTAINED "    - {name: NEEDED_ONE, source: host, required: true}\n"
			   "    - {name: NEEDED_TWO, source: host, required: true}\n");
	assert_int_equal(ag_env_resolve(&c->contained, lookup, NULL, NULL, &env, &e), -1);
	assert_string_equal(e->reason, "config.env.required_missing");
	assert_non_null(strstr(e->msg, "NEEDED_ONE, NEEDED_TWO"));
	ag_error_free(e);
	e = NULL;
	ag_config_free(c);

	c = load(CONTAINED "    - {name: BAD_VALUE, source: host}\n");
	assert_int_equal(ag_env_resolve(&c->contained, lookup, NULL, NULL, &env, &e), -1);
	assert_string_equal(e->reason, "config.env.host_value");
	ag_error_free(e);
	ag_config_free(c);
}

static const char *c1_lookup(const char *name, void *data)
{
	(void)data;
	return strcmp(name, "HOST_C1") == 0 ? "ok\xc2\x9b"
					      "31m"
					    : NULL;
}

/* Finding 11: reserved names and value characters. */
static void test_env_value_rules(void **state)
{
	(void)state;
	static const char *const reserved[] = {
	    "CURL_CA_BUNDLE",
	    "NODE_EXTRA_CA_CERTS",
	    "GIT_SSL_CAINFO",
	    "GIT_CONFIG_COUNT",
	    "GIT_CONFIG_KEY_0",
	    "GIT_CONFIG_PARAMETERS",
	    "GIT_SSH_COMMAND",
	    "DBUS_SESSION_BUS_ADDRESS",
	    "TMUX",
	    "LD_PRELOAD",
	    "HOME",
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(reserved); i++)
		assert_true(ag_env_name_is_reserved(reserved[i]));
	static const char *const allowed[] = {"GIT_CONFIGURED", "TMUX_MODE", "CURL_CA",
					      "AGENT_MODE"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(allowed); i++)
		assert_false(ag_env_name_is_reserved(allowed[i]));
	static const char *const bad[] = {"a\x01",	   "a\x7f",    "a\xc2\x80",
					  "a\xc2\x9f",	   "\xc2\x85", "a\xe2\x80\xa8",
					  "a\xe2\x80\xa9", "raw\x9b",  "cut\xe2\x80"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++)
		assert_true(ag_env_value_has_control(bad[i], strlen(bad[i])));
	static const char *const good[] = {"plain", "caf\xc3\xa9", "nb\xc2\xa0sp", "\xe2\x82\xac",
					   "\xf0\x9f\x98\x80"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(good); i++)
		assert_false(ag_env_value_has_control(good[i], strlen(good[i])));
	/* a host value with a C1 control is refused like one with a C0 control */
	struct ag_config *c = load(CONTAINED "    - {name: HOST_C1, source: host}\n");
	struct ag_env_resolved env;
	struct ag_error *e = NULL;
	assert_int_equal(ag_env_resolve(&c->contained, c1_lookup, NULL, NULL, &env, &e), -1);
	assert_string_equal(e->reason, "config.env.host_value");
	assert_null(strstr(e->msg, "31m"));
	ag_error_free(e);
	ag_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_secrets_and_roots),
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_env_resolve),
	    cmocka_unit_test(test_literal_semantics),
	    cmocka_unit_test(test_literal_random),
	    cmocka_unit_test(test_encoded_forms),
	    cmocka_unit_test(test_argv_credentials),
	    cmocka_unit_test(test_idempotent),
	    cmocka_unit_test(test_linear_steps),
	    cmocka_unit_test(test_adversarial_4mib),
	    cmocka_unit_test(test_termsafe),
	    cmocka_unit_test(test_env_value_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
