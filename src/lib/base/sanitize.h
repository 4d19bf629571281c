/*
 * sanitize.h: the one sanitizer for text AgentGuard did not write itself,
 * and the one placeholder vocabulary every redaction uses.
 *
 * What the Docker engine says (a daemon's error message, a client's
 * stderr, a field of an inspect answer), what a child process says, and
 * the strings of an egress record all pass ag_sanitize() before they reach
 * an error message, a diagnostic, a terminal or an artifact. It builds on
 * the redactor (redact.h): with the run's redaction set its secrets and
 * host roots go first, then its credential shapes and private paths.
 *
 * THE VOCABULARY (the words evidence consumers read; nothing else stands
 * for removed text):
 *   [REDACTED]              a secret, a credential, an endpoint, a value of a
 *                           NAME=value assignment, an object's name
 *   [REDACTED_ID]           an engine object id (64 hex digits, or the
 *                           12-digit and other short forms, or longer)
 *   [REDACTED_PATH]         a private host path
 *   [REDACTED_QUERY]        the query of a URL-like string (egress)
 *   [REDACTED_PRIVATE_KEY]  a private-key block
 *   ${REPOSITORY_ROOT} ...  a host root of the run, by its portable role
 *   ...[TRUNCATED]          the end of a text cut at its bound
 *   [INVALID_UTF8]          an egress string that is not UTF-8, whole
 *
 * PROFILES
 *
 * AG_SANITIZE_ENGINE (engine and child diagnostics; one line of ASCII):
 *  1. the redactor: the set's roots become their roles and its secrets
 *     [REDACTED] (no set: shapes only), credential shapes [REDACTED],
 *     private-key blocks [REDACTED_PRIVATE_KEY], paths under /home, /root,
 *     /tmp, ... [REDACTED_PATH];
 *  2. control characters become spaces, other non-ASCII bytes '?',
 *     whitespace runs one space;
 *  3. token by token: Docker endpoints (unix://, tcp://, npipe://, ssh://,
 *     fd://, http(s)://...) -> [REDACTED]; a run of 12 or more hex digits
 *     between non-alphanumerics (64 or longer, or holding a letter a-f) ->
 *     [REDACTED_ID]; a double-quoted name ("/other", "x-1": a leading '/',
 *     a digit or one of - _ . : @) -> "[REDACTED]"; the name after the
 *     word container, network, volume or name (optionally with ':') when
 *     it looks like one -> [REDACTED]; an absolute path of two or more
 *     components (other than an Engine API path) -> [REDACTED_PATH]; the
 *     value of NAME=value with an upper-case NAME -> [REDACTED];
 *  4. the result is bounded to `max` bytes ("...[TRUNCATED]" within it).
 * So the engine's 409 for a name in use by another container reads
 * `Conflict. The container name "[REDACTED]" is already in use by container
 * "[REDACTED_ID]". ...`.
 *
 * AG_SANITIZE_EGRESS (egress manifest strings; UTF-8 kept, no redactor):
 * the string is cut to `max` bytes at a character boundary; in a
 * blank-free token with "://" everything from a '?' or '#' after it goes
 * (the token's end included) and becomes [REDACTED_QUERY]; elsewhere a '?'
 * with an '=' after it in the same token does the same; a private path
 * (/home/, /root/, /tmp/, /Users/, /var/folders/, /private/, /run/user/,
 * /mnt/, /media/, /var/tmp/, /var/lib/docker/ where a path may start,
 * including right after "://") becomes [REDACTED_PATH] to the token's end.
 * Idempotent: a sanitized string is its own sanitized form.
 *
 * Cost: linear in the text (the input is cut to a multiple of max first).
 */
#ifndef AG_SANITIZE_H
#define AG_SANITIZE_H

#include "lib/base/ag.h"

struct ag_redactor;

#define AG_PH_SECRET "[REDACTED]"
#define AG_PH_ID "[REDACTED_ID]"
#define AG_PH_PATH "[REDACTED_PATH]"
#define AG_PH_QUERY "[REDACTED_QUERY]"
#define AG_PH_PRIVATE_KEY "[REDACTED_PRIVATE_KEY]"
#define AG_PH_TRUNCATED "[TRUNCATED]"
#define AG_PH_CUT "..." AG_PH_TRUNCATED
#define AG_PH_INVALID_UTF8 "[INVALID_UTF8]"

enum ag_sanitize_profile {
	AG_SANITIZE_ENGINE = 0, /* engine / child text: one line, ids, names, paths */
	AG_SANITIZE_EGRESS,	/* egress strings: queries, private paths */
};

/*
 * A new string: len bytes of s sanitized by profile p, at most max bytes.
 * r (may be NULL) is the run's redaction set (AG_SANITIZE_ENGINE only).
 */
char *ag_sanitize(const struct ag_redactor *r, enum ag_sanitize_profile p, const char *s,
		  size_t len, size_t max);

/*
 * For validators: NULL when ag_sanitize(NULL, p, s, len, max) leaves s as
 * it is; otherwise what the first change is: AG_PH_PATH, AG_PH_QUERY (the
 * egress profile), AG_PH_TRUNCATED (only the bound cuts it), or
 * AG_PH_SECRET (anything else).
 */
const char *ag_sanitize_finds(enum ag_sanitize_profile p, const char *s, size_t len, size_t max);

#endif
