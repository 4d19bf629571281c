/*
 * deadline.c: the agent's in-container deadline (deadline.h).
 */
#include "lib/base/ag.h"
#include "lib/run/deadline.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"

#include <errno.h>

/* The lines src/init/agentguard-init.c writes when exec fails. */
static const char init_not_found[] = "agentguard-init: exec failed: not found\n";
static const char *const init_exec_failed[] = {
    init_not_found,
    "agentguard-init: exec failed: not executable\n",
    "agentguard-init: exec failed: failed\n",
};

const char *ag_deadline_by_name(enum ag_deadline_by by)
{
	switch (by) {
	case AG_DEADLINE_AGENTGUARD:
		return "agentguard";
	case AG_DEADLINE_INIT:
		return "agentguard_init";
	case AG_DEADLINE_NONE:
		break;
	}
	return NULL;
}

int64_t ag_run_init_deadline(int64_t timeout_seconds)
{
	return timeout_seconds + AG_RUN_INIT_GRACE_SECONDS;
}

int ag_run_init_verify(const char *path, char **canon, struct ag_error **err)
{
	struct ag_error *e = NULL;
	if (!path)
		return ag_err(err, AG_E_DOCKER, 0, "run.init_binary.missing",
			      "the agent's init (agentguard-init) is not installed beside "
			      "agentguard");
	if (ag_verify_root_file(path, canon, &e) == 0)
		return 0;
	bool unsafe = e->code == AG_E_UNVERIFIED;
	ag_error_free(e);
	if (unsafe)
		return ag_err(err, AG_E_UNVERIFIED, 0, "run.init_binary.unsafe",
			      "the agent's init is not a root-owned executable file that only root "
			      "can write, in root-owned directories");
	return ag_err(err, AG_E_DOCKER, 0, "run.init_binary.missing",
		      "the agent's init (agentguard-init) is not installed beside agentguard");
}

bool ag_run_init_deadline_held(int exit_status, uint64_t exec_ms, int64_t timeout_seconds)
{
	return exit_status == AG_INIT_EXIT_DEADLINE && timeout_seconds > 0 &&
	       exec_ms >= (uint64_t)timeout_seconds * 1000u;
}

bool ag_run_init_exec_failed(int exit_status, const char *out, size_t out_len, const char *err,
			     size_t err_len, bool *not_found)
{
	(void)out; /* only its length matters: the agent wrote nothing */
	*not_found = false;
	if ((exit_status != 126 && exit_status != 127) || out_len != 0 || !err)
		return false;
	for (size_t i = 0; i < AG_ARRAY_SIZE(init_exec_failed); i++) {
		size_t n = strlen(init_exec_failed[i]);
		if (err_len == n && memcmp(err, init_exec_failed[i], n) == 0) {
			*not_found = init_exec_failed[i] == init_not_found;
			return (*not_found && exit_status == 127) ||
			       (!*not_found && exit_status == 126);
		}
	}
	return false;
}
