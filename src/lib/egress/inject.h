/*
 * inject.h: one request head inside a terminated tunnel (issue 21,
 * docs/study-egress.md "Credential injection"), rewritten for the one
 * destination its tunnel was approved for. Pure: no sockets; the output is
 * a bounded buffer. The gateway (src/gateway/terminate.c) calls it once per
 * request; the unit tests and tests/fuzz/fuzz_gateway_inject.c directly.
 *
 * THE HEAD is what request.h parses (the same strict rules: no obs-fold,
 * one Content-Length or none, no chunked body, no smuggling), and then:
 *   the target is origin-form ("/..."): anything else ...... inner_target (400)
 *   the method is not TRACE or TRACK (their answer echoes
 *     the headers, the real one included, to the agent) ..... inner_method (405)
 *   exactly one Host, equal (any case) to HOST, or to
 *     HOST:PORT ............................................ host_mismatch (421)
 *   the rewritten head stays within AG_GW_HEADER_MAX plus
 *     the injected line .................................... header_too_large (431)
 * The rewritten head is the request line, every header line but the
 * removed ones, in order, then "HEADER: VALUE", then the empty line.
 * Removed (any case, every copy): the configured header, the credential
 * headers an agent could use to send a credential of its own
 * (Authorization, Proxy-Authorization, X-Api-Key, Api-Key,
 * X-Goog-Api-Key) and the hop-by-hop ones (Connection, Proxy-Connection,
 * Keep-Alive, Upgrade, TE, and Expect: with no 100-continue handshake the
 * body always follows its head, so the framing cannot be skipped): the
 * tunnel stays one HTTP/1.1 connection.
 * The body (Content-Length bytes) is the caller's to relay unchanged.
 */
#ifndef AG_EGRESS_INJECT_H
#define AG_EGRESS_INJECT_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"

struct ag_egress_inject_result {
	int64_t content_length;	 /* -1: none */
	const char *detail;	 /* NULL: rewritten; else the refusal word */
	int status;		 /* its HTTP status */
	const char *status_text; /* its reason phrase */
};

/* A header name as the evidence writes it: lower case, at most
 * AG_EGRESS_INJECT_HEADER_MAX characters. */
void ag_egress_header_lower(const char *name, char out[AG_EGRESS_INJECT_HEADER_MAX + 1]);

/*
 * Parses HEAD (n bytes up to and including the first CRLF CRLF, NUL at
 * head[n]; NULs are written into it) and appends the rewritten head to
 * OUT, adding "HEADER: VALUE" (VALUE is the prefix and the credential).
 * Returns 0, or -1 with res->detail (nothing useful in OUT then; the
 * caller releases it). OUT's own bound failing is header_too_large.
 */
int ag_egress_inject_rewrite(char *head, size_t n, const char *host, int port, const char *header,
			     const char *value, struct ag_buf *out,
			     struct ag_egress_inject_result *res);

#endif
