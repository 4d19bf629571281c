/*
 * canon.h: the one canonical JSON writer for evidence.
 *
 * Canonical form: keys sorted, compact separators, ASCII only (\u escapes),
 * no floats outside +-1e12, no NaN/inf. ag_canon_check enforces shape
 * bounds (depth, items per array/object, string length, integer range,
 * non-empty keys) before anything is written, failing closed with a named
 * reason (evidence.depth, evidence.items, evidence.string, evidence.number,
 * evidence.key, evidence.size).
 */
#ifndef AG_CANON_H
#define AG_CANON_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;

struct ag_canon_bounds {
	unsigned max_depth;  /* nesting of arrays/objects, root = 1 */
	size_t max_items;    /* per array or object */
	size_t max_string;   /* bytes per string (and per key) */
	int64_t max_abs_int; /* |integer| bound */
	size_t max_total;    /* serialized bytes */
};

/* containment-evidence v1: depth 8, 64 items, 512 bytes, 10^12, 32 KiB */
extern const struct ag_canon_bounds ag_canon_containment_bounds;
/* contained-run v1 artifact: depth 12, 4096 items, 1 MiB strings, 16 MiB total */
extern const struct ag_canon_bounds ag_canon_artifact_bounds;

int ag_canon_check(const json_t *v, const struct ag_canon_bounds *b, struct ag_error **err);
/* Checks, then serializes canonically; *out is a heap string. */
int ag_canon_dump(const json_t *v, const struct ag_canon_bounds *b, char **out, size_t *len,
		  struct ag_error **err);

#endif
