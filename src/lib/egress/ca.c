/*
 * ca.c: the per-trial CA and its leaves (ca.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/ca.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

EVP_PKEY *ag_egress_key_new(void)
{
	return EVP_EC_gen("P-256");
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return -1;
	int ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok ? 0 : -1;
}

static int random_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok = bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
		 BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	return ok ? 0 : -1;
}

static int set_name(X509_NAME *n, const char *cn)
{
	return X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
					  0)
		   ? 0
		   : -1;
}

static char *pem_of(int (*write)(BIO *, void *), void *obj)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;
	if (b && write(b, obj) == 1) {
		char *p;
		long n = BIO_get_mem_data(b, &p);
		if (n > 0)
			out = ag_xstrndup(p, (size_t)n);
	}
	BIO_free(b);
	return out;
}

static int write_cert(BIO *b, void *x)
{
	return PEM_write_bio_X509(b, x);
}

static int write_key(BIO *b, void *k)
{
	return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

int ag_egress_cert_sha256(X509 *x, char out[AG_SHA256_HEX_LEN + 1])
{
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);
	if (n > 0)
		ag_sha256_hex(der, (size_t)n, out);
	OPENSSL_free(der);
	return n > 0 ? 0 : -1;
}

int ag_egress_ca_new(const char *trial_id, const char *const *names, size_t n_names,
		     int64_t lifetime_secs, struct ag_egress_ca *out, struct ag_error **err)
{
	*out = (struct ag_egress_ca){0};
	EVP_PKEY *key = ag_egress_key_new();
	X509 *x = X509_new();
	char cn[128], nc[AG_EGRESS_INJECT_MAX * (AG_EGRESS_HOST_MAX + 20) + 32];
	/* a CN holds at most 64 characters: the trial id is cut to fit */
	snprintf(cn, sizeof(cn), "AgentGuard trial CA %.44s", trial_id ? trial_id : "");
	size_t o = (size_t)snprintf(nc, sizeof(nc), "critical");
	for (size_t i = 0; i < n_names && i < AG_EGRESS_INJECT_MAX; i++)
		o += (size_t)snprintf(nc + o, sizeof(nc) - o, ",permitted;DNS:%s", names[i]);
	int rc = -1;
	if (!key || !x || n_names == 0 || n_names > AG_EGRESS_INJECT_MAX ||
	    !X509_set_version(x, 2) || random_serial(x) < 0 ||
	    set_name(X509_get_subject_name(x), cn) < 0 ||
	    !X509_set_issuer_name(x, X509_get_subject_name(x)) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -300) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)lifetime_secs) ||
	    !X509_set_pubkey(x, key) ||
	    add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(x, x, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(x, x, NID_name_constraints, nc) < 0 || !X509_sign(x, key, EVP_sha256()))
		goto out;
	out->cert_pem = pem_of(write_cert, x);
	out->key_pem = pem_of(write_key, key);
	if (!out->cert_pem || !out->key_pem || ag_egress_cert_sha256(x, out->cert_sha256) < 0)
		goto out;
	rc = 0;
out:
	X509_free(x);
	EVP_PKEY_free(key);
	if (rc < 0) {
		ag_egress_ca_release(out);
		return ag_err(err, AG_E_INTERNAL, 0, "egress.ca.generate",
			      "cannot make the trial's certificate authority");
	}
	return 0;
}

void ag_egress_ca_release(struct ag_egress_ca *ca)
{
	if (ca->key_pem) {
		explicit_bzero(ca->key_pem, strlen(ca->key_pem));
		free(ca->key_pem);
	}
	free(ca->cert_pem);
	*ca = (struct ag_egress_ca){0};
}

X509 *ag_egress_leaf_new(X509 *ca, EVP_PKEY *ca_key, EVP_PKEY *leaf_key, const char *host)
{
	X509 *x = X509_new();
	/* the name is the SAN; the CN repeats it when it fits (64 characters),
	 * else the subject is empty and the SAN critical (RFC 5280 4.2.1.6) */
	bool cn = strlen(host) <= 64;
	char san[AG_EGRESS_HOST_MAX + 20];
	snprintf(san, sizeof(san), "%sDNS:%s", cn ? "" : "critical,", host);
	if (!x || !X509_set_version(x, 2) || random_serial(x) < 0 ||
	    (cn && set_name(X509_get_subject_name(x), host) < 0) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -300) ||
	    !X509_set1_notAfter(x, X509_get0_notAfter(ca)) || !X509_set_pubkey(x, leaf_key) ||
	    add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, ca, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, ca, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, ca, NID_subject_alt_name, san) < 0 ||
	    add_ext(x, ca, NID_authority_key_identifier, "keyid:always") < 0 ||
	    !X509_sign(x, ca_key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}
