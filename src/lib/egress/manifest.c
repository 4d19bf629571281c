/*
 * manifest.c: build, sanitize, write and validate the live-study egress
 * manifest (manifest.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/manifest.h"
#include "lib/egress/inject.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/egress/authority.h"
#include "lib/egress/policy.h"
#include "lib/egress/request.h"
#include "lib/evidence/canon.h"

#define FAIL(code, reason, key, ...) ag_err_at(err, code, reason, NULL, 0, 0, key, __VA_ARGS__)

/* ---- sanitizing: the one sanitizer's egress profile (base/sanitize.h) ---- */

static json_t *clean_string(const char *s)
{
	if (!s)
		return json_null();
	char *c =
	    ag_sanitize(NULL, AG_SANITIZE_EGRESS, s, strlen(s), AG_EGRESS_MANIFEST_MAX_STRING);
	json_t *j = json_string(c);
	free(c);
	return j ? j : json_string(AG_PH_INVALID_UTF8);
}

/* ---- completion ---- */

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool is_true(const json_t *o, const char *k)
{
	return json_is_true(json_object_get(o, k));
}

static bool cleanup_item_done(const char *s)
{
	return s &&
	       (!strcmp(s, "removed") || !strcmp(s, "already_absent") || !strcmp(s, "not_created"));
}

static const char *const cleanup_items[] = {"agent", "gateway", "internal_network",
					    "outbound_network"};

static bool identity_complete(const json_t *id)
{
	const char *local = str(id, "local_image_id"), *bound = str(id, "container_bound_image_id");
	return json_is_object(id) && str(id, "registry_digest") && local && bound &&
	       strcmp(local, bound) == 0;
}

static bool same_dest(const json_t *a, const json_t *b)
{
	const char *ha = str(a, "host"), *hb = str(b, "host");
	return ha && hb && strcmp(ha, hb) == 0 &&
	       json_integer_value(json_object_get(a, "port")) ==
		   json_integer_value(json_object_get(b, "port")) &&
	       json_is_integer(json_object_get(a, "port"));
}

/*
 * True when an allow record contradicts itself: no approved reason,
 * requested != effective, a URL naming another destination, a resolution
 * that is not stable and single (for an IP literal: any address other than
 * the literal), or a checked address that no rule could allow. Without a policy the address
 * must be at least global or documentation (documentation is safe only
 * for test rules, which only the policy can tell); with one, it must be
 * safe for the rule the record names (a record outside the policy is
 * judged later as unexpected_destination).
 */
static bool event_contradictory(const json_t *e, const struct ag_egress_policy *policy)
{
	const char *dec = str(e, "decision"), *reason = str(e, "reason");
	bool approved = reason && strcmp(reason, "approved_destination") == 0;
	if (!dec || (strcmp(dec, "allow") && strcmp(dec, "deny")))
		return false; /* judged as decision_unknown */
	if (!strcmp(dec, "deny"))
		return approved;
	if (!approved)
		return true;
	const json_t *req = json_object_get(e, "requested");
	if (!same_dest(req, json_object_get(e, "effective")))
		return true;
	const char *host = str(req, "host");
	int port = (int)json_integer_value(json_object_get(req, "port"));
	struct ag_egress_target t;
	const char *why = NULL;
	bool https = false;
	/* A recorded URL names the same destination as the record. */
	const char *url = str(e, "url");
	if (url && (ag_egress_url_parse(url, strlen(url), &t, &https, NULL, &why) < 0 ||
		    t.port != port || strcmp(t.host, host) != 0))
		return true;
	if (ag_egress_host_normalize(host, strlen(host), &t, &why) < 0)
		return true;
	const char *rs = str(e, "resolution_status");
	const json_t *addrs = json_object_get(e, "resolved_addresses");
	if (!json_is_array(addrs) ||
	    (!t.ip_literal && (!rs || strcmp(rs, "stable") != 0 || json_array_size(addrs) < 1)))
		return true;
	/* All resolved addresses collapse to one: for an IP literal, to it. */
	struct ag_egress_addr first = ag_egress_addr_unmap(&t.addr);
	for (size_t i = 0; i < json_array_size(addrs); i++) {
		struct ag_egress_addr a;
		if (ag_egress_addr_parse(json_string_value(json_array_get(addrs, i)), &a) < 0)
			return true;
		a = ag_egress_addr_unmap(&a);
		if (i == 0 && !t.ip_literal)
			first = a;
		else if (a.family != first.family || memcmp(a.b, first.b, 16) != 0)
			return true;
	}
	bool test_only = true;
	if (policy) {
		const struct ag_egress_rule *r =
		    ag_egress_policy_find(policy, str(req, "host"),
					  (int)json_integer_value(json_object_get(req, "port")));
		if (!r)
			return false;
		test_only = r->test_only;
	}
	return !ag_addr_class_safe(ag_egress_classify(&first), test_only);
}

static bool in_policy(const struct ag_egress_policy *policy, const json_t *dest)
{
	const char *h = str(dest, "host");
	const json_t *port = json_object_get(dest, "port");
	return h && json_is_integer(port) &&
	       ag_egress_policy_find(policy, h, (int)json_integer_value(port)) != NULL;
}

void ag_egress_manifest_completion(const json_t *m, const struct ag_egress_policy *policy,
				   struct ag_egress_completion *c)
{
#define SET(s, r)                                                                                  \
	do {                                                                                       \
		c->status = (s);                                                                   \
		c->reason = (r);                                                                   \
		c->success_eligible = !strcmp((s), "complete");                                    \
		return;                                                                            \
	} while (0)
	const json_t *events = json_object_get(m, "events");
	if (!json_is_array(events))
		SET("incomplete", "events_missing");
	if (!identity_complete(json_object_get(m, "gateway_image_identity")))
		SET("incomplete", "gateway_identity_missing");
	/* The aggregates count every request, so no flood of other requests,
	 * and no crash of the gateway after a deny, can hide a deny or an
	 * unexpected destination. The gateway's own loss (evidence_lost,
	 * gateway_error) is no deny of the agent's: the evidence is incomplete. */
	const json_t *gw = json_object_get(m, "gateway_status");
	const char *state = str(gw, "state");
	const json_t *ag = json_object_get(m, "aggregates");
	const json_t *approved = json_object_get(m, "approved_destination");
	const json_t *ov = json_object_get(ag, "overflow");
	size_t i;
	const json_t *e;
	bool own_loss = false;
	json_array_foreach(json_object_get(ag, "keys"), i, e)
	{
		const char *why = str(e, "reason") ? str(e, "reason") : "";
		bool loss = !strcmp(why, "evidence_lost") || !strcmp(why, "gateway_error");
		own_loss = own_loss || loss;
		if (!loss && !strcmp(str(e, "decision") ? str(e, "decision") : "", "deny"))
			SET("failed", "destination_denied");
	}
	if (json_integer_value(json_object_get(ov, "requests_denied")) > 0)
		SET("failed", "destination_denied");
	json_array_foreach(json_object_get(ag, "keys"), i, e)
	{
		if (!strcmp(str(e, "decision") ? str(e, "decision") : "", "allow") &&
		    ((json_is_object(approved) && !same_dest(approved, e)) ||
		     (policy && !in_policy(policy, e))))
			SET("failed", "unexpected_destination");
	}
	if (state && !strcmp(state, "crashed"))
		SET("failed", "gateway_crashed");
	if (!state || strcmp(state, "running"))
		SET("incomplete", "gateway_not_running");
	if (!is_true(gw, "evidence_complete") ||
	    !json_is_false(json_object_get(gw, "evidence_truncated")))
		SET("incomplete", "gateway_evidence_incomplete");
	/* aggregates that are not whole, or allowed requests whose
	 * destination only the overflow counted, prove nothing complete */
	if (ag && (!is_true(ag, "complete") || own_loss ||
		   json_integer_value(json_object_get(ov, "requests_allowed")) > 0))
		SET("incomplete", "gateway_evidence_incomplete");
	const json_t *cl = json_object_get(m, "cleanup_status");
	bool cleaned = is_true(cl, "overall_complete");
	for (size_t j = 0; j < AG_ARRAY_SIZE(cleanup_items); j++)
		cleaned = cleaned && cleanup_item_done(str(cl, cleanup_items[j]));
	if (!cleaned)
		SET("incomplete", "cleanup_incomplete");
	if (!is_true(json_object_get(m, "liveness_status"), "verified"))
		SET("incomplete", "liveness_unverified");
	json_array_foreach(events, i, e)
	{
		if (!is_true(e, "evidence_complete") ||
		    !json_is_false(json_object_get(e, "evidence_truncated")))
			SET("incomplete", "event_evidence_incomplete");
	}
	json_array_foreach(events, i, e)
	{
		if (event_contradictory(e, policy))
			SET("incomplete", "event_contradictory");
	}
	json_array_foreach(events, i, e)
	{
		const char *dec = str(e, "decision");
		if (!dec || (strcmp(dec, "allow") && strcmp(dec, "deny")))
			SET("incomplete", "decision_unknown");
	}
	json_array_foreach(events, i, e)
	{
		if (!strcmp(str(e, "decision"), "deny"))
			SET("failed", "destination_denied");
	}
	json_array_foreach(events, i, e)
	{
		const json_t *req = json_object_get(e, "requested");
		if ((json_is_object(approved) && !same_dest(approved, req)) ||
		    (policy && !in_policy(policy, req)))
			SET("failed", "unexpected_destination");
	}
	SET("complete", "complete");
#undef SET
}

/* ---- validation ---- */

struct vctx {
	struct ag_error **err;
	char path[160];
};

static int shape(const json_t *v, unsigned depth, struct vctx *x)
{
	struct ag_error **err = x->err;
	if (depth > AG_EGRESS_MANIFEST_MAX_DEPTH)
		return FAIL(AG_E_LIMIT, "egress.manifest.depth", x->path, "nests deeper than %d",
			    AG_EGRESS_MANIFEST_MAX_DEPTH);
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (json_object_size(v) > AG_EGRESS_MANIFEST_MAX_KEYS)
			return FAIL(AG_E_LIMIT, "egress.manifest.keys", x->path,
				    "object has more than %d keys", AG_EGRESS_MANIFEST_MAX_KEYS);
		const char *k;
		const json_t *c;
		size_t plen = strlen(x->path);
		json_object_foreach((json_t *)v, k, c)
		{
			size_t kl = strlen(k);
			if (kl == 0 || kl > AG_EGRESS_MANIFEST_MAX_STRING)
				return FAIL(AG_E_LIMIT, "egress.manifest.string", x->path,
					    "key is empty or longer than %d bytes",
					    AG_EGRESS_MANIFEST_MAX_STRING);
			if (ag_sanitize_finds(AG_SANITIZE_EGRESS, k, kl,
					      AG_EGRESS_MANIFEST_MAX_STRING))
				return FAIL(AG_E_CONFIG, "egress.manifest.query", x->path,
					    "key is not sanitized");
			snprintf(x->path + plen, sizeof(x->path) - plen, "%s%.40s", plen ? "." : "",
				 k);
			if (shape(c, depth + 1, x) < 0)
				return -1;
			x->path[plen] = '\0';
		}
		return 0;
	}
	case JSON_ARRAY: {
		if (json_array_size(v) > AG_EGRESS_MANIFEST_MAX_LIST)
			return FAIL(AG_E_LIMIT, "egress.manifest.list", x->path,
				    "list has more than %d items", AG_EGRESS_MANIFEST_MAX_LIST);
		size_t i, plen = strlen(x->path);
		const json_t *c;
		json_array_foreach(v, i, c)
		{
			snprintf(x->path + plen, sizeof(x->path) - plen, "[%zu]", i);
			if (shape(c, depth + 1, x) < 0)
				return -1;
			x->path[plen] = '\0';
		}
		return 0;
	}
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (n > AG_EGRESS_MANIFEST_MAX_STRING)
			return FAIL(AG_E_LIMIT, "egress.manifest.string", x->path,
				    "string is longer than %d bytes",
				    AG_EGRESS_MANIFEST_MAX_STRING);
		const char *k =
		    ag_sanitize_finds(AG_SANITIZE_EGRESS, s, n, AG_EGRESS_MANIFEST_MAX_STRING);
		if (k && strcmp(k, AG_PH_PATH) == 0)
			return FAIL(AG_E_CONFIG, "egress.manifest.private_path", x->path,
				    "a private host path reached the manifest");
		if (k)
			return FAIL(AG_E_CONFIG, "egress.manifest.query", x->path,
				    "a query string or fragment reached the manifest");
		return 0;
	}
	case JSON_INTEGER: {
		json_int_t n = json_integer_value(v);
		if (n > AG_EGRESS_EVENT_BYTES_MAX || n < -AG_EGRESS_EVENT_BYTES_MAX)
			return FAIL(AG_E_LIMIT, "egress.manifest.number", x->path,
				    "integer outside +-10^12");
		return 0;
	}
	case JSON_REAL:
		return FAIL(AG_E_CONFIG, "egress.manifest.number", x->path,
			    "fractional numbers are not used in a manifest");
	default:
		return 0;
	}
}

/* Field spec: key, kind; kinds check type and pattern. */
enum kind {
	K_HEX,
	K_ID,
	K_STR,
	K_STR0,
	K_STR_NULL,
	K_BOOL,
	K_INT,
	K_OBJ,
	K_OBJ_OPT,
	K_OBJ_NULL,
	K_LIST,
	K_LIST_OPT
};

static bool hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

struct field {
	const char *key;
	enum kind kind;
	const char *const *values; /* allowed strings, or NULL */
};

static bool in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return true;
	return false;
}

static int fields(const json_t *o, const char *where, const struct field *f, size_t n,
		  struct ag_error **err)
{
	char key[160];
	if (!json_is_object(o))
		return FAIL(AG_E_CONFIG, "egress.manifest.type", where, "must be an object");
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		bool known = false;
		for (size_t i = 0; i < n; i++)
			known = known || !strcmp(f[i].key, k);
		if (!known)
			return FAIL(AG_E_CONFIG, "egress.manifest.unknown_key", where,
				    "unknown key '%.40s'", k);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s%s%s", where, where[0] ? "." : "", f[i].key);
		v = json_object_get(o, f[i].key);
		if (!v && (f[i].kind == K_OBJ_OPT || f[i].kind == K_LIST_OPT))
			continue;
		if (!v)
			return FAIL(AG_E_CONFIG, "egress.manifest.missing", key, "is required");
		bool ok;
		const char *reason = "egress.manifest.type";
		switch (f[i].kind) {
		case K_HEX:
			ok = hex64(json_string_value(v));
			reason = "egress.manifest.hash";
			break;
		case K_ID:
			ok = ag_egress_id_valid(json_string_value(v));
			reason = "egress.manifest.id";
			break;
		case K_STR:
			ok = json_is_string(v) && json_string_length(v) > 0;
			break;
		case K_STR0:
			ok = json_is_string(v);
			break;
		case K_STR_NULL:
			ok = json_is_null(v) || (json_is_string(v) && json_string_length(v) > 0);
			break;
		case K_BOOL:
			ok = json_is_boolean(v);
			break;
		case K_INT:
			ok = json_is_integer(v) && json_integer_value(v) >= 0;
			break;
		case K_OBJ:
		case K_OBJ_OPT:
			ok = json_is_object(v);
			break;
		case K_OBJ_NULL:
			ok = json_is_object(v) || json_is_null(v);
			break;
		case K_LIST:
		case K_LIST_OPT:
			ok = json_is_array(v);
			break;
		default:
			ok = false;
		}
		if (ok && f[i].values && json_is_string(v) &&
		    !in_list(json_string_value(v), f[i].values)) {
			ok = false;
			reason = "egress.manifest.status";
		}
		if (!ok)
			return FAIL(AG_E_CONFIG, reason, key, "has the wrong type or value");
	}
	return 0;
}

static const char *const gw_states[] = {"running",     "exited",  "crashed",
					"not_started", "unknown", NULL};
static const char *const cleanup_states[] = {"removed", "already_absent", "not_created",
					     "incomplete", NULL};
static const char *const completion_states[] = {"complete", "incomplete", "failed", NULL};
static const char *const event_types[] = {"request", "redirect", "new_destination", "blocked_route",
					  NULL};

static int host_port(const json_t *o, const char *where, bool nullable, struct ag_error **err)
{
	/* exactly {host, port} */
	if (!json_is_object(o) || json_object_size(o) != 2 || !json_object_get(o, "host") ||
	    !json_object_get(o, "port"))
		return FAIL(AG_E_CONFIG, "egress.manifest.event", where, "must be {host, port}");
	const json_t *h = json_object_get(o, "host"), *p = json_object_get(o, "port");
	if (json_is_null(h) && json_is_null(p) && nullable)
		return 0;
	struct ag_egress_target t;
	const char *why = NULL;
	if (!json_is_string(h) ||
	    ag_egress_host_normalize(json_string_value(h), json_string_length(h), &t, &why) < 0 ||
	    strcmp(t.host, json_string_value(h)) || !json_is_integer(p) ||
	    json_integer_value(p) < 1 || json_integer_value(p) > 65535)
		return FAIL(AG_E_CONFIG, "egress.manifest.event", where,
			    "must name a normalised host and a port 1..65535");
	return 0;
}

/* ^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$ */
static bool timestamp_ok(const char *s)
{
	static const char tmpl[] = "dddd-dd-ddTdd:dd:dd";
	if (!s || strlen(s) < sizeof(tmpl))
		return false;
	for (size_t i = 0; i + 1 < sizeof(tmpl); i++)
		if (tmpl[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != tmpl[i])
			return false;
	const char *p = s + sizeof(tmpl) - 1;
	if (*p == '.') {
		size_t d = 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			d++;
		if (d < 1 || d > 9)
			return false;
	}
	return p[0] == 'Z' && p[1] == '\0';
}

static int check_event(const json_t *e, size_t idx, struct ag_error **err)
{
	char w[64], k[96];
	snprintf(w, sizeof(w), "events[%zu]", idx);
	static const struct field f[] = {
	    {"event_type", K_STR, event_types},
	    {"protocol", K_STR, NULL},
	    {"route", K_STR_NULL, NULL},
	    {"requested", K_OBJ, NULL},
	    {"effective", K_OBJ, NULL},
	    {"url", K_STR_NULL, NULL},
	    {"resolved_addresses", K_LIST, NULL},
	    {"resolution_status", K_STR, NULL},
	    {"decision", K_STR, NULL},
	    {"reason", K_STR, NULL},
	    {"bytes", K_OBJ, NULL},
	    {"timestamps", K_OBJ, NULL},
	    {"evidence_complete", K_BOOL, NULL},
	    {"evidence_truncated", K_BOOL, NULL},
	    {"tls", K_OBJ_OPT, NULL},
	};
	if (fields(e, w, f, AG_ARRAY_SIZE(f), err) < 0)
		return -1;
	const json_t *tls = json_object_get(e, "tls");
	if (tls) {
		static const char *const modes[] = {"terminated", "spliced", "not_established",
						    NULL};
		static const struct field tf[] = {{"mode", K_STR, modes},
						  {"injected_header", K_STR_NULL, NULL}};
		snprintf(k, sizeof(k), "%s.tls", w);
		if (fields(tls, k, tf, AG_ARRAY_SIZE(tf), err) < 0)
			return -1;
	}
	snprintf(k, sizeof(k), "%s.reason", w);
	if (!ag_egress_event_reason_known(str(e, "reason")))
		return FAIL(AG_E_CONFIG, "egress.manifest.status", k,
			    "is not a decision or gateway refusal reason");
	snprintf(k, sizeof(k), "%s.requested", w);
	if (host_port(json_object_get(e, "requested"), k, true, err) < 0)
		return -1;
	snprintf(k, sizeof(k), "%s.effective", w);
	if (host_port(json_object_get(e, "effective"), k, true, err) < 0)
		return -1;
	const json_t *addrs = json_object_get(e, "resolved_addresses");
	snprintf(k, sizeof(k), "%s.resolved_addresses", w);
	if (json_array_size(addrs) > AG_EGRESS_RESOLVED_MAX)
		return FAIL(AG_E_LIMIT, "egress.manifest.event", k, "more than %d addresses",
			    AG_EGRESS_RESOLVED_MAX);
	size_t i;
	const json_t *a;
	json_array_foreach(addrs, i, a)
	{
		struct ag_egress_addr x;
		if (ag_egress_addr_parse(json_string_value(a), &x) < 0)
			return FAIL(AG_E_CONFIG, "egress.manifest.event", k,
				    "item %zu is not an address", i);
	}
	static const struct field bytes[] = {{"in", K_INT, NULL}, {"out", K_INT, NULL}};
	static const struct field ts[] = {{"start", K_STR, NULL}, {"end", K_STR, NULL}};
	snprintf(k, sizeof(k), "%s.bytes", w);
	if (fields(json_object_get(e, "bytes"), k, bytes, 2, err) < 0)
		return -1;
	snprintf(k, sizeof(k), "%s.timestamps", w);
	if (fields(json_object_get(e, "timestamps"), k, ts, 2, err) < 0)
		return -1;
	const json_t *t = json_object_get(e, "timestamps");
	if (!timestamp_ok(str(t, "start")) || !timestamp_ok(str(t, "end")))
		return FAIL(AG_E_CONFIG, "egress.manifest.event", k,
			    "timestamps must be RFC 3339 UTC (YYYY-MM-DDTHH:MM:SS[.f]Z)");
	return 0;
}

static const char *const decisions[] = {"allow", "deny", NULL};

/* The gateway's aggregates (manifest.h): every key whole and counted. */
static int check_aggregates(const json_t *a, struct ag_error **err)
{
	static const struct field top[] = {{"keys", K_LIST, NULL},
					   {"overflow", K_OBJ, NULL},
					   {"complete", K_BOOL, NULL},
					   {"sampled_out", K_INT, NULL}};
	static const struct field key[] = {
	    {"decision", K_STR, decisions}, {"host", K_STR0, NULL},    {"port", K_INT, NULL},
	    {"reason", K_STR, NULL},	    {"requests", K_INT, NULL}, {"bytes_in", K_INT, NULL},
	    {"bytes_out", K_INT, NULL}};
	static const struct field ov[] = {{"requests_allowed", K_INT, NULL},
					  {"requests_denied", K_INT, NULL},
					  {"bytes_in", K_INT, NULL},
					  {"bytes_out", K_INT, NULL}};
	if (fields(a, "aggregates", top, AG_ARRAY_SIZE(top), err) < 0 ||
	    fields(json_object_get(a, "overflow"), "aggregates.overflow", ov, AG_ARRAY_SIZE(ov),
		   err) < 0)
		return -1;
	const json_t *keys = json_object_get(a, "keys");
	if (json_array_size(keys) > AG_GW_AGG_KEYS_MAX)
		return FAIL(AG_E_LIMIT, "egress.manifest.list", "aggregates.keys",
			    "more than %d keys", AG_GW_AGG_KEYS_MAX);
	size_t i;
	const json_t *k;
	json_array_foreach(keys, i, k)
	{
		char where[64];
		snprintf(where, sizeof(where), "aggregates.keys[%zu]", i);
		if (fields(k, where, key, AG_ARRAY_SIZE(key), err) < 0)
			return -1;
		if (json_integer_value(json_object_get(k, "port")) > 65535 ||
		    json_integer_value(json_object_get(k, "requests")) < 1 ||
		    !ag_egress_event_reason_known(str(k, "reason")) ||
		    !strcmp(str(k, "decision"), "allow") !=
			!strcmp(str(k, "reason"), "approved_destination"))
			return FAIL(AG_E_CONFIG, "egress.manifest.event", where,
				    "a port above 65535, no request, a reason outside the "
				    "vocabulary, or an allow not approved (a deny approved)");
	}
	return 0;
}

/* Credential injection (manifest.h): the terminated list and every
 * event's "tls", against the policy when there is one. */
static int check_tls(const json_t *m, const struct ag_egress_policy *policy, struct ag_error **err)
{
	const json_t *list = json_object_get(m, "tls_terminated");
	size_t i;
	const json_t *t;
	json_array_foreach(list, i, t)
	{
		static const struct field f[] = {
		    {"host", K_STR, NULL}, {"port", K_INT, NULL}, {"header", K_STR, NULL}};
		char w[64];
		snprintf(w, sizeof(w), "tls_terminated[%zu]", i);
		if (fields(t, w, f, AG_ARRAY_SIZE(f), err) < 0)
			return -1;
	}
	if (json_array_size(list) > AG_EGRESS_INJECT_MAX)
		return FAIL(AG_E_LIMIT, "egress.manifest.tls", "tls_terminated",
			    "more than %d terminated destinations", AG_EGRESS_INJECT_MAX);
	if (!policy)
		return 0;
	if (json_array_size(list) != policy->n_inject)
		return FAIL(AG_E_CONFIG, "egress.manifest.tls", "tls_terminated",
			    "must list exactly the policy's inject rules");
	json_array_foreach(list, i, t)
	{
		const struct ag_egress_rule *r = ag_egress_policy_find(
		    policy, str(t, "host"), (int)json_integer_value(json_object_get(t, "port")));
		char h[AG_EGRESS_INJECT_HEADER_MAX + 1];
		if (r && r->inject)
			ag_egress_header_lower(r->inject->header, h);
		if (!r || !r->inject || strcmp(h, str(t, "header")) != 0)
			return FAIL(AG_E_CONFIG, "egress.manifest.tls", "tls_terminated",
				    "item %zu is not one of the policy's inject rules", i);
	}
	const json_t *e;
	json_array_foreach(json_object_get(m, "events"), i, e)
	{
		const json_t *req = json_object_get(e, "requested");
		const json_t *tls = json_object_get(e, "tls");
		const char *host = str(req, "host");
		const struct ag_egress_rule *r =
		    host ? ag_egress_policy_find(
			       policy, host, (int)json_integer_value(json_object_get(req, "port")))
			 : NULL;
		bool inject = r && r->inject;
		const char *mode = str(tls, "mode");
		const char *hdr = str(tls, "injected_header");
		char want[AG_EGRESS_INJECT_HEADER_MAX + 1] = "";
		if (inject)
			ag_egress_header_lower(r->inject->header, want);
		bool allowed_connect =
		    !strcmp(str(e, "decision"), "allow") && !strcmp(str(e, "protocol"), "connect");
		const char *why = NULL;
		if (allowed_connect && !mode && policy->n_inject > 0)
			why = "is an allowed CONNECT without its \"tls\" (the policy injects)";
		else if (mode && !strcmp(mode, "terminated") && !inject)
			why = "was terminated, but its destination has no inject rule";
		else if (hdr && (!inject || strcmp(hdr, want) != 0))
			why = "names an injected header the policy does not give its destination";
		else if (hdr && strcmp(mode, "terminated") != 0)
			why = "names an injected header on a tunnel that was not terminated";
		else if (inject && mode && !strcmp(mode, "spliced"))
			why = "spliced an inject rule's destination";
		if (why) {
			char w[64];
			snprintf(w, sizeof(w), "events[%zu].tls", i);
			return FAIL(AG_E_CONFIG, "egress.manifest.tls", w, "%s", why);
		}
	}
	return 0;
}

static int check_fields(const json_t *m, const struct ag_egress_policy *policy,
			struct ag_error **err)
{
	static const struct field top[] = {
	    {"schema", K_STR, NULL},
	    {"schema_version", K_INT, NULL},
	    {"plan_digest", K_HEX, NULL},
	    {"profile_hash", K_HEX, NULL},
	    {"fixture_hash", K_HEX, NULL},
	    {"trial_id", K_ID, NULL},
	    {"authorization_id", K_ID, NULL},
	    {"egress_policy_digest", K_HEX, NULL},
	    {"approved_destination", K_OBJ_NULL, NULL},
	    {"gateway_image_identity", K_OBJ_NULL, NULL},
	    {"events", K_LIST, NULL},
	    {"gateway_status", K_OBJ, NULL},
	    {"cleanup_status", K_OBJ, NULL},
	    {"liveness_status", K_OBJ, NULL},
	    {"completion", K_OBJ, NULL},
	    {"aggregates", K_OBJ_OPT, NULL},
	    {"tls_terminated", K_LIST_OPT, NULL},
	};
	if (fields(m, "", top, AG_ARRAY_SIZE(top), err) < 0)
		return -1;
	const json_t *ag = json_object_get(m, "aggregates");
	if (ag && check_aggregates(ag, err) < 0)
		return -1;
	if (strcmp(str(m, "schema"), AG_EGRESS_MANIFEST_SCHEMA))
		return FAIL(AG_E_CONFIG, "egress.manifest.schema", "schema",
			    "schema must be \"" AG_EGRESS_MANIFEST_SCHEMA "\"");
	if (json_integer_value(json_object_get(m, "schema_version")) != 1)
		return FAIL(AG_E_CONFIG, "egress.manifest.version", "schema_version",
			    "schema_version must be 1");
	const json_t *ad = json_object_get(m, "approved_destination");
	if (json_is_object(ad) && host_port(ad, "approved_destination", false, err) < 0)
		return -1;
	const json_t *id = json_object_get(m, "gateway_image_identity");
	if (json_is_object(id)) {
		static const struct field f[] = {
		    {"configured_reference", K_STR, NULL},
		    {"registry_digest", K_STR_NULL, NULL},
		    {"local_image_id", K_STR_NULL, NULL},
		    {"container_bound_image_id", K_STR_NULL, NULL},
		    {"platform", K_STR_NULL, NULL},
		    {"pull_policy", K_STR, NULL},
		    {"cache_status", K_STR, NULL},
		};
		if (fields(id, "gateway_image_identity", f, AG_ARRAY_SIZE(f), err) < 0)
			return -1;
		const char *rd = str(id, "registry_digest");
		const char *ids[] = {str(id, "local_image_id"),
				     str(id, "container_bound_image_id")};
		const char *at = rd ? strstr(rd, "@sha256:") : NULL;
		if (rd && (!at || !hex64(at + 8)))
			return FAIL(AG_E_CONFIG, "egress.manifest.identity",
				    "gateway_image_identity.registry_digest",
				    "must be REPOSITORY@sha256:<64 hex>");
		for (size_t i = 0; i < 2; i++)
			if (ids[i] && (strncmp(ids[i], "sha256:", 7) || !hex64(ids[i] + 7)))
				return FAIL(AG_E_CONFIG, "egress.manifest.identity",
					    "gateway_image_identity",
					    "image ids must be sha256:<64 hex>");
	}
	static const struct field gw[] = {{"state", K_STR, gw_states},
					  {"evidence_complete", K_BOOL, NULL},
					  {"evidence_truncated", K_BOOL, NULL}};
	if (fields(json_object_get(m, "gateway_status"), "gateway_status", gw, 3, err) < 0)
		return -1;
	static const struct field cl[] = {{"agent", K_STR, cleanup_states},
					  {"gateway", K_STR, cleanup_states},
					  {"internal_network", K_STR, cleanup_states},
					  {"outbound_network", K_STR, cleanup_states},
					  {"overall_complete", K_BOOL, NULL}};
	if (fields(json_object_get(m, "cleanup_status"), "cleanup_status", cl, 5, err) < 0)
		return -1;
	static const struct field lv[] = {{"verified", K_BOOL, NULL}};
	if (fields(json_object_get(m, "liveness_status"), "liveness_status", lv, 1, err) < 0)
		return -1;
	static const struct field co[] = {{"status", K_STR, completion_states},
					  {"reason", K_STR, NULL},
					  {"success_eligible", K_BOOL, NULL}};
	if (fields(json_object_get(m, "completion"), "completion", co, 3, err) < 0)
		return -1;
	const json_t *events = json_object_get(m, "events");
	if (json_array_size(events) > AG_EGRESS_MANIFEST_MAX_EVENTS)
		return FAIL(AG_E_LIMIT, "egress.manifest.list", "events", "more than %d events",
			    AG_EGRESS_MANIFEST_MAX_EVENTS);
	size_t i;
	const json_t *e;
	json_array_foreach(events, i, e)
	{
		if (check_event(e, i, err) < 0)
			return -1;
	}
	if (check_tls(m, policy, err) < 0)
		return -1;
	if (policy) {
		if (strcmp(str(m, "egress_policy_digest"), policy->digest))
			return FAIL(AG_E_CONFIG, "egress.manifest.policy_digest",
				    "egress_policy_digest", "does not match the policy's digest");
		bool single = policy->n_rules == 1;
		if (single != json_is_object(ad) ||
		    (single && (strcmp(str(ad, "host"), policy->rules[0].dest.host) ||
				json_integer_value(json_object_get(ad, "port")) !=
				    policy->rules[0].dest.port)))
			return FAIL(AG_E_CONFIG, "egress.manifest.approved_destination",
				    "approved_destination",
				    "must be the policy's single rule (null for other policies)");
	}
	return 0;
}

int ag_egress_manifest_validate(const char *data, size_t len, const struct ag_egress_policy *policy,
				struct ag_egress_completion *c, struct ag_error **err)
{
	*c = (struct ag_egress_completion){"incomplete", "events_missing", false};
	if (len > AG_EGRESS_MANIFEST_MAX_BYTES)
		return FAIL(AG_E_LIMIT, "egress.manifest.size", "",
			    "manifest is larger than %d bytes", AG_EGRESS_MANIFEST_MAX_BYTES);
	json_error_t je;
	json_t *m = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return ag_err_at(err, AG_E_CONFIG, "egress.manifest.json", NULL, (unsigned)je.line,
				 (unsigned)je.column, "",
				 "manifest is not valid JSON (or repeats a key)");
	struct vctx x = {.err = err};
	int rc = shape(m, 1, &x);
	if (rc == 0)
		rc = check_fields(m, policy, err);
	if (rc == 0) {
		ag_egress_manifest_completion(m, policy, c);
		const json_t *st = json_object_get(m, "completion");
		if (strcmp(str(st, "status"), c->status) || strcmp(str(st, "reason"), c->reason) ||
		    json_is_true(json_object_get(st, "success_eligible")) != c->success_eligible)
			rc = FAIL(AG_E_CONFIG, "egress.manifest.completion_mismatch", "completion",
				  "states '%s' but its contents give '%s' (%s)", str(st, "status"),
				  c->status, c->reason);
	}
	json_decref(m);
	return rc;
}

/* ---- building ---- */

static json_t *dest_json(const char *host, int64_t port)
{
	json_t *o = json_object();
	json_object_set_new(o, "host", host && host[0] ? json_string(host) : json_null());
	json_object_set_new(o, "port", port > 0 ? json_integer(port) : json_null());
	return o;
}

static int64_t clamp_bytes(int64_t v)
{
	return v < 0 ? 0 : v > AG_EGRESS_EVENT_BYTES_MAX ? AG_EGRESS_EVENT_BYTES_MAX : v;
}

/* A record's string field: sanitized, never empty (empty -> "unknown"). */
static json_t *field_string(const char *s)
{
	return clean_string(s && s[0] ? s : "unknown");
}

/* {host, port}, both null unless the host normalises and the port is valid. */
static json_t *checked_dest(const char *host, int64_t port)
{
	struct ag_egress_target t;
	const char *why = NULL;
	bool ok =
	    host && port >= 1 && port <= 65535 &&
	    ag_egress_host_normalize(host, strnlen(host, AG_EGRESS_HOST_MAX + 1), &t, &why) == 0;
	return dest_json(ok ? t.host : NULL, ok ? port : 0);
}

json_t *ag_egress_event_record(const struct ag_egress_event *ev, const struct ag_egress_decision *d,
			       const struct ag_egress_event_meta *meta)
{
	/* Whatever the gateway hands over, the record validates; what it
	 * could not state properly marks the record's evidence incomplete. */
	bool complete = meta->evidence_complete;
	json_t *o = json_object();
	const char *type = meta->event_type ? meta->event_type : "";
	if (!in_list(type, event_types)) {
		type = "request";
		complete = false;
	}
	json_object_set_new(o, "event_type", json_string(type));
	json_object_set_new(o, "protocol", field_string(ev->protocol));
	json_object_set_new(
	    o, "route", meta->route && meta->route[0] ? clean_string(meta->route) : json_null());
	json_object_set_new(o, "requested", checked_dest(d->host, d->port));
	/* The effective destination equals the decision's unless the event
	 * stated another one (then the decision was a deny). */
	json_object_set_new(o, "effective",
			    ev->effective_host || ev->effective_port
				? checked_dest(ev->effective_host, ev->effective_port)
				: checked_dest(d->host, d->port));
	char *url = NULL;
	if (ev->url) {
		struct ag_egress_target t;
		bool https;
		const char *why = NULL;
		if (ag_egress_url_parse(ev->url, strnlen(ev->url, AG_EGRESS_AUTHORITY_MAX + 1), &t,
					&https, &url, &why) < 0)
			url = NULL;
	}
	json_object_set_new(o, "url", url ? clean_string(url) : json_null());
	free(url);
	json_t *addrs = json_array();
	size_t want =
	    ev->n_resolved > AG_EGRESS_RESOLVED_MAX ? AG_EGRESS_RESOLVED_MAX : ev->n_resolved;
	for (size_t i = 0; i < want; i++) {
		struct ag_egress_addr a;
		char text[AG_EGRESS_ADDR_TEXT_MAX];
		if (ev->resolved && ag_egress_addr_parse(ev->resolved[i], &a) == 0) {
			ag_egress_addr_format(&a, text);
			json_array_append_new(addrs, json_string(text));
		}
	}
	bool truncated = meta->evidence_truncated || ev->n_resolved > AG_EGRESS_RESOLVED_MAX ||
			 json_array_size(addrs) != want;
	json_object_set_new(o, "resolved_addresses", addrs);
	json_object_set_new(o, "resolution_status", field_string(ev->resolution_status));
	json_object_set_new(o, "decision", json_string(d->allow ? "allow" : "deny"));
	json_object_set_new(o, "reason", json_string(d->reason ? d->reason : "unknown"));
	json_t *b = json_object();
	json_object_set_new(b, "in", json_integer(clamp_bytes(meta->bytes_in)));
	json_object_set_new(b, "out", json_integer(clamp_bytes(meta->bytes_out)));
	json_object_set_new(o, "bytes", b);
	if (!timestamp_ok(meta->started) || !timestamp_ok(meta->ended))
		complete = false;
	json_t *t = json_object();
	json_object_set_new(
	    t, "start",
	    json_string(timestamp_ok(meta->started) ? meta->started : "1970-01-01T00:00:00Z"));
	json_object_set_new(
	    t, "end",
	    json_string(timestamp_ok(meta->ended) ? meta->ended : "1970-01-01T00:00:00Z"));
	json_object_set_new(o, "timestamps", t);
	json_object_set_new(o, "evidence_complete", json_boolean(complete));
	json_object_set_new(o, "evidence_truncated", json_boolean(truncated));
	if (meta->tls_mode)
		json_object_set_new(o, "tls",
				    json_pack("{s:s, s:s?}", "mode", meta->tls_mode,
					      "injected_header", meta->injected_header));
	return o;
}

/* Sanitizes every string value of v in place (keys are the schema's own). */
static void sanitize_tree(json_t *v, unsigned depth)
{
	if (depth > AG_EGRESS_MANIFEST_MAX_DEPTH)
		return; /* the validator refuses the depth */
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach(v, k, c)
		{
			if (json_is_string(c))
				json_object_set_new(v, k, clean_string(json_string_value(c)));
			else
				sanitize_tree(c, depth + 1);
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *c = json_array_get(v, i);
			if (json_is_string(c))
				json_array_set_new(v, i, clean_string(json_string_value(c)));
			else
				sanitize_tree(c, depth + 1);
		}
	}
}

int ag_egress_manifest_build(const struct ag_egress_manifest_inputs *in, json_t **out,
			     struct ag_error **err)
{
	json_t *m = json_object();
	json_object_set_new(m, "schema", json_string(AG_EGRESS_MANIFEST_SCHEMA));
	json_object_set_new(m, "schema_version", json_integer(1));
	json_object_set_new(m, "plan_digest", clean_string(in->plan_digest));
	json_object_set_new(m, "profile_hash", clean_string(in->profile_hash));
	json_object_set_new(m, "fixture_hash", clean_string(in->fixture_hash));
	json_object_set_new(m, "trial_id", clean_string(in->trial_id));
	json_object_set_new(m, "authorization_id", clean_string(in->authorization_id));
	json_object_set_new(m, "egress_policy_digest", json_string(in->policy->digest));
	json_object_set_new(m, "approved_destination",
			    in->policy->n_rules == 1 ? dest_json(in->policy->rules[0].dest.host,
								 in->policy->rules[0].dest.port)
						     : json_null());
	json_t *id =
	    in->gateway_image_identity ? json_deep_copy(in->gateway_image_identity) : json_null();
	sanitize_tree(id, 2);
	json_object_set_new(m, "gateway_image_identity", id);
	json_t *events = json_array();
	size_t n = json_array_size(in->events);
	/* With the gateway's aggregates every request is counted there: the
	 * events are a sample, and one left out is counted, not a truncation. */
	json_t *ag = NULL;
	if (json_is_object(in->aggregates)) {
		ag = json_deep_copy(in->aggregates);
		sanitize_tree(ag, 2);
		int64_t left = n > AG_EGRESS_MANIFEST_MAX_EVENTS
				   ? (int64_t)(n - AG_EGRESS_MANIFEST_MAX_EVENTS)
				   : 0;
		json_object_set_new(ag, "sampled_out", json_integer(in->sampled_out + left));
		json_object_set_new(m, "aggregates", ag);
	}
	bool truncated = (!ag && n > AG_EGRESS_MANIFEST_MAX_EVENTS) || !json_is_array(in->events);
	for (size_t i = 0; i < n && i < AG_EGRESS_MANIFEST_MAX_EVENTS; i++) {
		json_t *e = json_deep_copy(json_array_get(in->events, i));
		sanitize_tree(e, 2);
		/* A reason outside the closed vocabulary (request.h) is not
		 * evidence of anything: the event says "unknown" and is marked
		 * incomplete, so the trial cannot be complete on it. */
		const json_t *why = json_object_get(e, "reason");
		if (json_is_string(why) && !ag_egress_event_reason_known(json_string_value(why))) {
			json_object_set_new(e, "reason", json_string("unknown"));
			json_object_set_new(e, "evidence_complete", json_false());
		}
		json_array_append_new(events, e);
	}
	json_object_set_new(m, "events", events);
	/* where the gateway terminated TLS, and with which header */
	if (in->policy->n_inject > 0)
		json_object_set_new(m, "tls_terminated",
				    ag_egress_policy_terminated_json(in->policy));
	json_t *gw = json_object();
	json_object_set_new(gw, "state",
			    json_string(in->gateway_state ? in->gateway_state : "unknown"));
	json_object_set_new(gw, "evidence_complete", json_boolean(in->gateway_evidence_complete));
	json_object_set_new(gw, "evidence_truncated",
			    json_boolean(in->gateway_evidence_truncated || truncated));
	json_object_set_new(m, "gateway_status", gw);
	json_t *cl = json_object();
	const char *items[] = {in->cleanup_agent, in->cleanup_gateway, in->cleanup_internal_network,
			       in->cleanup_outbound_network};
	bool all = true;
	for (size_t i = 0; i < AG_ARRAY_SIZE(items); i++) {
		const char *s = items[i] ? items[i] : "incomplete";
		all = all && cleanup_item_done(s);
		json_object_set_new(cl, cleanup_items[i], json_string(s));
	}
	json_object_set_new(cl, "overall_complete", json_boolean(all));
	json_object_set_new(m, "cleanup_status", cl);
	json_t *lv = json_object();
	json_object_set_new(lv, "verified", json_boolean(in->liveness_verified));
	json_object_set_new(m, "liveness_status", lv);
	/* Fit the serialized bound: drop events from the end, marking the
	 * gateway evidence truncated (so the trial can never be complete). */
	char *text = NULL;
	size_t len = 0;
	for (;;) {
		struct ag_egress_completion c;
		ag_egress_manifest_completion(m, in->policy, &c);
		json_t *co = json_object();
		json_object_set_new(co, "status", json_string(c.status));
		json_object_set_new(co, "reason", json_string(c.reason));
		json_object_set_new(co, "success_eligible", json_boolean(c.success_eligible));
		json_object_set_new(m, "completion", co);
		struct ag_error *e = NULL;
		if (ag_egress_manifest_dump(m, &text, &len, &e) == 0)
			break;
		bool too_big = !strcmp(e->reason, "evidence.size") && json_array_size(events) > 0;
		if (!too_big) {
			*err = e;
			json_decref(m);
			return -1;
		}
		ag_error_free(e);
		json_array_remove(events, json_array_size(events) - 1);
		if (ag)
			json_object_set_new(
			    ag, "sampled_out",
			    json_integer(json_integer_value(json_object_get(ag, "sampled_out")) +
					 1));
		else
			json_object_set_new(gw, "evidence_truncated", json_true());
	}
	/* What we build must pass our own validator. */
	struct ag_egress_completion again;
	if (ag_egress_manifest_validate(text, len, in->policy, &again, err) < 0) {
		free(text);
		json_decref(m);
		return -1;
	}
	free(text);
	*out = m;
	return 0;
}

static const struct ag_canon_bounds manifest_bounds = {
    AG_EGRESS_MANIFEST_MAX_DEPTH, AG_EGRESS_MANIFEST_MAX_LIST, AG_EGRESS_MANIFEST_MAX_STRING,
    AG_EGRESS_EVENT_BYTES_MAX, AG_EGRESS_MANIFEST_MAX_BYTES};

int ag_egress_manifest_dump(const json_t *m, char **out, size_t *len, struct ag_error **err)
{
	if (ag_canon_dump(m, &manifest_bounds, out, len, err) < 0)
		return ag_err_wrap(err, "egress manifest");
	return 0;
}

/* The run's copy of the policy the gateway enforced (study.c writes it). */
#define AG_EGRESS_POLICY_PATH "egress/policy.json"

/* The gateway's files the artifact seals by hash and length
 * (study_egress.gateway_stream / gateway_aggregates): each as recorded. */
static int check_gateway_files(int run_fd, const json_t *st, struct ag_error **err)
{
	static const struct ag_read_reasons why = {
	    "evidence.egress_stream.symlink", "evidence.egress_stream.not_regular",
	    "evidence.egress_stream.missing", "evidence.egress_stream.too_large"};
	static const char *const keys[] = {"gateway_stream", "gateway_aggregates"};
	static const char *const files[] = {"egress/events.jsonl", "egress/aggregates.jsonl"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(keys); i++) {
		const json_t *f = json_object_get(st, keys[i]);
		if (!json_is_object(f))
			continue; /* not read (the artifact says so) */
		const char *file = json_string_value(json_object_get(f, "file"));
		const char *want = json_string_value(json_object_get(f, "sha256"));
		const json_t *bytes = json_object_get(f, "bytes");
		char *data = NULL;
		size_t n = 0;
		if (!file || !want || !json_is_integer(bytes) || strcmp(file, files[i]))
			return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.egress_stream.mismatch",
				      "the artifact's record of the gateway's %s is malformed",
				      keys[i]);
		if (ag_read_file_at(run_fd, file, file, AG_GW_EVENTS_MAX_BYTES + 1, &why, &data, &n,
				    err) < 0)
			return -1;
		char hex[AG_SHA256_HEX_LEN + 1];
		ag_sha256_hex(data, n, hex);
		free(data);
		if (strcmp(hex, want) != 0 || (json_int_t)n != json_integer_value(bytes))
			return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.egress_stream.mismatch",
				      "the gateway's %s is not the one the sealed artifact records",
				      keys[i]);
	}
	return 0;
}

int ag_egress_manifest_check_run(int run_fd, const json_t *artifact, struct ag_error **err)
{
	static const struct ag_read_reasons why = {
	    "evidence.egress_manifest.symlink", "evidence.egress_manifest.not_regular",
	    "evidence.egress_manifest.missing", "evidence.egress_manifest.too_large"};
	const json_t *st = json_object_get(artifact, "study_egress");
	const char *file = json_string_value(json_object_get(st, "manifest"));
	const char *want = json_string_value(json_object_get(st, "manifest_sha256"));
	if (st && check_gateway_files(run_fd, st, err) < 0)
		return -1;
	if (!st || (!file && !want))
		return 0; /* not a study run, or no manifest was written (the artifact says so) */
	if (!file || !want || strcmp(file, AG_EGRESS_MANIFEST_FILE) != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.egress_manifest.mismatch",
			      "the artifact's egress manifest record is incomplete");
	char *data = NULL;
	size_t n = 0;
	if (ag_read_file_at(run_fd, AG_EGRESS_MANIFEST_FILE, AG_EGRESS_MANIFEST_FILE,
			    AG_EGRESS_MANIFEST_MAX_BYTES + 1, &why, &data, &n, err) < 0)
		return -1;
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(data, n, hex);
	struct ag_egress_completion c;
	int rc = 0;
	/* The run's own copy of the policy: the manifest is judged against it
	 * (its digest must be the manifest's, every injection claim the
	 * policy's); a study run without it does not verify. */
	struct ag_egress_policy *policy = NULL;
	if (strcmp(hex, want) == 0) {
		static const struct ag_read_reasons pwhy = {
		    "evidence.egress_policy.symlink", "evidence.egress_policy.not_regular",
		    "evidence.egress_policy.missing", "evidence.egress_policy.too_large"};
		char *pd = NULL;
		size_t pn = 0;
		if (ag_read_file_at(run_fd, AG_EGRESS_POLICY_PATH, AG_EGRESS_POLICY_PATH,
				    AG_EGRESS_POLICY_MAX_BYTES, &pwhy, &pd, &pn, err) < 0 ||
		    ag_egress_policy_parse(pd, pn, &policy, err) < 0) {
			free(pd);
			free(data);
			return -1;
		}
		free(pd);
	}
	if (strcmp(hex, want) != 0)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.egress_manifest.mismatch",
			    "the egress manifest is not the one the sealed artifact records");
	else if (n < 1 || data[n - 1] != '\n' ||
		 ag_egress_manifest_validate(data, n - 1, policy, &c, err) < 0)
		rc = *err ? -1
			  : ag_err(err, AG_E_UNVERIFIED, 0, "evidence.egress_manifest.invalid",
				   "the egress manifest does not validate");
	ag_egress_policy_free(policy);
	free(data);
	return rc;
}
