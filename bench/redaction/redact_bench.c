/*
 * redact_bench: redaction throughput on adversarial agent output, side by
 * side with memcpy of the same bytes in the same process (see README.md).
 *
 *   redact_bench [MiB] [runs] [shape-name-substring]
 *
 * Prints one line per shape: MiB; memcpy into a warm buffer; a plain copy
 * into a fresh buffer (malloc + memcpy + free: what producing any new output
 * string costs at least); ag_redact; the two ratios; and the steps per byte
 * (the work counter ag_redact_counted reports). Times are CPU time of this
 * thread (CLOCK_THREAD_CPUTIME_ID), the median of the runs, so other load on
 * the machine does not count.
 */
#include "lib/base/ag.h"
#include "lib/base/redact.h"

#include <malloc.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fills buf[0..n) by repeating unit. */
static void fill(char *buf, size_t n, const char *unit)
{
	size_t ul = strlen(unit);
	for (size_t i = 0; i < n; i++)
		buf[i] = unit[i % ul];
}

static volatile unsigned char sink;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void stream_sink(void *ctx, const char *t, size_t len, bool cut)
{
	(void)ctx;
	(void)cut;
	if (len)
		sink ^= (unsigned char)t[len - 1];
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 3;
	const char *only = argc > 3 ? argv[3] : NULL; /* a substring of the shape names */
	size_t n = mib * 1024 * 1024;
	/* Every large buffer is fresh memory from mmap (glibc would otherwise
	 * raise its threshold after the first free and reuse warm pages for
	 * some sizes): the copy baseline and ag_redact's output alike. */
	mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
	/* A redaction set like a real run's: 32 environment values (the config
	 * maximum), credential arguments, five host roots. */
	struct ag_redactor r = AG_REDACTOR_INIT;
	char long_secret[4097];
	memset(long_secret, 'a', 4095);
	long_secret[4095] = 'b';
	long_secret[4096] = '\0';
	ag_redactor_add_secret(&r, long_secret);
	ag_redactor_add_secret(&r, "CANARY-SECRET-0123456789");
	ag_redactor_add_secret(&r, "p%ss w\xc3\xb6rd/\"x\"");
	for (int i = 0; i < 29; i++) {
		char v[64];
		snprintf(v, sizeof(v), "value-%02d-a.a.a.a.a.b", i);
		ag_redactor_add_secret(&r, v);
	}
	ag_redactor_add_root(&r, "/srv/work/repo", "${REPOSITORY_ROOT}");
	ag_redactor_add_root(&r, "/srv/work/repo/.agentguard/contained-runs", "${RUNS_ROOT}");
	ag_redactor_add_root(&r, "/srv/work/repo/.agentguard/contained-runs/r1", "${RUN_ROOT}");
	ag_redactor_add_root(&r, "/srv/work", "${AGENTGUARD_ROOT}");
	ag_redactor_add_root(&r, "/home/ci", "${HOME}");
	static const struct {
		const char *name, *unit;
	} shapes[] = {
		{"a.a.a (dotted word runs)", "a."},
		{"a-run vs 4 KiB secret a..ab", "a"},
		{"secret near-miss prefix", "CANARY-SECRET-012345678 "},
		{"overlapping secret prefixes", "CANARY-SECRET-CANARY-SECRET-0123"},
		{"secret-word keys, no value", "x.token.password.secret.api_key "},
		{"root near-miss", "/srv/work/rep/srv/work/repo.x"},
		{"credential flags", "--token --api-key --password "},
		{"ghp_ near-miss (19-byte body)", "ghp_0123456789abcdefghi "},
		{"URL scheme separators", "://a:b://"},
		{"private-key headers", "-----BEGIN -----BEGIN "},
		{"escape-heavy controls", "\x1b[0m\x01"},
		{"plain text (log lines)", "2026-11-30 build step 17 ok: compiled src/main.c\n"},
	};
	char *buf = ag_xmalloc(n + 1), *dst = ag_xmalloc(n + 1);
	printf("%-32s %4s %9s %9s %9s %8s %8s %8s %9s %8s\n", "shape", "MiB", "memcpy_s", "copy_s",
	       "redact_s", "x_memcpy", "x_copy", "steps/B", "stream_s", "x_redact");
	for (size_t s = 0; s < AG_ARRAY_SIZE(shapes); s++) {
		if (only && !strstr(shapes[s].name, only))
			continue;
		fill(buf, n, shapes[s].unit);
		buf[n] = '\0';
		double tm[16], tc[16], tr[16], ts[16];
		uint64_t steps = 0;
		if (runs > 16)
			runs = 16;
		for (int k = 0; k < runs; k++) {
			double t0 = now();
			memcpy(dst, buf, n);
			double t1 = now();
			char *fresh = malloc(n + 1);
			memcpy(fresh, buf, n + 1);
			double t2 = now();
			steps = 0;
			char *o = ag_redact_counted(&r, buf, n, n * 8 + 64, AG_REDACT_KEEP_NEWLINES,
						    NULL, &steps);
			double t3 = now();
			/* the live view: the same bytes fed in 16 KiB chunks (the size
			 * libcurl hands over) through the streaming redactor */
			struct ag_redact_stream *rs =
			    ag_redact_stream_new(&r, 64 * 1024, stream_sink, NULL);
			for (size_t off = 0; off < n; off += 16384)
				ag_redact_stream_feed(rs, buf + off, n - off < 16384 ? n - off : 16384);
			ag_redact_stream_finish(rs);
			ag_redact_stream_free(rs);
			double t4 = now();
			ts[k] = t4 - t3;
			sink ^= (unsigned char)(o[0] ^ dst[n / 2] ^ fresh[n / 3]); /* keep them alive */
			free(fresh);
			free(o);
			tm[k] = t1 - t0;
			tc[k] = t2 - t1;
			tr[k] = t3 - t2;
		}
		qsort(tm, (size_t)runs, sizeof(double), cmp_d);
		qsort(tc, (size_t)runs, sizeof(double), cmp_d);
		qsort(tr, (size_t)runs, sizeof(double), cmp_d);
		qsort(ts, (size_t)runs, sizeof(double), cmp_d);
		double m = tm[runs / 2], c = tc[runs / 2], rd = tr[runs / 2], st = ts[runs / 2];
		printf("%-32s %4zu %9.4f %9.4f %9.3f %8.0f %8.0f %8.2f %9.3f %8.2f\n", shapes[s].name,
		       mib, m, c, rd, rd / m, rd / c, (double)steps / (double)n, st, st / rd);
		fflush(stdout);
	}
	free(buf);
	free(dst);
	ag_redactor_release(&r);
	return 0;
}
