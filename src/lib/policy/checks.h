/*
 * checks.h: post-execution policy checks (upstream-reference 8,
 * docs/checks.md).
 *
 * Evaluated once per run, after the mutation capture and before the
 * workspace is removed, against: the captured mutations, the contained
 * command's result, the agent argv (unsafe-commands audit evidence), and
 * the workspace tree itself (secret content scan, read beneath its fd
 * without following links, bounded).
 *
 * Checks, in registry order (identifier / display name / default severity):
 *   tests-passed     "Tests passed"     error
 *   forbidden-paths  "Forbidden paths"  critical
 *   test-tampering   "Test tampering"   error
 *   unsafe-commands  "Unsafe commands"  critical
 *   scope-adherence  "Scope adherence"  warning
 *   diff-size        "Diff size"        warning
 *   secret-scan      "Secret scan"      critical
 * Severities are overridden by policy.<key>.severity. Score: 100 - 50 per
 * failed critical, -30 per failed error, -10 per failed warning, min 0.
 * Pass iff no failed check of severity error or critical.
 *
 * No message or evidence string ever carries matched secret content:
 * evidence names paths (escaped), line numbers, pattern text from
 * path-pattern lists and detector ids only.
 */
#ifndef AG_POLICY_CHECKS_H
#define AG_POLICY_CHECKS_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"

#include <jansson.h>

struct ag_ws_mutations;
struct ag_env_resolved;
struct ag_redactor;
struct ag_error;

enum ag_check_id {
	AG_CK_TESTS_PASSED = 0,
	AG_CK_FORBIDDEN_PATHS,
	AG_CK_TEST_TAMPERING,
	AG_CK_UNSAFE_COMMANDS,
	AG_CK_SCOPE_ADHERENCE,
	AG_CK_DIFF_SIZE,
	AG_CK_SECRET_SCAN,
	AG_CK__COUNT
};
const char *ag_check_name(enum ag_check_id id);	   /* "forbidden-paths" */
const char *ag_check_display(enum ag_check_id id); /* "Forbidden paths" */
enum ag_severity ag_check_default_severity(enum ag_check_id id);

/* Bounds of the secret content scan; defaults from bounds.h. Tests shrink them. */
struct ag_scan_limits {
	uint64_t max_files;
	uint64_t max_file_bytes;
	uint64_t max_total_bytes;
	uint64_t max_line_bytes;
	uint64_t max_matches;
	uint64_t max_per_detector_file;
};
void ag_scan_limits_default(struct ag_scan_limits *l);

struct ag_check_input {
	const struct ag_config *cfg;
	/* NULL: mutation evidence unavailable (change checks fail closed) */
	const struct ag_ws_mutations *mut;
	bool command_ran; /* false: the contained command never ran */
	int command_exit; /* its exit status when it ran */
	/*
	 * How it ended when not by its own exit ("was killed by the
	 * out-of-memory killer", "timed out", ...); NULL: it exited.
	 */
	const char *command_end;
	const char *command_label; /* evidence name; NULL: "contained-run" */
	const char *const *argv;   /* the agent argv (unsafe-commands audit) */
	size_t argc;
	bool policy_blocked; /* the argv was blocked before launch (enforce) */
	int workspace_fd;    /* the workspace tree for the content scan; -1: unavailable */
	/*
	 * The run's resolved environment: the values of its sensitive entries
	 * are searched for in the agent's changed files like a detector
	 * (id "configured-secret"); NULL: none. Only where they were found is
	 * recorded, never a value.
	 */
	const struct ag_env_resolved *env;
	const struct ag_scan_limits *limits; /* NULL: defaults */
	uint64_t pathmatch_max_steps;	     /* 0: AG_PATHMATCH_MAX_STEPS */
};

struct ag_check_result {
	enum ag_check_id id;
	bool evaluated; /* false: not applicable to this run, omitted */
	bool passed;
	enum ag_severity severity; /* effective, never AG_SEV_DEFAULT */
	char *message;
	struct ag_strv evidence; /* at most AG_CHECK_EVIDENCE_MAX_ITEMS */
	size_t evidence_total;	 /* how many there were */
};

/* One content match: where and which detector, never the text. */
struct ag_secret_match {
	char *path; /* escaped (ag_ws_path_display) */
	uint64_t line;
	const char *detector; /* built-in id, or the configured pattern id (owned by cfg) */
};

struct ag_content_scan {
	bool configured; /* any built-in detector or literal pattern */
	bool complete;
	const char *reason; /* static token when incomplete: policy.scan.* */
	uint64_t files_scanned, files_skipped_binary, files_skipped_rename, bytes_scanned;
	bool match_limit_reached;
	struct ag_secret_match *matches;
	size_t n_matches;
};

struct ag_checks {
	struct ag_check_result v[AG_CK__COUNT];
	int score;
	bool pass;
	const char *line_count_status; /* exact, binary, incomplete, unavailable */
	uint64_t changed_paths;	       /* a rename counts both ends */
	struct ag_content_scan scan;
};

/*
 * Evaluates every check. Never fails for a policy reason (a failing check
 * is a result); returns -1 only on an internal error.
 */
int ag_checks_evaluate(const struct ag_check_input *in, struct ag_checks *out,
		       struct ag_error **err);
void ag_checks_release(struct ag_checks *c);

/* Worst line-count status of a capture (unavailable > binary > incomplete > exact). */
const char *ag_checks_line_status(const struct ag_ws_mutations *m);

/*
 * The artifact's `checks` array: [{name, display_name, passed, severity,
 * message, evidence, evidence_total}], evaluated checks only, every
 * string passed through the redactor (may be NULL) and bounded. The
 * secret-scan entry also carries `content_scan` (ag_checks_scan_json).
 */
json_t *ag_checks_json(const struct ag_checks *c, const struct ag_redactor *r);
/* The secret content scan summary: status, counts, {path, line, detector} (no matched text). */
json_t *ag_checks_scan_json(const struct ag_checks *c, const struct ag_redactor *r);

#endif
