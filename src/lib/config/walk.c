#include "lib/base/ag.h"
#include "lib/config/walk.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

#include <inttypes.h>
#include <math.h>

/* Appends a key to the path, escaping anything unprintable or unusual. */
size_t ag_walk_push_key(struct ag_walk *w, const char *key, size_t keylen)
{
	size_t saved = w->plen;
	size_t cap = sizeof(w->path) - 1;
	if (w->plen && w->plen < cap)
		w->path[w->plen++] = '.';
	size_t shown = 0;
	for (size_t i = 0; i < keylen && w->plen + 4 < cap; i++) {
		unsigned char c = (unsigned char)key[i];
		if (shown >= AG_CONFIG_ECHO_KEY_BYTES) {
			w->plen += (size_t)snprintf(w->path + w->plen, cap - w->plen, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f || c >= 0x80)
			w->plen += (size_t)snprintf(w->path + w->plen, cap - w->plen, "\\x%02x", c);
		else
			w->path[w->plen++] = (char)c;
		shown++;
	}
	w->path[w->plen] = '\0';
	return saved;
}

size_t ag_walk_push_index(struct ag_walk *w, size_t index)
{
	size_t saved = w->plen;
	int n = snprintf(w->path + w->plen, sizeof(w->path) - w->plen, "[%zu]", index);
	if (n > 0 && w->plen + (size_t)n < sizeof(w->path))
		w->plen += (size_t)n;
	w->path[w->plen] = '\0';
	return saved;
}

void ag_walk_pop(struct ag_walk *w, size_t saved)
{
	w->plen = saved;
	w->path[saved] = '\0';
}

int ag_walk_fail(struct ag_walk *w, const struct ag_ynode *at, const char *reason, const char *fmt,
		 ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = ag_xvasprintf(fmt, ap);
	va_end(ap);
	ag_err_at(w->err, AG_E_CONFIG, reason, w->file, at ? at->line : 0, at ? at->column : 0,
		  w->plen ? w->path : NULL, "%s", msg);
	free(msg);
	return -1;
}

static size_t levenshtein(const char *a, size_t la, const char *b, size_t lb)
{
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

int ag_walk_known_keys(struct ag_walk *w, const struct ag_ynode *map, const char *const *known)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct ag_ynode *k = map->keys[i];
		bool ok = false;
		for (const char *const *p = known; *p; p++)
			if (strlen(*p) == k->len && memcmp(*p, k->str, k->len) == 0)
				ok = true;
		if (ok)
			continue;
		const char *best = NULL;
		size_t best_d = SIZE_MAX;
		for (const char *const *p = known; *p; p++) {
			size_t d = levenshtein(k->str, k->len, *p, strlen(*p));
			if (d < best_d) {
				best_d = d;
				best = *p;
			}
		}
		size_t limit = k->len / 3 > 2 ? k->len / 3 : 2;
		size_t saved = ag_walk_push_key(w, k->str, k->len);
		int r;
		if (best && best_d <= limit)
			r = ag_walk_fail(w, k, "config.unknown_key",
					 "unknown key; did you mean '%s'?", best);
		else
			r = ag_walk_fail(w, k, "config.unknown_key", "unknown key");
		ag_walk_pop(w, saved);
		return r;
	}
	return 0;
}

bool ag_ynode_is_null(const struct ag_ynode *n)
{
	if (!n)
		return true;
	if (n->kind != AG_Y_SCALAR)
		return false;
	struct ag_yvalue v;
	ag_ynode_resolve(n, &v);
	return v.type == AG_YT_NULL;
}

int ag_walk_require(struct ag_walk *w, const struct ag_ynode *map, const char *key,
		    struct ag_ynode **out)
{
	struct ag_ynode *v = ag_ynode_get(map, key);
	if (ag_ynode_is_null(v)) {
		size_t saved = ag_walk_push_key(w, key, strlen(key));
		int r = ag_walk_fail(w, v ? v : map, "config.missing_required",
				     "required key is missing");
		ag_walk_pop(w, saved);
		return r;
	}
	*out = v;
	return 0;
}

static int type_error(struct ag_walk *w, const struct ag_ynode *n, const char *want)
{
	return ag_walk_fail(w, n, "config.type", "must be %s, not %s", want, ag_ynode_type_name(n));
}

int ag_walk_map(struct ag_walk *w, const struct ag_ynode *n)
{
	return n->kind == AG_Y_MAP ? 0 : type_error(w, n, "a mapping");
}

int ag_walk_seq(struct ag_walk *w, const struct ag_ynode *n)
{
	return n->kind == AG_Y_SEQ ? 0 : type_error(w, n, "a list");
}

int ag_walk_str(struct ag_walk *w, const struct ag_ynode *n, bool nonblank, char **out)
{
	struct ag_yvalue v;
	if (n->kind != AG_Y_SCALAR)
		return type_error(w, n, "a string");
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_STR)
		return type_error(w, n, "a string");
	if (nonblank) {
		bool blank = true;
		for (size_t i = 0; i < n->len; i++)
			if (!strchr(" \t\r\n", n->str[i]))
				blank = false;
		if (blank)
			return ag_walk_fail(w, n, "config.empty_string",
					    "must not be empty or blank");
	}
	if (memchr(n->str, '\0', n->len))
		return ag_walk_fail(w, n, "config.pattern", "must not contain a NUL character");
	*out = ag_xstrndup(n->str, n->len);
	return 0;
}

int ag_walk_int(struct ag_walk *w, const struct ag_ynode *n, int64_t min, int64_t max, int64_t *out)
{
	struct ag_yvalue v;
	if (n->kind != AG_Y_SCALAR)
		return type_error(w, n, "an integer");
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_INT)
		return type_error(w, n, "an integer");
	if (v.int_overflow || v.i < min || v.i > max)
		return ag_walk_fail(w, n, "config.range",
				    "must be an integer from %" PRId64 " to %" PRId64, min, max);
	*out = v.i;
	return 0;
}

int ag_walk_number(struct ag_walk *w, const struct ag_ynode *n, double min, double max, double *out)
{
	struct ag_yvalue v;
	if (n->kind != AG_Y_SCALAR)
		return type_error(w, n, "a number");
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_INT && v.type != AG_YT_FLOAT)
		return type_error(w, n, "a number");
	if (!isfinite(v.f) || v.f < min || v.f > max)
		return ag_walk_fail(w, n, "config.range", "must be a finite number from %g to %g",
				    min, max);
	*out = v.f;
	return 0;
}

int ag_walk_bool(struct ag_walk *w, const struct ag_ynode *n, bool *out)
{
	struct ag_yvalue v;
	if (n->kind != AG_Y_SCALAR)
		return type_error(w, n, "a boolean (true or false)");
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_BOOL)
		return type_error(w, n, "a boolean (true or false)");
	*out = v.b;
	return 0;
}

int ag_walk_enum(struct ag_walk *w, const struct ag_ynode *n, const char *const *names, int *out)
{
	struct ag_yvalue v;
	if (n->kind != AG_Y_SCALAR)
		return type_error(w, n, "a string");
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_STR)
		return type_error(w, n, "a string");
	char allowed[256] = "";
	size_t used = 0;
	for (int i = 0; names[i]; i++) {
		if (strlen(names[i]) == n->len && memcmp(names[i], n->str, n->len) == 0) {
			*out = i;
			return 0;
		}
		int k = snprintf(allowed + used, sizeof(allowed) - used, "%s%s", i ? ", " : "",
				 names[i]);
		if (k > 0 && used + (size_t)k < sizeof(allowed))
			used += (size_t)k;
	}
	return ag_walk_fail(w, n, "config.enum", "must be one of: %s", allowed);
}

int ag_walk_strlist(struct ag_walk *w, const struct ag_ynode *n, size_t max, struct ag_strv *out)
{
	if (ag_ynode_is_null(n))
		return 0;
	if (ag_walk_seq(w, n) < 0)
		return -1;
	if (n->n > max)
		return ag_walk_fail(w, n, "config.too_many", "must have at most %zu items", max);
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = ag_walk_push_index(w, i);
		char *s = NULL;
		if (ag_walk_str(w, n->values[i], false, &s) < 0)
			return -1;
		if (!*s) {
			free(s);
			return ag_walk_fail(w, n->values[i], "config.empty_string",
					    "must not be empty");
		}
		ag_strv_push_owned(out, s);
		ag_walk_pop(w, saved);
	}
	return 0;
}

size_t ag_utf8_chars(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}
