/*
 * test_proc.c: the process runner against real programs (coreutils and the
 * small sh scripts in tests/fakes/).
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/proc.h"

#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <cmocka.h>

static char fakes[PATH_MAX];

static const char *fake(const char *name)
{
	static char buf[PATH_MAX + 64];
	int n = snprintf(buf, sizeof(buf), "%s/%s", fakes, name);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	return buf;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* A spec with generous defaults: 64 KiB caps, 10 s timeout. */
static struct ag_proc_spec spec_of(const char *exe, const char *const *argv,
				   const char *const *envp)
{
	return (struct ag_proc_spec){
	    .exe = exe,
	    .argv = argv,
	    .envp = envp,
	    .stdout_max = 65536,
	    .stderr_max = 65536,
	    .timeout_ms = 10000,
	};
}

static void run_ok(const struct ag_proc_spec *s, struct ag_proc_result *r)
{
	struct ag_error *e = NULL;
	int rc = ag_proc_run(s, r, &e);
	if (rc < 0)
		fail_msg("ag_proc_run: %s [%s]", e->msg, e->reason);
	assert_null(e);
}

static void test_exit_code_and_streams(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-streams.sh"), NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.out.buf, "to-stdout\n");
	assert_string_equal(r.err.buf, "to-stderr\n");
	assert_false(r.stdout_truncated);
	assert_false(r.stderr_truncated);
	assert_false(r.cancelled);
	ag_proc_result_release(&r);
}

static void test_echo(void **state)
{
	(void)state;
	const char *argv[] = {"echo", "hello", "--help", "", "a b", NULL};
	struct ag_proc_spec s = spec_of("/bin/echo", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.out.buf, "hello --help  a b\n");
	assert_int_equal(r.err.len, 0);
	/* A second run through the same result resets it. */
	const char *argv2[] = {"true", NULL};
	s = spec_of("/bin/true", argv2, NULL);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.out.len, 0);
	ag_proc_result_release(&r);
}

static void test_signal_death(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-self-signal.sh"), "USR1", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGUSR1);
	assert_int_equal(r.out.len, 0);
	ag_proc_result_release(&r);
}

static void test_timeout_term_is_enough(void **state)
{
	(void)state;
	const char *argv[] = {"sleep", "100", NULL};
	struct ag_proc_spec s = spec_of("/bin/sleep", argv, NULL);
	s.timeout_ms = 300;
	s.kill_grace_ms = 5000;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_TIMED_OUT);
	assert_false(r.cancelled);
	/* SIGTERM sufficed: no grace wait. */
	assert_in_range(r.duration_ms, 250, 2000);
	ag_proc_result_release(&r);
}

static void test_timeout_ignoring_term_gets_killed(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-ignore-term.sh"), NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	s.timeout_ms = 300;
	s.kill_grace_ms = 400;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_TIMED_OUT);
	assert_string_equal(r.out.buf, "started\n");
	/* deadline 300 + grace 400, then SIGKILL */
	assert_in_range(r.duration_ms, 650, 3000);
	ag_proc_result_release(&r);
}

static bool proc_state_dead(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void assert_killed_soon(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		if (proc_state_dead(pid))
			return;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	fail_msg("process %d survived the run", (int)pid);
}

static void test_background_grandchild_does_not_hang(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-background.sh"), NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	s.timeout_ms = 0; /* no deadline: the orphan drain bound applies */
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_in_range(r.duration_ms, AG_PROC_ORPHAN_DRAIN_MS - 100,
			AG_PROC_ORPHAN_DRAIN_MS + 2000);
	int64_t pid = 0;
	r.out.buf[strcspn(r.out.buf, "\n")] = '\0';
	assert_int_equal(ag_parse_i64(r.out.buf, &pid), 0);
	assert_killed_soon((pid_t)pid);
	ag_proc_result_release(&r);

	/* With a deadline sooner than the drain bound, the deadline wins. */
	s.timeout_ms = 600;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED); /* the child itself finished in time */
	assert_in_range(r.duration_ms, 500, 2000);
	r.out.buf[strcspn(r.out.buf, "\n")] = '\0';
	assert_int_equal(ag_parse_i64(r.out.buf, &pid), 0);
	assert_killed_soon((pid_t)pid);
	ag_proc_result_release(&r);
}

static void test_background_quiet_grandchild_is_killed(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-background-quiet.sh"), NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_true(r.duration_ms < 1000);
	int64_t pid = 0;
	r.out.buf[strcspn(r.out.buf, "\n")] = '\0';
	assert_int_equal(ag_parse_i64(r.out.buf, &pid), 0);
	assert_killed_soon((pid_t)pid);
	ag_proc_result_release(&r);
}

static void test_flood_truncate(void **state)
{
	(void)state;
	/* 300000 bytes, cap 1000: kept 1000, rest drained, normal exit. */
	const char *argv[] = {"sh", fake("proc-finite-flood.sh"), "300000", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	s.stdout_max = 1000;
	s.cap_policy = AG_PROC_CAP_TRUNCATE;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out.len, 1000);
	assert_int_equal(strlen(r.out.buf), 1000);
	assert_memory_equal(r.out.buf, "y\ny\ny\n", 6);
	assert_true(r.stdout_truncated);
	assert_false(r.stderr_truncated);
	ag_proc_result_release(&r);

	/* Exactly at the cap is not truncated. */
	const char *argv2[] = {"sh", fake("proc-finite-flood.sh"), "1000", NULL};
	s.argv = argv2;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.out.len, 1000);
	assert_false(r.stdout_truncated);
	ag_proc_result_release(&r);

	/* stderr has its own cap. */
	const char *argv3[] = {"sh", fake("proc-finite-flood.sh"), "5000", "err", NULL};
	s.argv = argv3;
	s.stderr_max = 100;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.out.len, 0);
	assert_int_equal(r.err.len, 100);
	assert_true(r.stderr_truncated);
	assert_false(r.stdout_truncated);
	ag_proc_result_release(&r);
}

static void test_flood_truncate_endless_hits_deadline(void **state)
{
	(void)state;
	const char *argv[] = {"yes", NULL};
	struct ag_proc_spec s = spec_of("/usr/bin/yes", argv, NULL);
	s.stdout_max = 4096;
	s.timeout_ms = 400;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_TIMED_OUT);
	assert_int_equal(r.out.len, 4096);
	assert_true(r.stdout_truncated);
	ag_proc_result_release(&r);
}

static void test_flood_kill(void **state)
{
	(void)state;
	const char *argv[] = {"yes", NULL};
	struct ag_proc_spec s = spec_of("/usr/bin/yes", argv, NULL);
	s.stdout_max = 1000;
	s.cap_policy = AG_PROC_CAP_KILL;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_int_equal(r.out.len, 1000);
	assert_true(r.stdout_truncated);
	assert_true(r.duration_ms < 2000);
	ag_proc_result_release(&r);

	const char *argv2[] = {"sh", fake("proc-stderr-flood.sh"), NULL};
	s = spec_of("/bin/sh", argv2, NULL);
	s.stderr_max = 10;
	s.cap_policy = AG_PROC_CAP_KILL;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_int_equal(r.err.len, 10);
	assert_string_equal(r.err.buf, "y\ny\ny\ny\ny\n");
	assert_true(r.stderr_truncated);
	assert_false(r.stdout_truncated);
	ag_proc_result_release(&r);
}

static void test_env_is_exact(void **state)
{
	(void)state;
	const char *argv[] = {"env", NULL};
	const char *envp[] = {"A=1", NULL};
	struct ag_proc_spec s = spec_of("/usr/bin/env", argv, envp);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_string_equal(r.out.buf, "A=1\n");
	ag_proc_result_release(&r);

	s.envp = NULL; /* empty, not inherited */
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_string_equal(r.out.buf, "");
	ag_proc_result_release(&r);
}

static void test_stdin_is_dev_null(void **state)
{
	(void)state;
	const char *argv[] = {"cat", NULL};
	struct ag_proc_spec s = spec_of("/bin/cat", argv, NULL);
	s.timeout_ms = 3000;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out.len, 0);
	assert_true(r.duration_ms < 1000);
	ag_proc_result_release(&r);

	const char *argv2[] = {"ls", "-l", "/proc/self/fd/0", NULL};
	s = spec_of("/bin/ls", argv2, NULL);
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_non_null(strstr(r.out.buf, "-> /dev/null"));
	ag_proc_result_release(&r);
}

static void test_only_stdio_fds_inherited(void **state)
{
	(void)state;
	/* A non-CLOEXEC fd in the parent must not reach the child. */
	int leak = open("/dev/null", O_RDONLY);
	assert_true(leak > 2);
	const char *argv[] = {"ls", "-1", "/proc/self/fd", NULL};
	struct ag_proc_spec s = spec_of("/bin/ls", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	close(leak);
	assert_int_equal(r.status, AG_PROC_EXITED);
	/* 0, 1, 2 and the directory fd ls opened for the listing (3). */
	assert_string_equal(r.out.buf, "0\n1\n2\n3\n");
	ag_proc_result_release(&r);
}

static void test_no_fd_leak(void **state)
{
	(void)state;
	int before = count_fds();
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;

	const char *a1[] = {"echo", "x", NULL};
	struct ag_proc_spec s = spec_of("/bin/echo", a1, NULL);
	assert_int_equal(ag_proc_run(&s, &r, &e), 0);
	const char *a2[] = {"missing", NULL};
	s = spec_of("/nonexistent/agentguard-missing", a2, NULL);
	assert_int_equal(ag_proc_run(&s, &r, &e), 0);
	const char *a3[] = {"sleep", "10", NULL};
	s = spec_of("/bin/sleep", a3, NULL);
	s.timeout_ms = 50;
	assert_int_equal(ag_proc_run(&s, &r, &e), 0);
	const char *a4[] = {"yes", NULL};
	s = spec_of("/usr/bin/yes", a4, NULL);
	s.stdout_max = 10;
	s.cap_policy = AG_PROC_CAP_KILL;
	assert_int_equal(ag_proc_run(&s, &r, &e), 0);
	s.exe = "relative/yes";
	assert_int_equal(ag_proc_run(&s, &r, &e), -1);
	ag_error_free(e);
	ag_proc_result_release(&r);
	assert_int_equal(count_fds(), before);
}

static void test_not_absolute_rejected(void **state)
{
	(void)state;
	const char *argv[] = {"echo", NULL};
	struct ag_proc_spec s = spec_of("echo", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	assert_int_equal(ag_proc_run(&s, &r, &e), -1);
	assert_non_null(e);
	assert_int_equal(e->code, AG_E_INTERNAL);
	assert_string_equal(e->reason, "proc.exe.not_absolute");
	ag_error_free(e);
	e = NULL;
	s.exe = NULL;
	assert_int_equal(ag_proc_run(&s, &r, &e), -1);
	assert_string_equal(e->reason, "proc.exe.not_absolute");
	ag_error_free(e);
	e = NULL;
	const char *empty[] = {NULL};
	s = spec_of("/bin/echo", empty, NULL);
	assert_int_equal(ag_proc_run(&s, &r, &e), -1);
	assert_string_equal(e->reason, "proc.argv.empty");
	ag_error_free(e);
	ag_proc_result_release(&r);
}

static void test_missing_exe_failed_to_start(void **state)
{
	(void)state;
	const char *argv[] = {"missing", NULL};
	struct ag_proc_spec s = spec_of("/nonexistent/agentguard-missing", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_FAILED_TO_START);
	assert_int_equal(r.start_errno, ENOENT);
	ag_proc_result_release(&r);

	/* No execute bit (mode 0600, even for root): EACCES. */
	char tmpl[] = "/tmp/ag-test-proc.XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	close(fd);
	s.exe = tmpl;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	unlink(tmpl);
	assert_int_equal(r.status, AG_PROC_FAILED_TO_START);
	assert_int_equal(r.start_errno, EACCES);
	ag_proc_result_release(&r);

	/* Executable but no valid format: only execve itself can tell
	 * (posix_spawn's own report; valgrind's fork emulation cannot). */
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "vgpreload"))
		return;
	char tmpl2[] = "/tmp/ag-test-proc.XXXXXX";
	fd = mkstemp(tmpl2);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x01\x02garbage\n", 10), 10);
	close(fd);
	assert_int_equal(chmod(tmpl2, 0700), 0);
	s.exe = tmpl2;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	unlink(tmpl2);
	assert_int_equal(r.status, AG_PROC_FAILED_TO_START);
	assert_int_equal(r.start_errno, ENOEXEC);
	ag_proc_result_release(&r);
}

struct cancel_state {
	int calls;
	int cancel_at;
	pid_t spawned;
};

static bool cancel_cb(void *data)
{
	struct cancel_state *c = data;
	return ++c->calls >= c->cancel_at;
}

static void on_spawn_cb(pid_t pid, void *data)
{
	((struct cancel_state *)data)->spawned = pid;
}

static void test_cancel(void **state)
{
	(void)state;
	struct cancel_state cs = {0, 3, 0};
	const char *argv[] = {"sleep", "100", NULL};
	struct ag_proc_spec s = spec_of("/bin/sleep", argv, NULL);
	s.timeout_ms = 0;
	s.should_cancel = cancel_cb;
	s.should_cancel_data = &cs;
	s.on_spawn = on_spawn_cb;
	s.on_spawn_data = &cs;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_true(r.cancelled);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_int_equal(cs.calls, 3);
	assert_true(cs.spawned > 0);
	/* three polls about 100 ms apart */
	assert_in_range(r.duration_ms, 150, 1500);
	ag_proc_result_release(&r);
}

static void test_duration_measured(void **state)
{
	(void)state;
	const char *argv[] = {"sleep", "0.3", NULL};
	struct ag_proc_spec s = spec_of("/bin/sleep", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_in_range(r.duration_ms, 290, 1500);
	ag_proc_result_release(&r);
}

static void test_sigpipe_ignored_in_parent_is_reset(void **state)
{
	(void)state;
	/* With SIGPIPE ignored here, the child still gets the default. */
	struct sigaction old, ign = {.sa_handler = SIG_IGN};
	sigaction(SIGPIPE, &ign, &old);
	const char *argv[] = {"sh", fake("proc-self-signal.sh"), "PIPE", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	sigaction(SIGPIPE, &old, NULL);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGPIPE);
	ag_proc_result_release(&r);
}

static void test_cwd_fd(void **state)
{
	(void)state;
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	const char *argv[] = {"ls", "-d", "self", NULL};
	struct ag_proc_spec s = spec_of("/bin/ls", argv, NULL);
	s.has_cwd_fd = true;
	s.cwd_fd = dfd;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	close(dfd);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_string_equal(r.out.buf, "self\n");
	ag_proc_result_release(&r);
}

/* Any disposition, not only the reset list: SIGUSR1 ignored here is
 * default in the child (an ignored signal survives exec otherwise). */
static void test_every_ignored_signal_is_reset(void **state)
{
	(void)state;
	struct sigaction old, ign = {.sa_handler = SIG_IGN};
	sigaction(SIGUSR1, &ign, &old);
	const char *argv[] = {"sh", fake("proc-self-signal.sh"), "USR1", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	sigaction(SIGUSR1, &old, NULL);
	assert_int_equal(r.status, AG_PROC_SIGNALED);
	assert_int_equal(r.term_signal, SIGUSR1);
	ag_proc_result_release(&r);
}

/* The program given as an open executable: it runs as fd 3 (the only fd
 * beyond stdio), in the directory given, and a low fd is refused. */
static void test_exe_fd(void **state)
{
	(void)state;
	int fd = open("/bin/ls", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	assert_true(hi >= 10);
	close(fd);
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	const char *argv[] = {"ls", "-1", "self/fd", NULL};
	struct ag_proc_spec s = spec_of("/nonexistent/ignored", argv, NULL);
	s.has_exe_fd = true;
	s.exe_fd = hi;
	s.has_cwd_fd = true;
	s.cwd_fd = dfd;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	/* 0-2, the image (3) and the directory ls opened (4) */
	assert_string_equal(r.out.buf, "0\n1\n2\n3\n4\n");
	s.exe_fd = 3;
	struct ag_error *e = NULL;
	assert_int_equal(ag_proc_run(&s, &r, &e), -1);
	assert_string_equal(e->reason, "proc.exe_fd.low");
	ag_error_free(e);
	ag_proc_result_release(&r);
	close(dfd);
	close(hi);
}

static void test_both_streams_large(void **state)
{
	(void)state;
	const char *argv[] = {"sh", fake("proc-both-flood.sh"), "1000000", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	s.stdout_max = 2000000;
	s.stderr_max = 2000000;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out.len, 1000000);
	assert_int_equal(r.err.len, 1000000);
	assert_memory_equal(r.out.buf, "out\n", 4);
	assert_memory_equal(r.err.buf, "err\n", 4);
	assert_false(r.stdout_truncated || r.stderr_truncated);
	ag_proc_result_release(&r);
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void test_eintr(void **state)
{
	(void)state;
	/* A signal every 5 ms, without SA_RESTART: every blocking call is
	 * interrupted again and again. */
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	const char *argv[] = {"sh", fake("proc-finite-flood.sh"), "300000", NULL};
	struct ag_proc_spec s = spec_of("/bin/sh", argv, NULL);
	s.stdout_max = 1000000;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	run_ok(&s, &r);
	const char *argv2[] = {"sleep", "0.2", NULL};
	struct ag_proc_spec s2 = spec_of("/bin/sleep", argv2, NULL);
	struct ag_proc_result r2;
	ag_proc_result_init(&r2);
	run_ok(&s2, &r2);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_true(alarms > 10);
	assert_int_equal(r.status, AG_PROC_EXITED);
	assert_int_equal(r.out.len, 300000);
	assert_int_equal(r2.status, AG_PROC_EXITED);
	assert_int_equal(r2.exit_code, 0);
	ag_proc_result_release(&r);
	ag_proc_result_release(&r2);
}

int main(void)
{
	const char *root = getenv("AG_ROOT");
	char *abs = realpath(root ? root : ".", NULL);
	assert_non_null(abs);
	snprintf(fakes, sizeof(fakes), "%s/tests/fakes", abs);
	free(abs);

	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_code_and_streams),
	    cmocka_unit_test(test_echo),
	    cmocka_unit_test(test_signal_death),
	    cmocka_unit_test(test_timeout_term_is_enough),
	    cmocka_unit_test(test_timeout_ignoring_term_gets_killed),
	    cmocka_unit_test(test_background_grandchild_does_not_hang),
	    cmocka_unit_test(test_background_quiet_grandchild_is_killed),
	    cmocka_unit_test(test_flood_truncate),
	    cmocka_unit_test(test_flood_truncate_endless_hits_deadline),
	    cmocka_unit_test(test_flood_kill),
	    cmocka_unit_test(test_env_is_exact),
	    cmocka_unit_test(test_stdin_is_dev_null),
	    cmocka_unit_test(test_only_stdio_fds_inherited),
	    cmocka_unit_test(test_no_fd_leak),
	    cmocka_unit_test(test_not_absolute_rejected),
	    cmocka_unit_test(test_missing_exe_failed_to_start),
	    cmocka_unit_test(test_cancel),
	    cmocka_unit_test(test_duration_measured),
	    cmocka_unit_test(test_sigpipe_ignored_in_parent_is_reset),
	    cmocka_unit_test(test_cwd_fd),
	    cmocka_unit_test(test_every_ignored_signal_is_reset),
	    cmocka_unit_test(test_exe_fd),
	    cmocka_unit_test(test_both_streams_large),
	    cmocka_unit_test(test_eintr),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
