#include "lib/base/ag.h"
#include "lib/base/sha256.h"

#include <openssl/evp.h>

struct ag_sha256 {
	EVP_MD_CTX *ctx;
};

struct ag_sha256 *ag_sha256_new(void)
{
	struct ag_sha256 *h = ag_xcalloc(1, sizeof(*h));
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		abort();
	return h;
}

void ag_sha256_update(struct ag_sha256 *h, const void *data, size_t n)
{
	if (n && EVP_DigestUpdate(h->ctx, data, n) != 1)
		abort();
}

void ag_sha256_final_hex(struct ag_sha256 *h, char hex[AG_SHA256_HEX_LEN + 1])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	if (EVP_DigestFinal_ex(h->ctx, md, &mdlen) != 1 || mdlen != 32)
		abort();
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

void ag_sha256_hex(const void *data, size_t n, char hex[AG_SHA256_HEX_LEN + 1])
{
	struct ag_sha256 *h = ag_sha256_new();
	ag_sha256_update(h, data, n);
	ag_sha256_final_hex(h, hex);
}
