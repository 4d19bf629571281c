/*
 * authority.h: hosts, CONNECT authorities and URLs of live-study egress
 * (docs/study-egress.md, upstream-reference 9.2). Pure string work: no
 * resolver, no network.
 *
 * One normaliser serves the destination policy and every event, so a host
 * is spelled the same way wherever it is compared:
 *   - surrounding blanks (space, tab) are trimmed, ASCII is lowercased;
 *   - an IPv4 literal must be strict dotted decimal (inet_pton: four parts,
 *     no leading zeros); an IPv6 literal may be bracketed or bare and is
 *     rewritten in compressed form WITHOUT brackets ("2001:db8::1");
 *   - any other host is a DNS name: at most 253 bytes, at least two labels
 *     of [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?, a last label that is not all
 *     digits ("1.2.3.04", "0x7f.1" are refused, not guessed at).
 * Refusal reasons (static tokens, also used by the policy validator):
 *   egress.host.empty egress.host.too_long egress.host.control
 *   egress.host.trailing_dot egress.host.wildcard egress.host.char
 *   egress.host.label egress.host.single_label egress.host.numeric
 *   egress.host.ip_invalid
 */
#ifndef AG_EGRESS_AUTHORITY_H
#define AG_EGRESS_AUTHORITY_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/egress/decision.h"

/* A normalised destination. */
struct ag_egress_target {
	char host[AG_EGRESS_HOST_MAX + 1]; /* normalised (see above) */
	int port;			   /* 1..65535 */
	bool ip_literal;		   /* host is an address; addr holds it */
	struct ag_egress_addr addr;
};

/*
 * Normalises host[0..len) into t->host / t->ip_literal / t->addr (t->port
 * untouched). Returns 0, or -1 with *reason set to an egress.host.* token.
 */
int ag_egress_host_normalize(const char *host, size_t len, struct ag_egress_target *t,
			     const char **reason);

/*
 * True for the names no policy may approve and no event may reach by
 * name: localhost, localhost.localdomain, host.docker.internal,
 * gateway.docker.internal, docker.for.mac.localhost,
 * docker.for.mac.host.internal, kubernetes.docker.internal, metadata,
 * metadata.google.internal, and every name ending in .docker.internal or
 * .localhost. `host` must be normalised. *suffix tells which list matched.
 */
bool ag_egress_host_blocked(const char *host, bool *suffix);

/*
 * Parses a CONNECT authority "host:port" or "[v6]:port" (at most
 * AG_EGRESS_AUTHORITY_MAX bytes, no control bytes, decimal port 1..65535
 * without sign or leading zero). Returns 0 or -1 with *reason one of
 * egress.authority.syntax, egress.authority.port or an egress.host.* token.
 */
int ag_egress_authority_parse(const char *s, size_t len, struct ag_egress_target *t,
			      const char **reason);

/*
 * Parses an absolute http:// or https:// URL (scheme case-insensitive; no
 * userinfo; printable ASCII only; at most AG_EGRESS_AUTHORITY_MAX bytes).
 * The port defaults to 80 / 443. *https tells the scheme. When `canonical`
 * is not NULL it receives a heap copy of the URL's canonical form without
 * the query string and fragment: "scheme://host[:port]/path" (query strings
 * never reach evidence; what is recorded still passes the one sanitizer,
 * base/sanitize.h, when the manifest is built). Returns 0 or -1 with *reason one of
 * egress.url.syntax, egress.url.scheme, egress.url.userinfo, egress.authority.port or an
 * egress.host.* token.
 */
int ag_egress_url_parse(const char *s, size_t len, struct ag_egress_target *t, bool *https,
			char **canonical, const char **reason);

/* ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$: trial and authorization ids (also
 * valid Docker label values). */
bool ag_egress_id_valid(const char *s);

#endif
