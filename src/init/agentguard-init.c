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
 *     signal N ended it: what Docker reports for a PID 1 killed that way);
 *     but first, as PID 1, it kills every other process of the container
 *     (what its own exit is about to do), and when the kernel's
 *     out-of-memory killer ended any process of the container (its memory
 *     cgroup's oom_kill count, cgroup v1 or v2, is above 0) it waits
 *     AG_INIT_OOM_SETTLE_MS (never past the deadline; less only when a
 *     forwarded signal comes from outside the container: the engine
 *     stopping it). The engine learns of an OOM kill and of the
 *     container's exit by separate notices; when the exit arrives first it
 *     records OOMKilled false, and an agent that exits right after its
 *     child was OOM-killed would read as a clean exit 0. The wait lets the
 *     OOM notice land first.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AG_INIT_EXIT_DEADLINE 124
#define AG_INIT_DEADLINE_MAX 90000
/* After the kill at the deadline: how long to wait for the child to be
 * reaped before exiting anyway (SIGKILL is not ignorable: this is slack). */
#define AG_INIT_REAP_MS 2000
/* After an OOM kill: how long the container outlives its agent (above). */
#define AG_INIT_OOM_SETTLE_MS 1000
/* The cgroup files read for the OOM count are a few lines; nothing past
 * this many bytes is read (an oom_kill line past it reads as no OOM). */
#define AG_INIT_CGROUP_FILE_MAX 4096

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

/* Every process this init can see: as PID 1 every process of the container
 * (kill(-1)), else the child's session/process group. */
static void kill_rest(int pid1, pid_t child)
{
	if (pid1)
		(void)kill(-1, SIGKILL);
	(void)kill(-child, SIGKILL);
}

/*
 * The number of processes of this container the kernel's OOM killer ended:
 * the "oom_kill N" line of the container's memory cgroup (cgroup v2's
 * memory.events, else v1's memory.oom_control, each as the container sees
 * its own cgroup). 0 when neither file can be read or names no count
 * (gVisor, an engine without the memory controller): nothing to wait for.
 */
static long oom_kills(void)
{
	static const char *const files[] = {"/sys/fs/cgroup/memory.events",
					    "/sys/fs/cgroup/memory/memory.oom_control"};
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		int fd = open(files[f], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		char buf[AG_INIT_CGROUP_FILE_MAX + 1];
		size_t len = 0;
		ssize_t r;
		while (len < AG_INIT_CGROUP_FILE_MAX &&
		       ((r = read(fd, buf + len, AG_INIT_CGROUP_FILE_MAX - len)) > 0 ||
			(r < 0 && errno == EINTR)))
			if (r > 0)
				len += (size_t)r;
		close(fd);
		buf[len] = '\0';
		for (const char *l = buf; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			if (strncmp(l, "oom_kill ", 9) != 0)
				continue;
			long v = 0;
			for (const char *d = l + 9; *d >= '0' && *d <= '9' && v < 1000000; d++)
				v = v * 10 + (*d - '0');
			return v;
		}
	}
	return 0;
}

/*
 * Waits (reaping) until `until`, or until a forwarded signal sent from
 * outside the container's PID namespace (si_pid 0: the engine stopping it)
 * arrives. A signal the agent queued before it died (its processes could
 * still signal PID 1) does not cut the wait short.
 */
static void settle(const sigset_t *set, long long until)
{
	for (long long left; (left = until - now_ms()) > 0;) {
		struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000L};
		siginfo_t si;
		int sig = sigtimedwait(set, &si, &ts);
		if (sig == SIGCHLD) {
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			continue;
		}
		if (sig > 0 && si.si_pid != 0)
			continue;
		if (sig > 0 || errno != EINTR)
			return;
	}
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
		if (reap(child, &child_status)) {
			/* As PID 1, what its own exit is about to do anyway, done
			 * first: the count is read with the agent's memory freed,
			 * and nothing of the agent runs on while the init waits. */
			if (pid1)
				kill_rest(pid1, child);
			if (oom_kills() > 0) {
				if (!pid1)
					kill_rest(pid1, child);
				long long until = now_ms() + AG_INIT_OOM_SETTLE_MS;
				settle(&set, until < deadline ? until : deadline);
			}
			return status_code(child_status);
		}
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
	kill_rest(pid1, child);
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
