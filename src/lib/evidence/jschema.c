#include "lib/base/ag.h"
#include "lib/evidence/jschema.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"

#include <math.h>
#include <regex.h>

/* Longest JSON pointer echoed in a message. */
#define PTR_MAX 200

struct ctx {
	const json_t *const *refs;
	size_t nrefs;
	char ptr[PTR_MAX + 16];
};

static void ptr_push(struct ctx *c, size_t *saved, const char *key, size_t idx, bool is_idx)
{
	*saved = strlen(c->ptr);
	char seg[64];
	if (is_idx)
		snprintf(seg, sizeof(seg), "/%zu", idx);
	else {
		/* keys are untrusted: keep printable ASCII, cut long ones */
		size_t j = 0;
		seg[j++] = '/';
		for (const unsigned char *p = (const unsigned char *)key; *p && j < 40; p++)
			seg[j++] = (*p >= 0x20 && *p < 0x7f) ? (char)*p : '?';
		seg[j] = '\0';
	}
	size_t n = strlen(seg);
	if (*saved + n < PTR_MAX) {
		memcpy(c->ptr + *saved, seg, n + 1);
	} else if (*saved < PTR_MAX + 4) {
		memcpy(c->ptr + *saved, "/...", 5);
	}
}

static const char *at(const struct ctx *c)
{
	return c->ptr[0] ? c->ptr : "/";
}

static bool type_is(const json_t *v, const char *t)
{
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "array") == 0)
		return json_is_array(v);
	if (strcmp(t, "string") == 0)
		return json_is_string(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(t, "null") == 0)
		return json_is_null(v);
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "integer") == 0)
		return json_is_integer(v) ||
		       (json_is_real(v) && fabs(json_real_value(v)) < 9e18 &&
			(double)(int64_t)json_real_value(v) == json_real_value(v));
	return false;
}

static size_t code_points(const char *s, size_t n)
{
	size_t cp = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cp++;
	return cp;
}

static const json_t *resolve(const struct ctx *c, const char *ref)
{
	if (ref && strncmp(ref, "#/$defs/", 8) == 0 && c->nrefs > 0)
		return json_object_get(json_object_get(c->refs[0], "$defs"), ref + 8);
	for (size_t i = 0; i < c->nrefs; i++) {
		const char *id = json_string_value(json_object_get(c->refs[i], "$id"));
		if (id && strcmp(id, ref) == 0)
			return c->refs[i];
	}
	return NULL;
}

static int validate(struct ctx *c, const json_t *s, const json_t *v, struct ag_error **err);

static int check_object(struct ctx *c, const json_t *s, const json_t *v, struct ag_error **err)
{
	const json_t *props = json_object_get(s, "properties");
	const json_t *addl = json_object_get(s, "additionalProperties");
	const json_t *req = json_object_get(s, "required");
	size_t i;
	const json_t *r;
	json_array_foreach(req, i, r)
	{
		if (!json_object_get(v, json_string_value(r))) {
			size_t sv;
			ptr_push(c, &sv, json_string_value(r), 0, false);
			int rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.required",
					"required key %s is missing", at(c));
			c->ptr[sv] = '\0';
			return rc;
		}
	}
	const char *k;
	const json_t *x;
	json_object_foreach((json_t *)v, k, x)
	{
		const json_t *ps = json_object_get(props, k);
		size_t sv;
		ptr_push(c, &sv, k, 0, false);
		if (!ps && json_is_false(addl)) {
			int rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.additional",
					"unexpected key %s", at(c));
			c->ptr[sv] = '\0';
			return rc;
		}
		if (!ps && json_is_object(addl))
			ps = addl;
		if (ps && validate(c, ps, x, err) < 0)
			return -1;
		c->ptr[sv] = '\0';
	}
	return 0;
}

static int validate(struct ctx *c, const json_t *s, const json_t *v, struct ag_error **err)
{
	if (json_is_true(s))
		return 0;
	const char *kw;
	const json_t *a;
	json_object_foreach((json_t *)s, kw, a)
	{
		if (strcmp(kw, "$ref") == 0) {
			const json_t *t = resolve(c, json_string_value(a));
			if (!t)
				return ag_err(err, AG_E_INTERNAL, 0, "evidence.schema.ref",
					      "schema reference cannot be resolved");
			if (validate(c, t, v, err) < 0)
				return -1;
		} else if (strcmp(kw, "type") == 0) {
			bool ok = false;
			if (json_is_string(a))
				ok = type_is(v, json_string_value(a));
			size_t i;
			const json_t *t;
			json_array_foreach(a, i, t) ok = ok || type_is(v, json_string_value(t));
			if (!ok)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.type",
					      "%s has the wrong type", at(c));
		} else if (strcmp(kw, "const") == 0) {
			if (!json_equal((json_t *)a, (json_t *)v) ||
			    json_typeof(a) != json_typeof(v))
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.const",
					      "%s has an unexpected value", at(c));
		} else if (strcmp(kw, "enum") == 0) {
			bool ok = false;
			size_t i;
			const json_t *t;
			json_array_foreach(a, i, t) ok =
			    ok || (json_typeof(t) == json_typeof(v) &&
				   json_equal((json_t *)t, (json_t *)v));
			if (!ok)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.enum",
					      "%s is not one of the allowed values", at(c));
		} else if (strcmp(kw, "properties") == 0 || strcmp(kw, "required") == 0 ||
			   strcmp(kw, "additionalProperties") == 0) {
			continue; /* check_object, once per object */
		} else if (strcmp(kw, "items") == 0) {
			if (!json_is_array(v))
				continue;
			size_t i;
			const json_t *x;
			json_array_foreach(v, i, x)
			{
				size_t sv;
				ptr_push(c, &sv, NULL, i, true);
				if (validate(c, a, x, err) < 0)
					return -1;
				c->ptr[sv] = '\0';
			}
		} else if (strcmp(kw, "maxItems") == 0 || strcmp(kw, "minItems") == 0) {
			if (!json_is_array(v))
				continue;
			size_t n = json_array_size(v), lim = (size_t)json_integer_value(a);
			if (kw[1] == 'a' ? n > lim : n < lim)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.items",
					      "%s has %zu items (bound %zu)", at(c), n, lim);
		} else if (strcmp(kw, "maxLength") == 0 || strcmp(kw, "minLength") == 0) {
			if (!json_is_string(v))
				continue;
			size_t n = code_points(json_string_value(v), json_string_length(v));
			size_t lim = (size_t)json_integer_value(a);
			if (kw[1] == 'a' ? n > lim : n < lim)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.length",
					      "%s is %zu characters long (bound %zu)", at(c), n,
					      lim);
		} else if (strcmp(kw, "pattern") == 0) {
			if (!json_is_string(v))
				continue;
			regex_t re;
			if (regcomp(&re, json_string_value(a), REG_EXTENDED | REG_NOSUB) != 0)
				return ag_err(err, AG_E_INTERNAL, 0, "evidence.schema.ref",
					      "schema pattern does not compile");
			bool ok = strlen(json_string_value(v)) == json_string_length(v) &&
				  regexec(&re, json_string_value(v), 0, NULL, 0) == 0;
			regfree(&re);
			if (!ok)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.pattern",
					      "%s does not have the required form", at(c));
		} else if (strcmp(kw, "minimum") == 0 || strcmp(kw, "maximum") == 0) {
			if (!json_is_number(v))
				continue;
			double d = json_number_value(v), lim = json_number_value(a);
			if (kw[1] == 'a' ? d > lim : d < lim)
				return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.schema.range",
					      "%s is out of range", at(c));
		} else if (strcmp(kw, "$schema") == 0 || strcmp(kw, "$id") == 0 ||
			   strcmp(kw, "$defs") == 0 || strcmp(kw, "title") == 0 ||
			   strcmp(kw, "description") == 0) {
			continue;
		} else {
			return ag_err(err, AG_E_INTERNAL, 0, "evidence.schema.ref",
				      "schema keyword '%s' is not supported", kw);
		}
	}
	if (json_is_object(v) &&
	    (json_object_get(s, "properties") || json_object_get(s, "required") ||
	     json_object_get(s, "additionalProperties")))
		return check_object(c, s, v, err);
	return 0;
}

int ag_jschema_validate(const json_t *schema, const json_t *const *refs, size_t nrefs,
			const json_t *inst, struct ag_error **err)
{
	struct ctx c = {.refs = refs, .nrefs = nrefs};
	return validate(&c, schema, inst, err);
}
