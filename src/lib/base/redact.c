#include "lib/base/ag.h"
#include "lib/base/redact.h"

#include <strings.h>

void ag_redactor_add_secret(struct ag_redactor *r, const char *value)
{
	if (value && *value && ag_strv_find(&r->secrets, value) < 0)
		ag_strv_push(&r->secrets, value);
}

void ag_redactor_add_root(struct ag_redactor *r, const char *root, const char *role)
{
	if (!root || root[0] != '/' || !root[1])
		return;
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	ag_strv_push_owned(&r->roots, ag_xstrndup(root, n));
	ag_strv_push(&r->roles, role);
}

void ag_redactor_release(struct ag_redactor *r)
{
	ag_strv_release(&r->secrets);
	ag_strv_release(&r->roots);
	ag_strv_release(&r->roles);
}

/* A growable output string; redaction output is bounded afterwards. */
struct out {
	char *s;
	size_t len, cap;
};

static void out_add(struct out *o, const char *p, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t nc = o->cap ? o->cap : 256;
		while (nc < o->len + n + 1)
			nc *= 2;
		o->s = ag_xrealloc(o->s, nc);
		o->cap = nc;
	}
	memcpy(o->s + o->len, p, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void out_adds(struct out *o, const char *p)
{
	out_add(o, p, strlen(p));
}

static bool is_word(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static bool is_path_char(unsigned char c)
{
	return is_word(c) || c == '.' || c == '/' || c == '~' || c == '+' || c == '@' ||
	       c == '%' || c == ',' || c == '=' || c >= 0x80;
}

/* Bytes of a value that continues until a delimiter. */
static size_t value_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && !strchr(" \t\r\n\"'`&;,)<>", s[i]))
		i++;
	return i;
}

static bool ci_prefix(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word);
	return n >= wl && strncasecmp(s, word, wl) == 0;
}

static const char *const secret_keys[] = {
	"password", "passwd", "secret", "token", "api_key", "apikey", "access_key",
	"client_secret", "auth_token", "credential", "credentials", "private_key", NULL,
};

/* key=value or key: value where key ends with a secret word. Returns value start offset. */
static size_t secret_assignment(const char *s, size_t n, size_t *val_off)
{
	size_t k = 0;
	while (k < n && (is_word((unsigned char)s[k]) || s[k] == '.'))
		k++;
	if (k == 0 || k >= n)
		return 0;
	bool hit = false;
	for (const char *const *w = secret_keys; *w && !hit; w++) {
		size_t wl = strlen(*w);
		if (k >= wl && strncasecmp(s + k - wl, *w, wl) == 0)
			hit = true;
	}
	if (!hit)
		return 0;
	size_t i = k;
	if (s[i] == '"' || s[i] == '\'')
		i++;
	if (i < n && (s[i] == '=' || s[i] == ':')) {
		i++;
		while (i < n && (s[i] == ' ' || s[i] == '"' || s[i] == '\''))
			i++;
		size_t vl = value_len(s + i, n - i);
		if (vl == 0)
			return 0;
		*val_off = i;
		return i + vl;
	}
	return 0;
}

struct shape {
	const char *prefix;
	size_t min_body;
	const char *body_set; /* NULL: [A-Za-z0-9_-] */
};

static const struct shape shapes[] = {
	{"ghp_", 20, NULL},	    {"gho_", 20, NULL},	       {"ghu_", 20, NULL},
	{"ghs_", 20, NULL},	    {"ghr_", 20, NULL},	       {"github_pat_", 20, NULL},
	{"sk_live_", 12, NULL},	    {"sk_test_", 12, NULL},    {"sk-", 20, NULL},
	{"sk_", 16, NULL},	    {"npm_", 20, NULL},	       {"xoxb-", 10, NULL},
	{"xoxp-", 10, NULL},	    {"AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
	{"AGENTGUARD_SECRET_CANARY", 0, NULL},
};

static size_t token_shape(const char *s, size_t n, bool at_boundary)
{
	if (!at_boundary)
		return 0;
	for (size_t i = 0; i < AG_ARRAY_SIZE(shapes); i++) {
		size_t pl = strlen(shapes[i].prefix);
		if (n < pl || memcmp(s, shapes[i].prefix, pl) != 0)
			continue;
		size_t j = pl;
		while (j < n && (shapes[i].body_set ? strchr(shapes[i].body_set, s[j]) != NULL && s[j]
						     : is_word((unsigned char)s[j])))
			j++;
		if (j - pl >= shapes[i].min_body)
			return j;
	}
	return 0;
}

static const char *const private_prefixes[] = {"/home/", "/root/", "/tmp/", "/var/tmp/",
					       "/Users/", "/private/", "/run/user/", NULL};

static void scan(const char *s, size_t n, unsigned flags, struct out *o)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		bool boundary = i == 0 || !is_word((unsigned char)s[i - 1]);
		/* Authorization headers */
		if (boundary && ci_prefix(s + i, n - i, "authorization:")) {
			size_t j = i + 14;
			while (j < n && s[j] == ' ')
				j++;
			size_t scheme = 0;
			if (ci_prefix(s + j, n - j, "bearer ") || ci_prefix(s + j, n - j, "basic ") ||
			    ci_prefix(s + j, n - j, "token "))
				while (j + scheme < n && s[j + scheme] != ' ')
					scheme++;
			out_add(o, s + i, j + scheme - i);
			j += scheme;
			while (j < n && s[j] == ' ') {
				out_add(o, " ", 1);
				j++;
			}
			size_t vl = value_len(s + j, n - j);
			if (vl)
				out_adds(o, "[REDACTED]");
			i = j + vl;
			continue;
		}
		/* -----BEGIN ... PRIVATE KEY----- */
		if (c == '-' && n - i > 11 && memcmp(s + i, "-----BEGIN ", 11) == 0) {
			const char *end = memmem(s + i, n - i < 128 ? n - i : 128, "PRIVATE KEY-----", 16);
			if (end) {
				out_adds(o, "[REDACTED_PRIVATE_KEY]");
				i = (size_t)(end - s) + 16;
				continue;
			}
		}
		/* scheme://user:pass@host */
		if (c == ':' && n - i > 3 && s[i + 1] == '/' && s[i + 2] == '/') {
			size_t j = i + 3, at = 0;
			while (j < n && !strchr("/ \t\r\n\"'@", s[j]))
				j++;
			if (j < n && s[j] == '@' && j > i + 3)
				at = j;
			if (at) {
				out_adds(o, "://[REDACTED]@");
				i = at + 1;
				continue;
			}
		}
		if (boundary) {
			size_t t = token_shape(s + i, n - i, true);
			if (t) {
				out_adds(o, "[REDACTED]");
				i += t;
				continue;
			}
			size_t voff = 0;
			size_t end = secret_assignment(s + i, n - i, &voff);
			if (end) {
				out_add(o, s + i, voff);
				out_adds(o, "[REDACTED]");
				i += end;
				continue;
			}
		}
		/* Private absolute paths */
		if (c == '/' && (i == 0 || !is_path_char((unsigned char)s[i - 1]))) {
			bool hit = false;
			for (const char *const *p = private_prefixes; *p && !hit; p++)
				hit = ci_prefix(s + i, n - i, *p) && strncmp(s + i, *p, strlen(*p)) == 0;
			if (hit) {
				size_t j = i;
				while (j < n && is_path_char((unsigned char)s[j]))
					j++;
				out_adds(o, "[REDACTED_PATH]");
				i = j;
				continue;
			}
		}
		if (c < 0x20 || c == 0x7f) {
			if ((flags & AG_REDACT_KEEP_NEWLINES) && (c == '\n' || c == '\t')) {
				out_add(o, s + i, 1);
			} else {
				char esc[8];
				snprintf(esc, sizeof(esc), "\\x%02x", c);
				out_adds(o, esc);
			}
			i++;
			continue;
		}
		out_add(o, s + i, 1);
		i++;
	}
}

static int len_desc(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* Replaces roots, then secrets (exact values), then scans for shapes. */
char *ag_redact(const struct ag_redactor *r, const char *s, size_t len, size_t max,
		unsigned flags, bool *truncated)
{
	struct out a = {0};
	out_add(&a, s, len);
	if (r) {
		/*
		 * Roots first: a secret value that happens to occur inside a host
		 * path must not break the path's match and leave the rest of it.
		 */
		/* Roots, longest first, only where the path continues or ends. */
		size_t nr = r->roots.n;
		size_t *order = ag_xcalloc(nr + 1, sizeof(*order));
		for (size_t i = 0; i < nr; i++)
			order[i] = i;
		for (size_t i = 1; i < nr; i++)
			for (size_t j = i; j > 0 && strlen(r->roots.v[order[j]]) >
							  strlen(r->roots.v[order[j - 1]]);
			     j--) {
				size_t t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		for (size_t k = 0; k < nr; k++) {
			const char *root = r->roots.v[order[k]];
			const char *role = r->roles.v[order[k]];
			size_t rl = strlen(root);
			struct out b = {0};
			size_t i = 0;
			while (i < a.len) {
				const char *hit = memmem(a.s + i, a.len - i, root, rl);
				if (!hit) {
					out_add(&b, a.s + i, a.len - i);
					break;
				}
				size_t off = (size_t)(hit - a.s);
				char next = off + rl < a.len ? a.s[off + rl] : '\0';
				bool ok = next == '\0' || next == '/' ||
					  !(is_word((unsigned char)next) || next == '.');
				out_add(&b, a.s + i, off - i);
				if (ok)
					out_adds(&b, role);
				else
					out_add(&b, hit, rl);
				i = off + rl;
			}
			if (!b.s)
				out_add(&b, "", 0);
			free(a.s);
			a = b;
		}
		free(order);
		/* Longest first, so a secret that contains another goes whole. */
		size_t ns = r->secrets.n;
		char **sec = ag_xcalloc(ns + 1, sizeof(*sec));
		for (size_t i = 0; i < ns; i++)
			sec[i] = r->secrets.v[i];
		qsort(sec, ns, sizeof(*sec), len_desc);
		for (size_t k = 0; k < ns; k++) {
			size_t sl = strlen(sec[k]);
			struct out b = {0};
			size_t i = 0;
			while (i < a.len) {
				const char *hit = memmem(a.s + i, a.len - i, sec[k], sl);
				if (!hit) {
					out_add(&b, a.s + i, a.len - i);
					break;
				}
				out_add(&b, a.s + i, (size_t)(hit - (a.s + i)));
				out_adds(&b, "[REDACTED]");
				i = (size_t)(hit - a.s) + sl;
			}
			if (!b.s)
				out_add(&b, "", 0);
			free(a.s);
			a = b;
		}
		free(sec);
	}
	struct out o = {0};
	scan(a.s ? a.s : "", a.len, flags, &o);
	free(a.s);
	if (!o.s)
		out_add(&o, "", 0);
	bool cut = false;
	static const char marker[] = "...[TRUNCATED]";
	if (o.len > max) {
		cut = true;
		size_t keep = max > sizeof(marker) - 1 ? max - (sizeof(marker) - 1) : 0;
		/* Back up to a UTF-8 boundary. */
		while (keep > 0 && ((unsigned char)o.s[keep] & 0xC0) == 0x80)
			keep--;
		o.len = keep;
		o.s[o.len] = '\0';
		if (max >= sizeof(marker) - 1)
			out_adds(&o, marker);
	}
	if (truncated)
		*truncated = cut;
	return o.s;
}

bool ag_redact_contains_secret(const struct ag_redactor *r, const char *s, size_t len)
{
	for (size_t i = 0; r && i < r->secrets.n; i++)
		if (memmem(s, len, r->secrets.v[i], strlen(r->secrets.v[i])))
			return true;
	return false;
}
