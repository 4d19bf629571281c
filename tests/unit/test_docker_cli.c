/*
 * test_docker_cli.c: client resolution and verification, and the docker
 * call helper, against the real client when one is installed and against
 * small fake clients in a private temporary directory.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/proc.h"
#include "lib/docker/docker_cli.h"

#include <limits.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <cmocka.h>

static char dir[64];

static void expect_reason_(int rc, struct ag_error **e, const char *reason)
{
	assert_int_equal(rc, -1);
	assert_non_null(*e);
	assert_string_equal((*e)->reason, reason);
	ag_error_free(*e);
	*e = NULL;
}
/* The call is evaluated before e is read (argument order is unspecified). */
#define expect_reason(call, e, reason)                                                             \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		expect_reason_(rc_, &(e), reason);                                                 \
	} while (0)

/* Writes an executable script `name` into the private dir; returns its path. */
static char *write_fake(const char *name, const char *body, mode_t mode)
{
	char *p = ag_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ag-test-dcli.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	static const char *const names[] = {"ok", "garbage", "fails", "gw", "noexec", "notroot",
					    "link", "long", NULL};
	for (size_t i = 0; names[i]; i++) {
		char *p = ag_xasprintf("%s/%s", dir, names[i]);
		unlink(p);
		free(p);
	}
	char *sub = ag_xasprintf("%s/open", dir);
	char *subf = ag_xasprintf("%s/open/docker", dir);
	unlink(subf);
	rmdir(sub);
	free(sub);
	free(subf);
	rmdir(dir);
	return 0;
}

static void test_not_absolute(void **state)
{
	(void)state;
	struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	expect_reason(ag_docker_cli_resolve("docker", &c, &e), e, "docker.cli.not_absolute");
	e = NULL;
	expect_reason(ag_docker_cli_resolve("./bin/docker", &c, &e), e, "docker.cli.not_absolute");
}

static void test_missing(void **state)
{
	(void)state;
	struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	expect_reason(ag_docker_cli_resolve("/nonexistent/agentguard/docker", &c, &e), e,
		      "docker.cli.missing");
}

static void test_fake_ok_and_version(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* fakes must be root-owned */
	char *p = write_fake("ok", "#!/bin/sh\necho 'Docker version 24.0.7+dfsg1, build afdd53b'\n",
			     0755);
	_cleanup_docker_cli_ struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_docker_cli_resolve(p, &c, &e), 0);
	assert_null(e);
	assert_string_equal(c.path, p);
	assert_string_equal(c.version, "24.0.7+dfsg1");

	/* A symlink resolves to the verified target, which is what runs. */
	char *l = ag_xasprintf("%s/link", dir);
	assert_int_equal(symlink(p, l), 0);
	_cleanup_docker_cli_ struct ag_docker_cli c2 = AG_DOCKER_CLI_INIT;
	assert_int_equal(ag_docker_cli_resolve(l, &c2, &e), 0);
	assert_string_equal(c2.path, p);
	free(l);
	free(p);
}

static void test_fake_bad_version(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	char *p = write_fake("garbage", "#!/bin/sh\necho 'Podman version 4.0'\n", 0755);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.version");
	free(p);
	e = NULL;
	p = write_fake("fails", "#!/bin/sh\necho 'Docker version 1.0, build x'\nexit 1\n", 0755);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.version");
	free(p);
	e = NULL;
	/* Longer than the 256-byte bound: killed, truncated, refused. */
	p = write_fake("long", "#!/bin/sh\nexec /usr/bin/yes 'Docker version 1.0'\n", 0755);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.version");
	free(p);
	assert_null(c.path);
}

static void test_unsafe(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	char *p = write_fake("gw", "#!/bin/sh\n", 0775);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.unsafe");
	free(p);
	e = NULL;
	p = write_fake("noexec", "#!/bin/sh\n", 0644);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.unsafe");
	free(p);
	e = NULL;
	p = write_fake("notroot", "#!/bin/sh\n", 0755);
	assert_int_equal(chown(p, 2001, 2001), 0);
	expect_reason(ag_docker_cli_resolve(p, &c, &e), e, "docker.cli.unsafe");
	free(p);
	e = NULL;
	/* A directory: not a regular file. */
	expect_reason(ag_docker_cli_resolve(dir, &c, &e), e, "docker.cli.unsafe");
	e = NULL;
	/* A world-writable (non-sticky) directory on the path. */
	char *sub = ag_xasprintf("%s/open", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	char *f = ag_xasprintf("%s/open/docker", dir);
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("#!/bin/sh\necho 'Docker version 1.0, build x'\n", fp);
	fclose(fp);
	assert_int_equal(chmod(f, 0755), 0);
	expect_reason(ag_docker_cli_resolve(f, &c, &e), e, "docker.cli.unsafe");
	free(f);
	free(sub);
}

static void test_real_client(void **state)
{
	(void)state;
	if (access("/usr/bin/docker", X_OK) != 0 && access("/usr/local/bin/docker", X_OK) != 0)
		skip();
	_cleanup_docker_cli_ struct ag_docker_cli c = AG_DOCKER_CLI_INIT;
	struct ag_error *e = NULL;
	int rc = ag_docker_cli_resolve(NULL, &c, &e);
	if (rc < 0)
		fail_msg("resolve: %s [%s]", e->msg, e->reason);
	assert_true(c.path[0] == '/');
	assert_true(c.version[0] >= '0' && c.version[0] <= '9');

	/* The environment of a docker call is exactly ag_docker_env: check
	 * it by running /usr/bin/env through the helper's own path. */
	struct ag_docker_cli envcli = {.path = (char *)"/usr/bin/env"};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	assert_int_equal(ag_docker_run(&envcli, NULL, 4096, 0, &r, &e), 0);
	assert_int_equal(ag_docker_check(&r, "env", &e), 0);
	assert_string_equal(r.out.buf, "DOCKER_HOST=unix:///var/run/docker.sock\n"
				       "HOME=/nonexistent\n"
				       "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n");
	ag_proc_result_release(&r);
}

static void test_check_mapping(void **state)
{
	(void)state;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	r.status = AG_PROC_EXITED;
	assert_int_equal(ag_docker_check(&r, "x", &e), 0);
	r.exit_code = 1;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.exit");
	e = NULL;
	r.exit_code = 0;
	r.stdout_truncated = true;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.truncated");
	e = NULL;
	r.status = AG_PROC_SIGNALED;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.truncated");
	e = NULL;
	r.stdout_truncated = false;
	r.term_signal = 9;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.signaled");
	e = NULL;
	r.status = AG_PROC_TIMED_OUT;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.timeout");
	e = NULL;
	r.status = AG_PROC_FAILED_TO_START;
	r.start_errno = ENOENT;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.failed_to_start");
	e = NULL;
	r.cancelled = true;
	expect_reason(ag_docker_check(&r, "x", &e), e, "docker.call.cancelled");

	/* Unbounded calls are refused. */
	struct ag_docker_cli c = {.path = (char *)"/bin/true"};
	struct ag_proc_spec tmpl = {.stdout_max = 10};
	e = NULL;
	expect_reason(ag_docker_run_ex(&c, NULL, &tmpl, &r, &e), e, "docker.run.unbounded");
	ag_proc_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_absolute),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_fake_ok_and_version),
		cmocka_unit_test(test_fake_bad_version),
		cmocka_unit_test(test_unsafe),
		cmocka_unit_test(test_real_client),
		cmocka_unit_test(test_check_mapping),
	};
	return cmocka_run_group_tests_name("docker_cli", tests, setup, teardown);
}
