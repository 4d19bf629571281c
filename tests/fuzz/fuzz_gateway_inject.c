/*
 * libFuzzer harness over the request rewrite of a terminated tunnel
 * (src/lib/egress/inject.c), fed as the gateway feeds it: the bytes up to
 * and including the first CRLF CRLF (and, once, the input as it is). Built
 * with gcc it links tests/fuzz/replay.c and replays
 * tests/fuzz/corpus/gateway_inject in `make check`.
 *
 * Invariants: a refusal has a word and a 400/405/413/421/431 status and leaves
 * no credential in the output; a rewritten head starts with the request
 * line, ends with exactly one "X-Api-Key: <credential>" line and the
 * empty line, holds the credential exactly once and no other credential
 * header (any case), has exactly one Host, naming the approved host, and
 * every line is NAME ":" VALUE with a token name.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/egress/inject.h"
#include "lib/egress/request.h"

#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HOST "api.example.com"
#define CRED "CREDENTIAL-7f3a"

static size_t occurrences(const char *s, size_t n, const char *needle)
{
	size_t c = 0, k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (strncasecmp(s + i, needle, k) == 0)
			c++;
	return c;
}

static bool line_named(const char *line, size_t len, const char *name)
{
	size_t k = strlen(name);
	return len > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

static void check(const char *o, size_t n)
{
	if (n < 4 || memcmp(o + n - 4, "\r\n\r\n", 4) != 0)
		abort();
	if (occurrences(o, n, CRED) != 1)
		abort();
	static const char tail[] = "\r\nX-Api-Key: " CRED "\r\n\r\n";
	if (n < sizeof(tail) - 1 || memcmp(o + n - (sizeof(tail) - 1), tail, sizeof(tail) - 1))
		abort();
	const char *p = (const char *)memmem(o, n, "\r\n", 2) + 2, *end = o + n - 2;
	size_t hosts = 0, keys = 0;
	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (!eol)
			abort();
		size_t len = (size_t)(eol - p);
		if (!memchr(p, ':', len))
			abort();
		if (line_named(p, len, "host")) {
			hosts++;
			if (!strcasestr(p, HOST))
				abort();
		}
		if (line_named(p, len, "x-api-key"))
			keys++;
		if (line_named(p, len, "authorization") || line_named(p, len, "api-key") ||
		    line_named(p, len, "proxy-authorization") ||
		    line_named(p, len, "x-goog-api-key") || line_named(p, len, "connection") ||
		    line_named(p, len, "expect") || line_named(p, len, "upgrade"))
			abort();
		p = eol + 2;
	}
	if (hosts != 1 || keys != 1)
		abort();
}

static void one(const uint8_t *data, size_t n)
{
	char *h = ag_xmalloc(n + 1);
	memcpy(h, data, n);
	h[n] = 0;
	bool has_cred = occurrences((const char *)data, n, CRED) > 0;
	struct ag_buf b = AG_BUF_INIT(AG_GW_HEADER_MAX + 128, "fuzz.inject");
	struct ag_egress_inject_result res;
	if (ag_egress_inject_rewrite(h, n, HOST, 443, "X-Api-Key", CRED, &b, &res) == 0) {
		if (res.detail)
			abort();
		if (!has_cred)
			check(b.buf, b.len);
	} else if (!res.detail || !res.status_text ||
		   (res.status != 400 && res.status != 405 && res.status != 413 &&
		    res.status != 421 && res.status != 431)) {
		abort();
	}
	ag_buf_release(&b);
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
