/*
 * gitbase.h: the git repository AgentGuard writes into a workspace copy
 * (config workspace.git: baseline, the default), so an agent finds what it
 * expects of a checkout: `git status` clean, `git diff` showing its own
 * changes. One commit of exactly the copied tree: every regular file's
 * bytes as they are (no attribute filter, no end-of-line conversion),
 * executable bits, symbolic links as links; author and committer
 * "AgentGuard <agentguard@localhost>" at 2000-01-01T00:00:00Z; branch
 * `main`; libgit2's built-in template (no hook that runs, no remote, no
 * configuration from the source or the user).
 *
 * The repository is the agent's, not evidence: the capture never enters
 * the workspace's top-level `.git` (so nothing the agent does there is a
 * mutation or enters changes.patch, which AgentGuard computes from its own
 * baseline), and the source's `.git` is never read for it.
 *
 * The writing happens in the git reader's child process (gitinfo.h), with
 * Landlock allowing it to read and write beneath the workspace directory
 * only, the reader's seccomp allowlist plus file creation and writes (no
 * socket, connect or exec) and the reader's memory and CPU bounds: the
 * copied files are the untrusted source's.
 */
#ifndef AG_WS_GITBASE_H
#define AG_WS_GITBASE_H

#include "lib/base/ag.h"

struct ag_error;

#define AG_WS_GIT_BASELINE_BRANCH "main"
#define AG_WS_GIT_BASELINE_NAME "AgentGuard"
#define AG_WS_GIT_BASELINE_EMAIL "agentguard@localhost"
#define AG_WS_GIT_BASELINE_TIME 946684800 /* 2000-01-01T00:00:00Z */

/*
 * Writes the repository into the directory open at wsfd (which must not
 * hold a `.git` yet); commit receives the baseline commit's hex id.
 * Reasons: workspace.git_baseline_failed (with the child's status),
 * workspace.git_sandbox_unavailable, limit.workspace.git_memory,
 * limit.workspace.git_cpu, workspace.git_timeout.
 */
int ag_ws_git_baseline(int wsfd, unsigned timeout_ms, char commit[41], struct ag_error **err);

/* The child's side (inside the sandbox, working directory = the
 * workspace): writes "B<hex id>\n" on out_fd; returns its exit status. */
int ag_ws_git_baseline_child(int out_fd);

#endif
