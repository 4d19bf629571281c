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
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"

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
	expect_redacted(&r2, "/opt/rv-batch-CANARY/runs/x and batch", "${RUNS_ROOT}/x and [REDACTED]");
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
	expect_redacted(NULL, "-----BEGIN RSA PRIVATE KEY-----\nMII", "[REDACTED_PRIVATE_KEY]\nMII");
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
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}\n"                     \
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
	struct ag_config *c = load(CONTAINED
				   "    - {name: ZED, value: last}\n"
				   "    - {name: AGENT_API_TOKEN, source: host, required: true,"
				   " allow_sensitive: true}\n"
				   "    - {name: OPTIONAL_X, source: host}\n"
				   "    - {name: AGENT_MODE, value: batch}\n");
	struct ag_redactor r = AG_REDACTOR_INIT;
	struct ag_env_resolved env;
	struct ag_error *e = NULL;
	assert_int_equal(ag_env_resolve(&c->contained, lookup, NULL, &r, &env, &e), 0);
	const char *want[] = {
		"AGENT_API_TOKEN=CANARY-HOST-TOKEN", "AGENT_MODE=batch", "HOME=/tmp/agentguard-home",
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ZED=last",
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_and_roots),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_env_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
