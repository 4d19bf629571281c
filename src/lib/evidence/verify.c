#include "lib/base/ag.h"
#include "lib/base/sanitize.h"
#include "lib/evidence/verify.h"
#include "lib/config/env_allowlist.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/redact.h"
#include "lib/base/sha256.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/jschema.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/sign.h"
#include "lib/workspace/patch.h"

#include <sys/stat.h>

#define ARTIFACT_FILE "contained-run.json"

const char *const ag_verify_check_names[AG_VERIFY_CHECKS] = {
    "read",    "parse", "version",   "bounds", "structure", "canonical",       "identity",
    "privacy", "seal",	"signature", "chain",  "patch",	    "egress_manifest",
};

static const struct ag_read_reasons art_why = {"evidence.read.symlink", "evidence.read.not_regular",
					       "evidence.read.io", "evidence.read.too_large"};
static const struct ag_read_reasons seal_why = {"evidence.seal.symlink",
						"evidence.seal.not_regular",
						"evidence.seal.missing", "evidence.seal.too_large"};
static const struct ag_read_reasons head_why = {"evidence.chain.head", "evidence.chain.head",
						"evidence.chain.head", "evidence.chain.head"};

void ag_verify_report_release(struct ag_verify_report *rep)
{
	json_decref(rep->artifact);
	free(rep->bytes);
	free(rep->run_id);
	free(rep->signer);
	free(rep->chain_start);
	memset(rep, 0, sizeof(*rep));
}

static void pass(struct ag_verify_report *rep, size_t i)
{
	if (rep->npassed < AG_VERIFY_CHECKS)
		rep->passed[rep->npassed++] = ag_verify_check_names[i];
}

static int fail(struct ag_verify_report *rep, size_t i)
{
	rep->failed = ag_verify_check_names[i];
	return -1;
}

/* ---- identity ---- */

/* "host/repo:tag@sha256:.." or "host:5000/repo@sha256:.." -> "host/repo" (heap). */
static char *repository_of(const char *ref)
{
	size_t n = strcspn(ref, "@");
	const char *slash = memrchr(ref, '/', n);
	const char *colon = memrchr(ref, ':', n);
	if (colon && (!slash || colon > slash))
		n = (size_t)(colon - ref);
	return ag_xstrndup(ref, n);
}

static int check_identity(const json_t *ce, struct ag_error **err)
{
	const json_t *img = json_object_get(ce, "image");
	const char *local = json_string_value(json_object_get(img, "local_image_id"));
	const char *bound = json_string_value(json_object_get(img, "container_bound_image_id"));
	const json_t *consistent = json_object_get(img, "identity_consistent");
	if (local && bound && strcmp(local, bound) != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
			      "the container's image id differs from the verified local image id");
	if (bound && !(json_is_boolean(consistent) &&
		       json_boolean_value(consistent) == (local && strcmp(local, bound) == 0)))
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
			      "identity_consistent disagrees with the recorded image ids");
	if (!bound && json_is_true(consistent))
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
			      "identity_consistent is true without a container-bound image id");
	const json_t *cid = json_object_get(json_object_get(ce, "cleanup"), "container_identity");
	const char *cimg = json_string_value(json_object_get(cid, "image_id"));
	if (cimg && (!bound || strcmp(cimg, bound) != 0))
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
			      "the cleanup identity's image id differs from the bound image id");
	/* The image metadata (issue 9, finding 10) must agree with itself and with the run. */
	const json_t *epp = json_object_get(img, "entrypoint_present");
	const json_t *eph = json_object_get(img, "entrypoint_sha256");
	const json_t *names = json_object_get(img, "env_names");
	const json_t *total = json_object_get(img, "env_names_total");
	if ((json_is_string(eph) && !json_is_true(epp)) ||
	    (json_is_true(epp) && !json_is_string(eph)) ||
	    (json_array_size(names) && !json_is_integer(total)) ||
	    (json_is_integer(total) &&
	     (json_int_t)json_array_size(names) > json_integer_value(total)))
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_metadata",
			      "the image's entrypoint or ENV facts contradict each other");
	const char *status =
	    json_string_value(json_object_get(json_object_get(ce, "execution"), "status"));
	size_t k;
	const json_t *nm;
	json_array_foreach(names, k, nm)
	{
		const char *n = json_string_value(nm);
		if (n && !ag_env_name_is_default(n, strlen(n)) && ag_env_name_is_reserved(n) &&
		    status && strcmp(status, "executed") == 0)
			return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_env_reserved",
				      "the agent ran in an image whose ENV sets a reserved name");
	}
	const char *digest = json_string_value(json_object_get(img, "registry_digest"));
	const char *conf = json_string_value(json_object_get(img, "configured_reference"));
	if (digest) {
		if (!conf)
			return ag_err(
			    err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
			    "a registry digest is recorded without a configured reference");
		char *a = repository_of(digest), *b = repository_of(conf);
		bool same = strcmp(a, b) == 0;
		free(a);
		free(b);
		if (!same)
			return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.image_identity",
				      "the registry digest is not in the configured repository");
	}
	return 0;
}

/* ---- privacy ---- */

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0, nl = strlen(needle);
	for (const char *p = strstr(s, needle); p; p = strstr(p + nl, needle))
		n++;
	return n;
}

static int check_string(const char *s, size_t len, struct ag_error **err)
{
	if (strlen(s) != len)
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.nul",
			      "a value contains a NUL character, which AgentGuard never writes");
	/* What the writer would produce from already-clean text: only control
	 * characters escaped (newline and tab kept in captured output). */
	struct ag_buf esc = AG_BUF_INIT(SIZE_MAX / 2, "limit.evidence.string");
	struct ag_error *e = NULL;
	bool changed = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			char x[8];
			snprintf(x, sizeof(x), "\\x%02x", c);
			if (ag_buf_adds(&esc, x, &e) < 0)
				break;
			changed = true;
		} else if (ag_buf_add(&esc, s + i, 1, &e) < 0) {
			break;
		}
	}
	ag_error_free(e);
	char *r = ag_redact(NULL, s, len, len * 4 + 64, AG_REDACT_KEEP_NEWLINES, NULL);
	int rc = 0;
	if (strcmp(r, changed ? esc.buf : s) != 0) {
		if (count_of(r, AG_PH_PATH) > count_of(s, AG_PH_PATH))
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.host_path",
				    "a value looks like a private host path");
		else
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.secret",
				    "a value looks like a credential or secret");
	}
	free(r);
	ag_buf_release(&esc);
	return rc;
}

/*
 * A recorded argv (every "command" array): a credential flag's or header's
 * value must be "[REDACTED]" (the writer replaces it whatever the secret set
 * holds, with the same rules, so only an edited or foreign artifact fails).
 */
static int check_argv(const json_t *a, struct ag_error **err)
{
	size_t n = json_array_size(a);
	const char **argv = ag_xcalloc(n + 1, sizeof(*argv));
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		argv[i] = json_string_value(json_array_get(a, i));
		if (!argv[i]) {
			free(argv);
			return 0; /* not an argv: the schema decides */
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (ag_argv_item_leaks_credential(argv, n, i))
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.credential_argument",
				    "a recorded argv holds a credential argument that is not "
				    "redacted (item %zu)",
				    i);
	free(argv);
	return rc;
}

static int check_privacy(const json_t *v, unsigned depth, struct ag_error **err)
{
	if (depth > 64)
		return 0; /* bounds already limited the depth */
	if (json_is_string(v))
		return check_string(json_string_value(v), json_string_length(v), err);
	const char *k;
	const json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			bool argv = strcmp(k, "command") == 0 && json_is_array(x);
			if (check_string(k, strlen(k), err) < 0 ||
			    (argv && check_argv(x, err) < 0) ||
			    check_privacy(x, depth + 1, err) < 0)
				return -1;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			if (check_privacy(x, depth + 1, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* ---- in-memory checks ---- */

static int verify_bytes(struct ag_verify_report *rep, struct ag_error **err)
{
	json_error_t je;
	json_t *a = json_loadb(rep->bytes, rep->len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!a || !json_is_object(a)) {
		json_decref(a);
		ag_err(err, AG_E_UNVERIFIED, 0, "evidence.parse",
		       "the artifact is not one JSON object (line %d column %d)", je.line,
		       je.column);
		return fail(rep, 1);
	}
	rep->artifact = a;
	pass(rep, 1);

	const char *schema = json_string_value(json_object_get(a, "schema"));
	const json_t *ver = json_object_get(a, "schema_version");
	if (!schema || strcmp(schema, "agentguard.contained-run") != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1) {
		ag_err(err, AG_E_UNVERIFIED, 0, "evidence.version",
		       "not an agentguard.contained-run v1 artifact");
		return fail(rep, 2);
	}
	const char *rid = json_string_value(json_object_get(a, "run_id"));
	if (rid)
		rep->run_id = ag_xstrdup(rid);
	pass(rep, 2);

	if (ag_canon_check(a, &ag_canon_artifact_bounds, err) < 0)
		return fail(rep, 3);
	const json_t *ce = json_object_get(a, "containment_evidence");
	if (json_is_object(ce)) {
		char *s = NULL;
		if (ag_canon_dump(ce, &ag_canon_containment_bounds, &s, NULL, err) < 0) {
			ag_err_wrap(err, "containment_evidence");
			return fail(rep, 3);
		}
		free(s);
	}
	pass(rep, 3);

	/* The artifact schema embeds the containment-evidence schema in $defs
	 * (t0550 checks it equals the standalone file). */
	json_t *sa = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, NULL);
	if (!sa) {
		ag_err(err, AG_E_INTERNAL, 0, "evidence.schema.ref",
		       "the built-in schema is invalid");
		return fail(rep, 4);
	}
	const json_t *refs[] = {sa};
	int rc = ag_jschema_validate(sa, refs, 1, a, err);
	json_decref(sa);
	if (rc < 0)
		return fail(rep, 4);
	pass(rep, 4);

	char *canon = NULL;
	size_t cl = 0;
	if (ag_canon_dump(a, &ag_canon_artifact_bounds, &canon, &cl, err) < 0)
		return fail(rep, 5);
	bool same =
	    cl + 1 == rep->len && memcmp(canon, rep->bytes, cl) == 0 && rep->bytes[cl] == '\n';
	free(canon);
	if (!same) {
		ag_err(err, AG_E_UNVERIFIED, 0, "evidence.canonical",
		       "the artifact is not in canonical form (sorted keys, compact, ASCII, one "
		       "trailing newline)");
		return fail(rep, 5);
	}
	pass(rep, 5);

	if (check_identity(ce, err) < 0)
		return fail(rep, 6);
	pass(rep, 6);

	if (check_privacy(a, 1, err) < 0)
		return fail(rep, 7);
	pass(rep, 7);
	return 0;
}

int ag_evidence_verify_bytes(const char *bytes, size_t len, struct ag_verify_report *rep,
			     struct ag_error **err)
{
	memset(rep, 0, sizeof(*rep));
	rep->bytes = ag_xmalloc(len + 1);
	memcpy(rep->bytes, bytes, len);
	rep->bytes[len] = '\0';
	rep->len = len;
	pass(rep, 0);
	return verify_bytes(rep, err);
}

/* ---- seal and chain ---- */

static bool safe_component(const char *s)
{
	if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) > 255)
		return false;
	for (const char *p = s; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20)
			return false;
	return true;
}

/* Reads a small canonical JSON file; *hex = SHA-256 of its bytes. */
static json_t *read_small(int dirfd, const char *name, const struct ag_read_reasons *why,
			  char hex[AG_SHA256_HEX_LEN + 1], char **bytes, size_t *blen,
			  struct ag_error **err)
{
	char *buf = NULL;
	size_t len = 0;
	if (ag_read_file_at(dirfd, name, name, AG_VERIFY_SEAL_MAX_BYTES, why, &buf, &len, err) < 0)
		return NULL;
	ag_sha256_hex(buf, len, hex);
	json_t *j = ag_seal_load_canon(buf, len);
	bool ok = j != NULL;
	if (ok && bytes) {
		*bytes = buf;
		*blen = len;
	} else {
		free(buf);
	}
	if (!ok) {
		ag_err(err, AG_E_UNVERIFIED, 0,
		       why == &head_why ? "evidence.chain.head" : "evidence.seal.malformed",
		       "%s is not canonical JSON", name);
		return NULL;
	}
	return j;
}

static bool token_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || *s == '_'))
			return false;
	return true;
}

static int check_seal(int run_fd, struct ag_verify_report *rep, json_t **seal_out,
		      char seal_hex[AG_SHA256_HEX_LEN + 1], char **bytes, size_t *blen,
		      struct ag_error **err)
{
	json_t *s = read_small(run_fd, AG_SEAL_FILE, &seal_why, seal_hex, bytes, blen, err);
	if (!s)
		return -1;
	const char *sch = json_string_value(json_object_get(s, "schema"));
	const json_t *ver = json_object_get(s, "schema_version");
	const char *art = json_string_value(json_object_get(s, "artifact"));
	const char *ash = json_string_value(json_object_get(s, "artifact_sha256"));
	const char *rid = json_string_value(json_object_get(s, "run_id"));
	const json_t *prev = json_object_get(s, "previous");
	bool prev_ok = json_is_null(prev) ||
		       (json_is_object(prev) && json_object_size(prev) == 2 &&
			safe_component(json_string_value(json_object_get(prev, "run_id"))) &&
			ag_seal_is_hex64(json_string_value(json_object_get(prev, "seal_sha256"))));
	const json_t *cs = json_object_get(s, "chain_start");
	/* previous is null exactly when chain_start says why */
	bool start_ok = json_is_null(prev) ? token_ok(json_string_value(cs)) : json_is_null(cs);
	if (!sch || strcmp(sch, "agentguard.evidence-seal") != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != AG_SEAL_SCHEMA_VERSION || !art ||
	    strcmp(art, ARTIFACT_FILE) != 0 || !ag_seal_is_hex64(ash) || !safe_component(rid) ||
	    !prev_ok || !start_ok ||
	    !ag_seal_is_fingerprint(json_string_value(json_object_get(s, "key_fingerprint"))) ||
	    json_object_size(s) != 8) {
		json_decref(s);
		free(*bytes);
		*bytes = NULL;
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.seal.malformed",
			      "the seal is not an agentguard.evidence-seal v%d object (a seal "
			      "written before evidence was signed is not accepted)",
			      AG_SEAL_SCHEMA_VERSION);
	}
	if (json_is_string(cs))
		rep->chain_start = ag_xstrdup(json_string_value(cs));
	if (!rep->run_id || strcmp(rid, rep->run_id) != 0) {
		json_decref(s);
		free(*bytes);
		*bytes = NULL;
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.seal.run_id",
			      "the seal names a different run than the artifact");
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(rep->bytes, rep->len, hex);
	if (strcmp(hex, ash) != 0) {
		json_decref(s);
		free(*bytes);
		*bytes = NULL;
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.seal.mismatch",
			      "the artifact's SHA-256 differs from the seal: the artifact was "
			      "modified after it was sealed");
	}
	*seal_out = s;
	return 0;
}

static bool same_dir(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int check_chain(int root_fd, int run_fd, const json_t *seal, const char *seal_hex,
		       const char *run_id, struct ag_error **err)
{
	/* the run directory must be the runs root's entry of that name */
	int self = openat(root_fd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool ok = self >= 0 && same_dir(self, run_fd);
	if (self >= 0)
		close(self);
	if (!ok)
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.broken",
			      "the run directory is not named after its run id in its runs root");
	const json_t *prev = json_object_get(seal, "previous");
	if (json_is_object(prev)) {
		const char *pid = json_string_value(json_object_get(prev, "run_id"));
		const char *psh = json_string_value(json_object_get(prev, "seal_sha256"));
		int pfd = openat(root_fd, pid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return ag_err(
			    err, AG_E_UNVERIFIED, errno, "evidence.chain.previous_missing",
			    "the previous run of the chain is missing from the runs root");
		char *buf = NULL;
		size_t len = 0;
		struct ag_error *e = NULL;
		int rc = ag_read_file_at(pfd, AG_SEAL_FILE, AG_SEAL_FILE, AG_VERIFY_SEAL_MAX_BYTES,
					 &seal_why, &buf, &len, &e);
		close(pfd);
		if (rc < 0) {
			ag_error_free(e);
			return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.previous_missing",
				      "the previous run's seal is missing or unreadable");
		}
		char hex[AG_SHA256_HEX_LEN + 1];
		ag_sha256_hex(buf, len, hex);
		free(buf);
		if (strcmp(hex, psh) != 0)
			return ag_err(
			    err, AG_E_UNVERIFIED, 0, "evidence.chain.broken",
			    "the previous run's seal was changed after this run linked to it");
	}
	char hhex[AG_SHA256_HEX_LEN + 1];
	json_t *h = read_small(root_fd, AG_CHAIN_HEAD_FILE, &head_why, hhex, NULL, NULL, err);
	if (!h)
		return ag_err_wrap(err, "chain head");
	const char *hid = json_string_value(json_object_get(h, "run_id"));
	const char *hsh = json_string_value(json_object_get(h, "seal_sha256"));
	const char *hs = json_string_value(json_object_get(h, "schema"));
	int rc = 0;
	if (!hs || strcmp(hs, "agentguard.evidence-chain-head") != 0 || !safe_component(hid) ||
	    !ag_seal_is_hex64(hsh)) {
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.head",
			    "the chain head is malformed");
	} else if (strcmp(hid, run_id) == 0) {
		if (strcmp(hsh, seal_hex) != 0)
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.head",
				    "the chain head names this run but a different seal");
	} else {
		/* the newest run must still be there, with the seal the head names */
		int hfd = openat(root_fd, hid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char *buf = NULL;
		size_t len = 0;
		struct ag_error *e = NULL;
		char hex[AG_SHA256_HEX_LEN + 1] = "";
		if (hfd >= 0 &&
		    ag_read_file_at(hfd, AG_SEAL_FILE, AG_SEAL_FILE, AG_VERIFY_SEAL_MAX_BYTES,
				    &seal_why, &buf, &len, &e) == 0)
			ag_sha256_hex(buf, len, hex);
		ag_error_free(e);
		free(buf);
		if (hfd >= 0)
			close(hfd);
		if (hfd < 0 || !hex[0])
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.head",
				    "the newest run of the chain is missing from the runs root");
		else if (strcmp(hex, hsh) != 0)
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.chain.head",
				    "the newest run's seal differs from the chain head");
	}
	json_decref(h);
	return rc;
}

/* ---- patch ---- */

int ag_evidence_patch_read(int run_fd, const json_t *artifact, char **out, size_t *len,
			   struct ag_error **err)
{
	static const struct ag_read_reasons why = {
	    "evidence.patch.symlink", "evidence.patch.not_regular", "evidence.patch.missing",
	    "evidence.patch.too_large"};
	const json_t *p = json_object_get(artifact, "patch");
	const char *status = json_string_value(json_object_get(p, "status"));
	const char *want = json_string_value(json_object_get(p, "sha256"));
	const json_t *bytes = json_object_get(p, "bytes");
	if (!status || strcmp(status, "written") != 0) {
		if (!out)
			return 0;
		const char *reason = json_string_value(json_object_get(p, "reason"));
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.patch.none",
			      "this run has no changes.patch: %s%s%s%s",
			      ag_patch_why_missing(status, reason), reason ? " (" : "",
			      reason ? reason : "", reason ? ")" : "");
	}
	if (!want || !json_is_integer(bytes))
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.patch.mismatch",
			      "the artifact's patch record has no hash or size");
	char *data = NULL;
	size_t n = 0;
	if (ag_read_file_at(run_fd, AG_RUN_PATCH_FILE, AG_RUN_PATCH_FILE, AG_PATCH_MAX_BYTES, &why,
			    &data, &n, err) < 0)
		return -1;
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(data, n, hex);
	if ((json_int_t)n != json_integer_value(bytes) || strcmp(hex, want) != 0) {
		free(data);
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.patch.mismatch",
			      "changes.patch is not the patch the sealed artifact records");
	}
	if (out) {
		*out = data;
		*len = n;
	} else {
		free(data);
	}
	return 0;
}

int ag_evidence_run_dir(const char *path, struct ag_error **err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	const char *slash = strrchr(path, '/');
	char *dir =
	    slash ? ag_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : ag_xstrdup(".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.read.io",
			      "cannot open the artifact's directory");
	return fd;
}

/* The egress check a layer above plugs in (verify.h); NULL until then. */
static ag_verify_artifact_check_fn egress_check;

void ag_verify_set_egress_check(ag_verify_artifact_check_fn fn)
{
	egress_check = fn;
}

/* A study run's egress manifest: judged by the check plugged in from above;
 * a study artifact with nothing to judge it fails closed. */
static int check_egress_manifest(int run_fd, struct ag_verify_report *rep, struct ag_error **err)
{
	if (egress_check)
		return egress_check(run_fd, rep->artifact, err);
	if (!json_object_get(rep->artifact, "study_egress"))
		return 0; /* not a study run */
	return ag_err(err, AG_E_INTERNAL, 0, "evidence.egress_manifest.unchecked",
		      "this program cannot check a study run's egress manifest");
}

static int check_patch(int run_fd, struct ag_verify_report *rep, struct ag_error **err)
{
	if (ag_evidence_patch_read(run_fd, rep->artifact, NULL, NULL, err) < 0)
		return fail(rep, 11);
	pass(rep, 11);
	if (check_egress_manifest(run_fd, rep, err) < 0)
		return fail(rep, 12);
	pass(rep, 12);
	return 0;
}

static int verify_at(int run_fd, const char *name, const struct ag_verify_opts *o,
		     struct ag_verify_report *rep, struct ag_error **err)
{
	if (ag_read_file_at(run_fd, name, name, AG_VERIFY_ARTIFACT_MAX_BYTES, &art_why, &rep->bytes,
			    &rep->len, err) < 0)
		return fail(rep, 0);
	pass(rep, 0);
	if (verify_bytes(rep, err) < 0)
		return -1;

	json_t *seal = NULL;
	char seal_hex[AG_SHA256_HEX_LEN + 1];
	char *sb = NULL;
	size_t sl = 0;
	if (check_seal(run_fd, rep, &seal, seal_hex, &sb, &sl, err) < 0)
		return fail(rep, 8);
	pass(rep, 8);
	int sr = ag_seal_check_signature(run_fd, sb, sl, o ? o->trust : NULL, &rep->signer, err);
	free(sb);
	if (sr < 0) {
		json_decref(seal);
		return fail(rep, 9);
	}
	pass(rep, 9);
	if (o && o->standalone) {
		json_decref(seal);
		return check_patch(run_fd, rep, err); /* chain_checked stays false */
	}
	int root_fd = openat(run_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		json_decref(seal);
		ag_err(err, AG_E_IO, errno, "evidence.chain.broken", "cannot open the runs root");
		return fail(rep, 10);
	}
	int rc = check_chain(root_fd, run_fd, seal, seal_hex, rep->run_id, err);
	close(root_fd);
	json_decref(seal);
	if (rc < 0)
		return fail(rep, 10);
	pass(rep, 10);
	rep->chain_checked = true;
	return check_patch(run_fd, rep, err);
}

int ag_evidence_verify(const char *path, const struct ag_verify_opts *o,
		       struct ag_verify_report *rep, struct ag_error **err)
{
	memset(rep, 0, sizeof(*rep));
	/* A directory is the run directory; anything else is the artifact file. */
	_cleanup_close_ int run_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *name = ARTIFACT_FILE;
	_cleanup_free_ char *dir = NULL;
	if (run_fd < 0) {
		const char *slash = strrchr(path, '/');
		dir = slash ? ag_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
			    : ag_xstrdup(".");
		name = slash ? slash + 1 : path;
		run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (run_fd < 0 || !*name) {
			ag_err(err, AG_E_IO, errno, "evidence.read.io",
			       "cannot open the artifact's directory");
			return fail(rep, 0);
		}
	}
	return verify_at(run_fd, name, o, rep, err);
}

int ag_evidence_verify_at(int run_fd, const struct ag_verify_opts *o, struct ag_verify_report *rep,
			  struct ag_error **err)
{
	memset(rep, 0, sizeof(*rep));
	return verify_at(run_fd, ARTIFACT_FILE, o, rep, err);
}
