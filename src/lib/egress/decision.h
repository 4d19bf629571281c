/*
 * decision.h: the per-event egress decision of a live-study gateway
 * (contract "Live-Study Egress Contract"; upstream-reference 9.2;
 * docs/study-egress.md). Pure: no resolver, no sockets, no Docker, no
 * allocation on the decision path. A gateway links this, policy.h and
 * authority.h (plus the base library) and calls, per event, the policy
 * check FIRST and resolves only a name it approved (resolving any other
 * name would already leak it to a resolver):
 *
 *     struct ag_egress_event ev = { .protocol = "connect",
 *             .authority = "api.example.com:443" };
 *     struct ag_egress_decision d;
 *     if (!ag_egress_precheck(policy, &ev, &d))
 *             refuse(d.reason);                -- never resolved
 *     else if (!d.allow) {                     -- "resolution_required"
 *             ev.resolved = lookup(d.host, &ev.n_resolved);
 *             ev.resolution_status = "stable" or other;
 *             if (ag_egress_decide(policy, &ev, &d))
 *                     connect_to(d.address, d.port); -- only the checked address
 *             else
 *                     refuse(d.reason);
 *     } else
 *             connect_to(d.address, d.port);   -- an approved test IP literal
 *
 * A redirect or any new destination is a NEW event, decided on its own.
 *
 * ADDRESSES. ag_egress_classify() is the one classification function; it
 * walks one table of ranges (decision.c), most specific first. IPv4-mapped
 * IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address inside. Only
 * AG_ADDR_GLOBAL is safe for every rule; AG_ADDR_DOCUMENTATION is safe
 * only for a test_only rule (CI canaries live in documentation ranges);
 * every other class is refused.
 */
#ifndef AG_EGRESS_DECISION_H
#define AG_EGRESS_DECISION_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"

#include <jansson.h>

struct ag_error;
struct ag_egress_policy;

enum ag_addr_class {
	AG_ADDR_GLOBAL = 0,    /* publicly routable */
	AG_ADDR_DOCUMENTATION, /* 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32 */
	AG_ADDR_PRIVATE,       /* 10/8, 172.16/12 outside Docker's pools, fc00::/7 */
	AG_ADDR_LOOPBACK,      /* 127/8, ::1 */
	AG_ADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
	AG_ADDR_MULTICAST,     /* 224/4, ff00::/8 */
	AG_ADDR_BROADCAST,     /* 255.255.255.255 */
	AG_ADDR_UNSPECIFIED,   /* 0.0.0.0, :: */
	AG_ADDR_RESERVED,      /* 0/8, 240/4, 192.0.0/24, 198.18/15, 100::/64, non-2000::/3 ... */
	AG_ADDR_CGNAT,	       /* 100.64/10 */
	AG_ADDR_METADATA,      /* 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254 */
	AG_ADDR_DOCKER_INTERNAL, /* Docker's default pools: 172.17-31.0.0/16, 192.168/16 */
	AG_ADDR_TRANSLATION,	 /* NAT64 64:ff9b::/96, 64:ff9b:1::/48, 6to4 2002::/16, Teredo */
};

struct ag_egress_addr {
	int family;    /* 4 or 6 */
	uint8_t b[16]; /* network order; IPv4 in b[0..3] */
};

/* Strict textual parse (inet_pton: dotted-quad IPv4 or IPv6 without
 * brackets or zone). Returns 0, or -1 when `s` is not an address. */
int ag_egress_addr_parse(const char *s, struct ag_egress_addr *out);
/* Canonical text ("192.0.2.1", "2001:db8::1"); out has AG_EGRESS_ADDR_TEXT_MAX bytes. */
void ag_egress_addr_format(const struct ag_egress_addr *a, char *out);
/* ::ffff:a.b.c.d -> a.b.c.d; any other address unchanged. */
struct ag_egress_addr ag_egress_addr_unmap(const struct ag_egress_addr *a);
/* THE classification (table-driven, most specific range first). */
enum ag_addr_class ag_egress_classify(const struct ag_egress_addr *a);
/* "global", "documentation", "private", "loopback", "link-local", "multicast",
 * "broadcast", "unspecified", "reserved", "cgnat", "metadata",
 * "docker-internal", "translation". */
const char *ag_addr_class_name(enum ag_addr_class c);
/* Global always; documentation only when test_only; nothing else. */
bool ag_addr_class_safe(enum ag_addr_class c, bool test_only);

/*
 * One egress event as the gateway saw it. Strings are borrowed. The
 * destination comes from `authority` (protocol "connect"), from `url`
 * (protocols "http"/"https"), or from requested_host/port ("tcp"); when
 * both an authority/URL and requested_host are given they must agree.
 * effective_host/port is where the gateway would actually connect (after
 * any rewrite); it must equal the requested destination.
 */
struct ag_egress_event {
	const char *protocol;	     /* connect http https tcp | udp quic dns unix | other */
	const char *authority;	     /* CONNECT "host:port" / "[v6]:port", or NULL */
	const char *url;	     /* absolute http(s) URL, or NULL */
	const char *requested_host;  /* NULL: from authority / url */
	int64_t requested_port;	     /* 0: from authority / url */
	const char *effective_host;  /* NULL: the requested host */
	int64_t effective_port;	     /* 0: the requested port */
	const char *const *resolved; /* addresses the gateway's resolver returned */
	size_t n_resolved;
	const char *resolution_status; /* "stable"; anything else (or NULL) is uncertain */
};

/*
 * The verdict. `reason` is a static token:
 *   allow: approved_destination
 *   deny:  udp_blocked quic_blocked dns_blocked unix_blocked
 *          unsupported_protocol invalid_authority invalid_url
 *          destination_mismatch destination_not_approved
 *          ip_literal_not_approved unsafe_ip_literal resolution_uncertain
 *          resolution_missing resolution_ambiguous resolution_invalid
 *          resolution_unsafe
 *   not a verdict (ag_egress_precheck only): resolution_required
 */
struct ag_egress_decision {
	bool allow;
	const char *reason;
	char host[AG_EGRESS_HOST_MAX + 1];     /* normalised destination; "" if unparsed */
	int port;			       /* 0 if unparsed */
	char address[AG_EGRESS_ADDR_TEXT_MAX]; /* the checked address ("" if none) */
	enum ag_addr_class address_class;      /* class of `address` (GLOBAL if none) */
	int rule;			       /* index of the matched rule, -1 if none */
};

/*
 * Steps 1-5 of ag_egress_decide, everything that needs no resolver: the
 * check a gateway makes BEFORE any lookup. False: a final deny (d->reason
 * as for ag_egress_decide). True with d->allow: an approved, safe IP
 * literal (final). True without d->allow: d->reason is
 * "resolution_required", d->host / d->port / d->rule name the approved
 * rule, and only that name may now be resolved. Never fails otherwise.
 */
bool ag_egress_precheck(const struct ag_egress_policy *p, const struct ag_egress_event *ev,
			struct ag_egress_decision *d);

/*
 * Decides one event against a validated policy. Never fails: anything
 * unexpected is a deny with a reason. Order: protocol, destination syntax,
 * requested/effective agreement, IP literal or exact host:port rule, then
 * resolution (status "stable", 1..8 addresses collapsing to exactly one
 * unique address, that address safe for the rule). Returns d->allow.
 */
bool ag_egress_decide(const struct ag_egress_policy *p, const struct ag_egress_event *ev,
		      struct ag_egress_decision *d);

/*
 * Reads an event object {protocol, authority?, url?, requested?{host,port},
 * effective?{host,port}, resolved_addresses?[...], resolution_status?}
 * (unknown keys refused; more than AG_EGRESS_RESOLVED_MAX addresses are
 * kept up to one past the bound so the decision says "ambiguous"). The
 * event borrows strings from j; release with ag_egress_event_release.
 * Reasons (AG_E_CONFIG): egress.event.type egress.event.unknown_key.
 */
int ag_egress_event_from_json(const json_t *j, struct ag_egress_event *ev, struct ag_error **err);
void ag_egress_event_release(struct ag_egress_event *ev);

/* {decision, reason, host, port, address, address_class, rule} */
json_t *ag_egress_decision_json(const struct ag_egress_decision *d);

#endif
