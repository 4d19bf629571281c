#include "lib/base/ag.h"
#include "lib/run/recover.h"
#include "lib/run/study.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/strv.h"
#include "lib/docker/engine.h"
#include "lib/docker/ledger.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/preflight.h"
#include "lib/base/sha256.h"
#include "lib/evidence/attest.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/sign.h"
#include "lib/evidence/verify.h"
#include "lib/run/contained_run.h"
#include "lib/run/runs_audit.h"
#include "lib/workspace/workspace.h"

#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

static bool valid_run_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 255 || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return strstr(s, "-contained-") != NULL;
}

/* Reads and checks the marker; returns its JSON or NULL when not ours. */
static json_t *read_marker(int run_fd, const char *run_id)
{
	static const struct ag_read_reasons why = {"run.marker.symlink", "run.marker.not_regular",
						   "run.marker.open", "run.marker.too_large"};
	int fd = openat(run_fd, AG_RUN_MARKER_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return NULL;
	}
	char *data = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	int rc = ag_read_fd(fd, "marker", AG_RUN_MARKER_MAX_BYTES, &why, &data, &len, &e);
	close(fd);
	ag_error_free(e);
	if (rc < 0)
		return NULL;
	json_error_t je;
	json_t *m = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (!json_is_object(m))
		goto bad;
	const char *schema = json_string_value(json_object_get(m, "schema"));
	const char *owner = json_string_value(json_object_get(m, "owner"));
	const char *kind = json_string_value(json_object_get(m, "artifact_kind"));
	const char *id = json_string_value(json_object_get(m, "run_id"));
	const json_t *ver = json_object_get(m, "schema_version");
	if (!schema || strcmp(schema, "agentguard.contained-run-artifact") != 0 || !owner ||
	    strcmp(owner, "agentguard") != 0 || !kind || strcmp(kind, "contained-run") != 0 ||
	    !id || strcmp(id, run_id) != 0 || !json_is_integer(ver) || json_integer_value(ver) != 1)
		goto bad;
	return m;
bad:
	json_decref(m);
	return NULL;
}

static bool owner_alive(const json_t *m)
{
	const json_t *pid = json_object_get(m, "owner_pid");
	const json_t *ticks = json_object_get(m, "owner_start_ticks");
	if (!json_is_integer(pid) || !json_is_integer(ticks))
		return false;
	json_int_t p = json_integer_value(pid), t = json_integer_value(ticks);
	if (p <= 0 || p > INT32_MAX || t <= 0)
		return false;
	return ag_process_alive((pid_t)p, (unsigned long long)t);
}

static void logf_(ag_recover_log_fn log, void *data, const char *fmt, ...) AG_PRINTF(3, 4);
static void logf_(ag_recover_log_fn log, void *data, const char *fmt, ...)
{
	if (!log)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = ag_xvasprintf(fmt, ap);
	va_end(ap);
	log(s, data);
	free(s);
}

struct log_ctx {
	ag_recover_log_fn log;
	void *data;
	const char *run_id;
};

static void log_container(const char *id, const struct ag_cleanup_result *r, void *data)
{
	const struct log_ctx *lc = data;
	logf_(lc->log, lc->data, "%s: container %.12s: %s", lc->run_id, id,
	      ag_cleanup_state_name(r->state));
}

static bool remove_workspace(int run_fd, size_t *removed)
{
	int lf =
	    openat(run_fd, AG_RUN_LIFECYCLE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lf < 0)
		return errno == ENOENT;
	bool ok = true;
	struct ag_ws_cleanup_report wr;
	struct ag_error *e = NULL;
	struct stat st;
	if (fstatat(lf, AG_RUN_WORKSPACE_ID, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (ag_ws_cleanup(lf, AG_RUN_WORKSPACE_ID, &wr, &e) < 0)
			ok = false;
		else
			(*removed)++;
	}
	ag_error_free(e);
	/* A staging tree left by a crash during preparation. */
	char staging[128];
	snprintf(staging, sizeof(staging), "%s.preparing", AG_RUN_WORKSPACE_ID);
	if (fstatat(lf, staging, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		uint64_t rm = 0, left = 0;
		if (ag_ws_remove_tree(lf, staging, &rm, &left) < 0 || left)
			ok = false;
	}
	close(lf);
	if (ok && unlinkat(run_fd, AG_RUN_LIFECYCLE_DIR, AT_REMOVEDIR) < 0 && errno != ENOENT)
		ok = false;
	return ok;
}

/* ---- the signed marker and the recovery record ---- */

static char *canon_line(json_t *v, size_t *len, struct ag_error **err)
{
	char *s = NULL;
	size_t n = 0;
	if (!v)
		return ag_err(err, AG_E_INTERNAL, 0, "run.recovered.io", "cannot build a record"),
		       NULL;
	if (ag_canon_dump(v, &ag_canon_artifact_bounds, &s, &n, err) < 0)
		return NULL;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	*len = n + 1;
	return nl;
}

int ag_run_marker_write(int run_fd, const char *run_id, const char *state,
			const struct ag_sign_key *key, struct ag_error **err)
{
	/* The owner process identity lets `agentguard cleanup` tell a live run from a crash. */
	json_t *m = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:I}", "schema",
			      "agentguard.contained-run-artifact", "schema_version", 1, "owner",
			      "agentguard", "artifact_kind", "contained-run", "run_id", run_id,
			      "lifecycle_state", state, "owner_pid", (int)getpid(),
			      "owner_start_ticks", (json_int_t)ag_process_start_ticks(getpid()));
	size_t n = 0;
	char *nl = canon_line(m, &n, err);
	json_decref(m);
	if (!nl)
		return -1;
	int rc =
	    ag_write_file_atomic_at(run_fd, AG_RUN_MARKER_FILE, "marker", nl, n, 0644, false, err);
	if (rc == 0 && key)
		rc = ag_attest_sign(run_fd, AG_RUN_MARKER_FILE, AG_RUN_MARKER_SIG_FILE, nl, n, key,
				    err);
	free(nl);
	return rc;
}

/* The SHA-256 of the marker, when it is signed by a trusted key. */
static int marker_signed(int run_fd, const struct ag_trust *t, char hex[AG_SHA256_HEX_LEN + 1],
			 struct ag_error **err)
{
	char *b = NULL;
	size_t n = 0;
	if (ag_attest_check(run_fd, AG_RUN_MARKER_FILE, AG_RUN_MARKER_SIG_FILE,
			    AG_RUN_MARKER_MAX_BYTES, t, &b, &n, NULL, err) < 0)
		return -1;
	ag_sha256_hex(b, n, hex);
	free(b);
	return 0;
}

/* SHA-256 of a regular single-link file of at most AG_RECOVER_FILE_MAX_BYTES. */
static int hash_file(int dirfd, const char *name, char hex[AG_SHA256_HEX_LEN + 1])
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (uint64_t)st.st_size > AG_RECOVER_FILE_MAX_BYTES) {
		close(fd);
		return -1;
	}
	struct ag_sha256 *h = ag_sha256_new();
	char buf[65536];
	uint64_t total = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0 && total <= AG_RECOVER_FILE_MAX_BYTES) {
		total += (uint64_t)r;
		ag_sha256_update(h, buf, (size_t)r);
	}
	close(fd);
	ag_sha256_final_hex(h, hex);
	return r < 0 || total > AG_RECOVER_FILE_MAX_BYTES ? -1 : 0;
}

/* The study's evidence directory is recorded file by file ("egress/NAME"). */
#define STUDY_PREFIX AG_STUDY_DIR "/"

static int hash_path(int run_fd, const char *name, char hex[AG_SHA256_HEX_LEN + 1])
{
	if (strncmp(name, STUDY_PREFIX, strlen(STUDY_PREFIX)) != 0)
		return hash_file(run_fd, name, hex);
	const char *rest = name + strlen(STUDY_PREFIX);
	if (!*rest || strchr(rest, '/'))
		return -1;
	int dfd = openat(run_fd, AG_STUDY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int rc = hash_file(dfd, rest, hex);
	close(dfd);
	return rc;
}

/* A name a recovery record may list. */
static bool recordable(const char *name)
{
	if (strncmp(name, STUDY_PREFIX, strlen(STUDY_PREFIX)) == 0)
		return name[strlen(STUDY_PREFIX)] && !strchr(name + strlen(STUDY_PREFIX), '/');
	return ag_runs_audit_run_file(name, false);
}

static bool record_own_file(const char *name)
{
	return strcmp(name, AG_RUN_MARKER_FILE) == 0 || strcmp(name, AG_RUN_MARKER_SIG_FILE) == 0 ||
	       strcmp(name, AG_RUN_RECOVERED_FILE) == 0 ||
	       strcmp(name, AG_RUN_RECOVERED_SIG_FILE) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dfd's entries (but . and ..) to out as PREFIX+name; -1 past the bound. */
static int list_dir(int dfd, const char *prefix, struct ag_strv *out, size_t *n,
		    struct ag_error **err)
{
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return ag_err(err, AG_E_IO, errno, "run.recovered.io",
			      "cannot read the run directory");
	}
	rewinddir(d);
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++*n > AG_RUNS_AUDIT_MAX_RUN_ENTRIES)
			rc = ag_err(err, AG_E_LIMIT, 0, "run.recovered.entry",
				    "the run directory holds more than %d entries",
				    AG_RUNS_AUDIT_MAX_RUN_ENTRIES);
		else if (*prefix || !record_own_file(de->d_name)) {
			char *full = ag_xasprintf("%s%s", prefix, de->d_name);
			ag_strv_push(out, full);
			free(full);
		}
	}
	closedir(d);
	return rc;
}

/*
 * The names in run_fd other than the marker, the record and their
 * signatures, sorted; the study's evidence directory (a real directory, no
 * link) contributes its entries as "egress/NAME" instead of itself.
 */
static int other_files(int run_fd, struct ag_strv *out, struct ag_error **err)
{
	size_t n = 0;
	if (list_dir(run_fd, "", out, &n, err) < 0)
		return -1;
	struct stat st;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < out->n; i++) {
		if (strcmp(out->v[i], AG_STUDY_DIR) != 0 ||
		    fstatat(run_fd, AG_STUDY_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		int dfd =
		    openat(run_fd, AG_STUDY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return ag_err(err, AG_E_IO, errno, "run.recovered.io",
				      "cannot read the study's evidence directory");
		free(out->v[i]);
		out->v[i] = out->v[--out->n];
		out->v[out->n] = NULL;
		rc = list_dir(dfd, STUDY_PREFIX, out, &n, err);
		close(dfd);
		break;
	}
	if (rc == 0 && out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	return rc;
}

/* {name, sha256} of every other file, each one a run writes; -1 otherwise. */
static json_t *file_list(int run_fd, struct ag_error **err)
{
	struct ag_strv names = AG_STRV_INIT;
	if (other_files(run_fd, &names, err) < 0) {
		ag_strv_release(&names);
		return NULL;
	}
	json_t *files = json_array();
	for (size_t i = 0; i < names.n && files; i++) {
		char hex[AG_SHA256_HEX_LEN + 1];
		if (!recordable(names.v[i]) || hash_path(run_fd, names.v[i], hex) < 0) {
			ag_err(err, AG_E_UNSAFE_PATH, 0, "run.recovered.entry",
			       "the run directory holds an entry that is not a run file AgentGuard "
			       "can record");
			json_decref(files);
			files = NULL;
			break;
		}
		json_array_append_new(files,
				      json_pack("{s:s, s:s}", "name", names.v[i], "sha256", hex));
	}
	ag_strv_release(&names);
	return files;
}

static int write_record(int run_fd, const char *run_id, const char *marker_hex,
			const struct ag_sign_key *key, size_t containers, bool ws_removed,
			struct ag_error **err)
{
	json_t *files = file_list(run_fd, err);
	if (!files)
		return -1;
	char when[32] = "1970-01-01T00:00:00Z";
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *r =
	    json_pack("{s:I, s:o, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:b}", "containers_removed",
		      (json_int_t)containers, "files", files, "marker_sha256", marker_hex,
		      "outcome", "unknown", "recovered_at", when, "run_id", run_id, "schema",
		      "agentguard.recovered-run", "schema_version", 1, "signer",
		      ag_sign_key_fingerprint(key), "workspace_removed", ws_removed);
	size_t n = 0;
	char *nl = canon_line(r, &n, err);
	json_decref(r);
	if (!nl)
		return -1;
	int rc = ag_write_file_atomic_at(run_fd, AG_RUN_RECOVERED_FILE, AG_RUN_RECOVERED_FILE, nl,
					 n, 0644, false, err);
	if (rc == 0)
		rc = ag_attest_sign(run_fd, AG_RUN_RECOVERED_FILE, AG_RUN_RECOVERED_SIG_FILE, nl, n,
				    key, err);
	free(nl);
	return rc;
}

static int bad_record(struct ag_error **err, const char *what)
{
	return ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.malformed",
		      "the recovery record is not a valid agentguard.recovered-run v1 object "
		      "(%s)",
		      what);
}

/* The record's fields, exactly; its files list is returned borrowed. */
static int record_fields(const json_t *r, const char *run_id, const char *signer,
			 const json_t **files, struct ag_error **err)
{
	static const char *const keys[] = {"containers_removed",
					   "files",
					   "marker_sha256",
					   "outcome",
					   "recovered_at",
					   "run_id",
					   "schema",
					   "schema_version",
					   "signer",
					   "workspace_removed"};
	if (!json_is_object(r) || json_object_size(r) != AG_ARRAY_SIZE(keys))
		return bad_record(err, "fields");
	for (size_t i = 0; i < AG_ARRAY_SIZE(keys); i++)
		if (!json_object_get(r, keys[i]))
			return bad_record(err, keys[i]);
	const char *sch = json_string_value(json_object_get(r, "schema"));
	const char *id = json_string_value(json_object_get(r, "run_id"));
	const char *oc = json_string_value(json_object_get(r, "outcome"));
	const char *sg = json_string_value(json_object_get(r, "signer"));
	const json_t *ver = json_object_get(r, "schema_version");
	const json_t *cr = json_object_get(r, "containers_removed");
	if (!sch || strcmp(sch, "agentguard.recovered-run") != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1)
		return bad_record(err, "schema");
	if (!id || strcmp(id, run_id) != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.run_id",
			      "the recovery record is for another run");
	if (!oc || strcmp(oc, "unknown") != 0)
		return bad_record(err, "outcome");
	if (!sg || strcmp(sg, signer) != 0)
		return bad_record(err, "signer");
	if (!json_is_integer(cr) || json_integer_value(cr) < 0 ||
	    !json_is_boolean(json_object_get(r, "workspace_removed")) ||
	    !json_is_string(json_object_get(r, "recovered_at")) ||
	    !ag_seal_is_hex64(json_string_value(json_object_get(r, "marker_sha256"))))
		return bad_record(err, "values");
	*files = json_object_get(r, "files");
	if (!json_is_array(*files) || json_array_size(*files) > AG_RUNS_AUDIT_MAX_RUN_ENTRIES)
		return bad_record(err, "files");
	return 0;
}

/* The directory holds exactly the listed files (sorted, each hashing as recorded). */
static int files_match(int run_fd, const json_t *files, struct ag_error **err)
{
	struct ag_strv names = AG_STRV_INIT;
	int rc = other_files(run_fd, &names, err);
	if (rc == 0 && names.n != json_array_size(files))
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.entry",
			    "the run directory holds entries its recovery record does not list");
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		const json_t *f = json_array_get(files, i);
		const char *fn = json_string_value(json_object_get(f, "name"));
		const char *fh = json_string_value(json_object_get(f, "sha256"));
		char hex[AG_SHA256_HEX_LEN + 1];
		if (json_object_size(f) != 2 || !fn || !fh || strcmp(fn, names.v[i]) != 0 ||
		    !recordable(fn) || hash_path(run_fd, fn, hex) < 0 || strcmp(hex, fh) != 0)
			rc = ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.entry",
				    "a file of the run directory is not the one its recovery "
				    "record lists");
	}
	ag_strv_release(&names);
	return rc;
}

int ag_run_recovered_check(int run_fd, const char *run_id, const struct ag_trust *trust,
			   struct ag_error **err)
{
	if (!valid_run_id(run_id))
		return ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.run_id",
			      "the directory is not named like a run");
	char *b = NULL, *fpr = NULL;
	size_t n = 0;
	if (ag_attest_check(run_fd, AG_RUN_RECOVERED_FILE, AG_RUN_RECOVERED_SIG_FILE,
			    AG_RECOVER_RECORD_MAX_BYTES, trust, &b, &n, &fpr, err) < 0)
		return -1;
	json_t *r = ag_seal_load_canon(b, n);
	free(b);
	const json_t *files = NULL;
	int rc = r ? record_fields(r, run_id, fpr, &files, err) : bad_record(err, "not canonical");
	free(fpr);
	char mhex[AG_SHA256_HEX_LEN + 1];
	if (rc == 0)
		rc = marker_signed(run_fd, trust, mhex, err);
	if (rc == 0 && strcmp(mhex, json_string_value(json_object_get(r, "marker_sha256"))) != 0)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.marker",
			    "the run's marker is not the one its recovery record names");
	json_t *m = rc == 0 ? read_marker(run_fd, run_id) : NULL;
	if (rc == 0 && !m)
		rc = ag_err(err, AG_E_UNVERIFIED, 0, "run.recovered.marker",
			    "the run's marker is not a valid marker for this run");
	json_decref(m);
	if (rc == 0)
		rc = files_match(run_fd, files, err);
	json_decref(r);
	return rc;
}

/* The run's own evidence verifies (every check but the chain) under trust. */
static bool sealed(int run_fd, const char *run_id, const struct ag_trust *trust)
{
	struct ag_verify_report vr;
	struct ag_error *e = NULL;
	struct ag_verify_opts vo = {.trust = trust, .standalone = true};
	bool ok = ag_evidence_verify_at(run_fd, &vo, &vr, &e) == 0 && vr.run_id &&
		  strcmp(vr.run_id, run_id) == 0;
	ag_verify_report_release(&vr);
	ag_error_free(e);
	return ok;
}

static void recover_one(int root_fd, const char *run_id, struct ag_engine *cli,
			const struct ag_sign_key *key, ag_recover_log_fn log, void *data,
			struct ag_recover_report *rep)
{
	const struct ag_sign_key *const keys[] = {key};
	const struct ag_trust trust = {keys, key ? 1 : 0};
	int run_fd = openat(root_fd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run_fd < 0) {
		rep->runs_unowned++;
		return;
	}
	json_t *m = read_marker(run_fd, run_id);
	if (!m) {
		rep->runs_unowned++;
		logf_(log, data, "%s: no valid AgentGuard marker; left alone", run_id);
		close(run_fd);
		return;
	}
	const char *state = json_string_value(json_object_get(m, "lifecycle_state"));
	struct ag_error *e = NULL;
	bool done = state && (strcmp(state, "complete") == 0 || strcmp(state, "recovered") == 0);
	if (done || ag_run_recovered_check(run_fd, run_id, &trust, &e) == 0) {
		ag_error_free(e);
		json_decref(m);
		close(run_fd);
		return;
	}
	ag_error_free(e);
	e = NULL;
	rep->runs_examined++;
	if (owner_alive(m)) {
		rep->runs_live++;
		logf_(log, data, "%s: its AgentGuard process is still running; left alone", run_id);
		json_decref(m);
		close(run_fd);
		return;
	}
	/* Only a run AgentGuard started (its marker signed by this key) is acted on. */
	char mhex[AG_SHA256_HEX_LEN + 1];
	if (!key || marker_signed(run_fd, &trust, mhex, &e) < 0) {
		rep->runs_incomplete++;
		logf_(log, data,
		      "%s: its marker is not signed by this signing key (%s); left alone: move it "
		      "out of the runs root if AgentGuard did not write it",
		      run_id, e ? e->reason : "no signing key");
		ag_error_free(e);
		json_decref(m);
		close(run_fd);
		return;
	}
	char *suffix = ag_run_suffix(run_id);
	char *name = ag_xasprintf("agentguard-%s", suffix);
	struct ag_run_owner own;
	ag_run_owner_init(&own, name, suffix);
	struct log_ctx lc = {log, data, run_id};
	struct ag_cleanup_result worst;
	size_t removed_here = 0;
	bool ok = ag_container_cleanup_labelled(cli, AG_RUN_ID_LABEL, suffix, &own.owner,
						AG_DOCKER_CONTROL_TIMEOUT_MS, log_container, &lc,
						&worst, &removed_here, NULL) == 0;
	if (!ok)
		logf_(log, data, "%s: cannot list its containers; nothing removed", run_id);
	else if (!ag_cleanup_state_complete(worst.state))
		ok = false;
	rep->containers_removed += removed_here;
	/* A study run's own objects: its gateway and probe, then its networks. */
	if (ok) {
		size_t sc = 0, sn = 0;
		if (ag_study_recover(cli, suffix, &sc, &sn) < 0) {
			ok = false;
			logf_(log, data, "%s: a study container or network could not be removed",
			      run_id);
		} else if (sc || sn) {
			logf_(log, data, "%s: study: %zu container(s), %zu network(s) removed",
			      run_id, sc, sn);
		}
		rep->containers_removed += sc;
	}
	/* The workspace goes only after every container of the run is verified gone. */
	size_t ws_before = rep->workspaces_removed;
	if (ok) {
		size_t before = rep->workspaces_removed;
		if (!remove_workspace(run_fd, &rep->workspaces_removed)) {
			ok = false;
			logf_(log, data, "%s: workspace could not be removed completely", run_id);
		} else if (rep->workspaces_removed > before) {
			logf_(log, data, "%s: workspace removed", run_id);
		}
	}
	/* Everything is verified gone: record that, signed; the record claims no
	 * result. A run sealed before the crash has its own evidence: no record. */
	if (ok && !sealed(run_fd, run_id, &trust) &&
	    write_record(run_fd, run_id, mhex, key, removed_here,
			 rep->workspaces_removed > ws_before, &e) < 0) {
		ok = false;
		logf_(log, data, "%s: the recovery record could not be written (%s)", run_id,
		      e->reason);
		ag_error_free(e);
	}
	if (ok) {
		rep->runs_recovered++;
		logf_(log, data, "%s: recovered", run_id);
	} else {
		rep->runs_incomplete++;
	}
	free(name);
	free(suffix);
	json_decref(m);
	close(run_fd);
}

/* Seconds since an RFC 3339 "Created" stamp; -1 when unparsable. */
static long long age_seconds(const char *created)
{
	struct tm tm = {0};
	const char *rest = created ? strptime(created, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!rest)
		return -1;
	time_t t = timegm(&tm);
	time_t now = time(NULL);
	return t == (time_t)-1 || now < t ? -1 : (long long)(now - t);
}

/*
 * Preflight probes orphaned by a crash: a probe lives at most
 * AG_PF_PROBE_TIMEOUT_MS plus a few control calls, so one older than
 * AG_RUN_PROBE_ORPHAN_SECONDS that carries all three probe labels (the name
 * label equal to its own name) cannot belong to a live preflight.
 */
static void recover_probes(struct ag_engine *cli, const struct ag_recover_options *opt,
			   ag_recover_log_fn log, void *data, struct ag_recover_report *rep)
{
	struct ag_strv ids = AG_STRV_INIT;
	bool extra = opt->probe_label_key && opt->probe_label_value;
	if (ag_container_list_labelled(cli, extra ? opt->probe_label_key : AG_PF_LABEL_OWNER,
				       extra ? opt->probe_label_value : AG_PF_LABEL_OWNER_VALUE,
				       AG_DOCKER_CONTROL_TIMEOUT_MS, &ids) < 0) {
		rep->runs_incomplete++;
		logf_(log, data, "preflight probes: cannot list them; nothing removed");
		return;
	}
	for (size_t i = 0; i < ids.n; i++) {
		json_t *v = NULL;
		if (ag_container_lookup(cli, ids.v[i], AG_DOCKER_CONTROL_TIMEOUT_MS, &v) != 0)
			continue;
		const char *name = ag_json_path_str(v, "Name");
		long long age = age_seconds(ag_json_path_str(v, "Created"));
		char *bare = name && name[0] == '/' ? ag_xstrdup(name + 1) : NULL;
		json_decref(v);
		if (!bare || age < 0 || age < opt->probe_age_s) {
			free(bare);
			continue;
		}
		const struct ag_label_expect le[] = {
		    {AG_PF_LABEL_OWNER, AG_PF_LABEL_OWNER_VALUE},
		    {AG_PF_LABEL_KIND, AG_PF_LABEL_KIND_VALUE},
		    {AG_PF_LABEL_NAME, bare},
		    {opt->probe_label_key, opt->probe_label_value}};
		struct ag_container_owner own = {bare, le, extra ? 4 : 3};
		struct ag_cleanup_result cr;
		ag_container_cleanup(cli, ids.v[i], &own, AG_DOCKER_CONTROL_TIMEOUT_MS, &cr);
		if (ag_cleanup_state_complete(cr.state)) {
			if (cr.state != AG_CLEANUP_ALREADY_ABSENT)
				rep->containers_removed++;
		} else {
			rep->runs_incomplete++;
		}
		logf_(log, data, "orphaned preflight probe %.12s: %s", ids.v[i],
		      ag_cleanup_state_name(cr.state));
		free(bare);
	}
	ag_strv_release(&ids);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ag_run_recover(int runs_root_fd, struct ag_engine *cli, const struct ag_recover_options *opt,
		   ag_recover_log_fn log, void *data, struct ag_recover_report *rep,
		   struct ag_error **err)
{
	memset(rep, 0, sizeof(*rep));
	int dfd = fcntl(runs_root_fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return ag_err(err, AG_E_IO, errno, "run.recover.open", "cannot read the runs root");
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return ag_err(err, AG_E_IO, errno, "run.recover.open", "cannot read the runs root");
	}
	rewinddir(d);
	struct ag_strv names = AG_STRV_INIT;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (names.n >= AG_RUN_CLEANUP_SCAN_MAX) {
			rc = ag_err(err, AG_E_LIMIT, 0, "limit.run.cleanup_scan",
				    "the runs root has more than %d entries",
				    AG_RUN_CLEANUP_SCAN_MAX);
			break;
		}
		struct stat st;
		if (fstatat(runs_root_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || !valid_run_id(de->d_name)) {
			rep->runs_unowned++;
			continue;
		}
		ag_strv_push(&names, de->d_name);
	}
	closedir(d);
	if (rc == 0) {
		if (names.n > 1)
			qsort(names.v, names.n, sizeof(*names.v), cmp);
		for (size_t i = 0; i < names.n; i++)
			recover_one(runs_root_fd, names.v[i], cli, opt->key, log, data, rep);
		recover_probes(cli, opt, log, data, rep);
	}
	ag_strv_release(&names);
	return rc;
}

/* ---- for the runs-root audit (runs_audit.c) ---- */

bool ag_run_dir_owner_live(int run_fd, const char *run_id)
{
	json_t *m = valid_run_id(run_id) ? read_marker(run_fd, run_id) : NULL;
	bool live = m && owner_alive(m);
	json_decref(m);
	return live;
}
