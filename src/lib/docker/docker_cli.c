/*
 * docker_cli.c: resolve and verify the Docker client once; run every
 * docker call through ag_docker_run (docker_cli.h).
 */
#include "lib/base/ag.h"
#include "lib/docker/docker_cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

#include <limits.h>
#include <sys/stat.h>

/* CONTRACT: host subprocess keeps only the minimal PATH; no remote daemon. */
const char *const ag_docker_env[] = {
    "DOCKER_HOST=unix:///var/run/docker.sock",
    "HOME=/nonexistent",
    "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
    NULL,
};

const char *const ag_docker_default_paths[] = {"/usr/bin/docker", "/usr/local/bin/docker", NULL};

void ag_docker_cli_release(struct ag_docker_cli *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->version);
	c->path = c->version = NULL;
}

void ag_docker_cli_releasep(struct ag_docker_cli *c)
{
	ag_docker_cli_release(c);
}

/* Root-owned and nobody else may write (a sticky directory protects the
 * root-owned entries in it, so it is accepted). */
static bool dir_safe(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode) || st->st_uid != 0)
		return false;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return false;
	return true;
}

/* Every directory of the canonical path `canon` ("/a/b/file": /, /a, /a/b). */
static int check_dirs(const char *canon, const char *shown, struct ag_error **err)
{
	_cleanup_free_ char *p = ag_xstrdup(canon);
	size_t len = strlen(p);
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '/')
			continue;
		char saved = p[i + 1];
		p[i + 1] = '\0';
		if (i > 0)
			p[i] = '\0'; /* "/a/b" rather than "/a/b/" */
		struct stat st;
		int r = lstat(p, &st);
		bool ok = r == 0 && dir_safe(&st);
		p[i] = '/';
		p[i + 1] = saved;
		if (!ok)
			return ag_err(
			    err, AG_E_UNVERIFIED, r < 0 ? errno : 0, "docker.cli.unsafe",
			    "docker client '%s': a directory on its path is not root-owned "
			    "or is writable by others",
			    shown);
	}
	return 0;
}

int ag_docker_cli_verify(const char *path, struct ag_docker_cli *out, struct ag_error **err)
{
	if (!path || path[0] != '/')
		return ag_err(err, AG_E_USAGE, 0, "docker.cli.not_absolute",
			      "the docker client must be named by an absolute path");
	_cleanup_free_ char *canon = realpath(path, NULL);
	if (!canon) {
		int e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return ag_err(err, AG_E_DOCKER, e, "docker.cli.missing",
				      "docker client '%s' not found", path);
		return ag_err(err, AG_E_UNVERIFIED, e, "docker.cli.unsafe",
			      "docker client '%s' cannot be resolved: %s", path, strerror(e));
	}
	if (check_dirs(canon, path, err) < 0)
		return -1;
	_cleanup_close_ int fd = open(canon, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return ag_err(err, AG_E_DOCKER, e, "docker.cli.missing",
				      "docker client '%s' not found", path);
		return ag_err(err, AG_E_UNVERIFIED, e, "docker.cli.unsafe",
			      "docker client '%s' cannot be opened: %s", path, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ag_err(err, AG_E_UNVERIFIED, errno, "docker.cli.unsafe",
			      "docker client '%s' cannot be inspected: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.cli.unsafe",
			      "docker client '%s' is not a regular file", path);
	if (st.st_uid != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.cli.unsafe",
			      "docker client '%s' is not owned by root", path);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.cli.unsafe",
			      "docker client '%s' is writable by group or others", path);
	if (!(st.st_mode & 0111) || faccessat(AT_FDCWD, canon, X_OK, AT_EACCESS) < 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "docker.cli.unsafe",
			      "docker client '%s' is not executable", path);
	out->path = ag_steal_ptr(&canon);
	out->version = NULL;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

/* "Docker version 20.10.24+dfsg1, build 297e128" -> "20.10.24+dfsg1". */
static char *parse_version(const char *s, size_t len)
{
	static const char prefix[] = "Docker version ";
	if (len < sizeof(prefix) - 1 || memcmp(s, prefix, sizeof(prefix) - 1) != 0)
		return NULL;
	const char *v = s + sizeof(prefix) - 1;
	if (*v < '0' || *v > '9')
		return NULL;
	size_t n = 0;
	while (v[n] && (strchr("0123456789.+~-", v[n]) || (v[n] >= 'A' && v[n] <= 'Z') ||
			(v[n] >= 'a' && v[n] <= 'z')))
		n++;
	if (n > AG_DOCKER_VERSION_TOKEN_MAX)
		return NULL;
	/* The token ends the line or is followed by ',' (", build ..."). */
	if (v[n] != ',' && v[n] != '\n' && v[n] != '\0')
		return NULL;
	return ag_xstrndup(v, n);
}

int ag_docker_cli_resolve(const char *requested, struct ag_docker_cli *out, struct ag_error **err)
{
	out->path = out->version = NULL;
	const char *path = requested;
	if (!path) {
		for (size_t i = 0; ag_docker_default_paths[i]; i++) {
			struct stat st;
			if (stat(ag_docker_default_paths[i], &st) == 0) {
				path = ag_docker_default_paths[i];
				break;
			}
		}
		if (!path)
			return ag_err(
			    err, AG_E_DOCKER, ENOENT, "docker.cli.missing",
			    "no docker client at /usr/bin/docker or /usr/local/bin/docker");
	}
	_cleanup_docker_cli_ struct ag_docker_cli cli = AG_DOCKER_CLI_INIT;
	if (ag_docker_cli_verify(path, &cli, err) < 0)
		return -1;

	static const char *const args[] = {"--version", NULL};
	struct ag_proc_result res;
	ag_proc_result_init(&res);
	int r = ag_docker_run(&cli, args, AG_DOCKER_VERSION_OUTPUT_MAX,
			      AG_DOCKER_CONTROL_TIMEOUT_MS, &res, err);
	if (r < 0) {
		ag_proc_result_release(&res);
		return -1;
	}
	char *v = NULL;
	if (res.status == AG_PROC_EXITED && res.exit_code == 0 && !res.stdout_truncated)
		v = parse_version(res.out.buf, res.out.len);
	ag_proc_result_release(&res);
	if (!v)
		return ag_err(err, AG_E_DOCKER, 0, "docker.cli.version",
			      "docker client '%s' did not report a version (docker --version)",
			      path);
	cli.version = v;
	*out = cli;
	cli.path = cli.version = NULL;
	return 0;
}

int ag_docker_run_ex(const struct ag_docker_cli *cli, const char *const *args,
		     const struct ag_proc_spec *tmpl, struct ag_proc_result *res,
		     struct ag_error **err)
{
	if (!cli || !cli->path)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.run.no_client",
			      "docker client not resolved");
	if (!tmpl->timeout_ms)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.run.unbounded",
			      "every docker call needs a timeout");
	size_t n = 0;
	while (args && args[n])
		n++;
	_cleanup_free_ const char **argv = ag_xcalloc(n + 2, sizeof(*argv));
	argv[0] = "docker";
	for (size_t i = 0; i < n; i++)
		argv[i + 1] = args[i];
	struct ag_proc_spec spec = *tmpl;
	spec.exe = cli->path;
	spec.argv = argv;
	spec.envp = ag_docker_env;
	if (ag_proc_run(&spec, res, err) < 0)
		return ag_err_wrap(err, "docker call");
	return 0;
}

int ag_docker_run(const struct ag_docker_cli *cli, const char *const *args, size_t out_max,
		  unsigned timeout_ms, struct ag_proc_result *res, struct ag_error **err)
{
	struct ag_proc_spec tmpl = {
	    .stdout_max = out_max,
	    .stderr_max = AG_DOCKER_STDERR_MAX,
	    .cap_policy = AG_PROC_CAP_KILL,
	    .timeout_ms = timeout_ms ? timeout_ms : AG_DOCKER_CONTROL_TIMEOUT_MS,
	};
	return ag_docker_run_ex(cli, args, &tmpl, res, err);
}

int ag_docker_check(const struct ag_proc_result *res, const char *what, struct ag_error **err)
{
	if (res->cancelled)
		return ag_err(err, AG_E_DOCKER, 0, "docker.call.cancelled", "%s was cancelled",
			      what);
	switch (res->status) {
	case AG_PROC_FAILED_TO_START:
		return ag_err(err, AG_E_DOCKER, res->start_errno, "docker.call.failed_to_start",
			      "%s could not be started: %s", what, strerror(res->start_errno));
	case AG_PROC_TIMED_OUT:
		return ag_err(err, AG_E_DOCKER, 0, "docker.call.timeout", "%s timed out", what);
	case AG_PROC_SIGNALED:
		if (res->stdout_truncated || res->stderr_truncated)
			return ag_err(err, AG_E_DOCKER, 0, "docker.call.truncated",
				      "%s printed more than its output bound", what);
		return ag_err(err, AG_E_DOCKER, 0, "docker.call.signaled",
			      "%s was killed by signal %d", what, res->term_signal);
	case AG_PROC_EXITED:
		if (res->exit_code != 0)
			return ag_err(err, AG_E_DOCKER, 0, "docker.call.exit",
				      "%s failed with exit code %d", what, res->exit_code);
		if (res->stdout_truncated)
			return ag_err(err, AG_E_DOCKER, 0, "docker.call.truncated",
				      "%s printed more than its output bound", what);
		return 0;
	}
	return ag_err(err, AG_E_INTERNAL, 0, "docker.call.status", "%s: unknown status", what);
}
