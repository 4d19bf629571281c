/*
 * authority.c: host normalisation, CONNECT authority and URL parsing for
 * live-study egress (authority.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/authority.h"

#define REFUSE(tok)                                                                                \
	do {                                                                                       \
		*reason = (tok);                                                                   \
		return -1;                                                                         \
	} while (0)

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])? */
static bool label_ok(const char *s, size_t n)
{
	if (n < 1 || n > 63 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

static int ip_literal(const char *s, size_t n, struct ag_egress_target *t, const char **reason)
{
	char buf[AG_EGRESS_ADDR_TEXT_MAX];
	if (n >= sizeof(buf))
		REFUSE("egress.host.ip_invalid");
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (ag_egress_addr_parse(buf, &t->addr) < 0)
		REFUSE("egress.host.ip_invalid");
	t->ip_literal = true;
	ag_egress_addr_format(&t->addr, t->host);
	return 0;
}

int ag_egress_host_normalize(const char *host, size_t len, struct ag_egress_target *t,
			     const char **reason)
{
	while (len > 0 && (host[0] == ' ' || host[0] == '\t'))
		host++, len--;
	while (len > 0 && (host[len - 1] == ' ' || host[len - 1] == '\t'))
		len--;
	t->ip_literal = false;
	memset(&t->addr, 0, sizeof(t->addr));
	t->host[0] = '\0';
	if (len == 0)
		REFUSE("egress.host.empty");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		if (c < 0x20 || c == 0x7f)
			REFUSE("egress.host.control");
	}
	if (len > AG_EGRESS_HOST_MAX)
		REFUSE("egress.host.too_long");
	if (host[0] == '[') {
		if (len < 3 || host[len - 1] != ']')
			REFUSE("egress.host.ip_invalid");
		if (ip_literal(host + 1, len - 2, t, reason) < 0 || t->addr.family != 6)
			REFUSE("egress.host.ip_invalid");
		return 0;
	}
	if (memchr(host, '*', len))
		REFUSE("egress.host.wildcard");
	if (host[len - 1] == '.')
		REFUSE("egress.host.trailing_dot");
	if (memchr(host, ':', len)) {
		/* Only a bare IPv6 literal has a colon here. */
		if (ip_literal(host, len, t, reason) < 0 || t->addr.family != 6)
			REFUSE("egress.host.ip_invalid");
		return 0;
	}
	char low[AG_EGRESS_HOST_MAX + 1];
	for (size_t i = 0; i < len; i++) {
		char c = host[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!is_lower_alnum(c) && c != '-' && c != '.')
			REFUSE("egress.host.char");
		low[i] = c;
	}
	low[len] = '\0';
	struct ag_egress_addr a;
	if (ag_egress_addr_parse(low, &a) == 0) {
		t->addr = a;
		t->ip_literal = true;
		ag_egress_addr_format(&a, t->host);
		return 0;
	}
	size_t labels = 0, start = 0;
	bool last_numeric = true;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && low[i] != '.')
			continue;
		if (!label_ok(low + start, i - start))
			REFUSE("egress.host.label");
		labels++;
		last_numeric = true;
		for (size_t k = start; k < i; k++)
			if (low[k] < '0' || low[k] > '9')
				last_numeric = false;
		start = i + 1;
	}
	if (labels < 2)
		REFUSE("egress.host.single_label");
	if (last_numeric)
		REFUSE("egress.host.numeric");
	memcpy(t->host, low, len + 1);
	return 0;
}

bool ag_egress_host_blocked(const char *host, bool *suffix)
{
	static const char *const names[] = {
	    "localhost",
	    "localhost.localdomain",
	    "host.docker.internal",
	    "gateway.docker.internal",
	    "docker.for.mac.localhost",
	    "docker.for.mac.host.internal",
	    "kubernetes.docker.internal",
	    "metadata",
	    "metadata.google.internal",
	};
	static const char *const suffixes[] = {".docker.internal", ".localhost"};
	*suffix = false;
	for (size_t i = 0; i < AG_ARRAY_SIZE(names); i++)
		if (strcmp(host, names[i]) == 0)
			return true;
	size_t n = strlen(host);
	for (size_t i = 0; i < AG_ARRAY_SIZE(suffixes); i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && strcmp(host + n - k, suffixes[i]) == 0) {
			*suffix = true;
			return true;
		}
	}
	return false;
}

/* Decimal 1..65535, no sign, no leading zero. */
static int parse_port(const char *s, size_t n, int *port)
{
	if (n < 1 || n > 5 || s[0] == '0')
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

/* host[:port] of an authority; `need_port` for CONNECT. */
static int host_port(const char *s, size_t len, bool need_port, struct ag_egress_target *t,
		     const char **reason, const char *syntax)
{
	const char *colon;
	size_t hlen;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			REFUSE(syntax);
		hlen = (size_t)(close - s) + 1;
		if (hlen == len)
			colon = NULL;
		else if (s[hlen] == ':')
			colon = s + hlen;
		else
			REFUSE(syntax);
	} else {
		colon = memrchr(s, ':', len);
		if (colon && memchr(s, ':', (size_t)(colon - s)))
			REFUSE(syntax); /* a bare IPv6 literal needs brackets here */
		hlen = colon ? (size_t)(colon - s) : len;
	}
	if (!colon) {
		if (need_port)
			REFUSE(syntax);
		t->port = 0;
	} else if (parse_port(colon + 1, len - hlen - 1, &t->port) < 0) {
		REFUSE("egress.authority.port");
	}
	if (hlen == 0)
		REFUSE("egress.host.empty");
	/* Blanks inside an authority are never trimmed away. */
	if (s[0] == ' ' || s[0] == '\t' || s[hlen - 1] == ' ' || s[hlen - 1] == '\t')
		REFUSE("egress.host.char");
	return ag_egress_host_normalize(s, hlen, t, reason);
}

static bool has_control_or_space(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f)
			return true;
	}
	return false;
}

int ag_egress_authority_parse(const char *s, size_t len, struct ag_egress_target *t,
			      const char **reason)
{
	if (!s || len == 0 || len > AG_EGRESS_AUTHORITY_MAX || memchr(s, '\0', len) ||
	    has_control_or_space(s, len))
		REFUSE("egress.authority.syntax");
	return host_port(s, len, true, t, reason, "egress.authority.syntax");
}

int ag_egress_url_parse(const char *s, size_t len, struct ag_egress_target *t, bool *https,
			char **canonical, const char **reason)
{
	if (canonical)
		*canonical = NULL;
	if (!s || len == 0 || len > AG_EGRESS_AUTHORITY_MAX || memchr(s, '\0', len) ||
	    has_control_or_space(s, len))
		REFUSE("egress.url.syntax");
	size_t skip;
	if (len >= 7 && strncasecmp(s, "http://", 7) == 0) {
		*https = false;
		skip = 7;
	} else if (len >= 8 && strncasecmp(s, "https://", 8) == 0) {
		*https = true;
		skip = 8;
	} else {
		const char *sep = memchr(s, ':', len);
		REFUSE(sep ? "egress.url.scheme" : "egress.url.syntax");
	}
	const char *a = s + skip;
	size_t rest = len - skip, alen = 0;
	while (alen < rest && a[alen] != '/' && a[alen] != '?' && a[alen] != '#')
		alen++;
	if (memchr(a, '@', alen))
		REFUSE("egress.url.userinfo");
	if (alen == 0)
		REFUSE("egress.host.empty");
	if (host_port(a, alen, false, t, reason, "egress.url.syntax") < 0)
		return -1;
	bool explicit_port = t->port != 0;
	if (!explicit_port)
		t->port = *https ? 443 : 80;
	const char *path = a + alen;
	size_t plen = 0;
	while (alen + plen < rest && path[plen] != '?' && path[plen] != '#')
		plen++;
	if (canonical) {
		bool v6 = t->ip_literal && t->addr.family == 6;
		char port[8] = "";
		if (explicit_port)
			snprintf(port, sizeof(port), ":%d", t->port);
		*canonical = ag_xasprintf("%s://%s%s%s%s%.*s", *https ? "https" : "http",
					  v6 ? "[" : "", t->host, v6 ? "]" : "", port,
					  (int)(plen ? plen : 1), plen ? path : "/");
	}
	return 0;
}

bool ag_egress_id_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n < 1 || n > AG_EGRESS_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool an =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!an && (i == 0 || !strchr("._:-", c)))
			return false;
	}
	return true;
}
