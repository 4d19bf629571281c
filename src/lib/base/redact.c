#include "lib/base/ag.h"
#include "lib/base/redact.h"
#include "lib/base/sanitize.h"
#include "lib/base/bounds.h"
#include "lib/base/termsafe.h"

#include <strings.h>

static void ac_free(struct ag_redact_ac *ac);

static void invalidate(struct ag_redactor *r)
{
	ac_free(r->ac);
	r->ac = NULL;
}

void ag_redactor_add_secret(struct ag_redactor *r, const char *value)
{
	if (value && *value && ag_strv_find(&r->secrets, value) < 0) {
		ag_strv_push(&r->secrets, value);
		invalidate(r);
	}
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
	invalidate(r);
}

void ag_redactor_release(struct ag_redactor *r)
{
	ag_strv_release(&r->secrets);
	ag_strv_release(&r->roots);
	ag_strv_release(&r->roles);
	invalidate(r);
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

/* ------------------------------------------------------------------------
 * Step 1: roots and secrets, one Aho-Corasick pass.
 * ------------------------------------------------------------------------ */

#define AC_NONE UINT32_MAX

struct ac_edge {
	unsigned char c;
	uint32_t to;
};

struct ag_redact_ac {
	uint32_t n;	       /* states; 0 is the start state */
	uint32_t *fail;	       /* failure link */
	uint32_t *depth;       /* length of the state's string */
	uint32_t *root_out;    /* nearest state on the failure chain (itself included)
				  that ends a root, or AC_NONE */
	uint32_t *root_idx;    /* root ending exactly here, or AC_NONE */
	uint32_t *sec_len;     /* longest secret that is a suffix of the state's string */
	uint32_t *eoff, *ecnt; /* the state's edges: edges[eoff .. eoff + ecnt), by byte */
	struct ac_edge *edges;
	uint32_t start_next[256];
	size_t maxlen; /* longest pattern */
};

static void ac_free(struct ag_redact_ac *ac)
{
	if (!ac)
		return;
	free(ac->fail);
	free(ac->depth);
	free(ac->root_out);
	free(ac->root_idx);
	free(ac->sec_len);
	free(ac->eoff);
	free(ac->ecnt);
	free(ac->edges);
	free(ac);
}

static uint32_t ac_child(const struct ag_redact_ac *ac, uint32_t u, unsigned char c)
{
	const struct ac_edge *e = ac->edges + ac->eoff[u];
	uint32_t lo = 0, hi = ac->ecnt[u];
	while (lo < hi) { /* at most 8 rounds: a state has at most 256 edges */
		uint32_t mid = (lo + hi) / 2;
		if (e[mid].c == c)
			return e[mid].to;
		if (e[mid].c < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return AC_NONE;
}

/* The trie while it is built: first-child / next-sibling lists. */
struct trie {
	uint32_t n, cap;
	uint32_t *first, *next, *depth, *root_idx;
	unsigned char *ch;
	bool *secret;
};

static uint32_t trie_new(struct trie *t, unsigned char c, uint32_t depth)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->first = ag_xrealloc(t->first, t->cap * sizeof(*t->first));
		t->next = ag_xrealloc(t->next, t->cap * sizeof(*t->next));
		t->depth = ag_xrealloc(t->depth, t->cap * sizeof(*t->depth));
		t->root_idx = ag_xrealloc(t->root_idx, t->cap * sizeof(*t->root_idx));
		t->ch = ag_xrealloc(t->ch, t->cap);
		t->secret = ag_xrealloc(t->secret, t->cap * sizeof(*t->secret));
	}
	uint32_t u = t->n++;
	t->first[u] = t->next[u] = AC_NONE;
	t->depth[u] = depth;
	t->root_idx[u] = AC_NONE;
	t->ch[u] = c;
	t->secret[u] = false;
	return u;
}

static uint32_t trie_insert(struct trie *t, const char *p, size_t len)
{
	uint32_t u = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		uint32_t v = t->first[u];
		while (v != AC_NONE && t->ch[v] != c)
			v = t->next[v];
		if (v == AC_NONE) {
			v = trie_new(t, c, (uint32_t)(i + 1));
			t->next[v] = t->first[u];
			t->first[u] = v;
		}
		u = v;
	}
	return u;
}

static const char hex_up[] = "0123456789ABCDEF", hex_lo[] = "0123456789abcdef";

static bool url_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

enum enc { ENC_PATH, ENC_URL_UP, ENC_URL_LO, ENC_HIGH, ENC_JSON_UP, ENC_JSON_LO, ENC_N };

/*
 * One encoded form of a secret: ENC_PATH is the artifact's lossless path
 * encoding (%XX for '%', controls and bytes outside valid UTF-8), ENC_HIGH
 * the writer's fallback for a string that is not UTF-8 (%XX for every byte
 * >= 0x80), ENC_URL_* URL percent-encoding, ENC_JSON_* JSON string escaping
 * with \uXXXX for controls and every non-ASCII character.
 */
static char *encode(const char *s, enum enc how)
{
	struct out o = {0};
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	const char *hx = how == ENC_URL_LO || how == ENC_JSON_LO ? hex_lo : hex_up;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		uint32_t cp = 0;
		size_t k = ag_utf8_decode(u + i, n - i, &cp);
		char e[16];
		bool pct = false;
		switch (how) {
		case ENC_PATH:
			pct = c < 0x20 || c == 0x7f || c == '%' || k == 0;
			break;
		case ENC_URL_UP:
		case ENC_URL_LO:
			pct = !url_unreserved(c);
			break;
		case ENC_HIGH:
			pct = c >= 0x80;
			break;
		default:
			if (c == '"' || c == '\\') {
				e[0] = '\\';
				e[1] = (char)c;
				out_add(&o, e, 2);
				i++;
				continue;
			}
			if (k == 0) { /* not representable in JSON: keep the byte */
				out_add(&o, s + i, 1);
				i++;
				continue;
			}
			if (c >= 0x20 && c < 0x7f) {
				out_add(&o, s + i, 1);
				i++;
				continue;
			}
			uint32_t units[2] = {cp, 0};
			size_t nu = 1;
			if (cp >= 0x10000) {
				units[0] = 0xD800 + ((cp - 0x10000) >> 10);
				units[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
				nu = 2;
			}
			for (size_t q = 0; q < nu; q++) {
				e[0] = '\\';
				e[1] = 'u';
				for (int d = 0; d < 4; d++)
					e[2 + d] = hx[(units[q] >> (12 - 4 * d)) & 15];
				out_add(&o, e, 6);
			}
			i += k;
			continue;
		}
		if (pct) {
			e[0] = '%';
			e[1] = hx[c >> 4];
			e[2] = hx[c & 15];
			out_add(&o, e, 3);
			i++;
		} else {
			size_t w = k ? k : 1; /* a whole UTF-8 character */
			out_add(&o, s + i, w);
			i += w;
		}
	}
	if (!o.s)
		out_add(&o, "", 0);
	return o.s;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct ac_edge *x = a, *y = b;
	return (int)x->c - (int)y->c;
}

static struct ag_redact_ac *ac_build(const struct ag_redactor *r)
{
	struct trie t = {0};
	trie_new(&t, 0, 0);
	size_t maxlen = 0;
	for (size_t i = 0; i < r->roots.n; i++) {
		size_t l = strlen(r->roots.v[i]);
		uint32_t u = trie_insert(&t, r->roots.v[i], l);
		if (t.root_idx[u] == AC_NONE)
			t.root_idx[u] = (uint32_t)i; /* an identical later root never wins */
		if (l > maxlen)
			maxlen = l;
	}
	for (size_t i = 0; i < r->secrets.n; i++) {
		const char *v = r->secrets.v[i];
		/* encoded forms of every configured secret (env values are at most
		 * 4096 characters); a longer argv value is matched as given */
		int last = strlen(v) <= AG_REDACT_ENCODED_SECRET_MAX ? ENC_N : 0;
		for (int how = -1; how < last; how++) {
			char *e = how < 0 ? NULL : encode(v, (enum enc)how);
			const char *p = e ? e : v;
			if (!e || strcmp(e, v) != 0) {
				size_t l = strlen(p);
				uint32_t u = trie_insert(&t, p, l); /* may move t.secret */
				t.secret[u] = true;
				if (l > maxlen)
					maxlen = l;
			}
			free(e);
		}
	}
	struct ag_redact_ac *ac = ag_xcalloc(1, sizeof(*ac));
	uint32_t n = t.n;
	ac->n = n;
	ac->maxlen = maxlen;
	ac->fail = ag_xcalloc(n, sizeof(uint32_t));
	ac->depth = t.depth;
	ac->root_idx = t.root_idx;
	ac->root_out = ag_xcalloc(n, sizeof(uint32_t));
	ac->sec_len = ag_xcalloc(n, sizeof(uint32_t));
	ac->eoff = ag_xcalloc(n, sizeof(uint32_t));
	ac->ecnt = ag_xcalloc(n, sizeof(uint32_t));
	ac->edges = ag_xcalloc(n ? n : 1, sizeof(struct ac_edge));
	/* Flatten each state's children into a sorted edge array. */
	uint32_t used = 0;
	for (uint32_t u = 0; u < n; u++) {
		ac->eoff[u] = used;
		for (uint32_t v = t.first[u]; v != AC_NONE; v = t.next[v])
			ac->edges[used++] = (struct ac_edge){t.ch[v], v};
		ac->ecnt[u] = used - ac->eoff[u];
		qsort(ac->edges + ac->eoff[u], ac->ecnt[u], sizeof(struct ac_edge), edge_cmp);
	}
	for (unsigned c = 0; c < 256; c++) {
		uint32_t v = ac_child(ac, 0, (unsigned char)c);
		ac->start_next[c] = v == AC_NONE ? 0 : v;
	}
	/* Breadth first: failure links, then the per-state outputs. */
	uint32_t *queue = ag_xcalloc(n, sizeof(uint32_t));
	size_t qh = 0, qt = 0;
	ac->root_out[0] = AC_NONE;
	queue[qt++] = 0;
	while (qh < qt) {
		uint32_t u = queue[qh++];
		for (uint32_t k = 0; k < ac->ecnt[u]; k++) {
			struct ac_edge e = ac->edges[ac->eoff[u] + k];
			uint32_t v = e.to, f = 0;
			if (u != 0) {
				uint32_t w = ac->fail[u];
				for (;;) {
					uint32_t x = ac_child(ac, w, e.c);
					if (x != AC_NONE) {
						f = x;
						break;
					}
					if (w == 0)
						break;
					w = ac->fail[w];
				}
			}
			ac->fail[v] = f;
			ac->root_out[v] = ac->root_idx[v] != AC_NONE ? v : ac->root_out[f];
			ac->sec_len[v] = t.secret[v] ? ac->depth[v] : ac->sec_len[f];
			queue[qt++] = v;
		}
	}
	free(queue);
	free(t.first);
	free(t.next);
	free(t.ch);
	free(t.secret);
	return ac;
}

/* The automaton's move from state v on byte c (each step counted in *st). */
static inline uint32_t ac_next(const struct ag_redact_ac *ac, uint32_t v, unsigned char c,
			       uint64_t *st)
{
	for (;;) {
		(*st)++;
		if (v == 0)
			return ac->start_next[c];
		uint32_t x = ac_child(ac, v, c);
		if (x != AC_NONE)
			return x;
		v = ac->fail[v];
	}
}

/*
 * The literal pass. Position p of the text is decided once every pattern
 * that could start at p has been seen (maxlen bytes later); the decisions
 * live in a ring of maxlen + 1 slots indexed by position.
 */
struct lit {
	const struct ag_redactor *r;
	const char *s;
	size_t n, W;
	uint32_t *rlen, *ridx; /* best valid root starting at the slot's position */
	size_t *send;	       /* furthest end of a secret starting there */
	size_t root_end, cov, plain;
	bool in_sec;
	struct out *o;
};

static void lit_flush(struct lit *L, size_t p)
{
	if (L->plain != SIZE_MAX) {
		out_add(L->o, L->s + L->plain, p - L->plain);
		L->plain = SIZE_MAX;
	}
}

static inline void lit_decide(struct lit *L, size_t p)
{
	size_t k = p & (L->W - 1);
	if (L->in_sec && p >= L->cov)
		L->in_sec = false;
	if (L->send[k] > L->cov)
		L->cov = L->send[k];
	if (p < L->root_end) {
		lit_flush(L, p); /* inside a root already replaced */
	} else if (L->rlen[k]) {
		lit_flush(L, p);
		out_adds(L->o, L->r->roles.v[L->ridx[k]]);
		L->root_end = p + L->rlen[k];
		L->in_sec = false;
	} else if (L->cov > p) {
		lit_flush(L, p);
		if (!L->in_sec)
			out_adds(L->o, AG_PH_SECRET);
		L->in_sec = true;
	} else if (L->plain == SIZE_MAX) {
		L->plain = p;
	}
	L->rlen[k] = 0;
	L->send[k] = 0;
}

static void literal_pass(const struct ag_redactor *r, const struct ag_redact_ac *ac, const char *s,
			 size_t n, struct out *o, uint64_t *steps)
{
	/* Live positions span at most maxlen bytes (and never more than the
	 * text): a power of two above that gives each its own slot by mask. */
	size_t span = ac->maxlen < n ? ac->maxlen : n, W = 1;
	while (W <= span)
		W <<= 1;
	struct lit L = {.r = r, .s = s, .n = n, .W = W, .plain = SIZE_MAX, .o = o};
	L.rlen = ag_xcalloc(L.W, sizeof(uint32_t));
	L.ridx = ag_xcalloc(L.W, sizeof(uint32_t));
	L.send = ag_xcalloc(L.W, sizeof(size_t));
	uint64_t st = 0;
	uint32_t v = 0;
	size_t pos = 0;
	for (size_t j = 0; j < n; j++) {
		/* One transition; failure moves are paid for by earlier depth gains. */
		v = ac_next(ac, v, (unsigned char)s[j], &st);
		uint32_t sl = ac->sec_len[v];
		if (sl) {
			size_t k = (j + 1 - sl) & (L.W - 1);
			if (L.send[k] < j + 1)
				L.send[k] = j + 1;
		}
		for (uint32_t u = ac->root_out[v]; u != AC_NONE; u = ac->root_out[ac->fail[u]]) {
			st++; /* at most one state per root */
			unsigned char nx = j + 1 < n ? (unsigned char)s[j + 1] : 0;
			if (!(nx == 0 || nx == '/' || !(is_word(nx) || nx == '.')))
				continue;
			size_t k = (j + 1 - ac->depth[u]) & (L.W - 1);
			if (ac->depth[u] > L.rlen[k]) {
				L.rlen[k] = ac->depth[u];
				L.ridx[k] = ac->root_idx[u];
			}
		}
		if (j + 1 >= ac->maxlen)
			lit_decide(&L, pos++);
	}
	while (pos < n) {
		st++;
		lit_decide(&L, pos++);
	}
	lit_flush(&L, n);
	free(L.rlen);
	free(L.ridx);
	free(L.send);
	*steps += st + n;
}

/* ------------------------------------------------------------------------
 * Step 2: credential shapes, private paths and controls, one scan.
 * ------------------------------------------------------------------------ */

static bool is_path_char(unsigned char c)
{
	return is_word(c) || c == '.' || c == '/' || c == '~' || c == '+' || c == '@' || c == '%' ||
	       c == ',' || c == '=' || c >= 0x80;
}

static bool is_delim(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' || c == '\'' ||
	       c == '`' || c == '&' || c == ';' || c == ',' || c == ')' || c == '<' || c == '>' ||
	       c == '\0';
}

/* Bytes of a value that continues until a delimiter. */
static size_t value_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && !is_delim((unsigned char)s[i]))
		i++;
	return i;
}

static bool ci_prefix(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word);
	return n >= wl && strncasecmp(s, word, wl) == 0;
}

/* Keys whose value is a secret when the key ends with one of them. */
#define KW(w)                                                                                      \
	{                                                                                          \
		w, sizeof(w) - 1                                                                   \
	}
static const struct {
	const char *w;
	size_t len;
} secret_keys[] = {
    KW("password"),   KW("passwd"),	 KW("secret"),	    KW("token"),
    KW("api_key"),    KW("apikey"),	 KW("api-key"),	    KW("access_key"),
    KW("access-key"), KW("private_key"), KW("private-key"), KW("client_secret"),
    KW("auth_token"), KW("credential"),	 KW("credentials"), KW("cookie"),
};
#undef KW

/*
 * What the assignment rule needs about one maximal run of key characters
 * [A-Za-z0-9_.-] ending at `end`: the shortest secret word that ends it, and
 * the value after it. Every start inside the run shares it (a start at i
 * matches when end - i >= minwl), so each run is examined once.
 */
struct keyrun {
	size_t start, end;
	size_t minwl; /* 0: no secret word ends the run, or no value follows */
	size_t voff, vend;
};

static void keyrun_compute(const char *s, size_t n, size_t i, struct keyrun *kr, uint64_t *st)
{
	size_t k = i;
	while (k < n && (is_word((unsigned char)s[k]) || s[k] == '.'))
		k++;
	*st += k - i + 1;
	kr->start = i;
	kr->end = k;
	kr->minwl = 0;
	if (k == i || k >= n)
		return;
	size_t minwl = 0;
	char last = s[k - 1];
	if (last >= 'A' && last <= 'Z')
		last = (char)(last - 'A' + 'a');
	for (size_t q = 0; q < AG_ARRAY_SIZE(secret_keys); q++) {
		size_t wl = secret_keys[q].len;
		if (secret_keys[q].w[wl - 1] != last)
			continue;
		if (k - i >= wl && strncasecmp(s + k - wl, secret_keys[q].w, wl) == 0 &&
		    (!minwl || wl < minwl))
			minwl = wl;
	}
	if (!minwl)
		return;
	size_t j = k;
	if (s[j] == '"' || s[j] == '\'')
		j++;
	if (j < n && (s[j] == '=' || s[j] == ':')) {
		j++;
		size_t j0 = j;
		while (j < n && (s[j] == ' ' || s[j] == '"' || s[j] == '\''))
			j++;
		size_t vl = value_len(s + j, n - j);
		*st += j - j0 + vl + 1;
		if (vl) {
			kr->minwl = minwl;
			kr->voff = j;
			kr->vend = j + vl;
		}
	}
}

struct shape {
	const char *prefix;
	size_t min_body;
	const char *body_set; /* NULL: [A-Za-z0-9_-] */
};

static const struct shape shapes[] = {
    {"ghp_", 20, NULL},
    {"gho_", 20, NULL},
    {"ghu_", 20, NULL},
    {"ghs_", 20, NULL},
    {"ghr_", 20, NULL},
    {"github_pat_", 20, NULL},
    {"sk_live_", 12, NULL},
    {"sk_test_", 12, NULL},
    {"sk-", 20, NULL},
    {"sk_", 16, NULL},
    {"npm_", 20, NULL},
    {"xoxb-", 10, NULL},
    {"xoxp-", 10, NULL},
    {"AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
    {"AGENTGUARD_SECRET_CANARY", 0, NULL},
};

/* Called only at the start of a run of word characters: each run once per shape. */
static size_t token_shape(const char *s, size_t n, uint64_t *st)
{
	switch (s[0]) { /* the first letters of the shapes */
	case 'g':
	case 's':
	case 'n':
	case 'x':
	case 'A':
		break;
	default:
		return 0;
	}
	for (size_t i = 0; i < AG_ARRAY_SIZE(shapes); i++) {
		if (shapes[i].prefix[0] != s[0])
			continue;
		size_t pl = strlen(shapes[i].prefix);
		if (n < pl || memcmp(s, shapes[i].prefix, pl) != 0)
			continue;
		size_t j = pl;
		while (j < n &&
		       (shapes[i].body_set ? strchr(shapes[i].body_set, s[j]) != NULL && s[j]
					   : is_word((unsigned char)s[j])))
			j++;
		*st += j + 1;
		if (j - pl >= shapes[i].min_body)
			return j;
	}
	return 0;
}

static const char *const private_prefixes[] = {"/home/",  "/root/",    "/tmp/",	     "/var/tmp/",
					       "/Users/", "/private/", "/run/user/", NULL};

/* Credential flag names (after the dashes, lower case, '_' as '-'). */
static const char *const cred_flags[] = {
    "token",	  "api-key",	   "apikey",	   "password",	   "passwd",
    "secret",	  "client-secret", "access-token", "auth-token",   "refresh-token",
    "api-token",  "private-token", "oauth-token",  "bearer-token", "session-token",
    "access-key", "secret-key",	   "pass",	   NULL,
};
static const char *const cred_flag_suffixes[] = {
    "-token",  "-password",   "-passwd",     "-secret", "-api-key",
    "-apikey", "-access-key", "-secret-key", NULL,
};

/* True when name[0..n) (without dashes) is a credential flag's name. */
static bool cred_flag_name(const char *name, size_t n)
{
	char low[AG_REDACT_FLAG_NAME_MAX + 1];
	if (n == 0 || n > AG_REDACT_FLAG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		low[i] = c == '_' ? '-' : c;
	}
	low[n] = '\0';
	if (strncmp(low, "no-", 3) == 0)
		return false;
	for (const char *const *f = cred_flags; *f; f++)
		if (strcmp(low, *f) == 0)
			return true;
	for (const char *const *f = cred_flag_suffixes; *f; f++) {
		size_t fl = strlen(*f);
		if (n > fl && strcmp(low + n - fl, *f) == 0)
			return true;
	}
	return false;
}

/* Where a URL's userinfo search stops (NUL included, as before). */
static inline bool url_stop(unsigned char c)
{
	return c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' ||
	       c == '\'' || c == '@' || c == '\0';
}

static void scan(const char *s, size_t n, unsigned flags, struct out *o, uint64_t *steps)
{
	uint64_t st = 0;
	struct keyrun kr = {0};
	size_t plain = 0; /* bytes s[plain..i) are pending verbatim output */
	size_t i = 0;
#define FLUSH() (out_add(o, s + plain, i - plain))
	while (i < n) {
		st++;
		unsigned char c = (unsigned char)s[i];
		bool boundary = i == 0 || !is_word((unsigned char)s[i - 1]);
		/* Authorization headers */
		if (boundary && (c == 'a' || c == 'A' || c == 'p' || c == 'P') &&
		    (ci_prefix(s + i, n - i, "authorization:") ||
		     ci_prefix(s + i, n - i, "proxy-authorization:"))) {
			size_t j = i + ((c == 'a' || c == 'A') ? 14 : 20);
			FLUSH();
			while (j < n && s[j] == ' ')
				j++;
			size_t scheme = 0;
			if (ci_prefix(s + j, n - j, "bearer ") ||
			    ci_prefix(s + j, n - j, "basic ") || ci_prefix(s + j, n - j, "token "))
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
				out_adds(o, AG_PH_SECRET);
			st += j + vl - i;
			i = plain = j + vl;
			continue;
		}
		/* -----BEGIN ... PRIVATE KEY----- (the search is bounded: 128 bytes) */
		if (c == '-' && n - i > 11 && memcmp(s + i, "-----BEGIN ", 11) == 0) {
			size_t w = n - i < 128 ? n - i : 128;
			const char *end = memmem(s + i, w, "PRIVATE KEY-----", 16);
			st += w;
			if (end) {
				FLUSH();
				out_adds(o, AG_PH_PRIVATE_KEY);
				i = plain = (size_t)(end - s) + 16;
				continue;
			}
		}
		/* scheme://user:pass@host; the scan stops at the next '/', so the
		 * scans of successive "://" never overlap */
		if (c == ':' && n - i > 3 && s[i + 1] == '/' && s[i + 2] == '/') {
			size_t j = i + 3, at = 0;
			while (j < n && !url_stop((unsigned char)s[j]))
				j++;
			st += j - i;
			if (j < n && s[j] == '@' && j > i + 3)
				at = j;
			if (at) {
				FLUSH();
				out_adds(o, "://" AG_PH_SECRET "@");
				i = plain = at + 1;
				continue;
			}
		}
		if (boundary && is_word(c)) {
			size_t t = token_shape(s + i, n - i, &st);
			if (t) {
				FLUSH();
				out_adds(o, AG_PH_SECRET);
				i = plain = i + t;
				continue;
			}
		}
		if (boundary && (is_word(c) || c == '.')) {
			if (!(i >= kr.start && i < kr.end))
				keyrun_compute(s, n, i, &kr, &st);
			if (kr.minwl && kr.end - i >= kr.minwl) {
				FLUSH();
				out_add(o, s + i, kr.voff - i);
				out_adds(o, AG_PH_SECRET);
				i = plain = kr.vend;
				continue;
			}
		}
		/* --token VALUE (the '=' form is an assignment above) */
		if (boundary && c == '-') {
			size_t f = i;
			while (f < n && is_word((unsigned char)s[f]))
				f++;
			st += f - i;
			size_t d = i;
			while (d < f && d < i + 2 && s[d] == '-')
				d++;
			if (f < n && (s[f] == ' ' || s[f] == '\t') &&
			    cred_flag_name(s + d, f - d)) {
				size_t j = f;
				while (j < n && (s[j] == ' ' || s[j] == '\t'))
					j++;
				size_t vl = j < n && s[j] != '-' ? value_len(s + j, n - j) : 0;
				st += j - f + vl;
				if (vl) {
					FLUSH();
					out_add(o, s + i, j - i);
					out_adds(o, AG_PH_SECRET);
					i = plain = j + vl;
					continue;
				}
			}
		}
		/* Private absolute paths */
		if (c == '/' && (i == 0 || !is_path_char((unsigned char)s[i - 1]))) {
			bool hit = false;
			for (const char *const *p = private_prefixes; *p && !hit && n - i > 4;
			     p++) {
				size_t pl = strlen(*p);
				hit = (*p)[1] == s[i + 1] && pl <= n - i &&
				      memcmp(s + i, *p, pl) == 0;
			}
			if (hit) {
				size_t j = i;
				while (j < n && is_path_char((unsigned char)s[j]))
					j++;
				st += j - i;
				FLUSH();
				out_adds(o, AG_PH_PATH);
				i = plain = j;
				continue;
			}
		}
		if ((c < 0x20 || c == 0x7f) && !(flags & AG_REDACT_KEEP_CONTROLS) &&
		    !((flags & AG_REDACT_KEEP_NEWLINES) && (c == '\n' || c == '\t'))) {
			char esc[4] = {'\\', 'x', hex_lo[c >> 4], hex_lo[c & 15]};
			FLUSH();
			out_add(o, esc, 4);
			i = plain = i + 1;
			continue;
		}
		i++;
	}
	FLUSH();
#undef FLUSH
	*steps += st;
}

char *ag_redact_counted(const struct ag_redactor *r, const char *s, size_t len, size_t max,
			unsigned flags, bool *truncated, uint64_t *steps)
{
	uint64_t st = 0;
	struct out a = {0};
	const char *text = s;
	size_t tlen = len;
	if (r && (r->roots.n || r->secrets.n)) {
		/* The automaton is a cache of the set: built once, dropped when the set changes. */
		struct ag_redactor *rw = (struct ag_redactor *)r;
		if (!rw->ac)
			rw->ac = ac_build(r);
		literal_pass(r, r->ac, s, len, &a, &st);
		if (!a.s)
			out_add(&a, "", 0);
		text = a.s;
		tlen = a.len;
	}
	struct out o = {0};
	scan(text, tlen, flags, &o, &st);
	free(a.s);
	if (!o.s)
		out_add(&o, "", 0);
	bool cut = false;
	static const char marker[] = AG_PH_CUT;
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
	if (steps)
		*steps += st;
	return o.s;
}

char *ag_redact(const struct ag_redactor *r, const char *s, size_t len, size_t max, unsigned flags,
		bool *truncated)
{
	return ag_redact_counted(r, s, len, max, flags, truncated, NULL);
}

bool ag_redact_contains_secret(const struct ag_redactor *r, const char *s, size_t len)
{
	for (size_t i = 0; r && i < r->secrets.n; i++)
		if (memmem(s, len, r->secrets.v[i], strlen(r->secrets.v[i])))
			return true;
	return false;
}

/* ------------------------------------------------------------------------
 * Credential arguments.
 * ------------------------------------------------------------------------ */

static const char *const cred_header_words[] = {
    "auth", "token", "key", "secret", "password", "passwd", "cookie", "session", "credential", NULL,
};

/*
 * "Name: [scheme ]value" with Name of word characters: true, the offset of
 * the value (past a "Bearer"/"Basic"/"token"-like scheme word) and whether
 * the name carries a credential.
 */
static bool header_split(const char *hdr, size_t *value_off, bool *cred)
{
	const char *colon = strchr(hdr, ':');
	if (!colon || colon == hdr || (size_t)(colon - hdr) > AG_REDACT_FLAG_NAME_MAX)
		return false;
	for (const char *p = hdr; p < colon; p++)
		if (!is_word((unsigned char)*p))
			return false;
	char name[AG_REDACT_FLAG_NAME_MAX + 1];
	size_t nl = (size_t)(colon - hdr);
	memcpy(name, hdr, nl);
	name[nl] = '\0';
	*cred = false;
	for (const char *const *w = cred_header_words; *w && !*cred; w++)
		*cred = strcasestr(name, *w) != NULL;
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	/* "Bearer X", "Basic X", "token X": the credential is X */
	const char *sp = strchr(v, ' ');
	if (sp) {
		bool scheme = sp > v;
		for (const char *p = v; p < sp && scheme; p++)
			scheme = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '-';
		if (scheme) {
			v = sp;
			while (*v == ' ')
				v++;
		}
	}
	if (!*v)
		return false;
	*value_off = (size_t)(v - hdr);
	return true;
}

bool ag_cred_header(const char *hdr, size_t *value_off)
{
	bool cred = false;
	return header_split(hdr, value_off, &cred) && cred;
}

enum ag_cred_arg ag_cred_arg_kind(const char *arg, size_t *value_off)
{
	*value_off = 0;
	if (arg[0] == '-') {
		if (strcmp(arg, "-H") == 0 || strcmp(arg, "--header") == 0)
			return AG_CRED_HEADER_NEXT;
		size_t hoff = 0;
		bool cred = false;
		if (strncmp(arg, "--header=", 9) == 0) {
			/* every header value given as an argument (the upstream rule) */
			*value_off = header_split(arg + 9, &hoff, &cred) ? 9 + hoff : 9;
			return arg[*value_off] ? AG_CRED_INLINE : AG_CRED_NONE;
		}
		if (arg[1] == 'H' && arg[2] && header_split(arg + 2, &hoff, &cred)) {
			*value_off = 2 + hoff;
			return AG_CRED_INLINE;
		}
		const char *name = arg + (arg[1] == '-' ? 2 : 1);
		const char *eq = strchr(name, '=');
		size_t nl = eq ? (size_t)(eq - name) : strlen(name);
		if (!cred_flag_name(name, nl))
			return AG_CRED_NONE;
		if (!eq)
			return AG_CRED_NEXT;
		if (!eq[1])
			return AG_CRED_NONE;
		*value_off = (size_t)(eq + 1 - arg);
		return AG_CRED_INLINE;
	}
	/* NAME=value with a secret-like NAME */
	const char *eq = strchr(arg, '=');
	if (eq && eq > arg && eq[1]) {
		struct keyrun kr;
		uint64_t st = 0;
		keyrun_compute(arg, strlen(arg), 0, &kr, &st);
		if (kr.minwl && kr.end == (size_t)(eq - arg) && kr.voff == (size_t)(eq + 1 - arg)) {
			*value_off = kr.voff;
			return AG_CRED_INLINE;
		}
	}
	/* A bare header argument ("Authorization: Bearer X" after another flag) */
	size_t hoff = 0;
	if (ag_cred_header(arg, &hoff)) {
		*value_off = hoff;
		return AG_CRED_INLINE;
	}
	return AG_CRED_NONE;
}

/*
 * Whether argv[i] holds a value redacted by position, at offset *off; *secret
 * tells whether it is a credential (joins the secret set) or only a header
 * value given with -H/--header (redacted in the argv, as upstream did).
 */
static bool cred_value(const char *const *argv, size_t i, size_t *off, bool *secret)
{
	*off = 0;
	*secret = true;
	if (i > 0) {
		size_t o2;
		enum ag_cred_arg prev = ag_cred_arg_kind(argv[i - 1], &o2);
		if (prev == AG_CRED_NEXT)
			return true;
		if (prev == AG_CRED_HEADER_NEXT) {
			if (!header_split(argv[i], off, secret)) {
				*off = 0; /* not "Name: value": the whole argument */
				*secret = false;
			}
			return argv[i][0] != '\0';
		}
	}
	if (ag_cred_arg_kind(argv[i], off) != AG_CRED_INLINE)
		return false;
	size_t hoff;
	bool cred = true;
	if (strncmp(argv[i], "--header=", 9) == 0 &&
	    !(header_split(argv[i] + 9, &hoff, &cred) && cred))
		*secret = false;
	return true;
}

void ag_redactor_add_argv(struct ag_redactor *r, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		size_t off;
		bool secret;
		if (cred_value(argv, i, &off, &secret) && secret)
			ag_redactor_add_secret(r, argv[i] + off);
	}
}

char *ag_redact_argv_item(const struct ag_redactor *r, const char *const *argv, size_t argc,
			  size_t i, size_t max)
{
	(void)argc;
	size_t off;
	bool secret;
	if (!cred_value(argv, i, &off, &secret))
		return ag_redact(r, argv[i], strlen(argv[i]), max, 0, NULL);
	char *head = ag_redact(r, argv[i], off, max, 0, NULL);
	char *s = ag_xasprintf("%s" AG_PH_SECRET, head);
	free(head);
	if (strlen(s) > max) {
		char *t = ag_redact(NULL, s, strlen(s), max, 0, NULL);
		free(s);
		s = t;
	}
	return s;
}

bool ag_argv_item_leaks_credential(const char *const *argv, size_t argc, size_t i)
{
	size_t off;
	bool secret;
	if (i >= argc || !cred_value(argv, i, &off, &secret))
		return false;
	const char *v = argv[i] + off;
	return strcmp(v, AG_PH_SECRET) != 0 && strcmp(v, AG_PH_TRUNCATED) != 0;
}

/* ------------------------------------------------------------------------
 * Streaming: the same redaction over text that arrives in chunks.
 * ------------------------------------------------------------------------ */

struct ag_redact_stream {
	struct ag_redactor red;	       /* a private copy of the set */
	const struct ag_redact_ac *ac; /* red.ac once built; NULL: no literals */
	size_t hold;		       /* most raw bytes held before a forced cut */
	ag_redact_emit_fn emit;
	void *ctx;
	char *p; /* held raw bytes p[0..len), not yet emitted */
	size_t len;
	size_t scanned; /* p[0..scanned) went through the automaton */
	uint32_t v;	/* automaton state after p[0..scanned) */
	size_t safe;	/* last safe cut seen (0: none) */
	size_t ws;	/* last forced-cut candidate after a blank (0: none) */
	size_t begin;	/* 1 + start of the last "-----BEGIN " not yet behind
			 * a safe cut (0: none) */
	size_t covered; /* bytes of literal matches that ended since it */
	bool dropping;	/* after a forced cut: the rest of that line is withheld */
	bool done;	/* finished or abandoned: nothing more is emitted */
};

static const char begin_word[] = "-----BEGIN ";
#define BEGIN_LEN (sizeof(begin_word) - 1)
/* The private-key shape looks 128 bytes ahead of its "-----BEGIN " (scan()). */
#define BEGIN_WINDOW 128

struct ag_redact_stream *ag_redact_stream_new(const struct ag_redactor *r, size_t line_max,
					      ag_redact_emit_fn emit, void *ctx)
{
	struct ag_redact_stream *s = ag_xcalloc(1, sizeof(*s));
	s->red = (struct ag_redactor)AG_REDACTOR_INIT;
	for (size_t i = 0; r && i < r->secrets.n; i++)
		ag_redactor_add_secret(&s->red, r->secrets.v[i]);
	for (size_t i = 0; r && i < r->roots.n; i++)
		ag_redactor_add_root(&s->red, r->roots.v[i], r->roles.v[i]);
	if (s->red.secrets.n || s->red.roots.n) {
		s->red.ac = ac_build(&s->red);
		s->ac = s->red.ac;
	}
	s->hold = line_max + (s->ac ? s->ac->maxlen : 0);
	s->emit = emit;
	s->ctx = ctx;
	s->p = ag_xmalloc(s->hold + 1);
	return s;
}

void ag_redact_stream_free(struct ag_redact_stream *s)
{
	if (!s)
		return;
	ag_redactor_release(&s->red);
	free(s->p);
	free(s);
}

/* Redacts and emits p[0..c), keeps p[c..len). */
static void stream_emit(struct ag_redact_stream *s, size_t c, bool cut)
{
	if (c || cut) {
		size_t n = 0;
		char *t = NULL;
		if (c) {
			t = ag_redact(&s->red, s->p, c, SIZE_MAX / 4, AG_REDACT_KEEP_CONTROLS,
				      NULL);
			n = strlen(t);
		}
		s->emit(s->ctx, t ? t : "", n, cut);
		free(t);
	}
	memmove(s->p, s->p + c, s->len - c);
	s->len -= c;
	s->scanned -= c;
	s->safe = s->safe > c ? s->safe - c : 0;
	s->ws = s->ws > c ? s->ws - c : 0;
	s->begin = s->begin > c ? s->begin - c : 0;
}

/* One automaton step over byte c; returns the new state's depth. */
static uint32_t stream_step(struct ag_redact_stream *s, unsigned char c)
{
	if (!s->ac)
		return 0;
	uint64_t st = 0;
	s->v = ac_next(s->ac, s->v, c, &st);
	return s->ac->depth[s->v];
}

/*
 * Runs the new bytes through the automaton and records the cuts. A cut
 * after byte j is safe when no literal (secret, encoded form, root) can
 * span it (the automaton is at depth 0: no suffix of the text is the start
 * of a pattern) and no shape can (the byte is a line end, which every
 * shape's value stops at, and no "-----BEGIN " is still within the 128
 * bytes the private-key shape looks ahead). Redacting the text cut there,
 * piece by piece, gives what redacting it whole gives.
 */
static void stream_scan(struct ag_redact_stream *s)
{
	for (; s->scanned < s->len; s->scanned++) {
		size_t j = s->scanned;
		unsigned char c = (unsigned char)s->p[j];
		uint32_t depth = stream_step(s, c);
		if (c == ' ' && j + 1 >= BEGIN_LEN &&
		    memcmp(s->p + j + 1 - BEGIN_LEN, begin_word, BEGIN_LEN) == 0) {
			s->begin = j + 2 - BEGIN_LEN;
			s->covered = 0;
		}
		if (s->begin && s->ac) {
			/* what the literal pass may shrink: every match counted whole */
			s->covered += s->ac->sec_len[s->v];
			uint32_t ro = s->ac->root_out[s->v];
			if (ro != AC_NONE)
				s->covered += s->ac->depth[ro];
		}
		if (depth)
			continue;
		/*
		 * The private-key shape's look-ahead is 128 bytes of the text
		 * after the literal pass: at least the bytes no match covers.
		 * Once that many lie between the last "-----BEGIN " and here, its
		 * window ends before any later cut (and an earlier one's too).
		 */
		if (s->begin && j + 1 - (s->begin - 1) >= BEGIN_WINDOW + s->covered)
			s->begin = 0;
		if (s->begin)
			continue;
		if (c == '\n' || c == '\r')
			s->safe = j + 1;
		else if (c == ' ' || c == '\t')
			s->ws = j + 1;
	}
}

/* Emits every safe piece; a line longer than the hold is cut at its last
 * blank (what a cut there could split, a value or a token, is withheld
 * with the rest of the line). */
static void stream_pump(struct ag_redact_stream *s)
{
	for (;;) {
		stream_scan(s);
		if (s->safe) {
			stream_emit(s, s->safe, false);
			continue;
		}
		if (s->len < s->hold)
			return;
		stream_emit(s, s->ws, true);
		/* the bytes after the cut belong to the withheld rest: the
		 * automaton has seen them, nothing keeps them */
		s->dropping = true;
		s->len = s->scanned = s->safe = s->ws = s->begin = s->covered = 0;
		return;
	}
}

void ag_redact_stream_feed(struct ag_redact_stream *s, const char *p, size_t n)
{
	while (n && !s->done) {
		if (s->dropping) {
			/* bytes of a withheld line: only the automaton sees them */
			size_t i = 0;
			for (; i < n && s->dropping; i++) {
				unsigned char c = (unsigned char)p[i];
				uint32_t depth = stream_step(s, c);
				if ((c == '\n' || c == '\r') && depth == 0)
					s->dropping = false;
			}
			p += i;
			n -= i;
			continue;
		}
		size_t room = s->hold - s->len;
		size_t take = n < room ? n : room;
		memcpy(s->p + s->len, p, take);
		s->len += take;
		p += take;
		n -= take;
		stream_pump(s);
	}
}

void ag_redact_stream_finish(struct ag_redact_stream *s)
{
	if (s->done)
		return;
	s->done = true;
	if (!s->dropping && s->len)
		stream_emit(s, s->len, false);
	s->len = 0;
}

void ag_redact_stream_abandon(struct ag_redact_stream *s)
{
	s->done = true;
	s->len = 0;
}

size_t ag_redact_stream_held(const struct ag_redact_stream *s)
{
	return s->len;
}
