/*
 * patch.h: the agent's work as a git-style patch (changes.patch).
 *
 * From a run's captured changes, a unified diff in git's format: renames
 * ("rename from/to"), mode changes ("old mode/new mode"), added and
 * deleted files ("new file mode", "deleted file mode"), symbolic links
 * (mode 120000), binary files as git binary patches (full index line), and
 * "\ No newline at end of file". Hunks come from libgit2's buffer diff
 * (git_patch_from_buffers): no repository, no config, no diff drivers or
 * filters, so nothing in the agent's tree can steer it. The headers are
 * written here, with git's path quoting.
 *
 * The old side is read beneath old_rootfd (the source repository, which
 * the run proves unchanged), the new side beneath new_rootfd (the
 * workspace), each path component opened with O_NOFOLLOW. Directories are
 * not representable in a git patch: their files are, an empty directory is
 * counted in dirs_skipped. Bounded: each side of a file and the total read
 * by AG_PATCH_MAX_INPUT_BYTES, the patch by AG_PATCH_MAX_BYTES (reasons
 * limit.patch.input, limit.patch.size). The content is the agent's and is
 * never applied or executed by AgentGuard.
 */
#ifndef AG_WS_PATCH_H
#define AG_WS_PATCH_H

#include "lib/base/ag.h"

/* The file beside the run's artifact. */
#define AG_RUN_PATCH_FILE "changes.patch"

struct ag_error;
struct ag_buf;
struct ag_ws_mutations;

struct ag_patch_stats {
	size_t files;	     /* file sections in the patch */
	size_t binary;	     /* of which git binary patches */
	size_t dirs_skipped; /* directory changes (not representable) */
	uint64_t bytes_read; /* old + new content read */
};

/* Appends the patch of m to out (bounded by out's own limit). */
int ag_patch_build(int old_rootfd, int new_rootfd, const struct ag_ws_mutations *m,
		   struct ag_buf *out, struct ag_patch_stats *st, struct ag_error **err);

/*
 * Why a run has no changes.patch, for people: a sentence for the artifact's
 * patch status and reason ("omitted" and "patch.secret_scan": "withheld: the
 * secret scan found a secret in the agent's changed files"). Never NULL.
 */
const char *ag_patch_why_missing(const char *status, const char *reason);

#endif
