/*
 * images.h: stage-1 runtime images (docs/runtime-images.md).
 *
 * Four pieces, all fail closed with a named reason:
 *  - the Codex input check: package-lock.json must hold exactly the two
 *    pinned entries, and the two tarballs npm used must hash (SHA-512,
 *    base64) to the lock AND to constants compiled in here;
 *  - canonical identities: a rootfs digest over an exported filesystem tar
 *    (members sorted, mtimes excluded), a canonical runtime config from the
 *    image inspection, and the canonical image identity over both;
 *  - the freeze manifest agentguard.stage1-runtime-image-freeze v1: built
 *    (with a CycloneDX SBOM and an in-toto provenance statement) and
 *    validated rule by rule, canonical digest recomputed;
 *  - the HIGH/CRITICAL vulnerability policy over Trivy JSON reports.
 *
 * Docker is reached through one adapter (ag_images_engine_*, engine.c) so
 * the transport can move to the Engine API without touching the rest.
 */
#ifndef AG_IMAGES_H
#define AG_IMAGES_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;
struct ag_engine;

/* ---- pinned constants (the reviewed Codex candidates) ---- */
#define AG_CODEX_PACKAGE "@openai/codex"
#define AG_CODEX_VERSION "0.159.2"
#define AG_CODEX_INTEGRITY                                                                         \
	"sha512-SE13C3nZCYoVL569BdegoOl6vwjb7o2sXOo7ivwVzaVoY0cswwi0/6pIE0TyO/"                    \
	"C0vIkQh3jslExitET7PBTfIg=="
#define AG_CODEX_LINUX_X64_VERSION "0.159.2-linux-x64"
#define AG_CODEX_LINUX_X64_INTEGRITY                                                               \
	"sha512-RrCZ1X52wpa1lOsXtCtSyhjOFdQPh7LH5Ccv8HsKmd/2UXbUwxXFqWXFK3JzatquUNGtW/"            \
	"TLox5Y7qVOGkV0/Q=="
#define AG_CODEX_LOCK_KEY "node_modules/@openai/codex"
#define AG_CODEX_LINUX_X64_LOCK_KEY "node_modules/@openai/codex-linux-x64"
/* The reviewed Claude Code candidates: the launcher package and the
 * native linux-x64 (glibc) binary package. */
#define AG_CLAUDE_CODE_PACKAGE "@anthropic-ai/claude-code"
#define AG_CLAUDE_CODE_VERSION "2.1.332"
#define AG_CLAUDE_CODE_INTEGRITY                                                                   \
	"sha512-tvSh6bLvEbd97APD31AnojOrRC3AmcRj5R8sF8QIQitu3x2ucOb1kKmTkGDw41kjva+"               \
	"CGJfpkt+wYouk6yv56Q=="
#define AG_CLAUDE_CODE_LINUX_X64_INTEGRITY                                                         \
	"sha512-f4JWhzwYutJIHScC7/"                                                                \
	"dYOPX6s28tt7ZADhsOi8zwOHq5fFPEuUeChh2NMfinSg0GrUckYxaeebC4h0DqiKzLcw=="
#define AG_CLAUDE_CODE_LOCK_KEY "node_modules/@anthropic-ai/claude-code"
#define AG_CLAUDE_CODE_LINUX_X64_LOCK_KEY "node_modules/@anthropic-ai/claude-code-linux-x64"
#define AG_IMAGES_CREDENTIAL_ENV "CODEX_API_KEY"
#define AG_IMAGES_AGENT_UID 10001
#define AG_IMAGES_GATEWAY_UID 65532
#define AG_IMAGES_AGENT_ENTRYPOINT "/usr/local/bin/agentguard-codex-entrypoint"
#define AG_IMAGES_CLAUDE_ENTRYPOINT "/usr/local/bin/agentguard-claude-entrypoint"
#define AG_IMAGES_GATEWAY_ENTRYPOINT "/usr/local/bin/agentguard-gateway"
/* Image label carrying the pinned base reference the image was built FROM. */
#define AG_IMAGES_BASE_LABEL "org.agentguard.runtime-image.base"
#define AG_IMAGES_BUILDER_LABEL "org.agentguard.runtime-image.builder-base"
#define AG_IMAGES_FREEZE_SCHEMA "agentguard.stage1-runtime-image-freeze"
#define AG_IMAGES_IDENTITY_SCHEMA "agentguard.stage1-runtime-canonical-image-identity"
#define AG_IMAGES_EXCEPTIONS_SCHEMA "agentguard.stage1-runtime-vulnerability-exceptions"

enum ag_image_role { AG_ROLE_GATEWAY = 0, AG_ROLE_AGENT = 1 };
const char *ag_image_role_name(enum ag_image_role r);
int ag_image_role_parse(const char *s, enum ag_image_role *out);

/* ---- Codex lock and tarballs (codex_lock.c) ---- */

/*
 * Checks package-lock.json bytes: lockfileVersion 3, a "packages" map with
 * exactly "" and the two pinned entries, each with the pinned version,
 * integrity and registry URL. Reasons images.lock.{json,shape,extra_entry,
 * missing_entry,version,integrity,resolved}. AG_E_UNVERIFIED.
 */
int ag_codex_lock_check(const char *lock, size_t len, struct ag_error **err);

/* One agent's reviewed npm inputs: the package the lock's root depends on
 * and its two entries (the package, its linux-x64 platform package). */
struct ag_npm_pin {
	const char *key, *version, *integrity, *resolved;
};
struct ag_npm_pins {
	const char *agent; /* "codex", "claude-code" */
	const char *package, *version;
	struct ag_npm_pin entries[2];
	/* the package entry may declare an install script (never run: the
	 * build uses npm ci --ignore-scripts) */
	bool install_script_ignored;
};
extern const struct ag_npm_pins ag_codex_pins, ag_claude_code_pins;
/* The pins of an agent by name, or NULL. */
const struct ag_npm_pins *ag_npm_pins_for(const char *agent);
/* ag_codex_lock_check for any agent's pins (the same reasons). */
int ag_npm_lock_check(const struct ag_npm_pins *pins, const char *lock, size_t len,
		      struct ag_error **err);
/* Reads the lock at lock_path (bounded, no final symlink: images.lock.open,
 * images.lock.size) and checks it against pins; *lock is the heap bytes. */
int ag_npm_lock_read(const struct ag_npm_pins *pins, const char *lock_path, char **lock,
		     size_t *len, struct ag_error **err);

/*
 * "sha512-" + base64(SHA-512) of the file at path (read in bounded
 * chunks, at most AG_IMAGES_TARBALL_MAX_BYTES). *out is a heap string.
 */
int ag_sri_sha512_file(const char *path, char **out, struct ag_error **err);

/*
 * The whole check the build runs before anything reaches the image: the
 * lock (above), then each tarball re-hashed and compared with the lock and
 * the pinned constant (images.tarball.mismatch, naming which package).
 */
int ag_npm_inputs_verify(const struct ag_npm_pins *pins, const char *lock_path,
			 const char *package_tgz, const char *platform_tgz, struct ag_error **err);

/* ---- canonical identities (identity.c) ---- */

/*
 * Reads a tar file and returns the canonical rootfs digest "sha256:<hex>"
 * (*digest, heap) and the number of members. Reasons
 * images.rootfs.{open,read,empty,duplicate,name,entries,bytes}.
 */
int ag_rootfs_digest_file(const char *tar_path, char **digest, size_t *entries,
			  struct ag_error **err);
/* The same over a tar read from fd (a file, a pipe or a socket: read once,
 * in order, never seeked); the fd stays open. */
int ag_rootfs_digest_fd(int fd, char **digest, size_t *entries, struct ag_error **err);

/*
 * From `docker image inspect` output (a JSON array of exactly one image),
 * the canonical runtime config object (*config, new reference) and its
 * digest "sha256:<hex>" (*digest, heap).
 * Reasons images.inspect.{json,count,field,volume}.
 */
int ag_runtime_config_from_inspect(const char *json, size_t len, json_t **config, char **digest,
				   struct ag_error **err);

/* Canonical identity object and its digest "sha256:<hex>". */
json_t *ag_image_identity_object(enum ag_image_role role, const char *base_image,
				 const char *rootfs_digest, const char *config_digest);
int ag_canon_sha256(const json_t *v, char hex[65], struct ag_error **err);
/* Canonical JSON as Python's json.dumps(sort_keys=True, separators=(",",":"),
 * ensure_ascii=True) writes it (lower-case \u escapes); *out is a heap string. */
int ag_images_canon_dump(const json_t *v, char **out, size_t *len, struct ag_error **err);

struct ag_image_identity {
	enum ag_image_role role;
	char *image_id;	     /* diagnostic only */
	char *pinned_ref;    /* repo@sha256:..., from RepoDigests, or NULL */
	char *base_image;    /* from the base label, pinned */
	char *builder_base;  /* builder label, or NULL */
	char *rootfs_digest; /* sha256:<hex> */
	size_t rootfs_entries;
	json_t *runtime_config;
	char *runtime_config_digest;
	json_t *identity;
	char *identity_digest;
	char *user;	  /* Config.User */
	char *entrypoint; /* the single absolute Entrypoint element */
};
void ag_image_identity_release(struct ag_image_identity *id);

/*
 * Computes everything above for IMAGE through the engine adapter: inspect,
 * check the role's uid:gid and entrypoint and the pinned base label (and
 * that the base's layers are a prefix of the image's), export a created
 * (never started) container to a private temp file, digest it, remove the
 * container. Reasons images.role.*, images.base.*, plus the adapter's.
 */
int ag_image_identity_compute(struct ag_engine *cli, const char *image, enum ag_image_role role,
			      struct ag_image_identity *out, struct ag_error **err);

/* ---- the engine adapter (engine.c): every Docker access of this module ---- */
/* `docker image inspect REF` -> heap JSON text. */
int ag_images_engine_inspect(struct ag_engine *cli, const char *ref, char **json, size_t *len,
			     struct ag_error **err);
/*
 * A local image's digest-pinned reference (`agentguard init --image REF`):
 * REF itself when it is pinned already; otherwise the entry of the image's
 * RepoDigests (what the engine recorded when the image was pushed or
 * pulled) for REF's repository, "repository@sha256:<hex>". Refused with
 * images.image.absent when the engine has no such image and
 * images.image.no_digest when it knows no digest for it (an image built
 * here and never pushed or pulled has none). Never pulls.
 */
int ag_images_local_pinned_ref(struct ag_engine *cli, const char *ref, char **pinned,
			       struct ag_error **err);
/*
 * The canonical rootfs digest of IMAGE (digest-pinned) without keeping its
 * filesystem anywhere: a container is created (never started) through the
 * ledger, owned by the labels below, as uid:uid; its export streams from
 * the daemon into the digest (ag_rootfs_digest_fd) as it arrives, bounded
 * by AG_IMAGES_EXPORT_MAX_BYTES (images.export.too_large); the container
 * is removed through the ledger and its absence verified
 * (images.export.cleanup).
 */
int ag_images_engine_export_digest(struct ag_engine *cli, const char *image, unsigned uid,
				   char **digest, size_t *entries, struct ag_error **err);
#define AG_IMAGES_EXPORT_NAME_PREFIX "agentguard-export-"
#define AG_IMAGES_EXPORT_OWNER_LABEL "agentguard.owner"
#define AG_IMAGES_EXPORT_OWNER "runtime-image-export"
#define AG_IMAGES_EXPORT_NAME_LABEL "agentguard.runtime-image.export"

/* ---- build context digest (identity.c) ---- */
/* SHA-256 hex over canonical [[relpath, sha256], ...] of the regular files
 * under dir, sorted (the workspace snapshot walk: .git at the root skipped,
 * a symlink or special file refused). *files, when not NULL, gets the list. */
int ag_context_digest(const char *dir, char hex[65], json_t **files, struct ag_error **err);

/* ---- freeze manifest (manifest.c, freeze.c) ---- */

/*
 * Validates the manifest bytes against every rule of the format. Returns 0
 * when valid. On failure the reason names the rule (images.manifest.*),
 * code AG_E_CONFIG or AG_E_LIMIT; err->key names the field.
 */
int ag_freeze_manifest_validate(const char *data, size_t len, struct ag_error **err);
/* The first key of object o that is not in keys (NULL-terminated), or NULL. */
const char *ag_images_unknown_key(json_t *o, const char *const *keys);
/* Sets canonical_manifest_digest of m (an object) from its other keys. */
int ag_freeze_manifest_seal(json_t *m, struct ag_error **err);

/* The fixed permitted_runtime_behavior object (new reference). */
json_t *ag_freeze_permitted_behavior(void);

struct ag_freeze_role_input {
	const struct ag_image_identity *id;
	const char *repository_placeholder;
	const char *context_dir; /* build context, for its digest */
};

struct ag_freeze_input {
	const char *repository;	   /* source repository name */
	const char *source_commit; /* 40 hex */
	struct ag_freeze_role_input gateway, agent;
	const char *deb_lock_path;	   /* runtime-images/base/packages.lock */
	const char *gateway_deb_lock_path; /* runtime-images/gateway/packages.lock, or NULL */
	const char *agent_deb_lock_path;   /* runtime-images/agent/packages.lock, or NULL */
	const char *npm_lock_path;	   /* agent package-lock.json */
	json_t *vuln_policy; /* result object of ag_vuln_policy_run, or NULL = not scanned */
	const char *const *scan_reports; /* report paths recorded by digest, NULL-terminated */
	const char *sbom_name;		 /* file names recorded in artifacts */
	const char *provenance_name;
};

struct ag_freeze_output {
	char *manifest;	  /* canonical JSON + "\n" */
	char *sbom;	  /* CycloneDX JSON + "\n" */
	char *provenance; /* in-toto Statement + "\n" */
};
void ag_freeze_output_release(struct ag_freeze_output *o);

/* Builds all three documents; validates gateway before agent and the final
 * manifest with ag_freeze_manifest_validate before returning it. */
int ag_freeze_build(const struct ag_freeze_input *in, struct ag_freeze_output *out,
		    struct ag_error **err);

/* ---- vulnerability policy (vuln.c) ---- */

struct ag_vuln_report_input {
	enum ag_image_role role;
	const char *path;
};

/*
 * Decides the policy. *result is a new object {status: pass|fail|not_scanned,
 * scanner_failures_suppressed: false, counts..., failures: [...]}.
 * Returns 0 when decided (pass or fail, see status), -1 when an input is
 * malformed (images.vuln.*, images.exceptions.*). `today` is YYYY-MM-DD.
 */
int ag_vuln_policy_run(const char *exceptions_path, const struct ag_vuln_report_input *reports,
		       size_t nreports, const char *today, json_t **result, struct ag_error **err);

#endif
