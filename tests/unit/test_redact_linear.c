/*
 * Redaction cost on adversarial agent output, with a wall bound where the
 * quadratic scanner of old would be hopeless: 4 MiB of each shape through
 * ag_redact (the run's call, with a redaction set) and through the
 * verifier's call (no set). Linear code needs well under a second per shape
 * (a few seconds under ASan); the old code needed about 80 minutes for the
 * first shape alone (24 s per 2 x 200 KB, growing with the square). The
 * bound is 60 s of CPU per shape, and SIGALRM after 180 s of wall time ends
 * a run that is stuck. The step-count assertions are in test_redact.c
 * (test_linear_steps); this file uses only the API every version has, so
 * it also shows the old code failing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/redact.h"

#include <signal.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *repeat(const char *unit, size_t n)
{
	char *b = ag_xmalloc(n + 1);
	size_t ul = strlen(unit);
	for (size_t i = 0; i < n; i++)
		b[i] = unit[i % ul];
	b[n] = '\0';
	return b;
}

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
	    "a.", "CANARY-SECRET-012345678.", "x.token.password.", "/srv/work/rep/srv/work/repo.",
	    "a.b.c.d=",
	};
	const size_t n = 4 * 1024 * 1024;
	for (size_t u = 0; u < AG_ARRAY_SIZE(units); u++) {
		char *t = repeat(units[u], n);
		for (int with_set = 0; with_set < 2; with_set++) {
			double t0 = cpu_seconds();
			char *o = ag_redact(with_set ? &r : NULL, t, n, 8 * n, AG_REDACT_KEEP_NEWLINES,
					    NULL);
			double dt = cpu_seconds() - t0;
			free(o);
			if (dt > 60)
				print_error("shape %zu (set %d): %.1f s of CPU for 4 MiB\n", u, with_set,
					    dt);
			assert_true(dt <= 60);
		}
		free(t);
	}
	ag_redactor_release(&r);
	alarm(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adversarial_4mib),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
