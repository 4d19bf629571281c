/*
 * proc.h: the only way AgentGuard starts a program.
 *
 * argv arrays only, never a shell; a complete environment built by the
 * caller (never inherited); stdin from /dev/null; every fd but 0/1/2
 * closed in the child (and 3, when the program is given as an open
 * executable); all signal dispositions default and an empty mask; the
 * child leads its own process group so a timeout or a cap kills the whole
 * tree; stdout and stderr read together with poll() under per-stream byte
 * caps and a wall-clock deadline.
 */
#ifndef AG_PROC_H
#define AG_PROC_H

#include "lib/base/ag.h"
#include "lib/base/buf.h"

struct ag_error;

enum ag_proc_status {
	AG_PROC_EXITED = 0,	 /* exit_code valid */
	AG_PROC_SIGNALED,	 /* term_signal valid */
	AG_PROC_TIMED_OUT,	 /* deadline hit; group killed and reaped */
	AG_PROC_FAILED_TO_START, /* exec failed (start_errno valid) */
};

enum ag_proc_cap_policy {
	/* Keep reading past the cap but drop the excess (output is truncated). */
	AG_PROC_CAP_TRUNCATE = 0,
	/* Kill the process group when a stream passes its cap. */
	AG_PROC_CAP_KILL,
};

struct ag_proc_spec {
	const char *exe;	 /* absolute path of the program; never searched in PATH */
	const char *const *argv; /* argv[0] is a display name */
	const char *const *envp; /* complete child environment (NULL = empty) */
	size_t stdout_max;	 /* cap in bytes, from bounds.h */
	size_t stderr_max;
	enum ag_proc_cap_policy cap_policy;
	unsigned timeout_ms;	/* wall clock (CLOCK_MONOTONIC); 0 = no timeout */
	unsigned kill_grace_ms; /* after timeout: SIGTERM, wait this long, then SIGKILL */
	/*
	 * Optional: called with the child's pid right after spawn (e.g. to
	 * record it for signal forwarding). May be NULL.
	 */
	void (*on_spawn)(pid_t pid, void *data);
	void *on_spawn_data;
	/*
	 * Optional: polled about every 100 ms while the child runs; returning
	 * true cancels the run (the group is signalled like a timeout and the
	 * result says cancelled). May be NULL.
	 */
	bool (*should_cancel)(void *data);
	void *should_cancel_data;
	/*
	 * Optional (extension): when has_cwd_fd is true the child starts in
	 * the directory open as cwd_fd (posix_spawn fchdir action); otherwise
	 * it inherits AgentGuard's working directory. cwd_fd stays owned by
	 * the caller.
	 */
	bool has_cwd_fd;
	int cwd_fd;
	/*
	 * Optional: when has_exe_fd is true the program is the executable open
	 * (O_RDONLY, close-on-exec) at exe_fd, which must be >= 4, and exe is
	 * ignored. The child receives it as fd 3 and executes /proc/self/fd/3,
	 * so the image is the one opened earlier even if its path has since
	 * been replaced (the git reader re-executes AgentGuard this way). The
	 * program should close fd 3 first thing. exe_fd stays the caller's.
	 */
	bool has_exe_fd;
	int exe_fd;
};

struct ag_proc_result {
	enum ag_proc_status status;
	int exit_code;	 /* AG_PROC_EXITED */
	int term_signal; /* AG_PROC_SIGNALED */
	int start_errno; /* AG_PROC_FAILED_TO_START */
	bool cancelled;	 /* should_cancel returned true */
	bool stdout_truncated, stderr_truncated;
	/* Bytes each stream delivered while it was read, including those past the cap. */
	uint64_t stdout_total, stderr_total;
	struct ag_buf out, err; /* NUL-terminated captured bytes */
	uint64_t duration_ms;
};

void ag_proc_result_init(struct ag_proc_result *r);
void ag_proc_result_release(struct ag_proc_result *r);

/*
 * Runs spec to completion. Returns 0 when the outcome is known (any
 * status, including timed out and failed to start) and fills *res; returns
 * -1 with *err only when AgentGuard itself could not supervise the child
 * (pipe/poll failure) or the spec is malformed (exe not absolute, argv
 * empty, exe_fd below 4: AG_E_INTERNAL, reasons proc.exe.not_absolute,
 * proc.argv.empty, proc.exe_fd.low).
 *
 * *res must have been initialised with ag_proc_result_init (it may hold a
 * previous result: it is released and reset first).
 *
 * Behaviour in detail (docs/docker-argv.md, "Process runner"):
 *  - kill_grace_ms 0 means AG_PROC_KILL_GRACE_DEFAULT_MS (2 s).
 *  - Caps: a stream may deliver any number of bytes; at most *_max are
 *    kept, the *_truncated flag says more arrived. With AG_PROC_CAP_KILL the
 *    group is also SIGKILLed at the first excess byte (status then is
 *    whatever waitpid reports, normally SIGNALED/SIGKILL).
 *  - Timeout: status AG_PROC_TIMED_OUT only when the direct child had not
 *    exited by the deadline; the group got SIGTERM, then SIGKILL after the
 *    grace, and the child is reaped before returning.
 *  - Cancel: like a timeout, but the status is what waitpid reports and
 *    `cancelled` is set.
 *  - When the direct child exits while processes it left behind still hold
 *    its stdout/stderr, they get AG_PROC_ORPHAN_DRAIN_MS (or less, up to the
 *    deadline) to finish; then the group is SIGKILLed. Whatever the pipes,
 *    the group is SIGKILLed before the child is reaped, so no process of the
 *    run survives ag_proc_run (except one that left the group by setsid;
 *    its pipes are closed after AG_PROC_FINAL_DRAIN_MS).
 *  - The caller must not set SIGCHLD to SIG_IGN nor reap children it did
 *    not start (waitpid(-1) in a handler): the runner reaps its own child
 *    last, and until then its pid is the group it signals. SIGPIPE is
 *    irrelevant: the runner never writes to the child.
 *  - A program that is missing or not executable is FAILED_TO_START
 *    (start_errno ENOENT, EACCES, ENOEXEC...), never an exit code.
 */
int ag_proc_run(const struct ag_proc_spec *spec, struct ag_proc_result *res, struct ag_error **err);

#endif
