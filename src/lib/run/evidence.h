/*
 * evidence.h (run): builds the contained-run v1 artifact and the
 * agentguard.containment-evidence v1 object it carries, from what one run
 * observed (docs/evidence.md).
 *
 * Requested intent and observed state are kept apart; every string passes
 * the redactor; host paths become portable roles (${REPOSITORY_ROOT},
 * ${RUN_ROOT}); container identity is recorded as short SHA-256 hashes;
 * environment names only, never values; no raw Docker argv or output.
 */
#ifndef AG_RUN_EVIDENCE_H
#define AG_RUN_EVIDENCE_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"

#include <jansson.h>

struct ag_config;
struct ag_env_resolved;
struct ag_redactor;
struct ag_preflight_result;
struct ag_ws_prepared;
struct ag_ws_mutations;
struct ag_cleanup_result;
struct ag_checks;

/* The run's changes.patch (docs/evidence.md, "patch"). */
struct ag_run_patch {
	const char *status; /* written, none, omitted, not_captured */
	const char *reason; /* omitted: static reason token; else NULL */
	char sha256[65];    /* written: SHA-256 of the file's bytes */
	uint64_t bytes;
	size_t files, binary, dirs_skipped;
};

struct ag_run_facts {
	const char *run_id;
	const struct ag_config *config;
	const char *const *argv;
	size_t argc;
	const struct ag_redactor *redact;
	const struct ag_env_resolved *env;
	const struct ag_preflight_result *pf; /* NULL: preflight did not run */
	const char *cli_version;
	bool policy_blocked;
	bool ws_prepared;
	const struct ag_ws_prepared *prep;
	const uint64_t *ws_exclude_counts; /* per config workspace.exclude pattern */
	const char *ws_status;
	const struct ag_ws_mutations *mut; /* NULL: not captured */
	bool source_checked, source_unchanged;
	const struct ag_strv *source_diff;
	size_t source_diff_total;
	const char *source_reason;
	const char *container_id, *container_name, *owner_label;
	const char *bound_image_id;
	bool verified;
	const json_t *verified_controls;
	bool fingerprint_checked, fingerprint_same;
	bool residue_before_ok;
	size_t residue_before;
	bool residue_after_ok;
	size_t residue_after, residue_ours_after;
	const struct ag_cleanup_result *cleanup;
	bool cleanup_complete;
	bool executed;	    /* `docker start` was run */
	bool agent_started; /* the container's process started (else: no score) */
	const char *outcome;
	int exit_status;
	bool oom_killed, timed_out, cancelled;
	const char *timeout_enforced_by;       /* static (run/deadline.h), NULL: no timeout */
	int64_t init_deadline_seconds;	       /* the in-container deadline, 0: no init */
	const char *stdout_text, *stderr_text; /* already redacted and bounded */
	bool stdout_truncated, stderr_truncated;
	uint64_t stdout_bytes, stderr_bytes; /* bytes the agent wrote to each stream */
	uint64_t exec_ms, duration_ms;
	bool pass;
	int exit_code;
	const struct ag_checks *checks; /* NULL: not evaluated (empty `checks`, score 0) */
	const char *stage, *reason, *message;
	const char *cleanup_reason, *cleanup_message;
	const struct ag_run_patch *patch; /* NULL: not_captured */
};

/* The whole contained-run.json object (new reference). */
json_t *ag_run_artifact_build(const struct ag_run_facts *f);

/* First 16 hex digits of SHA-256(s): identities recorded without the value. */
void ag_short_hash(const char *s, char out[17]);

#endif
