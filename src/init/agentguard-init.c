/*
 * agentguard-init: the agent container's entrypoint, so the agent's
 * deadline holds even when AgentGuard itself is gone (SIGKILLed, the host
 * session lost). A static binary (musl), bind-mounted read-only into the
 * agent's container like the preflight probe, so it needs nothing from the
 * image.
 *
 *   agentguard-init SECONDS -- ARGV...
 *
 * SECONDS (1..90000) is the deadline, counted on CLOCK_MONOTONIC from the
 * init's own start; AgentGuard sets it (never the environment, which the
 * child receives unchanged: the init adds and removes nothing). ARGV runs
 * exactly as the child, with execvp semantics (a name without '/' is looked
 * up in the container's PATH, as Docker does for an entrypoint), in a
 * session of its own. The init
 *   - forwards SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH
 *     and SIGCONT to the child;
 *   - reaps every process that ends up as its child (it is PID 1 of the
 *     container, or else a subreaper);
 *   - at the deadline kills every process it can see (as PID 1: kill(-1),
 *     every process of the container; else the child's session/process
 *     group), reaps them, and exits AG_INIT_EXIT_DEADLINE (124) after
 *     writing one line, "agentguard-init: deadline of N s reached; every
 *     process was killed", to stderr;
 *   - else exits with the child's status (exit code N, or 128+N when a
 *     signal N ended it: what Docker reports for a PID 1 killed that way).
 * When ARGV cannot be executed the init writes one line to stderr,
 * "agentguard-init: exec failed: not found" (or "not executable", or
 * "failed") and exits 127 (not found) or 126 (any other exec error): the
 * statuses Docker's own launcher uses for the same failures. A usage error
 * is exit 125 with one line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AG_INIT_EXIT_DEADLINE 124
#define AG_INIT_DEADLINE_MAX 90000
/* After the kill at the deadline: how long to wait for the child to be
 * reaped before exiting anyway (SIGKILL is not ignorable: this is slack). */
#define AG_INIT_REAP_MS 2000

static const int forwarded[] = {SIGHUP,	 SIGINT,  SIGQUIT,  SIGTERM,
				SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

static void say(const char *msg)
{
	size_t n = strlen(msg);
	while (n) {
		ssize_t w = write(STDERR_FILENO, msg, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		msg += w;
		n -= (size_t)w;
	}
}

static int usage(void)
{
	say("agentguard-init: usage: agentguard-init SECONDS -- ARGV...\n");
	return 125;
}

static long parse_seconds(const char *s)
{
	long v = 0;
	if (!s[0] || strlen(s) > 6)
		return -1;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		v = v * 10 + (*c - '0');
	}
	return v >= 1 && v <= AG_INIT_DEADLINE_MAX ? v : -1;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 125;
}

/* Reaps every child that has ended; returns true once `child` is among them. */
static int reap(pid_t child, int *child_status)
{
	int done = 0, st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == child) {
			*child_status = st;
			done = 1;
		}
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0 || !argv[3][0])
		return usage();
	long seconds = parse_seconds(argv[1]);
	if (seconds < 0)
		return usage();
	long long deadline = now_ms() + seconds * 1000LL;
	/* Not dumpable: the agent runs as the same uid and must not ptrace the
	 * init or write its memory (/proc/1/mem) to move the deadline. The
	 * child's own execve makes it dumpable again, so the agent is unchanged. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		say("agentguard-init: cannot protect the deadline (not dumpable)\n");
		return 125;
	}
	int pid1 = getpid() == 1;
	if (!pid1)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	/* Every signal the init acts on is taken synchronously (sigtimedwait). */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &old);

	/* The child reports a failed exec through a close-on-exec pipe. */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0) {
		say("agentguard-init: exec failed: failed\n");
		return 126;
	}
	pid_t child = fork();
	if (child < 0) {
		say("agentguard-init: exec failed: failed\n");
		return 126;
	}
	if (child == 0) {
		close(ep[0]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		(void)setsid();
		execvp(argv[3], argv + 3);
		int e = errno;
		ssize_t w = write(ep[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(ep[1]);
	int exec_errno = 0;
	ssize_t r;
	do
		r = read(ep[0], &exec_errno, sizeof(exec_errno));
	while (r < 0 && errno == EINTR);
	close(ep[0]);
	int child_status = 0;
	if (r == (ssize_t)sizeof(exec_errno)) {
		while (waitpid(child, &child_status, 0) < 0 && errno == EINTR)
			;
		if (exec_errno == ENOENT || exec_errno == ENOTDIR) {
			say("agentguard-init: exec failed: not found\n");
			return 127;
		}
		say(exec_errno == EACCES ? "agentguard-init: exec failed: not executable\n"
					 : "agentguard-init: exec failed: failed\n");
		return 126;
	}

	for (;;) {
		if (reap(child, &child_status))
			return status_code(child_status);
		long long left = deadline - now_ms();
		if (left <= 0)
			break;
		struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000L};
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &ts);
		if (sig < 0 || sig == SIGCHLD)
			continue;
		(void)kill(child, sig);
	}

	/* The deadline: everything this init can see goes. */
	if (pid1)
		(void)kill(-1, SIGKILL);
	(void)kill(-child, SIGKILL);
	(void)kill(child, SIGKILL);
	long long until = now_ms() + AG_INIT_REAP_MS;
	while (!reap(child, &child_status) && now_ms() < until) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
		siginfo_t si;
		(void)sigtimedwait(&set, &si, &ts);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	char line[96];
	snprintf(line, sizeof(line),
		 "agentguard-init: deadline of %ld s reached; every process was killed\n", seconds);
	say(line);
	return AG_INIT_EXIT_DEADLINE;
}
