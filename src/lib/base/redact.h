/*
 * redact.h: the one redaction choke point for anything AgentGuard writes
 * or prints that may carry untrusted or secret text (agent output, Docker
 * diagnostics, command displays, paths).
 *
 * A redaction set holds secret values (configured sensitive environment
 * values, every resolved environment value, credential arguments of the
 * agent argv) and host path roots with the portable role that replaces them
 * (e.g. the repository root becomes ${REPOSITORY_ROOT}). ag_redact() does:
 *
 *  1. literals, in ONE pass over the text (an Aho-Corasick automaton over
 *     every root and every secret, plus each secret's encoded forms: the
 *     artifact's path percent-encoding, URL percent-encoding in upper and
 *     lower case hex, and JSON \uXXXX escapes). Roots come before secrets:
 *     at each position the longest root that ends at a path-separator
 *     boundary (end, '/', or a byte that is neither a word character nor
 *     '.') becomes its role token, leftmost first; every other byte that
 *     lies inside any occurrence of any secret is replaced, one
 *     "[REDACTED]" per run of overlapping occurrences (so a secret that
 *     overlaps another goes whole, and one cut by a root goes in part);
 *  2. shapes, in one pass over the result: Authorization and
 *     Proxy-Authorization header values, credential flags followed by a
 *     value (--token X, --api-key=X, ...), key=value / key: value where the
 *     key ends in a secret word (password, token, api-key, ...), URL
 *     userinfo, ghp_/github_pat_/sk_/npm_/xox?-/AKIA tokens and private-key
 *     headers -> "[REDACTED]"; absolute paths under /home, /root, /tmp,
 *     /var/tmp, /Users, /private, /run/user -> "[REDACTED_PATH]"; control
 *     characters -> "\xNN" (newline and tab kept when asked);
 *  3. the result is bounded to `max` bytes on a UTF-8 boundary.
 *
 * Cost: linear in the text. Step 1 does one automaton transition per byte
 * (failure links are amortised: each one lowers the match depth that the
 * byte's own step raised by at most one), reads the longest secret ending
 * at the byte in O(1) (precomputed per state) and visits at most one state
 * per root for root ends; decisions are delayed by the longest pattern in a
 * ring buffer. Step 2 advances past every byte it inspects, except the
 * key scan of an assignment, which is done once per maximal run of key
 * characters and reused by every start inside that run. ag_redact_counted()
 * reports the steps so tests can assert the bound without a clock.
 */
#ifndef AG_REDACT_H
#define AG_REDACT_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"

struct ag_redact_ac;

struct ag_redactor {
	struct ag_strv secrets; /* values to remove wherever they appear */
	struct ag_strv roots;	/* host path roots */
	struct ag_strv roles;	/* role token for roots[i], e.g. "${RUN_ROOT}" */
	/* The automaton: built by the first ag_redact() after a change of the
	 * set, dropped by the next add or release; private. So one redactor is
	 * not used from two threads at once (no caller does). */
	struct ag_redact_ac *ac;
};

#define AG_REDACTOR_INIT                                                                           \
	{                                                                                          \
		AG_STRV_INIT, AG_STRV_INIT, AG_STRV_INIT, NULL                                     \
	}

/* Adds a secret value; empty values are ignored. */
void ag_redactor_add_secret(struct ag_redactor *r, const char *value);
/* Adds a host path root (absolute, no trailing '/') and its role token. */
void ag_redactor_add_root(struct ag_redactor *r, const char *root, const char *role);
void ag_redactor_release(struct ag_redactor *r);

enum ag_redact_flags {
	AG_REDACT_KEEP_NEWLINES = 1u << 0, /* keep \n and \t (captured output) */
	AG_REDACT_KEEP_CONTROLS = 1u << 1, /* escape no byte: the caller encodes after */
};

/*
 * Returns a new string: `len` bytes of `s` redacted and bounded to `max`
 * bytes (a "...[TRUNCATED]" marker counts within max). *truncated, if
 * given, is set when the bound cut the text.
 */
char *ag_redact(const struct ag_redactor *r, const char *s, size_t len, size_t max, unsigned flags,
		bool *truncated);
/* ag_redact(), adding the work done (byte inspections and automaton moves) to *steps. */
char *ag_redact_counted(const struct ag_redactor *r, const char *s, size_t len, size_t max,
			unsigned flags, bool *truncated, uint64_t *steps);

/* True when the text still contains a secret of the set (for tests/verify). */
bool ag_redact_contains_secret(const struct ag_redactor *r, const char *s, size_t len);

/*
 * Credential arguments of an argv (the agent's command). A credential flag
 * is -/-- followed by token, api-key, apikey, password, passwd, secret,
 * client-secret, access-token, auth-token, ... or a name ending in -token,
 * -password, -secret, -api-key, -access-key, -secret-key (any case, '_'
 * read as '-'); its value is the next argument, or what follows '=' in the
 * same argument. -H/--header (and --header=..., -HName: v) take an HTTP
 * header: its value is redacted in the argv whatever the name (as the
 * earlier implementation did), and is a credential, joining the secret set,
 * when the name carries one (Authorization, Proxy-Authorization, Cookie, or
 * a name holding auth, token, key, secret, password, session, credential);
 * after a scheme word ("Bearer X") the value is X. A bare "Name: value"
 * argument with such a name, and NAME=value with a secret-like NAME, count
 * too.
 */
enum ag_cred_arg {
	AG_CRED_NONE = 0,
	AG_CRED_NEXT,	     /* the next argument is the value */
	AG_CRED_INLINE,	     /* the value is in this argument, at *value_off */
	AG_CRED_HEADER_NEXT, /* -H/--header: the next argument is a header */
};
enum ag_cred_arg ag_cred_arg_kind(const char *arg, size_t *value_off);
/* For a header "Name: [scheme ]value" with a credential name: true and the
 * offset of the credential in *value_off. */
bool ag_cred_header(const char *hdr, size_t *value_off);
/* Adds every credential value of argv to the secret set. */
void ag_redactor_add_argv(struct ag_redactor *r, const char *const *argv, size_t argc);
/*
 * argv[i] as the artifact records it: the credential of a credential flag
 * or header replaced by "[REDACTED]" whatever the secret set holds, the
 * rest through ag_redact(r, ..., max).
 */
char *ag_redact_argv_item(const struct ag_redactor *r, const char *const *argv, size_t argc,
			  size_t i, size_t max);
/*
 * For verification: true when argv item i (of a recorded argv) still holds a
 * credential, i.e. a credential flag's or header's value that is not
 * "[REDACTED]" (or "[TRUNCATED]", the cut marker).
 */
bool ag_argv_item_leaks_credential(const char *const *argv, size_t argc, size_t i);

/*
 * Streaming redaction (the agent's live output): text that arrives in
 * chunks comes out as ag_redact(r, piece, ..., AG_REDACT_KEEP_CONTROLS)
 * of pieces cut only where cutting changes nothing: after a line end
 * ('\n' or '\r') where no literal of the set (a secret, one of its
 * encoded forms, a root) can be open (the automaton is at depth 0) and no
 * "-----BEGIN " is within the 128 bytes the private-key shape looks ahead
 * (counted after the literal pass: bytes covered by a match do not count). So a secret split over
 * two chunks, or over a pause, is held back until it is whole and is redacted like the evidence
 * redacts it; what ends up emitted is, piece by piece, what redacting the whole text gives.
 *
 * Memory is bounded: at most line_max + the longest pattern bytes are
 * held. A line longer than that is cut at its last blank before the bound
 * (cut = true on that emit) and the rest of the line, up to a line end
 * where no pattern is open, is withheld: a value or token the cut could
 * split is never shown in part.
 *
 * The set is copied at creation: later changes to r do not apply. The
 * text emitted keeps control bytes (the caller escapes for its terminal).
 */
struct ag_redact_stream;
typedef void (*ag_redact_emit_fn)(void *ctx, const char *text, size_t len, bool cut);
struct ag_redact_stream *ag_redact_stream_new(const struct ag_redactor *r, size_t line_max,
					      ag_redact_emit_fn emit, void *ctx);
/* Feeds n bytes; emits every piece that is safe to emit now. */
void ag_redact_stream_feed(struct ag_redact_stream *s, const char *p, size_t n);
/* The end of the text: what is held is redacted and emitted (as a whole text's end). */
void ag_redact_stream_finish(struct ag_redact_stream *s);
/*
 * The text was cut short (a capture bound): what is held, an unfinished
 * line that may end in the first part of a secret, is dropped unshown, and
 * nothing more is emitted.
 */
void ag_redact_stream_abandon(struct ag_redact_stream *s);
/* Raw bytes held now (for tests: never more than line_max + the longest pattern). */
size_t ag_redact_stream_held(const struct ag_redact_stream *s);
void ag_redact_stream_free(struct ag_redact_stream *s);

#endif
