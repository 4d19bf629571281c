/*
 * sanitize.c: the one sanitizer and its placeholder vocabulary
 * (sanitize.h): engine and child text, egress strings.
 */
#include "lib/base/ag.h"
#include "lib/base/sanitize.h"
#include "lib/base/redact.h"

#include <ctype.h>

/* A growing output string (never fails: the input is bounded). */
struct so {
	char *s;
	size_t len, cap;
};

static void so_add(struct so *o, const char *p, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->s = ag_xrealloc(o->s, o->cap);
	}
	memcpy(o->s + o->len, p, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void so_adds(struct so *o, const char *p)
{
	so_add(o, p, strlen(p));
}

/* Cuts s[0..n) to at most max bytes without splitting a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* ======================================================================
 * AG_SANITIZE_ENGINE
 * ====================================================================== */

static bool is_token_break(char c)
{
	return c == ' ' || c == '"' || c == '\'' || c == ',' || c == ';' || c == '(' || c == ')' ||
	       c == '[' || c == ']' || c == '{' || c == '}' || c == '<' || c == '>';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_alnum(char c)
{
	return isalnum((unsigned char)c) != 0;
}

/* The length of an engine id at a[i..n) (a run of 12 or more hex digits
 * between non-alphanumerics: exactly 12 (a short id, even all decimal
 * digits), 64 or longer, or holding a letter), else 0. */
static size_t hex_id_at(const char *a, size_t i, size_t n)
{
	if (i > 0 && is_alnum(a[i - 1]))
		return 0;
	size_t j = i;
	bool letter = false;
	while (j < n && is_hex(a[j])) {
		letter |= a[j] >= 'a';
		j++;
	}
	size_t l = j - i;
	if (l < 12 || (j < n && is_alnum(a[j])))
		return 0;
	return l >= 64 || l == 12 || letter ? l : 0;
}

/* A name as an engine message quotes or follows it: a leading '/', a
 * digit or one of - _ . : @ (a plain English word is none). */
static bool looks_like_name(const char *p, size_t n)
{
	if (n == 0 || (n >= 2 && p[0] == '[') || (n >= 2 && p[0] == '$' && p[1] == '{'))
		return false; /* empty, or already a placeholder or a role */
	for (size_t i = 0; i < n; i++)
		if (isdigit((unsigned char)p[i]) || strchr("/-_.:@", p[i]))
			return true;
	return false;
}

/* An Engine API path names objects, not host files ("/containers/ID/start"). */
static bool api_path_at(const char *a, size_t i, size_t n)
{
	static const char *const api[] = {"/containers/", "/networks/", "/images/",
					  "/exec/",	  "/volumes/",	"/v1."};
	for (size_t k = 0; k < AG_ARRAY_SIZE(api); k++) {
		size_t l = strlen(api[k]);
		if (n - i >= l && memcmp(a + i, api[k], l) == 0)
			return true;
	}
	return false;
}

/* After "container", "network", "volume" or "name" (any case, an optional
 * ':' and one space): the offset of the name that follows, else 0. */
static size_t named_object_after(const char *a, size_t i, size_t n)
{
	static const char *const words[] = {"container", "network", "volume", "name"};
	for (size_t k = 0; k < AG_ARRAY_SIZE(words); k++) {
		size_t l = strlen(words[k]);
		if (n - i < l + 2 || strncasecmp(a + i, words[k], l) != 0)
			continue;
		size_t j = i + l;
		if (a[j] == ':')
			j++;
		if (j < n && a[j] == ' ' && j + 1 < n && a[j + 1] != '"')
			return j + 1;
	}
	return 0;
}

/* Pass 2 (sanitize.h step 2): one line of ASCII, whitespace collapsed. */
static char *one_line(const char *in, size_t len, size_t *out_n)
{
	char *a = ag_xmalloc(len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		char o = c < 0x20 || c == 0x7f ? ' ' : c >= 0x80 ? '?' : (char)c;
		if (o == ' ' && (n == 0 || a[n - 1] == ' '))
			continue;
		a[n++] = o;
	}
	while (n > 0 && a[n - 1] == ' ')
		n--;
	a[n] = '\0';
	*out_n = n;
	return a;
}

/* Step 3 at a[i]: writes a placeholder and returns the bytes it stands
 * for, or 0 when a[i] is kept. */
static size_t engine_token(const char *a, size_t i, size_t n, struct so *o)
{
	static const char *const schemes[] = {"unix://", "tcp://",  "npipe://", "ssh://",
					      "fd://",	 "http://", "https://"};
	bool at_start = i == 0 || is_token_break(a[i - 1]) || a[i - 1] == '=' || a[i - 1] == ':';
	for (size_t s = 0; s < AG_ARRAY_SIZE(schemes); s++)
		if (strncasecmp(a + i, schemes[s], strlen(schemes[s])) == 0) {
			size_t j = i;
			while (j < n && !is_token_break(a[j]))
				j++;
			so_adds(o, AG_PH_SECRET);
			return j - i;
		}
	size_t l = hex_id_at(a, i, n);
	if (l) {
		so_adds(o, AG_PH_ID);
		return l;
	}
	if (a[i] == '"') {
		const char *q = memchr(a + i + 1, '"', n - i - 1);
		size_t cl = q ? (size_t)(q - (a + i + 1)) : 0;
		const char *c = a + i + 1;
		bool path = cl > 1 && c[0] == '/' && memchr(c + 1, '/', cl - 1);
		if (q && !path && looks_like_name(c, cl)) {
			so_adds(o, hex_id_at(c, 0, cl) == cl ? "\"" AG_PH_ID "\""
							     : "\"" AG_PH_SECRET "\"");
			return cl + 2;
		}
		return 0;
	}
	if (at_start && (i == 0 || a[i - 1] == ' ')) {
		size_t j = named_object_after(a, i, n);
		if (j) {
			size_t e = j;
			while (e < n && a[e] != ' ')
				e++;
			while (e > j && strchr(".,;:)", a[e - 1]))
				e--; /* the sentence's punctuation stays */
			if (looks_like_name(a + j, e - j) && !hex_id_at(a, j, n)) {
				so_add(o, a + i, j - i);
				so_adds(o, AG_PH_SECRET);
				return e - i;
			}
		}
	}
	if (at_start && a[i] == '/' && !api_path_at(a, i, n)) {
		/* An absolute path of two or more components: private. */
		size_t j = i + 1;
		bool second = false;
		while (j < n && !is_token_break(a[j]) && a[j] != ':') {
			if (a[j] == '/' && j + 1 < n && !is_token_break(a[j + 1]))
				second = true;
			j++;
		}
		if (second) {
			so_adds(o, AG_PH_PATH);
			return j - i;
		}
	}
	if (at_start && (isupper((unsigned char)a[i]) || a[i] == '_')) {
		size_t j = i;
		while (j < n && (isupper((unsigned char)a[j]) || isdigit((unsigned char)a[j]) ||
				 a[j] == '_'))
			j++;
		if (j < n && a[j] == '=') {
			size_t e = j + 1;
			while (e < n && a[e] != ' ')
				e++;
			if (e - (j + 1) == strlen(AG_PH_SECRET) &&
			    memcmp(a + j + 1, AG_PH_SECRET, e - j - 1) == 0)
				return 0; /* already [REDACTED] */
			so_add(o, a + i, j + 1 - i);
			so_adds(o, AG_PH_SECRET);
			return e - i;
		}
	}
	return 0;
}

static char *sanitize_engine(const struct ag_redactor *r, const char *s, size_t len, size_t max)
{
	/* Only ever shrinking text is cut first (a placeholder is at most a
	 * few bytes longer than what it replaces): the passes stay bounded. */
	size_t cut = max < SIZE_MAX / 8 ? 8 * max + 64 : max;
	if (len > cut)
		len = cut;
	char *red = ag_redact(r, s, len, SIZE_MAX, AG_REDACT_KEEP_CONTROLS, NULL);
	size_t n;
	char *a = one_line(red, strlen(red), &n);
	free(red);
	struct so o = {0};
	so_add(&o, "", 0);
	for (size_t i = 0; i < n;) {
		size_t used = engine_token(a, i, n, &o);
		if (used) {
			i += used;
			continue;
		}
		so_add(&o, a + i, 1);
		i++;
	}
	free(a);
	if (o.len > max) {
		size_t ml = strlen(AG_PH_CUT);
		size_t keep = max > ml ? max - ml : 0;
		o.len = keep;
		o.s[keep] = '\0';
		if (max >= ml)
			so_adds(&o, AG_PH_CUT);
	}
	return o.s;
}

/* ======================================================================
 * AG_SANITIZE_EGRESS
 * ====================================================================== */

static const char *const private_prefixes[] = {
    "/home/",	  "/root/", "/tmp/",   "/Users/",   "/var/folders/",	"/private/",
    "/run/user/", "/mnt/",  "/media/", "/var/tmp/", "/var/lib/docker/",
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Characters that continue a name or path ("a.b/home/x" is not /home/). */
static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("._~-/%+@", c));
}

/* A private path starts at i: at the start, after any character that
 * cannot continue a name (blank, quote, '=', ':', ';', '<', '|', '`', ...),
 * or right after an empty URL authority ("file:///home/..."). */
static size_t private_path_at(const char *s, size_t n, size_t i)
{
	bool after_scheme = i >= 3 && s[i - 1] == '/' && s[i - 2] == '/' && s[i - 3] == ':';
	if (i > 0 && !after_scheme && path_char(s[i - 1]))
		return 0;
	for (size_t k = 0; k < AG_ARRAY_SIZE(private_prefixes); k++) {
		size_t l = strlen(private_prefixes[k]);
		if (n - i >= l && memcmp(s + i, private_prefixes[k], l) == 0)
			return l;
	}
	return 0;
}

static size_t token_end(const char *s, size_t n, size_t i)
{
	while (i < n && !is_blank(s[i]))
		i++;
	return i;
}

enum issue { ISSUE_NONE = 0, ISSUE_URL_QUERY, ISSUE_QUERY, ISSUE_PATH };

/*
 * The first thing the egress profile must change at or after `from` (a
 * token boundary) in s[0..n), one pass per blank-free token: a private
 * path (where a path may start, including right after "://"), a '?'
 * inside a URL (after "://" in the token: dropped with the rest of the
 * token), a '?' elsewhere with an '=' after it in the same token
 * (replaced), or a '#' after "://" (a fragment). Linear in n.
 */
static enum issue find_issue(const char *s, size_t n, size_t from, size_t *at)
{
	for (size_t b = from; b < n;) {
		if (is_blank(s[b])) {
			b++;
			continue;
		}
		size_t e = b, url = SIZE_MAX, last_eq = 0;
		bool eq = false;
		for (; e < n && !is_blank(s[e]); e++) {
			if (s[e] == '=') {
				last_eq = e;
				eq = true;
			}
			if (url == SIZE_MAX && e + 2 < n && s[e] == ':' && s[e + 1] == '/' &&
			    s[e + 2] == '/')
				url = e;
		}
		for (size_t i = b; i < e; i++) {
			if (private_path_at(s, n, i)) {
				*at = i;
				return ISSUE_PATH;
			}
			/* Inside a URL every '?' starts a query ("?SECRET" has no '='). */
			if ((s[i] == '?' && ((eq && last_eq > i) || url < i)) ||
			    (s[i] == '#' && url < i)) {
				*at = i;
				return url < i ? ISSUE_URL_QUERY : ISSUE_QUERY;
			}
		}
		b = e;
	}
	return ISSUE_NONE;
}

static char *sanitize_egress(const char *s, size_t len, size_t max)
{
	/* Only ever dropping content, so cut first: the scans below are then
	 * bounded (a query or path cut short is still a query or path). */
	size_t n = utf8_cut(s, len, max < SIZE_MAX / 2 ? 2 * max : max);
	struct so o = {0};
	so_add(&o, "", 0);
	for (size_t i = 0; i < n;) {
		size_t at = n;
		enum issue k = find_issue(s, n, i, &at);
		so_add(&o, s + i, at - i);
		if (k == ISSUE_QUERY)
			so_adds(&o, AG_PH_QUERY);
		else if (k == ISSUE_PATH)
			so_adds(&o, AG_PH_PATH);
		i = k == ISSUE_NONE ? n : token_end(s, n, at);
	}
	o.len = utf8_cut(o.s, o.len, max);
	o.s[o.len] = '\0';
	return o.s;
}

/* ====================================================================== */

char *ag_sanitize(const struct ag_redactor *r, enum ag_sanitize_profile p, const char *s,
		  size_t len, size_t max)
{
	if (!s)
		s = "";
	return p == AG_SANITIZE_EGRESS ? sanitize_egress(s, len, max)
				       : sanitize_engine(r, s, len, max);
}

const char *ag_sanitize_finds(enum ag_sanitize_profile p, const char *s, size_t len, size_t max)
{
	if (p == AG_SANITIZE_EGRESS) {
		size_t at;
		enum issue k = find_issue(s, len, 0, &at);
		if (k == ISSUE_PATH)
			return AG_PH_PATH;
		if (k != ISSUE_NONE)
			return AG_PH_QUERY;
		return len > max ? AG_PH_TRUNCATED : NULL;
	}
	char *c = sanitize_engine(NULL, s, len, max);
	bool same = strlen(c) == len && memcmp(c, s, len) == 0;
	free(c);
	return same ? NULL : len > max ? AG_PH_TRUNCATED : AG_PH_SECRET;
}
