/*
 * proc.c: the process runner (proc.h). posix_spawn with an explicit
 * environment, /dev/null stdin, only fds 0/1/2 (and 3: an executable given
 * as an fd) in the child, default signal dispositions, its own process
 * group; stdout and stderr read together with poll() under byte
 * caps and a CLOCK_MONOTONIC deadline; the group is always killed and the
 * child always reaped before returning.
 *
 * Exit of the direct child is observed with waitid(WNOWAIT) (and a pidfd
 * in the poll set when the kernel has pidfd_open), so the child stays a
 * zombie until the very end: its pid, which is also the process group id,
 * cannot be reused while the runner still sends signals to the group.
 */
#include "lib/base/ag.h"
#include "lib/base/proc.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>

void ag_proc_result_init(struct ag_proc_result *r)
{
	memset(r, 0, sizeof(*r));
	ag_buf_init(&r->out, 0, "limit.proc.stdout");
	ag_buf_init(&r->err, 0, "limit.proc.stderr");
}

void ag_proc_result_release(struct ag_proc_result *r)
{
	if (!r)
		return;
	ag_buf_release(&r->out);
	ag_buf_release(&r->err);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A close-on-exec pipe whose both ends are >= 3, so that adddup2 onto 1/2
 * in the child never meets an fd that is already its own target. */
static int pipe_high(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 3)
			continue;
		int n = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
		if (n < 0) {
			int saved = errno;
			close(p[0]);
			close(p[1]);
			errno = saved;
			return -1;
		}
		close(p[i]);
		p[i] = n;
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

struct stream {
	int fd;
	struct ag_buf *buf;
	size_t max;
	bool *truncated;
	uint64_t *total; /* every byte the stream delivered, kept or not */
};

/*
 * One read from a readable (or hung-up) pipe. Keeps at most s->max bytes;
 * returns true when this read brought bytes past the cap. EOF or a read
 * error closes the stream.
 */
static bool read_stream(struct stream *s)
{
	char chunk[AG_PROC_READ_CHUNK];
	for (;;) {
		ssize_t n = read(s->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		if (n <= 0) {
			close_fd(&s->fd);
			return false;
		}
		*s->total += (uint64_t)n;
		size_t room = s->max - s->buf->len;
		size_t keep = (size_t)n < room ? (size_t)n : room;
		if (keep) {
			struct ag_error *e = NULL;
			if (ag_buf_add(s->buf, chunk, keep, &e) < 0)
				abort(); /* cannot happen: buf->max == s->max and keep <= room */
		}
		if (keep < (size_t)n) {
			*s->truncated = true;
			return true;
		}
		return false;
	}
}

static void kill_group(pid_t pgid, int sig)
{
	/* The leader is unreaped (at worst a zombie), so pgid is still ours. */
	(void)kill(-pgid, sig);
}

/* True once the direct child has exited; does not reap it. */
static bool leader_exited(pid_t pid)
{
	siginfo_t si;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
			return si.si_pid != 0;
		if (errno != EINTR)
			return true; /* ECHILD: nothing left to wait for */
	}
}

static int reap(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, 0);
		if (r == pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int ag_proc_run(const struct ag_proc_spec *spec, struct ag_proc_result *res, struct ag_error **err)
{
	static const char *const empty_env[] = {NULL};

	ag_proc_result_release(res);
	ag_proc_result_init(res);
	res->out.max = spec->stdout_max;
	res->err.max = spec->stderr_max;

	/* the child's view of an executable handed over as fd 3 */
	const char *exe = spec->has_exe_fd ? "/proc/self/fd/3" : spec->exe;
	if (spec->has_exe_fd && spec->exe_fd < 4)
		return ag_err(err, AG_E_INTERNAL, 0, "proc.exe_fd.low",
			      "an executable fd must be >= 4");
	if (!exe || exe[0] != '/')
		return ag_err(err, AG_E_INTERNAL, 0, "proc.exe.not_absolute",
			      "program path must be absolute");
	if (!spec->argv || !spec->argv[0])
		return ag_err(err, AG_E_INTERNAL, 0, "proc.argv.empty", "argv must not be empty");

	/*
	 * glibc's posix_spawn reports exec failure itself; this early check
	 * gives the same answer where it cannot (valgrind emulates the vfork
	 * clone with a plain fork) and saves a spawn for the common cases.
	 * An executable given as an fd was opened by the caller, who checked it.
	 */
	if (!spec->has_exe_fd && faccessat(AT_FDCWD, exe, X_OK, AT_EACCESS) < 0) {
		res->status = AG_PROC_FAILED_TO_START;
		res->start_errno = errno;
		return 0;
	}

	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe_high(po) < 0)
		return ag_err(err, AG_E_IO, errno, "proc.pipe", "cannot create a pipe: %s",
			      strerror(errno));
	if (pipe_high(pe) < 0) {
		int e = errno;
		close_fd(&po[0]);
		close_fd(&po[1]);
		return ag_err(err, AG_E_IO, e, "proc.pipe", "cannot create a pipe: %s",
			      strerror(e));
	}

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		rc = posix_spawnattr_init(&at);
		if (rc != 0)
			posix_spawn_file_actions_destroy(&fa);
	}
	if (rc != 0) {
		close_fd(&po[0]);
		close_fd(&po[1]);
		close_fd(&pe[0]);
		close_fd(&pe[1]);
		return ag_err(err, AG_E_IO, rc, "proc.spawn_setup", "cannot prepare spawn: %s",
			      strerror(rc));
	}
	/* every disposition back to default (an ignored signal survives exec) */
	sigset_t none, dfl;
	sigemptyset(&none);
	sigfillset(&dfl);
	/*
	 * Setup calls on initialised objects only fail with ENOMEM/EINVAL. In
	 * this order, each action's source fd is still what the caller gave:
	 * the fchdir first (cwd_fd may be any fd), the pipes (>= 3) onto 1 and
	 * 2 before the executable (>= 4) goes onto 3.
	 */
	if (spec->has_cwd_fd)
		rc = posix_spawn_file_actions_addfchdir_np(&fa, spec->cwd_fd);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	if (rc == 0 && spec->has_exe_fd)
		rc = posix_spawn_file_actions_adddup2(&fa, spec->exe_fd, 3);
	if (rc == 0)
		rc = posix_spawn_file_actions_addclosefrom_np(&fa, spec->has_exe_fd ? 4 : 3);
	if (rc == 0)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&at, &dfl);
	if (rc == 0)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						       POSIX_SPAWN_SETSIGDEF);
	pid_t pid = -1;
	uint64_t start = now_ms();
	if (rc == 0)
		rc = posix_spawn(&pid, exe, &fa, &at, (char *const *)spec->argv,
				 (char *const *)(spec->envp ? spec->envp : empty_env));
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	if (rc != 0) {
		close_fd(&po[0]);
		close_fd(&pe[0]);
		res->status = AG_PROC_FAILED_TO_START;
		res->start_errno = rc;
		res->duration_ms = now_ms() - start;
		return 0;
	}
	if (spec->on_spawn)
		spec->on_spawn(pid, spec->on_spawn_data);

	int pidfd = pidfd_open(pid, 0); /* -1 (ENOSYS, seccomp): poll waitid instead */
	(void)fcntl(po[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(pe[0], F_SETFL, O_NONBLOCK);
	struct stream st[2] = {
	    {po[0], &res->out, spec->stdout_max, &res->stdout_truncated, &res->stdout_total},
	    {pe[0], &res->err, spec->stderr_max, &res->stderr_truncated, &res->stderr_total},
	};

	const uint64_t grace =
	    spec->kill_grace_ms ? spec->kill_grace_ms : AG_PROC_KILL_GRACE_DEFAULT_MS;
	const uint64_t deadline = spec->timeout_ms ? start + spec->timeout_ms : 0;
	bool exited = false, timed_out = false, cancelled = false;
	uint64_t exited_at = 0, term_at = 0, killed_at = 0, next_cancel = start;
	int fail_errno = 0;

	for (;;) {
		uint64_t now = now_ms();
		if (!exited && leader_exited(pid)) {
			exited = true;
			exited_at = now;
			close_fd(&pidfd);
		}
		bool pipes_open = st[0].fd >= 0 || st[1].fd >= 0;
		if (exited && !pipes_open)
			break;

		/* Cancel and deadline apply only while the direct child runs. */
		if (!exited && !term_at && spec->should_cancel && now >= next_cancel) {
			next_cancel = now + AG_PROC_POLL_MS;
			if (spec->should_cancel(spec->should_cancel_data)) {
				cancelled = true;
				term_at = now;
				kill_group(pid, SIGTERM);
			}
		}
		if (!exited && !term_at && deadline && now >= deadline) {
			timed_out = true;
			term_at = now;
			kill_group(pid, SIGTERM);
		}
		if (term_at && !killed_at && now >= term_at + grace) {
			killed_at = now;
			kill_group(pid, SIGKILL);
		}
		/* Leftover group members holding the pipes: bounded drain. */
		uint64_t drain_until = UINT64_MAX;
		if (exited && pipes_open && !killed_at) {
			drain_until = exited_at + AG_PROC_ORPHAN_DRAIN_MS;
			if (deadline)
				drain_until = min_u64(drain_until,
						      deadline > exited_at ? deadline : exited_at);
			if (term_at)
				drain_until = min_u64(drain_until, term_at + grace);
			if (now >= drain_until) {
				killed_at = now;
				kill_group(pid, SIGKILL);
			}
		}
		/* After SIGKILL only a process outside the group can hold a pipe. */
		if (killed_at && pipes_open && now >= killed_at + AG_PROC_FINAL_DRAIN_MS) {
			close_fd(&st[0].fd);
			close_fd(&st[1].fd);
			continue;
		}

		uint64_t wake = now + AG_PROC_POLL_MS;
		if (!exited && pidfd < 0 && !pipes_open)
			wake = now + 5; /* no pidfd: poll waitid briefly */
		if (!exited && !term_at && deadline)
			wake = min_u64(wake, deadline);
		if (term_at && !killed_at)
			wake = min_u64(wake, term_at + grace);
		if (drain_until != UINT64_MAX)
			wake = min_u64(wake, drain_until);
		if (killed_at && pipes_open)
			wake = min_u64(wake, killed_at + AG_PROC_FINAL_DRAIN_MS);

		struct pollfd pfd[3];
		nfds_t npfd = 0;
		int idx[2] = {-1, -1};
		for (int i = 0; i < 2; i++) {
			if (st[i].fd >= 0) {
				idx[i] = (int)npfd;
				pfd[npfd++] = (struct pollfd){.fd = st[i].fd, .events = POLLIN};
			}
		}
		if (!exited && pidfd >= 0)
			pfd[npfd++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		int ms = wake > now ? (int)(wake - now) : 0;
		int n = poll(pfd, npfd, ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail_errno = errno;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (idx[i] < 0 || !pfd[idx[i]].revents)
				continue;
			bool over = read_stream(&st[i]);
			if (over && spec->cap_policy == AG_PROC_CAP_KILL && !killed_at) {
				killed_at = now_ms();
				kill_group(pid, SIGKILL);
			}
		}
	}

	/* Nothing of the run outlives it: the leader is unreaped, pgid is ours. */
	kill_group(pid, SIGKILL);
	close_fd(&pidfd);
	close_fd(&st[0].fd);
	close_fd(&st[1].fd);
	int status = 0;
	int reaped = reap(pid, &status);
	res->duration_ms = now_ms() - start;
	res->cancelled = cancelled;
	if (fail_errno)
		return ag_err(err, AG_E_IO, fail_errno, "proc.poll",
			      "cannot supervise the child process: %s", strerror(fail_errno));
	if (reaped < 0)
		return ag_err(err, AG_E_IO, errno, "proc.wait", "cannot reap the child process: %s",
			      strerror(errno));
	if (timed_out) {
		res->status = AG_PROC_TIMED_OUT;
	} else if (WIFEXITED(status)) {
		res->status = AG_PROC_EXITED;
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->status = AG_PROC_SIGNALED;
		res->term_signal = WTERMSIG(status);
	} else {
		return ag_err(err, AG_E_INTERNAL, 0, "proc.wait", "unexpected wait status 0x%x",
			      (unsigned)status);
	}
	return 0;
}
