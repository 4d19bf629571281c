/*
 * walk.h: helpers for walking a YAML node tree against the config schema.
 *
 * A walk keeps the current key path ("contained_execution.environment[2]")
 * and turns every problem into an AG_E_CONFIG error located at the node,
 * with that key path. Values are never echoed into messages; keys are,
 * sanitized and truncated.
 */
#ifndef AG_WALK_H
#define AG_WALK_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/config/yaml_load.h"

struct ag_error;

struct ag_walk {
	const char *file;
	struct ag_error **err;
	char path[512];
	size_t plen;
};

/* Push a key or index onto the path; returns the previous length for pop. */
size_t ag_walk_push_key(struct ag_walk *w, const char *key, size_t keylen);
size_t ag_walk_push_index(struct ag_walk *w, size_t index);
void ag_walk_pop(struct ag_walk *w, size_t saved);

int ag_walk_fail(struct ag_walk *w, const struct ag_ynode *at, const char *reason, const char *fmt,
		 ...) AG_PRINTF(4, 5);

/* Rejects keys not in the NULL-terminated list, with a did-you-mean. */
int ag_walk_known_keys(struct ag_walk *w, const struct ag_ynode *map, const char *const *known);
/* Fails with config.missing_required when `key` is absent or null. */
int ag_walk_require(struct ag_walk *w, const struct ag_ynode *map, const char *key,
		    struct ag_ynode **out);

bool ag_ynode_is_null(const struct ag_ynode *n);
int ag_walk_map(struct ag_walk *w, const struct ag_ynode *n);
int ag_walk_seq(struct ag_walk *w, const struct ag_ynode *n);
/* A string scalar; `nonblank` rejects empty/whitespace-only (config.empty_string). */
int ag_walk_str(struct ag_walk *w, const struct ag_ynode *n, bool nonblank, char **out);
int ag_walk_int(struct ag_walk *w, const struct ag_ynode *n, int64_t min, int64_t max,
		int64_t *out);
/* An integer or float, finite, within [min, max]. */
int ag_walk_number(struct ag_walk *w, const struct ag_ynode *n, double min, double max,
		   double *out);
int ag_walk_bool(struct ag_walk *w, const struct ag_ynode *n, bool *out);
/* One of the NULL-terminated names; *out is its index. */
int ag_walk_enum(struct ag_walk *w, const struct ag_ynode *n, const char *const *names, int *out);
/* A list of non-empty strings (null = empty), at most `max` items. */
int ag_walk_strlist(struct ag_walk *w, const struct ag_ynode *n, size_t max, struct ag_strv *out);

/* Number of Unicode code points in a UTF-8 string (libyaml guarantees UTF-8). */
size_t ag_utf8_chars(const char *s, size_t len);

#endif
