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
#include "lib/run/contained_run.h"
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

static void recover_one(int root_fd, const char *run_id, struct ag_engine *cli,
			ag_recover_log_fn log, void *data, struct ag_recover_report *rep)
{
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
	if (state && (strcmp(state, "complete") == 0 || strcmp(state, "recovered") == 0)) {
		json_decref(m);
		close(run_fd);
		return;
	}
	rep->runs_examined++;
	if (owner_alive(m)) {
		rep->runs_live++;
		logf_(log, data, "%s: its AgentGuard process is still running; left alone", run_id);
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
	if (ok) {
		size_t before = rep->workspaces_removed;
		if (!remove_workspace(run_fd, &rep->workspaces_removed)) {
			ok = false;
			logf_(log, data, "%s: workspace could not be removed completely", run_id);
		} else if (rep->workspaces_removed > before) {
			logf_(log, data, "%s: workspace removed", run_id);
		}
	}
	if (ok) {
		rep->runs_recovered++;
		json_object_set_new(m, "lifecycle_state", json_string("recovered"));
		char *s = json_dumps(m, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
		char *nl = ag_xasprintf("%s\n", s);
		struct ag_error *e = NULL;
		(void)ag_write_file_atomic_at(run_fd, AG_RUN_MARKER_FILE, "marker", nl, strlen(nl),
					      0644, false, &e);
		ag_error_free(e);
		free(s);
		free(nl);
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
			recover_one(runs_root_fd, names.v[i], cli, log, data, rep);
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
