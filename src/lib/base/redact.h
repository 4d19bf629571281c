/*
 * redact.h: the one redaction choke point for anything AgentGuard writes
 * or prints that may carry untrusted or secret text (agent output, Docker
 * diagnostics, command displays, paths).
 *
 * A redaction set holds secret values (configured sensitive environment
 * values, every resolved environment value) and host path roots with the
 * portable role that replaces them (e.g. the repository root becomes
 * ${REPOSITORY_ROOT}). ag_redact() applies, in order: path roots -> role
 * tokens (longest root first, only at a path-separator boundary); secret
 * values -> "[REDACTED]"; credential shapes (Authorization headers,
 * password=/token= assignments, URL userinfo, ghp_/github_pat_/sk_/npm_
 * tokens, private-key headers) -> "[REDACTED]"; remaining absolute paths
 * under /home, /root, /tmp, /var/tmp, /Users, /private -> "[REDACTED_PATH]";
 * control characters -> "\xNN" (newline and tab kept when allowed); then
 * the result is bounded to `max` bytes on a UTF-8 boundary.
 */
#ifndef AG_REDACT_H
#define AG_REDACT_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"

struct ag_redactor {
	struct ag_strv secrets; /* values to remove wherever they appear */
	struct ag_strv roots;	/* host path roots */
	struct ag_strv roles;	/* role token for roots[i], e.g. "${RUN_ROOT}" */
};

#define AG_REDACTOR_INIT {AG_STRV_INIT, AG_STRV_INIT, AG_STRV_INIT}

/* Adds a secret value; empty values are ignored. */
void ag_redactor_add_secret(struct ag_redactor *r, const char *value);
/* Adds a host path root (absolute, no trailing '/') and its role token. */
void ag_redactor_add_root(struct ag_redactor *r, const char *root, const char *role);
void ag_redactor_release(struct ag_redactor *r);

enum ag_redact_flags {
	AG_REDACT_KEEP_NEWLINES = 1u << 0, /* keep \n and \t (captured output) */
};

/*
 * Returns a new string: `len` bytes of `s` redacted and bounded to `max`
 * bytes (a "...[TRUNCATED]" marker counts within max). *truncated, if
 * given, is set when the bound cut the text.
 */
char *ag_redact(const struct ag_redactor *r, const char *s, size_t len, size_t max,
		unsigned flags, bool *truncated);

/* True when the text still contains a secret of the set (for tests/verify). */
bool ag_redact_contains_secret(const struct ag_redactor *r, const char *s, size_t len);

#endif
