/*
 * manifest.c: the freeze manifest agentguard.stage1-runtime-image-freeze v1,
 * validated rule by rule (docs/runtime-images.md, "Freeze manifest").
 *
 * Every failure names its rule (reason images.manifest.*) and the field
 * (err->key). Order: bounds, top-level keys, schema, source, platform,
 * gateway, agent (gateway first, as the format requires), behaviour,
 * artifacts, usage evidence, publication, then the canonical digest.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/config/imageref.h"

static int bad(struct ag_error **err, const char *reason, const char *key, const char *msg)
{
	return ag_err_at(err, AG_E_CONFIG, reason, NULL, 0, 0, key, "%s", msg);
}

/* ---- bounds: depth, strings, map sizes; before any rule reads a value ---- */
static int bounds(const json_t *v, unsigned depth, const char *key, struct ag_error **err)
{
	if (depth > AG_IMAGES_MANIFEST_DEPTH_MAX)
		return ag_err_at(err, AG_E_LIMIT, "images.manifest.bound.depth", NULL, 0, 0, key,
				 "the manifest nests deeper than %d", AG_IMAGES_MANIFEST_DEPTH_MAX);
	if (json_is_string(v) && json_string_length(v) > AG_IMAGES_MANIFEST_STRING_MAX)
		return ag_err_at(err, AG_E_LIMIT, "images.manifest.bound.string", NULL, 0, 0, key,
				 "a manifest string is longer than %d bytes",
				 AG_IMAGES_MANIFEST_STRING_MAX);
	if (json_is_object(v) || json_is_array(v)) {
		size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
		if (n > AG_IMAGES_MANIFEST_ARTIFACTS_MAX)
			return ag_err_at(err, AG_E_LIMIT, "images.manifest.bound.items", NULL, 0, 0,
					 key, "a manifest map or list has more than %d entries",
					 AG_IMAGES_MANIFEST_ARTIFACTS_MAX);
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
		{
			if (strlen(k) > AG_IMAGES_MANIFEST_STRING_MAX)
				return ag_err_at(err, AG_E_LIMIT, "images.manifest.bound.string",
						 NULL, 0, 0, key, "a manifest key is too long");
			if (bounds(x, depth + 1, k, err) < 0)
				return -1;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) if (bounds(x, depth + 1, key, err) < 0) return -1;
	}
	return 0;
}

const char *ag_images_unknown_key(json_t *o, const char *const *keys)
{
	const char *k;
	json_t *x;
	json_object_foreach(o, k, x)
	{
		bool known = false;
		for (size_t i = 0; keys[i] && !known; i++)
			known = strcmp(k, keys[i]) == 0;
		if (!known)
			return k;
	}
	return NULL;
}

/* Exactly these keys: unknown first (fail closed on anything new), then missing. */
static int exact_keys(json_t *o, const char *path, const char *const *keys, struct ag_error **err)
{
	if (!json_is_object(o))
		return bad(err, "images.manifest.type", path, "must be an object");
	const char *unknown = ag_images_unknown_key(o, keys);
	if (unknown)
		return ag_err_at(err, AG_E_CONFIG, "images.manifest.unknown_key", NULL, 0, 0, path,
				 "unknown key '%s' (unknown keys are refused)", unknown);
	for (size_t i = 0; keys[i]; i++)
		if (!json_object_get(o, keys[i]))
			return ag_err_at(err, AG_E_CONFIG, "images.manifest.missing_key", NULL, 0,
					 0, path, "required key '%s' is missing", keys[i]);
	return 0;
}

static bool is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

static bool is_sha256_digest(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && is_hex(s + 7, 64);
}

static bool clean_token(const char *s)
{
	if (!s || !*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}

static const char *sget(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A base reference must be name@sha256:<64 hex>, and the separate digest
 * field must be that same digest. */
static int check_pinned(json_t *o, const char *ref_key, const char *digest_key, const char *path,
			struct ag_error **err)
{
	const char *ref = sget(o, ref_key);
	_cleanup_free_ char *key = ag_xasprintf("%s.%s", path, ref_key);
	if (!ref)
		return bad(err, "images.manifest.type", key, "must be a string");
	struct ag_image_ref r = {0};
	struct ag_error *e = NULL;
	int pr = ag_image_ref_parse(ref, &r, &e);
	ag_error_free(e);
	bool pinned = pr == 0 && ag_image_ref_pinned(&r);
	bool tagged = pr == 0 && r.tag != NULL;
	_cleanup_free_ char *dig = pinned ? ag_xstrdup(r.digest) : NULL;
	ag_image_ref_release(&r);
	if (!pinned)
		return bad(err, "images.manifest.base_unpinned", key,
			   "a base image must be pinned as name@sha256:<64 hex> (a tag alone "
			   "is refused)");
	if (tagged)
		return bad(err, "images.manifest.base_unpinned", key,
			   "a base image reference carries a tag next to its digest");
	_cleanup_free_ char *dkey = ag_xasprintf("%s.%s", path, digest_key);
	const char *d = sget(o, digest_key);
	if (!is_sha256_digest(d))
		return bad(err, "images.manifest.digest_format", dkey, "must be sha256:<64 hex>");
	if (strcmp(d, dig) != 0)
		return bad(err, "images.manifest.base_mismatch", dkey,
			   "does not equal the digest pinned in the base reference");
	return 0;
}

static int check_uid(json_t *o, const char *k, unsigned want, const char *path,
		     struct ag_error **err)
{
	json_t *v = json_object_get(o, k);
	_cleanup_free_ char *key = ag_xasprintf("%s.%s", path, k);
	if (!json_is_integer(v) || json_integer_value(v) != (json_int_t)want)
		return ag_err_at(err, AG_E_CONFIG, "images.manifest.uid", NULL, 0, 0, key,
				 "must be the fixed non-root id %u", want);
	return 0;
}

static const char *const role_keys_gateway[] = {"repository_placeholder",
						"oci_digest",
						"base_image",
						"base_index_digest",
						"build_context_digest",
						"entrypoint",
						"uid",
						"gid",
						NULL};
static const char *const role_keys_agent[] = {"repository_placeholder",
					      "oci_digest",
					      "base_image",
					      "base_index_digest",
					      "builder_base_image",
					      "builder_base_index_digest",
					      "build_context_digest",
					      "entrypoint",
					      "uid",
					      "gid",
					      "credential_env",
					      "codex",
					      NULL};
static const char *const codex_keys[] = {
    "package", "version", "integrity", "linux_x64_version", "linux_x64_integrity", NULL};

static int check_codex(json_t *c, struct ag_error **err)
{
	const char *path = "agent.codex";
	if (!json_is_object(c))
		return bad(err, "images.manifest.type", path, "must be an object");
	/* Integrity first: a wrong or missing pin is the failure that matters. */
	if (!sget(c, "integrity") || strcmp(sget(c, "integrity"), AG_CODEX_INTEGRITY) != 0)
		return bad(err, "images.manifest.codex.integrity", "agent.codex.integrity",
			   "is missing or is not the reviewed @openai/codex 0.159.2 integrity");
	if (!sget(c, "linux_x64_integrity") ||
	    strcmp(sget(c, "linux_x64_integrity"), AG_CODEX_LINUX_X64_INTEGRITY) != 0)
		return bad(err, "images.manifest.codex.integrity",
			   "agent.codex.linux_x64_integrity",
			   "is missing or is not the reviewed linux-x64 integrity");
	if (exact_keys(c, path, codex_keys, err) < 0)
		return -1;
	if (!sget(c, "package") || strcmp(sget(c, "package"), AG_CODEX_PACKAGE) != 0)
		return bad(err, "images.manifest.codex.package", "agent.codex.package",
			   "must be @openai/codex");
	if (!sget(c, "version") || strcmp(sget(c, "version"), AG_CODEX_VERSION) != 0)
		return bad(err, "images.manifest.codex.version", "agent.codex.version",
			   "must be " AG_CODEX_VERSION);
	if (!sget(c, "linux_x64_version") ||
	    strcmp(sget(c, "linux_x64_version"), AG_CODEX_LINUX_X64_VERSION) != 0)
		return bad(err, "images.manifest.codex.version", "agent.codex.linux_x64_version",
			   "must be " AG_CODEX_LINUX_X64_VERSION);
	return 0;
}

static int check_role(json_t *m, enum ag_image_role role, struct ag_error **err)
{
	const char *path = ag_image_role_name(role);
	json_t *o = json_object_get(m, path);
	bool agent = role == AG_ROLE_AGENT;
	if (exact_keys(o, path, agent ? role_keys_agent : role_keys_gateway, err) < 0)
		return -1;
	_cleanup_free_ char *k1 = ag_xasprintf("%s.repository_placeholder", path);
	if (!clean_token(sget(o, "repository_placeholder")))
		return bad(err, "images.manifest.placeholder", k1,
			   "must be a non-empty name without spaces or control characters");
	_cleanup_free_ char *k2 = ag_xasprintf("%s.oci_digest", path);
	if (!is_sha256_digest(sget(o, "oci_digest")))
		return bad(err, "images.manifest.digest_format", k2, "must be sha256:<64 hex>");
	if (check_pinned(o, "base_image", "base_index_digest", path, err) < 0)
		return -1;
	if (agent &&
	    check_pinned(o, "builder_base_image", "builder_base_index_digest", path, err) < 0)
		return -1;
	_cleanup_free_ char *k3 = ag_xasprintf("%s.build_context_digest", path);
	if (!is_hex(sget(o, "build_context_digest"), 64))
		return bad(err, "images.manifest.digest_format", k3, "must be 64 lowercase hex");
	_cleanup_free_ char *k4 = ag_xasprintf("%s.entrypoint", path);
	const char *ep = sget(o, "entrypoint");
	const char *want_ep = agent ? AG_IMAGES_AGENT_ENTRYPOINT : AG_IMAGES_GATEWAY_ENTRYPOINT;
	if (!ep || strcmp(ep, want_ep) != 0)
		return bad(err, "images.manifest.entrypoint", k4,
			   "must be the role's one absolute entrypoint path");
	unsigned want = agent ? AG_IMAGES_AGENT_UID : AG_IMAGES_GATEWAY_UID;
	if (check_uid(o, "uid", want, path, err) < 0 || check_uid(o, "gid", want, path, err) < 0)
		return -1;
	if (!agent)
		return 0;
	const char *ce = sget(o, "credential_env");
	if (!ce || strcmp(ce, AG_IMAGES_CREDENTIAL_ENV) != 0)
		return bad(err, "images.manifest.credential_env", "agent.credential_env",
			   "must be CODEX_API_KEY");
	return check_codex(json_object_get(o, "codex"), err);
}

json_t *ag_freeze_permitted_behavior(void)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "network",
			 "only_through_the_egress_gateway", "root_filesystem",
			 "read_only_with_bounded_tmpfs", "capabilities", "drop_all",
			 "no_new_privileges", "required", "docker_socket", "forbidden",
			 "host_namespaces", "forbidden", "runtime_install_or_update", "forbidden");
}

/* {name: 64 hex}, non-empty when `nonempty`. */
static int hex_map(json_t *o, const char *path, bool nonempty, struct ag_error **err)
{
	if (!json_is_object(o))
		return bad(err, "images.manifest.type", path, "must be an object");
	if (nonempty && json_object_size(o) == 0)
		return bad(err, "images.manifest.artifacts", path,
			   "must record at least one document by digest");
	const char *k;
	json_t *x;
	json_object_foreach(o, k, x)
	{
		if (!clean_token(k) || !is_hex(json_string_value(x), 64))
			return bad(err, "images.manifest.artifacts", path,
				   "every entry must be a clean name mapped to 64 lowercase hex");
	}
	return 0;
}

static int check_artifacts(json_t *a, struct ag_error **err)
{
	static const char *const keys[] = {"sbom", "provenance", "scans", NULL};
	static const char *const scan_keys[] = {"vulnerability_policy", NULL};
	static const char *const vp_keys[] = {"status", "scanner_failures_suppressed", "reports",
					      NULL};
	if (exact_keys(a, "artifacts", keys, err) < 0)
		return -1;
	if (hex_map(json_object_get(a, "sbom"), "artifacts.sbom", true, err) < 0 ||
	    hex_map(json_object_get(a, "provenance"), "artifacts.provenance", true, err) < 0)
		return -1;
	json_t *s = json_object_get(a, "scans");
	if (exact_keys(s, "artifacts.scans", scan_keys, err) < 0)
		return -1;
	json_t *vp = json_object_get(s, "vulnerability_policy");
	/* Checked before the key set: suppressing scanner failures is the claim
	 * that must never pass, whatever else the object holds. */
	if (json_is_object(vp) &&
	    !json_is_false(json_object_get(vp, "scanner_failures_suppressed")))
		return bad(err, "images.manifest.scans.suppressed",
			   "artifacts.scans.vulnerability_policy.scanner_failures_suppressed",
			   "must be the boolean false");
	if (exact_keys(vp, "artifacts.scans.vulnerability_policy", vp_keys, err) < 0)
		return -1;
	json_t *reports = json_object_get(vp, "reports");
	if (hex_map(reports, "artifacts.scans.vulnerability_policy.reports", false, err) < 0)
		return -1;
	const char *st = sget(vp, "status");
	bool any = json_object_size(reports) > 0;
	if (!st || !((strcmp(st, "not_scanned") == 0 && !any) || (strcmp(st, "pass") == 0 && any)))
		return bad(err, "images.manifest.scans.status",
			   "artifacts.scans.vulnerability_policy.status",
			   "must be not_scanned (no report) or pass (with the reports' digests)");
	return 0;
}

static int check_manifest(json_t *m, struct ag_error **err)
{
	static const char *const top[] = {"schema",
					  "schema_version",
					  "source",
					  "platform",
					  "gateway",
					  "agent",
					  "permitted_runtime_behavior",
					  "artifacts",
					  "usage_evidence",
					  "publication",
					  "canonical_manifest_digest",
					  NULL};
	if (bounds(m, 1, "", err) < 0)
		return -1;
	if (exact_keys(m, "", top, err) < 0)
		return -1;
	const char *schema = sget(m, "schema");
	json_t *ver = json_object_get(m, "schema_version");
	if (!schema || strcmp(schema, AG_IMAGES_FREEZE_SCHEMA) != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1)
		return bad(err, "images.manifest.schema", "schema",
			   "must be agentguard.stage1-runtime-image-freeze version 1");
	static const char *const src_keys[] = {"repository", "commit", NULL};
	json_t *src = json_object_get(m, "source");
	if (exact_keys(src, "source", src_keys, err) < 0)
		return -1;
	if (!clean_token(sget(src, "repository")))
		return bad(err, "images.manifest.source", "source.repository",
			   "must be a non-empty name");
	if (!is_hex(sget(src, "commit"), 40))
		return bad(err, "images.manifest.source", "source.commit",
			   "must be a full 40-hex git commit");
	const char *pl = sget(m, "platform");
	if (!pl || strcmp(pl, "linux/amd64") != 0)
		return bad(err, "images.manifest.platform", "platform", "must be linux/amd64");
	if (check_role(m, AG_ROLE_GATEWAY, err) < 0 || check_role(m, AG_ROLE_AGENT, err) < 0)
		return -1;
	json_t *beh = ag_freeze_permitted_behavior();
	bool same = json_equal(beh, json_object_get(m, "permitted_runtime_behavior"));
	json_decref(beh);
	if (!same)
		return bad(err, "images.manifest.behavior", "permitted_runtime_behavior",
			   "must be exactly the fixed stage-1 runtime behaviour");
	if (check_artifacts(json_object_get(m, "artifacts"), err) < 0)
		return -1;
	static const char *const ue_keys[] = {"status", "policy", NULL};
	json_t *ue = json_object_get(m, "usage_evidence");
	if (exact_keys(ue, "usage_evidence", ue_keys, err) < 0)
		return -1;
	const char *us = sget(ue, "status");
	if (!us || (strcmp(us, "mock_supported") != 0 && strcmp(us, "USAGE_EVIDENCE_BLOCKED") != 0))
		return bad(err, "images.manifest.usage_evidence", "usage_evidence.status",
			   "must be mock_supported or USAGE_EVIDENCE_BLOCKED");
	if (!sget(ue, "policy") || !*sget(ue, "policy"))
		return bad(err, "images.manifest.usage_evidence", "usage_evidence.policy",
			   "must name the usage evidence policy");
	static const char *const pub_keys[] = {"status", "registry_verification", NULL};
	json_t *pub = json_object_get(m, "publication");
	if (json_is_object(pub) &&
	    (!sget(pub, "status") || strcmp(sget(pub, "status"), "not_published_phase_1") != 0))
		return bad(err, "images.manifest.publication", "publication.status",
			   "stage 1 publishes nothing: only not_published_phase_1 is accepted");
	if (exact_keys(pub, "publication", pub_keys, err) < 0)
		return -1;
	if (!sget(pub, "registry_verification") ||
	    strcmp(sget(pub, "registry_verification"), "deferred_to_phase_2") != 0)
		return bad(err, "images.manifest.publication", "publication.registry_verification",
			   "must be deferred_to_phase_2");
	const char *dg = sget(m, "canonical_manifest_digest");
	if (!is_hex(dg, 64))
		return bad(err, "images.manifest.digest_format", "canonical_manifest_digest",
			   "must be 64 lowercase hex");
	json_t *copy = json_copy(m);
	json_object_del(copy, "canonical_manifest_digest");
	char hex[65];
	int r = ag_canon_sha256(copy, hex, err);
	json_decref(copy);
	if (r < 0)
		return -1;
	if (strcmp(hex, dg) != 0)
		return bad(err, "images.manifest.digest_mismatch", "canonical_manifest_digest",
			   "does not match the canonical digest of the manifest");
	return 0;
}

int ag_freeze_manifest_validate(const char *data, size_t len, struct ag_error **err)
{
	if (len > AG_IMAGES_MANIFEST_MAX_BYTES)
		return ag_err(err, AG_E_LIMIT, 0, "images.manifest.bound.size",
			      "the manifest is larger than %d bytes", AG_IMAGES_MANIFEST_MAX_BYTES);
	json_error_t je;
	json_t *m = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return ag_err(err, AG_E_CONFIG, 0, "images.manifest.json",
			      "the manifest is not valid JSON (or repeats a key) at line %d",
			      je.line);
	if (!json_is_object(m)) {
		json_decref(m);
		return ag_err(err, AG_E_CONFIG, 0, "images.manifest.json",
			      "the manifest is not a JSON object");
	}
	int r = check_manifest(m, err);
	json_decref(m);
	return r;
}

int ag_freeze_manifest_seal(json_t *m, struct ag_error **err)
{
	json_object_del(m, "canonical_manifest_digest");
	char hex[65];
	if (ag_canon_sha256(m, hex, err) < 0)
		return -1;
	json_object_set_new(m, "canonical_manifest_digest", json_string(hex));
	return 0;
}
