/*
 * record.h: the run record. Everything one contained run (or study-egress
 * run) observed lives here, in one struct with one owner: the pipeline
 * (pipeline.c) fills it stage by stage, the artifact builder (evidence.c)
 * renders it, and the CLI reads it to print its summary. Nothing is copied
 * out of it into another struct of facts.
 *
 * Each part belongs to the stage that writes it; a part a stage never
 * reached keeps its zero value (its `ran`/`ok`/`checked` flag false).
 * Strings marked static are the library's own words (reason tokens, state
 * names); the CLI turns them into display text.
 */
#ifndef AG_RUN_RECORD_H
#define AG_RUN_RECORD_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/docker/ledger.h"
#include "lib/docker/preflight.h"
#include "lib/policy/checks.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/workspace.h"

#include <jansson.h>

struct ag_run_opts;

/* Why the run failed: the first failure wins (stage names: pipeline.h). */
struct ag_run_failure {
	const char *stage; /* static, NULL: no failure */
	const char *reason;
	int exit_code;
	char *message;		    /* redacted, bounded */
	const char *cleanup_reason; /* a cleanup failure besides the primary one */
	char *cleanup_message;
	bool net_cleanup_failed; /* the network hooks' own objects (study) */
};

struct ag_run_preflight {
	bool ran;
	struct ag_preflight_result result; /* valid when ran */
};

struct ag_run_policy {
	bool blocked;
	const char *match; /* the configured unsafe_commands entry (not secret) */
};

/* Who a run's container must be: its name and both owner labels. */
struct ag_run_owner {
	struct ag_label_expect labels[2];
	struct ag_container_owner owner;
};

/* The ledger's roles of the run's objects: the agent container, and the
 * study's (study.h) gateway, self-test probe and networks. */
#define AG_RUN_ROLE_AGENT "agent"
#define AG_RUN_ROLE_GATEWAY "gateway"
#define AG_RUN_ROLE_STUDY_PROBE "study_probe"
#define AG_RUN_ROLE_STUDY_NETWORK "study_network"
#define AG_RUN_ROLE_OUTBOUND_NETWORK "outbound_network" /* only when AgentGuard made it */

/* The run's own Docker objects (the ledger: one entry per object, the agent
 * first) and the residue census by label. */
struct ag_run_ledger {
	char *suffix;	      /* lowercased tail of the run id: names and the run label */
	char *container_name; /* agentguard-<suffix> */
	struct ag_run_owner own;
	struct ag_ledger objects;
	bool residue_before_ok, residue_after_ok;
	size_t residue_before, residue_after, residue_ours_after;
	bool cleanup_complete; /* container, residue, workspace and network objects */
};

/* The agent container as inspected after create, and the daemon re-check. */
struct ag_run_container {
	char *bound_image_id;
	bool verified;
	json_t *verified_controls;
	bool fingerprint_checked, fingerprint_same;
};

/*
 * The run's state words. Each enum has one translation (its _name
 * function, record.c) into the evidence word, and every value up to its
 * __COUNT is rendered into an artifact and validated against the schemas
 * in tests/unit/test_evidence_words.c.
 */

/* What became of the run's workspace (cleanup.workspace_status). */
enum ag_run_ws_status {
	AG_RUN_WS_NOT_PREPARED = 0,
	AG_RUN_WS_PREPARED,
	AG_RUN_WS_REMOVED,
	AG_RUN_WS_RETAINED,
	AG_RUN_WS_INCOMPLETE,
	AG_RUN_WS__COUNT
};
const char *ag_run_ws_status_name(enum ag_run_ws_status s);

/* How the agent's command ended (command_result.outcome); NONE: it did not
 * run (null in the evidence, and NULL from the name function). */
enum ag_run_outcome {
	AG_RUN_OUTCOME_NONE = 0,
	AG_RUN_OUTCOME_EXITED,
	AG_RUN_OUTCOME_TIMED_OUT,
	AG_RUN_OUTCOME_CANCELLED,
	AG_RUN_OUTCOME_OOM_KILLED,
	AG_RUN_OUTCOME_DOCKER_LAUNCH_FAILURE,
	AG_RUN_OUTCOME_DOCKER_CLIENT_SIGNALED,
	AG_RUN_OUTCOME__COUNT
};
const char *ag_run_outcome_name(enum ag_run_outcome o);

/* Whether the agent's command ran, and if not what stopped it
 * (containment_evidence.execution.status): ag_run_exec_status. */
enum ag_run_exec_status {
	AG_RUN_EXEC_SKIPPED = 0,
	AG_RUN_EXEC_EXECUTED,
	AG_RUN_EXEC_POLICY_BLOCKED,
	AG_RUN_EXEC_PREFLIGHT_BLOCKED,
	AG_RUN_EXEC__COUNT
};
const char *ag_run_exec_status_name(enum ag_run_exec_status s);

/* The run's changes.patch (patch.status). */
enum ag_run_patch_status {
	AG_RUN_PATCH_NOT_CAPTURED = 0,
	AG_RUN_PATCH_WRITTEN,
	AG_RUN_PATCH_NONE,
	AG_RUN_PATCH_OMITTED,
	AG_RUN_PATCH__COUNT
};
const char *ag_run_patch_status_name(enum ag_run_patch_status s);

struct ag_run_workspace {
	bool prepared;
	struct ag_ws_prepared prep;
	enum ag_run_ws_status status;
	uint64_t *exclude_counts;   /* per config workspace.exclude pattern */
	const char *capture_reason; /* static: why the capture failed, or NULL */
};

struct ag_run_exec {
	bool executed;	    /* attach + start was attempted */
	bool agent_started; /* ... and the container's process actually started */
	enum ag_run_outcome outcome;
	int exit_status; /* -1: none of its own */
	bool oom_killed, timed_out, cancelled;
	const char *timeout_enforced_by; /* static (run/deadline.h), NULL: no timeout */
	int64_t init_deadline_seconds;	 /* the in-container deadline, 0: no init */
	char *stdout_text, *stderr_text; /* redacted, bounded */
	bool stdout_truncated, stderr_truncated;
	uint64_t stdout_bytes, stderr_bytes; /* what the agent wrote, kept or not */
	uint64_t ms;
};

struct ag_run_mutations {
	bool ok; /* the workspace capture succeeded */
	struct ag_ws_mutations mut;
};

struct ag_run_checks {
	bool ok; /* evaluated */
	struct ag_checks checks;
};

struct ag_run_source {
	bool checked, unchanged;
	struct ag_strv diff; /* display paths, bounded */
	size_t diff_total;
	const char *reason; /* static, NULL when checked */
};

/* The run's changes.patch (docs/evidence.md, "patch"). */
struct ag_run_patch {
	bool recorded;			 /* false: not_captured */
	enum ag_run_patch_status status; /* written, none, omitted once recorded */
	const char *reason;		 /* omitted: static reason token; else NULL */
	char sha256[65];		 /* written: SHA-256 of the file's bytes */
	uint64_t bytes;
	size_t files, binary, dirs_skipped;
};

/*
 * Wall time of each stage in ms (0: the stage did not run). The preflight
 * includes the engine connection and overlaps workspace and container;
 * container is create + verification; execution is attach to stream end.
 */
struct ag_run_timings {
	uint64_t policy, preflight, workspace, container, execution, cleanup, capture, checks,
	    evidence, total;
};

/* The verdict and what became of the artifact. */
struct ag_run_result {
	bool pass;
	int exit_code;
	bool artifact_written;
	bool seal_failed;	 /* the artifact exists but could not be sealed */
	const char *chain_start; /* static (seal.h), NULL when linked */
	uint64_t duration_ms;
};

/* One of the gateway's evidence files as kept in the run directory. */
struct ag_run_study_file {
	bool present;
	int64_t bytes;
	char sha256[65];
};

/* The study-egress extension (study.h): what the study observed. Its
 * objects (gateway, self-test probe, networks) are entries of the run's
 * ledger (AG_RUN_ROLE_*): their ids and cleanup are read from there. */
struct ag_run_study {
	bool present;					      /* a study run */
	const char *trial_id, *policy_digest, *gateway_image; /* borrowed from its options */
	const char *study_subnet; /* the study network's subnet, given or chosen (borrowed) */
	bool setup_done, verified;
	json_t *selftest;	   /* the probe's line, as judged */
	const char *gateway_state; /* static: running crashed not_started */
	bool stream_read, stream_complete, stream_truncated;
	size_t events, denied; /* requests judged, of which denied (the aggregates') */
	int64_t sampled_out;   /* decision records the gateway left out of the stream */
	struct ag_run_study_file stream_file, aggregates_file;
	char manifest_sha[65];
	bool manifest_written;
	const char *completion, *completion_reason;
	bool cleanup_complete;
	/* owned: the names the study adds to the agent's environment (a
	 * list), and credential injection's record (an object; NULL: none) */
	json_t *env_additions, *injection;
};

struct ag_run_record {
	const struct ag_run_opts *opts; /* what was requested (borrowed) */
	char *run_id;
	struct ag_run_failure failure;
	struct ag_run_policy policy;
	struct ag_run_preflight preflight;
	struct ag_run_ledger ledger;
	struct ag_run_container container;
	struct ag_run_workspace workspace;
	struct ag_run_exec exec;
	struct ag_run_mutations mutations;
	struct ag_run_checks checks;
	struct ag_run_source source;
	struct ag_run_patch patch;
	struct ag_run_timings timings;
	struct ag_run_result result;
	struct ag_run_study study;
};

void ag_run_record_init(struct ag_run_record *r, const struct ag_run_opts *o);
void ag_run_record_release(struct ag_run_record *r);

/* The agent container's ledger entry (a not-created one when the run never
 * got that far). */
const struct ag_ledger_entry *ag_run_agent(const struct ag_run_record *r);

/* What the record says of the command's execution (enum ag_run_exec_status). */
enum ag_run_exec_status ag_run_exec_status(const struct ag_run_record *r);

/* The score is shown only when the agent ran and the checks were evaluated. */
bool ag_run_record_score_known(const struct ag_run_record *r);

#endif
