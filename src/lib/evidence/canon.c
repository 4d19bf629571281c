#include "lib/base/ag.h"
#include "lib/evidence/canon.h"
#include "lib/base/error.h"

#include <math.h>

const struct ag_canon_bounds ag_canon_containment_bounds = {8, 64, 512, 1000000000000LL, 32768};
const struct ag_canon_bounds ag_canon_artifact_bounds = {12, 4096, 1 << 20, 1000000000000000LL,
							 16u << 20};

static int check(const json_t *v, const struct ag_canon_bounds *b, unsigned depth,
		 struct ag_error **err)
{
	if (depth > b->max_depth)
		return ag_err(err, AG_E_LIMIT, 0, "evidence.depth", "evidence nests deeper than %u",
			      b->max_depth);
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (json_object_size(v) > b->max_items)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.items",
				      "evidence object has more than %zu keys", b->max_items);
		const char *k;
		const json_t *x;
		json_object_foreach((json_t *)v, k, x)
		{
			if (!*k || strlen(k) > b->max_string)
				return ag_err(err, AG_E_LIMIT, 0, "evidence.key",
					      "evidence key is empty or too long");
			if (check(x, b, depth + 1, err) < 0)
				return -1;
		}
		return 0;
	}
	case JSON_ARRAY: {
		if (json_array_size(v) > b->max_items)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.items",
				      "evidence list has more than %zu items", b->max_items);
		size_t i;
		const json_t *x;
		json_array_foreach(v, i, x)
		{
			if (check(x, b, depth + 1, err) < 0)
				return -1;
		}
		return 0;
	}
	case JSON_STRING:
		if (json_string_length(v) > b->max_string)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.string",
				      "evidence string longer than %zu bytes", b->max_string);
		return 0;
	case JSON_INTEGER: {
		json_int_t i = json_integer_value(v);
		if (i > b->max_abs_int || i < -b->max_abs_int)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.number",
				      "evidence integer out of range");
		return 0;
	}
	case JSON_REAL: {
		double d = json_real_value(v);
		if (!isfinite(d) || fabs(d) > 1e12)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.number",
				      "evidence number out of range");
		return 0;
	}
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
	default:
		return 0;
	}
}

int ag_canon_check(const json_t *v, const struct ag_canon_bounds *b, struct ag_error **err)
{
	return check(v, b, 1, err);
}

int ag_canon_dump(const json_t *v, const struct ag_canon_bounds *b, char **out, size_t *len,
		  struct ag_error **err)
{
	if (ag_canon_check(v, b, err) < 0)
		return -1;
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
				    JSON_REAL_PRECISION(12) | JSON_ENCODE_ANY);
	if (!s)
		return ag_err(err, AG_E_INTERNAL, 0, "evidence.encode", "cannot encode evidence");
	size_t n = strlen(s);
	if (n > b->max_total) {
		free(s);
		return ag_err(err, AG_E_LIMIT, 0, "evidence.size",
			      "evidence is larger than %zu bytes", b->max_total);
	}
	*out = s;
	if (len)
		*len = n;
	return 0;
}
