/*
 * gitinfo.h: Git facts about an untrusted source directory (HEAD, a
 * porcelain-v1-equivalent status, tracked and ignored paths), read with
 * libgit2. git is never executed: a repository's own configuration
 * (filter drivers, diff.external, textconv, core.fsmonitor, hooks,
 * core.sshCommand, credential helpers, include.path) cannot run anything.
 *
 * The reading happens in a separate process, AgentGuard's own executable
 * started afresh by the process runner (base/proc.h: posix_spawn + exec,
 * argv only, an empty environment, its own process group) as the hidden
 * reader (ag_ws_git_reader_main). Before it opens the repository
 * it forbids execve/execveat with a seccomp filter; it is bounded by a
 * wall-clock timeout and an output cap, and hands its findings back as
 * NUL-separated records over a pipe, which the parent validates. So a
 * hostile repository can neither run a program, stall the run (a FIFO
 * named .gitignore), nor crash it; and because the reader is a new image,
 * not a fork of a multithreaded process, no lock another thread held at
 * the spawn can stall it either.
 */
#ifndef AG_WS_GITINFO_H
#define AG_WS_GITINFO_H

#include "lib/base/ag.h"

struct ag_error;

enum ag_ws_source_kind {
	AG_WS_SOURCE_DIRECTORY = 0, /* no .git at the source root */
	AG_WS_SOURCE_GIT,	    /* .git present and HEAD resolves to a commit */
	AG_WS_SOURCE_GIT_EMPTY,	    /* .git present, no commit yet */
	AG_WS_SOURCE__COUNT	    /* not a kind: tests iterate to it */
};
const char *ag_ws_source_kind_name(enum ag_ws_source_kind k);

struct ag_ws_git_status {
	char xy[3];	   /* two status characters, e.g. "RM", "D ", "??", "!!" */
	char *path;	   /* raw bytes, as `git status --porcelain=v1 -z` prints them */
	char *source_path; /* renames: the original path; else NULL */
};

struct ag_ws_gitinfo {
	enum ag_ws_source_kind kind;
	char head[65]; /* hex object id, "" when none */
	struct ag_ws_git_status *status;
	size_t nstatus;
	/* filled only when ag_ws_gitinfo_collect is asked for AG_WS_GIT_PATHS: */
	char **tracked; /* index paths (any stage; gitlinks too), sorted, unique */
	size_t ntracked;
	char **untracked; /* untracked files that no ignore rule matches, sorted */
	size_t nuntracked;
	char **subtrees; /* submodules (index gitlinks) and untracked nested repositories */
	size_t nsubtrees;
};
void ag_ws_gitinfo_release(struct ag_ws_gitinfo *g);

/* What ag_ws_gitinfo_collect reads. */
enum {
	AG_WS_GIT_STATUS = 1u << 0, /* porcelain-v1 status, ignored files listed one by one */
	AG_WS_GIT_PATHS = 1u << 1,  /* tracked[] and untracked[] (ignored dirs not entered) */
	AG_WS_GIT_STATUS_COLLAPSED = 1u << 2, /* status; an ignored dir is one "dir/" entry */
	/* Test-only, for the reader's argv (never for ag_ws_gitinfo_collect):
	 * inside the real sandbox, attempt what a subverted reader would
	 * (socket, connect, the Docker socket, creating and writing files,
	 * reading outside the source, execve, allocating past the bound) and
	 * write one "P<name> <ok|errno name>" record each instead of reading. */
	AG_WS_GIT_SANDBOX_PROBE = 1u << 3,
	/* The baseline writer (gitbase.h), alone: the same child with Landlock
	 * also letting it write beneath its working directory. */
	AG_WS_GIT_WRITE_BASELINE = 1u << 4,
};

struct ag_ws_git_opts {
	unsigned what;	     /* AG_WS_GIT_* bits; 0: AG_WS_GIT_STATUS */
	unsigned timeout_ms; /* whole read; 0: AG_WS_GIT_TIMEOUT_MS */
};

/*
 * Fills *g for the directory open at srcfd. A source without a `.git`
 * entry at its root is AG_WS_SOURCE_DIRECTORY (nothing is read). The
 * repository must have its work tree exactly at the source root. No
 * system, global or XDG configuration, attributes or excludes are read
 * (as git with GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null and
 * HOME=/nonexistent); the repository's own config is read as data only.
 * Nothing is written to the repository (no index refresh, no locks).
 * Status entries are sorted by path. Reasons: workspace.git_failed,
 * workspace.git_timeout, limit.workspace.git_output,
 * limit.workspace.git_status, workspace.git_outside_source (a `.git` file,
 * commondir or alternates naming a place outside the source),
 * limit.workspace.git_memory, limit.workspace.git_cpu,
 * workspace.git_sandbox_unavailable (ag_ws_git_sandbox_enter failed).
 */
int ag_ws_gitinfo_collect(int srcfd, const struct ag_ws_git_opts *opts, struct ag_ws_gitinfo *g,
			  struct ag_error **err);

/*
 * Path queries over a collected gitinfo (AG_WS_GIT_PATHS), for the copy
 * rule "tracked files and untracked files that are not ignored". `path` is
 * relative, without a trailing '/'.
 */
enum ag_ws_git_incl {
	AG_WS_GIT_EXCLUDED = 0, /* neither tracked nor untracked-not-ignored: ignored */
	AG_WS_GIT_INCLUDED,	/* a tracked or untracked file, or a directory holding one */
	AG_WS_GIT_SUBTREE,	/* in or at a submodule or nested repository: it all belongs */
};
enum ag_ws_git_incl ag_ws_git_included(const struct ag_ws_gitinfo *g, const char *path,
				       bool is_dir);
bool ag_ws_git_is_tracked(const struct ag_ws_gitinfo *g, const char *path);

/*
 * The reader is AgentGuard's own executable re-executed with this argv[1].
 * A program that reads git facts (agentguard, a test, a benchmark) calls,
 * at the very top of main():
 *
 *	if (argc > 1 && !strcmp(argv[1], AG_WS_GIT_READER_ARG))
 *		return ag_ws_git_reader_main(argc, argv);
 *	ag_ws_git_reader_enable();
 *
 * ag_ws_git_reader_enable opens /proc/self/exe once, while the program is
 * still single-threaded, and keeps that fd (close-on-exec) for every later
 * spawn; it returns 0, or -1 with errno. Without it ag_ws_gitinfo_collect
 * fails closed (workspace.git_failed). ag_ws_git_reader_main is the
 * reader's whole life: it validates its argv, sets the parent-death
 * signal, initialises libgit2, enters the sandbox (below), reads the
 * repository of its working directory, writes the records to fd 1 and
 * _exits with its status (it never returns).
 */
#define AG_WS_GIT_READER_ARG "__agentguard-git-reader"
int ag_ws_git_reader_enable(void);
int ag_ws_git_reader_main(int argc, char **argv);

/*
 * The reader's sandbox, which it enters after libgit2 is initialised and
 * before it opens the repository of its working directory; exposed for its
 * tests. In order: no core file and not dumpable; RLIMIT_CPU (soft
 * cpu_seconds, SIGXCPU; hard one second later) and RLIMIT_AS (as_bytes;
 * not under AddressSanitizer, whose shadow memory is terabytes of address
 * space); PR_SET_NO_NEW_PRIVS; Landlock (every file-system access handled,
 * only reading files and directories beneath the working directory
 * allowed; TCP bind/connect, abstract unix sockets and signals out of the
 * domain denied where the kernel's ABI has them); a seccomp allowlist
 * built with libseccomp (reading, stat, directory listing, memory without
 * PROT_EXEC, read-only opens, write on fd 1 only; everything else, socket,
 * connect, execve included, fails with EPERM; another ABI kills). NULL
 * limits: AG_WS_GIT_AS_MAX_BYTES, AG_WS_GIT_CPU_MAX_S. Returns 0, or -1
 * with errno (a kernel without Landlock: the reader refuses to read).
 */
/*
 * Runs the reader (or, with AG_WS_GIT_WRITE_BASELINE, the baseline writer)
 * in the directory open at dirfd, under the output cap and the deadline
 * (0: AG_WS_GIT_TIMEOUT_MS): r->out holds its records, *status its exit
 * status or minus the signal that killed it. Reasons: workspace.git_failed,
 * workspace.git_timeout, limit.workspace.git_output.
 */
struct ag_proc_result;
/* The child's exit statuses both sides agree on (0: done). */
#define AG_WS_GIT_CHILD_FAILED 4
#define AG_WS_GIT_CHILD_NOMEM 6	     /* the address-space bound was hit */
#define AG_WS_GIT_CHILD_NO_SANDBOX 7 /* Landlock or seccomp could not be set up */
#define AG_WS_GIT_CHILD_NO_LIBGIT2 8 /* libgit2 could not be loaded (lazylib.h) */
/*
 * The bounds and the sandbox, from the child's status: -1 with
 * limit.workspace.git_memory, limit.workspace.git_cpu (SIGXCPU past
 * cpu_seconds) or workspace.git_sandbox_unavailable (the message says
 * `who` and then `no_sandbox`), else 0 (the caller judges the rest).
 */
int ag_ws_git_child_bounds(int status, const char *who, unsigned long cpu_seconds,
			   const char *no_sandbox, struct ag_error **err);
int ag_ws_git_run_child(int dirfd, unsigned what, unsigned timeout_ms, struct ag_proc_result *r,
			int *status, struct ag_error **err);

struct ag_ws_git_limits {
	unsigned long as_bytes;
	unsigned long cpu_seconds;
};
int ag_ws_git_sandbox_enter(const struct ag_ws_git_limits *lim);

#endif
