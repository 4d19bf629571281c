#include "lib/base/ag.h"
#include "lib/evidence/attest.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/sign.h"

#include <jansson.h>

#define ATTEST_SCHEMA "agentguard.file-signature"

int ag_attest_sign(int dirfd, const char *name, const char *sig_name, const void *bytes, size_t len,
		   const struct ag_sign_key *key, struct ag_error **err)
{
	char hex[AG_SHA256_HEX_LEN + 1];
	char b64[AG_SIGN_B64_LEN + 1];
	ag_sha256_hex(bytes, len, hex);
	if (ag_sign(key, bytes, len, b64, err) < 0)
		return -1;
	json_t *sig =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "algorithm", "ed25519", "file", name,
		      "file_sha256", hex, "key_fingerprint", ag_sign_key_fingerprint(key), "schema",
		      ATTEST_SCHEMA, "schema_version", 1, "signature", b64);
	char *s = NULL;
	size_t n = 0;
	int rc = sig ? ag_canon_dump(sig, &ag_canon_containment_bounds, &s, &n, err)
		     : ag_err(err, AG_E_INTERNAL, 0, "evidence.sign", "cannot build a signature");
	json_decref(sig);
	if (rc < 0)
		return -1;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	rc = ag_write_file_atomic_at(dirfd, sig_name, sig_name, nl, n + 1, 0644, false, err);
	free(nl);
	return rc;
}

static const struct ag_read_reasons file_why = {
    "evidence.attest.missing", "evidence.attest.missing", "evidence.attest.missing",
    "evidence.attest.malformed"};

/* The signature document's fields, checked; NULL (and *err) when malformed. */
static json_t *load_sig(int dirfd, const char *name, const char *sig_name, struct ag_error **err)
{
	char *buf = NULL;
	size_t len = 0;
	if (ag_read_file_at(dirfd, sig_name, sig_name, AG_SIGN_FILE_MAX_BYTES, &file_why, &buf,
			    &len, err) < 0)
		return NULL;
	json_t *s = ag_seal_load_canon(buf, len);
	free(buf);
	const char *alg = json_string_value(json_object_get(s, "algorithm"));
	const char *file = json_string_value(json_object_get(s, "file"));
	const char *fh = json_string_value(json_object_get(s, "file_sha256"));
	const char *kf = json_string_value(json_object_get(s, "key_fingerprint"));
	const char *sch = json_string_value(json_object_get(s, "schema"));
	const json_t *ver = json_object_get(s, "schema_version");
	if (!s || json_object_size(s) != 7 || !alg || strcmp(alg, "ed25519") != 0 || !file ||
	    strcmp(file, name) != 0 || !ag_seal_is_hex64(fh) || !ag_seal_is_fingerprint(kf) ||
	    !sch || strcmp(sch, ATTEST_SCHEMA) != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1 || !json_is_string(json_object_get(s, "signature"))) {
		json_decref(s);
		ag_err(err, AG_E_UNVERIFIED, 0, "evidence.attest.malformed",
		       "%s is not an " ATTEST_SCHEMA " v1 object for %s", sig_name, name);
		return NULL;
	}
	return s;
}

int ag_attest_check(int dirfd, const char *name, const char *sig_name, size_t max,
		    const struct ag_trust *trust, char **out, size_t *len, char **fpr,
		    struct ag_error **err)
{
	*out = NULL;
	*len = 0;
	if (fpr)
		*fpr = NULL;
	json_t *s = load_sig(dirfd, name, sig_name, err);
	if (!s)
		return -1;
	char *buf = NULL;
	size_t n = 0;
	if (ag_read_file_at(dirfd, name, name, max, &file_why, &buf, &n, err) < 0) {
		json_decref(s);
		return -1;
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(buf, n, hex);
	const char *kf = json_string_value(json_object_get(s, "key_fingerprint"));
	const struct ag_sign_key *k = ag_trust_find(trust, kf);
	int rc = 0;
	if (strcmp(hex, json_string_value(json_object_get(s, "file_sha256"))) != 0)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.attest.mismatch",
			    "%s was changed after it was signed", name);
	else if (!k)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.attest.untrusted",
			    "%s is signed by key %s, which is not trusted here", name, kf);
	else if (!ag_sign_check(k, buf, n, json_string_value(json_object_get(s, "signature"))))
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.attest.invalid",
			    "the Ed25519 signature of %s does not verify", name);
	if (rc == 0) {
		*out = buf;
		*len = n;
		if (fpr)
			*fpr = ag_xstrdup(kf);
	} else {
		free(buf);
	}
	json_decref(s);
	return rc;
}
