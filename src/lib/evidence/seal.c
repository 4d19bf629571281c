#include "lib/base/ag.h"
#include "lib/evidence/seal.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/evidence/canon.h"

#include <jansson.h>
#include <sys/file.h>


static const struct ag_read_reasons why = {"evidence.seal.symlink", "evidence.seal.not_regular",
					   "evidence.seal.io", "evidence.seal.too_large"};

static int write_canon(int dirfd, const char *name, json_t *v, char hex[AG_SHA256_HEX_LEN + 1],
		       struct ag_error **err)
{
	char *s = NULL;
	size_t n = 0;
	if (ag_canon_dump(v, &ag_canon_containment_bounds, &s, &n, err) < 0)
		return -1;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	if (hex)
		ag_sha256_hex(nl, n + 1, hex);
	int rc = ag_write_file_atomic_at(dirfd, name, name, nl, n + 1, 0644, false, err);
	free(nl);
	return rc;
}

int ag_seal_run(int runs_root_fd, const char *run_id, const char *artifact_name,
		struct ag_error **err)
{
	int lock = openat(runs_root_fd, AG_CHAIN_LOCK_FILE,
			  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0)
		return ag_err(err, AG_E_IO, errno, "evidence.seal.io", "cannot open the chain lock");
	while (flock(lock, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(lock);
			return ag_err(err, AG_E_IO, errno, "evidence.seal.io",
				      "cannot lock the chain");
		}
	int rc = -1;
	json_t *prev = json_null();
	char *head = NULL, *art = NULL;
	size_t hl = 0, al = 0;
	struct ag_error *re = NULL;
	int run_fd = openat(runs_root_fd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run_fd < 0) {
		ag_err(err, AG_E_IO, errno, "evidence.seal.io", "cannot open the run directory");
		goto out;
	}
	if (ag_read_file_at(run_fd, artifact_name, artifact_name, AG_SEAL_ARTIFACT_MAX_BYTES, &why, &art, &al,
			    err) < 0)
		goto out;
	if (ag_read_file_at(runs_root_fd, AG_CHAIN_HEAD_FILE, AG_CHAIN_HEAD_FILE, 4096, &why, &head,
			    &hl, &re) == 0) {
		json_t *h = json_loadb(head, hl, JSON_REJECT_DUPLICATES, NULL);
		const char *hid = json_string_value(json_object_get(h, "run_id"));
		const char *hsh = json_string_value(json_object_get(h, "seal_sha256"));
		if (!hid || !hsh || strlen(hsh) != AG_SHA256_HEX_LEN) {
			json_decref(h);
			ag_err(err, AG_E_IO, 0, "evidence.seal.head_corrupt",
			       "the runs root's chain head is malformed; refusing to extend it");
			goto out;
		}
		json_decref(prev);
		prev = json_pack("{s:s, s:s}", "run_id", hid, "seal_sha256", hsh);
		json_decref(h);
	} else if (re->sys_errno != ENOENT) {
		*err = re;
		re = NULL;
		goto out;
	}
	char ahex[AG_SHA256_HEX_LEN + 1], shex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(art, al, ahex);
	json_t *seal = json_pack("{s:s, s:s, s:O, s:s, s:s, s:i}", "artifact", artifact_name,
				 "artifact_sha256", ahex, "previous", prev, "run_id", run_id,
				 "schema", "agentguard.evidence-seal", "schema_version", 1);
	int w = write_canon(run_fd, AG_SEAL_FILE, seal, shex, err);
	json_decref(seal);
	if (w < 0)
		goto out;
	json_t *nh = json_pack("{s:s, s:s, s:s, s:i}", "run_id", run_id, "seal_sha256", shex,
			       "schema", "agentguard.evidence-chain-head", "schema_version", 1);
	w = write_canon(runs_root_fd, AG_CHAIN_HEAD_FILE, nh, NULL, err);
	json_decref(nh);
	if (w < 0)
		goto out;
	rc = 0;
out:
	ag_error_free(re);
	json_decref(prev);
	free(head);
	free(art);
	if (run_fd >= 0)
		close(run_fd);
	flock(lock, LOCK_UN);
	close(lock);
	return rc;
}
