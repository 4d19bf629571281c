/*
 * json.c: generic jansson helpers (json.h).
 */
#include "lib/base/ag.h"
#include "lib/base/json.h"
#include "lib/base/bounds.h"

const json_t *ag_json_path(const json_t *root, const char *dotted)
{
	const json_t *cur = root;
	const char *p = dotted;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!json_is_object(cur))
			return NULL;
		cur = json_object_getn(cur, p, n);
		p += n;
		if (*p == '.')
			p++;
	}
	return cur;
}

const char *ag_json_path_str(const json_t *root, const char *dotted)
{
	const json_t *v = ag_json_path(root, dotted);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *ag_json_str_or(const json_t *j, const char *dflt)
{
	return json_is_string(j) ? json_string_value(j) : dflt;
}

json_t *ag_json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void wipe(json_t *v, unsigned depth)
{
	if (json_is_string(v)) {
		explicit_bzero((char *)json_string_value(v), json_string_length(v));
		return;
	}
	if (depth >= AG_JSON_WIPE_DEPTH)
		return;
	const char *k;
	json_t *c;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach(v, k, c)
		{
			wipe(c, depth + 1);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
		{
			wipe(c, depth + 1);
		}
	}
}

void ag_json_wipe_strings(json_t *v)
{
	wipe(v, 0);
}
