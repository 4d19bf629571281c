/*
 * pipeline.c: the contained run as one table of stages and one driver
 * (pipeline.h). The stages live in contained_run.c; the verdict and the
 * evidence stages (artifact, seal, marker) live here, beside the failure
 * table whose names and exit codes every stage uses.
 */
#include "lib/base/ag.h"
#include "lib/run/pipeline.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/exit.h"
#include "lib/base/redact.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/seal.h"
#include "lib/run/evidence.h"

#include <stddef.h>
#include <time.h>

/* ---- failures: what each is called in the evidence, and its exit code ---- */

static const struct {
	const char *name;
	int exit_code;
} fail_table[AG_FAIL__COUNT] = {
    [AG_FAIL_POLICY] = {"policy", AG_EXIT_POLICY},
    [AG_FAIL_PREFLIGHT] = {"preflight", AG_EXIT_PREFLIGHT},
    [AG_FAIL_WORKSPACE] = {"workspace_prep", AG_EXIT_WORKSPACE},
    [AG_FAIL_DOCKER] = {"docker", AG_EXIT_DOCKER},
    [AG_FAIL_TIMEOUT] = {"timeout", AG_EXIT_TIMEOUT},
    [AG_FAIL_CANCELLED] = {"cancelled", AG_EXIT_SIGNAL_BASE},
    [AG_FAIL_CLEANUP] = {"cleanup", AG_EXIT_CLEANUP},
    [AG_FAIL_EVIDENCE] = {"evidence", AG_EXIT_WORKSPACE},
    [AG_FAIL_EGRESS] = {"egress", AG_EXIT_FAIL},
};

const char *ag_run_fail_name(enum ag_run_fail_kind k)
{
	return k < AG_FAIL__COUNT ? fail_table[k].name : "run";
}

int ag_run_fail_exit(enum ag_run_fail_kind k)
{
	return k < AG_FAIL__COUNT ? fail_table[k].exit_code : AG_EXIT_FAIL;
}

uint64_t ag_run_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void ag_run_fail(struct ag_run_ctx *c, enum ag_run_fail_kind k, int exit_code, const char *reason,
		 const char *fmt, ...)
{
	struct ag_run_failure *f = &c->rec->failure;
	if (f->stage)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = ag_xvasprintf(fmt, ap);
	va_end(ap);
	f->stage = ag_run_fail_name(k);
	f->exit_code = exit_code ? exit_code : ag_run_fail_exit(k);
	f->reason = reason;
	f->message = ag_redact(c->o->redact, m, strlen(m), AG_PF_DIAGNOSTIC_MAX_BYTES, 0, NULL);
	free(m);
}

void ag_run_fail_err(struct ag_run_ctx *c, enum ag_run_fail_kind k, int exit_code,
		     const struct ag_error *e)
{
	ag_run_fail(c, k, exit_code, e->reason, "%s", e->msg);
}

/* ---- the verdict ---- */

/* Cleanup is complete only when the container, the residue by label, the
 * workspace and the network hooks' objects are all verified gone. */
int ag_stage_cleanup_verdict(struct ag_run_ctx *c)
{
	struct ag_run_record *r = c->rec;
	struct ag_run_ledger *l = &r->ledger;
	const struct ag_ledger_entry *agent = ag_run_agent(r);
	bool container_ok = ag_cleanup_state_complete(agent->cleanup.state);
	bool residue_ok = !l->residue_after_ok
			      ? !(agent->attempted ||
				  (r->preflight.ran && ag_preflight_passed(&r->preflight.result)))
			      : l->residue_ours_after == 0;
	bool ws_ok = r->workspace.status != AG_RUN_WS_INCOMPLETE;
	l->cleanup_complete = container_ok && residue_ok && ws_ok && !r->failure.net_cleanup_failed;
	if (l->cleanup_complete)
		return 0;
	const char *why = !container_ok ? "cleanup.container"
			  : !residue_ok ? "cleanup.residue"
			  : !ws_ok	? "cleanup.workspace"
					: "cleanup.study_egress";
	char *msg = ag_xasprintf("cleanup not verified: container %s, residue %s, workspace %s",
				 ag_cleanup_state_name(agent->cleanup.state),
				 residue_ok ? "none" : "present or unknown",
				 ag_run_ws_status_name(r->workspace.status));
	if (!r->failure.stage) {
		ag_run_fail(c, AG_FAIL_CLEANUP, 0, why, "%s", msg);
		free(msg);
	} else {
		r->failure.cleanup_reason = why;
		r->failure.cleanup_message = msg;
	}
	return 0;
}

/* verdict: no failure stage, checks pass, cleanup complete, capture ok */
static int stage_verdict(struct ag_run_ctx *c)
{
	struct ag_run_record *r = c->rec;
	const struct ag_checks *ck = &r->checks.checks;
	bool tests_passed = r->checks.ok && ck->v[AG_CK_TESTS_PASSED].passed;
	bool checks_pass = r->checks.ok && ck->pass;
	r->result.pass =
	    !r->failure.stage && checks_pass && r->ledger.cleanup_complete && r->mutations.ok;
	r->result.exit_code = r->failure.stage ? r->failure.exit_code
			      : r->result.pass ? AG_EXIT_PASS
					       : AG_EXIT_FAIL;
	/* a failing verdict without a failing stage still names its reason */
	if (!r->failure.stage && r->exec.executed && !tests_passed)
		r->failure.reason = "run.agent_failed";
	else if (!r->failure.stage && !checks_pass)
		r->failure.reason = "run.checks_failed";
	r->exec.timed_out = r->exec.executed && r->exec.outcome == AG_RUN_OUTCOME_TIMED_OUT;
	r->exec.cancelled = r->exec.outcome == AG_RUN_OUTCOME_CANCELLED;
	r->result.duration_ms = ag_run_now_ms() - c->started_ms;
	return 0;
}

/* ---- the evidence ---- */

/* A late failure (recorded in the record) makes the verdict fail: rebuild. */
static void rebuild_failed(struct ag_run_ctx *c)
{
	c->rec->result.pass = false;
	c->rec->result.exit_code = c->rec->failure.exit_code;
	json_decref(c->artifact);
	c->artifact = ag_run_artifact_build(c->rec);
}

/* CONTRACT: evidence.bounds (the containment object keeps its own, tighter bounds) */
static int stage_artifact(struct ag_run_ctx *c)
{
	struct ag_error *e = NULL;
	c->artifact = ag_run_artifact_build(c->rec);
	if (ag_canon_check(json_object_get(c->artifact, "containment_evidence"),
			   &ag_canon_containment_bounds, &e) == 0)
		return 0;
	ag_run_fail_err(c, AG_FAIL_EVIDENCE, 0, e);
	ag_error_free(e);
	e = NULL;
	rebuild_failed(c);
	/* Still over its bounds: record that the object is unavailable. */
	if (ag_canon_check(json_object_get(c->artifact, "containment_evidence"),
			   &ag_canon_containment_bounds, &e) < 0) {
		json_object_set_new(c->artifact, "containment_evidence",
				    json_pack("{s:s, s:i, s:s, s:s}", "schema",
					      "agentguard.containment-evidence", "schema_version",
					      1, "state", "unavailable", "reason", e->reason));
		ag_error_free(e);
	}
	return 0;
}

static int stage_write(struct ag_run_ctx *c)
{
	struct ag_run_record *r = c->rec;
	struct ag_error *e = NULL;
	int wrc =
	    ag_run_write_json(c, AG_RUN_ARTIFACT_FILE, c->artifact, &ag_canon_artifact_bounds, &e);
	if (wrc < 0 && e->code == AG_E_LIMIT) {
		/*
		 * Over the artifact's bounds (the output caps should prevent it):
		 * the artifact is still written, without the captured output,
		 * which is recorded as truncated, and the run fails closed.
		 */
		ag_run_fail_err(c, AG_FAIL_EVIDENCE, 0, e);
		ag_error_free(e);
		e = NULL;
		free(r->exec.stdout_text);
		free(r->exec.stderr_text);
		r->exec.stdout_text = ag_xstrdup("");
		r->exec.stderr_text = ag_xstrdup("");
		r->exec.stdout_truncated = r->exec.stderr_truncated = true;
		rebuild_failed(c);
		wrc = ag_run_write_json(c, AG_RUN_ARTIFACT_FILE, c->artifact,
					&ag_canon_artifact_bounds, &e);
	}
	if (wrc == 0) {
		r->result.artifact_written = true;
	} else {
		ag_run_fail_err(c, AG_FAIL_EVIDENCE, 0, e);
		r->result.pass = false;
	}
	ag_error_free(e);
	return 0;
}

/* CONTRACT: evidence.tamper_evident (seal + signature + chain in the runs root) */
static int stage_seal(struct ag_run_ctx *c)
{
	struct ag_run_record *r = c->rec;
	const struct ag_run_opts *o = c->o;
	struct ag_seal_result sres = {0};
	struct ag_seal_opts so = {.key = o->signing_key, .cancel = o->cancel};
	struct ag_error *e = NULL;
	if (!r->result.artifact_written ||
	    ag_seal_run(o->runs_root_fd, r->run_id, AG_RUN_ARTIFACT_FILE, &so, &sres, &e) == 0) {
		r->result.chain_start = sres.chain_start;
		return 0;
	}
	/*
	 * Unsealed evidence cannot be trusted later: fail closed and say so in
	 * the artifact itself (rewritten). When only the chain lock was out of
	 * reach (held too long, or the run was cancelled while waiting) the
	 * rewritten artifact is still sealed and signed, outside the chain, so
	 * it stays attributable; otherwise it stays unsealed.
	 */
	bool cancelled = strcmp(e->reason, "evidence.seal.cancelled") == 0;
	const char *unchained = cancelled ? "cancelled"
				: strcmp(e->reason, "evidence.seal.lock_timeout") == 0
				    ? "lock_timeout"
				    : NULL;
	if (cancelled)
		ag_run_fail(c, AG_FAIL_CANCELLED, AG_EXIT_SIGNAL_BASE + (int)*o->cancel, e->reason,
			    "%s", e->msg);
	else
		ag_run_fail_err(c, AG_FAIL_EVIDENCE, 0, e);
	ag_error_free(e);
	e = NULL;
	rebuild_failed(c);
	if (ag_run_write_json(c, AG_RUN_ARTIFACT_FILE, c->artifact, &ag_canon_artifact_bounds,
			      &e) == 0 &&
	    unchained &&
	    ag_seal_run_unchained(o->runs_root_fd, r->run_id, AG_RUN_ARTIFACT_FILE, o->signing_key,
				  unchained, &e) == 0)
		r->result.chain_start = unchained;
	else
		r->result.seal_failed = true;
	ag_error_free(e);
	return 0;
}

static int stage_marker(struct ag_run_ctx *c)
{
	struct ag_run_record *r = c->rec;
	(void)ag_run_write_marker(c, r->ledger.cleanup_complete ? "complete" : "retained");
	if (r->failure.stage) {
		r->result.pass = false;
		r->result.exit_code = r->failure.exit_code;
	}
	return 0;
}

/* ---- the table and its driver ---- */

#define SLOT(field) offsetof(struct ag_run_timings, field)
#define NO_SLOT SIZE_MAX

/*
 * The run, in order. `always`: runs whatever happened before it; otherwise
 * only while no failure is recorded and the main line has not halted. The
 * slot is the timing the stage's wall time adds to (the preflight's verdict
 * sets the preflight's own: it overlaps workspace and container).
 */
static const struct ag_run_stage {
	const char *name;
	int (*fn)(struct ag_run_ctx *c);
	bool always;
	size_t slot;
} stages[] = {
    {"policy", ag_stage_policy, false, SLOT(policy)},
    {"preflight", ag_stage_preflight_start, false, SLOT(preflight)},
    {"residue", ag_stage_residue_before, false, SLOT(preflight)},
    {"probe", ag_stage_probe_wait, false, SLOT(preflight)},
    {"workspace", ag_stage_workspace, false, SLOT(workspace)},
    {"network", ag_stage_net_setup, false, SLOT(container)},
    {"create", ag_stage_create, false, SLOT(container)},
    {"network_verify", ag_stage_net_verify, false, SLOT(container)},
    {"preflight_verdict", ag_stage_preflight_finish, true, NO_SLOT},
    {"execution", ag_stage_start, false, SLOT(execution)},
    {"outcome", ag_stage_classify, true, SLOT(cleanup)},
    {"cleanup", ag_stage_cleanup_container, true, SLOT(cleanup)},
    {"capture", ag_stage_capture, true, SLOT(capture)},
    {"checks", ag_stage_checks, true, SLOT(checks)},
    {"source", ag_stage_source_integrity, true, SLOT(checks)},
    {"patch", ag_stage_patch, true, SLOT(checks)},
    {"workspace_cleanup", ag_stage_workspace_cleanup, true, SLOT(cleanup)},
    {"cleanup_verdict", ag_stage_cleanup_verdict, true, SLOT(cleanup)},
    {"verdict", stage_verdict, true, SLOT(evidence)},
    {"artifact", stage_artifact, true, SLOT(evidence)},
    {"write", stage_write, true, SLOT(evidence)},
    {"seal", stage_seal, true, SLOT(evidence)},
    {"marker", stage_marker, true, SLOT(evidence)},
};

static void drive(struct ag_run_ctx *c)
{
	for (size_t i = 0; i < AG_ARRAY_SIZE(stages); i++) {
		const struct ag_run_stage *s = &stages[i];
		if (!s->always && (c->rec->failure.stage || c->halted))
			continue;
		uint64_t t0 = ag_run_now_ms();
		if (s->fn(c) < 0)
			c->halted = true;
		if (s->slot != NO_SLOT)
			*(uint64_t *)((char *)&c->rec->timings + s->slot) += ag_run_now_ms() - t0;
	}
	c->rec->timings.total = ag_run_now_ms() - c->started_ms;
}

void ag_run_ctx_release(struct ag_run_ctx *c)
{
	json_decref(c->artifact);
	free(c->init_bin);
	if (c->pr_init)
		ag_engine_stream_release(&c->pr);
	if (c->eng_ok)
		ag_engine_close(&c->eng);
	if (c->lifecycle_fd >= 0)
		close(c->lifecycle_fd);
	if (c->run_fd >= 0)
		close(c->run_fd);
}

int ag_contained_run(const struct ag_run_opts *o, struct ag_run_record *rec, struct ag_error **err)
{
	ag_run_record_init(rec, o);
	struct ag_run_ctx c = {.o = o, .rec = rec, .run_fd = -1, .lifecycle_fd = -1};
	c.started_ms = ag_run_now_ms();
	int rc = ag_run_make_dir(&c, err);
	if (rc == 0)
		drive(&c);
	ag_run_ctx_release(&c);
	return rc;
}
