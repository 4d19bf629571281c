/*
 * ag_process_alive: what `agentguard cleanup` asks of a run's owner. A
 * live process with the recorded start time is alive; the same pid as a
 * zombie (exited, not reaped), a wrong start time, or no process is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/run/contained_run.h"

#include <sys/wait.h>
#include <time.h>

static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void test_self_alive(void **state)
{
	(void)state;
	unsigned long long t = ag_process_start_ticks(getpid());
	assert_true(t > 0);
	assert_true(ag_process_alive(getpid(), t));
	assert_false(ag_process_alive(getpid(), t + 1)); /* a reused pid */
	assert_false(ag_process_alive(getpid(), 0));
	assert_false(ag_process_alive(0, t));
	assert_false(ag_process_alive(-1, t));
}

static void test_zombie_is_dead(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		close(pfd[1]);
		ssize_t n = read(pfd[0], &c, 1); /* wait for the parent's word (EOF) */
		_exit(n == 0 ? 0 : 1);
	}
	close(pfd[0]);
	unsigned long long t = ag_process_start_ticks(pid);
	assert_true(t > 0);
	assert_true(ag_process_alive(pid, t));
	close(pfd[1]); /* the child exits; it is not reaped yet */
	for (int i = 0; i < 500 && proc_state(pid) != 'Z'; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(proc_state(pid), 'Z');
	assert_int_equal(ag_process_start_ticks(pid), t); /* still in /proc, same start */
	assert_false(ag_process_alive(pid, t));
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_false(ag_process_alive(pid, t)); /* reaped: gone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_alive),
	    cmocka_unit_test(test_zombie_is_dead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
