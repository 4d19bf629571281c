/*
 * decision.c: address classification (one function, one table) and the
 * per-event egress decision (decision.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/decision.h"
#include "lib/base/error.h"
#include "lib/egress/authority.h"
#include "lib/egress/policy.h"

#include <arpa/inet.h>

int ag_egress_addr_parse(const char *s, struct ag_egress_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return -1;
	if (inet_pton(AF_INET, s, out->b) == 1) {
		out->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out->b) == 1) {
		out->family = 6;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return -1;
}

void ag_egress_addr_format(const struct ag_egress_addr *a, char *out)
{
	if (!inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->b, out, AG_EGRESS_ADDR_TEXT_MAX))
		out[0] = '\0';
}

static const uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct ag_egress_addr ag_egress_addr_unmap(const struct ag_egress_addr *a)
{
	struct ag_egress_addr r = *a;
	if (a->family == 6 && memcmp(a->b, mapped_prefix, 12) == 0) {
		memset(&r, 0, sizeof(r));
		r.family = 4;
		memcpy(r.b, a->b + 12, 4);
	}
	return r;
}

/*
 * THE range table. First match wins, so a range is listed before any
 * range that contains it. An address matching nothing is global for IPv4
 * and reserved for IPv6 (only 2000::/3 is global unicast, listed last).
 * IPv4-mapped IPv6 never reaches the table: it is unmapped first.
 * Sources: IANA special-purpose registries (RFC 6890 and updates), cloud
 * metadata endpoints, Docker's default address pools
 * (shared/notes/egress-engine.md section 6).
 */
struct range {
	int family;
	uint8_t net[16];
	unsigned prefix;
	enum ag_addr_class cls;
};

#define V4(a, b, c, d, p, k)                                                                       \
	{                                                                                          \
		4, {a, b, c, d}, p, k                                                              \
	}
#define V6(p, k, ...)                                                                              \
	{                                                                                          \
		6, {__VA_ARGS__}, p, k                                                             \
	}

static const struct range ranges[] = {
    V4(0, 0, 0, 0, 32, AG_ADDR_UNSPECIFIED),
    V4(0, 0, 0, 0, 8, AG_ADDR_RESERVED),
    V4(10, 0, 0, 0, 8, AG_ADDR_PRIVATE),
    V4(100, 100, 100, 200, 32, AG_ADDR_METADATA), /* Alibaba Cloud, inside CGNAT */
    V4(100, 64, 0, 0, 10, AG_ADDR_CGNAT),
    V4(127, 0, 0, 0, 8, AG_ADDR_LOOPBACK),
    V4(169, 254, 169, 254, 32, AG_ADDR_METADATA), /* AWS, GCP, Azure, ... */
    V4(169, 254, 170, 2, 32, AG_ADDR_METADATA),	  /* ECS task metadata */
    V4(169, 254, 0, 0, 16, AG_ADDR_LINK_LOCAL),
    V4(172, 17, 0, 0, 16, AG_ADDR_DOCKER_INTERNAL), /* docker0 + default pools ... */
    V4(172, 18, 0, 0, 15, AG_ADDR_DOCKER_INTERNAL),
    V4(172, 20, 0, 0, 14, AG_ADDR_DOCKER_INTERNAL),
    V4(172, 24, 0, 0, 13, AG_ADDR_DOCKER_INTERNAL), /* ... up to 172.31.255.255 */
    V4(172, 16, 0, 0, 12, AG_ADDR_PRIVATE),	    /* leaves 172.16.0.0/16 */
    V4(192, 0, 0, 0, 24, AG_ADDR_RESERVED),	    /* IETF protocol assignments */
    V4(192, 0, 2, 0, 24, AG_ADDR_DOCUMENTATION),
    V4(192, 88, 99, 0, 24, AG_ADDR_RESERVED),	     /* 6to4 relay anycast */
    V4(192, 168, 0, 0, 16, AG_ADDR_DOCKER_INTERNAL), /* Docker 20.10's second pool */
    V4(198, 18, 0, 0, 15, AG_ADDR_RESERVED),	     /* benchmarking */
    V4(198, 51, 100, 0, 24, AG_ADDR_DOCUMENTATION),
    V4(203, 0, 113, 0, 24, AG_ADDR_DOCUMENTATION),
    V4(224, 0, 0, 0, 4, AG_ADDR_MULTICAST),
    V4(255, 255, 255, 255, 32, AG_ADDR_BROADCAST),
    V4(240, 0, 0, 0, 4, AG_ADDR_RESERVED),
    V6(128, AG_ADDR_UNSPECIFIED, 0),
    V6(128, AG_ADDR_LOOPBACK, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
    V6(96, AG_ADDR_TRANSLATION, 0, 0x64, 0xff, 0x9b),	    /* NAT64 */
    V6(48, AG_ADDR_TRANSLATION, 0, 0x64, 0xff, 0x9b, 0, 1), /* local NAT64 */
    V6(64, AG_ADDR_RESERVED, 0x01, 0x00),		    /* discard-only */
    V6(32, AG_ADDR_DOCUMENTATION, 0x20, 0x01, 0x0d, 0xb8),
    V6(32, AG_ADDR_TRANSLATION, 0x20, 0x01, 0x00, 0x00), /* Teredo */
    V6(23, AG_ADDR_RESERVED, 0x20, 0x01, 0x00, 0x00),	 /* IETF protocol assignments */
    V6(16, AG_ADDR_TRANSLATION, 0x20, 0x02),		 /* 6to4 */
    V6(20, AG_ADDR_RESERVED, 0x3f, 0xff),		 /* documentation (RFC 9637) */
    V6(128, AG_ADDR_METADATA, 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
       0x54),			  /* AWS IMDS over IPv6 */
    V6(7, AG_ADDR_PRIVATE, 0xfc), /* unique local */
    V6(10, AG_ADDR_LINK_LOCAL, 0xfe, 0x80),
    V6(10, AG_ADDR_RESERVED, 0xfe, 0xc0), /* deprecated site-local */
    V6(8, AG_ADDR_MULTICAST, 0xff),
    V6(3, AG_ADDR_GLOBAL, 0x20), /* global unicast */
};

static bool in_range(const struct ag_egress_addr *a, const struct range *r)
{
	if (a->family != r->family)
		return false;
	unsigned full = r->prefix / 8, rem = r->prefix % 8;
	if (memcmp(a->b, r->net, full) != 0)
		return false;
	if (rem == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rem));
	return (a->b[full] & mask) == (r->net[full] & mask);
}

enum ag_addr_class ag_egress_classify(const struct ag_egress_addr *addr)
{
	struct ag_egress_addr a = ag_egress_addr_unmap(addr);
	for (size_t i = 0; i < AG_ARRAY_SIZE(ranges); i++)
		if (in_range(&a, &ranges[i]))
			return ranges[i].cls;
	return a.family == 4 ? AG_ADDR_GLOBAL : AG_ADDR_RESERVED;
}

const char *ag_addr_class_name(enum ag_addr_class c)
{
	static const char *const names[] = {
	    [AG_ADDR_GLOBAL] = "global",	   [AG_ADDR_DOCUMENTATION] = "documentation",
	    [AG_ADDR_PRIVATE] = "private",	   [AG_ADDR_LOOPBACK] = "loopback",
	    [AG_ADDR_LINK_LOCAL] = "link-local",   [AG_ADDR_MULTICAST] = "multicast",
	    [AG_ADDR_BROADCAST] = "broadcast",	   [AG_ADDR_UNSPECIFIED] = "unspecified",
	    [AG_ADDR_RESERVED] = "reserved",	   [AG_ADDR_CGNAT] = "cgnat",
	    [AG_ADDR_METADATA] = "metadata",	   [AG_ADDR_DOCKER_INTERNAL] = "docker-internal",
	    [AG_ADDR_TRANSLATION] = "translation",
	};
	if ((unsigned)c < AG_ARRAY_SIZE(names) && names[c])
		return names[c];
	return "reserved";
}

bool ag_addr_class_safe(enum ag_addr_class c, bool test_only)
{
	return c == AG_ADDR_GLOBAL || (test_only && c == AG_ADDR_DOCUMENTATION);
}

/* ---- the decision ---- */

static bool deny(struct ag_egress_decision *d, const char *reason)
{
	d->allow = false;
	d->reason = reason;
	return false;
}

static bool same_target(const struct ag_egress_target *a, const struct ag_egress_target *b)
{
	return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* Host/port given as separate fields: normalise, port 1..65535. */
static int field_target(const char *host, int64_t port, struct ag_egress_target *t)
{
	const char *why = NULL;
	if (!host || port < 1 || port > 65535)
		return -1;
	size_t n = strnlen(host, AG_EGRESS_AUTHORITY_MAX + 1);
	if (n > AG_EGRESS_HOST_MAX + 2 || ag_egress_host_normalize(host, n, t, &why) < 0)
		return -1;
	t->port = (int)port;
	return 0;
}

enum proto { P_CONNECT, P_HTTP, P_HTTPS, P_TCP };

bool ag_egress_precheck(const struct ag_egress_policy *p, const struct ag_egress_event *ev,
			struct ag_egress_decision *d)
{
	*d = (struct ag_egress_decision){
	    .allow = false, .rule = -1, .address_class = AG_ADDR_GLOBAL};
	static const struct {
		const char *name;
		const char *blocked;
	} blocked[] = {{"udp", "udp_blocked"},
		       {"quic", "quic_blocked"},
		       {"dns", "dns_blocked"},
		       {"unix", "unix_blocked"}};
	const char *proto = ev->protocol ? ev->protocol : "";
	for (size_t i = 0; i < AG_ARRAY_SIZE(blocked); i++)
		if (strcmp(proto, blocked[i].name) == 0)
			return deny(d, blocked[i].blocked);
	enum proto pr;
	if (strcmp(proto, "connect") == 0)
		pr = P_CONNECT;
	else if (strcmp(proto, "http") == 0)
		pr = P_HTTP;
	else if (strcmp(proto, "https") == 0)
		pr = P_HTTPS;
	else if (strcmp(proto, "tcp") == 0)
		pr = P_TCP;
	else
		return deny(d, "unsupported_protocol");

	/* The requested destination, from exactly the field the protocol uses. */
	struct ag_egress_target req, other;
	const char *why = NULL;
	if (pr == P_CONNECT) {
		if (!ev->authority || ev->url)
			return deny(d, "invalid_authority");
		if (ag_egress_authority_parse(ev->authority,
					      strnlen(ev->authority, AG_EGRESS_AUTHORITY_MAX + 1),
					      &req, &why) < 0)
			return deny(d, "invalid_authority");
	} else if (pr == P_HTTP || pr == P_HTTPS) {
		bool https = false;
		if (!ev->url || ev->authority)
			return deny(d, "invalid_url");
		if (ag_egress_url_parse(ev->url, strnlen(ev->url, AG_EGRESS_AUTHORITY_MAX + 1),
					&req, &https, NULL, &why) < 0 ||
		    https != (pr == P_HTTPS))
			return deny(d, "invalid_url");
	} else {
		if (ev->authority || ev->url)
			return deny(d, "invalid_authority");
		if (field_target(ev->requested_host, ev->requested_port, &req) < 0)
			return deny(d, "invalid_authority");
	}
	memcpy(d->host, req.host, sizeof(d->host));
	d->port = req.port;
	/* Stated requested / effective destinations must agree with it. */
	if (pr != P_TCP && (ev->requested_host || ev->requested_port)) {
		if (field_target(ev->requested_host, ev->requested_port, &other) < 0 ||
		    !same_target(&req, &other))
			return deny(d, "destination_mismatch");
	}
	if (ev->effective_host || ev->effective_port) {
		if (field_target(ev->effective_host, ev->effective_port, &other) < 0 ||
		    !same_target(&req, &other))
			return deny(d, "destination_mismatch");
	}

	const struct ag_egress_rule *rule = ag_egress_policy_find(p, req.host, req.port);
	if (rule)
		d->rule = (int)(rule - p->rules);
	if (req.ip_literal) {
		if (!rule || !rule->test_only_ip_literal || !rule->test_only)
			return deny(d, "ip_literal_not_approved");
		d->address_class = ag_egress_classify(&req.addr);
		ag_egress_addr_format(&req.addr, d->address);
		if (!ag_addr_class_safe(d->address_class, rule->test_only))
			return deny(d, "unsafe_ip_literal");
		d->allow = true;
		d->reason = "approved_destination";
		return true;
	}
	if (!rule)
		return deny(d, "destination_not_approved");
	d->reason = "resolution_required"; /* approved name: now, and only now, resolve it */
	return true;
}

bool ag_egress_decide(const struct ag_egress_policy *p, const struct ag_egress_event *ev,
		      struct ag_egress_decision *d)
{
	if (!ag_egress_precheck(p, ev, d))
		return false;
	if (d->allow)
		return true; /* an approved, safe IP literal: nothing to resolve */
	const struct ag_egress_rule *rule = &p->rules[d->rule];
	if (!ev->resolution_status || strcmp(ev->resolution_status, "stable") != 0)
		return deny(d, "resolution_uncertain");
	if (ev->n_resolved == 0)
		return deny(d, "resolution_missing");
	if (ev->n_resolved > AG_EGRESS_RESOLVED_MAX)
		return deny(d, "resolution_ambiguous");
	struct ag_egress_addr first = {0};
	for (size_t i = 0; i < ev->n_resolved; i++) {
		struct ag_egress_addr a;
		if (!ev->resolved || ag_egress_addr_parse(ev->resolved[i], &a) < 0)
			return deny(d, "resolution_invalid");
		a = ag_egress_addr_unmap(&a);
		if (i == 0)
			first = a;
		else if (a.family != first.family || memcmp(a.b, first.b, 16) != 0)
			return deny(d, "resolution_ambiguous");
	}
	d->address_class = ag_egress_classify(&first);
	ag_egress_addr_format(&first, d->address);
	if (!ag_addr_class_safe(d->address_class, rule->test_only))
		return deny(d, "resolution_unsafe");
	d->allow = true;
	d->reason = "approved_destination";
	return true;
}

/* ---- JSON ---- */

static int bad(struct ag_error **err, const char *reason, const char *key, const char *what)
{
	return ag_err_at(err, AG_E_CONFIG, reason, NULL, 0, 0, key, "event %s", what);
}

static int host_port_json(const json_t *o, const char *key, const char **host, int64_t *port,
			  struct ag_error **err)
{
	if (!json_is_object(o))
		return bad(err, "egress.event.type", key, "must be an object {host, port}");
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		if (strcmp(k, "host") == 0) {
			if (!json_is_string(v))
				return bad(err, "egress.event.type", key, "host must be a string");
			*host = json_string_value(v);
		} else if (strcmp(k, "port") == 0) {
			if (!json_is_integer(v))
				return bad(err, "egress.event.type", key,
					   "port must be an integer");
			*port = json_integer_value(v);
		} else {
			return bad(err, "egress.event.unknown_key", key, "has an unknown key");
		}
	}
	return 0;
}

int ag_egress_event_from_json(const json_t *j, struct ag_egress_event *ev, struct ag_error **err)
{
	*ev = (struct ag_egress_event){0};
	if (!json_is_object(j))
		return bad(err, "egress.event.type", "", "must be an object");
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)j, k, v)
	{
		const char **str = NULL;
		if (strcmp(k, "protocol") == 0)
			str = &ev->protocol;
		else if (strcmp(k, "authority") == 0)
			str = &ev->authority;
		else if (strcmp(k, "url") == 0)
			str = &ev->url;
		else if (strcmp(k, "resolution_status") == 0)
			str = &ev->resolution_status;
		if (str) {
			if (!json_is_string(v)) {
				ag_egress_event_release(ev);
				return bad(err, "egress.event.type", k, "field must be a string");
			}
			*str = json_string_value(v);
			continue;
		}
		int r = 0;
		if (strcmp(k, "requested") == 0) {
			r = host_port_json(v, k, &ev->requested_host, &ev->requested_port, err);
		} else if (strcmp(k, "effective") == 0) {
			r = host_port_json(v, k, &ev->effective_host, &ev->effective_port, err);
		} else if (strcmp(k, "resolved_addresses") == 0) {
			if (!json_is_array(v)) {
				r = bad(err, "egress.event.type", k, "must be a list of strings");
			} else {
				size_t n = json_array_size(v);
				size_t keep =
				    n > AG_EGRESS_RESOLVED_MAX ? AG_EGRESS_RESOLVED_MAX + 1 : n;
				free((void *)ev->resolved);
				const char **a = ag_xcalloc(keep + 1, sizeof(*a));
				ev->resolved = a;
				ev->n_resolved = keep;
				for (size_t i = 0; i < keep && r == 0; i++) {
					const json_t *x = json_array_get(v, i);
					if (!json_is_string(x))
						r = bad(err, "egress.event.type", k,
							"must be a list of strings");
					else
						a[i] = json_string_value(x);
				}
			}
		} else {
			r = bad(err, "egress.event.unknown_key", k, "has an unknown key");
		}
		if (r < 0) {
			ag_egress_event_release(ev);
			return -1;
		}
	}
	return 0;
}

void ag_egress_event_release(struct ag_egress_event *ev)
{
	free((void *)ev->resolved);
	ev->resolved = NULL;
	ev->n_resolved = 0;
}

json_t *ag_egress_decision_json(const struct ag_egress_decision *d)
{
	json_t *o = json_object();
	json_object_set_new(o, "decision", json_string(d->allow ? "allow" : "deny"));
	json_object_set_new(o, "reason", json_string(d->reason ? d->reason : "unknown"));
	json_object_set_new(o, "host", d->host[0] ? json_string(d->host) : json_null());
	json_object_set_new(o, "port", d->port ? json_integer(d->port) : json_null());
	json_object_set_new(o, "address", d->address[0] ? json_string(d->address) : json_null());
	json_object_set_new(o, "address_class",
			    d->address[0] ? json_string(ag_addr_class_name(d->address_class))
					  : json_null());
	json_object_set_new(o, "rule", d->rule >= 0 ? json_integer(d->rule) : json_null());
	return o;
}
