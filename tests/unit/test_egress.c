/*
 * study-egress library (src/lib/egress): the address table at its range
 * edges (hand-written expectations, independent of the corpus generator),
 * the per-event decision API as a gateway calls it, sanitizing, manifest
 * building (complete, failed, truncated) and the typed plan's invariants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/base/sha256.h"
#include "lib/config/config.h"
#include "lib/egress/decision.h"
#include "lib/egress/manifest.h"
#include "lib/base/json.h"
#include "lib/egress/plan.h"
#include "lib/egress/policy.h"

static void test_classify_edges(void **state)
{
	(void)state;
	static const struct {
		const char *a, *cls;
	} t[] = {
	    {"0.0.0.0", "unspecified"},
	    {"0.0.0.1", "reserved"},
	    {"0.255.255.255", "reserved"},
	    {"1.0.0.0", "global"},
	    {"9.255.255.255", "global"},
	    {"10.0.0.0", "private"},
	    {"10.255.255.255", "private"},
	    {"11.0.0.0", "global"},
	    {"100.63.255.255", "global"},
	    {"100.64.0.0", "cgnat"},
	    {"100.100.100.199", "cgnat"},
	    {"100.100.100.200", "metadata"},
	    {"100.100.100.201", "cgnat"},
	    {"100.127.255.255", "cgnat"},
	    {"100.128.0.0", "global"},
	    {"126.255.255.255", "global"},
	    {"127.0.0.0", "loopback"},
	    {"127.255.255.255", "loopback"},
	    {"128.0.0.0", "global"},
	    {"169.253.255.255", "global"},
	    {"169.254.0.0", "link-local"},
	    {"169.254.169.253", "link-local"},
	    {"169.254.169.254", "metadata"},
	    {"169.254.169.255", "link-local"},
	    {"169.254.170.2", "metadata"},
	    {"169.254.255.255", "link-local"},
	    {"169.255.0.0", "global"},
	    {"172.15.255.255", "global"},
	    {"172.16.0.0", "private"},
	    {"172.16.255.255", "private"},
	    {"172.17.0.0", "docker-internal"},
	    {"172.31.255.255", "docker-internal"},
	    {"172.32.0.0", "global"},
	    {"192.0.0.0", "reserved"},
	    {"192.0.1.255", "global"},
	    {"192.0.2.0", "documentation"},
	    {"192.0.2.255", "documentation"},
	    {"192.0.3.0", "global"},
	    {"192.88.99.0", "reserved"},
	    {"192.167.255.255", "global"},
	    {"192.168.0.0", "docker-internal"},
	    {"192.168.255.255", "docker-internal"},
	    {"192.169.0.0", "global"},
	    {"198.17.255.255", "global"},
	    {"198.18.0.0", "reserved"},
	    {"198.19.255.255", "reserved"},
	    {"198.20.0.0", "global"},
	    {"198.51.100.0", "documentation"},
	    {"203.0.113.255", "documentation"},
	    {"223.255.255.255", "global"},
	    {"224.0.0.0", "multicast"},
	    {"239.255.255.255", "multicast"},
	    {"240.0.0.0", "reserved"},
	    {"255.255.255.254", "reserved"},
	    {"255.255.255.255", "broadcast"},
	    {"::", "unspecified"},
	    {"::1", "loopback"},
	    {"::2", "reserved"},
	    {"::ffff:0.0.0.0", "unspecified"},
	    {"::ffff:169.254.169.254", "metadata"},
	    {"::ffff:10.1.2.3", "private"},
	    {"::ffff:8.8.8.8", "global"},
	    {"::ffff:192.0.2.1", "documentation"},
	    {"64:ff9b::a9fe:a9fe", "translation"},
	    {"64:ff9b:1::1", "translation"},
	    {"100::", "reserved"},
	    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"},
	    {"2000::", "global"},
	    {"2001::", "translation"},
	    {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "translation"},
	    {"2001:1::", "reserved"},
	    {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"},
	    {"2001:200::", "global"},
	    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "global"},
	    {"2001:db8::", "documentation"},
	    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
	    {"2001:db9::", "global"},
	    {"2002::", "translation"},
	    {"2003::", "global"},
	    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "global"},
	    {"3fff::", "reserved"},
	    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"},
	    {"3fff:1000::", "global"},
	    {"4000::", "reserved"},
	    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"},
	    {"fc00::", "private"},
	    {"fd00:ec2::253", "private"},
	    {"fd00:ec2::254", "metadata"},
	    {"fd00:ec2::255", "private"},
	    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private"},
	    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"},
	    {"fe80::", "link-local"},
	    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"},
	    {"fec0::", "reserved"},
	    {"ff00::", "multicast"},
	    {"ff02::1", "multicast"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_egress_addr a;
		assert_int_equal(ag_egress_addr_parse(t[i].a, &a), 0);
		const char *got = ag_addr_class_name(ag_egress_classify(&a));
		if (strcmp(got, t[i].cls))
			print_error("%s: got %s, want %s\n", t[i].a, got, t[i].cls);
		assert_string_equal(got, t[i].cls);
	}
	struct ag_egress_addr a;
	assert_int_equal(ag_egress_addr_parse("010.0.0.1", &a), -1);
	assert_int_equal(ag_egress_addr_parse("[::1]", &a), -1);
	assert_int_equal(ag_egress_addr_parse("fe80::1%eth0", &a), -1);
	assert_true(ag_addr_class_safe(AG_ADDR_GLOBAL, false));
	assert_false(ag_addr_class_safe(AG_ADDR_DOCUMENTATION, false));
	assert_true(ag_addr_class_safe(AG_ADDR_DOCUMENTATION, true));
	assert_false(ag_addr_class_safe(AG_ADDR_METADATA, true));
}

static struct ag_egress_policy *pol(const char *json)
{
	struct ag_egress_policy *p = NULL;
	struct ag_error *e = NULL;
	if (ag_egress_policy_parse(json, strlen(json), &p, &e) < 0) {
		print_error("%s: %s\n", e->reason, e->msg);
		ag_error_free(e);
		fail();
	}
	return p;
}

#define ONE_RULE                                                                                   \
	"{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"                \
	"\"destinations\":[{\"host\":\"api.example.com\",\"port\":443}]}"

static void test_decide_api(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	const char *addrs[] = {"2606:2800:220:1::1"};
	struct ag_egress_event ev = {.protocol = "connect",
				     .authority = "Api.Example.com:443",
				     .resolved = addrs,
				     .n_resolved = 1,
				     .resolution_status = "stable"};
	struct ag_egress_decision d;
	assert_true(ag_egress_decide(p, &ev, &d));
	assert_string_equal(d.reason, "approved_destination");
	assert_string_equal(d.host, "api.example.com");
	assert_int_equal(d.port, 443);
	assert_string_equal(d.address, "2606:2800:220:1::1"); /* connect only here */
	assert_int_equal(d.rule, 0);
	/* A redirect to another host is a new event, judged on its own. */
	struct ag_egress_event redirect = {.protocol = "https",
					   .url = "https://cdn.example.net/x?sig=SECRET",
					   .resolved = addrs,
					   .n_resolved = 1,
					   .resolution_status = "stable"};
	assert_false(ag_egress_decide(p, &redirect, &d));
	assert_string_equal(d.reason, "destination_not_approved");
	/* DNS rebinding: the same name now resolves to loopback. */
	const char *rebound[] = {"127.0.0.1"};
	ev.resolved = rebound;
	assert_false(ag_egress_decide(p, &ev, &d));
	assert_string_equal(d.reason, "resolution_unsafe");
	assert_string_equal(d.address, "127.0.0.1");
	assert_int_equal(d.address_class, AG_ADDR_LOOPBACK);
	/* A NULL policy approves nothing; a NULL protocol is unsupported. */
	ev.resolved = addrs;
	assert_false(ag_egress_decide(NULL, &ev, &d));
	assert_string_equal(d.reason, "destination_not_approved");
	ev.protocol = NULL;
	assert_false(ag_egress_decide(p, &ev, &d));
	assert_string_equal(d.reason, "unsupported_protocol");
	ag_egress_policy_free(p);
}

static void test_authority_reasons(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool url;
		const char *reason; /* NULL: parses */
		const char *host;
		int port;
	} t[] = {
	    {"api.example.com:443", false, NULL, "api.example.com", 443},
	    {"[2001:DB8::1]:8443", false, NULL, "2001:db8::1", 8443},
	    {"api.example.com", false, "egress.authority.syntax", NULL, 0},
	    {"2001:db8::1:443", false, "egress.authority.syntax", NULL, 0},
	    {"[2001:db8::1]x443", false, "egress.authority.syntax", NULL, 0},
	    {"api.example.com:0", false, "egress.authority.port", NULL, 0},
	    {"api.example.com:065", false, "egress.authority.port", NULL, 0},
	    {"api.example.com:65536", false, "egress.authority.port", NULL, 0},
	    {"a b.example.com:443", false, "egress.authority.syntax", NULL, 0},
	    {":443", false, "egress.host.empty", NULL, 0},
	    {"[192.0.2.1]:443", false, "egress.host.ip_invalid", NULL, 0},
	    {"x.localhost.:443", false, "egress.host.trailing_dot", NULL, 0},
	    {"https://api.example.com/a?b=c#d", true, NULL, "api.example.com", 443},
	    {"HTTP://API.example.com", true, NULL, "api.example.com", 80},
	    {"http://[2001:db8::1]:8080/", true, NULL, "2001:db8::1", 8080},
	    {"ftp://api.example.com/", true, "egress.url.scheme", NULL, 0},
	    {"api.example.com/x", true, "egress.url.syntax", NULL, 0},
	    {"https://u@api.example.com/", true, "egress.url.userinfo", NULL, 0},
	    {"https://api.example.com:99999/", true, "egress.authority.port", NULL, 0},
	    {"https:///x", true, "egress.host.empty", NULL, 0},
	    {"https://api.example.com\\@evil.example/", true, "egress.url.userinfo", NULL, 0},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		struct ag_egress_target g;
		const char *why = NULL;
		bool https;
		char *clean = NULL;
		int r = t[i].url
			    ? ag_egress_url_parse(t[i].s, strlen(t[i].s), &g, &https, &clean, &why)
			    : ag_egress_authority_parse(t[i].s, strlen(t[i].s), &g, &why);
		if (t[i].reason) {
			if (r == 0 || strcmp(why, t[i].reason))
				print_error("%s: got %d %s\n", t[i].s, r, why ? why : "-");
			assert_int_equal(r, -1);
			assert_string_equal(why, t[i].reason);
		} else {
			assert_int_equal(r, 0);
			assert_string_equal(g.host, t[i].host);
			assert_int_equal(g.port, t[i].port);
		}
		if (clean)
			assert_null(strchr(clean, '?'));
		free(clean);
	}
}

/* A policy struct built by hand (not through the validator) is still held
 * to the address rules at decision time. */
static void test_decide_defense_in_depth(void **state)
{
	(void)state;
	struct ag_egress_rule r = {
	    .purpose = (char *)"x", .test_only = true, .test_only_ip_literal = true};
	const char *why = NULL;
	assert_int_equal(ag_egress_host_normalize("127.0.0.1", 9, &r.dest, &why), 0);
	r.dest.port = 8080;
	struct ag_egress_policy p = {.rules = &r, .n_rules = 1};
	struct ag_egress_event ev = {.protocol = "connect", .authority = "127.0.0.1:8080"};
	struct ag_egress_decision d;
	assert_false(ag_egress_decide(&p, &ev, &d));
	assert_string_equal(d.reason, "unsafe_ip_literal");
	assert_string_equal(ag_addr_class_name(d.address_class), "loopback");
	r.test_only = false; /* a literal rule that lost its test flag */
	assert_false(ag_egress_decide(&p, &ev, &d));
	assert_string_equal(d.reason, "ip_literal_not_approved");
}

static void test_policy_digest(void **state)
{
	(void)state;
	struct ag_egress_policy *a = pol(ONE_RULE);
	struct ag_egress_policy *b =
	    pol("{\"destinations\":[{\"port\":443,\"host\":\"  API.EXAMPLE.COM\","
		"\"purpose\":\"approved-destination\",\"test_only\":false}],"
		"\"schema_version\":1,\"schema\":\"agentguard.live-study-egress-policy\"}");
	assert_string_equal(a->digest, b->digest);
	struct ag_egress_policy *c =
	    pol("{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"
		"\"destinations\":[{\"host\":\"api.example.com\",\"port\":8443}]}");
	assert_string_not_equal(a->digest, c->digest);
	ag_egress_policy_free(a);
	ag_egress_policy_free(b);
	ag_egress_policy_free(c);
}

/* The egress profile of the one sanitizer, as the manifest uses it. */
static char *esan(const char *s)
{
	return ag_sanitize(NULL, AG_SANITIZE_EGRESS, s, strlen(s), AG_EGRESS_MANIFEST_MAX_STRING);
}

static void test_sanitize(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} t[] = {
	    {"https://api.example.com/v1?key=SECRET", "https://api.example.com/v1"},
	    {"https://api.example.com/v1#frag", "https://api.example.com/v1"},
	    {"GET ?token=abc HTTP/1.1", "GET [REDACTED_QUERY] HTTP/1.1"},
	    {"read /home/alice/.netrc failed", "read [REDACTED_PATH] failed"},
	    {"path=/tmp/x", "path=[REDACTED_PATH]"},
	    {"https://x.example/home/ok", "https://x.example/home/ok"},
	    {"is it ok? yes", "is it ok? yes"},
	    {"plain", "plain"},
	    {"a#b://c#d", "a#b://c"},
	    {"x?y z=1", "x?y z=1"},
	    {"?\?=", "[REDACTED_QUERY]"},
	    {"see http://a.example/p?q=1 and ?k=v or /root/x",
	     "see http://a.example/p and [REDACTED_QUERY] or [REDACTED_PATH]"},
	    /* second review: each of these passed unchanged before */
	    {"https://api.example.com/v1?SECRET", "https://api.example.com/v1"},
	    {"GET https://a.example/?sk-live-123 HTTP/1.1", "GET https://a.example/ HTTP/1.1"},
	    {"file:///home/alice/.netrc", "file://[REDACTED_PATH]"},
	    {"x;/home/alice/k", "x;[REDACTED_PATH]"},
	    {"open </root/.ssh/id>", "open <[REDACTED_PATH]"},
	    {"`/tmp/x` |/var/tmp/y {/Users/a}",
	     "`[REDACTED_PATH] |[REDACTED_PATH] {[REDACTED_PATH]"},
	    {"a.b/home/x ~/tmp/x -/tmp/x", "a.b/home/x ~/tmp/x -/tmp/x"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		char *s = esan(t[i].in);
		assert_string_equal(s, t[i].out);
		free(s);
	}
	char big[2000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char *s = esan(big);
	assert_int_equal(strlen(s), AG_EGRESS_MANIFEST_MAX_STRING);
	free(s);
}

static json_t *identity(void)
{
	const char *h = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	json_t *o = json_object();
	json_object_set_new(o, "configured_reference", json_sprintf("r/gw@sha256:%s", h));
	json_object_set_new(o, "registry_digest", json_sprintf("r/gw@sha256:%s", h));
	json_object_set_new(o, "local_image_id", json_sprintf("sha256:%s", h));
	json_object_set_new(o, "container_bound_image_id", json_sprintf("sha256:%s", h));
	json_object_set_new(o, "platform", json_string("/home/alice/linux")); /* sanitized */
	json_object_set_new(o, "pull_policy", json_string("never"));
	json_object_set_new(o, "cache_status", json_string("present"));
	return o;
}

static json_t *record(const struct ag_egress_policy *p, const char *url)
{
	const char *addrs[] = {"93.184.216.34"};
	struct ag_egress_event ev = {.protocol = "https",
				     .url = url,
				     .resolved = addrs,
				     .n_resolved = 1,
				     .resolution_status = "stable"};
	struct ag_egress_decision d;
	ag_egress_decide(p, &ev, &d);
	struct ag_egress_event_meta m = {.event_type = "request",
					 .bytes_in = 100,
					 .bytes_out = 20,
					 .started = "2026-11-30T13:00:00Z",
					 .ended = "2026-11-30T13:00:01Z",
					 .evidence_complete = true};
	return ag_egress_event_record(&ev, &d, &m);
}

/* A manifest of policy P with events EV, aggregates AGGS and gateway STATE. */
static int build_with(const struct ag_egress_policy *p, json_t *ev, const json_t *aggs,
		      const char *state, json_t **m, struct ag_error **e)
{
	json_t *id = identity();
	const char *h = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct ag_egress_manifest_inputs in = {.plan_digest = h,
					       .profile_hash = h,
					       .fixture_hash = h,
					       .trial_id = "trial-1",
					       .authorization_id = "auth-1",
					       .policy = p,
					       .gateway_image_identity = id,
					       .events = ev,
					       .aggregates = aggs,
					       .sampled_out = 7,
					       .gateway_state = state,
					       .gateway_evidence_complete =
						   !strcmp(state, "running"),
					       .cleanup_agent = "removed",
					       .cleanup_gateway = "removed",
					       .cleanup_internal_network = "removed",
					       .cleanup_outbound_network = "already_absent",
					       .liveness_verified = true};
	int rc = ag_egress_manifest_build(&in, m, e);
	json_decref(id);
	return rc;
}

static const char *build_status_aggs(const struct ag_egress_policy *p, json_t *events,
				     const json_t *aggs, char **text);
static const char *build_status(const struct ag_egress_policy *p, json_t *events, char **text)
{
	return build_status_aggs(p, events, NULL, text);
}

static const char *build_status_aggs(const struct ag_egress_policy *p, json_t *events,
				     const json_t *aggs, char **text)
{
	json_t *m = NULL;
	struct ag_error *e = NULL;
	if (build_with(p, events, aggs, "running", &m, &e) < 0) {
		print_error("%s: %s\n", e->reason, e->msg);
		fail();
	}
	size_t len;
	assert_int_equal(ag_egress_manifest_dump(m, text, &len, &e), 0);
	static char status[32];
	snprintf(status, sizeof(status), "%s",
		 json_string_value(json_object_get(json_object_get(m, "completion"), "status")));
	json_decref(m);
	return status;
}

static void test_manifest_build(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	json_t *ev = json_array();
	json_array_append_new(ev, record(p, "https://api.example.com/v1/chat?key=SECRET"));
	char *text = NULL;
	assert_string_equal(build_status(p, ev, &text), "complete");
	assert_null(strstr(text, "SECRET"));
	assert_null(strstr(text, "/home/"));
	assert_non_null(strstr(text, "\"url\":\"https://api.example.com/v1/chat\""));
	struct ag_egress_completion c;
	struct ag_error *e = NULL;
	assert_int_equal(ag_egress_manifest_validate(text, strlen(text), p, &c, &e), 0);
	free(text);
	/* Another policy: the digest no longer matches. */
	struct ag_egress_policy *q =
	    pol("{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"
		"\"destinations\":[{\"host\":\"api.example.com\",\"port\":8443}]}");
	build_status(p, ev, &text);
	assert_int_equal(ag_egress_manifest_validate(text, strlen(text), q, &c, &e), -1);
	assert_string_equal(e->reason, "egress.manifest.policy_digest");
	ag_error_free(e);
	e = NULL;
	free(text);
	/* One blocked redirect makes the trial fail. */
	json_array_append_new(ev, record(p, "https://cdn.example.net/x"));
	assert_string_equal(build_status(p, ev, &text), "failed");
	free(text);
	json_decref(ev);
	/* More events than fit: the manifest keeps what fits within 64 KiB,
	 * marks the gateway evidence truncated, and is never complete. */
	ev = json_array();
	for (int i = 0; i < AG_EGRESS_MANIFEST_MAX_EVENTS + 1; i++)
		json_array_append_new(ev, record(p, "https://api.example.com/"));
	assert_string_equal(build_status(p, ev, &text), "incomplete");
	assert_non_null(strstr(text, "\"evidence_truncated\":true"));
	assert_true(strlen(text) <= AG_EGRESS_MANIFEST_MAX_BYTES);
	free(text);
	json_decref(ev);
	/* A record the gateway could not state properly still validates, and
	 * its evidence is incomplete: the trial is not complete. */
	const char *addrs[] = {"93.184.216.34"};
	struct ag_egress_event bad = {.protocol = "",
				      .authority = "api.example.com:443",
				      .effective_host = "API.example.com",
				      .effective_port = 99999,
				      .resolved = addrs,
				      .n_resolved = 1,
				      .resolution_status = "stable"};
	struct ag_egress_decision d;
	ag_egress_decide(p, &bad, &d);
	struct ag_egress_event_meta m = {.event_type = "weird",
					 .started = "yesterday",
					 .evidence_complete = true,
					 .bytes_in = -5};
	ev = json_array();
	json_array_append_new(ev, ag_egress_event_record(&bad, &d, &m));
	assert_string_equal(build_status(p, ev, &text), "incomplete");
	assert_non_null(strstr(text, "\"reason\":\"event_evidence_incomplete\""));
	free(text);
	json_decref(ev);
	ag_egress_policy_free(p);
	ag_egress_policy_free(q);
}

/* The gateway's aggregates decide what no sample can hide (issue 19 item 1). */
static json_t *agg(const char *keys, int ov_allowed, int ov_denied, bool complete)
{
	json_error_t je;
	json_t *k = json_loads(keys, 0, &je);
	assert_non_null(k);
	return json_pack("{s:o, s:{s:i, s:i, s:i, s:i}, s:b}", "keys", k, "overflow",
			 "requests_allowed", ov_allowed, "requests_denied", ov_denied, "bytes_in",
			 0, "bytes_out", 0, "complete", complete);
}

#define AKEY(dec, host, reason)                                                                    \
	"{\"decision\":\"" dec "\",\"host\":\"" host "\",\"port\":443,\"reason\":\"" reason        \
	"\",\"requests\":5000,\"bytes_in\":9,\"bytes_out\":9}"

static void test_manifest_aggregates(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	/* 300 honest records: more than the events hold, yet complete; the
	 * ones left out are counted, not a truncation */
	json_t *ev = json_array();
	for (int i = 0; i < 300; i++)
		json_array_append_new(ev, record(p, "https://api.example.com/"));
	json_t *a =
	    agg("[" AKEY("allow", "api.example.com", "approved_destination") "]", 0, 0, true);
	char *text = NULL;
	assert_string_equal(build_status_aggs(p, ev, a, &text), "complete");
	assert_null(strstr(text, "\"evidence_truncated\":true"));
	json_t *m = json_loads(text, 0, NULL);
	assert_true(json_integer_value(ag_json_path(m, "aggregates.sampled_out")) >= 7 + 300 - 256);
	json_decref(m);
	struct ag_egress_completion c;
	struct ag_error *e = NULL;
	assert_int_equal(ag_egress_manifest_validate(text, strlen(text), p, &c, &e), 0);
	free(text);
	json_decref(a);
	json_decref(ev);
	/* a deny the sample does not show still fails the trial */
	static const struct {
		const char *keys;
		int ov_allowed, ov_denied;
		bool complete;
		const char *status, *reason;
	} cases[] = {
	    {"[" AKEY("allow", "api.example.com", "approved_destination") "," AKEY(
		 "deny", "junk.example", "destination_not_approved") "]",
	     0, 0, true, "failed", "destination_denied"},
	    {"[" AKEY("allow", "api.example.com", "approved_destination") "]", 0, 1, true, "failed",
	     "destination_denied"},
	    {"[" AKEY("allow", "other.example.com", "approved_destination") "]", 0, 0, true,
	     "failed", "unexpected_destination"},
	    {"[" AKEY("allow", "api.example.com", "approved_destination") "]", 1, 0, true,
	     "incomplete", "gateway_evidence_incomplete"},
	    {"[" AKEY("allow", "api.example.com", "approved_destination") "]", 0, 0, false,
	     "incomplete", "gateway_evidence_incomplete"},
	    /* the gateway's own loss is no deny of the agent's */
	    {"[" AKEY("allow", "api.example.com", "approved_destination") "," AKEY(
		 "deny", "api.example.com", "evidence_lost") "]",
	     0, 0, true, "incomplete", "gateway_evidence_incomplete"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		ev = json_array();
		json_array_append_new(ev, record(p, "https://api.example.com/"));
		a = agg(cases[i].keys, cases[i].ov_allowed, cases[i].ov_denied, cases[i].complete);
		assert_string_equal(build_status_aggs(p, ev, a, &text), cases[i].status);
		m = json_loads(text, 0, NULL);
		assert_string_equal(json_string_value(ag_json_path(m, "completion.reason")),
				    cases[i].reason);
		json_decref(m);
		assert_int_equal(ag_egress_manifest_validate(text, strlen(text), p, &c, &e), 0);
		free(text);
		json_decref(a);
		json_decref(ev);
	}
	/* a deny counted before the gateway crashed is not hidden by the crash */
	ev = json_array();
	a = agg("[" AKEY("deny", "junk.example", "destination_not_approved") "]", 0, 0, true);
	assert_int_equal(build_with(p, ev, a, "crashed", &m, &e), 0);
	assert_string_equal(json_string_value(ag_json_path(m, "completion.reason")),
			    "destination_denied");
	json_decref(m);
	json_decref(a);
	json_decref(ev);
	/* keys outside the shape are refused by the validator: a made-up
	 * word, an allow that is not approved */
	static const char *const bad_keys[] = {
	    "[{\"decision\":\"allow\",\"host\":\"api.example.com\",\"port\":443,"
	    "\"reason\":\"made_up\",\"requests\":1,\"bytes_in\":0,\"bytes_out\":0}]",
	    "[" AKEY("allow", "api.example.com", "evidence_lost") "]",
	    "[" AKEY("deny", "api.example.com", "approved_destination") "]"};
	for (size_t b = 0; b < AG_ARRAY_SIZE(bad_keys); b++) {
		ev = json_array();
		a = agg(bad_keys[b], 0, 0, true);
		assert_int_equal(build_with(p, ev, a, "running", &m, &e), -1);
		assert_string_equal(e->reason, "egress.manifest.event");
		ag_error_free(e);
		e = NULL;
		json_decref(a);
		json_decref(ev);
	}
	ag_egress_policy_free(p);
}

#define INJECT_RULES                                                                               \
	"{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"                \
	"\"destinations\":[{\"host\":\"api.example.com\",\"port\":443,\"inject\":{\"header\":"     \
	"\"X-Api-Key\",\"from_env\":\"K\",\"placeholder_env\":\"P\"}},"                            \
	"{\"host\":\"plain.example.com\",\"port\":443}]}"

/* A CONNECT event to HOST:443, allowed, with "tls" MODE and HEADER. */
static json_t *tls_event(const struct ag_egress_policy *p, const char *host, const char *mode,
			 const char *header)
{
	const char *addrs[] = {"93.184.216.34"};
	char auth[128];
	snprintf(auth, sizeof(auth), "%s:443", host);
	struct ag_egress_event ev = {.protocol = "connect",
				     .authority = auth,
				     .resolved = addrs,
				     .n_resolved = 1,
				     .resolution_status = "stable"};
	struct ag_egress_decision d;
	ag_egress_decide(p, &ev, &d);
	struct ag_egress_event_meta m = {.event_type = "request",
					 .started = "2026-11-30T13:00:00Z",
					 .ended = "2026-11-30T13:00:01Z",
					 .evidence_complete = true,
					 .tls_mode = mode,
					 .injected_header = header};
	return ag_egress_event_record(&ev, &d, &m);
}

/* Credential injection in the manifest: the terminated list is the
 * policy's inject rules, and an event contradicting the policy (a
 * terminated tunnel to a host without inject, another header, an inject
 * host spliced) is refused. */
static void test_manifest_tls(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(INJECT_RULES);
	json_t *ev = json_array();
	json_array_append_new(ev, tls_event(p, "api.example.com", "terminated", "x-api-key"));
	json_array_append_new(ev, tls_event(p, "plain.example.com", "spliced", NULL));
	/* a tunnel whose TLS never started (the connect failed), either kind */
	json_array_append_new(ev, tls_event(p, "api.example.com", "not_established", NULL));
	json_array_append_new(ev, tls_event(p, "plain.example.com", "not_established", NULL));
	json_t *m = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(build_with(p, ev, NULL, "running", &m, &e), 0);
	json_t *t = json_object_get(m, "tls_terminated");
	assert_int_equal(json_array_size(t), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(t, 0), "header")),
			    "x-api-key");
	assert_string_equal(
	    json_string_value(json_object_get(m, "completion")
				  ? json_object_get(json_object_get(m, "completion"), "status")
				  : NULL),
	    "complete");
	json_decref(m);
	json_decref(ev);
	static const struct {
		const char *host, *mode, *header;
	} bad[] = {
	    {"plain.example.com", "terminated", NULL},
	    {"plain.example.com", "spliced", "x-api-key"},
	    {"api.example.com", "terminated", "authorization"},
	    {"api.example.com", "spliced", NULL},
	    {"api.example.com", NULL, NULL},
	    {"plain.example.com", NULL, NULL},
	    {"api.example.com", "not_established", "x-api-key"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++) {
		ev = json_array();
		json_array_append_new(ev, tls_event(p, bad[i].host, bad[i].mode, bad[i].header));
		m = NULL;
		if (build_with(p, ev, NULL, "running", &m, &e) != -1 ||
		    strcmp(e->reason, "egress.manifest.tls") != 0)
			fail_msg("case %zu: %s", i, e ? e->reason : "(built)");
		ag_error_free(e);
		e = NULL;
		json_decref(m);
		json_decref(ev);
	}
	ag_egress_policy_free(p);
	/* a policy without inject: events need no "tls", and a claim of
	 * termination is still a contradiction */
	p = pol(ONE_RULE);
	ev = json_array();
	json_array_append_new(ev, tls_event(p, "api.example.com", NULL, NULL));
	assert_int_equal(build_with(p, ev, NULL, "running", &m, &e), 0);
	assert_null(json_object_get(m, "tls_terminated"));
	json_decref(m);
	json_decref(ev);
	ev = json_array();
	json_array_append_new(ev, tls_event(p, "api.example.com", "terminated", NULL));
	assert_int_equal(build_with(p, ev, NULL, "running", &m, &e), -1);
	assert_string_equal(e->reason, "egress.manifest.tls");
	ag_error_free(e);
	json_decref(ev);
	ag_egress_policy_free(p);
}

/* The egress_manifest check `evidence verify` gets plugged in from above:
 * the recorded file's exact bytes, and a manifest that validates. */
static int check_run(const char *dir, json_t *study, const char **reason)
{
	json_t *art = json_object();
	if (study)
		json_object_set_new(art, "study_egress", study);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct ag_error *e = NULL;
	int rc = ag_egress_manifest_check_run(fd, art, &e);
	static char r[64];
	snprintf(r, sizeof(r), "%s", rc == 0 ? "ok" : e->reason);
	*reason = r;
	ag_error_free(e);
	close(fd);
	json_decref(art);
	return rc;
}

static void test_manifest_check_run(void **state)
{
	(void)state;
	char dir[] = "/tmp/ag-egress-check-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct ag_egress_policy *p = pol(ONE_RULE);
	json_t *ev = json_array();
	json_array_append_new(ev, record(p, "https://api.example.com/v1"));
	char *text = NULL;
	build_status(p, ev, &text);
	char *path = ag_xasprintf("%s/%s", dir, AG_EGRESS_MANIFEST_FILE);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
	_cleanup_free_ char *line = ag_xasprintf("%s\n", text);
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(line, strlen(line), hex);
	const char *why = NULL;
	/* no study, or a study that wrote no manifest: nothing to check */
	assert_int_equal(check_run(dir, NULL, &why), 0);
	assert_int_equal(check_run(dir, json_object(), &why), 0);
	/* the run's copy of the policy is needed to judge the manifest */
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 -1);
	assert_string_equal(why, "evidence.egress_policy.missing");
	char *edir = ag_xasprintf("%s/egress", dir), *ppath = ag_xasprintf("%s/policy.json", edir);
	assert_int_equal(mkdir(edir, 0700), 0);
	f = fopen(ppath, "w");
	assert_non_null(f);
	fputs("{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"
	      "\"destinations\":[{\"host\":\"other.example.com\",\"port\":443}]}",
	      f);
	fclose(f);
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 -1);
	assert_string_equal(why, "egress.manifest.policy_digest");
	f = fopen(ppath, "w");
	assert_non_null(f);
	fputs(ONE_RULE, f);
	fclose(f);
	/* the recorded file and hash, and the policy: passes */
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 0);
	/* half a record, another name, another hash */
	assert_int_equal(check_run(dir, json_pack("{s:s}", "manifest_sha256", hex), &why), -1);
	assert_string_equal(why, "evidence.egress_manifest.mismatch");
	assert_int_equal(
	    check_run(dir, json_pack("{s:s,s:s}", "manifest", "x.json", "manifest_sha256", hex),
		      &why),
	    -1);
	assert_string_equal(why, "evidence.egress_manifest.mismatch");
	hex[0] = hex[0] == 'a' ? 'b' : 'a';
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 -1);
	assert_string_equal(why, "evidence.egress_manifest.mismatch");
	/* the right hash of bytes that are no manifest */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{}\n", f);
	fclose(f);
	ag_sha256_hex("{}\n", 3, hex);
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 -1);
	assert_true(!strncmp(why, "egress.manifest.", 16) ||
		    !strcmp(why, "evidence.egress_manifest.invalid"));
	/* gone */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(check_run(dir,
				   json_pack("{s:s,s:s}", "manifest", AG_EGRESS_MANIFEST_FILE,
					     "manifest_sha256", hex),
				   &why),
			 -1);
	assert_string_equal(why, "evidence.egress_manifest.missing");
	assert_int_equal(unlink(ppath), 0);
	assert_int_equal(rmdir(edir), 0);
	assert_int_equal(rmdir(dir), 0);
	free(ppath);
	free(edir);
	free(path);
	free(text);
	json_decref(ev);
	ag_egress_policy_free(p);
}

static const char config_yaml[] =
    "task_id: t\ndescription: d\ntest_command: 'true'\nrepo_template: repo\n"
    "expected_modified_files: {min: 0, max: 3}\nsandbox:\n  type: docker\n"
    "  image: 'r/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'\n"
    "contained_execution:\n  version: 1\n  platform: linux-docker-engine\n"
    "  required_uid: 1000\n  required_gid: 1000\n";

static void test_plan_invariants(void **state)
{
	(void)state;
	struct ag_config *c = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_config_load_mem(config_yaml, strlen(config_yaml), "c.yaml", &c, &e), 0);
	struct ag_egress_policy *p = pol(ONE_RULE);
	const char *cmd[] = {"codex", "exec"};
	struct ag_egress_plan_inputs in = {
	    .config = c,
	    .policy = p,
	    .trial_id = "trial-1",
	    .gateway_image =
		"r/gw@sha256:1111111111111111111111111111111111111111111111111111111111111111",
	    .command = cmd,
	    .n_command = 2,
	};
	struct ag_egress_plan plan;
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), 0);
	struct ag_egress_step *steps = NULL;
	size_t n = 0;
	assert_int_equal(ag_egress_plan_render(&plan, &steps, &n, &e), 0);
	assert_int_equal(n, 12);
	assert_string_equal(steps[0].name, "create_internal_network");
	assert_true(steps[8].teardown);
	ag_egress_steps_free(steps, n);
	ag_egress_plan_release(&plan);

	/* Each broken invariant is refused by the validator and the renderer. */
	struct {
		const char *reason;
	} cases[] = {{"egress.plan.topology"},	 {"egress.plan.topology"},
		     {"egress.plan.topology"},	 {"egress.plan.topology"},
		     {"egress.plan.same_image"}, {"render.uid.invalid"},
		     {"render.image.not_pinned"}};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		assert_int_equal(ag_egress_plan_build(&in, &plan, &e), 0);
		switch (i) {
		case 0:
			plan.agent.exec.network_name = plan.outbound.name;
			break;
		case 1:
			plan.agent.exec.n_dns = 0;
			plan.agent.exec.dns = NULL;
			break;
		case 2:
			plan.gateway.exec.ip_forward_off = false;
			break;
		case 3:
			plan.internal.internal = false;
			break;
		case 4:
			plan.gateway.exec.image = plan.agent.exec.image;
			break;
		case 5:
			plan.gateway.exec.uid = 0;
			break;
		default:
			plan.gateway.exec.image = "r/gw:latest";
			break;
		}
		assert_int_equal(ag_egress_plan_render(&plan, &steps, &n, &e), -1);
		if (strcmp(e->reason, cases[i].reason))
			print_error("case %zu: %s\n", i, e->reason);
		assert_string_equal(e->reason, cases[i].reason);
		ag_error_free(e);
		e = NULL;
		ag_egress_plan_release(&plan);
	}
	ag_egress_policy_free(p);
	ag_config_free(c);
}

/* ---- second review (issue 11): each case failed before its fix ---- */

#define TWO_RULES                                                                                  \
	"{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"                \
	"\"destinations\":[{\"host\":\"api.example.com\",\"port\":443},"                           \
	"{\"host\":\"upload.example.com\",\"port\":443}]}"

static void set_dest(json_t *rec, const char *host)
{
	json_object_set_new(json_object_get(rec, "requested"), "host", json_string(host));
	json_object_set_new(json_object_get(rec, "effective"), "host", json_string(host));
	if (json_is_string(json_object_get(rec, "url")))
		json_object_set_new(
		    rec, "url",
		    json_sprintf(strchr(host, ':') ? "https://[%s]/" : "https://%s/", host));
}

/* m, re-dumped, is refused under p with `reason`. */
static void expect_refused(json_t *m, const struct ag_egress_policy *p, const char *reason)
{
	char *forged = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
	struct ag_egress_completion c;
	struct ag_error *e = NULL;
	assert_int_equal(ag_egress_manifest_validate(forged, strlen(forged), p, &c, &e), -1);
	assert_string_equal(e->reason, reason);
	ag_error_free(e);
	free(forged);
}

/* A one-event manifest built under p, parsed back; its completion status
 * and reason. Takes a reference to rec. */
static json_t *built(const struct ag_egress_policy *p, json_t *rec, const char **status,
		     const char **reason)
{
	json_t *ev = json_array();
	json_array_append_new(ev, rec);
	char *text = NULL;
	build_status(p, ev, &text);
	json_t *m = json_loads(text, 0, NULL);
	free(text);
	json_decref(ev);
	json_t *co = json_object_get(m, "completion");
	*status = json_string_value(json_object_get(co, "status"));
	*reason = json_string_value(json_object_get(co, "reason"));
	return m;
}

/* An "allow" record whose own resolved address is loopback / metadata /
 * private was judged complete: the completion never classified it. */
static void test_review_allow_to_unsafe_address(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	static const char *const unsafe[] = {"127.0.0.1", "169.254.169.254", "10.1.2.3",
					     "::ffff:172.17.0.1", "192.0.2.1"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(unsafe); i++) {
		json_t *rec = record(p, "https://api.example.com/");
		json_t *a = json_array();
		json_array_append_new(a, json_string(unsafe[i]));
		json_object_set_new(rec, "resolved_addresses", a);
		const char *st, *why;
		json_t *m = built(p, rec, &st, &why);
		if (strcmp(st, "incomplete"))
			print_error("%s: %s\n", unsafe[i], st);
		assert_string_equal(st, "incomplete");
		assert_string_equal(why, "event_contradictory");
		json_decref(m);
	}
	ag_egress_policy_free(p);
}

/* With a multi-rule policy approved_destination is null, and an allow to a
 * destination outside the policy was "complete" even under --policy. */
static void test_review_allow_outside_policy(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(TWO_RULES);
	const char *st, *why;
	json_t *m = built(p, record(p, "https://upload.example.com/"), &st, &why);
	assert_string_equal(st, "complete");
	json_decref(m);
	json_t *rec = record(p, "https://upload.example.com/");
	set_dest(rec, "evil.example.org");
	m = built(p, rec, &st, &why);
	assert_string_equal(st, "failed");
	assert_string_equal(why, "unexpected_destination");
	/* The same document stated "complete" is refused under the policy. */
	json_t *co = json_object_get(m, "completion");
	json_object_set_new(co, "status", json_string("complete"));
	json_object_set_new(co, "reason", json_string("complete"));
	json_object_set_new(co, "success_eligible", json_true());
	expect_refused(m, p, "egress.manifest.completion_mismatch");
	json_decref(m);
	ag_egress_policy_free(p);
}

/* A URL query without '=' passed the validator in any field (the
 * sanitizer's cases are in test_sanitize). */
static void test_review_sanitizer(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	const char *st, *why;
	json_t *m = built(p, record(p, "https://api.example.com/v1"), &st, &why);
	json_object_set_new(json_array_get(json_object_get(m, "events"), 0), "url",
			    json_string("https://api.example.com/v1?SECRET"));
	expect_refused(m, p, "egress.manifest.query");
	json_decref(m);
	ag_egress_policy_free(p);
}

/* The decision took resolved addresses as input, so a gateway had to look a
 * name up before asking: an unapproved name was resolved (a DNS side
 * channel). The pre-resolution check answers before any lookup. */
static void test_review_check_before_lookup(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	struct ag_egress_decision d;
	struct ag_egress_event ev = {.protocol = "connect",
				     .authority = "exfil.attacker.example:443"};
	assert_false(ag_egress_precheck(p, &ev, &d));
	assert_string_equal(d.reason, "destination_not_approved");
	ev.authority = "api.example.com:8443";
	assert_false(ag_egress_precheck(p, &ev, &d));
	assert_string_equal(d.reason, "destination_not_approved");
	ev.protocol = "udp";
	assert_false(ag_egress_precheck(p, &ev, &d));
	assert_string_equal(d.reason, "udp_blocked");
	ev.protocol = "connect";
	ev.authority = "API.example.com:443";
	assert_true(ag_egress_precheck(p, &ev, &d));
	assert_string_equal(d.reason, "resolution_required");
	assert_false(d.allow); /* not yet a verdict */
	assert_string_equal(d.address, "");
	assert_string_equal(d.host, "api.example.com");
	/* The full decision still gives the verdict after resolution. */
	const char *addrs[] = {"93.184.216.34"};
	ev.resolved = addrs;
	ev.n_resolved = 1;
	ev.resolution_status = "stable";
	assert_true(ag_egress_decide(p, &ev, &d));
	ag_egress_policy_free(p);
}

/* An allow record whose URL names another host, or whose requested host is
 * an unsafe IP literal while its "resolved" address looks global, was
 * complete: the evidence contradicted itself unnoticed. */
static void test_review_allow_record_disagrees(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	for (int k = 0; k < 3; k++) {
		json_t *rec = record(p, "https://api.example.com/v1");
		if (k == 0)
			json_object_set_new(rec, "url", json_string("https://evil.example.org/v1"));
		else if (k == 1)
			json_object_set_new(rec, "url",
					    json_string("https://api.example.com:8443/"));
		else
			set_dest(rec, "127.0.0.1");
		const char *st, *why;
		json_t *m = built(p, rec, &st, &why);
		/* as for a multi-rule policy, judged without it */
		json_object_set_new(m, "approved_destination", json_null());
		struct ag_egress_completion c;
		ag_egress_manifest_completion(m, NULL, &c);
		if (strcmp(c.reason, "event_contradictory"))
			print_error("case %d: %s\n", k, c.reason);
		assert_string_equal(c.reason, "event_contradictory");
		json_decref(m);
	}
	ag_egress_policy_free(p);
}

/* The stated completion reason was never compared: a failed trial could
 * state a reason its contents do not give and validate. */
static void test_review_completion_reason(void **state)
{
	(void)state;
	struct ag_egress_policy *p = pol(ONE_RULE);
	const char *st, *why;
	json_t *m = built(p, record(p, "https://cdn.example.net/x"), &st, &why);
	assert_string_equal(st, "failed");
	json_object_set_new(json_object_get(m, "completion"), "reason",
			    json_string("gateway_crashed"));
	expect_refused(m, p, "egress.manifest.completion_mismatch");
	json_decref(m);
	ag_egress_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classify_edges),
	    cmocka_unit_test(test_decide_api),
	    cmocka_unit_test(test_authority_reasons),
	    cmocka_unit_test(test_decide_defense_in_depth),
	    cmocka_unit_test(test_policy_digest),
	    cmocka_unit_test(test_sanitize),
	    cmocka_unit_test(test_manifest_build),
	    cmocka_unit_test(test_manifest_aggregates),
	    cmocka_unit_test(test_manifest_check_run),
	    cmocka_unit_test(test_manifest_tls),
	    cmocka_unit_test(test_plan_invariants),
	    cmocka_unit_test(test_review_allow_to_unsafe_address),
	    cmocka_unit_test(test_review_allow_outside_policy),
	    cmocka_unit_test(test_review_sanitizer),
	    cmocka_unit_test(test_review_check_before_lookup),
	    cmocka_unit_test(test_review_allow_record_disagrees),
	    cmocka_unit_test(test_review_completion_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
