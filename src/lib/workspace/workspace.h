/*
 * workspace.h: the contained workspace lifecycle: prepare (transactional
 * copy + fixed baseline), ownership metadata, owned cleanup.
 *
 * Layout below the lifecycle root (an open directory fd owned by the
 * caller), for run id ID:
 *
 *   ID.preparing/            staging, mode 0700, renamed into place
 *   ID/workspace/            the only tree the agent will ever see
 *   ID/evidence/             AgentGuard's, never mounted
 *        workspace-metadata.json   ownership metadata (sorted keys)
 *        baseline.txt              fixed baseline (format in docs/workspace.md)
 *        baseline-text.bin         retained baseline text for line diffs
 *
 * Nothing written records an absolute host path; errors name paths only
 * by their (escaped, bounded) relative path inside the tree.
 */
#ifndef AG_WS_WORKSPACE_H
#define AG_WS_WORKSPACE_H

#include "lib/base/ag.h"
#include "lib/base/sha256.h"
#include "lib/base/strv.h"
#include "lib/workspace/gitinfo.h"
#include "lib/workspace/snapshot.h"

struct ag_error;

#define AG_WS_AGENT_MOUNT "/agentguard-workspace"
#define AG_WS_EVIDENCE_MOUNT "/agentguard-evidence"
#define AG_WS_METADATA_FILE "workspace-metadata.json"
#define AG_WS_BASELINE_FILE "baseline.txt"
#define AG_WS_TEXT_FILE "baseline-text.bin"

struct ag_ws_prepare_opts {
	const struct ag_ws_limits *limits; /* NULL: defaults from bounds.h */
	const char *const *writable_paths; /* NULL: {"."} */
	size_t nwritable;
	const char *agent_mount;    /* NULL: AG_WS_AGENT_MOUNT */
	const char *evidence_mount; /* NULL: AG_WS_EVIDENCE_MOUNT */
	unsigned threads;	    /* 0: 2 */
	ag_ws_hook_fn after_walk;   /* tests: between walk and copy */
	void *hook_ctx;
	ag_ws_progress_fn progress; /* may be NULL: the copy's progress (snapshot.h) */
	void *progress_ctx;
	/* skip a real `.agentguard/` directory at the source root (the caller's
	 * runs root); recorded in the metadata as excluded_paths */
	bool exclude_agentguard_root;
	unsigned git_timeout_ms; /* the git reader; 0: AG_WS_GIT_TIMEOUT_MS */
	/*
	 * What is copied (docs/workspace.md, "What is copied"). In a git
	 * source: tracked files and untracked files no ignore rule matches,
	 * unless include_ignored. Then every entry matching one of the exclude
	 * patterns is left out (a directory with all below it); exclude_match
	 * decides a match (1), no match (0) or cannot decide (-1: fails
	 * closed). exclude_counts (nexclude, may be NULL) receives the entries
	 * each pattern left out.
	 */
	bool include_ignored;
	const char *const *exclude;
	size_t nexclude;
	int (*exclude_match)(const char *pattern, const char *path);
	uint64_t *exclude_counts;
	/* write the agent's git repository into the copy (gitbase.h, config
	 * workspace.git: baseline); its commit goes to prepared.git_baseline */
	bool git_baseline;
};

struct ag_ws_prepared {
	enum ag_ws_source_kind source_kind;
	char digest[AG_SHA256_HEX_LEN + 1]; /* SHA-256 of evidence/baseline.txt */
	char git_head[65];
	uint64_t entries, files, total_bytes, text_bytes;
	bool git_copy_rule;	   /* tracked + untracked-not-ignored applied */
	char git_baseline[41];	   /* the workspace repository's commit, "" when none */
	uint64_t excluded_ignored; /* entries git's ignore rules left out (a dir counts once) */
};
/* The copy rule's name for evidence: "git-tracked-and-unignored" or "all-files". */
const char *ag_ws_copy_rule_name(const struct ag_ws_prepared *p);
/*
 * The `copy` evidence object (metadata and artifact): rule,
 * excluded_ignored_entries, exclude [{pattern, excluded_entries}].
 * counts may be NULL (all 0); pattern_json (NULL: a plain JSON string)
 * makes each pattern's value, e.g. redacted.
 */
struct json_t;
struct json_t *ag_ws_copy_json(const struct ag_ws_prepared *p, const char *const *patterns,
			       size_t n, const uint64_t *counts,
			       struct json_t *(*pattern_json)(const char *pattern, void *ctx),
			       void *ctx);

/*
 * A snapshot of the source under the same copy rules as ag_ws_prepare
 * (no copy, no baseline): what the source holds now, to compare with the
 * baseline. The git facts are read again (AG_WS_GIT_PATHS only).
 */
int ag_ws_source_snapshot(int srcfd, const struct ag_ws_prepare_opts *opts,
			  struct ag_ws_snapshot *out, struct ag_error **err);

/*
 * Validates a run id: 1..AG_WS_ID_MAX bytes of [A-Za-z0-9._-], not
 * starting with '.' or '-', not ending in ".preparing".
 */
int ag_ws_id_validate(const char *id, struct ag_error **err);

/*
 * Normalises agent-visible writable paths: each relative, '/'-separated,
 * no empty, "." or ".." component (a trailing '/' is dropped), not
 * reserved (nor a prefix collision) in any component, unique, no
 * ancestor/descendant overlap, and "." only as the sole path. Sorted.
 * Reasons: workspace.writable.invalid, .reserved, .duplicate, .overlap,
 * .root_not_alone.
 */
int ag_ws_writable_normalise(const char *const *in, size_t n, struct ag_strv *out,
			     struct ag_error **err);

/* Mount points: absolute, normalised, not "/", neither inside the other. */
int ag_ws_mounts_validate(const char *agent_mount, const char *evidence_mount,
			  struct ag_error **err);

/*
 * Prepares run `id` below rootfd from the source directory srcfd: git
 * evidence first, then walk + copy + baseline into ID.preparing, then an
 * atomic rename to ID. On failure the staging tree is removed; if that
 * removal fails the error is workspace.rollback_failed. An existing ID or
 * ID.preparing is workspace.exists (nothing is touched).
 */
int ag_ws_prepare(int srcfd, int rootfd, const char *id, const struct ag_ws_prepare_opts *opts,
		  struct ag_ws_prepared *out, struct ag_error **err);

/* A parsed baseline (evidence/baseline.txt). */
struct ag_ws_baseline {
	enum ag_ws_source_kind source_kind;
	char git_head[65];
	struct ag_ws_gitinfo git;
	struct ag_ws_snapshot snap;
	char digest[AG_SHA256_HEX_LEN + 1];
};
void ag_ws_baseline_release(struct ag_ws_baseline *b);

/*
 * Loads and verifies the baseline of run `id`: the metadata must be
 * well-formed and name the baseline digest; the baseline file's SHA-256
 * must equal it and, when expected_digest is non-NULL, equal that too
 * (reason workspace.baseline_mismatch); a malformed file is
 * workspace.baseline_corrupt.
 */
int ag_ws_baseline_load(int rundirfd, const char *expected_digest, struct ag_ws_baseline *b,
			struct ag_error **err);

/* Opens rootfd/id as a real directory (no symlink), O_RDONLY|O_DIRECTORY. */
int ag_ws_open_run(int rootfd, const char *id, struct ag_error **err);

struct ag_ws_cleanup_report {
	bool complete;
	uint64_t removed;   /* entries removed */
	uint64_t remaining; /* entries that could not be removed or were not owned */
};

/*
 * Removes exactly the cleanup targets recorded in the run's metadata
 * (workspace/, evidence/, then the run directory itself only when it is
 * then empty), never following a link. Anything not recorded stays.
 * Returns 0 when complete; otherwise workspace.cleanup_incomplete
 * (AG_E_CLEANUP) with the report filled either way. A missing run is
 * workspace.not_found.
 */
int ag_ws_cleanup(int rootfd, const char *id, struct ag_ws_cleanup_report *rep,
		  struct ag_error **err);

/*
 * fd-relative removal of dirfd/name, never following links, at any depth:
 * iterative with constant stack and at most two directory fds (it climbs
 * back through ".." and checks that it reached the recorded parent).
 * Directories without owner rwx are made so first. Returns 0, or -1 with
 * *remaining counting what stayed. Exposed for rollback tests.
 */
int ag_ws_remove_tree(int dirfd, const char *name, uint64_t *removed, uint64_t *remaining);

#endif
