/*
 * setup.h: the rules a contained run's setting obeys before the run starts
 * (docs/contained-run.md): which repository, which runs root and whether
 * it is safe to bind a workspace below it, where the evidence signing key
 * lives and that it is not inside the repository, and which secrets and
 * host roots the redactor knows. The CLI reads the environment and the
 * command line and hands the values in; every rule is here.
 */
#ifndef AG_RUN_SETUP_H
#define AG_RUN_SETUP_H

#include "lib/base/ag.h"

struct ag_config;
struct ag_redactor;
struct ag_error;

/* The runs root when --runs-root is not given (relative to the working directory). */
#define AG_RUNS_ROOT_DEFAULT ".agentguard/contained-runs"

/*
 * The local evidence signing key: ${XDG_STATE_HOME:-$HOME/.local/state}/
 * agentguard/signing-key.pem (a relative XDG_STATE_HOME is ignored, as the
 * XDG Base Directory rules say). NULL when neither gives an absolute path.
 */
char *ag_run_key_default_path(const char *xdg_state_home, const char *home);

/*
 * The redactor's secrets before anything runs: every configured agent
 * environment value, every secret content pattern, and the credential
 * arguments of the agent argv (--token X, -H "X-Api-Key: X", ...).
 */
void ag_run_setup_secrets(const struct ag_config *c, const char *const *argv, size_t argc,
			  struct ag_redactor *red);

struct ag_run_setup_in {
	const struct ag_config *cfg;
	const char *config_path; /* a relative repo_template is relative to its directory */
	const char *repo;	 /* --repo; NULL: the config's repo_template, else "." */
	const char *runs_root;	 /* --runs-root; NULL: AG_RUNS_ROOT_DEFAULT */
	const char *key_path;	 /* the signing key file in use */
	const char *home;	 /* $HOME as read by the caller (a redaction root), or NULL */
};

struct ag_run_setup {
	int repo_fd, runs_fd;
	char *repo_abs, *runs_abs, *cwd_abs;
	const char *runs;     /* the runs root as given (what the CLI prints) */
	bool in_repo;	      /* the runs root lies inside the repository */
	const char *runs_rel; /* then: its path relative to the repository (in runs_abs) */
};

/*
 * Opens the repository and the runs root (made when missing) and checks:
 * the signing key is not inside the repository (evidence.key.in_repo);
 * every directory from / to the runs root is owned by root or by us and
 * writable by others only with the sticky bit (run.runs_root_unsafe); the
 * runs root itself is ours and not group/other-writable without the sticky
 * bit (run.runs_root_unsafe); a runs root inside the repository is under
 * its top-level .agentguard/ (AG_E_USAGE, run.runs_root_in_repo). Then the
 * portable roles replace the host roots in red: ${REPOSITORY_ROOT},
 * ${RUNS_ROOT}, ${AGENTGUARD_ROOT} (the working directory) and ${HOME}.
 * -1 with *err (the message printable as is); out is released either way
 * by ag_run_setup_release.
 */
int ag_run_setup_open(const struct ag_run_setup_in *in, struct ag_run_setup *out,
		      struct ag_redactor *red, struct ag_error **err);
void ag_run_setup_release(struct ag_run_setup *s);

#endif
