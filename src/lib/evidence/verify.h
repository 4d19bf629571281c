/*
 * verify.h: `agentguard evidence verify`: is a contained-run artifact what
 * AgentGuard wrote, unmodified, and still linked into its runs root's chain?
 *
 * Checks, in order, each failing closed with its reason token:
 *   read       O_NOFOLLOW regular file <= AG_VERIFY_ARTIFACT_MAX_BYTES
 *              (evidence.read.symlink/.not_regular/.io/.too_large)
 *   parse      one JSON object, duplicate keys rejected (evidence.parse)
 *   version    schema agentguard.contained-run, schema_version 1 (evidence.version)
 *   bounds     artifact bounds, then containment_evidence against
 *              ag_canon_containment_bounds incl. 32 KiB serialized
 *              (evidence.depth/.items/.string/.number/.key/.size)
 *   structure  the shipped JSON Schemas, interpreted in C (evidence.schema.*)
 *   canonical  re-serialized canonically + "\n" equals the file bytes
 *              (evidence.canonical)
 *   identity   bound image id == local image id, identity_consistent agrees,
 *              registry digest in the configured repository
 *              (evidence.image_identity)
 *   privacy    no string changes under ag_redact(NULL) beyond control-char
 *              escaping: private host path (evidence.host_path) or credential
 *              shape (evidence.secret); no NUL inside a string (evidence.nul)
 *   seal       contained-run.seal.json is a well-formed v2 seal, names this
 *              run and artifact, and artifact_sha256 is the file's SHA-256
 *              (evidence.seal.missing/.malformed/.run_id/.mismatch)
 *   signature  contained-run.seal.sig is a valid Ed25519 signature of the
 *              seal's exact bytes by a trusted key (seal.h;
 *              evidence.signature.missing/.malformed/.untrusted/.invalid)
 *   chain      previous run exists in the same runs root and its seal hashes
 *              to previous.seal_sha256 (evidence.chain.previous_missing,
 *              evidence.chain.broken); the chain head exists, names an
 *              existing run whose seal it hashes to (this seal, when it
 *              names this run)
 *              (evidence.chain.head). Skipped with opts.standalone (one
 *              archived run on its own): rep.chain_checked stays false.
 *   patch      (also with standalone) when the artifact records patch.status
 *              "written": the run's changes.patch is an O_NOFOLLOW regular
 *              file of at most AG_PATCH_MAX_BYTES whose size and SHA-256 are
 *              the recorded ones (evidence.patch.missing/.symlink/
 *              .not_regular/.too_large/.mismatch); otherwise nothing to check
 */
#ifndef AG_VERIFY_H
#define AG_VERIFY_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;

#define AG_VERIFY_CHECKS 13

struct ag_verify_report {
	const char *passed[AG_VERIFY_CHECKS]; /* names of the checks that passed, in order */
	size_t npassed;
	const char *failed; /* name of the check that failed, or NULL */
	json_t *artifact;   /* the parsed artifact once it parsed (caller decrefs) */
	char *bytes;	    /* the artifact's exact bytes (caller frees) */
	size_t len;
	char *run_id;	    /* the artifact's run id (caller frees), once parsed */
	char *signer;	    /* the signature's key fingerprint, once the signature file parsed */
	char *chain_start;  /* the seal's chain_start token (NULL when linked) */
	bool chain_checked; /* the chain check ran and passed */
};

struct ag_trust;
struct ag_verify_opts {
	const struct ag_trust *trust; /* the only keys whose signatures count */
	bool standalone;	      /* verify one run alone: no chain check */
};

/*
 * The egress_manifest check belongs to the egress layer, which verify does
 * not depend on: the layer above (the CLI, at start) plugs it in once,
 * before any thread starts. The check gets the run directory and the
 * parsed artifact, returns 0 (a run that is no study run passes) or -1 with
 * *err. Without one, an artifact that records a study run fails closed
 * (evidence.egress_manifest.unchecked); any other passes.
 */
typedef int (*ag_verify_artifact_check_fn)(int run_fd, const json_t *artifact,
					   struct ag_error **err);
void ag_verify_set_egress_check(ag_verify_artifact_check_fn fn);

/* The check names, in order (for --json and docs). */
extern const char *const ag_verify_check_names[AG_VERIFY_CHECKS];

/*
 * Verifies the artifact at `path`: a run directory (its contained-run.json)
 * or the artifact file itself; the seal is beside it, the runs root is the
 * run directory's parent. Returns 0 when every check passed; -1 with *err
 * (reason as above, AG_E_UNVERIFIED / AG_E_IO / AG_E_LIMIT) otherwise. The
 * report is filled either way; release it with ag_verify_report_release.
 */
int ag_evidence_verify(const char *path, const struct ag_verify_opts *o,
		       struct ag_verify_report *rep, struct ag_error **err);
/* The same, on an open run directory (its contained-run.json); the chain,
 * unless standalone, is looked up in the directory's parent. */
int ag_evidence_verify_at(int run_fd, const struct ag_verify_opts *o, struct ag_verify_report *rep,
			  struct ag_error **err);
void ag_verify_report_release(struct ag_verify_report *rep);

/* Only the in-memory checks (parse .. privacy) on bytes already read. */
int ag_evidence_verify_bytes(const char *bytes, size_t len, struct ag_verify_report *rep,
			     struct ag_error **err);

/*
 * The run's changes.patch, checked against the (verified) artifact's patch
 * record exactly as the patch check does; with out, its bytes are handed to
 * the caller (the same bytes that were hashed). A run without a written
 * patch is evidence.patch.none when out is given, fine otherwise.
 */
int ag_evidence_patch_read(int run_fd, const json_t *artifact, char **out, size_t *len,
			   struct ag_error **err);
/* Opens the run directory of `path` (a run directory or its artifact file). */
int ag_evidence_run_dir(const char *path, struct ag_error **err);

#endif
