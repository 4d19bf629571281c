/*
 * pipeline.h (run, internal): the contained run as a table of stages over
 * one run record (record.h). pipeline.c holds the table and its one
 * driver; contained_run.c holds the stages. Each stage reads the run's
 * inputs and runtime handles from the context and writes what it observed
 * into its part of the record; a failure is recorded once (the first wins)
 * with its failure kind, whose name and exit code come from the failure
 * table.
 *
 * The driver runs every stage in order. A stage that is not "always" runs
 * only while no failure is recorded and nothing halted the main line; the
 * "always" stages (preflight verdict, cleanup, capture, checks, evidence)
 * run whatever happened before them.
 */
#ifndef AG_RUN_PIPELINE_H
#define AG_RUN_PIPELINE_H

#include "lib/base/ag.h"
#include "lib/docker/engine.h"
#include "lib/run/contained_run.h"
#include "lib/run/record.h"
#include "lib/workspace/workspace.h"

#include <jansson.h>
#include <pthread.h>

struct ag_error;
struct ag_canon_bounds;

/* What a failure is called in the evidence, and the exit code it gives. */
enum ag_run_fail_kind {
	AG_FAIL_POLICY = 0, /* policy          5 */
	AG_FAIL_PREFLIGHT,  /* preflight       3 */
	AG_FAIL_WORKSPACE,  /* workspace_prep  4 */
	AG_FAIL_DOCKER,	    /* docker          6 */
	AG_FAIL_TIMEOUT,    /* timeout         7 */
	AG_FAIL_CANCELLED,  /* cancelled       128+signal */
	AG_FAIL_CLEANUP,    /* cleanup         8 */
	AG_FAIL_EVIDENCE,   /* evidence        4 */
	AG_FAIL_EGRESS,	    /* egress          1 (8: a study object left behind) */
	AG_FAIL__COUNT,
};
const char *ag_run_fail_name(enum ag_run_fail_kind k);
int ag_run_fail_exit(enum ag_run_fail_kind k);

/* The preflight's own thread (it overlaps workspace and create). */
struct ag_pf_job {
	struct ag_run_ctx *c;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, probing, done;
	char *image_id; /* the verified local image id, from on_probe */
	int rc;
	struct ag_error *err;
};

/* The runtime around the record: inputs, handles, nothing observed. */
struct ag_run_ctx {
	const struct ag_run_opts *o;
	struct ag_run_record *rec;
	struct ag_engine eng;
	bool eng_ok;
	struct ag_ledger_entry *agent; /* the agent container's entry in rec->ledger.objects */
	int run_fd, lifecycle_fd;
	struct ag_ws_prepare_opts ws_opts; /* the copy rules: prepare and the source check */
	struct ag_engine_stream pr;	   /* the agent's attach stream */
	bool pr_init;
	struct ag_pf_job job;
	bool halted; /* the main line stopped without a failure of its own */
	uint64_t started_ms, pf_started_ms;
	json_t *artifact; /* being built, written and sealed */
	char *init_bin;	  /* the agent's verified init, bind-mounted read-only */
};

uint64_t ag_run_now_ms(void);

/* Records the primary failure (the first one wins); exit_code 0: the kind's. */
void ag_run_fail(struct ag_run_ctx *c, enum ag_run_fail_kind k, int exit_code, const char *reason,
		 const char *fmt, ...) AG_PRINTF(5, 6);
void ag_run_fail_err(struct ag_run_ctx *c, enum ag_run_fail_kind k, int exit_code,
		     const struct ag_error *e);

/* Run directory and marker (contained_run.c). */
int ag_run_make_dir(struct ag_run_ctx *c, struct ag_error **err);
int ag_run_write_marker(struct ag_run_ctx *c, const char *state);
int ag_run_write_json(struct ag_run_ctx *c, const char *name, json_t *v,
		      const struct ag_canon_bounds *b, struct ag_error **err);

/* The stages, in table order (contained_run.c, except the evidence ones). */
int ag_stage_policy(struct ag_run_ctx *c);
int ag_stage_preflight_start(struct ag_run_ctx *c);
int ag_stage_residue_before(struct ag_run_ctx *c);
int ag_stage_probe_wait(struct ag_run_ctx *c);
int ag_stage_workspace(struct ag_run_ctx *c);
int ag_stage_net_setup(struct ag_run_ctx *c);
int ag_stage_create(struct ag_run_ctx *c);
int ag_stage_net_verify(struct ag_run_ctx *c);
int ag_stage_preflight_finish(struct ag_run_ctx *c);
int ag_stage_start(struct ag_run_ctx *c);
int ag_stage_classify(struct ag_run_ctx *c);
int ag_stage_cleanup_container(struct ag_run_ctx *c);
int ag_stage_capture(struct ag_run_ctx *c);
int ag_stage_checks(struct ag_run_ctx *c);
int ag_stage_source_integrity(struct ag_run_ctx *c);
int ag_stage_patch(struct ag_run_ctx *c);
int ag_stage_workspace_cleanup(struct ag_run_ctx *c);
int ag_stage_cleanup_verdict(struct ag_run_ctx *c);

/* Releases what the stages hold (not the record). */
void ag_run_ctx_release(struct ag_run_ctx *c);

#endif
