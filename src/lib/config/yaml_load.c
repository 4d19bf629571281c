#include "lib/base/ag.h"
#include "lib/config/yaml_load.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

#include <math.h>
#include <yaml.h>

void ag_ynode_free(struct ag_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			ag_ynode_free(n->keys[i]);
		ag_ynode_free(n->values[i]);
	}
	free(n->keys);
	free(n->values);
	free(n->str);
	free(n);
}

static void ynode_freep(struct ag_ynode **n)
{
	ag_ynode_free(*n);
	*n = NULL;
}

static void parser_freep(yaml_parser_t **p)
{
	if (*p) {
		yaml_parser_delete(*p);
		free(*p);
	}
}

static void event_free(yaml_event_t *e)
{
	yaml_event_delete(e);
}

struct loader {
	yaml_parser_t *parser;
	const char *display;
	size_t nodes;
	struct ag_error **err;
};

static int fail_at(struct loader *L, const char *reason, const yaml_mark_t *m, const char *fmt,
		   const char *what)
{
	return ag_err_at(L->err, AG_E_CONFIG, reason, L->display, (unsigned)m->line + 1,
			 (unsigned)m->column + 1, NULL, fmt, what);
}

static struct ag_ynode *node_new(enum ag_ynode_kind kind, const yaml_mark_t *m)
{
	struct ag_ynode *n = ag_xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->line = (unsigned)m->line + 1;
	n->column = (unsigned)m->column + 1;
	return n;
}

static void node_push(struct ag_ynode *parent, struct ag_ynode *key, struct ag_ynode *value)
{
	if (parent->n == parent->alloc) {
		parent->alloc = parent->alloc ? parent->alloc * 2 : 8;
		parent->values =
		    ag_xrealloc(parent->values, parent->alloc * sizeof(*parent->values));
		if (parent->kind == AG_Y_MAP)
			parent->keys =
			    ag_xrealloc(parent->keys, parent->alloc * sizeof(*parent->keys));
	}
	if (parent->kind == AG_Y_MAP)
		parent->keys[parent->n] = key;
	parent->values[parent->n++] = value;
}

static int next_event(struct loader *L, yaml_event_t *ev)
{
	if (!yaml_parser_parse(L->parser, ev)) {
		const yaml_parser_t *p = L->parser;
		const char *problem = p->problem ? p->problem : "malformed YAML";
		yaml_mark_t m = p->problem_mark;
		/* libyaml problems are fixed English phrases, never document text. */
		return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.syntax", L->display,
				 (unsigned)m.line + 1, (unsigned)m.column + 1, NULL,
				 "YAML syntax error: %s", problem);
	}
	return 0;
}

/* Checks anchors and tags common to every node event. */
static int check_props(struct loader *L, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_ALIAS_EVENT:
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
	default:
		break;
	}
	if (anchor)
		return fail_at(L, "config.yaml.anchor", &ev->start_mark,
			       "YAML anchors are not allowed%s", "");
	if (tag)
		return fail_at(L, "config.yaml.tag", &ev->start_mark,
			       "explicit YAML tags are not allowed%s", "");
	return 0;
}

static int parse_node(struct loader *L, yaml_event_t *ev, unsigned depth, struct ag_ynode **out);

static bool resolves_to_string(const struct ag_ynode *k)
{
	struct ag_yvalue v;
	ag_ynode_resolve(k, &v);
	return v.type == AG_YT_STR;
}

struct keyref {
	const struct ag_ynode *key;
	size_t index;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int c = memcmp(x->key->str, y->key->str, n);
	if (c)
		return c;
	if (x->key->len != y->key->len)
		return x->key->len < y->key->len ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index);
}

/* O(n log n) duplicate detection; reports the later occurrence. */
static int check_duplicates(struct loader *L, const struct ag_ynode *map)
{
	if (map->n < 2)
		return 0;
	struct keyref *refs = ag_xcalloc(map->n, sizeof(*refs));
	for (size_t i = 0; i < map->n; i++) {
		refs[i].key = map->keys[i];
		refs[i].index = i;
	}
	qsort(refs, map->n, sizeof(*refs), keyref_cmp);
	const struct ag_ynode *dup = NULL;
	size_t dup_index = SIZE_MAX;
	for (size_t i = 1; i < map->n; i++) {
		const struct ag_ynode *a = refs[i - 1].key, *b = refs[i].key;
		if (a->len == b->len && memcmp(a->str, b->str, a->len) == 0 &&
		    refs[i].index < dup_index) {
			dup = b;
			dup_index = refs[i].index;
		}
	}
	free(refs);
	if (dup)
		return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.duplicate_key", L->display,
				 dup->line, dup->column, NULL, "duplicate mapping key");
	return 0;
}

static int parse_mapping(struct loader *L, const yaml_event_t *start, unsigned depth,
			 struct ag_ynode **out)
{
	_cleanup_(ynode_freep) struct ag_ynode *map = node_new(AG_Y_MAP, &start->start_mark);
	for (;;) {
		_cleanup_(event_free) yaml_event_t ev = {0};
		if (next_event(L, &ev) < 0)
			return -1;
		if (ev.type == YAML_MAPPING_END_EVENT)
			break;
		_cleanup_(ynode_freep) struct ag_ynode *key = NULL;
		if (parse_node(L, &ev, depth + 1, &key) < 0)
			return -1;
		if (key->kind != AG_Y_SCALAR || !resolves_to_string(key))
			return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.non_string_key",
					 L->display, key->line, key->column, NULL,
					 "mapping keys must be strings");
		if (key->plain && key->len == 2 && memcmp(key->str, "<<", 2) == 0)
			return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.merge_key", L->display,
					 key->line, key->column, NULL,
					 "YAML merge keys ('<<') are not allowed");
		if (key->len > AG_CONFIG_MAX_KEY_BYTES)
			return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.scalar_too_long",
					 L->display, key->line, key->column, NULL,
					 "mapping key longer than %d bytes",
					 AG_CONFIG_MAX_KEY_BYTES);
		_cleanup_(event_free) yaml_event_t vev = {0};
		if (next_event(L, &vev) < 0)
			return -1;
		_cleanup_(ynode_freep) struct ag_ynode *value = NULL;
		if (parse_node(L, &vev, depth + 1, &value) < 0)
			return -1;
		node_push(map, ag_steal_ptr(&key), ag_steal_ptr(&value));
	}
	if (check_duplicates(L, map) < 0)
		return -1;
	*out = ag_steal_ptr(&map);
	return 0;
}

static int parse_sequence(struct loader *L, const yaml_event_t *start, unsigned depth,
			  struct ag_ynode **out)
{
	_cleanup_(ynode_freep) struct ag_ynode *seq = node_new(AG_Y_SEQ, &start->start_mark);
	for (;;) {
		_cleanup_(event_free) yaml_event_t ev = {0};
		if (next_event(L, &ev) < 0)
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		_cleanup_(ynode_freep) struct ag_ynode *item = NULL;
		if (parse_node(L, &ev, depth + 1, &item) < 0)
			return -1;
		node_push(seq, NULL, ag_steal_ptr(&item));
	}
	*out = ag_steal_ptr(&seq);
	return 0;
}

static int parse_node(struct loader *L, yaml_event_t *ev, unsigned depth, struct ag_ynode **out)
{
	if (ev->type == YAML_ALIAS_EVENT)
		return fail_at(L, "config.yaml.alias", &ev->start_mark,
			       "YAML aliases are not allowed%s", "");
	if (check_props(L, ev) < 0)
		return -1;
	if (++L->nodes > AG_CONFIG_MAX_NODES)
		return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.nodes", L->display,
				 (unsigned)ev->start_mark.line + 1,
				 (unsigned)ev->start_mark.column + 1, NULL,
				 "document has more than %d nodes", AG_CONFIG_MAX_NODES);
	if (depth > AG_CONFIG_MAX_DEPTH)
		return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.depth", L->display,
				 (unsigned)ev->start_mark.line + 1,
				 (unsigned)ev->start_mark.column + 1, NULL,
				 "document nests deeper than %d levels", AG_CONFIG_MAX_DEPTH);
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		size_t len = ev->data.scalar.length;
		if (len > AG_CONFIG_MAX_SCALAR_BYTES)
			return ag_err_at(L->err, AG_E_CONFIG, "config.yaml.scalar_too_long",
					 L->display, (unsigned)ev->start_mark.line + 1,
					 (unsigned)ev->start_mark.column + 1, NULL,
					 "scalar longer than %d bytes", AG_CONFIG_MAX_SCALAR_BYTES);
		struct ag_ynode *n = node_new(AG_Y_SCALAR, &ev->start_mark);
		n->str = ag_xmalloc(len + 1);
		memcpy(n->str, ev->data.scalar.value, len);
		n->str[len] = '\0';
		n->len = len;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		*out = n;
		return 0;
	}
	case YAML_MAPPING_START_EVENT:
		return parse_mapping(L, ev, depth, out);
	case YAML_SEQUENCE_START_EVENT:
		return parse_sequence(L, ev, depth, out);
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_ALIAS_EVENT:
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
	default:
		return fail_at(L, "config.yaml.syntax", &ev->start_mark,
			       "unexpected YAML structure%s", "");
	}
}

int ag_yaml_load(const char *data, size_t len, const char *display, struct ag_ynode **root,
		 struct ag_error **err)
{
	if (len > AG_CONFIG_MAX_BYTES)
		return ag_err_at(err, AG_E_CONFIG, "config.io.too_large", display, 0, 0, NULL,
				 "config is larger than %d bytes", AG_CONFIG_MAX_BYTES);
	_cleanup_(parser_freep) yaml_parser_t *parser = ag_xcalloc(1, sizeof(*parser));
	if (!yaml_parser_initialize(parser)) {
		free(parser);
		parser = NULL;
		return ag_err(err, AG_E_INTERNAL, 0, "internal.yaml_init", "cannot start libyaml");
	}
	yaml_parser_set_input_string(parser, (const unsigned char *)data, len);
	struct loader L = {.parser = parser, .display = display, .err = err};
	_cleanup_(ynode_freep) struct ag_ynode *doc = NULL;
	unsigned documents = 0;
	for (;;) {
		_cleanup_(event_free) yaml_event_t ev = {0};
		if (next_event(&L, &ev) < 0)
			return -1;
		if (ev.type == YAML_STREAM_END_EVENT)
			break;
		if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_END_EVENT)
			continue;
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			if (++documents > 1)
				return fail_at(&L, "config.yaml.multiple_documents", &ev.start_mark,
					       "only one YAML document is allowed%s", "");
			if (ev.data.document_start.tag_directives.start !=
			    ev.data.document_start.tag_directives.end)
				return fail_at(&L, "config.yaml.tag", &ev.start_mark,
					       "YAML %%TAG directives are not allowed%s", "");
			continue;
		}
		if (parse_node(&L, &ev, 1, &doc) < 0)
			return -1;
	}
	if (!doc)
		return ag_err_at(err, AG_E_CONFIG, "config.yaml.empty", display, 1, 1, NULL,
				 "config document is empty");
	if (doc->kind == AG_Y_SCALAR) {
		struct ag_yvalue v;
		ag_ynode_resolve(doc, &v);
		if (v.type == AG_YT_NULL)
			return ag_err_at(err, AG_E_CONFIG, "config.yaml.empty", display, doc->line,
					 doc->column, NULL, "config document is empty");
	}
	*root = ag_steal_ptr(&doc);
	return 0;
}

static bool all_in(const char *s, size_t n, const char *set)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

static bool eq_any(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

/* YAML 1.2 core schema, applied to plain scalars only. */
void ag_ynode_resolve(const struct ag_ynode *n, struct ag_yvalue *out)
{
	memset(out, 0, sizeof(*out));
	out->type = AG_YT_STR;
	if (n->kind != AG_Y_SCALAR || !n->plain || memchr(n->str, '\0', n->len))
		return;
	const char *s = n->str;
	size_t len = n->len;
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	if (eq_any(s, nulls)) {
		out->type = AG_YT_NULL;
		return;
	}
	if (eq_any(s, trues) || eq_any(s, falses)) {
		out->type = AG_YT_BOOL;
		out->b = eq_any(s, trues);
		return;
	}
	const char *p = s;
	size_t plen = len;
	bool neg = false;
	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
		plen--;
	}
	/* Integers: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
	int base = 0;
	const char *digits = p;
	if (all_in(p, plen, "0123456789"))
		base = 10;
	else if (p == s && plen > 2 && p[0] == '0' && p[1] == 'o' &&
		 all_in(p + 2, plen - 2, "01234567")) {
		base = 8;
		digits = p + 2;
	} else if (p == s && plen > 2 && p[0] == '0' && p[1] == 'x' &&
		   all_in(p + 2, plen - 2, "0123456789abcdefABCDEF")) {
		base = 16;
		digits = p + 2;
	}
	if (base) {
		out->type = AG_YT_INT;
		errno = 0;
		char *end = NULL;
		unsigned long long u = strtoull(digits, &end, base);
		if (errno == ERANGE || u > (unsigned long long)INT64_MAX + (neg ? 1u : 0u)) {
			out->int_overflow = true;
			out->f = neg ? -HUGE_VAL : HUGE_VAL;
			return;
		}
		out->i = neg ? (int64_t)(0 - u) : (int64_t)u;
		out->f = (double)out->i;
		return;
	}
	/* Floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? and .inf/.nan */
	static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
	static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
	if (eq_any(p, infs)) {
		out->type = AG_YT_FLOAT;
		out->f = neg ? -INFINITY : INFINITY;
		return;
	}
	if (p == s && eq_any(p, nans)) {
		out->type = AG_YT_FLOAT;
		out->f = NAN;
		return;
	}
	size_t i = 0, intd = 0, fracd = 0;
	while (i < plen && p[i] >= '0' && p[i] <= '9')
		i++, intd++;
	if (i < plen && p[i] == '.') {
		i++;
		while (i < plen && p[i] >= '0' && p[i] <= '9')
			i++, fracd++;
	}
	if (intd + fracd == 0 || (intd == 0 && fracd == 0))
		return;
	if (i < plen && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < plen && (p[i] == '+' || p[i] == '-'))
			i++;
		size_t ed = 0;
		while (i < plen && p[i] >= '0' && p[i] <= '9')
			i++, ed++;
		if (!ed)
			return;
	}
	if (i != plen)
		return;
	out->type = AG_YT_FLOAT;
	out->f = strtod(s, NULL);
}

const char *ag_ynode_type_name(const struct ag_ynode *n)
{
	if (n->kind == AG_Y_MAP)
		return "a mapping";
	if (n->kind == AG_Y_SEQ)
		return "a list";
	struct ag_yvalue v;
	ag_ynode_resolve(n, &v);
	switch (v.type) {
	case AG_YT_NULL:
		return "null";
	case AG_YT_BOOL:
		return "a boolean";
	case AG_YT_INT:
		return "an integer";
	case AG_YT_FLOAT:
		return "a float";
	case AG_YT_STR:
	default:
		return "a string";
	}
}

struct ag_ynode *ag_ynode_get(const struct ag_ynode *map, const char *key)
{
	if (!map || map->kind != AG_Y_MAP)
		return NULL;
	size_t klen = strlen(key);
	for (size_t i = 0; i < map->n; i++)
		if (map->keys[i]->len == klen && memcmp(map->keys[i]->str, key, klen) == 0)
			return map->values[i];
	return NULL;
}
