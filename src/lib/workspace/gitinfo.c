#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/proc.h"
#include "lib/workspace/gitinfo.h"
#include "lib/workspace/gitbase.h"

#define GIT_DEPRECATE_HARD
#include <git2.h>
#include <git2/sys/alloc.h>
#include "lib/base/lazylib.h"
#include <linux/landlock.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static const char *R_GIT = "workspace.git_failed";

#if defined(__SANITIZE_ADDRESS__)
#define AG_WS_GIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_WS_GIT_SANITIZED 1
#endif
#endif
#ifndef AG_WS_GIT_SANITIZED
#define AG_WS_GIT_SANITIZED 0
#endif

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

/*
 * Landlock, used through its raw system calls: the installed header may be
 * older than the kernel (Debian 12's knows ABI 2; this kernel has ABI 7),
 * so the later access bits and the ruleset's later fields are spelt here.
 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define AG_LL_NET_BIND_TCP (1ULL << 0)
#define AG_LL_NET_CONNECT_TCP (1ULL << 1)
#define AG_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define AG_LL_SCOPE_SIGNAL (1ULL << 1)

struct ag_ll_ruleset_attr {
	uint64_t handled_access_fs;  /* ABI 1 */
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

/* Everything the file system offers is handled (so denied) except reading
 * files and directories beneath the working directory; TCP bind/connect and
 * abstract unix sockets and signals outside the domain are denied too where
 * the kernel knows them. -1 with errno when Landlock is unavailable. */
static int landlock_cwd_only(bool rw)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return -1;
	struct ag_ll_ruleset_attr ra = {
	    .handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
				 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
				 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
				 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
				 LANDLOCK_ACCESS_FS_MAKE_SYM,
	};
	size_t size = sizeof(ra.handled_access_fs);
	/* Landlock ABI 1 refuses every rename and link across directories,
	 * and libgit2 moves each object it writes from objects/ into
	 * objects/xx/: the writer cannot work there (its parent says so). */
	if (rw && abi < 2) {
		errno = ENOTSUP;
		return -1;
	}
	if (abi >= 2)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 4) {
		ra.handled_access_net = AG_LL_NET_BIND_TCP | AG_LL_NET_CONNECT_TCP;
		size = offsetof(struct ag_ll_ruleset_attr, scoped);
	}
	if (abi >= 5)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (abi >= 6) {
		ra.scoped = AG_LL_SCOPE_ABSTRACT_UNIX_SOCKET | AG_LL_SCOPE_SIGNAL;
		size = sizeof(ra);
	}
	_cleanup_close_ int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, size, 0);
	if (rs < 0)
		return -1;
	_cleanup_close_ int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	struct landlock_path_beneath_attr pb = {
	    .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
	    .parent_fd = dir,
	};
	/* the baseline writer: files and directories beneath the directory it
	 * writes the repository into, nothing else (no devices, sockets, links) */
	if (rw)
		pb.allowed_access |= (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR |
				      LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE |
				      LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REFER |
				      LANDLOCK_ACCESS_FS_TRUNCATE) &
				     ra.handled_access_fs;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return -1;
	return syscall(SYS_landlock_restrict_self, rs, 0) < 0 ? -1 : 0;
}

/* The system calls reading a repository needs, and nothing that creates,
 * writes, connects or executes: anything else fails with EPERM. Writes go
 * to fd 1 only (the output pipe); files open read-only; no mapping or page
 * may become executable. Another ABI (x32, i386) kills the process. */
static int seccomp_reader_only(bool rw)
{
	static const int allow[] = {
	    SCMP_SYS(read),
	    SCMP_SYS(pread64),
	    SCMP_SYS(readv),
	    SCMP_SYS(preadv),
	    SCMP_SYS(close),
	    SCMP_SYS(fstat),
	    SCMP_SYS(newfstatat),
	    SCMP_SYS(statx),
	    SCMP_SYS(stat),
	    SCMP_SYS(lstat),
	    SCMP_SYS(lseek),
	    SCMP_SYS(getdents64),
	    SCMP_SYS(readlink),
	    SCMP_SYS(readlinkat),
	    SCMP_SYS(getcwd),
	    SCMP_SYS(access),
	    SCMP_SYS(faccessat),
	    SCMP_SYS(faccessat2),
	    SCMP_SYS(fcntl),
	    SCMP_SYS(munmap),
	    SCMP_SYS(mremap),
	    SCMP_SYS(brk),
	    SCMP_SYS(madvise),
	    SCMP_SYS(futex),
	    SCMP_SYS(rt_sigaction),
	    SCMP_SYS(rt_sigprocmask),
	    SCMP_SYS(rt_sigreturn),
	    SCMP_SYS(sigaltstack),
	    SCMP_SYS(exit),
	    SCMP_SYS(exit_group),
	    SCMP_SYS(getpid),
	    SCMP_SYS(gettid),
	    SCMP_SYS(getuid),
	    SCMP_SYS(geteuid),
	    SCMP_SYS(getgid),
	    SCMP_SYS(getegid),
	    SCMP_SYS(clock_gettime),
	    SCMP_SYS(gettimeofday),
	    SCMP_SYS(getrandom),
	    SCMP_SYS(sched_yield),
	    SCMP_SYS(restart_syscall),
	};
	const uint64_t wr = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!f)
		return -1;
	int rc = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; i < AG_ARRAY_SIZE(allow) && rc == 0; i++)
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, allow[i], 0);
	/* One argument condition each; every field spelled out (clang warns on
	 * libseccomp's SCMP_Ax macros under -Wmissing-field-initializers). */
	const struct {
		int sys;
		struct scmp_arg_cmp cmp;
	} cond[] = {
	    {SCMP_SYS(write), {0, SCMP_CMP_EQ, 1, 0}},
	    {SCMP_SYS(openat), {2, SCMP_CMP_MASKED_EQ, wr, 0}},
	    {SCMP_SYS(open), {1, SCMP_CMP_MASKED_EQ, wr, 0}},
	    {SCMP_SYS(mmap), {2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0}},
	    {SCMP_SYS(mprotect), {2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0}},
	};
	/* The baseline writer also creates, writes and renames files (Landlock
	 * keeps that beneath its working directory): still no socket, no
	 * connect, no exec, nothing executable mapped. */
	/* Landlock does not govern chmod or utimes by path: only their
	 * descriptor forms are allowed (a subverted writer cannot change the
	 * mode or times of a file outside the workspace). */
	static const int allow_write[] = {
	    SCMP_SYS(write),	SCMP_SYS(pwrite64),  SCMP_SYS(writev),	  SCMP_SYS(openat),
	    SCMP_SYS(open),	SCMP_SYS(mkdir),     SCMP_SYS(mkdirat),	  SCMP_SYS(rename),
	    SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(unlink),	  SCMP_SYS(unlinkat),
	    SCMP_SYS(rmdir),	SCMP_SYS(fsync),     SCMP_SYS(fdatasync), SCMP_SYS(ftruncate),
	    SCMP_SYS(fchmod),	SCMP_SYS(umask),     SCMP_SYS(link),	  SCMP_SYS(linkat),
	};
	for (size_t i = 0; rw && i < AG_ARRAY_SIZE(allow_write) && rc == 0; i++)
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, allow_write[i], 0);
	if (rw && rc == 0) /* futimens: utimensat(fd, NULL, ...) only */
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(utimensat), 1,
				      (struct scmp_arg_cmp){1, SCMP_CMP_EQ, 0, 0});
	for (size_t i = 0; i < AG_ARRAY_SIZE(cond) && rc == 0; i++)
		if (!rw || (cond[i].sys != SCMP_SYS(write) && cond[i].sys != SCMP_SYS(openat) &&
			    cond[i].sys != SCMP_SYS(open)))
			rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, cond[i].sys, 1, cond[i].cmp);
	if (rc == 0)
		rc = seccomp_load(f); /* sets PR_SET_NO_NEW_PRIVS itself */
	seccomp_release(f);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

static int sandbox_enter(const struct ag_ws_git_limits *lim, bool rw);

int ag_ws_git_sandbox_enter(const struct ag_ws_git_limits *lim)
{
	return sandbox_enter(lim, false);
}

static int sandbox_enter(const struct ag_ws_git_limits *lim, bool rw)
{
	/* the writer hashes and compresses the whole copy: its own CPU bound */
	const struct ag_ws_git_limits def = {.as_bytes = AG_WS_GIT_AS_MAX_BYTES,
					     .cpu_seconds = rw ? AG_WS_GIT_BASELINE_CPU_MAX_S
							       : AG_WS_GIT_CPU_MAX_S};
	if (!lim)
		lim = &def;
	/* no core file: a crashing reader would write one into the source */
	const struct rlimit core = {0, 0}, cpu = {lim->cpu_seconds, lim->cpu_seconds + 1};
	if (setrlimit(RLIMIT_CORE, &core) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -1;
#if !AG_WS_GIT_SANITIZED
	/* (under ASan the shadow memory is terabytes of address space) */
	const struct rlimit as = {lim->as_bytes, lim->as_bytes};
	if (setrlimit(RLIMIT_AS, &as) < 0)
		return -1;
#endif
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_cwd_only(rw) < 0)
		return -1;
	return seccomp_reader_only(rw);
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
 * the source root; READER_OUTSIDE, READER_NOMEM, READER_NO_SANDBOX below;
 * anything else a failure.
 */
#define READER_NOT_TOP 3
#define READER_FAILED AG_WS_GIT_CHILD_FAILED
#define READER_OUTSIDE 5 /* git dir, common dir or alternates outside the source */
#define READER_NOMEM AG_WS_GIT_CHILD_NOMEM
#define READER_NO_SANDBOX AG_WS_GIT_CHILD_NO_SANDBOX

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
	if (!o->failed && ag_write_full(o->fd, o->buf, o->len) < 0)
		o->failed = true;
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

/* Is the resolved path `p` top itself or beneath it? */
static bool beneath(const char *top, const char *p)
{
	size_t l = strlen(top);
	return p && !strncmp(p, top, l) && (p[l] == '/' || p[l] == '\0');
}

/* The resolved path of rel (absolute, or relative to base), or NULL. */
static char *resolve(const char *base, const char *rel)
{
	_cleanup_free_ char *p = NULL;
	if (asprintf(&p, "%s%s%s", rel[0] == '/' ? "" : base, rel[0] == '/' ? "" : "/", rel) < 0)
		return NULL;
	return realpath(p, NULL);
}

/* The first line of a small file (a gitdir: or commondir pointer), without
 * its line end; NULL when absent or unreadable. */
static char *first_line(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return strdup(buf);
}

/* Every alternate object directory named under objdir (and theirs, as deep
 * as libgit2 follows them) must lie in the source. */
static bool alternates_beneath(const char *top, const char *objdir, int depth)
{
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "%s/info/alternates", objdir) < 0)
		return false;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	if (depth >= AG_WS_GIT_ALTERNATES_DEPTH)
		return false;
	static char buf[AG_WS_GIT_POINTER_MAX_BYTES + 1];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return false; /* unreadable, or more than a pointer file holds */
	buf[n] = '\0';
	_cleanup_free_ char *copy = strdup(buf);
	if (!copy)
		return false;
	for (char *l = copy, *next; l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		l[strcspn(l, "\r")] = '\0';
		if (!*l || *l == '#')
			continue;
		_cleanup_free_ char *r = resolve(objdir, l);
		if (!beneath(top, r) || !alternates_beneath(top, r, depth + 1))
			return false;
	}
	return true;
}

/* The repository's git directory, its common directory and its alternates
 * must all lie in the source: a `.git` file, a commondir or an alternates
 * file naming another place would make the baseline describe another
 * repository on the host. */
static bool repository_beneath(const char *top)
{
	_cleanup_free_ char *dotgit = NULL, *gitdir = NULL, *common = NULL, *objdir = NULL;
	if (asprintf(&dotgit, "%s/.git", top) < 0)
		return false;
	struct stat st;
	if (lstat(dotgit, &st) < 0)
		return true; /* no .git: libgit2 finds no repository */
	if (S_ISREG(st.st_mode)) {
		_cleanup_free_ char *l = first_line(dotgit);
		if (!l || strncmp(l, "gitdir: ", 8))
			return true; /* not a pointer: libgit2 refuses it */
		gitdir = resolve(top, l + 8);
	} else {
		gitdir = realpath(dotgit, NULL);
	}
	if (!beneath(top, gitdir))
		return false;
	_cleanup_free_ char *cpath = NULL;
	if (asprintf(&cpath, "%s/commondir", gitdir) < 0)
		return false;
	_cleanup_free_ char *cl = first_line(cpath);
	common = cl ? resolve(gitdir, cl) : strdup(gitdir);
	if (!beneath(top, common) || asprintf(&objdir, "%s/objects", common) < 0)
		return false;
	return alternates_beneath(top, objdir, 0);
}

/*
 * libgit2's allocations, through malloc, noting any that fails: libgit2
 * reports a failed allocation under the error of whatever needed it (a
 * reference "cannot be peeled"), so its error class cannot say that the
 * address-space bound was hit; this flag can.
 */
static volatile bool reader_oom;

static void *noted(void *p)
{
	if (!p)
		reader_oom = true;
	return p;
}

static void *a_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return noted(malloc(n ? n : 1));
}

static void *a_calloc(size_t n, size_t size, const char *file, int line)
{
	(void)file;
	(void)line;
	return noted(calloc(n ? n : 1, size ? size : 1));
}

static char *a_strdup(const char *str, const char *file, int line)
{
	(void)file;
	(void)line;
	return noted(strdup(str));
}

static char *a_strndup(const char *str, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return noted(strndup(str, n));
}

static char *a_substrdup(const char *str, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	char *p = n < SIZE_MAX ? malloc(n + 1) : NULL;
	if (p) {
		memcpy(p, str, n);
		p[n] = '\0';
	}
	return noted(p);
}

static void *a_realloc(void *ptr, size_t size, const char *file, int line)
{
	(void)file;
	(void)line;
	return noted(realloc(ptr, size ? size : 1));
}

static void *a_reallocarray(void *ptr, size_t n, size_t size, const char *file, int line)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return noted(NULL);
	return a_realloc(ptr, total, file, line);
}

static void *a_mallocarray(size_t n, size_t size, const char *file, int line)
{
	return a_reallocarray(NULL, n, size, file, line);
}

static void a_free(void *ptr)
{
	free(ptr);
}

static int reader_allocator(void)
{
	static git_allocator a = {a_malloc,  a_calloc,	     a_strdup,	    a_strndup, a_substrdup,
				  a_realloc, a_reallocarray, a_mallocarray, a_free};
	return git_libgit2_opts(GIT_OPT_SET_ALLOCATOR, &a) < 0 ? -1 : 0;
}

static bool out_of_memory(void)
{
	const git_error *e = git_error_last();
	return reader_oom || (e && e->klass == GIT_ERROR_NOMEMORY);
}

/* Reads the repository of the work tree at the current directory, inside
 * the sandbox; libgit2 is initialised. */
static int reader_read(unsigned what, struct out *o)
{
	_cleanup_free_ char *top = realpath(".", NULL);
	if (!top)
		return errno == ENOMEM ? READER_NOMEM : READER_FAILED;
	if (!repository_beneath(top))
		return READER_OUTSIDE;
	_cleanup_free_ char *dotgit = NULL;
	if (asprintf(&dotgit, "%s/.git", top) < 0) {
		dotgit = NULL;
		return READER_NOMEM;
	}
	int st = READER_FAILED;
	git_repository *repo = NULL;
	git_index *idx = NULL;
	_cleanup_free_ char *gd = NULL, *cd = NULL;
	/* exactly <source>/.git (a directory, or a gitdir: file): no search
	 * upwards, no fallback to the source itself as a bare repository, and
	 * the environment (GIT_DIR, GIT_WORK_TREE...) is never consulted (nor
	 * passed: the reader's environment is empty) */
	if (git_repository_open_ext(&repo, dotgit,
				    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT,
				    NULL) < 0)
		goto out;
	gd = realpath(git_repository_path(repo), NULL);
	cd = realpath(git_repository_commondir(repo), NULL);
	if (!beneath(top, gd) || !beneath(top, cd)) {
		st = READER_OUTSIDE;
		goto out;
	}
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
	if (st == READER_FAILED && out_of_memory())
		st = READER_NOMEM;
	git_index_free(idx);
	git_repository_free(repo);
	return st;
}

/* One probe of the sandbox: "P<name> ok" or "P<name> <errno name>". */
static void probe(struct out *o, const char *name, long rc)
{
	const char *en = rc >= 0 ? "ok" : strerrorname_np(errno);
	char v[48];
	snprintf(v, sizeof(v), " %s", en ? en : "?");
	out_rec(o, 'P', name, v);
}

/* AG_WS_GIT_SANDBOX_PROBE: what a reader subverted by its input would try,
 * attempted inside the real sandbox, one record each. */
static int reader_probe(struct out *o)
{
	errno = 0;
	long rc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	probe(o, "socket", rc);
	if (rc >= 0)
		close((int)rc);
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "/var/run/docker.sock"};
	probe(o, "connect", connect(1, (struct sockaddr *)&sa, sizeof(sa)));
	rc = open("/var/run/docker.sock", O_RDWR | O_CLOEXEC);
	probe(o, "open_docker_socket", rc);
	if (rc >= 0)
		close((int)rc);
	rc = open("/var/run/docker.sock", O_RDONLY | O_CLOEXEC);
	probe(o, "open_docker_socket_ro", rc);
	if (rc >= 0)
		close((int)rc);
	rc = open(".agentguard-reader-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	probe(o, "create_file", rc);
	if (rc >= 0) {
		close((int)rc);
		(void)unlink(".agentguard-reader-probe"); /* the writer's probe may create */
	}
	rc = open("/tmp/.agentguard-reader-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	probe(o, "create_outside", rc);
	if (rc >= 0)
		close((int)rc);
	/* by path, outside any Landlock rule: refused by seccomp (EPERM); a
	 * path that does not exist shows a permitted call as ENOENT */
	probe(o, "chmod_path", chmod("/nonexistent-agentguard-probe", 0600));
	probe(o, "utimes_path",
	      utimensat(AT_FDCWD, "/nonexistent-agentguard-probe", NULL, AT_SYMLINK_NOFOLLOW));
	int fd = open(".git/HEAD", O_RDONLY | O_CLOEXEC);
	probe(o, "read_inside", fd);
	probe(o, "write_read_only_fd", fd >= 0 ? write(fd, "x", 1) : -1);
	if (fd >= 0)
		close(fd);
	probe(o, "write_stderr", write(2, "x", 1));
	rc = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	probe(o, "read_outside", rc);
	if (rc >= 0)
		close((int)rc);
	static char t[] = "true";
	char *const argv[] = {t, NULL};
	char *const envp[] = {NULL};
	probe(o, "execve", execve("/bin/true", argv, envp));
	/* volatile: clang may otherwise drop a malloc whose result only reaches free */
	void *volatile big = malloc(AG_WS_GIT_AS_MAX_BYTES);
	probe(o, "allocate_limit", big ? 0 : -1);
	free(big);
	out_flush(o);
	return o->failed ? READER_FAILED : 0;
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
	const unsigned long known = AG_WS_GIT_STATUS | AG_WS_GIT_PATHS |
				    AG_WS_GIT_STATUS_COLLAPSED | AG_WS_GIT_SANDBOX_PROBE |
				    AG_WS_GIT_WRITE_BASELINE;
	const unsigned long read_bits =
	    AG_WS_GIT_STATUS | AG_WS_GIT_PATHS | AG_WS_GIT_STATUS_COLLAPSED;
	if (argc != 4 || strcmp(argv[1], AG_WS_GIT_READER_ARG) ||
	    !parse_ulong(argv[2], known, &what) || !what || (what & ~known) ||
	    ((what & AG_WS_GIT_WRITE_BASELINE) && (what & read_bits)) ||
	    !parse_ulong(argv[3], (unsigned long)INT32_MAX, &parent))
		_exit(READER_FAILED);
	/* The reader dies with AgentGuard (and a parent that died before this
	 * line is noticed: the reader was reparented). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t)parent)
		_exit(READER_FAILED);
	/* libgit2 loaded and set up (no repository touched), then the sandbox:
	 * from here on the reader can read the source and write its pipe,
	 * nothing else. */
	struct ag_error *le = NULL;
	if (ag_lazy_git2_load(&le) < 0)
		_exit(AG_WS_GIT_CHILD_NO_LIBGIT2);
	if (git_libgit2_init() < 0 || reader_allocator() < 0 || reader_options() < 0)
		_exit(READER_FAILED);
	bool writer = what & AG_WS_GIT_WRITE_BASELINE;
	if (sandbox_enter(NULL, writer) < 0)
		_exit(READER_NO_SANDBOX);
	static struct out o = {.fd = 1};
	int st = (what & AG_WS_GIT_SANDBOX_PROBE) ? reader_probe(&o)
		 : writer			  ? ag_ws_git_baseline_child(1)
						  : reader_read((unsigned)what, &o);
	/* _exit: no atexit handler (a sanitizer's leak check) runs in the sandbox */
	_exit(st);
}

/* ------------------------------------------------------ the parent's side */

/*
 * Runs the reader with the process runner (proc.h): argv only, an empty
 * environment, the image opened by ag_ws_git_reader_enable as fd 3, the
 * source directory as its working directory, every other fd closed, its
 * own process group killed and reaped whatever happens. Its records
 * (r->out) are read under the output cap and the deadline. *status is its
 * exit status, or minus the signal that killed it.
 */
int ag_ws_git_child_bounds(int status, const char *who, unsigned long cpu_seconds,
			   const char *no_sandbox, struct ag_error **err)
{
	if (status == AG_WS_GIT_CHILD_NOMEM)
		return ag_err(err, AG_E_LIMIT, 0, "limit.workspace.git_memory",
			      "%s reached its memory bound (%d MiB)", who,
			      (int)(AG_WS_GIT_AS_MAX_BYTES >> 20));
	if (status == -SIGXCPU)
		return ag_err(err, AG_E_LIMIT, 0, "limit.workspace.git_cpu",
			      "%s reached its CPU-time bound (%lu s)", who, cpu_seconds);
	if (status == AG_WS_GIT_CHILD_NO_SANDBOX)
		return ag_err(err, AG_E_IO, 0, "workspace.git_sandbox_unavailable",
			      "%s cannot confine itself (%s)", who, no_sandbox);
	if (status == AG_WS_GIT_CHILD_NO_LIBGIT2)
		return ag_err(err, AG_E_INTERNAL, 0, "lib.load",
			      "%s could not load the shared library %s", who, AG_SONAME_GIT2);
	return 0;
}

int ag_ws_git_run_child(int srcfd, unsigned what, unsigned timeout_ms, struct ag_proc_result *r,
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
	*status = r->status == AG_PROC_EXITED ? r->exit_code : -r->term_signal;
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
	int status = -1,
	    rc = ag_ws_git_run_child(srcfd, what, opts ? opts->timeout_ms : 0, &r, &status, err);
	if (rc == 0)
		rc = ag_ws_git_child_bounds(status, "the git reader", AG_WS_GIT_CPU_MAX_S,
					    "Landlock or seccomp unavailable", err);
	if (rc == 0 && status == READER_OUTSIDE)
		rc = ag_err(err, AG_E_UNSAFE_PATH, 0, "workspace.git_outside_source",
			    "the source's .git, its common directory or its alternates point "
			    "outside the source");
	else if (rc == 0 && status == READER_NOT_TOP)
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
