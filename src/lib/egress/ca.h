/*
 * ca.h: the per-trial certificate authority of credential injection
 * (issue 21, docs/study-egress.md "Credential injection"), libcrypto only.
 *
 * AgentGuard makes one CA per trial (ag_egress_ca_new): an EC P-256 key
 * that lives in memory and in the gateway's inject file only, and a
 * self-signed certificate "AgentGuard trial CA <trial id>" that is
 * critical CA:TRUE with path length 0, keyCertSign only, valid from five
 * minutes ago for the trial's lifetime, and name-constrained to exactly
 * the inject rules' host names: even a leaked key can sign for no other
 * name. The gateway signs one leaf per inject host with it
 * (ag_egress_leaf_new): CA:FALSE, serverAuth, the one DNS name.
 */
#ifndef AG_EGRESS_CA_H
#define AG_EGRESS_CA_H

#include "lib/base/ag.h"
#include "lib/base/sha256.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

struct ag_error;

struct ag_egress_ca {
	char *cert_pem; /* the certificate (public: evidence and the agent) */
	char *key_pem;	/* the private key: the gateway's inject file only */
	char cert_sha256[AG_SHA256_HEX_LEN + 1]; /* of the certificate's DER */
};

/* NAMES: the inject hosts (1..AG_EGRESS_INJECT_MAX DNS names).
 * Reason on failure: egress.ca.generate (AG_E_INTERNAL). */
int ag_egress_ca_new(const char *trial_id, const char *const *names, size_t n_names,
		     int64_t lifetime_secs, struct ag_egress_ca *out, struct ag_error **err);
/* Zeroes the key's text, frees both. */
void ag_egress_ca_release(struct ag_egress_ca *ca);

/* A leaf for HOST with LEAF_KEY's public key, signed by CA_KEY, valid
 * until the CA's end. NULL on failure. */
X509 *ag_egress_leaf_new(X509 *ca, EVP_PKEY *ca_key, EVP_PKEY *leaf_key, const char *host);

/* OUT: the SHA-256 (hex) of X's DER encoding. 0, or -1. */
int ag_egress_cert_sha256(X509 *x, char out[AG_SHA256_HEX_LEN + 1]);

/* A fresh EC P-256 key, or NULL. */
EVP_PKEY *ag_egress_key_new(void);

#endif
