#include "lib/base/ag.h"
#include "lib/evidence/seal.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/sign.h"

#include <jansson.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

static const struct ag_read_reasons why = {"evidence.seal.symlink", "evidence.seal.not_regular",
					   "evidence.seal.io", "evidence.seal.too_large"};
static const struct ag_read_reasons sig_why = {
    "evidence.signature.malformed", "evidence.signature.malformed", "evidence.signature.missing",
    "evidence.signature.malformed"};

static char *canon_line(json_t *v, size_t *len, struct ag_error **err)
{
	char *s = NULL;
	size_t n = 0;
	if (ag_canon_dump(v, &ag_canon_containment_bounds, &s, &n, err) < 0)
		return NULL;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	*len = n + 1;
	return nl;
}

static int write_canon(int dirfd, const char *name, json_t *v, char hex[AG_SHA256_HEX_LEN + 1],
		       struct ag_error **err)
{
	size_t n = 0;
	char *nl = canon_line(v, &n, err);
	if (!nl)
		return -1;
	if (hex)
		ag_sha256_hex(nl, n, hex);
	int rc = ag_write_file_atomic_at(dirfd, name, name, nl, n, 0644, false, err);
	free(nl);
	return rc;
}

bool ag_seal_is_hex64(const char *s)
{
	if (!s || strlen(s) != AG_SHA256_HEX_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

bool ag_seal_is_fingerprint(const char *s)
{
	return s && strlen(s) == AG_SIGN_FPR_LEN && strncmp(s, "ed25519:", 8) == 0 &&
	       ag_seal_is_hex64(s + 8);
}

static bool component(const char *s)
{
	return s && *s && strlen(s) <= 255 && !strchr(s, '/') && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

json_t *ag_seal_load_canon(const char *buf, size_t len)
{
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	char *c = NULL;
	size_t cl = 0;
	struct ag_error *e = NULL;
	bool ok = json_is_object(j) &&
		  ag_canon_dump(j, &ag_canon_containment_bounds, &c, &cl, &e) == 0 &&
		  cl + 1 == len && memcmp(c, buf, cl) == 0 && buf[cl] == '\n';
	ag_error_free(e);
	free(c);
	if (!ok) {
		json_decref(j);
		return NULL;
	}
	return j;
}

int ag_seal_check_signature(int run_fd, const char *seal, size_t seal_len,
			    const struct ag_trust *trust, char **fpr, struct ag_error **err)
{
	if (fpr)
		*fpr = NULL;
	char *buf = NULL;
	size_t len = 0;
	if (ag_read_file_at(run_fd, AG_SIG_FILE, AG_SIG_FILE, AG_SIGN_FILE_MAX_BYTES, &sig_why,
			    &buf, &len, err) < 0)
		return -1;
	json_t *s = ag_seal_load_canon(buf, len);
	free(buf);
	const char *alg = json_string_value(json_object_get(s, "algorithm"));
	const char *kf = json_string_value(json_object_get(s, "key_fingerprint"));
	const char *sch = json_string_value(json_object_get(s, "schema"));
	const char *ssh = json_string_value(json_object_get(s, "seal_sha256"));
	const char *sig = json_string_value(json_object_get(s, "signature"));
	const json_t *ver = json_object_get(s, "schema_version");
	if (!s || json_object_size(s) != 6 || !alg || strcmp(alg, "ed25519") != 0 ||
	    !ag_seal_is_fingerprint(kf) || !sch ||
	    strcmp(sch, "agentguard.evidence-signature") != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1 || !ag_seal_is_hex64(ssh) || !sig) {
		json_decref(s);
		return ag_err(err, AG_E_UNVERIFIED, 0, "evidence.signature.malformed",
			      "the signature file is not an agentguard.evidence-signature v1 "
			      "object");
	}
	if (fpr)
		*fpr = ag_xstrdup(kf);
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(seal, seal_len, hex);
	const struct ag_sign_key *k = ag_trust_find(trust, kf);
	int rc = 0;
	if (strcmp(hex, ssh) != 0)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.signature.invalid",
			    "the signature is for a different seal");
	else if (!k)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.signature.untrusted",
			    "signed by key %s, which is not trusted here (give its public key with "
			    "--public-key)",
			    kf);
	else if (!ag_sign_check(k, seal, seal_len, sig))
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "evidence.signature.invalid",
			    "the seal's Ed25519 signature does not verify: the seal was changed or "
			    "not signed by key %s",
			    kf);
	json_decref(s);
	return rc;
}

/*
 * May this run link to the head? Only when the head names a run whose seal
 * it hashes and that seal is signed by our key. Returns NULL (link to
 * *prev) or a static reason why not.
 */
static const char *check_head(int root_fd, const struct ag_sign_key *key, json_t **prev)
{
	char *head = NULL, *seal = NULL;
	size_t hl = 0, sl = 0;
	struct ag_error *e = NULL;
	const char *why_not = NULL;
	if (ag_read_file_at(root_fd, AG_CHAIN_HEAD_FILE, AG_CHAIN_HEAD_FILE,
			    AG_VERIFY_SEAL_MAX_BYTES, &why, &head, &hl, &e) < 0) {
		why_not = e->sys_errno == ENOENT && strcmp(e->reason, "evidence.seal.io") == 0
			      ? "empty"
			      : "head_malformed";
		ag_error_free(e);
		return why_not;
	}
	json_t *h = ag_seal_load_canon(head, hl);
	free(head);
	const char *hid = json_string_value(json_object_get(h, "run_id"));
	const char *hsh = json_string_value(json_object_get(h, "seal_sha256"));
	const char *hs = json_string_value(json_object_get(h, "schema"));
	int rfd = -1;
	if (!h || !hs || strcmp(hs, "agentguard.evidence-chain-head") != 0 || !component(hid) ||
	    !ag_seal_is_hex64(hsh)) {
		why_not = "head_malformed";
		goto out;
	}
	rfd = openat(root_fd, hid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0 || ag_read_file_at(rfd, AG_SEAL_FILE, AG_SEAL_FILE, AG_VERIFY_SEAL_MAX_BYTES,
				       &why, &seal, &sl, &e) < 0) {
		why_not = "head_missing_run";
		goto out;
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(seal, sl, hex);
	if (strcmp(hex, hsh) != 0) {
		why_not = "head_seal_mismatch";
		goto out;
	}
	const struct ag_sign_key *const keys[] = {key};
	const struct ag_trust t = {keys, 1};
	if (ag_seal_check_signature(rfd, seal, sl, &t, NULL, &e) < 0) {
		why_not =
		    strcmp(e->reason, "evidence.signature.untrusted") == 0 ? "head_foreign_key"
		    : strcmp(e->reason, "evidence.signature.invalid") == 0 ? "head_bad_signature"
									   : "head_unsigned";
		goto out;
	}
	*prev = json_pack("{s:s, s:s}", "run_id", hid, "seal_sha256", hsh);
out:
	ag_error_free(e);
	free(seal);
	if (rfd >= 0)
		close(rfd);
	json_decref(h);
	return why_not;
}

/* Writes seal + signature into the run directory; *seal_hex = the seal's SHA-256. */
static int write_seal(int run_fd, const char *run_id, const char *artifact_name,
		      const struct ag_sign_key *key, json_t *prev, const char *chain_start,
		      char seal_hex[AG_SHA256_HEX_LEN + 1], struct ag_error **err)
{
	static const struct ag_read_reasons art_why = {
	    "evidence.seal.symlink", "evidence.seal.not_regular", "evidence.seal.io",
	    "evidence.seal.too_large"};
	char *art = NULL;
	size_t al = 0;
	if (ag_read_file_at(run_fd, artifact_name, artifact_name, AG_SEAL_ARTIFACT_MAX_BYTES,
			    &art_why, &art, &al, err) < 0)
		return -1;
	char ahex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(art, al, ahex);
	free(art);
	json_t *seal = json_pack(
	    "{s:s, s:s, s:o, s:s, s:O, s:s, s:s, s:i}", "artifact", artifact_name,
	    "artifact_sha256", ahex, "chain_start",
	    chain_start ? json_string(chain_start) : json_null(), "key_fingerprint",
	    ag_sign_key_fingerprint(key), "previous", prev ? prev : json_null(), "run_id", run_id,
	    "schema", "agentguard.evidence-seal", "schema_version", AG_SEAL_SCHEMA_VERSION);
	size_t sl = 0;
	char *sb = canon_line(seal, &sl, err);
	json_decref(seal);
	if (!sb)
		return -1;
	ag_sha256_hex(sb, sl, seal_hex);
	char b64[AG_SIGN_B64_LEN + 1];
	int rc = ag_sign(key, sb, sl, b64, err);
	if (rc == 0)
		rc = ag_write_file_atomic_at(run_fd, AG_SEAL_FILE, AG_SEAL_FILE, sb, sl, 0644,
					     false, err);
	free(sb);
	if (rc < 0)
		return -1;
	json_t *sig =
	    json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "algorithm", "ed25519", "key_fingerprint",
		      ag_sign_key_fingerprint(key), "schema", "agentguard.evidence-signature",
		      "schema_version", 1, "seal_sha256", seal_hex, "signature", b64);
	rc = write_canon(run_fd, AG_SIG_FILE, sig, NULL, err);
	json_decref(sig);
	return rc;
}

static int open_run(int root_fd, const char *run_id, struct ag_error **err)
{
	int fd = openat(root_fd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.seal.io",
			      "cannot open the run directory");
	return fd;
}

int ag_seal_run_unchained(int runs_root_fd, const char *run_id, const char *artifact_name,
			  const struct ag_sign_key *key, const char *reason, struct ag_error **err)
{
	_cleanup_close_ int run_fd = open_run(runs_root_fd, run_id, err);
	if (run_fd < 0)
		return -1;
	char hex[AG_SHA256_HEX_LEN + 1];
	return write_seal(run_fd, run_id, artifact_name, key, NULL, reason, hex, err);
}

/* Bounded, cancellable wait for the exclusive chain lock. */
static int take_lock(int lock, const struct ag_seal_opts *o, struct ag_error **err)
{
	unsigned limit = o->lock_wait_ms ? o->lock_wait_ms : AG_CHAIN_LOCK_WAIT_MS;
	for (unsigned waited = 0;; waited += AG_CHAIN_LOCK_POLL_MS) {
		if (flock(lock, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return ag_err(err, AG_E_IO, errno, "evidence.seal.io",
				      "cannot lock the chain: %s", strerror(errno));
		if (o->cancel && *o->cancel)
			return ag_err(err, AG_E_IO, 0, "evidence.seal.cancelled",
				      "cancelled while waiting for the runs root's chain lock");
		if (waited >= limit)
			return ag_err(err, AG_E_LIMIT, 0, "evidence.seal.lock_timeout",
				      "another process held the runs root's chain lock (%s) for "
				      "more than %u ms",
				      AG_CHAIN_LOCK_FILE, limit);
		struct timespec ts = {0, AG_CHAIN_LOCK_POLL_MS * 1000000L};
		nanosleep(&ts, NULL); /* a signal cuts it short: checked above */
	}
}

int ag_seal_run(int runs_root_fd, const char *run_id, const char *artifact_name,
		const struct ag_seal_opts *o, struct ag_seal_result *res, struct ag_error **err)
{
	res->chain_start = NULL;
	int lock = openat(runs_root_fd, AG_CHAIN_LOCK_FILE,
			  O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	struct stat st;
	if (lock < 0 || fstat(lock, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		if (lock >= 0)
			close(lock);
		return ag_err(err, AG_E_IO, e, "evidence.seal.io",
			      "cannot open the chain lock (%s) as a regular file",
			      AG_CHAIN_LOCK_FILE);
	}
	if (take_lock(lock, o, err) < 0) {
		close(lock);
		return -1;
	}
	int rc = -1;
	json_t *prev = NULL;
	int run_fd = open_run(runs_root_fd, run_id, err);
	if (run_fd < 0)
		goto out;
	res->chain_start = check_head(runs_root_fd, o->key, &prev);
	char shex[AG_SHA256_HEX_LEN + 1];
	if (write_seal(run_fd, run_id, artifact_name, o->key, prev, res->chain_start, shex, err) <
	    0)
		goto out;
	json_t *nh = json_pack("{s:s, s:s, s:s, s:i}", "run_id", run_id, "seal_sha256", shex,
			       "schema", "agentguard.evidence-chain-head", "schema_version", 1);
	int w = write_canon(runs_root_fd, AG_CHAIN_HEAD_FILE, nh, NULL, err);
	json_decref(nh);
	if (w < 0)
		goto out;
	rc = 0;
out:
	json_decref(prev);
	if (run_fd >= 0)
		close(run_fd);
	flock(lock, LOCK_UN);
	close(lock);
	return rc;
}
