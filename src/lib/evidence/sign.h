/*
 * sign.h: Ed25519 signing keys for evidence (libcrypto), so a run's seal
 * says who wrote it, not only that it is self-consistent (docs/evidence.md,
 * "Signatures and keys").
 *
 * A private key is a PKCS#8 PEM file. Loading one refuses, each with its
 * reason token, a file that is a symlink or has more than one hard link
 * (evidence.key.link), is not a regular file (evidence.key.not_regular),
 * is not owned by the effective uid (evidence.key.owner), or is readable or
 * writable by group or others (evidence.key.mode); and a directory holding
 * it that another user could write (evidence.key.dir). A public key is a
 * SubjectPublicKeyInfo PEM file (`agentguard evidence public-key`).
 *
 * The fingerprint of a key is "ed25519:" + the SHA-256 (lowercase hex) of
 * its 32 raw public-key bytes. Signatures are Ed25519 (pure, no pre-hash)
 * over exact bytes, carried as standard base64 (88 characters).
 *
 * The library never reads the environment: callers resolve paths (the CLI
 * picks ${XDG_STATE_HOME:-$HOME/.local/state}/agentguard/signing-key.pem).
 */
#ifndef AG_SIGN_H
#define AG_SIGN_H

#include "lib/base/ag.h"

struct ag_error;
struct ag_sign_key; /* opaque: an Ed25519 key pair, or a public key alone */

#define AG_SIGN_FPR_LEN (8 + 64) /* "ed25519:" + 64 hex */
#define AG_SIGN_B64_LEN 88	 /* base64 of a 64-byte signature */

enum ag_sign_load_flags {
	AG_SIGN_CREATE = 1u << 0, /* create the key (and a 0700 directory) when missing */
};

/*
 * Loads the private key at `path` (checks above). With AG_SIGN_CREATE and
 * no file there, makes the missing directories (0700) and a new key (0600);
 * *created tells which happened (may be NULL). Without it, a missing file
 * fails with evidence.key.missing.
 */
int ag_sign_key_load(const char *path, unsigned flags, struct ag_sign_key **out, bool *created,
		     struct ag_error **err);
/* Writes a new private key to `path` (0600); refuses an existing file
 * (evidence.key.exists) and a missing or unsafe directory. */
int ag_sign_key_generate(const char *path, struct ag_error **err);
/* Loads a PEM public key (SubjectPublicKeyInfo, as `evidence public-key`
 * prints it); a symlink is refused. */
int ag_sign_pubkey_load(const char *path, struct ag_sign_key **out, struct ag_error **err);
void ag_sign_key_free(struct ag_sign_key *k);

const char *ag_sign_key_fingerprint(const struct ag_sign_key *k);
/* The public half as PEM text (heap), NULL if libcrypto fails. */
char *ag_sign_key_public_pem(const struct ag_sign_key *k);

/* Signs `msg` with a private key; out is AG_SIGN_B64_LEN + 1 bytes. */
int ag_sign(const struct ag_sign_key *k, const void *msg, size_t len, char out[AG_SIGN_B64_LEN + 1],
	    struct ag_error **err);
/* True when b64 is a valid signature of msg by k. */
bool ag_sign_check(const struct ag_sign_key *k, const void *msg, size_t len, const char *b64);

/* The keys a verifier trusts (borrowed pointers). */
struct ag_trust {
	const struct ag_sign_key *const *keys;
	size_t n;
};
/* The trusted key with this fingerprint, or NULL. */
const struct ag_sign_key *ag_trust_find(const struct ag_trust *t, const char *fingerprint);

#endif
