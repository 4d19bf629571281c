/*
 * docker_json.h: bounded parsing of JSON printed by the Docker client.
 *
 * Docker's answers are data from outside AgentGuard's trust boundary's
 * edge (a confused client, a wrapper, a hostile daemon): every answer is
 * checked against hard bounds before any field is read. Anything over a
 * bound, malformed, truncated or of the wrong shape fails closed with a
 * named reason token (docker.json.*).
 */
#ifndef AG_DOCKER_JSON_H
#define AG_DOCKER_JSON_H

#include "lib/base/ag.h"

#include "lib/base/json.h"

#include <jansson.h>

struct ag_error;

struct ag_docker_json_limits {
	size_t max_bytes;  /* whole document */
	size_t max_depth;  /* nesting of arrays/objects; the top value is depth 1 */
	size_t max_items;  /* members of one array or object */
	size_t max_string; /* bytes of one string (keys included) */
};

/* The preflight bounds from bounds.h (64 KiB, 32, 512, 65536). */
extern const struct ag_docker_json_limits ag_docker_json_default_limits;

enum ag_docker_json_flags {
	/* `docker inspect` wraps its answer in an array: unwrap exactly one element. */
	AG_DOCKER_JSON_UNWRAP_SINGLE = 1u << 0,
	/* The (unwrapped) value must be a JSON object. */
	AG_DOCKER_JSON_OBJECT = 1u << 1,
};

/*
 * Parses `len` bytes of `data` (need not be NUL-terminated; leading and
 * trailing whitespace allowed, nothing else after the value). `lim` may be
 * NULL for the defaults. `truncated` says the producer's output was cut at
 * a capture cap: that alone fails as docker.json.too_large even when the
 * prefix happens to parse (a cut answer is never interpreted). On success
 * *out is a new reference.
 *
 * Reasons (AG_E_DOCKER unless noted): docker.json.empty,
 * docker.json.too_large (AG_E_LIMIT),
 * docker.json.malformed, docker.json.depth (AG_E_LIMIT),
 * docker.json.items (AG_E_LIMIT), docker.json.string (AG_E_LIMIT),
 * docker.json.not_single (array of != 1 elements with UNWRAP_SINGLE),
 * docker.json.not_object.
 */
int ag_docker_json_parse(const char *data, size_t len, bool truncated,
			 const struct ag_docker_json_limits *lim, unsigned flags, json_t **out,
			 struct ag_error **err);

/*
 * Checks an already built value against the bounds (used by the parser and
 * by tests). Returns 0 or -1 with one of the limit reasons above.
 */
int ag_docker_json_check_bounds(const json_t *v, const struct ag_docker_json_limits *lim,
				struct ag_error **err);

#endif
