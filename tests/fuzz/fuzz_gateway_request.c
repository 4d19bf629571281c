/*
 * libFuzzer harness over the egress gateway's request-head parser
 * (src/lib/egress/request.c), fed as the gateway feeds it: the bytes up to
 * and including the first CRLF CRLF (and, once, the input as it is). Built
 * with gcc it links tests/fuzz/replay.c and replays
 * tests/fuzz/corpus/gateway_request in `make check`.
 *
 * Invariants: a refusal has a detail word that maps into the manifest's
 * closed reason vocabulary and a 400/413/431 status; an accepted head has
 * an A-Z method, a target without blanks, header lines that are each
 * NAME ":" VALUE with a token name (no blank before the colon, no
 * continuation line), at most one Content-Length whose value is the
 * parser's, no Transfer-Encoding, and a header block that ends exactly at
 * the final empty line.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/egress/request.h"

#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static void check_accepted(const struct ag_egress_request *r, const char *h, size_t n)
{
	if (!r->method || !r->target || !r->method[0] || !r->target[0] || r->detail)
		abort();
	for (const char *m = r->method; *m; m++)
		if (*m < 'A' || *m > 'Z')
			abort();
	if (strpbrk(r->target, " \t\r\n"))
		abort();
	if (r->headers < h || r->headers + r->headers_len + 2 != h + n)
		abort();
	if (r->content_length < -1 || r->content_length > AG_EGRESS_EVENT_BYTES_MAX)
		abort();
	size_t lines = 0, cls = 0;
	const char *p = r->headers, *end = r->headers + r->headers_len;
	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (!eol || eol == p)
			abort();
		size_t len = (size_t)(eol - p), k = 0;
		while (k < len && tchar((unsigned char)p[k]))
			k++;
		if (k == 0 || k >= len || p[k] != ':')
			abort();
		if (k == 14 && strncasecmp(p, "content-length", 14) == 0) {
			cls++;
			const char *v = p + k + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			char *e = NULL;
			long long x = strtoll(v, &e, 10);
			if (e == v || x != r->content_length || (v[0] == '0' && x != 0))
				abort();
		}
		if (k == 17 && strncasecmp(p, "transfer-encoding", 17) == 0)
			abort();
		lines++;
		p = eol + 2;
	}
	if (lines != r->n_headers || lines > AG_GW_HEADER_LINES_MAX || cls > 1 ||
	    (cls == 0) != (r->content_length == -1))
		abort();
}

static void one(const uint8_t *data, size_t n)
{
	char *h = ag_xmalloc(n + 1);
	memcpy(h, data, n);
	h[n] = 0;
	struct ag_egress_request r;
	if (ag_egress_request_parse(h, n, &r) == 0) {
		check_accepted(&r, h, n);
	} else {
		const char *w = ag_egress_refusal_reason(r.detail);
		if (!r.detail || !w || !ag_egress_event_reason_known(w) || !r.status_text ||
		    (r.status != 400 && r.status != 413 && r.status != 431))
			abort();
	}
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 2 * AG_GW_HEADER_MAX)
		return 0;
	one(data, size);
	const uint8_t *end = memmem(data, size, "\r\n\r\n", 4);
	if (end && (size_t)(end - data) + 4 != size)
		one(data, (size_t)(end - data) + 4);
	return 0;
}
