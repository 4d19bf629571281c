/*
 * deadline.h: the agent's deadline, held twice. AgentGuard's own timer
 * (the attach stream's timeout) stops the container at the configured
 * timeout; the agent's static init (src/init/agentguard-init.c), its
 * container's entrypoint, kills every process of the container a little
 * later, so the deadline holds even when AgentGuard is SIGKILLed. These
 * helpers give the init its deadline and read its statuses back.
 */
#ifndef AG_RUN_DEADLINE_H
#define AG_RUN_DEADLINE_H

#include "lib/base/ag.h"

struct ag_error;

/* The init's exit status when it killed the agent at its deadline. */
#define AG_INIT_EXIT_DEADLINE 124

/* Who ended a timed-out agent (the artifact's execution.timeout_enforced_by). */
enum ag_deadline_by {
	AG_DEADLINE_NONE = 0,	/* the agent did not time out */
	AG_DEADLINE_AGENTGUARD, /* AgentGuard's own timer stopped it */
	AG_DEADLINE_INIT,	/* the in-container init killed it */
};

/* "agentguard", "agentguard_init", or NULL for AG_DEADLINE_NONE. */
const char *ag_deadline_by_name(enum ag_deadline_by by);

/*
 * The init's deadline for an agent timeout: the timeout plus
 * AG_RUN_INIT_GRACE_SECONDS (bounds.h), so that while AgentGuard lives its
 * own timer acts first and records the run as it always did.
 */
int64_t ag_run_init_deadline(int64_t timeout_seconds);

/*
 * Checks the init binary like the probe (root-owned, in a root-owned
 * directory chain, writable only by root) and returns its canonical path
 * in *canon (heap). AG_E_DOCKER run.init_binary.missing (not installed
 * beside agentguard) or AG_E_UNVERIFIED run.init_binary.unsafe.
 */
int ag_run_init_verify(const char *path, char **canon, struct ag_error **err);

/*
 * True when a container that ended on its own (status `exit_status`,
 * after `exec_ms` of AgentGuard's measure, which starts before the
 * container does) was ended by the init's deadline: its status is
 * AG_INIT_EXIT_DEADLINE and at least the timeout has passed (an agent that
 * exits 124 sooner is just an agent that exited 124).
 */
bool ag_run_init_deadline_held(int exit_status, uint64_t exec_ms, int64_t timeout_seconds);

/*
 * True when the init could not execute the argv: status 126 or 127 and
 * the agent's whole stderr is the init's one exec-failure line (nothing of
 * the agent ran, so nothing else was written). *not_found: the argv's
 * executable was not found in the image.
 */
bool ag_run_init_exec_failed(int exit_status, const char *out, size_t out_len, const char *err,
			     size_t err_len, bool *not_found);

#endif
