/*
 * inject.c: the request rewrite of a terminated tunnel (inject.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/inject.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/egress/request.h"

#include <ctype.h>
#include <strings.h>

void ag_egress_header_lower(const char *name, char out[AG_EGRESS_INJECT_HEADER_MAX + 1])
{
	size_t i = 0;
	for (; name[i] && i < AG_EGRESS_INJECT_HEADER_MAX; i++)
		out[i] = (char)tolower((unsigned char)name[i]);
	out[i] = 0;
}

static int refuse(struct ag_egress_inject_result *res, const char *detail, int status,
		  const char *text)
{
	res->detail = detail;
	res->status = status;
	res->status_text = text;
	return -1;
}

static bool name_is(const char *line, size_t name_len, const char *want)
{
	return strlen(want) == name_len && strncasecmp(line, want, name_len) == 0;
}

static bool removed(const char *line, size_t name_len, const char *header)
{
	static const char *const drop[] = {
	    "authorization", "proxy-authorization", "x-api-key",  "api-key", "x-goog-api-key",
	    "connection",    "proxy-connection",    "keep-alive", "upgrade", "te",
	    "expect"};
	if (name_is(line, name_len, header))
		return true;
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		if (name_is(line, name_len, drop[i]))
			return true;
	return false;
}

/* VALUE (without surrounding blanks) is HOST or HOST:PORT, any case. */
static bool host_matches(const char *v, size_t len, const char *host, int port)
{
	while (len && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	size_t hl = strlen(host);
	if (len < hl || strncasecmp(v, host, hl) != 0)
		return false;
	if (len == hl)
		return true;
	char p[16];
	int pl = snprintf(p, sizeof(p), ":%d", port);
	return len == hl + (size_t)pl && memcmp(v + hl, p, (size_t)pl) == 0;
}

int ag_egress_inject_rewrite(char *head, size_t n, const char *host, int port, const char *header,
			     const char *value, struct ag_buf *out,
			     struct ag_egress_inject_result *res)
{
	*res = (struct ag_egress_inject_result){.content_length = -1};
	struct ag_egress_request r;
	if (ag_egress_request_parse(head, n, &r) < 0)
		return refuse(res, r.detail, r.status, r.status_text);
	if (r.target[0] != '/')
		return refuse(res, "inner_target", 400, "Bad Request");
	/* a method whose answer echoes the request's headers back to the agent */
	if (!strcmp(r.method, "TRACE") || !strcmp(r.method, "TRACK"))
		return refuse(res, "inner_method", 405, "Method Not Allowed");
	/* the version as the parser saw it: the request line's last token */
	const char *version = r.target + strlen(r.target) + 1;
	size_t hosts = 0;
	bool host_ok = false;
	const char *line = r.headers, *end = r.headers + r.headers_len;
	while (line < end) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
		size_t len = eol ? (size_t)(eol - line) : (size_t)(end - line);
		const char *colon = memchr(line, ':', len);
		size_t nl = colon ? (size_t)(colon - line) : len;
		if (name_is(line, nl, "host")) {
			hosts++;
			host_ok = colon && host_matches(colon + 1, len - nl - 1, host, port);
		}
		line += len + 2;
	}
	if (hosts != 1 || !host_ok)
		return refuse(res, "host_mismatch", 421, "Misdirected Request");
	struct ag_error *e = NULL;
	int rc = ag_buf_addf(out, &e, "%s %s %.*s\r\n", r.method, r.target, 8, version);
	for (line = r.headers; rc == 0 && line < end;) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
		size_t len = eol ? (size_t)(eol - line) : (size_t)(end - line);
		const char *colon = memchr(line, ':', len);
		size_t nl = colon ? (size_t)(colon - line) : len;
		if (!removed(line, nl, header)) {
			rc = ag_buf_add(out, line, len, &e);
			rc = rc ? rc : ag_buf_adds(out, "\r\n", &e);
		}
		line += len + 2;
	}
	rc = rc ? rc : ag_buf_addf(out, &e, "%s: %s\r\n\r\n", header, value);
	ag_error_free(e);
	if (rc < 0)
		return refuse(res, "header_too_large", 431, "Request Header Fields Too Large");
	res->content_length = r.content_length;
	return 0;
}
