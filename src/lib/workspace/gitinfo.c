#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/proc.h"
#include "lib/workspace/gitinfo.h"

#define GIT_DEPRECATE_HARD
#include <git2.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static const char *R_GIT = "workspace.git_failed";

const char *ag_ws_source_kind_name(enum ag_ws_source_kind k)
{
	switch (k) {
	case AG_WS_SOURCE_GIT:
		return "git";
	case AG_WS_SOURCE_GIT_EMPTY:
		return "git-empty";
	case AG_WS_SOURCE_DIRECTORY:
	case AG_WS_SOURCE__COUNT:
		break;
	}
	return "directory";
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
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
	free_strs(g->tracked, g->ntracked);
	free_strs(g->untracked, g->nuntracked);
	free_strs(g->subtrees, g->nsubtrees);
	g->tracked = g->untracked = g->subtrees = NULL;
	g->ntracked = g->nuntracked = g->nsubtrees = 0;
}

/* ------------------------------------------------------------ the sandbox */

#if defined(__x86_64__)
#define AG_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AG_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define AG_AUDIT_ARCH AUDIT_ARCH_I386
#else
#error "ag_ws_git_forbid_exec: add this architecture's AUDIT_ARCH"
#endif

int ag_ws_git_forbid_exec(void)
{
	struct sock_filter f[] = {
		/* another ABI than ours (e.g. i386 on x86_64): refuse everything */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AG_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
		/* x32 system calls (the same numbers with bit 30 set) */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 2, 0),
#else
		BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = (unsigned short)AG_ARRAY_SIZE(f), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* ------------------------------------------------------ the reader's side */

/*
 * The reader is a separate image: AgentGuard's own executable (opened once
 * by ag_ws_git_reader_enable, while the program is still single-threaded),
 * started by the process runner (proc.h: posix_spawn, in glibc
 * clone(CLONE_VM|CLONE_VFORK) + exec, safe in a multithreaded process) with
 * an argv that its main() hands to ag_ws_git_reader_main. Nothing of the parent's heap, locks or
 * threads is inherited, so a lock another thread held at the spawn (malloc arenas, the sanitizer
 * allocator, libcurl, OpenSSL) cannot stall it.
 *
 * Records the reader writes on fd 1, each NUL-terminated:
 *   H<hex oid> | U (unborn HEAD)
 *   S<XY> <path>   (porcelain v1 entry), then R<original path> for renames
 *   T<path>        tracked path (index)
 *   N<path>        untracked file that no ignore rule matches (a nested
 *                  repository is one "dir/" entry)
 *   G<path>        a gitlink (submodule) in the index
 * Exit status: 0 done; READER_NOT_TOP the repository's work tree is not
 * the source root; anything else a failure.
 */
#define READER_NOT_TOP 3
#define READER_FAILED 4

static int reader_exe_fd = -1;

int ag_ws_git_reader_enable(void)
{
	if (reader_exe_fd >= 0)
		return 0;
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* >= 4: the spawn's actions that target fds 0-3 never overwrite it */
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 4);
	if (hi < 0)
		return -1;
	reader_exe_fd = hi;
	return 0;
}

struct out {
	int fd;
	bool failed; /* a write failed or a record was too long: the reader fails */
	char buf[65536];
	size_t len;
};

static void out_flush(struct out *o)
{
	size_t off = 0;
	while (!o->failed && off < o->len) {
		ssize_t w = write(o->fd, o->buf + off, o->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->failed = true;
		else
			off += (size_t)w;
	}
	o->len = 0;
}

static void out_rec(struct out *o, char tag, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	if (la + lb + 2 > sizeof(o->buf)) {
		o->failed = true; /* longer than any path libgit2 accepts */
		return;
	}
	if (o->len + la + lb + 2 > sizeof(o->buf))
		out_flush(o);
	if (o->failed)
		return;
	o->buf[o->len++] = tag;
	memcpy(o->buf + o->len, a, la);
	o->len += la;
	if (lb)
		memcpy(o->buf + o->len, b, lb);
	o->len += lb;
	o->buf[o->len++] = '\0';
}

static char x_of(unsigned s)
{
	if (s & GIT_STATUS_INDEX_NEW)
		return 'A';
	if (s & GIT_STATUS_INDEX_MODIFIED)
		return 'M';
	if (s & GIT_STATUS_INDEX_DELETED)
		return 'D';
	if (s & GIT_STATUS_INDEX_RENAMED)
		return 'R';
	if (s & GIT_STATUS_INDEX_TYPECHANGE)
		return 'T';
	return ' ';
}

static char y_of(unsigned s)
{
	if (s & GIT_STATUS_WT_MODIFIED)
		return 'M';
	if (s & GIT_STATUS_WT_DELETED)
		return 'D';
	if (s & GIT_STATUS_WT_TYPECHANGE)
		return 'T';
	if (s & GIT_STATUS_WT_RENAMED)
		return 'R';
	return ' ';
}

/* git's short-format code of an unmerged path, from its conflict stages. */
static void conflict_xy(git_index *idx, const char *path, char xy[3])
{
	const git_index_entry *a = NULL, *o = NULL, *t = NULL;
	if (git_index_conflict_get(&a, &o, &t, idx, path) < 0) {
		memcpy(xy, "UU", 3);
		return;
	}
	static const char *const codes[8] = {
	    /* ancestor, ours, theirs present */
	    "UU", /* none: cannot happen */
	    "UA", /* theirs only: added by them */
	    "AU", /* ours only: added by us */
	    "AA", /* ours + theirs: both added */
	    "DD", /* ancestor only: both deleted */
	    "DU", /* ancestor + theirs: deleted by us */
	    "UD", /* ancestor + ours: deleted by them */
	    "UU", /* all three: both modified */
	};
	memcpy(xy, codes[(a ? 4 : 0) | (o ? 2 : 0) | (t ? 1 : 0)], 3);
}

/* as_status: porcelain records (ignored files listed one by one); else
 * only the untracked-not-ignored files as N records (ignored dirs not entered). */
static int reader_status(git_repository *repo, git_index *idx, struct out *o, bool as_status,
			 bool recurse_ignored)
{
	git_status_options so;
	if (git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION) < 0)
		return -1;
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	/* git status --porcelain=v1 --untracked-files=all --ignored; never
	 * GIT_STATUS_OPT_UPDATE_INDEX: nothing is written to the repository */
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_SORT_CASE_SENSITIVELY | GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
	if (as_status)
		so.flags |= GIT_STATUS_OPT_INCLUDE_IGNORED | GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX |
			    (recurse_ignored ? GIT_STATUS_OPT_RECURSE_IGNORED_DIRS : 0);
	else
		so.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
	git_status_list *sl = NULL;
	if (git_status_list_new(&sl, repo, &so) < 0)
		return -1;
	int rc = 0;
	size_t n = git_status_list_entrycount(sl);
	for (size_t i = 0; i < n && rc == 0 && !o->failed; i++) {
		const git_status_entry *e = git_status_byindex(sl, i);
		unsigned s = e->status;
		const git_diff_delta *hi = e->head_to_index, *iw = e->index_to_workdir;
		const char *path = hi ? hi->new_file.path : iw ? iw->old_file.path : NULL;
		if (!path)
			continue;
		if (!as_status) {
			if ((s & GIT_STATUS_WT_NEW) && !(s & GIT_STATUS_IGNORED))
				out_rec(o, 'N', path, NULL);
			continue;
		}
		char xy[3] = "  ";
		if (s & GIT_STATUS_IGNORED) {
			memcpy(xy, "!!", 3);
		} else if (s & GIT_STATUS_WT_NEW) {
			memcpy(xy, "??", 3);
		} else if (s & GIT_STATUS_CONFLICTED) {
			conflict_xy(idx, path, xy);
		} else {
			xy[0] = x_of(s);
			xy[1] = y_of(s);
			if (xy[0] == ' ' && xy[1] == ' ')
				continue;
		}
		char head[4] = {xy[0], xy[1], ' ', '\0'};
		out_rec(o, 'S', head, path);
		if (xy[0] == 'R' && hi && strcmp(hi->old_file.path, path))
			out_rec(o, 'R', hi->old_file.path, NULL);
		else if (xy[0] == 'R')
			rc = -1;
	}
	git_status_list_free(sl);
	return rc;
}

static void reader_paths(git_index *idx, struct out *o)
{
	size_t n = git_index_entrycount(idx);
	const char *last = NULL;
	for (size_t i = 0; i < n && !o->failed; i++) {
		const git_index_entry *e = git_index_get_byindex(idx, i);
		if (!e || (last && !strcmp(last, e->path)))
			continue; /* conflict stages repeat a path */
		out_rec(o, e->mode == GIT_FILEMODE_COMMIT ? 'G' : 'T', e->path, NULL);
		last = e->path;
	}
}

static int reader_options(void)
{
	/* No configuration, attributes or excludes from outside the repository:
	 * the system, XDG, global and programdata levels search nowhere. */
	static const int levels[] = {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
				     GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA};
	for (size_t i = 0; i < AG_ARRAY_SIZE(levels); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "") < 0)
			return -1;
	/* Ownership validation protects git users from a foreign repository's
	 * configured programs; nothing here can run one, and a CI checkout is
	 * often owned by another uid. */
	return git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0 ? -1 : 0;
}

static int reader_head(git_repository *repo, struct out *o)
{
	git_reference *ref = NULL;
	int rc = git_repository_head(&ref, repo);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
		out_rec(o, 'U', "", NULL);
		return 0;
	}
	if (rc < 0)
		return -1;
	git_object *c = NULL;
	rc = git_reference_peel(&c, ref, GIT_OBJECT_COMMIT);
	if (rc == 0) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), git_object_id(c));
		out_rec(o, 'H', hex, NULL);
		git_object_free(c);
	}
	git_reference_free(ref);
	return rc < 0 ? -1 : 0;
}

/* Reads the repository of the work tree at the current directory. */
static int reader_read(unsigned what, struct out *o)
{
	_cleanup_free_ char *top = realpath(".", NULL);
	if (!top)
		return READER_FAILED;
	_cleanup_free_ char *dotgit = NULL;
	if (asprintf(&dotgit, "%s/.git", top) < 0) {
		dotgit = NULL;
		return READER_FAILED;
	}
	if (git_libgit2_init() < 0)
		return READER_FAILED;
	int st = READER_FAILED;
	git_repository *repo = NULL;
	git_index *idx = NULL;
	if (reader_options() < 0)
		goto out;
	/* exactly <source>/.git (a directory, or a gitdir: file): no search
	 * upwards, no fallback to the source itself as a bare repository, and
	 * the environment (GIT_DIR, GIT_WORK_TREE...) is never consulted (nor
	 * passed: the reader's environment is empty) */
	if (git_repository_open_ext(&repo, dotgit,
				    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT,
				    NULL) < 0)
		goto out;
	const char *wd = git_repository_workdir(repo);
	size_t lt = strlen(top), lw = wd ? strlen(wd) : 0;
	if (git_repository_is_bare(repo) || !wd || lw != lt + 1 || strncmp(wd, top, lt) ||
	    wd[lt] != '/') {
		st = READER_NOT_TOP;
		goto out;
	}
	if (reader_head(repo, o) < 0 || git_repository_index(&idx, repo) < 0)
		goto out;
	if ((what & AG_WS_GIT_STATUS) && reader_status(repo, idx, o, true, true) < 0)
		goto out;
	if ((what & AG_WS_GIT_STATUS_COLLAPSED) && !(what & AG_WS_GIT_STATUS) &&
	    reader_status(repo, idx, o, true, false) < 0)
		goto out;
	if (what & AG_WS_GIT_PATHS) {
		reader_paths(idx, o);
		if (reader_status(repo, idx, o, false, false) < 0)
			goto out;
	}
	out_flush(o);
	st = o->failed ? READER_FAILED : 0;
out:
	git_index_free(idx);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return st;
}

/* A decimal argument without sign, spaces or overflow. */
static bool parse_ulong(const char *s, unsigned long max, unsigned long *v)
{
	if (!s || *s < '0' || *s > '9' || strlen(s) > 19)
		return false;
	char *end = NULL;
	errno = 0;
	unsigned long r = strtoul(s, &end, 10);
	if (errno || *end || r > max)
		return false;
	*v = r;
	return true;
}

int ag_ws_git_reader_main(int argc, char **argv)
{
	/* fd 3 is the image the spawn executed; nothing beyond 0-2 is needed */
	(void)close_range(3, ~0U, 0);
	unsigned long what = 0, parent = 0;
	const unsigned long known = AG_WS_GIT_STATUS | AG_WS_GIT_PATHS | AG_WS_GIT_STATUS_COLLAPSED;
	if (argc != 4 || strcmp(argv[1], AG_WS_GIT_READER_ARG) ||
	    !parse_ulong(argv[2], known, &what) || !what || (what & ~known) ||
	    !parse_ulong(argv[3], (unsigned long)INT32_MAX, &parent))
		return READER_FAILED;
	/* The sandbox first: from here on, nothing can execute a program. */
	if (ag_ws_git_forbid_exec() < 0)
		return READER_FAILED;
	/* The reader dies with AgentGuard (and a parent that died before this
	 * line is noticed: the reader was reparented). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t)parent)
		return READER_FAILED;
	static struct out o = {.fd = 1};
	return reader_read((unsigned)what, &o);
}

/* ------------------------------------------------------ the parent's side */

/*
 * Runs the reader with the process runner (proc.h): argv only, an empty
 * environment, the image opened by ag_ws_git_reader_enable as fd 3, the
 * source directory as its working directory, every other fd closed, its
 * own process group killed and reaped whatever happens. Its records
 * (r->out) are read under the output cap and the deadline. *status is its
 * exit status (-1 when killed by a signal).
 */
static int run_child(int srcfd, unsigned what, unsigned timeout_ms, struct ag_proc_result *r,
		     int *status, struct ag_error **err)
{
	if (reader_exe_fd < 0)
		return ag_err(err, AG_E_INTERNAL, 0, R_GIT,
			      "the git reader is not available in this program");
	char what_s[16], parent_s[24];
	snprintf(what_s, sizeof(what_s), "%u", what);
	snprintf(parent_s, sizeof(parent_s), "%ld", (long)getpid());
	const char *const argv[] = {"agentguard-git-reader", AG_WS_GIT_READER_ARG, what_s, parent_s,
				    NULL};
	const struct ag_proc_spec spec = {
	    .argv = argv,
	    .stdout_max = AG_WS_GIT_OUTPUT_MAX_BYTES,
	    .stderr_max = AG_WS_GIT_STDERR_MAX_BYTES,
	    .cap_policy = AG_PROC_CAP_KILL,
	    .timeout_ms = timeout_ms ? timeout_ms : AG_WS_GIT_TIMEOUT_MS,
	    .kill_grace_ms = AG_WS_GIT_KILL_GRACE_MS,
	    .has_cwd_fd = true,
	    .cwd_fd = srcfd,
	    .has_exe_fd = true,
	    .exe_fd = reader_exe_fd,
	};
	struct ag_error *e = NULL;
	if (ag_proc_run(&spec, r, &e) < 0) {
		ag_error_free(e);
		return ag_err(err, AG_E_IO, 0, R_GIT, "cannot run the git reader");
	}
	if (r->status == AG_PROC_FAILED_TO_START)
		return ag_err(err, AG_E_IO, r->start_errno, R_GIT, "cannot start the git reader");
	const char *fail = r->status == AG_PROC_TIMED_OUT ? "workspace.git_timeout"
			   : r->stdout_truncated || r->stderr_truncated
			       ? "limit.workspace.git_output"
			       : NULL;
	if (fail)
		return ag_err(err, AG_E_LIMIT, 0, fail,
			      "the git reader did not finish within its bounds");
	*status = r->status == AG_PROC_EXITED ? r->exit_code : -1;
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

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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

static void push_str(char ***v, size_t *n, size_t *alloc, const char *s)
{
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*v = ag_xrealloc(*v, *alloc * sizeof(**v));
	}
	(*v)[(*n)++] = ag_xstrdup(s);
}

static int malformed(struct ag_ws_gitinfo *g, struct ag_error **err)
{
	ag_ws_gitinfo_release(g);
	return ag_err(err, AG_E_IO, 0, R_GIT, "the git reader's output is malformed");
}

static int parse_records(const char *buf, size_t len, struct ag_ws_gitinfo *g,
			 struct ag_error **err)
{
	size_t salloc = 0, talloc = 0, nalloc = 0, galloc = 0;
	bool have_head = false;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z || z == p)
			return malformed(g, err);
		size_t l = (size_t)(z - p - 1);
		const char *v = p + 1;
		switch (*p) {
		case 'H':
			if (have_head || !is_hex_oid(v, l))
				return malformed(g, err);
			memcpy(g->head, v, l);
			g->head[l] = '\0';
			g->kind = AG_WS_SOURCE_GIT;
			have_head = true;
			break;
		case 'U':
			if (have_head || l)
				return malformed(g, err);
			g->kind = AG_WS_SOURCE_GIT_EMPTY;
			have_head = true;
			break;
		case 'S':
			if (l < 4 || v[2] != ' ')
				return malformed(g, err);
			if (g->nstatus >= AG_WS_GIT_STATUS_MAX_ENTRIES) {
				ag_ws_gitinfo_release(g);
				return ag_err(err, AG_E_LIMIT, 0, "limit.workspace.git_status",
					      "git status has more than %d entries",
					      AG_WS_GIT_STATUS_MAX_ENTRIES);
			}
			if (g->nstatus == salloc) {
				salloc = salloc ? salloc * 2 : 16;
				g->status = ag_xrealloc(g->status, salloc * sizeof(*g->status));
			}
			struct ag_ws_git_status *s = &g->status[g->nstatus++];
			s->xy[0] = v[0];
			s->xy[1] = v[1];
			s->xy[2] = '\0';
			s->path = ag_xstrdup(v + 3);
			s->source_path = NULL;
			break;
		case 'R':
			if (!g->nstatus || g->status[g->nstatus - 1].source_path || !l ||
			    g->status[g->nstatus - 1].xy[0] != 'R')
				return malformed(g, err);
			g->status[g->nstatus - 1].source_path = ag_xstrdup(v);
			break;
		case 'T':
		case 'N':
		case 'G':
			if (!l)
				return malformed(g, err);
			if (g->ntracked + g->nuntracked >= AG_WS_GIT_STATUS_MAX_ENTRIES) {
				ag_ws_gitinfo_release(g);
				return ag_err(err, AG_E_LIMIT, 0, "limit.workspace.git_status",
					      "the repository lists more than %d tracked and "
					      "untracked paths",
					      AG_WS_GIT_STATUS_MAX_ENTRIES);
			}
			if (*p == 'T') {
				push_str(&g->tracked, &g->ntracked, &talloc, v);
			} else if (*p == 'G' || v[l - 1] == '/') {
				/* a submodule, or an untracked nested repository */
				_cleanup_free_ char *d =
				    ag_xstrndup(v, v[l - 1] == '/' ? l - 1 : l);
				if (!*d)
					return malformed(g, err);
				push_str(&g->subtrees, &g->nsubtrees, &galloc, d);
				if (*p == 'G')
					push_str(&g->tracked, &g->ntracked, &talloc, d);
			} else {
				push_str(&g->untracked, &g->nuntracked, &nalloc, v);
			}
			break;
		default:
			return malformed(g, err);
		}
		p = z + 1;
	}
	if (!have_head)
		return malformed(g, err);
	for (size_t i = 0; i < g->nstatus; i++)
		if (g->status[i].xy[0] == 'R' && !g->status[i].source_path)
			return malformed(g, err);
	if (g->nstatus)
		qsort(g->status, g->nstatus, sizeof(*g->status), status_cmp);
	if (g->ntracked)
		qsort(g->tracked, g->ntracked, sizeof(char *), str_cmp);
	if (g->nuntracked)
		qsort(g->untracked, g->nuntracked, sizeof(char *), str_cmp);
	if (g->nsubtrees)
		qsort(g->subtrees, g->nsubtrees, sizeof(char *), str_cmp);
	return 0;
}

int ag_ws_gitinfo_collect(int srcfd, const struct ag_ws_git_opts *opts, struct ag_ws_gitinfo *g,
			  struct ag_error **err)
{
	memset(g, 0, sizeof(*g));
	struct stat st;
	if (fstatat(srcfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0; /* a plain directory */
		return ag_err(err, AG_E_IO, errno, R_GIT, "cannot inspect the source's .git");
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return ag_err(err, AG_E_UNSAFE_PATH, 0, R_GIT,
			      "source .git is not a directory or file");
	unsigned what = opts && opts->what ? opts->what : AG_WS_GIT_STATUS;
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	int status = -1, rc = run_child(srcfd, what, opts ? opts->timeout_ms : 0, &r, &status, err);
	if (rc == 0 && status == READER_NOT_TOP)
		rc = ag_err(err, AG_E_IO, 0, R_GIT,
			    "source is not the top of a usable Git work tree");
	else if (rc == 0 && status != 0)
		rc = ag_err(err, AG_E_IO, 0, R_GIT,
			    "the repository cannot be read (git reader status %d)", status);
	if (rc == 0)
		rc = parse_records(r.out.buf, r.out.len, g, err);
	ag_proc_result_release(&r);
	return rc;
}

/* ------------------------------------------------------------ path queries */

/* First index in sorted v whose string is >= key. */
static size_t lower_bound(char *const *v, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool has_exact(char *const *v, size_t n, const char *key)
{
	size_t i = lower_bound(v, n, key);
	return i < n && !strcmp(v[i], key);
}

/* Does some entry of v start with "path/"? */
static bool has_below(char *const *v, size_t n, const char *path)
{
	size_t l = strlen(path);
	_cleanup_free_ char *pre = ag_xasprintf("%s/", path);
	size_t i = lower_bound(v, n, pre);
	return i < n && !strncmp(v[i], pre, l + 1);
}

bool ag_ws_git_is_tracked(const struct ag_ws_gitinfo *g, const char *path)
{
	return has_exact(g->tracked, g->ntracked, path);
}

enum ag_ws_git_incl ag_ws_git_included(const struct ag_ws_gitinfo *g, const char *path, bool is_dir)
{
	/* at or below a submodule or nested repository: all of it belongs */
	if (g->nsubtrees) {
		if (has_exact(g->subtrees, g->nsubtrees, path))
			return AG_WS_GIT_SUBTREE;
		for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
			_cleanup_free_ char *anc = ag_xstrndup(path, (size_t)(s - path));
			if (has_exact(g->subtrees, g->nsubtrees, anc))
				return AG_WS_GIT_SUBTREE;
		}
	}
	if (!is_dir)
		return has_exact(g->tracked, g->ntracked, path) ||
			       has_exact(g->untracked, g->nuntracked, path)
			   ? AG_WS_GIT_INCLUDED
			   : AG_WS_GIT_EXCLUDED;
	return has_below(g->tracked, g->ntracked, path) ||
		       has_below(g->untracked, g->nuntracked, path)
		   ? AG_WS_GIT_INCLUDED
		   : AG_WS_GIT_EXCLUDED;
}
