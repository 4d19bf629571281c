/*
 * freeze.c: builds the freeze manifest and the two documents it records by
 * digest: a CycloneDX 1.5 SBOM (the Debian packages of the base, the npm
 * packages of the agent, with their hashes) and an in-toto v1 Statement
 * (SLSA provenance v1 predicate) with the source commit, the build context
 * digests, every pinned input and the canonical image identities. No
 * timestamps: the same inputs give the same bytes.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"

#include <openssl/evp.h>

void ag_freeze_output_release(struct ag_freeze_output *o)
{
	free(o->manifest);
	free(o->sbom);
	free(o->provenance);
	memset(o, 0, sizeof(*o));
}

static const struct ag_read_reasons read_why = {"images.freeze.read", "images.freeze.read",
						"images.freeze.read", "images.freeze.size"};

/* "sha512-<base64>" -> 128 hex digits. */
static int sri_hex(const char *sri, char hex[129], struct ag_error **err)
{
	const char *b = sri + strlen("sha512-");
	unsigned char raw[96];
	if (strncmp(sri, "sha512-", 7) != 0 || strlen(b) != 88 ||
	    EVP_DecodeBlock(raw, (const unsigned char *)b, 88) != 66)
		return ag_err(err, AG_E_INTERNAL, 0, "images.freeze.integrity",
			      "a pinned integrity is not sha512 base64");
	for (int i = 0; i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

struct deb {
	char name[128], version[128], arch[32], sha[65];
};

/* runtime-images/{base,gateway,agent}/packages.lock: NAME VERSION ARCH SHA256
 * lines, at most `max` of them. */
static int read_debs(const char *path, struct deb *out, size_t *n, size_t max,
		     struct ag_error **err)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, path, "packages.lock", 64 * 1024, &read_why, &data, &len,
			    err) < 0)
		return -1;
	*n = 0;
	for (char *line = data, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		if (*n == max)
			return ag_err(err, AG_E_LIMIT, 0, "images.freeze.debs",
				      "the packages.lock files list more than %d packages",
				      AG_IMAGES_DEB_MAX_PACKAGES);
		struct deb *d = &out[*n];
		char extra[2];
		if (sscanf(line, "%127s %127s %31s %64s %1s", d->name, d->version, d->arch, d->sha,
			   extra) != 4 ||
		    strlen(d->sha) != 64)
			return ag_err(err, AG_E_CONFIG, 0, "images.freeze.debs",
				      "packages.lock has a malformed line");
		(*n)++;
	}
	if (*n == 0)
		return ag_err(err, AG_E_CONFIG, 0, "images.freeze.debs",
			      "packages.lock lists no package");
	return 0;
}

static json_t *hashes1(const char *alg, const char *hex)
{
	return json_pack("[{s:s, s:s}]", "alg", alg, "content", hex);
}

static int build_sbom(const struct ag_freeze_input *in, const struct deb *debs, size_t ndebs,
		      size_t nbase, size_t ngw, const char *codex_hex, const char *linux_hex,
		      char **out, struct ag_error **err)
{
	json_t *comps = json_array();
	for (size_t i = 0; i < ndebs; i++) {
		_cleanup_free_ char *purl = ag_xasprintf(
		    "pkg:deb/debian/%s@%s?arch=%s", debs[i].name, debs[i].version, debs[i].arch);
		json_array_append_new(comps,
				      json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:[{s:s, s:s}]}",
						"type", "library", "bom-ref", purl, "name",
						debs[i].name, "version", debs[i].version, "purl",
						purl, "hashes", hashes1("SHA-256", debs[i].sha),
						"properties", "name", "agentguard:image", "value",
						i < nbase	  ? "base (gateway and agent)"
						: i < nbase + ngw ? "gateway"
								  : "agent (tools layer)"));
	}
	const char *vers[2] = {AG_CODEX_VERSION, AG_CODEX_LINUX_X64_VERSION};
	const char *hex[2] = {codex_hex, linux_hex};
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *purl = ag_xasprintf("pkg:npm/%%40openai/codex@%s", vers[i]);
		json_array_append_new(
		    comps, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:[{s:s, s:s}]}", "type",
				     "library", "bom-ref", purl, "group", "@openai", "name",
				     "codex", "version", vers[i], "purl", purl, "hashes",
				     hashes1("SHA-512", hex[i]), "properties", "name",
				     "agentguard:image", "value", "agent"));
	}
	json_t *bom = json_pack(
	    "{s:s, s:s, s:i, s:{s:{s:s, s:s, s:s}}, s:o}", "bomFormat", "CycloneDX", "specVersion",
	    "1.5", "version", 1, "metadata", "component", "type", "container", "name",
	    "agentguard-stage1-runtime-images", "version", in->source_commit, "components", comps);
	int r = ag_images_canon_dump(bom, out, NULL, err);
	json_decref(bom);
	return r;
}

static json_t *dep(const char *name, const char *uri, const char *alg, const char *hex)
{
	json_t *d = json_pack("{s:s, s:{s:s}}", "name", name, "digest", alg, hex);
	if (uri)
		json_object_set_new(d, "uri", json_string(uri));
	return d;
}

static int build_provenance(const struct ag_freeze_input *in, const char *const ctx_hex[2],
			    const struct deb *debs, size_t ndebs, const char *codex_hex,
			    const char *linux_hex, char **out, struct ag_error **err)
{
	const struct ag_image_identity *ids[2] = {in->gateway.id, in->agent.id};
	json_t *subjects = json_array(), *deps = json_array(), *byproducts = json_array();
	for (int i = 0; i < 2; i++) {
		const char *ref = ids[i]->pinned_ref;
		const char *at = strchr(ref, '@');
		_cleanup_free_ char *name = ag_xstrndup(ref, (size_t)(at - ref));
		json_array_append_new(subjects, json_pack("{s:s, s:{s:s}}", "name", name, "digest",
							  "sha256", at + strlen("@sha256:")));
		const char *role = ag_image_role_name(ids[i]->role);
		_cleanup_free_ char *cn = ag_xasprintf("runtime-images/%s build context", role);
		json_array_append_new(deps, dep(cn, NULL, "sha256", ctx_hex[i]));
		_cleanup_free_ char *bn = ag_xasprintf("%s base image", role);
		const char *bat = strstr(ids[i]->base_image, "@sha256:");
		json_array_append_new(deps, dep(bn, ids[i]->base_image, "sha256", bat + 8));
		_cleanup_free_ char *in_name = ag_xasprintf("%s canonical image identity", role);
		json_array_append_new(byproducts,
				      json_pack("{s:s, s:{s:s}, s:O}", "name", in_name, "digest",
						"sha256", ids[i]->identity_digest + 7, "content",
						ids[i]->identity));
	}
	for (size_t i = 0; i < ndebs; i++) {
		_cleanup_free_ char *purl = ag_xasprintf(
		    "pkg:deb/debian/%s@%s?arch=%s", debs[i].name, debs[i].version, debs[i].arch);
		json_array_append_new(deps, dep(debs[i].name, purl, "sha256", debs[i].sha));
	}
	json_array_append_new(deps,
			      dep(AG_CODEX_PACKAGE, "pkg:npm/%40openai/codex@" AG_CODEX_VERSION,
				  "sha512", codex_hex));
	json_array_append_new(deps, dep(AG_CODEX_PACKAGE " (linux-x64)",
					"pkg:npm/%40openai/codex@" AG_CODEX_LINUX_X64_VERSION,
					"sha512", linux_hex));
	json_t *st = json_pack(
	    "{s:s, s:o, s:s, s:{s:{s:s, s:{s:{s:s, s:s}}, s:{s:s, s:s, s:s}, s:o}, "
	    "s:{s:{s:s}, s:o}}}",
	    "_type", "https://in-toto.io/Statement/v1", "subject", subjects, "predicateType",
	    "https://slsa.dev/provenance/v1", "predicate", "buildDefinition", "buildType",
	    "https://agentguard.invalid/stage1-runtime-images/v1", "externalParameters", "source",
	    "repository", in->repository, "commit", in->source_commit, "internalParameters",
	    "docker_build_network", "none", "package_fetch",
	    "apt-get download (Debian) and npm ci --ignore-scripts (npm registry), "
	    "hash-checked before use",
	    "publication", "not_published_phase_1", "resolvedDependencies", deps, "runDetails",
	    "builder", "id", "scripts/runtime-images", "byproducts", byproducts);
	int r = ag_images_canon_dump(st, out, NULL, err);
	json_decref(st);
	return r;
}

static json_t *role_section(const struct ag_freeze_role_input *ri, const char *ctx_hex,
			    struct ag_error **err)
{
	const struct ag_image_identity *id = ri->id;
	if (!id->pinned_ref || !strstr(id->pinned_ref, "@sha256:")) {
		ag_err(err, AG_E_UNVERIFIED, 0, "images.freeze.unpushed",
		       "the %s image has no registry digest (push it first)",
		       ag_image_role_name(id->role));
		return NULL;
	}
	const char *oci = strstr(id->pinned_ref, "@") + 1;
	const char *base_dig = strstr(id->base_image, "@") + 1;
	bool agent = id->role == AG_ROLE_AGENT;
	unsigned uid = agent ? AG_IMAGES_AGENT_UID : AG_IMAGES_GATEWAY_UID;
	json_t *o =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "repository_placeholder",
		      ri->repository_placeholder, "oci_digest", oci, "base_image", id->base_image,
		      "base_index_digest", base_dig, "build_context_digest", ctx_hex, "entrypoint",
		      id->entrypoint, "uid", (int)uid, "gid", (int)uid);
	if (!agent)
		return o;
	if (!id->builder_base) {
		json_decref(o);
		ag_err(err, AG_E_UNVERIFIED, 0, "images.freeze.builder",
		       "the agent image does not name its pinned builder base");
		return NULL;
	}
	json_object_set_new(o, "builder_base_image", json_string(id->builder_base));
	json_object_set_new(o, "builder_base_index_digest",
			    json_string(strstr(id->builder_base, "@") + 1));
	json_object_set_new(o, "credential_env", json_string(AG_IMAGES_CREDENTIAL_ENV));
	json_object_set_new(o, "codex",
			    json_pack("{s:s, s:s, s:s, s:s, s:s}", "package", AG_CODEX_PACKAGE,
				      "version", AG_CODEX_VERSION, "integrity", AG_CODEX_INTEGRITY,
				      "linux_x64_version", AG_CODEX_LINUX_X64_VERSION,
				      "linux_x64_integrity", AG_CODEX_LINUX_X64_INTEGRITY));
	return o;
}

static char *with_newline(char *s)
{
	char *r = ag_xasprintf("%s\n", s);
	free(s);
	return r;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int scans_object(const struct ag_freeze_input *in, json_t **out, struct ag_error **err)
{
	json_t *reports = json_object();
	const char *status = "not_scanned";
	if (in->vuln_policy) {
		status = json_string_value(json_object_get(in->vuln_policy, "status"));
		if (!status || strcmp(status, "not_scanned") == 0) {
			status = "not_scanned";
		} else if (strcmp(status, "pass") != 0) {
			json_decref(reports);
			return ag_err(err, AG_E_UNVERIFIED, 0, "images.freeze.vuln_policy",
				      "the vulnerability policy did not pass; nothing is frozen");
		}
	}
	for (size_t i = 0; strcmp(status, "pass") == 0 && in->scan_reports && in->scan_reports[i];
	     i++) {
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		if (ag_read_file_at(AT_FDCWD, in->scan_reports[i], "scan report",
				    AG_IMAGES_REPORT_MAX_BYTES, &read_why, &data, &len, err) < 0) {
			json_decref(reports);
			return -1;
		}
		char hex[65];
		ag_sha256_hex(data, len, hex);
		json_object_set_new(reports, base_name(in->scan_reports[i]), json_string(hex));
	}
	*out = json_pack("{s:{s:s, s:b, s:o}}", "vulnerability_policy", "status", status,
			 "scanner_failures_suppressed", 0, "reports", reports);
	return 0;
}

int ag_freeze_build(const struct ag_freeze_input *in, struct ag_freeze_output *out,
		    struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	size_t cl = strlen(in->source_commit);
	bool hex = cl == 40;
	for (size_t i = 0; hex && i < cl; i++)
		hex = strchr("0123456789abcdef", in->source_commit[i]) != NULL;
	if (!hex)
		return ag_err(err, AG_E_USAGE, 0, "images.freeze.commit",
			      "--source-commit must be a full 40-hex git commit");
	if (!in->gateway.id || in->gateway.id->role != AG_ROLE_GATEWAY || !in->agent.id ||
	    in->agent.id->role != AG_ROLE_AGENT)
		return ag_err(err, AG_E_UNVERIFIED, 0, "images.freeze.gateway_missing",
			      "both the gateway and the agent identity are required");
	/* Gateway first, then agent: contexts, sections. */
	char ctx[2][65];
	json_t *sections[2] = {NULL, NULL};
	const struct ag_freeze_role_input *roles[2] = {&in->gateway, &in->agent};
	for (int i = 0; i < 2; i++) {
		if (ag_context_digest(roles[i]->context_dir, ctx[i], NULL, err) < 0 ||
		    !(sections[i] = role_section(roles[i], ctx[i], err))) {
			json_decref(sections[0]);
			return ag_err_wrap(err, "%s", ag_image_role_name((enum ag_image_role)i));
		}
	}
	json_t *m = NULL;
	int rc = -1;
	_cleanup_free_ char *lock = NULL;
	_cleanup_free_ char *s = NULL;
	size_t llen = 0;
	struct deb debs[AG_IMAGES_DEB_MAX_PACKAGES];
	size_t ndebs = 0;
	char codex_hex[129], linux_hex[129];
	json_t *scans = NULL;
	size_t nbase = 0, ngw = 0, nagent = 0;
	if (ag_read_file_at(AT_FDCWD, in->npm_lock_path, "package-lock.json",
			    AG_IMAGES_LOCK_MAX_BYTES, &read_why, &lock, &llen, err) < 0 ||
	    ag_codex_lock_check(lock, llen, err) < 0 ||
	    read_debs(in->deb_lock_path, debs, &nbase, AG_IMAGES_DEB_MAX_PACKAGES, err) < 0 ||
	    (in->gateway_deb_lock_path && read_debs(in->gateway_deb_lock_path, debs + nbase, &ngw,
						    AG_IMAGES_DEB_MAX_PACKAGES - nbase, err) < 0) ||
	    (in->agent_deb_lock_path &&
	     read_debs(in->agent_deb_lock_path, debs + nbase + ngw, &nagent,
		       AG_IMAGES_DEB_MAX_PACKAGES - nbase - ngw, err) < 0) ||
	    sri_hex(AG_CODEX_INTEGRITY, codex_hex, err) < 0 ||
	    sri_hex(AG_CODEX_LINUX_X64_INTEGRITY, linux_hex, err) < 0 ||
	    scans_object(in, &scans, err) < 0)
		goto out;
	ndebs = nbase + ngw + nagent;
	const char *cptr[2] = {ctx[0], ctx[1]};
	if (build_sbom(in, debs, ndebs, nbase, ngw, codex_hex, linux_hex, &out->sbom, err) < 0 ||
	    build_provenance(in, cptr, debs, ndebs, codex_hex, linux_hex, &out->provenance, err) <
		0)
		goto out;
	char sbom_hex[65], prov_hex[65];
	/* The recorded digests are of the files as written (with the newline). */
	out->sbom = with_newline(out->sbom);
	out->provenance = with_newline(out->provenance);
	ag_sha256_hex(out->sbom, strlen(out->sbom), sbom_hex);
	ag_sha256_hex(out->provenance, strlen(out->provenance), prov_hex);
	m = json_pack(
	    "{s:s, s:i, s:{s:s, s:s}, s:s, s:o, s:o, s:o, s:{s:{s:s}, s:{s:s}, s:o}, "
	    "s:{s:s, s:s}, s:{s:s, s:s}}",
	    "schema", AG_IMAGES_FREEZE_SCHEMA, "schema_version", 1, "source", "repository",
	    in->repository, "commit", in->source_commit, "platform", "linux/amd64", "gateway",
	    sections[0], "agent", sections[1], "permitted_runtime_behavior",
	    ag_freeze_permitted_behavior(), "artifacts", "sbom", in->sbom_name, sbom_hex,
	    "provenance", in->provenance_name, prov_hex, "scans", scans, "usage_evidence", "status",
	    "USAGE_EVIDENCE_BLOCKED", "policy",
	    "usage records must be attributable to their trial, complete and non-zero; no "
	    "live study ran in stage 1",
	    "publication", "status", "not_published_phase_1", "registry_verification",
	    "deferred_to_phase_2");
	sections[0] = sections[1] = NULL;
	scans = NULL;
	if (!m) {
		ag_err(err, AG_E_INTERNAL, 0, "images.freeze.encode", "cannot build the manifest");
		goto out;
	}
	if (ag_freeze_manifest_seal(m, err) < 0)
		goto out;
	if (ag_images_canon_dump(m, &s, NULL, err) < 0)
		goto out;
	/* Never hand out a manifest the validator would refuse. */
	if (ag_freeze_manifest_validate(s, strlen(s), err) < 0) {
		ag_err_wrap(err, "freeze produced an invalid manifest");
		goto out;
	}
	out->manifest = with_newline(ag_steal_ptr(&s));
	rc = 0;
out:
	json_decref(sections[0]);
	json_decref(sections[1]);
	json_decref(scans);
	json_decref(m);
	if (rc < 0)
		ag_freeze_output_release(out);
	return rc;
}
