/*
 * runs_audit.h: before a run copies a repository whose runs root lies in
 * its own top-level .agentguard/, prove that everything in .agentguard/ is
 * something AgentGuard wrote there; otherwise the run refuses (exit 4,
 * reason workspace.agentguard_foreign) before the agent starts
 * (docs/evidence.md, "What AgentGuard wrote").
 *
 * AgentGuard wrote, and only this is accepted:
 *   - the directories on the way from .agentguard/ to the runs root, each
 *     holding nothing but the next one (real directories, no links);
 *   - in the runs root: the chain head and the chain lock (regular files),
 *     the atomic-write temporaries of the head (".agentguard-chain-head.json.
 *     *.tmp"), and run directories that are either
 *       . sealed: their artifact verifies on its own (every check but the
 *         chain) with a signature by a trusted key, and they hold only
 *         AgentGuard's run files (marker, artifact, seal, signature,
 *         workspace-lifecycle/, changes.patch); or
 *       . recovered: `agentguard cleanup` recovered it after a crash and
 *         signed a recovery record (recover.h, ag_run_recovered_check); or
 *       . in progress: a valid marker whose owner process is running, or
 *         still empty (just created; an empty directory carries no claim).
 * Anything else (a planted or forged run, an unsigned run, a file, a link)
 * is named in the error. At most AG_RUNS_AUDIT_MAX_ENTRIES entries are
 * examined (workspace.agentguard_too_many beyond).
 */
#ifndef AG_RUNS_AUDIT_H
#define AG_RUNS_AUDIT_H

#include "lib/base/ag.h"

struct ag_error;
struct ag_trust;

/* True when `name` is a file (or, is_dir, a directory) a run writes in its
 * run directory. */
bool ag_runs_audit_run_file(const char *name, bool is_dir);

/*
 * repo_fd: the source repository; runs_rel: the runs root relative to it
 * (".agentguard/..."); skip_run: this run's own directory (or NULL).
 */
int ag_runs_audit(int repo_fd, const char *runs_rel, const char *skip_run,
		  const struct ag_trust *trust, struct ag_error **err);

#endif
