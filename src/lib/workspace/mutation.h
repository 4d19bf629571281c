/*
 * mutation.h: capture of what the agent changed in a prepared workspace,
 * against the fixed baseline stored in evidence/.
 *
 * The workspace is walked with the same rules and bounds as preparation
 * (a `.git` anywhere is reserved-path spoofing and fails closed); nothing
 * the agent could have written is consulted except the tree itself.
 * Changes are counted in files and symlinks only (a directory is where
 * files are, never a change of its own; upstream-reference 6.3/6.5) and
 * classified by path: added, deleted, modified (kind, size,
 * SHA-256 or mode differ; a chmod alone is a modification), and renames:
 * a deleted and an added non-directory entry with identical kind, size,
 * SHA-256 and mode are paired only when that identity occurs exactly once
 * among the deleted and exactly once among the added entries.
 * Line counts are exact (Myers edit distance over lines of the retained
 * baseline text and the current file) or reported as binary/incomplete.
 */
#ifndef AG_WS_MUTATION_H
#define AG_WS_MUTATION_H

#include "lib/base/ag.h"
#include "lib/base/sha256.h"
#include "lib/workspace/snapshot.h"

struct ag_error;

enum ag_ws_change_kind {
	AG_WS_ADDED,
	AG_WS_DELETED,
	AG_WS_MODIFIED,
	AG_WS_RENAMED,
};
const char *ag_ws_change_name(enum ag_ws_change_kind k);

enum ag_ws_lines {
	AG_WS_LINES_EXACT,	    /* lines_added/lines_deleted are exact */
	AG_WS_LINES_BINARY,	    /* binary on either side: no line counts */
	AG_WS_LINES_INCOMPLETE,	    /* baseline text not retained or diff bound hit */
	AG_WS_LINES_NOT_APPLICABLE, /* directories and symlinks */
};
const char *ag_ws_lines_name(enum ag_ws_lines l);

struct ag_ws_change {
	enum ag_ws_change_kind kind;
	char *path;		    /* raw relative path (the new path for renames) */
	char *old_path;		    /* renames: the baseline path; else NULL */
	uint8_t old_kind, new_kind; /* enum ag_ws_kind, 0 when absent */
	enum ag_ws_lines lines;
	uint64_t lines_added, lines_deleted;
};

struct ag_ws_mutations {
	struct ag_ws_change *v; /* sorted by path */
	size_t n;
	size_t added, deleted, modified, renamed;
	uint64_t lines_added, lines_deleted; /* sums over EXACT changes */
	bool lines_complete;		     /* every text change has EXACT counts */
	char baseline_digest[AG_SHA256_HEX_LEN + 1];
	char current_digest[AG_SHA256_HEX_LEN + 1]; /* SHA-256 of the current entry lines */
	uint64_t entries;
};
void ag_ws_mutations_release(struct ag_ws_mutations *m);

struct ag_ws_capture_opts {
	const struct ag_ws_limits *limits; /* NULL: defaults from bounds.h */
	const char *expected_digest;	   /* the digest prepare returned; NULL: metadata's */
	unsigned threads;		   /* 0: 2 */
	ag_ws_hook_fn after_walk;	   /* tests: between walk and hashing */
	void *hook_ctx;
	ag_ws_progress_fn progress; /* may be NULL (snapshot.h) */
	void *progress_ctx;
	/* the workspace holds AgentGuard's baseline repository (gitbase.h):
	 * its top-level `.git` is the agent's, never entered (snapshot.h) */
	bool skip_root_git;
};

/* Captures the mutations of run `id` below rootfd. */
int ag_ws_capture(int rootfd, const char *id, const struct ag_ws_capture_opts *opts,
		  struct ag_ws_mutations *out, struct ag_error **err);

/*
 * Exact line edit counts between two byte buffers split at '\n' (a final
 * line without newline is a line). Returns 0 and fills added/deleted, or 1
 * when the bounds (AG_WS_DIFF_MAX_LINES, AG_WS_DIFF_MAX_COST) were hit.
 */
int ag_ws_line_diff(const char *a, size_t na, const char *b, size_t nb, uint64_t *added,
		    uint64_t *deleted);

#endif
