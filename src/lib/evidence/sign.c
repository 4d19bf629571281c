#include "lib/base/ag.h"
#include "lib/evidence/sign.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

struct ag_sign_key {
	EVP_PKEY *pkey;
	bool has_private;
	char fpr[AG_SIGN_FPR_LEN + 1];
};

static const struct ag_read_reasons key_why = {"evidence.key.link", "evidence.key.not_regular",
					       "evidence.key.io", "evidence.key.too_large"};

void ag_sign_key_free(struct ag_sign_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

const char *ag_sign_key_fingerprint(const struct ag_sign_key *k)
{
	return k->fpr;
}

static int wrap(EVP_PKEY *p, bool priv, struct ag_sign_key **out, struct ag_error **err)
{
	unsigned char raw[32];
	size_t rl = sizeof(raw);
	if (!p || EVP_PKEY_get_base_id(p) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(p, raw, &rl) != 1 || rl != sizeof(raw)) {
		EVP_PKEY_free(p);
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.format",
			      "not an Ed25519 key in PEM form");
	}
	struct ag_sign_key *k = ag_xcalloc(1, sizeof(*k));
	k->pkey = p;
	k->has_private = priv;
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(raw, rl, hex);
	snprintf(k->fpr, sizeof(k->fpr), "ed25519:%s", hex);
	*out = k;
	return 0;
}

/* Splits path into its directory (heap) and last component (borrowed). */
static char *dir_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	*base = slash ? slash + 1 : path;
	if (!slash)
		return ag_xstrdup(".");
	return ag_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* The directory holding a key: ours (or root's), and nobody else can
 * replace entries in it (no group/other write unless sticky). */
static int check_dir(int dfd, struct ag_error **err)
{
	struct stat st;
	if (fstat(dfd, &st) < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.key.dir",
			      "cannot stat the key's directory");
	bool owner_ok = st.st_uid == geteuid() || st.st_uid == 0;
	bool write_ok = !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
	if (!owner_ok || !write_ok)
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.dir",
			      "the signing key's directory is %s",
			      owner_ok ? "writable by other users" : "owned by another user");
	return 0;
}

static int open_dir(const char *dir, struct ag_error **err)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ag_err(err, errno == ENOENT ? AG_E_CONFIG : AG_E_IO, errno,
			      errno == ENOENT ? "evidence.key.missing" : "evidence.key.dir",
			      "cannot open the signing key's directory: %s", strerror(errno));
	if (check_dir(dfd, err) < 0) {
		close(dfd);
		return -1;
	}
	return dfd;
}

/* mkdir -p with 0700 for every directory it creates; no links followed. */
static int make_dirs(const char *dir, struct ag_error **err)
{
	int fd = ag_open_or_make_dirs(dir, 0700);
	if (fd < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.key.dir",
			      "cannot create or open the signing key's directory (a link or not a "
			      "directory?): %s",
			      strerror(errno));
	close(fd);
	return 0;
}

static int write_new_key(int dfd, const char *base, struct ag_error **err)
{
	EVP_PKEY *p = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	BIO *b = BIO_new(BIO_s_mem());
	char *pem = NULL;
	long n = 0;
	int rc = -1;
	if (!p || !b || PEM_write_bio_PrivateKey(b, p, NULL, NULL, 0, NULL, NULL) != 1 ||
	    (n = BIO_get_mem_data(b, &pem)) <= 0) {
		ag_err(err, AG_E_INTERNAL, 0, "evidence.key.generate",
		       "libcrypto could not generate an Ed25519 key");
	} else {
		rc = ag_write_file_atomic_at(dfd, base, "the signing key", pem, (size_t)n, 0600,
					     true, err);
		if (rc < 0 && (*err)->sys_errno == EEXIST) {
			ag_error_free(*err);
			*err = NULL;
			rc =
			    ag_err(err, AG_E_CONFIG, EEXIST, "evidence.key.exists",
				   "a file already exists where the key would go; not overwritten");
		}
		OPENSSL_cleanse(pem, (size_t)n);
	}
	BIO_free(b);
	EVP_PKEY_free(p);
	return rc;
}

int ag_sign_key_generate(const char *path, struct ag_error **err)
{
	const char *base;
	_cleanup_free_ char *dir = dir_of(path, &base);
	if (!*base)
		return ag_err(err, AG_E_USAGE, 0, "evidence.key.path",
			      "the key path names no file");
	_cleanup_close_ int dfd = open_dir(dir, err);
	if (dfd < 0)
		return -1;
	return write_new_key(dfd, base, err);
}

static int read_key_at(int dfd, const char *base, char **buf, size_t *len, struct ag_error **err)
{
	_cleanup_close_ int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return ag_err(err, AG_E_CONFIG, errno, "evidence.key.link",
				      "the signing key is a symbolic link");
		return ag_err(err, errno == ENOENT ? AG_E_CONFIG : AG_E_IO, errno,
			      errno == ENOENT ? "evidence.key.missing" : "evidence.key.io",
			      "cannot open the signing key: %s", strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.key.io",
			      "cannot stat the signing key");
	if (!S_ISREG(st.st_mode))
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.not_regular",
			      "the signing key is not a regular file");
	if (st.st_nlink != 1)
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.link",
			      "the signing key has other hard links");
	if (st.st_uid != geteuid())
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.owner",
			      "the signing key is owned by another user");
	if (st.st_mode & 077)
		return ag_err(err, AG_E_CONFIG, 0, "evidence.key.mode",
			      "the signing key is accessible to group or others (mode %04o); it "
			      "must be 0600",
			      (unsigned)(st.st_mode & 07777));
	return ag_read_fd(fd, "the signing key", AG_SIGN_KEY_MAX_BYTES, &key_why, buf, len, err);
}

int ag_sign_key_load(const char *path, unsigned flags, struct ag_sign_key **out, bool *created,
		     struct ag_error **err)
{
	*out = NULL;
	if (created)
		*created = false;
	const char *base;
	_cleanup_free_ char *dir = dir_of(path, &base);
	if (!*base)
		return ag_err(err, AG_E_USAGE, 0, "evidence.key.path",
			      "the key path names no file");
	if ((flags & AG_SIGN_CREATE) && make_dirs(dir, err) < 0)
		return -1;
	_cleanup_close_ int dfd = open_dir(dir, err);
	if (dfd < 0)
		return -1;
	char *buf = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	if (read_key_at(dfd, base, &buf, &len, &e) < 0) {
		if (!(flags & AG_SIGN_CREATE) || strcmp(e->reason, "evidence.key.missing") != 0) {
			*err = e;
			return -1;
		}
		ag_error_free(e);
		e = NULL;
		if (write_new_key(dfd, base, err) < 0 ||
		    read_key_at(dfd, base, &buf, &len, err) < 0)
			return -1;
		if (created)
			*created = true;
	}
	BIO *b = BIO_new_mem_buf(buf, (int)len);
	EVP_PKEY *p = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return wrap(p, true, out, err);
}

int ag_sign_pubkey_load(const char *path, struct ag_sign_key **out, struct ag_error **err)
{
	*out = NULL;
	char *buf = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, path, "the public key", AG_SIGN_KEY_MAX_BYTES, &key_why, &buf,
			    &len, err) < 0)
		return -1;
	BIO *b = BIO_new_mem_buf(buf, (int)len);
	EVP_PKEY *p = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	free(buf);
	return wrap(p, false, out, err);
}

char *ag_sign_key_public_pem(const struct ag_sign_key *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *pem = NULL;
	long n = 0;
	char *s = NULL;
	if (b && PEM_write_bio_PUBKEY(b, k->pkey) == 1 && (n = BIO_get_mem_data(b, &pem)) > 0)
		s = ag_xstrndup(pem, (size_t)n);
	BIO_free(b);
	return s;
}

int ag_sign(const struct ag_sign_key *k, const void *msg, size_t len, char out[AG_SIGN_B64_LEN + 1],
	    struct ag_error **err)
{
	unsigned char sig[64];
	size_t sl = sizeof(sig);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = k->has_private && c && EVP_DigestSignInit(c, NULL, NULL, NULL, k->pkey) == 1 &&
		  EVP_DigestSign(c, sig, &sl, msg, len) == 1 && sl == sizeof(sig);
	EVP_MD_CTX_free(c);
	if (!ok)
		return ag_err(err, AG_E_INTERNAL, 0, "evidence.sign",
			      "libcrypto could not sign the seal");
	EVP_EncodeBlock((unsigned char *)out, sig, (int)sl);
	return 0;
}

bool ag_sign_check(const struct ag_sign_key *k, const void *msg, size_t len, const char *b64)
{
	if (!b64 || strlen(b64) != AG_SIGN_B64_LEN)
		return false;
	unsigned char sig[66]; /* 88 base64 chars decode to 66 bytes, 2 of padding */
	if (EVP_DecodeBlock(sig, (const unsigned char *)b64, AG_SIGN_B64_LEN) != 66 ||
	    b64[AG_SIGN_B64_LEN - 1] != '=' || b64[AG_SIGN_B64_LEN - 2] != '=')
		return false;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, k->pkey) == 1 &&
		  EVP_DigestVerify(c, sig, 64, msg, len) == 1;
	EVP_MD_CTX_free(c);
	return ok;
}

const struct ag_sign_key *ag_trust_find(const struct ag_trust *t, const char *fingerprint)
{
	for (size_t i = 0; t && fingerprint && i < t->n; i++)
		if (t->keys[i] && strcmp(t->keys[i]->fpr, fingerprint) == 0)
			return t->keys[i];
	return NULL;
}
