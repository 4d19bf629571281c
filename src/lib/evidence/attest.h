/*
 * attest.h: one small file signed on its own, outside the seal chain: the
 * file's exact bytes and, beside it, a signature file
 *
 *   {"algorithm":"ed25519","file":"<name>","file_sha256":"<hex>",
 *    "key_fingerprint":"ed25519:<hex>","schema":"agentguard.file-signature",
 *    "schema_version":1,"signature":"<base64 of 64 bytes>"}
 *
 * (canonical JSON plus a newline; the signature is over the file's exact
 * bytes). A run signs its marker with it, so `agentguard cleanup` can tell a
 * run AgentGuard started from a directory planted to look like one, and
 * cleanup signs the record of what it recovered (recover.h).
 *
 * Reasons: evidence.attest.missing, .malformed, .mismatch (the signature is
 * for other bytes), .untrusted (the key is not trusted here), .invalid.
 */
#ifndef AG_ATTEST_H
#define AG_ATTEST_H

#include "lib/base/ag.h"

struct ag_error;
struct ag_sign_key;
struct ag_trust;

/* Signs `bytes` (the content of dirfd/name) and writes sig_name atomically. */
int ag_attest_sign(int dirfd, const char *name, const char *sig_name, const void *bytes, size_t len,
		   const struct ag_sign_key *key, struct ag_error **err);

/*
 * Reads dirfd/name (a regular file, no link, at most max bytes) and checks
 * sig_name signs exactly those bytes with a trusted key. On success *out
 * (heap, NUL-terminated) and *len hold the bytes, and *fpr (optional, heap)
 * the signer's fingerprint.
 */
int ag_attest_check(int dirfd, const char *name, const char *sig_name, size_t max,
		    const struct ag_trust *trust, char **out, size_t *len, char **fpr,
		    struct ag_error **err);

#endif
