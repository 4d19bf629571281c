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
	r->workspace.status = "not_prepared";
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
	memset(r, 0, sizeof(*r));
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
