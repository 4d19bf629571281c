/*
 * setup.c: the setting of a contained run, checked before it starts
 * (setup.h). Moved here from the CLI so every rule lives in the library.
 */
#include "lib/base/ag.h"
#include "lib/run/setup.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/redact.h"
#include "lib/config/config.h"

#include <libgen.h>
#include <sys/stat.h>

char *ag_run_key_default_path(const char *xdg_state_home, const char *home)
{
	if (xdg_state_home && xdg_state_home[0] == '/')
		return ag_xasprintf("%s/agentguard/signing-key.pem", xdg_state_home);
	if (home && home[0] == '/')
		return ag_xasprintf("%s/.local/state/agentguard/signing-key.pem", home);
	return NULL;
}

void ag_run_setup_secrets(const struct ag_config *c, const char *const *argv, size_t argc,
			  struct ag_redactor *red)
{
	for (size_t i = 0; i < c->n_agent_environment; i++)
		ag_redactor_add_secret(red, c->agent_environment[i].value);
	for (size_t i = 0; i < c->n_secret_content_patterns; i++)
		ag_redactor_add_secret(red, c->secret_content_patterns[i].contains);
	ag_redactor_add_argv(red, argv, argc);
}

static int fd_abs_path(int fd, char **out)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	char buf[4096];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1 || buf[0] != '/')
		return -1;
	buf[n] = '\0';
	*out = ag_xstrdup(buf);
	return 0;
}

/*
 * The workspace is bind-mounted by path, so nobody but us (or root) may be
 * able to rename anything on the way to it: every directory from / to the
 * runs root must be owned by root or by us, and writable by others only
 * with the sticky bit (like /tmp) or by our own group.
 */
static int check_runs_root_ancestry(const char *abs, const char **bad)
{
	_cleanup_free_ char *p = ag_xstrdup(abs);
	size_t n = strlen(p);
	for (size_t i = n; i > 0; i--) {
		if (i != n && p[i] != '/')
			continue;
		char saved = p[i];
		p[i] = '\0';
		struct stat st;
		int rc = lstat(i ? p : "/", &st);
		p[i] = saved;
		if (rc < 0 || !S_ISDIR(st.st_mode))
			return -1;
		bool owner_ok = st.st_uid == 0 || st.st_uid == geteuid();
		bool others_ok = !(st.st_mode & S_IWOTH) || (st.st_mode & S_ISVTX);
		bool group_ok = !(st.st_mode & S_IWGRP) || (st.st_mode & S_ISVTX) ||
				st.st_gid == getegid() || st.st_gid == 0;
		if (!owner_ok || !others_ok || !group_ok) {
			*bad = owner_ok ? "writable by other users" : "owned by another user";
			return -1;
		}
	}
	struct stat st;
	if (lstat("/", &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		*bad = "the root directory is not root-owned";
		return -1;
	}
	return 0;
}

/* Does the key file's real directory lie at or below the repository? */
static bool key_inside(const char *key_path, const char *repo_abs)
{
	_cleanup_free_ char *copy = ag_xstrdup(key_path);
	char *slash = strrchr(copy, '/');
	const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
	_cleanup_free_ char *real = realpath(dir, NULL);
	if (!real)
		return true; /* cannot tell: fail closed */
	size_t n = strlen(repo_abs);
	return strncmp(real, repo_abs, n) == 0 && (real[n] == '/' || real[n] == '\0' || n == 1);
}

/* The repository: --repo, else the config's repo_template, else ".". */
static int open_repo(const struct ag_run_setup_in *in, struct ag_run_setup *s,
		     struct ag_error **err)
{
	const char *repo = in->repo;
	_cleanup_free_ char *from_config = NULL;
	if (!repo && in->cfg->repo_template) {
		_cleanup_free_ char *dc = ag_xstrdup(in->config_path);
		const char *t = in->cfg->repo_template;
		from_config = t[0] == '/' ? ag_xstrdup(t) : ag_xasprintf("%s/%s", dirname(dc), t);
		repo = from_config;
	}
	s->repo_fd = open(repo ? repo : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->repo_fd < 0 || fd_abs_path(s->repo_fd, &s->repo_abs) < 0)
		return ag_err(err, AG_E_IO, errno, "run.repo",
			      "cannot open the repository directory: %s", strerror(errno));
	if (key_inside(in->key_path, s->repo_abs))
		/* The workspace is a copy of the repository: the key would go with it. */
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.in_repo",
			      "the evidence signing key lies inside the repository, so the "
			      "agent's copy would hold it; keep it outside (--signing-key FILE)");
	return 0;
}

static int open_runs_root(const struct ag_run_setup_in *in, struct ag_run_setup *s,
			  struct ag_error **err)
{
	s->runs = in->runs_root ? in->runs_root : AG_RUNS_ROOT_DEFAULT;
	s->runs_fd = ag_open_or_make_dirs(s->runs, 0755);
	if (s->runs_fd < 0 || fd_abs_path(s->runs_fd, &s->runs_abs) < 0)
		return ag_err(err, AG_E_IO, errno, "run.runs_root",
			      "cannot create or open the runs root: %s", strerror(errno));
	const char *why_bad = "not a directory";
	if (check_runs_root_ancestry(s->runs_abs, &why_bad) < 0)
		/* CONTRACT: workspace.mount_path_integrity */
		return ag_err(err, AG_E_CONFIG, 0, "run.runs_root_unsafe",
			      "the runs root or a directory above it is %s, so the bind-mounted "
			      "workspace path could be swapped",
			      why_bad);
	struct stat rst;
	if (fstat(s->runs_fd, &rst) < 0 || rst.st_uid != geteuid() ||
	    ((rst.st_mode & (S_IWGRP | S_IWOTH)) && !(rst.st_mode & S_ISVTX)))
		/* Others could plant runs, hold the chain lock or swap the head. */
		return ag_err(err, AG_E_CONFIG, 0, "run.runs_root_unsafe",
			      "the runs root is owned by another user or writable by group or "
			      "others (without the sticky bit); run `chmod go-w` on it or pick "
			      "another --runs-root");
	size_t rl = strlen(s->repo_abs);
	s->in_repo = strncmp(s->runs_abs, s->repo_abs, rl) == 0 &&
		     (s->runs_abs[rl] == '/' || s->runs_abs[rl] == '\0');
	if (!s->in_repo)
		return 0;
	/* CONTRACT: evidence.outside_agent_repo */
	const char *rest = s->runs_abs + rl;
	if (strncmp(rest, "/.agentguard/", 13) != 0 && strcmp(rest, "/.agentguard") != 0)
		return ag_err(err, AG_E_USAGE, 0, "run.runs_root_in_repo",
			      "the runs root is inside the repository but not under its "
			      "top-level .agentguard/: evidence must stay outside what the agent "
			      "sees");
	s->runs_rel = s->runs_abs + rl + 1;
	return 0;
}

int ag_run_setup_open(const struct ag_run_setup_in *in, struct ag_run_setup *s,
		      struct ag_redactor *red, struct ag_error **err)
{
	*s = (struct ag_run_setup){.repo_fd = -1, .runs_fd = -1};
	if (open_repo(in, s, err) < 0)
		return -1;
	int cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd >= 0) {
		(void)fd_abs_path(cwd_fd, &s->cwd_abs);
		close(cwd_fd);
	}
	if (open_runs_root(in, s, err) < 0)
		return -1;
	/* Portable roles replace host roots everywhere (longest first). */
	ag_redactor_add_root(red, s->repo_abs, "${REPOSITORY_ROOT}");
	ag_redactor_add_root(red, s->runs_abs, "${RUNS_ROOT}");
	if (s->cwd_abs)
		ag_redactor_add_root(red, s->cwd_abs, "${AGENTGUARD_ROOT}");
	if (in->home && in->home[0] == '/' && in->home[1])
		ag_redactor_add_root(red, in->home, "${HOME}");
	return 0;
}

void ag_run_setup_release(struct ag_run_setup *s)
{
	if (s->repo_fd >= 0)
		close(s->repo_fd);
	if (s->runs_fd >= 0)
		close(s->runs_fd);
	free(s->repo_abs);
	free(s->runs_abs);
	free(s->cwd_abs);
	*s = (struct ag_run_setup){.repo_fd = -1, .runs_fd = -1};
}
