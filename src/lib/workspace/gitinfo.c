#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/workspace/gitinfo.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static const char *R_GIT = "workspace.git_failed";

const char *ag_ws_source_kind_name(enum ag_ws_source_kind k)
{
	switch (k) {
	case AG_WS_SOURCE_GIT:
		return "git";
	case AG_WS_SOURCE_GIT_EMPTY:
		return "git-empty";
	case AG_WS_SOURCE_DIRECTORY:
		break;
	}
	return "directory";
}

void ag_ws_gitinfo_release(struct ag_ws_gitinfo *g)
{
	for (size_t i = 0; i < g->nstatus; i++) {
		free(g->status[i].path);
		free(g->status[i].source_path);
	}
	free(g->status);
	g->status = NULL;
	g->nstatus = 0;
}

/*
 * The small, self-contained git runner of the workspace module (a general
 * process runner lives elsewhere). argv array, no shell, environment from
 * scratch, cwd = srcfd, stdin /dev/null, only fds 0-2 inherited, own
 * process group, stdout/stderr read together with poll under a byte cap
 * and a wall-clock timeout, SIGKILL of the group and reap on any failure.
 */
struct git_run {
	int exit_status; /* -1 when killed by a signal */
	struct ag_buf out;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_git(int srcfd, const char *git, const char *const *args, unsigned timeout_ms,
		   struct git_run *res, struct ag_error **err)
{
	static const char *const envp[] = {
	    "PATH=/usr/bin:/bin",
	    "HOME=/nonexistent",
	    "GIT_CONFIG_NOSYSTEM=1",
	    "GIT_CONFIG_GLOBAL=/dev/null",
	    "GIT_TERMINAL_PROMPT=0",
	    "GIT_OPTIONAL_LOCKS=0",
	    "LC_ALL=C",
	    "GIT_ATTR_NOSYSTEM=1",
	    NULL,
	};
	const char *argv[24];
	size_t n = 0;
	argv[n++] = "git";
	argv[n++] = "--no-optional-locks";
	argv[n++] = "--no-pager";
	argv[n++] = "-c";
	argv[n++] = "core.fsmonitor=false";
	argv[n++] = "-c";
	argv[n++] = "core.untrackedCache=false";
	argv[n++] = "-c";
	argv[n++] = "core.hooksPath=/dev/null";
	argv[n++] = "-c";
	argv[n++] = "core.quotePath=false";
	for (size_t i = 0; args[i] && n < AG_ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return ag_err(err, AG_E_IO, e, R_GIT, "cannot create pipes for git");
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addfchdir_np(&fa, srcfd);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					  POSIX_SPAWN_SETPGROUP);
	pid_t pid;
	int rc = posix_spawn(&pid, git, &fa, &at, (char *const *)argv, (char *const *)envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		return ag_err(err, AG_E_IO, rc, R_GIT, "cannot run git: %s", strerror(rc));
	}
	struct ag_buf eb = AG_BUF_INIT(65536, NULL);
	int64_t deadline = now_ms() + (timeout_ms ? timeout_ms : AG_WS_GIT_TIMEOUT_MS);
	const char *fail = NULL;
	struct pollfd pf[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	char chunk[65536];
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			fail = "workspace.git_timeout";
			break;
		}
		int pr = poll(pf, 2, (int)left);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			fail = R_GIT;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			ssize_t r = read(pf[i].fd, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				continue;
			}
			struct ag_error *e2 = NULL;
			if (i == 0 && ag_buf_add(&res->out, chunk, (size_t)r, &e2) < 0) {
				ag_error_free(e2);
				fail = "limit.workspace.git_output";
			} else if (i == 1 && eb.len < 4096) {
				if (ag_buf_add(&eb, chunk, (size_t)r, &e2) < 0)
					ag_error_free(e2);
			}
		}
		if (fail)
			break;
	}
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	/* both pipes closed: the child still gets only the rest of the deadline */
	int st = 0;
	while (!fail) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fail = R_GIT;
			break;
		}
		if (now_ms() >= deadline) {
			fail = "workspace.git_timeout";
			break;
		}
		struct timespec nap = {0, 5 * 1000 * 1000};
		nanosleep(&nap, NULL);
	}
	if (fail) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	ag_buf_release(&eb); /* stderr may name host paths: never echoed */
	if (fail)
		return ag_err(err, strcmp(fail, R_GIT) ? AG_E_LIMIT : AG_E_IO, 0, fail,
			      "git did not finish within its bounds");
	res->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return 0;
}

static int git_call(int srcfd, const char *git, const char *const *args, unsigned timeout_ms,
		    int *status, struct ag_buf *out, struct ag_error **err)
{
	struct git_run r = {.exit_status = -1};
	r.out = *out;
	int rc = run_git(srcfd, git, args, timeout_ms, &r, err);
	*out = r.out;
	if (rc < 0)
		return -1;
	*status = r.exit_status;
	return 0;
}

static int status_cmp(const void *a, const void *b)
{
	const struct ag_ws_git_status *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return strcmp(x->xy, y->xy);
}

static bool is_hex_oid(const char *s, size_t n)
{
	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int ag_ws_gitinfo_collect(int srcfd, const char *git_path, unsigned timeout_ms,
			  struct ag_ws_gitinfo *g, struct ag_error **err)
{
	memset(g, 0, sizeof(*g));
	struct stat st;
	if (fstatat(srcfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0; /* a plain directory */
		return ag_err(err, AG_E_IO, errno, R_GIT, "cannot inspect the source's .git");
	}
	const char *git = git_path ? git_path : "/usr/bin/git";
	if (git[0] != '/')
		return ag_err(err, AG_E_INTERNAL, 0, R_GIT, "git must be an absolute path");
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return ag_err(err, AG_E_UNSAFE_PATH, 0, R_GIT,
			      "source .git is not a directory or file");

	_cleanup_buf_ struct ag_buf out =
	    AG_BUF_INIT(AG_WS_GIT_OUTPUT_MAX_BYTES, "limit.workspace.git_output");
	int status = -1;
	static const char *const a_top[] = {"rev-parse", "--show-prefix", NULL};
	if (git_call(srcfd, git, a_top, timeout_ms, &status, &out, err) < 0)
		return -1;
	if (status != 0 || strcmp(out.buf, "\n") != 0)
		return ag_err(err, AG_E_IO, 0, R_GIT,
			      "source is not the top of a usable Git work tree (git exit %d)",
			      status);

	ag_buf_reset(&out);
	static const char *const a_head[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}",
					     NULL};
	if (git_call(srcfd, git, a_head, timeout_ms, &status, &out, err) < 0)
		return -1;
	if (status == 0) {
		size_t l = out.len;
		if (l && out.buf[l - 1] == '\n')
			l--;
		if (!is_hex_oid(out.buf, l))
			return ag_err(err, AG_E_IO, 0, R_GIT, "git printed an invalid HEAD");
		memcpy(g->head, out.buf, l);
		g->head[l] = '\0';
		g->kind = AG_WS_SOURCE_GIT;
	} else if (status == 1 && out.len == 0) {
		g->kind = AG_WS_SOURCE_GIT_EMPTY;
	} else {
		return ag_err(err, AG_E_IO, 0, R_GIT, "git rev-parse HEAD failed (exit %d)",
			      status);
	}

	ag_buf_reset(&out);
	static const char *const a_st[] = {"status",	"--porcelain=v1",	 "-z",
					   "--ignored", "--untracked-files=all", NULL};
	if (git_call(srcfd, git, a_st, timeout_ms, &status, &out, err) < 0)
		return -1;
	if (status != 0)
		return ag_err(err, AG_E_IO, 0, R_GIT, "git status failed (exit %d)", status);
	size_t alloc = 0;
	const char *p = out.buf, *end = out.buf + out.len;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z || z - p < 4 || p[2] != ' ') {
			ag_ws_gitinfo_release(g);
			return ag_err(err, AG_E_IO, 0, R_GIT, "git status output is malformed");
		}
		if (g->nstatus >= AG_WS_GIT_STATUS_MAX_ENTRIES) {
			ag_ws_gitinfo_release(g);
			return ag_err(err, AG_E_LIMIT, 0, "limit.workspace.git_status",
				      "git status has more than %d entries",
				      AG_WS_GIT_STATUS_MAX_ENTRIES);
		}
		if (g->nstatus == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			g->status = ag_xrealloc(g->status, alloc * sizeof(*g->status));
		}
		struct ag_ws_git_status *s = &g->status[g->nstatus++];
		s->xy[0] = p[0];
		s->xy[1] = p[1];
		s->xy[2] = '\0';
		s->path = ag_xstrdup(p + 3);
		s->source_path = NULL;
		p = z + 1;
		if (s->xy[0] == 'R' || s->xy[0] == 'C' || s->xy[1] == 'R' || s->xy[1] == 'C') {
			const char *z2 = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
			if (!z2) {
				ag_ws_gitinfo_release(g);
				return ag_err(err, AG_E_IO, 0, R_GIT,
					      "git status rename entry is malformed");
			}
			s->source_path = ag_xstrdup(p);
			p = z2 + 1;
		}
	}
	if (g->nstatus)
		qsort(g->status, g->nstatus, sizeof(*g->status), status_cmp);
	return 0;
}
