/*
 * env_allowlist.h: the contained environment allowlist
 * (contained_execution.environment) and its name/value rules.
 *
 * CONTRACT: env.allowlist (names ^[A-Z_][A-Z0-9_]*$, <= 64 chars, reserved
 * host/Docker control names refused, 32 entries, 4096 chars per value,
 * 16384 bytes in all, no control characters, secret-like names need
 * allow_sensitive).
 */
#ifndef AG_ENV_ALLOWLIST_H
#define AG_ENV_ALLOWLIST_H

#include "lib/base/ag.h"

struct ag_walk;
struct ag_ynode;
struct ag_contained;

/* The four fixed runtime defaults, sorted by name, "NAME=VALUE". */
extern const char *const ag_env_defaults[4];

bool ag_env_name_valid(const char *name);
/*
 * True for reserved exact names, prefixes and suffixes (host or Docker
 * control state: Docker/Compose client settings, loader and interpreter
 * paths, certificate bundles, git's ssh/proxy/config overrides, session
 * buses, terminal multiplexers, and *_PATH, *_HOME, *_CONFIG... names).
 * ag_env_name_is_reserved is the same predicate under the name other
 * modules (image ENV checks) call.
 */
bool ag_env_name_reserved(const char *name);
bool ag_env_name_is_reserved(const char *name);
/*
 * True when NAME (its first n bytes) is one of the four fixed defaults,
 * which the renderer always sets: an image's value for it never applies.
 */
bool ag_env_name_is_default(const char *name, size_t n);
/* True when the name looks secret-like (TOKEN, SECRET, PASSWORD...). */
bool ag_env_name_sensitive(const char *name);
/* True when the value has a control character (U+0000-U+001F, U+007F-U+009F),
 * a line or paragraph separator (U+2028, U+2029), or is not valid UTF-8. */
bool ag_env_value_has_control(const char *value, size_t len);

/* Parses and checks the `environment` list node into c->env. */
int ag_env_parse(struct ag_walk *w, const struct ag_ynode *list, struct ag_contained *c);

#include "lib/base/strv.h"

struct ag_error;
struct ag_redactor;

/* Looks up one host variable by exact name; NULL when unset. */
typedef const char *(*ag_env_lookup_fn)(const char *name, void *data);

/* The resolved contained environment: the only variables the container sees. */
struct ag_env_resolved {
	struct ag_strv assignments; /* "NAME=VALUE", sorted by name, defaults included */
	struct ag_strv supplied;    /* configured names resolved, in resolution order */
	struct ag_strv sensitive;   /* names whose values are sensitive */
	struct ag_strv missing;	    /* optional host names that were unset */
	struct ag_strv defaults;    /* HOME, LANG, LC_ALL, PATH */
};

/*
 * Resolves contained_execution.environment: the four fixed defaults, then
 * configured entries sorted by name: literal values as configured, host
 * entries by one exact lookup each (nothing else of the host environment
 * is read). A required host value that is unset fails with
 * config.env.required_missing naming every missing variable (names only);
 * a host value over 4096 characters or with a control character fails
 * with config.env.host_value. Every resolved value is added to `redact`
 * as a secret, since values are never recorded. Library code never calls
 * getenv: the caller passes `lookup`.
 */
int ag_env_resolve(const struct ag_contained *c, ag_env_lookup_fn lookup, void *data,
		   struct ag_redactor *redact, struct ag_env_resolved *out, struct ag_error **err);
void ag_env_resolved_release(struct ag_env_resolved *r);
#endif
