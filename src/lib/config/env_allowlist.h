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
/* True for reserved exact names, prefixes and suffixes. */
bool ag_env_name_reserved(const char *name);
/* True when the name looks secret-like (TOKEN, SECRET, PASSWORD...). */
bool ag_env_name_sensitive(const char *name);
/* True when the value has a byte in U+0000-U+001F or U+007F. */
bool ag_env_value_has_control(const char *value, size_t len);

/* Parses and checks the `environment` list node into c->env. */
int ag_env_parse(struct ag_walk *w, const struct ag_ynode *list, struct ag_contained *c);

#endif
