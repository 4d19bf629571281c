/*
 * Credential injection (issue 21): the policy's "inject" rules
 * (src/lib/egress/policy.c) and the request rewrite inside a terminated
 * tunnel (src/lib/egress/inject.c): every credential header the agent sent
 * is gone in any case and any number of copies, the one real header is
 * added, a head the parser refuses (folded, smuggled, oversized) or a Host
 * other than the approved name is refused, and a header inside a body is
 * body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <time.h>

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/egress/ca.h"
#include "lib/egress/inject.h"
#include "lib/egress/policy.h"

#define HOST "api.example.com"
#define SECRET "sk-real-0123456789"

/* Rewrites TEXT for HOST:443 with Authorization: Bearer SECRET; *out is
 * the new head (heap) or NULL. */
static int rewrite(const char *text, struct ag_egress_inject_result *res, char **out)
{
	size_t n = strlen(text);
	char *h = ag_xmalloc(n + 1);
	memcpy(h, text, n + 1);
	struct ag_buf b = AG_BUF_INIT(AG_GW_HEADER_MAX + 256, "test.inject");
	int rc =
	    ag_egress_inject_rewrite(h, n, HOST, 443, "Authorization", "Bearer " SECRET, &b, res);
	*out = NULL;
	if (rc == 0) {
		*out = ag_xstrndup(b.buf, b.len);
	}
	ag_buf_release(&b);
	free(h);
	return rc;
}

static size_t count(const char *hay, const char *needle)
{
	size_t c = 0;
	for (const char *p = hay; (p = strcasestr(p, needle)); p += strlen(needle))
		c++;
	return c;
}

static void test_rewrite_replaces_credentials(void **state)
{
	(void)state;
	struct ag_egress_inject_result res;
	char *out;
	assert_int_equal(
	    rewrite("POST /v1/responses HTTP/1.1\r\n"
		    "Host: api.example.com\r\n"
		    "authorization: Bearer placeholder-1\r\n"
		    "AUTHORIZATION: Bearer placeholder-2\r\n"
		    "X-Api-Key: placeholder-3\r\n"
		    "x-goog-api-key: k\r\nApi-Key: k\r\n"
		    "Proxy-Authorization: Basic eA==\r\n"
		    "Connection: keep-alive, Upgrade\r\nUpgrade: h2c\r\nTE: trailers\r\n"
		    "Expect: 100-continue\r\n"
		    "Content-Length: 5\r\nX-Other: kept\r\n\r\n",
		    &res, &out),
	    0);
	assert_null(res.detail);
	assert_int_equal(res.content_length, 5);
	assert_string_equal(out, "POST /v1/responses HTTP/1.1\r\n"
				 "Host: api.example.com\r\n"
				 "Content-Length: 5\r\nX-Other: kept\r\n"
				 "Authorization: Bearer " SECRET "\r\n\r\n");
	assert_int_equal(count(out, "placeholder"), 0);
	assert_int_equal(count(out, "authorization"), 1);
	free(out);
	/* Host with the port, any case */
	assert_int_equal(
	    rewrite("GET / HTTP/1.0\r\nhOsT:  API.Example.COM:443 \r\n\r\n", &res, &out), 0);
	assert_int_equal(res.content_length, -1);
	assert_non_null(strstr(out, "GET / HTTP/1.0\r\n"));
	free(out);
}

static void test_rewrite_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *head, *detail;
		int status;
	} t[] = {
	    {"GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n", "host_mismatch", 421},
	    {"GET / HTTP/1.1\r\nHost: api.example.com.evil.test\r\n\r\n", "host_mismatch", 421},
	    {"GET / HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n", "host_mismatch", 421},
	    {"GET / HTTP/1.1\r\n\r\n", "host_mismatch", 421},
	    {"GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: other.example.com\r\n\r\n",
	     "host_mismatch", 421},
	    {"GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: api.example.com\r\n\r\n",
	     "host_mismatch", 421},
	    {"GET https://other.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
	     "inner_target", 400},
	    {"CONNECT other.example.com:443 HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
	     "inner_target", 400},
	    /* folded: the continuation could carry a second Authorization */
	    {"GET / HTTP/1.1\r\nHost: api.example.com\r\nX-A: 1\r\n Authorization: x\r\n\r\n",
	     "obs_fold", 400},
	    {"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n",
	     "transfer_encoding_unsupported", 400},
	    {"POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 1\r\n"
	     "Content-Length: 1\r\n\r\n",
	     "content_length_duplicate", 400},
	    {"GET / HTTP/2\r\nHost: api.example.com\r\n\r\n", "malformed_request", 400},
	    /* TRACE's answer would echo the real header back to the agent */
	    {"TRACE / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "inner_method", 405},
	    {"TRACK / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "inner_method", 405},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ag_egress_inject_result res;
		char *out;
		if (rewrite(t[i].head, &res, &out) != -1 || !res.detail ||
		    strcmp(res.detail, t[i].detail) != 0 || res.status != t[i].status)
			fail_msg("case %zu: %s", i, res.detail ? res.detail : "(accepted)");
		assert_null(out);
	}
}

static void test_rewrite_oversized(void **state)
{
	(void)state;
	/* a head at the parser's bound, plus the injected line past the buffer's */
	size_t n = AG_GW_HEADER_MAX - 64;
	char *h = ag_xmalloc(n + 1);
	int o = snprintf(h, n + 1, "GET / HTTP/1.1\r\nHost: " HOST "\r\nX-Pad: ");
	memset(h + o, 'a', n - (size_t)o - 4);
	memcpy(h + n - 4, "\r\n\r\n", 5);
	struct ag_buf b = AG_BUF_INIT(AG_GW_HEADER_MAX - 32, "test.inject");
	struct ag_egress_inject_result res;
	assert_int_equal(
	    ag_egress_inject_rewrite(h, n, HOST, 443, "Authorization", "Bearer " SECRET, &b, &res),
	    -1);
	assert_string_equal(res.detail, "header_too_large");
	assert_int_equal(res.status, 431);
	ag_buf_release(&b);
	free(h);
}

static void test_body_is_not_a_header(void **state)
{
	(void)state;
	/* the body follows the head: the rewrite sees the head only, and the
	 * Content-Length frames where the next head starts */
	const char *stream =
	    "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 40\r\n\r\n"
	    "Authorization: Bearer smuggled-in-body\r\n";
	const char *end = strstr(stream, "\r\n\r\n") + 4;
	char *h = ag_xstrndup(stream, (size_t)(end - stream));
	struct ag_buf b = AG_BUF_INIT(AG_GW_HEADER_MAX, "test.inject");
	struct ag_egress_inject_result res;
	assert_int_equal(ag_egress_inject_rewrite(h, strlen(h), HOST, 443, "Authorization",
						  "Bearer " SECRET, &b, &res),
			 0);
	assert_int_equal(res.content_length, (int64_t)strlen(end));
	assert_null(memmem(b.buf, b.len, "smuggled", 8));
	ag_buf_release(&b);
	free(h);
}

static int policy(const char *rules, struct ag_egress_policy **p, struct ag_error **err)
{
	char doc[4096];
	snprintf(doc, sizeof(doc),
		 "{\"schema\":\"agentguard.live-study-egress-policy\",\"schema_version\":1,"
		 "\"destinations\":[%s]}",
		 rules);
	return ag_egress_policy_parse(doc, strlen(doc), p, err);
}

static void test_policy_inject_rules(void **state)
{
	(void)state;
	struct ag_egress_policy *p = NULL;
	struct ag_error *err = NULL;
	assert_int_equal(
	    policy("{\"host\":\"API.example.com\",\"port\":443,\"inject\":{\"header\":"
		   "\"Authorization\",\"prefix\":\"Bearer \",\"from_env\":\"REAL_KEY\","
		   "\"placeholder_env\":\"OPENAI_API_KEY\"}},{\"host\":\"b.example.com\",\"port\":"
		   "443}",
		   &p, &err),
	    0);
	assert_int_equal(p->n_inject, 1);
	const struct ag_egress_rule *r = ag_egress_policy_find(p, "api.example.com", 443);
	assert_non_null(r->inject);
	assert_string_equal(r->inject->prefix, "Bearer ");
	assert_null(ag_egress_policy_find(p, "b.example.com", 443)->inject);
	/* the digest is Python's json.dumps(sort_keys=True) digest of the
	 * normalised policy, the inject included */
	assert_string_equal(p->digest,
			    "2f9ea1e53e9ad091fa20b35ea7f885328823202e7465f765afdc762186f422c7");
	ag_egress_policy_free(p);
	/* without the inject: the digest a policy had before injection existed */
	assert_int_equal(policy("{\"host\":\"api.example.com\",\"port\":443},{\"host\":"
				"\"b.example.com\",\"port\":443}",
				&p, &err),
			 0);
	assert_string_equal(p->digest,
			    "9ece4e443af660a935ff1321c405ea14c9afc52d9a29dfd0ee9c981c6e28318d");
	ag_egress_policy_free(p);

	static const struct {
		const char *rule, *reason, *key;
	} bad[] = {
	    {"{\"host\":\"a.example.com\",\"port\":8443,\"inject\":{\"header\":\"X-Api-Key\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.port", "destinations[0].port"},
	    {"{\"host\":\"203.0.113.9\",\"port\":443,\"test_only\":true,\"test_only_ip_literal\":"
	     "true,\"inject\":{\"header\":\"X-Api-Key\",\"from_env\":\"K\",\"placeholder_env\":"
	     "\"P\"}}",
	     "egress.policy.inject.host", "destinations[0].host"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"Host\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.header", "destinations[0].inject.header"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X Key\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.header", "destinations[0].inject.header"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"prefix\":\"a\\nb\",\"from_env\":\"K\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.prefix", "destinations[0].inject.prefix"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.source", "destinations[0].inject.from_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"from_file\":\"k\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.source", "destinations[0].inject.from_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_file\":\"../k\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.source", "destinations[0].inject.from_file"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_file\":\"/etc/k\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.source", "destinations[0].inject.from_file"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"1K\",\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.source", "destinations[0].inject.from_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P-Q\"}}",
	     "egress.policy.inject.placeholder_env", "destinations[0].inject.placeholder_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\"}}",
	     "egress.policy.missing", "destinations[0].inject.placeholder_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"api_key\"}}",
	     "egress.policy.inject.placeholder_env", "destinations[0].inject.placeholder_env"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"HTTPS_PROXY\"}}",
	     "egress.policy.inject.placeholder_env", "destinations[0].inject.placeholder_env"},

	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P\",\"value\":\"x\"}}",
	     "egress.policy.inject.unknown_key", "destinations[0].inject"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":\"Authorization\"}",
	     "egress.policy.inject.type", "destinations[0].inject"},
	    {"{\"host\":\"a.example.com\",\"port\":443,\"inject\":{\"header\":\"X-K\","
	     "\"from_env\":\"K\",\"placeholder_env\":\"P\"}},{\"host\":\"b.example.com\","
	     "\"port\":443,\"inject\":{\"header\":\"X-K\",\"from_env\":\"K\","
	     "\"placeholder_env\":\"P\"}}",
	     "egress.policy.inject.duplicate_placeholder", "destinations[1].inject"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = NULL;
		err = NULL;
		if (policy(bad[i].rule, &p, &err) != -1 || !err ||
		    strcmp(err->reason, bad[i].reason) != 0 || strcmp(err->key, bad[i].key) != 0)
			fail_msg("case %zu: %s %s", i, err ? err->reason : "(accepted)",
				 err && err->key ? err->key : "");
		ag_error_free(err);
		ag_egress_policy_free(p);
	}
}

/* A leaf for HOST signed by CA (PEMs), verified against CA alone: the
 * X509_V_ result. */
static int verify_leaf(const struct ag_egress_ca *ca, const char *host)
{
	BIO *b = BIO_new_mem_buf(ca->cert_pem, -1);
	X509 *cax = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	b = BIO_new_mem_buf(ca->key_pem, -1);
	EVP_PKEY *cak = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_non_null(cax);
	assert_non_null(cak);
	assert_int_equal(X509_check_private_key(cax, cak), 1);
	EVP_PKEY *lk = ag_egress_key_new();
	X509 *leaf = ag_egress_leaf_new(cax, cak, lk, host);
	assert_non_null(leaf);
	X509_STORE *st = X509_STORE_new();
	X509_STORE_add_cert(st, cax);
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	int ok = X509_verify_cert(ctx);
	int e = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(leaf);
	EVP_PKEY_free(lk);
	EVP_PKEY_free(cak);
	X509_free(cax);
	return e;
}

/* The trial CA: a CA for path length 0 that signs certificates only, its
 * key the certificate's, its leaves valid for the inject hosts and for
 * nothing else (name constraints), its key text zeroed when released. */
static void test_trial_ca(void **state)
{
	(void)state;
	struct ag_egress_ca ca;
	struct ag_error *err = NULL;
	const char *names[] = {"api.example.com", "b.example.org"};
	assert_int_equal(ag_egress_ca_new("trial-7", names, 2, 3600, &ca, &err), 0);
	assert_non_null(strstr(ca.key_pem, "PRIVATE KEY"));
	assert_int_equal(strlen(ca.cert_sha256), 64);
	BIO *b = BIO_new_mem_buf(ca.cert_pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_non_null(x);
	assert_true(X509_get_extension_flags(x) & EXFLAG_CA);
	assert_int_equal(X509_get_pathlen(x), 0);
	assert_int_equal(X509_get_key_usage(x), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	char cn[128];
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn));
	assert_string_equal(cn, "AgentGuard trial CA trial-7");
	assert_true(X509_cmp_time(X509_get0_notAfter(x), NULL) > 0);
	time_t in2h = time(NULL) + 7200;
	assert_true(X509_cmp_time(X509_get0_notAfter(x), &in2h) < 0);
	X509_free(x);
	assert_int_equal(verify_leaf(&ca, "api.example.com"), X509_V_OK);
	assert_int_equal(verify_leaf(&ca, "b.example.org"), X509_V_OK);
	assert_int_equal(verify_leaf(&ca, "other.example.com"), X509_V_ERR_PERMITTED_VIOLATION);
	ag_egress_ca_release(&ca);
	/* a trial id and a host longer than a CN may be (64 characters) */
	const char *long_host[] = {
	    "a-very-long-label-of-the-api-host-name-for-the-test.of.example.com"};
	assert_true(strlen(long_host[0]) > 64);
	assert_int_equal(
	    ag_egress_ca_new(
		"trial-"
		"0123456789012345678901234567890123456789012345678901234567890123456789",
		long_host, 1, 600, &ca, &err),
	    0);
	assert_int_equal(verify_leaf(&ca, long_host[0]), X509_V_OK);
	ag_egress_ca_release(&ca);
	assert_null(ca.key_pem);
	assert_null(ca.cert_pem);
	/* no names, too many: refused */
	assert_int_equal(ag_egress_ca_new("t", names, 0, 60, &ca, &err), -1);
	assert_string_equal(err->reason, "egress.ca.generate");
	ag_error_free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rewrite_replaces_credentials),
	    cmocka_unit_test(test_rewrite_refusals),
	    cmocka_unit_test(test_rewrite_oversized),
	    cmocka_unit_test(test_body_is_not_a_header),
	    cmocka_unit_test(test_policy_inject_rules),
	    cmocka_unit_test(test_trial_ca),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
