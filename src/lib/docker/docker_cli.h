/*
 * docker_cli.h: the one verified Docker client and the one helper every
 * docker call goes through.
 *
 * The client is resolved once, to an absolute path, never by a PATH
 * search: `--docker PATH` (absolute) or the first existing default of
 * /usr/bin/docker and /usr/local/bin/docker. Symbolic links are resolved
 * first; the resulting file must be a root-owned executable regular file
 * that is not group- or world-writable, in a chain of root-owned
 * directories none of which is group- or world-writable unless sticky
 * (so nobody but root can replace it). Every call then runs that
 * canonical path with a fixed environment (ag_docker_env), stdin
 * /dev/null, bounded output and a timeout.
 */
#ifndef AG_DOCKER_CLI_H
#define AG_DOCKER_CLI_H

#include "lib/base/ag.h"
#include "lib/base/proc.h"

#include <sys/types.h>

struct ag_error;

struct ag_docker_cli {
	char *path;    /* canonical absolute path that was verified and is executed */
	char *version; /* client version token from `docker --version`, e.g. "20.10.24+dfsg1" */
	dev_t dev;     /* identity of the verified file */
	ino_t ino;
};

#define AG_DOCKER_CLI_INIT                                                                         \
	{                                                                                          \
		NULL, NULL, 0, 0                                                                   \
	}

/*
 * The complete environment of every docker call, NULL-terminated:
 *   DOCKER_HOST=unix:///var/run/docker.sock  (the local engine, always;
 *       nothing inherited can redirect to a remote daemon or context)
 *   HOME=/nonexistent  (no user config.json: no contexts, credential
 *       helpers or plugins from the host user's ~/.docker)
 *   PATH=/usr/sbin:/usr/bin:/sbin:/bin  (the contract's minimal PATH)
 * See docs/docker-argv.md, "Environment of docker calls".
 */
extern const char *const ag_docker_env[];

/* The default client candidates, in order. */
extern const char *const ag_docker_default_paths[];

/*
 * Resolves and verifies the client. `requested` NULL means the defaults.
 * Reasons: docker.cli.not_absolute (AG_E_USAGE), docker.cli.missing
 * (AG_E_DOCKER), docker.cli.unsafe (AG_E_UNVERIFIED: owner, mode, type,
 * directory chain), docker.cli.version (AG_E_DOCKER: `docker --version`
 * failed, timed out, or printed no version token within 256 bytes).
 * On success *out owns its strings (ag_docker_cli_release).
 */
int ag_docker_cli_resolve(const char *requested, struct ag_docker_cli *out, struct ag_error **err);

/* Verification only (no version call); used by resolve and by tests. */
int ag_docker_cli_verify(const char *path, struct ag_docker_cli *out, struct ag_error **err);

void ag_docker_cli_release(struct ag_docker_cli *c);
void ag_docker_cli_releasep(struct ag_docker_cli *c);
#define _cleanup_docker_cli_ _cleanup_(ag_docker_cli_releasep)

/*
 * Runs `docker ARGS...` (args: the arguments after the executable,
 * NULL-terminated; argv[0] becomes "docker"). stdout is capped at out_max,
 * stderr at AG_DOCKER_STDERR_MAX, policy AG_PROC_CAP_KILL (a flood ends the
 * call; the truncated flag says so), timeout_ms 0 means
 * AG_DOCKER_CONTROL_TIMEOUT_MS. Returns 0 with *res filled for every
 * outcome (exit, signal, timeout, failed to start): the caller decides what
 * a non-zero exit means; -1 only when the call could not be supervised.
 * *res must be initialised (ag_proc_result_init).
 */
int ag_docker_run(const struct ag_docker_cli *cli, const char *const *args, size_t out_max,
		  unsigned timeout_ms, struct ag_proc_result *res, struct ag_error **err);

/*
 * Same, with every runner option taken from `tmpl` (caps, policy, grace,
 * on_spawn, should_cancel); exe, argv and envp are always the verified
 * client, "docker" + args and ag_docker_env. tmpl->timeout_ms must be
 * non-zero: every docker call is bounded (reason docker.run.unbounded,
 * AG_E_INTERNAL).
 */
int ag_docker_run_ex(const struct ag_docker_cli *cli, const char *const *args,
		     const struct ag_proc_spec *tmpl, struct ag_proc_result *res,
		     struct ag_error **err);

/*
 * Turns a finished call that did not exit 0, or whose stdout was
 * truncated, into an AG_E_DOCKER error. `what` names the call ("docker
 * version") in the message; docker's own output is never copied into it.
 * Reasons: docker.call.failed_to_start, docker.call.timeout,
 * docker.call.signaled, docker.call.exit, docker.call.truncated,
 * docker.call.cancelled.
 */
int ag_docker_check(const struct ag_proc_result *res, const char *what, struct ag_error **err);

#endif
