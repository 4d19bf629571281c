/*
 * request.h: the egress gateway's request-head parser and its refusal
 * vocabulary (docs/study-egress.md "What it enforces" and "Refusal
 * reasons"). Pure: no sockets, no allocation, bounded by the head's length.
 * The gateway (src/gateway/proxy.c) calls it once per request head; the
 * unit tests and tests/fuzz/fuzz_gateway_request.c call it directly.
 *
 * THE HEAD is the bytes up to and including the first CRLF CRLF, NUL at
 * head[n]. It is accepted only when every one of these holds (the first
 * that fails names the refusal; `detail` is the gateway's own word, kept in
 * its stream as gateway_reason; `ag_egress_refusal_reason(detail)` is the
 * word sealed in the manifest's event):
 *
 *   bytes: no NUL, no control byte but HTAB, no byte >= 0x7f, CR only in
 *     CRLF, no bare LF, ends with CRLF CRLF and has no earlier
 *     empty line .......................................... malformed_request
 *   at most AG_GW_HEADER_LINES_MAX header lines ............ too_many_headers
 *   request line METHOD SP TARGET SP HTTP/1.0|HTTP/1.1,
 *     single spaces, METHOD of A-Z ......................... malformed_request
 *   a header line starting with SP or HTAB (obs-fold) ...... obs_fold
 *   a header name (1*tchar) followed by SP or HTAB before
 *     its colon ............................................ header_name_whitespace
 *   a header line without a token name and a colon ......... header_malformed
 *   a second Content-Length (even an equal one) ............ content_length_duplicate
 *   a Content-Length that is not 1*DIGIT, or has a leading
 *     zero ("+3", "-1", "0x3", "3,3", "03"; "0" is fine) ... content_length_invalid
 *   a Content-Length above AG_EGRESS_EVENT_BYTES_MAX ....... content_length_too_large
 *   a second Transfer-Encoding ............................. transfer_encoding_duplicate
 *   a Transfer-Encoding other than "chunked" (any case) .... transfer_encoding_invalid
 *   Content-Length and Transfer-Encoding together .......... content_length_with_transfer_encoding
 *   Transfer-Encoding: chunked alone (valid HTTP the gateway
 *     does not relay: it frames bodies by Content-Length) .. transfer_encoding_unsupported
 *
 * On a refusal after the request line, method and target are still set
 * (the gateway records the destination the request named).
 */
#ifndef AG_EGRESS_REQUEST_H
#define AG_EGRESS_REQUEST_H

#include "lib/base/ag.h"

struct ag_egress_request {
	const char *method, *target; /* NUL-terminated inside the head; NULL when
					the request line was refused */
	const char *headers;	     /* the header lines, each ending CRLF */
	size_t headers_len;	     /* up to, not including, the final empty line */
	size_t n_headers;
	int64_t content_length;	 /* -1 when there is none */
	const char *detail;	 /* NULL: accepted; else the refusal (see above) */
	int status;		 /* the HTTP status of a refusal (400, 413, 431) */
	const char *status_text; /* its reason phrase */
};

/* Parses and checks one request head (see above). Writes NULs into head
 * after the method and the target. Returns 0 (accepted) or -1 (r->detail,
 * r->status and r->status_text say why). */
int ag_egress_request_parse(char *head, size_t n, struct ag_egress_request *r);

/*
 * The word sealed in the manifest's event for a gateway refusal `detail`
 * (a request-head word above, or one of the gateway's own: header_timeout,
 * header_too_large, unsupported_request, invalid_url,
 * client_closed_before_request, connection_limit, evidence_lost,
 * socket_failed, checked_address_invalid). NULL for any other word.
 *   request_smuggling    the framing could be read two ways
 *   request_malformed    not an HTTP/1.x request head
 *   request_oversized    a head, a header count or a body length over its bound
 *   request_slow         the head did not arrive in time
 *   request_unsupported  valid HTTP the gateway does not relay
 *   request_incomplete   the client left before finishing its head
 *   invalid_url          (the decision's own word)
 *   connection_limit, evidence_lost, gateway_error
 */
const char *ag_egress_refusal_reason(const char *detail);

/* The closed vocabulary of an event's "reason" in the manifest: every
 * decision reason (decision.h), the refusal words above, and "unknown"
 * (what a record without a reason says). */
bool ag_egress_event_reason_known(const char *reason);

#endif
