/*
 * seal.h: tamper evidence for contained-run artifacts, signed.
 *
 * Each run writes, beside its artifact, a seal: the SHA-256 of the
 * artifact's exact bytes, a link to the previous run's seal in the same
 * runs root, and the fingerprint of the key that signs it; and a signature
 * file: an Ed25519 signature of the seal's exact bytes (sign.h). The runs
 * root keeps a chain head (the newest run and the SHA-256 of its seal),
 * updated under a lock, so runs form a hash chain: editing an artifact
 * breaks its seal; editing a seal breaks its signature; deleting or editing
 * a whole run breaks the next run's link or the head; and nobody without
 * the private key can write a run a verifier trusts.
 *
 *   <runs-root>/<run-id>/contained-run.seal.json
 *     {"artifact":"contained-run.json","artifact_sha256":"<hex>",
 *      "chain_start":null|"<reason>","key_fingerprint":"ed25519:<hex>",
 *      "previous":{"run_id":"...","seal_sha256":"<hex>"}|null,
 *      "run_id":"...","schema":"agentguard.evidence-seal","schema_version":2}
 *   <runs-root>/<run-id>/contained-run.seal.sig
 *     {"algorithm":"ed25519","key_fingerprint":"ed25519:<hex>",
 *      "schema":"agentguard.evidence-signature","schema_version":1,
 *      "seal_sha256":"<hex>","signature":"<base64 of 64 bytes>"}
 *   <runs-root>/agentguard-chain-head.json
 *     {"run_id":"...","schema":"agentguard.evidence-chain-head",
 *      "schema_version":1,"seal_sha256":"<hex>"}
 * All are canonical JSON (sorted keys, compact, ASCII) plus a newline; a
 * seal's SHA-256 is over its exact bytes, and so is its signature.
 *
 * previous is null exactly when chain_start names why the run starts a
 * chain segment instead of linking: "empty" (no head yet), or the head could
 * not be verified under the signing key ("head_malformed", "head_missing_run",
 * "head_seal_mismatch", "head_unsigned", "head_foreign_key",
 * "head_bad_signature"), or the run was sealed outside the chain because the
 * lock could not be taken ("lock_timeout", "cancelled"; the head is left
 * as it was).
 */
#ifndef AG_SEAL_H
#define AG_SEAL_H

#include "lib/base/ag.h"

#include <jansson.h>
#include <signal.h>

struct ag_error;
struct ag_sign_key;
struct ag_trust;

#define AG_SEAL_FILE "contained-run.seal.json"
#define AG_SIG_FILE "contained-run.seal.sig"
#define AG_CHAIN_HEAD_FILE "agentguard-chain-head.json"
#define AG_CHAIN_LOCK_FILE ".agentguard-chain.lock"
#define AG_SEAL_SCHEMA_VERSION 2

struct ag_seal_opts {
	const struct ag_sign_key *key; /* the private key that signs (required) */
	unsigned lock_wait_ms;	       /* 0: AG_CHAIN_LOCK_WAIT_MS */
	volatile sig_atomic_t *cancel; /* a signal number ends the lock wait; may be NULL */
};

struct ag_seal_result {
	const char *chain_start; /* static: NULL when linked to the previous run, else why not */
};

/*
 * Seals and signs run `run_id` (a directory of runs_root_fd holding
 * `artifact_name`): under an exclusive lock of the runs root (waited for at
 * most lock_wait_ms, ended early by *cancel), reads the chain head, links
 * to it only when its run's seal is signed by o->key, writes seal and
 * signature, then moves the head to this run. Reasons:
 * evidence.seal.io, evidence.seal.lock_timeout, evidence.seal.cancelled
 * (nothing written in those two cases), evidence.sign.
 */
int ag_seal_run(int runs_root_fd, const char *run_id, const char *artifact_name,
		const struct ag_seal_opts *o, struct ag_seal_result *res, struct ag_error **err);

/*
 * Seals and signs a run without the chain (no lock, head untouched):
 * previous null, chain_start = reason (a static token). For a run that
 * could not take the lock, so its evidence is still attributable.
 */
int ag_seal_run_unchained(int runs_root_fd, const char *run_id, const char *artifact_name,
			  const struct ag_sign_key *key, const char *reason, struct ag_error **err);

/*
 * Checks the signature file in run_fd against the exact seal bytes: well
 * formed, naming the seal's SHA-256 and a key in `trust`, and a valid
 * Ed25519 signature by it. *fpr (optional) gets the signer's fingerprint
 * (heap) once the file parsed. Reasons: evidence.signature.missing,
 * .malformed, .untrusted (signed by a key not given), .invalid.
 */
int ag_seal_check_signature(int run_fd, const char *seal, size_t seal_len,
			    const struct ag_trust *trust, char **fpr, struct ag_error **err);

/* Small helpers shared with verify.c. */
/* The JSON object in buf when buf is exactly its canonical form + "\n"
 * (containment bounds, no duplicate keys); else NULL. */
json_t *ag_seal_load_canon(const char *buf, size_t len);
/* 64 lowercase hex digits. */
bool ag_seal_is_hex64(const char *s);
/* A key fingerprint: "ed25519:" and 64 lowercase hex digits. */
bool ag_seal_is_fingerprint(const char *s);

#endif
