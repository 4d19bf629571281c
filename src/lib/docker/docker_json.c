#include "lib/base/ag.h"
#include "lib/docker/docker_json.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

const struct ag_docker_json_limits ag_docker_json_default_limits = {
    .max_bytes = AG_PF_JSON_MAX_BYTES,
    .max_depth = AG_PF_JSON_MAX_DEPTH,
    .max_items = AG_PF_JSON_MAX_ITEMS,
    .max_string = AG_PF_JSON_MAX_STRING,
};

_Static_assert(AG_PF_JSON_MAX_DEPTH <= 64, "bounds walker recurses once per level");

static int check_value(const json_t *v, size_t depth, const struct ag_docker_json_limits *lim,
		       struct ag_error **err)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (depth > lim->max_depth)
			return ag_err(err, AG_E_LIMIT, 0, "docker.json.depth",
				      "docker JSON nests deeper than %zu levels", lim->max_depth);
		if (json_object_size(v) > lim->max_items)
			return ag_err(err, AG_E_LIMIT, 0, "docker.json.items",
				      "docker JSON object has more than %zu members",
				      lim->max_items);
		const char *k;
		json_t *m;
		json_object_foreach((json_t *)v, k, m)
		{
			if (strlen(k) > lim->max_string)
				return ag_err(err, AG_E_LIMIT, 0, "docker.json.string",
					      "docker JSON key longer than %zu bytes",
					      lim->max_string);
			if (check_value(m, depth + 1, lim, err) < 0)
				return -1;
		}
		return 0;
	}
	case JSON_ARRAY: {
		if (depth > lim->max_depth)
			return ag_err(err, AG_E_LIMIT, 0, "docker.json.depth",
				      "docker JSON nests deeper than %zu levels", lim->max_depth);
		if (json_array_size(v) > lim->max_items)
			return ag_err(err, AG_E_LIMIT, 0, "docker.json.items",
				      "docker JSON array has more than %zu items", lim->max_items);
		size_t i;
		json_t *m;
		json_array_foreach(v, i, m) if (check_value(m, depth + 1, lim, err) < 0) return -1;
		return 0;
	}
	case JSON_STRING:
		if (json_string_length(v) > lim->max_string)
			return ag_err(err, AG_E_LIMIT, 0, "docker.json.string",
				      "docker JSON string longer than %zu bytes", lim->max_string);
		return 0;
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return 0;
	default:
		return ag_err(err, AG_E_INTERNAL, 0, "internal.json_type", "unknown JSON type");
	}
}

int ag_docker_json_check_bounds(const json_t *v, const struct ag_docker_json_limits *lim,
				struct ag_error **err)
{
	if (!lim)
		lim = &ag_docker_json_default_limits;
	return check_value(v, 1, lim, err);
}

int ag_docker_json_parse(const char *data, size_t len, bool truncated,
			 const struct ag_docker_json_limits *lim, unsigned flags, json_t **out,
			 struct ag_error **err)
{
	if (!lim)
		lim = &ag_docker_json_default_limits;
	*out = NULL;
	if (truncated)
		return ag_err(err, AG_E_LIMIT, 0, "docker.json.too_large",
			      "docker output exceeded the %zu-byte capture limit", lim->max_bytes);
	if (len > lim->max_bytes)
		return ag_err(err, AG_E_LIMIT, 0, "docker.json.too_large",
			      "docker JSON output is larger than %zu bytes", lim->max_bytes);
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	if (i == len)
		return ag_err(err, AG_E_DOCKER, 0, "docker.json.empty", "docker printed no JSON");
	json_error_t je;
	/* Duplicate keys make a document ambiguous: refuse them. NUL in strings
	 * is refused by jansson's default (no JSON_ALLOW_NUL). */
	json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!v)
		return ag_err(err, AG_E_DOCKER, 0, "docker.json.malformed",
			      "docker printed malformed JSON (line %d column %d)", je.line,
			      je.column);
	if (ag_docker_json_check_bounds(v, lim, err) < 0) {
		json_decref(v);
		return -1;
	}
	if ((flags & AG_DOCKER_JSON_UNWRAP_SINGLE) && json_is_array(v)) {
		if (json_array_size(v) != 1) {
			size_t n = json_array_size(v);
			json_decref(v);
			return ag_err(err, AG_E_DOCKER, 0, "docker.json.not_single",
				      "docker answered %zu objects where exactly one was expected",
				      n);
		}
		json_t *one = json_incref(json_array_get(v, 0));
		json_decref(v);
		v = one;
	}
	if ((flags & AG_DOCKER_JSON_OBJECT) && !json_is_object(v)) {
		json_decref(v);
		return ag_err(err, AG_E_DOCKER, 0, "docker.json.not_object",
			      "docker JSON answer is not an object");
	}
	*out = v;
	return 0;
}
