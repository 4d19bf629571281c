/*
 * Streaming redaction (the agent's live output): whatever the chunking,
 * what comes out equals redacting the whole text, a secret split anywhere
 * is never printed in part, memory stays bounded, and a cut-short stream
 * drops its unfinished line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/redact.h"

struct sink {
	char *s;
	size_t len, cap;
	unsigned emits, cuts;
};

static void sink_emit(void *ctx, const char *t, size_t n, bool cut)
{
	struct sink *k = ctx;
	if (k->len + n + 1 > k->cap) {
		k->cap = (k->len + n + 1) * 2;
		k->s = ag_xrealloc(k->s, k->cap);
	}
	memcpy(k->s + k->len, t, n);
	k->len += n;
	k->s[k->len] = '\0';
	k->emits++;
	k->cuts += cut;
}

static void sink_reset(struct sink *k)
{
	free(k->s);
	memset(k, 0, sizeof(*k));
}

static void set_up(struct ag_redactor *r)
{
	*r = (struct ag_redactor)AG_REDACTOR_INIT;
	ag_redactor_add_secret(r, "CANARY-LIVE-5f1e");
	ag_redactor_add_secret(r, "pct%CANARY-PCT-77");
	ag_redactor_add_secret(r, "line one\nline two SECRET-ML");
	ag_redactor_add_secret(r, "aaaaaaaaab");
	ag_redactor_add_root(r, "/work/repo", "${REPOSITORY_ROOT}");
}

static const char *const corpus[] = {
    "hello CANARY-LIVE-5f1e world\n",
    "no newline at the end CANARY-LIVE-5f1e",
    "url pct%25CANARY-PCT-77 json {\"v\":\"CANARY-LIVE-5f1e\"}\r\nnext\n",
    "a multi-line value: line one\nline two SECRET-ML and after\n",
    "line one\nline two but not the secret\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab then aaaab\n",
    "path /work/repo/src/x.c and /work/repository stays\n/work/repo\n",
    "token ghp_0123456789abcdefghijABCDEFGHIJ here\nAuthorization: Bearer abc.def\n",
    "--api-key SUPERSECRETVALUE --password=hunter2 password: pw123\n",
    "https://user:pa55w0rd@example.invalid/x and /home/someone/file\n",
    "-----BEGIN RSA\n PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n",
    "ctl \033[31mred\033[0m \x01 tab\there\n",
    "",
    "\n\n\r\r\n",
};

static char *whole(const struct ag_redactor *r, const char *t)
{
	return ag_redact(r, t, strlen(t), SIZE_MAX / 4, AG_REDACT_KEEP_CONTROLS, NULL);
}

static void feed_split(const struct ag_redactor *r, const char *t, const size_t *cuts, size_t ncuts,
		       struct sink *k)
{
	struct ag_redact_stream *s = ag_redact_stream_new(r, 4096, sink_emit, k);
	size_t at = 0, n = strlen(t);
	for (size_t i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : n;
		ag_redact_stream_feed(s, t + at, to - at);
		at = to;
	}
	ag_redact_stream_finish(s);
	ag_redact_stream_free(s);
}

/* Two chunks, cut at every offset; and byte by byte. */
static void test_every_offset(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	for (size_t c = 0; c < AG_ARRAY_SIZE(corpus); c++) {
		const char *t = corpus[c];
		char *want = whole(&r, t);
		size_t n = strlen(t);
		for (size_t k = 0; k <= n; k++) {
			struct sink out = {0};
			feed_split(&r, t, &k, 1, &out);
			if (strcmp(out.s ? out.s : "", want) != 0)
				print_error("corpus %zu cut %zu\ngot:  %s\nwant: %s\n", c, k,
					    out.s ? out.s : "", want);
			assert_string_equal(out.s ? out.s : "", want);
			assert_null(strstr(out.s ? out.s : "", "CANARY"));
			assert_int_equal(out.cuts, 0);
			sink_reset(&out);
		}
		size_t *every = ag_xcalloc(n + 1, sizeof(size_t));
		for (size_t k = 0; k < n; k++)
			every[k] = k;
		struct sink out = {0};
		feed_split(&r, t, every, n, &out);
		assert_string_equal(out.s ? out.s : "", want);
		sink_reset(&out);
		free(every);
		free(want);
	}
	ag_redactor_release(&r);
}

/* Three chunks around a secret: every pair of cut points inside it. */
static void test_secret_three_ways(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	const char *t = "before CANARY-LIVE-5f1e after\n";
	for (size_t i = 6; i < 24; i++)
		for (size_t j = i; j < 26; j++) {
			size_t cuts[2] = {i, j};
			struct sink out = {0};
			feed_split(&r, t, cuts, 2, &out);
			assert_string_equal(out.s, "before [REDACTED] after\n");
			sink_reset(&out);
		}
	ag_redactor_release(&r);
}

/* Only whole lines come out while a line is open; a held prefix of a
 * secret waits for the rest. */
static void test_holds_back(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	struct sink out = {0};
	struct ag_redact_stream *s = ag_redact_stream_new(&r, 4096, sink_emit, &out);
	ag_redact_stream_feed(s, "first line\nCANARY-LI", 20);
	assert_string_equal(out.s, "first line\n");
	ag_redact_stream_feed(s, "VE-5f1e end\n", 12);
	assert_string_equal(out.s, "first line\n[REDACTED] end\n");
	/* a line end inside the multi-line secret is not a cut */
	ag_redact_stream_feed(s, "x line one\n", 11);
	assert_string_equal(out.s, "first line\n[REDACTED] end\n");
	ag_redact_stream_feed(s, "line two SECRET-ML!\n", 20);
	assert_string_equal(out.s, "first line\n[REDACTED] end\nx [REDACTED]!\n");
	ag_redact_stream_finish(s);
	ag_redact_stream_free(s);
	sink_reset(&out);
	ag_redactor_release(&r);
}

/* A stream cut short (the capture bound) never shows its unfinished line. */
static void test_abandon(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	struct sink out = {0};
	struct ag_redact_stream *s = ag_redact_stream_new(&r, 4096, sink_emit, &out);
	ag_redact_stream_feed(s, "shown\nCANARY-LIVE", 17);
	ag_redact_stream_abandon(s);
	ag_redact_stream_feed(s, "-5f1e\n", 6);
	ag_redact_stream_finish(s);
	assert_string_equal(out.s, "shown\n");
	ag_redact_stream_free(s);
	sink_reset(&out);
	ag_redactor_release(&r);
}

/* Memory is bounded: a line longer than the hold is cut at its last blank,
 * the rest of it (a token the cut would split included) is withheld, and
 * the next line comes out again. */
static void test_bounded(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	const size_t line_max = 256;
	size_t maxpat = 64; /* more than the longest pattern of the set */
	struct sink out = {0};
	struct ag_redact_stream *s = ag_redact_stream_new(&r, line_max, sink_emit, &out);
	for (int i = 0; i < 10000; i++) {
		ag_redact_stream_feed(s, "word ", 5);
		assert_true(ag_redact_stream_held(s) <= line_max + maxpat);
	}
	/* a token straddling the bound is never shown in part */
	ag_redact_stream_feed(s, "ghp_0123456789abcdefghijABCDEFGHIJ tail\nnext CANARY-LIVE-5f1e\n",
			      62);
	ag_redact_stream_finish(s);
	assert_int_equal(out.cuts, 1);
	assert_null(strstr(out.s, "ghp_"));
	assert_null(strstr(out.s, "0123456789"));
	assert_null(strstr(out.s, "CANARY"));
	assert_non_null(strstr(out.s, "word word"));
	size_t n = strlen(out.s);
	assert_true(n <= line_max + maxpat + 32);
	assert_string_equal(out.s + n - strlen("next [REDACTED]\n"), "next [REDACTED]\n");
	ag_redact_stream_free(s);
	sink_reset(&out);

	/* one long word: nothing of the line, then the next line */
	s = ag_redact_stream_new(&r, line_max, sink_emit, &out);
	for (int i = 0; i < 1000; i++)
		ag_redact_stream_feed(s, "xxxxxxxxxx", 10);
	ag_redact_stream_feed(s, "\nok\n", 4);
	ag_redact_stream_finish(s);
	assert_int_equal(out.cuts, 1);
	assert_string_equal(out.s, "ok\n");
	ag_redact_stream_free(s);
	sink_reset(&out);
	ag_redactor_release(&r);
}

/* Pseudo-random texts from pieces of the set's patterns, random chunks:
 * the same as redacting the whole text. */
static void test_random_chunks(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	static const char *const pieces[] = {
	    "CANARY-",
	    "LIVE-5f1e",
	    "CANARY-LIVE-5f1e",
	    "pct%25",
	    "CANARY-PCT-77",
	    "line one\n",
	    "line two SECRET-ML",
	    "aaaa",
	    "aab",
	    "/work/repo",
	    "/src",
	    " ",
	    "\n",
	    "\r",
	    "x",
	    "-----BEGIN ",
	    "PRIVATE KEY-----",
	    "password=",
	    "ghp_",
	    "0123456789abcdefghij",
	    "https://u:p@h/",
	    "\t",
	    "\033[1m",
	};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 300; round++) {
		char t[2048];
		size_t n = 0;
		for (;;) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			const char *p = pieces[(seed >> 33) % AG_ARRAY_SIZE(pieces)];
			size_t l = strlen(p);
			if (n + l >= sizeof(t) - 1)
				break;
			memcpy(t + n, p, l);
			n += l;
		}
		t[n] = '\0';
		size_t cuts[64], nc = 0, at = 0;
		while (nc < AG_ARRAY_SIZE(cuts)) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			at += (seed >> 40) % 97;
			if (at >= n)
				break;
			cuts[nc++] = at;
		}
		char *want = whole(&r, t);
		struct sink out = {0};
		feed_split(&r, t, cuts, nc, &out);
		assert_string_equal(out.s ? out.s : "", want);
		free(want);
		sink_reset(&out);
	}
	ag_redactor_release(&r);
}

/*
 * The private-key shape looks 128 bytes ahead of "-----BEGIN " in the text
 * after secrets are replaced: a long secret between it and a terminator on
 * the next line shrinks that distance. The stream waits for it.
 */
static void test_begin_window(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	char secret[151], t[400];
	memset(secret, 'Q', 150);
	secret[150] = '\0';
	ag_redactor_add_secret(&r, secret);
	snprintf(t, sizeof(t), "-----BEGIN %s\nPRIVATE KEY-----\nafter\n", secret);
	char *want = whole(&r, t);
	assert_non_null(strstr(want, "[REDACTED_PRIVATE_KEY]"));
	size_t n = strlen(t);
	for (size_t k = 0; k <= n; k++) {
		struct sink out = {0};
		feed_split(&r, t, &k, 1, &out);
		assert_string_equal(out.s, want);
		sink_reset(&out);
	}
	/* far apart (more than 128 bytes once redacted), no wait is needed */
	snprintf(t, sizeof(t), "-----BEGIN %s %0130d\nPRIVATE KEY-----\n", secret, 0);
	free(want);
	want = whole(&r, t);
	struct sink out = {0};
	struct ag_redact_stream *s = ag_redact_stream_new(&r, 4096, sink_emit, &out);
	ag_redact_stream_feed(s, t, strlen(t) - 17);
	assert_non_null(out.s); /* the first line is out before the terminator came */
	ag_redact_stream_feed(s, t + strlen(t) - 17, 17);
	ag_redact_stream_finish(s);
	ag_redact_stream_free(s);
	assert_string_equal(out.s, want);
	sink_reset(&out);
	free(want);
	ag_redactor_release(&r);
}

/* The set is copied: a secret added after creation does not change the stream. */
static void test_set_copied(void **state)
{
	(void)state;
	struct ag_redactor r;
	set_up(&r);
	struct sink out = {0};
	struct ag_redact_stream *s = ag_redact_stream_new(&r, 4096, sink_emit, &out);
	ag_redactor_release(&r);
	ag_redact_stream_feed(s, "CANARY-LIVE-5f1e\n", 17);
	ag_redact_stream_finish(s);
	assert_string_equal(out.s, "[REDACTED]\n");
	ag_redact_stream_free(s);
	sink_reset(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_offset), cmocka_unit_test(test_secret_three_ways),
	    cmocka_unit_test(test_holds_back),	 cmocka_unit_test(test_abandon),
	    cmocka_unit_test(test_bounded),	 cmocka_unit_test(test_random_chunks),
	    cmocka_unit_test(test_set_copied),	 cmocka_unit_test(test_begin_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
