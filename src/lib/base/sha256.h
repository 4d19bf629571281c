/*
 * sha256.h: SHA-256 through OpenSSL's libcrypto (EVP), hex-encoded.
 */
#ifndef AG_SHA256_H
#define AG_SHA256_H

#include "lib/base/ag.h"

#define AG_SHA256_HEX_LEN 64

struct ag_sha256;
struct ag_sha256 *ag_sha256_new(void);
void ag_sha256_update(struct ag_sha256 *h, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex, frees h. */
void ag_sha256_final_hex(struct ag_sha256 *h, char hex[AG_SHA256_HEX_LEN + 1]);
void ag_sha256_hex(const void *data, size_t n, char hex[AG_SHA256_HEX_LEN + 1]);

#endif
