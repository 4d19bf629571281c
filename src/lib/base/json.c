/*
 * json.c: generic jansson helpers (json.h).
 */
#include "lib/base/ag.h"
#include "lib/base/json.h"

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
