/*
 * record.c: the run record's life (record.h). The pipeline fills it; this
 * file only starts and ends it.
 */
#include "lib/base/ag.h"
#include "lib/run/record.h"
#include "lib/run/contained_run.h"

void ag_run_record_init(struct ag_run_record *r, const struct ag_run_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->opts = o;
	if (o && o->net && o->net->bind)
		o->net->bind(o->net->data, &r->study, &r->ledger.objects);
}

void ag_run_record_release(struct ag_run_record *r)
{
	free(r->run_id);
	free(r->failure.message);
	free(r->failure.cleanup_message);
	if (r->preflight.ran)
		ag_preflight_result_release(&r->preflight.result);
	free(r->ledger.suffix);
	free(r->ledger.container_name);
	ag_ledger_release(&r->ledger.objects);
	free(r->container.bound_image_id);
	json_decref(r->container.verified_controls);
	free(r->workspace.exclude_counts);
	free(r->exec.stdout_text);
	free(r->exec.stderr_text);
	if (r->mutations.ok)
		ag_ws_mutations_release(&r->mutations.mut);
	ag_checks_release(&r->checks.checks);
	ag_strv_release(&r->source.diff);
	json_decref(r->study.selftest);
	json_decref(r->study.env_additions);
	json_decref(r->study.injection);
	memset(r, 0, sizeof(*r));
}

const char *ag_run_ws_status_name(enum ag_run_ws_status s)
{
	static const char *const names[AG_RUN_WS__COUNT] = {
	    [AG_RUN_WS_NOT_PREPARED] = "not_prepared", [AG_RUN_WS_PREPARED] = "prepared",
	    [AG_RUN_WS_REMOVED] = "removed",	       [AG_RUN_WS_RETAINED] = "retained",
	    [AG_RUN_WS_INCOMPLETE] = "incomplete",
	};
	return (unsigned)s < AG_RUN_WS__COUNT ? names[s] : "incomplete";
}

const char *ag_run_outcome_name(enum ag_run_outcome o)
{
	static const char *const names[AG_RUN_OUTCOME__COUNT] = {
	    [AG_RUN_OUTCOME_NONE] = NULL,
	    [AG_RUN_OUTCOME_EXITED] = "exited",
	    [AG_RUN_OUTCOME_TIMED_OUT] = "timed_out",
	    [AG_RUN_OUTCOME_CANCELLED] = "cancelled",
	    [AG_RUN_OUTCOME_OOM_KILLED] = "oom_killed",
	    [AG_RUN_OUTCOME_DOCKER_LAUNCH_FAILURE] = "docker_launch_failure",
	    [AG_RUN_OUTCOME_DOCKER_CLIENT_SIGNALED] = "docker_client_signaled",
	};
	return (unsigned)o < AG_RUN_OUTCOME__COUNT ? names[o] : NULL;
}

const char *ag_run_exec_status_name(enum ag_run_exec_status s)
{
	static const char *const names[AG_RUN_EXEC__COUNT] = {
	    [AG_RUN_EXEC_SKIPPED] = "skipped",
	    [AG_RUN_EXEC_EXECUTED] = "executed",
	    [AG_RUN_EXEC_POLICY_BLOCKED] = "policy_blocked",
	    [AG_RUN_EXEC_PREFLIGHT_BLOCKED] = "preflight_blocked",
	};
	return (unsigned)s < AG_RUN_EXEC__COUNT ? names[s] : "unknown";
}

enum ag_run_exec_status ag_run_exec_status(const struct ag_run_record *r)
{
	if (r->failure.stage && strcmp(r->failure.stage, "preflight") == 0 && !r->exec.executed)
		return AG_RUN_EXEC_PREFLIGHT_BLOCKED;
	if (r->policy.blocked)
		return AG_RUN_EXEC_POLICY_BLOCKED;
	return r->exec.executed ? AG_RUN_EXEC_EXECUTED : AG_RUN_EXEC_SKIPPED;
}

const char *ag_run_patch_status_name(enum ag_run_patch_status s)
{
	static const char *const names[AG_RUN_PATCH__COUNT] = {
	    [AG_RUN_PATCH_NOT_CAPTURED] = "not_captured",
	    [AG_RUN_PATCH_WRITTEN] = "written",
	    [AG_RUN_PATCH_NONE] = "none",
	    [AG_RUN_PATCH_OMITTED] = "omitted",
	};
	return (unsigned)s < AG_RUN_PATCH__COUNT ? names[s] : "not_captured";
}

const struct ag_ledger_entry *ag_run_agent(const struct ag_run_record *r)
{
	static const struct ag_ledger_entry none = {
	    .role = AG_RUN_ROLE_AGENT,
	    .cleanup = {AG_CLEANUP_NOT_CREATED, false, true, "no container was created"},
	};
	const struct ag_ledger_entry *e = ag_ledger_find(&r->ledger.objects, AG_RUN_ROLE_AGENT);
	return e ? e : &none;
}

bool ag_run_record_score_known(const struct ag_run_record *r)
{
	return r->checks.ok && r->exec.agent_started;
}
