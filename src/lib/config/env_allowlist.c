#include "lib/base/ag.h"
#include "lib/config/env_allowlist.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/base/redact.h"
#include "lib/base/termsafe.h"
#include "lib/config/walk.h"

#include <strings.h>

const char *const ag_env_defaults[4] = {
    "HOME=/tmp/agentguard-home",
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
};

static const char *const reserved_exact[] = {
    "AWS_CA_BUNDLE",
    "BASH_ENV",
    "BUILDKIT_HOST",
    "CARGO_HTTP_CAINFO",
    "CDPATH",
    "CODEX_CA_CERTIFICATE",
    "COMPOSE_FILE",
    "COMPOSE_PROJECT_NAME",
    "CURL_CA_BUNDLE",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_CERT_PATH",
    "DOCKER_CONFIG",
    "DOCKER_CONTEXT",
    "DOCKER_HOST",
    "DOCKER_TLS",
    "DOCKER_TLS_VERIFY",
    "ENV",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GNUPGHOME",
    "GPG_AGENT_INFO",
    "HOME",
    "KUBECONFIG",
    "LANG",
    "LC_ALL",
    "LD_LIBRARY_PATH",
    "NODE_EXTRA_CA_CERTS",
    "NPM_CONFIG_CAFILE",
    "PATH",
    "PIP_CERT",
    "PYTHONHOME",
    "PYTHONPATH",
    "REQUESTS_CA_BUNDLE",
    "SSL_CERT_DIR",
    "SSL_CERT_FILE",
    "SSH_AGENT_PID",
    "SSH_AUTH_SOCK",
    "TMUX",
    "TMUX_PANE",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    NULL,
};
static const char *const reserved_prefix[] = {"COMPOSE_",    "DOCKER_", "DYLD_",
					      "GIT_CONFIG_", "LD_",	NULL};
static const char *const reserved_suffix[] = {
    "_CONFIG",	    "_CONFIG_DIR", "_CONFIG_HOME", "_HOME",  "_PATH",
    "_RUNTIME_DIR", "_SOCK",	   "_SOCKET",	   "_STORE", NULL,
};
static const char *const sensitive_words[] = {
    "TOKEN", "SECRET", "PASSWORD", "PASS", "KEY", "CREDENTIAL", "AUTH", "COOKIE", NULL,
};

bool ag_env_name_valid(const char *name)
{
	if (!name[0] || !((name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

bool ag_env_name_reserved(const char *name)
{
	size_t n = strlen(name);
	for (const char *const *p = reserved_exact; *p; p++)
		if (strcmp(name, *p) == 0)
			return true;
	for (const char *const *p = reserved_prefix; *p; p++)
		if (strncmp(name, *p, strlen(*p)) == 0)
			return true;
	for (const char *const *p = reserved_suffix; *p; p++) {
		size_t sl = strlen(*p);
		if (n >= sl && strcmp(name + n - sl, *p) == 0)
			return true;
	}
	return false;
}

bool ag_env_name_is_default(const char *name, size_t n)
{
	for (size_t i = 0; i < AG_ARRAY_SIZE(ag_env_defaults); i++) {
		const char *d = ag_env_defaults[i];
		if (strncmp(d, name, n) == 0 && d[n] == '=')
			return true;
	}
	return false;
}

bool ag_env_name_sensitive(const char *name)
{
	for (const char *const *p = sensitive_words; *p; p++)
		if (strcasestr(name, *p))
			return true;
	return false;
}

bool ag_env_name_is_reserved(const char *name)
{
	return ag_env_name_reserved(name);
}

bool ag_env_value_has_control(const char *value, size_t len)
{
	const unsigned char *u = (const unsigned char *)value;
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t k = ag_utf8_decode(u + i, len - i, &cp);
		if (k == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
		    cp == 0x2029)
			return true;
		i += k;
	}
	return false;
}

static const char *const entry_keys[] = {"name",      "value",		 "source", "required",
					 "sensitive", "allow_sensitive", NULL};

static int parse_entry(struct ag_walk *w, const struct ag_ynode *n, struct ag_contained *c,
		       size_t *total)
{
	struct ag_env_entry *e = &c->env[c->n_env];
	if (ag_walk_map(w, n) < 0 || ag_walk_known_keys(w, n, entry_keys) < 0)
		return -1;
	e->line = n->line;
	e->column = n->column;
	struct ag_ynode *name = NULL;
	if (ag_walk_require(w, n, "name", &name) < 0)
		return -1;
	size_t saved = ag_walk_push_key(w, "name", 4);
	if (ag_walk_str(w, name, false, &e->name) < 0)
		return -1;
	c->n_env++; /* owns e->name from here on */
	/* CONTRACT: env.allowlist.name (length, pattern, reserved, unique) */
	if (ag_utf8_chars(e->name, strlen(e->name)) > AG_ENV_NAME_MAX)
		return ag_walk_fail(w, name, "config.env.name_length",
				    "must be at most %d characters", AG_ENV_NAME_MAX);
	if (!ag_env_name_valid(e->name))
		return ag_walk_fail(w, name, "config.env.name_pattern",
				    "must match ^[A-Z_][A-Z0-9_]*$");
	if (ag_env_name_reserved(e->name))
		return ag_walk_fail(w, name, "config.env.reserved",
				    "'%s' is reserved for host or Docker control state", e->name);
	for (size_t i = 0; i + 1 < c->n_env; i++)
		if (strcasecmp(c->env[i].name, e->name) == 0)
			return ag_walk_fail(w, name, "config.env.duplicate",
					    "'%s' is already configured (names are unique ignoring "
					    "case)",
					    e->name);
	ag_walk_pop(w, saved);

	static const char *const sources[] = {"literal", "host", NULL};
	struct ag_ynode *src = ag_ynode_get(n, "source");
	if (!ag_ynode_is_null(src)) {
		int s = 0;
		saved = ag_walk_push_key(w, "source", 6);
		if (ag_walk_enum(w, src, sources, &s) < 0)
			return -1;
		ag_walk_pop(w, saved);
		e->source = (enum ag_env_source)s;
	}
	struct ag_ynode *val = ag_ynode_get(n, "value");
	if (e->source == AG_ENV_HOST && val) {
		saved = ag_walk_push_key(w, "value", 5);
		return ag_walk_fail(w, val, "config.env.source",
				    "a host-sourced entry must not have a value");
	}
	if (e->source == AG_ENV_LITERAL) {
		if (ag_ynode_is_null(val)) {
			saved = ag_walk_push_key(w, "value", 5);
			return ag_walk_fail(w, val ? val : n, "config.env.source",
					    "a literal entry needs a value");
		}
		saved = ag_walk_push_key(w, "value", 5);
		struct ag_yvalue yv;
		ag_ynode_resolve(val, &yv);
		if (val->kind == AG_Y_SCALAR && yv.type == AG_YT_STR &&
		    ag_env_value_has_control(val->str, val->len))
			return ag_walk_fail(w, val, "config.env.value_control",
					    "must not contain control characters");
		if (ag_walk_str(w, val, false, &e->value) < 0)
			return -1;
		/* CONTRACT: env.allowlist.value (4096 chars, no control characters) */
		if (ag_utf8_chars(e->value, val->len) > AG_ENV_VALUE_MAX)
			return ag_walk_fail(w, val, "config.env.value_length",
					    "must be at most %d characters", AG_ENV_VALUE_MAX);
		if (ag_env_value_has_control(val->str, val->len))
			return ag_walk_fail(w, val, "config.env.value_control",
					    "must not contain control characters");
		ag_walk_pop(w, saved);
	}
	static const char *const flags[] = {"required", "sensitive", "allow_sensitive"};
	bool *dest[] = {&e->required, &e->sensitive, &e->allow_sensitive};
	for (size_t i = 0; i < 3; i++) {
		struct ag_ynode *b = ag_ynode_get(n, flags[i]);
		if (ag_ynode_is_null(b))
			continue;
		saved = ag_walk_push_key(w, flags[i], strlen(flags[i]));
		if (ag_walk_bool(w, b, dest[i]) < 0)
			return -1;
		ag_walk_pop(w, saved);
	}
	/* CONTRACT: env.allowlist.sensitive (secret-like names need allow_sensitive) */
	e->name_sensitive = ag_env_name_sensitive(e->name);
	if (e->name_sensitive)
		e->sensitive = true;
	if (e->sensitive && !e->allow_sensitive)
		return ag_walk_fail(w, n, "config.env.sensitive",
				    "'%s' is sensitive: add allow_sensitive: true to pass it",
				    e->name);
	/* CONTRACT: env.allowlist.bounds (16384 serialized bytes) */
	*total += strlen(e->name) + 1 + (e->value ? val->len : 0);
	if (*total > AG_ENV_TOTAL_BYTES)
		return ag_walk_fail(w, n, "config.env.total_bytes",
				    "names and literal values exceed %d bytes in all",
				    AG_ENV_TOTAL_BYTES);
	return 0;
}

int ag_env_parse(struct ag_walk *w, const struct ag_ynode *list, struct ag_contained *c)
{
	if (ag_ynode_is_null(list))
		return 0;
	if (ag_walk_seq(w, list) < 0)
		return -1;
	/* CONTRACT: env.allowlist.bounds (32 entries) */
	if (list->n > AG_ENV_MAX_ENTRIES)
		return ag_walk_fail(w, list, "config.env.too_many", "must have at most %d entries",
				    AG_ENV_MAX_ENTRIES);
	c->env = ag_xcalloc(list->n, sizeof(*c->env));
	size_t total = 0;
	for (size_t i = 0; i < list->n; i++) {
		size_t saved = ag_walk_push_index(w, i);
		if (parse_entry(w, list->values[i], c, &total) < 0)
			return -1;
		ag_walk_pop(w, saved);
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ag_env_entry *x = *(const struct ag_env_entry *const *)a;
	const struct ag_env_entry *y = *(const struct ag_env_entry *const *)b;
	return strcmp(x->name, y->name);
}

void ag_env_resolved_release(struct ag_env_resolved *r)
{
	for (size_t i = 0; i < r->assignments.n; i++)
		explicit_bzero(r->assignments.v[i], strlen(r->assignments.v[i]));
	ag_strv_release(&r->assignments);
	ag_strv_release(&r->supplied);
	ag_strv_release(&r->sensitive);
	ag_strv_release(&r->missing);
	ag_strv_release(&r->defaults);
}

int ag_env_resolve(const struct ag_contained *c, ag_env_lookup_fn lookup, void *data,
		   struct ag_redactor *redact, struct ag_env_resolved *out, struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < AG_ARRAY_SIZE(ag_env_defaults); i++) {
		const char *eq = strchr(ag_env_defaults[i], '=');
		ag_strv_push_owned(&out->defaults, ag_xstrndup(ag_env_defaults[i],
							       (size_t)(eq - ag_env_defaults[i])));
	}
	const struct ag_env_entry **sorted = ag_xcalloc(c->n_env + 1, sizeof(*sorted));
	for (size_t i = 0; i < c->n_env; i++)
		sorted[i] = &c->env[i];
	qsort(sorted, c->n_env, sizeof(*sorted), entry_cmp);
	struct ag_strv values = AG_STRV_INIT; /* NAME=VALUE of configured entries */
	struct ag_strv required_missing = AG_STRV_INIT;
	int rc = 0;
	for (size_t i = 0; i < c->n_env; i++) {
		const struct ag_env_entry *e = sorted[i];
		const char *v = e->source == AG_ENV_LITERAL ? e->value
				: lookup		    ? lookup(e->name, data)
							    : NULL;
		if (!v) {
			ag_strv_push(e->required ? &required_missing : &out->missing, e->name);
			continue;
		}
		/* CONTRACT: env.allowlist.host_value (host values obey the literal bounds) */
		size_t vl = strlen(v);
		if (ag_utf8_chars(v, vl) > AG_ENV_VALUE_MAX || ag_env_value_has_control(v, vl)) {
			rc = ag_err(err, AG_E_CONFIG, 0, "config.env.host_value",
				    "contained environment value for '%s' is over %d characters or "
				    "has control characters",
				    e->name, AG_ENV_VALUE_MAX);
			goto out;
		}
		ag_strv_push(&out->supplied, e->name);
		if (e->sensitive)
			ag_strv_push(&out->sensitive, e->name);
		/* Every value is withheld from evidence, sensitive or not. */
		if (redact)
			ag_redactor_add_secret(redact, v);
		ag_strv_pushf(&values, "%s=%s", e->name, v);
	}
	if (required_missing.n) {
		size_t total = 0;
		for (size_t i = 0; i < required_missing.n; i++)
			total += strlen(required_missing.v[i]) + 2;
		char *list = ag_xcalloc(1, total + 1);
		for (size_t i = 0; i < required_missing.n; i++) {
			if (i)
				memcpy(list + strlen(list), ", ", 3);
			memcpy(list + strlen(list), required_missing.v[i],
			       strlen(required_missing.v[i]) + 1);
		}
		rc = ag_err(err, AG_E_CONFIG, 0, "config.env.required_missing",
			    "required contained environment value(s) are missing: %s", list);
		free(list);
		goto out;
	}
	for (size_t i = 0; i < AG_ARRAY_SIZE(ag_env_defaults); i++)
		ag_strv_push(&out->assignments, ag_env_defaults[i]);
	for (size_t i = 0; i < values.n; i++)
		ag_strv_push(&out->assignments, values.v[i]);
	ag_strv_sort(&out->assignments);
out:
	for (size_t i = 0; i < values.n; i++)
		explicit_bzero(values.v[i], strlen(values.v[i]));
	ag_strv_release(&values);
	ag_strv_release(&required_missing);
	free(sorted);
	if (rc < 0)
		ag_env_resolved_release(out);
	return rc;
}
