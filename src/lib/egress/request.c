/*
 * request.c: the egress gateway's request-head parser and refusal
 * vocabulary (request.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/request.h"
#include "lib/base/bounds.h"

#include <strings.h>

static int refuse(struct ag_egress_request *r, const char *detail)
{
	r->detail = detail;
	if (!strcmp(detail, "too_many_headers")) {
		r->status = 431;
		r->status_text = "Request Header Fields Too Large";
	} else if (!strcmp(detail, "content_length_too_large")) {
		r->status = 413;
		r->status_text = "Content Too Large";
	} else {
		r->status = 400;
		r->status_text = "Bad Request";
	}
	return -1;
}

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Every byte printable ASCII or HTAB, CR only in CRLF, no bare LF, the
 * head ends with its first CRLF CRLF. */
static bool bytes_ok(const char *h, size_t n)
{
	if (n < 4 || memcmp(h + n - 4, "\r\n\r\n", 4) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)h[i];
		if (ch == '\r') {
			if (i + 1 >= n || h[i + 1] != '\n')
				return false;
			i++;
			/* An empty line before the end: a second head behind the first. */
			if (i + 2 < n && h[i + 1] == '\r' && h[i + 2] == '\n' && i + 3 != n)
				return false;
			continue;
		}
		if ((ch < 0x20 && ch != '\t') || ch >= 0x7f)
			return false;
	}
	return true;
}

static bool name_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && strncasecmp(name, want, len) == 0;
}

/* 1*DIGIT without a leading zero ("0" itself is fine), at most the bound. */
static const char *content_length(const char *v, size_t len, int64_t *out)
{
	if (len == 0)
		return "content_length_invalid";
	for (size_t i = 0; i < len; i++)
		if (v[i] < '0' || v[i] > '9')
			return "content_length_invalid";
	if (v[0] == '0' && len > 1)
		return "content_length_invalid";
	if (len > 13) /* AG_EGRESS_EVENT_BYTES_MAX has 13 digits */
		return "content_length_too_large";
	int64_t x = 0;
	for (size_t i = 0; i < len; i++)
		x = x * 10 + (v[i] - '0');
	if (x > AG_EGRESS_EVENT_BYTES_MAX)
		return "content_length_too_large";
	*out = x;
	return NULL;
}

static int parse_headers(struct ag_egress_request *r, const char *p, const char *end)
{
	bool seen_te = false;
	r->headers = p;
	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (!eol)
			return refuse(r, "malformed_request");
		size_t len = (size_t)(eol - p);
		if (len == 0)
			break; /* the final empty line (bytes_ok: the last one) */
		r->n_headers++;
		if (p[0] == ' ' || p[0] == '\t')
			return refuse(r, "obs_fold");
		size_t k = 0;
		while (k < len && is_tchar((unsigned char)p[k]))
			k++;
		if (k == 0)
			return refuse(r, "header_malformed");
		size_t name_len = k;
		if (k < len && (p[k] == ' ' || p[k] == '\t')) {
			while (k < len && (p[k] == ' ' || p[k] == '\t'))
				k++;
			return refuse(r, k < len && p[k] == ':' ? "header_name_whitespace"
								: "header_malformed");
		}
		if (k >= len || p[k] != ':')
			return refuse(r, "header_malformed");
		const char *v = p + k + 1;
		size_t vl = len - k - 1;
		while (vl > 0 && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		if (name_is(p, name_len, "content-length")) {
			if (r->content_length >= 0)
				return refuse(r, "content_length_duplicate");
			int64_t cl = -1;
			const char *why = content_length(v, vl, &cl);
			if (why)
				return refuse(r, why);
			r->content_length = cl;
		} else if (name_is(p, name_len, "transfer-encoding")) {
			if (seen_te)
				return refuse(r, "transfer_encoding_duplicate");
			if (vl != strlen("chunked") || strncasecmp(v, "chunked", vl) != 0)
				return refuse(r, "transfer_encoding_invalid");
			seen_te = true;
		}
		p = eol + 2;
	}
	r->headers_len = (size_t)(p - r->headers);
	if (seen_te && r->content_length >= 0)
		return refuse(r, "content_length_with_transfer_encoding");
	if (seen_te)
		return refuse(r, "transfer_encoding_unsupported");
	return 0;
}

int ag_egress_request_parse(char *head, size_t n, struct ag_egress_request *r)
{
	*r = (struct ag_egress_request){.content_length = -1};
	if (memchr(head, 0, n) || !bytes_ok(head, n))
		return refuse(r, "malformed_request");
	size_t lines = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (head[i] == '\r' && head[i + 1] == '\n')
			lines++;
	/* the request line, the headers, the empty line */
	if (lines > AG_GW_HEADER_LINES_MAX + 2)
		return refuse(r, "too_many_headers");
	char *eol = memmem(head, n, "\r\n", 2);
	*eol = 0;
	/* METHOD SP TARGET SP HTTP/1.x, single spaces. */
	char *sp1 = strchr(head, ' ');
	char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || sp1 == head || sp2 == sp1 + 1 || strchr(sp2 + 1, ' ') ||
	    strchr(head, '\t') ||
	    (strcmp(sp2 + 1, "HTTP/1.1") != 0 && strcmp(sp2 + 1, "HTTP/1.0") != 0))
		return refuse(r, "malformed_request");
	for (const char *m = head; m < sp1; m++)
		if (*m < 'A' || *m > 'Z')
			return refuse(r, "malformed_request");
	*sp1 = 0;
	*sp2 = 0;
	r->method = head;
	r->target = sp1 + 1;
	return parse_headers(r, eol + 2, head + n);
}

static const struct {
	const char *detail, *reason;
} refusals[] = {
    {"malformed_request", "request_malformed"},
    {"header_malformed", "request_malformed"},
    {"obs_fold", "request_smuggling"},
    {"header_name_whitespace", "request_smuggling"},
    {"content_length_duplicate", "request_smuggling"},
    {"content_length_invalid", "request_smuggling"},
    {"transfer_encoding_duplicate", "request_smuggling"},
    {"transfer_encoding_invalid", "request_smuggling"},
    {"content_length_with_transfer_encoding", "request_smuggling"},
    {"content_length_too_large", "request_oversized"},
    {"too_many_headers", "request_oversized"},
    {"header_too_large", "request_oversized"},
    {"header_timeout", "request_slow"},
    {"transfer_encoding_unsupported", "request_unsupported"},
    {"unsupported_request", "request_unsupported"},
    {"invalid_url", "invalid_url"},
    {"client_closed_before_request", "request_incomplete"},
    {"connection_limit", "connection_limit"},
    {"terminated_limit", "connection_limit"},
    {"evidence_lost", "evidence_lost"},
    {"socket_failed", "gateway_error"},
    {"checked_address_invalid", "gateway_error"},
};

const char *ag_egress_refusal_reason(const char *detail)
{
	for (size_t i = 0; detail && i < AG_ARRAY_SIZE(refusals); i++)
		if (!strcmp(detail, refusals[i].detail))
			return refusals[i].reason;
	return NULL;
}

bool ag_egress_event_reason_known(const char *reason)
{
	/* decision.h's verdict reasons, and what a record without one says */
	static const char *const decided[] = {
	    "approved_destination",
	    "udp_blocked",
	    "quic_blocked",
	    "dns_blocked",
	    "unix_blocked",
	    "unsupported_protocol",
	    "invalid_authority",
	    "invalid_url",
	    "destination_mismatch",
	    "destination_not_approved",
	    "ip_literal_not_approved",
	    "unsafe_ip_literal",
	    "resolution_uncertain",
	    "resolution_missing",
	    "resolution_ambiguous",
	    "resolution_invalid",
	    "resolution_unsafe",
	    "unknown",
	};
	if (!reason)
		return false;
	for (size_t i = 0; i < AG_ARRAY_SIZE(decided); i++)
		if (!strcmp(reason, decided[i]))
			return true;
	for (size_t i = 0; i < AG_ARRAY_SIZE(refusals); i++)
		if (!strcmp(reason, refusals[i].reason))
			return true;
	return false;
}
