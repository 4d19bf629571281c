/*
 * gitinfo.h: Git baseline evidence for a source directory (HEAD and
 * porcelain v1 status), gathered by running /usr/bin/git with a
 * neutralised environment and configuration. Never through a shell.
 */
#ifndef AG_WS_GITINFO_H
#define AG_WS_GITINFO_H

#include "lib/base/ag.h"

struct ag_error;

enum ag_ws_source_kind {
	AG_WS_SOURCE_DIRECTORY = 0, /* no .git at the source root */
	AG_WS_SOURCE_GIT,	    /* .git present and HEAD resolves to a commit */
	AG_WS_SOURCE_GIT_EMPTY,	    /* .git present, no commit yet */
};
const char *ag_ws_source_kind_name(enum ag_ws_source_kind k);

struct ag_ws_git_status {
	char xy[3];	   /* two status characters, e.g. "RM", "D ", "??", "!!" */
	char *path;	   /* raw bytes as git printed them (-z: unquoted) */
	char *source_path; /* renames/copies: the original path; else NULL */
};

struct ag_ws_gitinfo {
	enum ag_ws_source_kind kind;
	char head[65]; /* hex object id, "" when none */
	struct ag_ws_git_status *status;
	size_t nstatus;
};
void ag_ws_gitinfo_release(struct ag_ws_gitinfo *g);

/*
 * Fills *g for the directory open at srcfd. A source without a `.git`
 * entry at its root is AG_WS_SOURCE_DIRECTORY (git is not run). git is
 * resolved to git_path (NULL: "/usr/bin/git"), run with cwd = srcfd, stdin
 * /dev/null, environment built from scratch (PATH=/usr/bin:/bin,
 * HOME=/nonexistent, GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null,
 * GIT_TERMINAL_PROMPT=0, LC_ALL=C), -c core.fsmonitor=false and
 * --no-optional-locks, bounded output and a timeout per call (timeout_ms;
 * 0: AG_WS_GIT_TIMEOUT_MS). Status entries are sorted by path.
 * Reasons: workspace.git_failed, workspace.git_timeout,
 * limit.workspace.git_output, limit.workspace.git_status.
 */
int ag_ws_gitinfo_collect(int srcfd, const char *git_path, unsigned timeout_ms,
			  struct ag_ws_gitinfo *g, struct ag_error **err);

#endif
