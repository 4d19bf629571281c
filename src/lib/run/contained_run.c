/*
 * contained_run.c: orchestration only. Each stage calls into the library
 * (preflight, workspace, exec_spec, container) and records what it
 * observed; a failure jumps to the common tail, which always cleans up what
 * exists (container first, by id), then writes the artifact.
 */
#include "lib/base/ag.h"
#include "lib/run/contained_run.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/exit.h"
#include "lib/base/fsx.h"
#include "lib/base/redact.h"
#include "lib/base/sha256.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/docker/engine.h"
#include "lib/docker/ledger.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/exec_spec.h"
#include "lib/docker/inspect.h"
#include "lib/docker/preflight.h"
#include "lib/evidence/canon.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/sign.h"
#include "lib/run/recover.h"
#include "lib/run/runs_audit.h"
#include "lib/policy/checks.h"
#include "lib/policy/pathmatch.h"
#include "lib/run/deadline.h"
#include "lib/run/evidence.h"
#include "lib/run/live.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/patch.h"
#include "lib/workspace/snapshot.h"
#include "lib/workspace/workspace.h"

#include <inttypes.h>
#include <pthread.h>
#include <jansson.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

char *ag_run_id_new(const char *task_id)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	unsigned char rnd[AG_RUN_ID_RANDOM_BYTES] = {0};
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		abort();
	return ag_xasprintf("%s-contained-%04d%02d%02d%02d%02d%02d%06ld-%02x%02x%02x%02x", task_id,
			    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			    tm.tm_sec, ts.tv_nsec / 1000, rnd[0], rnd[1], rnd[2], rnd[3]);
}

void ag_run_outcome_release(struct ag_run_outcome *o)
{
	free(o->run_id);
	free(o->failure_message);
	ag_strv_release(&o->changed_files);
	ag_strv_release(&o->failed_checks);
	memset(o, 0, sizeof(*o));
}

/* Everything one run observed; the artifact is built from this alone. */
struct run {
	const struct ag_run_opts *o;
	struct ag_run_outcome *out;
	char *run_id;
	char *suffix; /* lowercased tail of the run id: container name and run label */
	char *container_name;
	struct ag_run_owner own; /* name + owner labels, for every check by id */
	int run_fd;
	int lifecycle_fd;
	uint64_t started_ms;

	/* failure bookkeeping */
	const char *stage;
	const char *reason;
	int exit_code;
	char *message;
	const char *cleanup_reason;
	char *cleanup_message;
	bool net_cleanup_failed; /* the network hooks' own objects (study) */

	/* preflight */
	struct ag_engine eng;
	bool eng_ok;
	struct ag_preflight_result pf;
	bool pf_ran;

	/* policy */
	bool policy_blocked;
	const char *policy_match; /* the configured unsafe_commands entry (not secret) */

	/* residue */
	bool residue_before_ok, residue_after_ok;
	size_t residue_before, residue_after, residue_ours_after;

	/* workspace */
	bool ws_prepared;
	struct ag_ws_prepared prep;
	const char *ws_status; /* not_prepared, removed, retained, incomplete */
	struct ag_ws_mutations mut;
	bool mut_ok;
	struct ag_ws_prepare_opts ws_opts; /* the copy rules, for prepare and the source check */
	uint64_t *ws_exclude_counts;
	const char *capture_reason;
	bool source_checked, source_unchanged;
	struct ag_strv source_diff;
	size_t source_diff_total;
	const char *source_reason;
	struct ag_run_patch patch;
	bool patch_recorded;

	/* container */
	bool create_attempted;
	char *container_id;
	char *bound_image_id;
	bool verified;
	json_t *verified_controls;
	struct ag_cleanup_result cleanup;
	bool fingerprint_checked, fingerprint_same;

	/* post-execution policy checks */
	struct ag_checks checks;
	bool checks_ok;

	/* execution */
	bool executed;	    /* attach + start was attempted */
	bool agent_started; /* ... and the container's process actually started */
	struct ag_engine_stream pr;
	bool pr_init;
	const char *outcome;
	int exit_status;
	bool oom_killed;
	char *stdout_red, *stderr_red;
	bool stdout_trunc, stderr_trunc;
	uint64_t stdout_bytes, stderr_bytes; /* what the agent wrote, kept or not */
	uint64_t exec_ms;
	/* the in-container deadline (run/deadline.h) */
	char *init_bin;			 /* the verified init, bind-mounted read-only */
	enum ag_deadline_by deadline_by; /* who ended a timed-out agent */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Records the primary failure (the first one wins). */
static void fail(struct run *r, const char *stage, int exit_code, const char *reason,
		 const char *fmt, ...) AG_PRINTF(5, 6);
static void fail(struct run *r, const char *stage, int exit_code, const char *reason,
		 const char *fmt, ...)
{
	if (r->stage)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = ag_xvasprintf(fmt, ap);
	va_end(ap);
	r->stage = stage;
	r->exit_code = exit_code;
	r->reason = reason;
	r->message = ag_redact(r->o->redact, m, strlen(m), AG_PF_DIAGNOSTIC_MAX_BYTES, 0, NULL);
	free(m);
}

static void fail_err(struct run *r, const char *stage, int exit_code, const struct ag_error *e)
{
	fail(r, stage, exit_code, e->reason, "%s", e->msg);
}

/* ---- run directory, marker ---- */

static int write_json_file(struct run *r, const char *name, json_t *v,
			   const struct ag_canon_bounds *b, struct ag_error **err)
{
	char *s = NULL;
	size_t n = 0;
	if (ag_canon_dump(v, b, &s, &n, err) < 0)
		return -1;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	int rc = ag_write_file_atomic_at(r->run_fd, name, name, nl, n + 1, 0644, false, err);
	free(nl);
	return rc;
}

void ag_run_owner_init(struct ag_run_owner *o, const char *name, const char *suffix)
{
	o->labels[0] = (struct ag_label_expect){AG_RUN_OWNER_LABEL, AG_RUN_OWNER_VALUE};
	o->labels[1] = (struct ag_label_expect){AG_RUN_ID_LABEL, suffix};
	o->owner = (struct ag_container_owner){name, o->labels, AG_ARRAY_SIZE(o->labels)};
}

char *ag_run_suffix(const char *run_id)
{
	size_t n = strlen(run_id);
	const char *tail = n > 32 ? run_id + n - 32 : run_id;
	char *s = ag_xstrdup(tail);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	/* Names must start with [a-z0-9] after "agentguard-". */
	while (s[0] && !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		memmove(s, s + 1, strlen(s));
	return s;
}

/*
 * Reads /proc/PID/stat: the state letter (field 3) and starttime (field
 * 22, clock ticks since boot). False when the process does not exist or
 * the line cannot be parsed.
 */
static bool proc_stat(pid_t pid, char *state, unsigned long long *ticks)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* Fields count from after the ")" that ends field 2 (comm may hold ')'). */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return false;
	*state = p[2];
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22)
		return false;
	*ticks = strtoull(p, NULL, 10);
	return *ticks != 0;
}

unsigned long long ag_process_start_ticks(pid_t pid)
{
	char st = 0;
	unsigned long long t = 0;
	return proc_stat(pid, &st, &t) ? t : 0;
}

bool ag_process_alive(pid_t pid, unsigned long long start_ticks)
{
	char st = 0;
	unsigned long long t = 0;
	if (pid <= 0 || start_ticks == 0 || !proc_stat(pid, &st, &t))
		return false;
	/*
	 * A zombie (Z) or a dying task (X) has run its last instruction: under
	 * a PID 1 that never reaps, a killed AgentGuard stays a zombie forever.
	 * Another start time means the pid was reused by another process.
	 */
	return t == start_ticks && st != 'Z' && st != 'X' && st != 'x';
}

static int write_marker(struct run *r, const char *state)
{
	/* Signed, so `agentguard cleanup` recovers only runs AgentGuard started (recover.h). */
	struct ag_error *e = NULL;
	int rc = ag_run_marker_write(r->run_fd, r->run_id, state, r->o->signing_key, &e);
	ag_error_free(e);
	return rc;
}

static int make_run_dir(struct run *r, struct ag_error **err)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		free(r->run_id);
		r->run_id = ag_run_id_new(r->o->cfg->task_id);
		if (mkdirat(r->o->runs_root_fd, r->run_id, 0700) == 0)
			break;
		if (errno != EEXIST || attempt == 3)
			return ag_err(err, AG_E_IO, errno, "run.dir.create",
				      "cannot create the run directory: %s", strerror(errno));
	}
	r->run_fd =
	    openat(r->o->runs_root_fd, r->run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->run_fd < 0)
		return ag_err(err, AG_E_IO, errno, "run.dir.open", "cannot open the run directory");
	/* The bind-mounted workspace lives below; 0711 lets only the owner list. */
	(void)fchmod(r->run_fd, 0711);
	r->suffix = ag_run_suffix(r->run_id);
	r->container_name = ag_xasprintf("agentguard-%s", r->suffix);
	ag_run_owner_init(&r->own, r->container_name, r->suffix);
	if (write_marker(r, "created") < 0)
		return ag_err(err, AG_E_IO, errno, "run.marker", "cannot write the run marker");
	/* Paths below the run root become ${RUN_ROOT} wherever they appear. */
	char *abs = ag_xasprintf("%s/%s", r->o->runs_root_abs, r->run_id);
	ag_redactor_add_root(r->o->redact, abs, "${RUN_ROOT}");
	/*
	 * Inside the container, mountinfo shows the workspace's source relative
	 * to the filesystem it lives on, so every tail of the run directory's
	 * path that still ends in the (unique) run id is a root too.
	 */
	for (const char *p = strchr(abs + 1, '/'); p; p = strchr(p + 1, '/'))
		ag_redactor_add_root(r->o->redact, p, "${RUN_ROOT}");
	free(abs);
	return 0;
}

/* ---- stages ---- */

/* CONTRACT: policy.unsafe_commands (enforce blocks before any container exists) */
static int stage_policy(struct run *r)
{
	const struct ag_config *c = r->o->cfg;
	if (c->command_policy != AG_CMD_POLICY_ENFORCE || c->unsafe_commands.n == 0)
		return 0;
	/* Substring match over the argv joined by spaces (upstream semantics). */
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, "limit.run.argv");
	struct ag_error *e = NULL;
	for (size_t i = 0; i < r->o->argc; i++)
		if ((i && ag_buf_add(&b, " ", 1, &e) < 0) || ag_buf_adds(&b, r->o->argv[i], &e) < 0)
			abort();
	for (size_t i = 0; i < c->unsafe_commands.n; i++) {
		if (strstr(b.buf, c->unsafe_commands.v[i])) {
			r->policy_blocked = true;
			r->policy_match = c->unsafe_commands.v[i];
			fail(r, "policy", AG_EXIT_POLICY, "policy.unsafe_command",
			     "the agent argv matches an unsafe_commands entry; blocked before "
			     "launch");
			break;
		}
	}
	ag_buf_release(&b);
	return r->policy_blocked ? -1 : 0;
}

/*
 * The preflight runs on its own thread and its own engine connection. Once
 * its checks up to the probe have passed (on_probe), the run prepares the
 * workspace and creates and verifies its own container while the probe
 * runs; the agent starts only after the final verdict, which includes the
 * verified removal of the probe.
 */
struct pf_job {
	struct run *r;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool probing, done;
	char *image_id; /* the verified local image id, from on_probe */
	int rc;
	struct ag_error *err;
};

static void pf_on_probe(void *data, const char *image_id)
{
	struct pf_job *j = data;
	pthread_mutex_lock(&j->mu);
	j->image_id = image_id ? ag_xstrdup(image_id) : NULL;
	j->probing = true;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

static void *pf_main(void *data)
{
	struct pf_job *j = data;
	struct ag_preflight_opts po = AG_PREFLIGHT_OPTS_INIT;
	po.socket_path = j->r->o->docker_socket;
	po.probe_path = j->r->o->probe_path;
	po.on_probe = pf_on_probe;
	po.on_probe_data = j;
	int rc = ag_preflight_run(j->r->o->cfg, NULL, &po, &j->r->pf, &j->err);
	pthread_mutex_lock(&j->mu);
	j->rc = rc;
	j->done = true;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Opens the run's engine connection and starts the preflight beside it. */
static int stage_preflight_start(struct run *r, struct pf_job *j)
{
	struct ag_error *e = NULL;
	if (ag_engine_open(r->o->docker_socket, &r->eng, &e) < 0) {
		fail(r, "preflight", AG_EXIT_PREFLIGHT, e->reason, "Docker engine unavailable: %s",
		     e->msg);
		ag_error_free(e);
		return -1;
	}
	r->eng_ok = true;
	ag_preflight_result_init(&r->pf);
	r->pf_ran = true;
	*j = (struct pf_job){.r = r};
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	if (pthread_create(&j->th, NULL, pf_main, j) != 0)
		abort(); /* no thread for the preflight: nothing safe to do */
	return 0;
}

/* True once the probe is about to run; false when the preflight ended first. */
static bool preflight_probing(struct pf_job *j)
{
	pthread_mutex_lock(&j->mu);
	while (!j->probing && !j->done)
		pthread_cond_wait(&j->cv, &j->mu);
	bool probing = j->probing;
	pthread_mutex_unlock(&j->mu);
	return probing;
}

/* Joins the preflight; 0 when its verdict passed. */
static int stage_preflight_finish(struct run *r, struct pf_job *j)
{
	pthread_join(j->th, NULL);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j->image_id);
	j->image_id = NULL;
	if (j->rc < 0) {
		fail_err(r, "preflight", AG_EXIT_PREFLIGHT, j->err);
		ag_error_free(j->err);
		return -1;
	}
	if (!ag_preflight_passed(&r->pf)) {
		fail(r, "preflight", AG_EXIT_PREFLIGHT,
		     r->pf.reason ? r->pf.reason : "preflight.failed",
		     "Docker contained-execution preflight failed: %s",
		     ag_pf_status_name(r->pf.status));
		return -1;
	}
	return 0;
}

static void residue(struct run *r, bool after)
{
	struct ag_strv ids = AG_STRV_INIT;
	int rc = ag_container_list_labelled(&r->eng, AG_RUN_OWNER_LABEL, AG_RUN_OWNER_VALUE,
					    AG_DOCKER_CONTROL_TIMEOUT_MS, &ids);
	if (!after) {
		r->residue_before_ok = rc == 0;
		r->residue_before = ids.n;
	} else {
		r->residue_after_ok = rc == 0;
		r->residue_after = ids.n;
		struct ag_strv ours = AG_STRV_INIT;
		int rc2 = ag_container_list_labelled(&r->eng, AG_RUN_ID_LABEL, r->suffix,
						     AG_DOCKER_CONTROL_TIMEOUT_MS, &ours);
		if (rc2 < 0)
			r->residue_after_ok = false;
		r->residue_ours_after = ours.n;
		ag_strv_release(&ours);
	}
	ag_strv_release(&ids);
}

/* workspace.exclude patterns: the policy path syntax (docs/checks.md). */
static int ws_exclude_match(const char *pattern, const char *path)
{
	enum ag_pm_result m = ag_pm_match(pattern, path);
	return m == AG_PM_LIMIT ? -1 : m == AG_PM_MATCH;
}

static int stage_workspace(struct run *r)
{
	struct ag_error *e = NULL;
	if (mkdirat(r->run_fd, AG_RUN_LIFECYCLE_DIR, 0711) < 0) {
		fail(r, "workspace_prep", AG_EXIT_WORKSPACE, "workspace.lifecycle_dir",
		     "cannot create the lifecycle directory");
		return -1;
	}
	r->lifecycle_fd = openat(r->run_fd, AG_RUN_LIFECYCLE_DIR,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->lifecycle_fd < 0) {
		fail(r, "workspace_prep", AG_EXIT_WORKSPACE, "workspace.lifecycle_dir",
		     "cannot open the lifecycle directory");
		return -1;
	}
	/* CONTRACT: evidence.outside_agent_repo (.agentguard/ holds only what we wrote) */
	if (r->o->runs_root_in_repo) {
		const struct ag_sign_key *const keys[] = {r->o->signing_key};
		const struct ag_trust own = {keys, 1};
		if (ag_runs_audit(r->o->repo_fd, r->o->runs_root_rel, r->run_id,
				  r->o->trust ? r->o->trust : &own, &e) < 0) {
			fail_err(r, "workspace_prep", AG_EXIT_WORKSPACE, e);
			ag_error_free(e);
			return -1;
		}
	}
	struct ag_ws_prepare_opts *po = &r->ws_opts;
	const struct ag_config *c = r->o->cfg;
	po->exclude_agentguard_root = r->o->runs_root_in_repo;
	po->include_ignored = c->workspace_include_ignored;
	po->exclude = (const char *const *)c->workspace_exclude.v;
	po->nexclude = c->workspace_exclude.n;
	po->exclude_match = ws_exclude_match;
	r->ws_exclude_counts = ag_xcalloc(po->nexclude + 1, sizeof(uint64_t));
	po->exclude_counts = r->ws_exclude_counts;
	if (r->o->observer) {
		po->progress = ag_live_progress_copy;
		po->progress_ctx = (void *)r->o->observer;
	}
	if (ag_ws_prepare(r->o->repo_fd, r->lifecycle_fd, AG_RUN_WORKSPACE_ID, po, &r->prep, &e) <
	    0) {
		fail_err(r, "workspace_prep", AG_EXIT_WORKSPACE, e);
		ag_error_free(e);
		return -1;
	}
	r->ws_prepared = true;
	r->ws_status = "prepared";
	/* The container user must be able to write its workspace: it is ours (same uid). */
	return 0;
}

static char *workspace_host_path(const struct run *r)
{
	return ag_xasprintf("%s/%s/%s/%s/workspace", r->o->runs_root_abs, r->run_id,
			    AG_RUN_LIFECYCLE_DIR, AG_RUN_WORKSPACE_ID);
}

/* Re-reads the daemon facts the preflight relied on; false when they changed. */
static bool fingerprint_same(struct run *r)
{
	struct ag_engine_facts f = {0};
	struct ag_pf_findings fi = AG_PF_FINDINGS_INIT;
	bool ok = false;
	struct ag_error *e = NULL;
	json_t *jv = NULL, *ji = NULL;
	if (ag_engine_json(&r->eng, "GET", "/version", NULL, 0, "GET /version", &jv, &e) < 0 ||
	    ag_engine_json(&r->eng, "GET", "/info", NULL, 0, "GET /info", &ji, &e) < 0)
		goto out;
	json_t *both = json_pack("{s:{s:s},s:O}", "Client", "Version", r->eng.client, "Server", jv);
	ag_inspect_version(both, &f, &fi);
	json_decref(both);
	ag_inspect_info(ji, &f, &fi);
	if (fi.n)
		goto out;
#define SAME(a, b) ((!(a) && !(b)) || ((a) && (b) && strcmp((a), (b)) == 0))
	ok = SAME(f.server_version, r->pf.engine_version) &&
	     SAME(f.api_version, r->pf.api_version) && SAME(f.os, r->pf.os) &&
	     SAME(f.arch, r->pf.arch) && SAME(f.cgroup_driver, r->pf.cgroup_driver) &&
	     SAME(f.cgroup_version, r->pf.cgroup_version) && SAME(f.runtime, r->pf.runtime) &&
	     f.desktop == r->pf.docker_desktop;
#undef SAME
out:
	json_decref(jv);
	json_decref(ji);
	ag_error_free(e);
	ag_engine_facts_release(&f);
	ag_pf_findings_release(&fi);
	return ok;
}

static bool should_cancel(void *data)
{
	const struct run *r = data;
	return r->o->cancel && *r->o->cancel;
}

static int stage_create(struct run *r, const char *image_id)
{
	const struct ag_config *c = r->o->cfg;
	struct ag_error *e = NULL;
	char *host_ws = workspace_host_path(r);
	const struct ag_label labels[] = {{AG_RUN_OWNER_LABEL, AG_RUN_OWNER_VALUE},
					  {AG_RUN_ID_LABEL, r->suffix}};
	struct ag_exec_inputs in = {
	    .workspace_host_path = host_ws,
	    .container_name = r->container_name,
	    .env = (const char *const *)ag_strv_argv(&r->o->env->assignments),
	    .n_env = r->o->env->assignments.n,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = r->o->argv,
	    .n_command = r->o->argc,
	};
	/* The renderer adds the four defaults itself: pass configured entries only. */
	struct ag_strv configured = AG_STRV_INIT;
	for (size_t i = 0; i < r->o->env->assignments.n; i++) {
		const char *a = r->o->env->assignments.v[i];
		bool is_default = false;
		for (size_t k = 0; k < AG_ARRAY_SIZE(ag_env_defaults); k++)
			if (strcmp(a, ag_env_defaults[k]) == 0)
				is_default = true;
		if (!is_default)
			ag_strv_push(&configured, a);
	}
	in.env = (const char *const *)ag_strv_argv(&configured);
	in.n_env = configured.n;
	struct ag_exec_spec spec;
	int rc = -1;
	/* the agent's init: its deadline holds without AgentGuard (run/deadline.h) */
	if (ag_run_init_verify(r->o->init_path, &r->init_bin, &e) < 0) {
		fail_err(r, "preflight", AG_EXIT_PREFLIGHT, e);
		goto out;
	}
	in.init_host_path = r->init_bin;
	in.init_deadline_seconds = ag_run_init_deadline(r->o->timeout_seconds);
	if (ag_exec_spec_from_config(c, &in, &spec, &e) < 0 ||
	    (r->o->net && r->o->net->agent_spec(r->o->net->data, &spec, &e) < 0)) {
		fail_err(r, "docker", AG_EXIT_DOCKER, e);
		goto out;
	}
	/* create, then bind identity by the returned id and the owner labels */
	r->create_attempted = true;
	if (ag_ledger_create(&r->eng, &spec, AG_DOCKER_CONTROL_TIMEOUT_MS, &r->container_id, &e) <
	    0) {
		/* Docker may have made it anyway: cleanup finds it by the run's label. */
		fail_err(r, "docker", AG_EXIT_DOCKER, e);
		goto out;
	}
	/*
	 * The container's id (and the 12-digit form Docker prints and uses as
	 * the hostname) is recorded only as a hash: wherever Docker's client
	 * or the agent prints it, it is redacted.
	 */
	{
		char shortid[13];
		memcpy(shortid, r->container_id, 12);
		shortid[12] = '\0';
		ag_redactor_add_secret(r->o->redact, r->container_id);
		ag_redactor_add_secret(r->o->redact, shortid);
	}
	{
		json_t *v = NULL;
		if (ag_container_lookup(&r->eng, r->container_id, AG_DOCKER_CONTROL_TIMEOUT_MS,
					&v) != 0) {
			fail(r, "docker", AG_EXIT_DOCKER, "run.identity.inspect",
			     "the created container could not be inspected by its id");
			goto out;
		}
		/* What it must show: derived from the spec that rendered the create. */
		struct ag_probe_expect x;
		const struct ag_inspect_created made = {AG_INSPECT_AGENT, r->container_id, image_id,
							NULL};
		if (ag_inspect_expect_from_spec(&spec, &made, &x, &e) < 0) {
			json_decref(v);
			fail_err(r, "docker", AG_EXIT_DOCKER, e);
			goto out;
		}
		struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		r->verified_controls = json_object();
		ag_inspect_container(v, &x, r->verified_controls, &f);
		const char *img = ag_json_path_str(v, "Image");
		if (img && ag_is_image_id(img))
			r->bound_image_id = ag_xstrdup(img);
		json_decref(v);
		if (f.n) {
			/* CONTRACT: run.verify_created (the container that runs shows every
			 * control) */
			fail(r, "preflight", AG_EXIT_PREFLIGHT, f.v[0].reason,
			     "the created container does not show a required control: %s: %s",
			     f.v[0].control, f.v[0].detail ? f.v[0].detail : "");
			ag_pf_findings_release(&f);
			goto out;
		}
		ag_pf_findings_release(&f);
		r->verified = true;
	}
	rc = 0;
out:
	ag_error_free(e);
	ag_strv_release(&configured);
	free(host_ws);
	return rc;
}

/* After the verdict: the daemon and the workspace path are still what was
 * verified, then attach and start. */
static int stage_start(struct run *r)
{
	const struct ag_config *c = r->o->cfg;
	struct ag_error *e = NULL;
	char *host_ws = workspace_host_path(r);
	int rc = -1;
	/* CONTRACT: run.daemon_fingerprint (facts preflight relied on, re-checked) */
	r->fingerprint_checked = true;
	r->fingerprint_same = fingerprint_same(r);
	if (!r->fingerprint_same) {
		fail(r, "preflight", AG_EXIT_PREFLIGHT, "run.daemon_changed",
		     "the Docker daemon facts changed since the preflight");
		goto out;
	}
	/*
	 * Docker resolves the bind source path only when it mounts it at start:
	 * the path must still lead to the workspace AgentGuard prepared.
	 * CONTRACT: workspace.mount_path_integrity
	 */
	{
		struct stat by_path, by_fd;
		int wfd = openat(r->lifecycle_fd, AG_RUN_WORKSPACE_ID "/workspace",
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bool same = wfd >= 0 && fstat(wfd, &by_fd) == 0 && stat(host_ws, &by_path) == 0 &&
			    by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
		if (wfd >= 0)
			close(wfd);
		if (!same) {
			fail(r, "preflight", AG_EXIT_PREFLIGHT, "run.workspace_path_swapped",
			     "the workspace's host path no longer leads to the prepared workspace");
			goto out;
		}
	}
	if (should_cancel(r)) {
		r->outcome = "cancelled";
		fail(r, "cancelled", AG_EXIT_SIGNAL_BASE + (int)*r->o->cancel, "run.cancelled",
		     "the run was cancelled before start");
		goto out;
	}
	{
		struct ag_engine_stream_opts so = {
		    .stdout_max = (size_t)c->max_output_bytes,
		    .stderr_max = (size_t)c->max_output_bytes,
		    .timeout_ms = (unsigned)(r->o->timeout_seconds * 1000),
		    .should_cancel = should_cancel,
		    .should_cancel_data = r,
		};
		/* the agent's output, live, redacted by the same set (lib/run/live.h) */
		struct ag_live *live = NULL;
		if (r->o->observer) {
			live = ag_live_new(r->o->redact, so.stdout_max, r->o->observer);
			so.on_output = ag_live_output;
			so.on_output_data = live;
			r->o->observer->event(
			    r->o->observer->ctx,
			    &(struct ag_run_event){.kind = AG_RUN_EV_AGENT_START});
		}
		ag_engine_stream_init(&r->pr);
		r->pr_init = true;
		uint64_t t0 = now_ms();
		ag_engine_attach_run(&r->eng, r->container_id, &so, &r->pr, &e);
		r->exec_ms = now_ms() - t0;
		if (live) {
			ag_live_finish(live);
			ag_live_free(live);
			r->o->observer->event(r->o->observer->ctx,
					      &(struct ag_run_event){.kind = AG_RUN_EV_AGENT_END});
		}
		r->executed = true;
		if (r->pr.end == AG_STREAM_NOT_STARTED) {
			/* Attach or start refused: classify() reads the container's state. */
			ag_error_free(e);
			e = NULL;
		} else if (r->pr.end == AG_STREAM_ENDED) {
			/* The stream ended with the process; its state settles by wait. */
			_cleanup_free_ char *wpath = ag_xasprintf(
			    "/containers/%s/wait?condition=not-running", r->container_id);
			json_t *w = NULL;
			if (ag_engine_json(&r->eng, "POST", wpath, NULL,
					   AG_DOCKER_CONTROL_TIMEOUT_MS, "wait for the container",
					   &w, &e) < 0) {
				ag_error_free(e);
				e = NULL;
			}
			json_decref(w);
		}
	}
	rc = 0;
out:
	ag_error_free(e);
	free(host_ws);
	return rc;
}

/* Outcome taxonomy from the container's own state, not colliding exit codes. */
static void classify(struct run *r)
{
	if (!r->executed)
		return;
	const struct ag_engine_stream *p = &r->pr;
	json_t *v = NULL;
	bool have_state =
	    r->container_id &&
	    ag_container_lookup(&r->eng, r->container_id, AG_DOCKER_CONTROL_TIMEOUT_MS, &v) == 0;
	const json_t *ec = have_state ? ag_json_path(v, "State.ExitCode") : NULL;
	const char *derr = have_state ? ag_json_path_str(v, "State.Error") : NULL;
	const char *started = have_state ? ag_json_path_str(v, "State.StartedAt") : NULL;
	r->oom_killed = have_state && json_is_true(ag_json_path(v, "State.OOMKilled"));
	bool never_started = started && strncmp(started, "0001-01-01", 10) == 0;
	bool still_running = have_state && json_is_true(ag_json_path(v, "State.Running"));
	bool init_not_found = false; /* the init could not exec the argv (run/deadline.h) */
	r->exit_status = json_is_integer(ec) ? (int)json_integer_value(ec) : -1;
	/* A container stopped by AgentGuard (or still running, or never started)
	 * has no exit status of its own. */
	if (still_running || never_started || p->end != AG_STREAM_ENDED)
		r->exit_status = -1;
	if (p->end == AG_STREAM_CANCELLED) {
		r->outcome = "cancelled";
		fail(r, "cancelled", AG_EXIT_SIGNAL_BASE + (int)(r->o->cancel ? *r->o->cancel : 2),
		     "run.cancelled", "AgentGuard was asked to stop; the container was cleaned up");
	} else if (p->end == AG_STREAM_TIMED_OUT ||
		   (p->end == AG_STREAM_ENDED && !still_running &&
		    ag_run_init_deadline_held(r->exit_status, r->exec_ms, r->o->timeout_seconds))) {
		/* AgentGuard's timer, or (it was late) the init's deadline */
		r->deadline_by =
		    p->end == AG_STREAM_TIMED_OUT ? AG_DEADLINE_AGENTGUARD : AG_DEADLINE_INIT;
		r->exit_status = -1;
		r->outcome = "timed_out";
		fail(r, "timeout", AG_EXIT_TIMEOUT, "run.timeout",
		     "the contained command timed out after %" PRId64 " seconds",
		     r->o->timeout_seconds);
	} else if (r->oom_killed) {
		r->outcome = "oom_killed";
		/*
		 * Docker says OOMKilled when any process of the container hit the
		 * limit; the agent may still have exited 0. A run the kernel cut
		 * short never records a success status.
		 */
		if (r->exit_status == 0)
			r->exit_status = -1;
	} else if ((derr && *derr) || never_started || p->end == AG_STREAM_NOT_STARTED ||
		   !json_is_integer(ec) ||
		   (p->end == AG_STREAM_ENDED &&
		    ag_run_init_exec_failed(r->exit_status, p->out.buf, p->out.len, p->err.buf,
					    p->err.len, &init_not_found))) {
		r->outcome = "docker_launch_failure";
		/*
		 * The agent never ran: its exit status is unknown, unless Docker's
		 * own launcher status says why (125 Docker, 126 not executable,
		 * 127 not found).
		 */
		if (r->exit_status < 125 || r->exit_status > 127)
			r->exit_status = -1;
		/* runc's words for an argv[0] it could not exec (only a hint: no text is kept) */
		bool not_found =
		    init_not_found || (derr && strstr(derr, "exec: \"") &&
				       (strcasestr(derr, "executable file not found") ||
					strcasestr(derr, "no such file or directory")));
		fail(r, "docker", AG_EXIT_DOCKER, "run.launch_failed",
		     "Docker failed before or while launching the contained command%s",
		     not_found ? " (the argv's executable was not found in the image)" : "");
	} else if (p->end == AG_STREAM_DROPPED) {
		r->outcome = "docker_client_signaled";
		fail(r, "docker", AG_EXIT_DOCKER, "run.attach_dropped",
		     "the output stream from the Docker daemon ended early");
	} else {
		r->outcome = "exited";
	}
	r->agent_started = !never_started && strcmp(r->outcome, "docker_launch_failure") != 0;
	json_decref(v);
	bool t1 = false, t2 = false;
	/*
	 * Output cut at the capture cap may end in the first part of a secret,
	 * which no longer matches it: drop that tail before redacting.
	 */
	size_t tail = 0;
	for (size_t i = 0; r->o->redact && i < r->o->redact->secrets.n; i++) {
		size_t l = strlen(r->o->redact->secrets.v[i]);
		if (l > tail)
			tail = l;
	}
	/*
	 * The artifact keeps at most AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES of each
	 * stream (max_output_bytes may allow far more in the capture): the
	 * artifact must always be writable within its bounds.
	 */
	size_t cap = (size_t)r->o->cfg->max_output_bytes;
	if (cap > AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES)
		cap = AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES;
	size_t olen = p->out.len, elen = p->err.len;
	bool ocut = p->stdout_truncated, ecut = p->stderr_truncated;
	if (olen > cap) {
		olen = cap;
		ocut = true;
	}
	if (elen > cap) {
		elen = cap;
		ecut = true;
	}
	if (ocut)
		olen = olen > tail ? olen - tail : 0;
	if (ecut)
		elen = elen > tail ? elen - tail : 0;
	r->stdout_red =
	    ag_redact(r->o->redact, p->out.buf, olen, cap, AG_REDACT_KEEP_NEWLINES, &t1);
	r->stderr_red =
	    ag_redact(r->o->redact, p->err.buf, elen, cap, AG_REDACT_KEEP_NEWLINES, &t2);
	r->stdout_trunc = ocut || t1;
	r->stderr_trunc = ecut || t2;
	r->stdout_bytes = p->stdout_total;
	r->stderr_bytes = p->stderr_total;
	if (!r->agent_started) {
		/*
		 * Nothing of the agent ran: what the streams hold is the Docker
		 * client's own error text (container ids, daemon detail), never
		 * recorded raw. The failure message says what happened.
		 */
		r->stdout_red[0] = '\0';
		r->stderr_red[0] = '\0';
		r->stdout_trunc = r->stderr_trunc = false;
		r->stdout_bytes = r->stderr_bytes = 0;
	}
}

/* The network hooks (contained_run.h), each failure recorded like a stage's. */
enum net_step { NET_SETUP, NET_VERIFY, NET_FINISH };
static int net_hook(struct run *r, enum net_step step)
{
	const struct ag_run_net_hooks *h = r->o->net;
	if (!h || (step == NET_FINISH && !r->eng_ok))
		return 0;
	struct ag_error *e = NULL;
	_cleanup_free_ char *dir = ag_xasprintf("%s/%s", r->o->runs_root_abs, r->run_id);
	int rc = step == NET_SETUP ? h->setup(h->data, &r->eng, r->run_fd, dir, r->suffix, &e)
		 : step == NET_VERIFY
		     ? h->verify(h->data, &r->eng, r->container_id, &e)
		     : h->finish(h->data, &r->eng, r->run_fd,
				 r->ws_prepared ? r->prep.digest : NULL, &r->cleanup, &e);
	if (rc < 0) {
		int code = step == NET_FINISH
			       ? (e->code == AG_E_CLEANUP ? AG_EXIT_CLEANUP : AG_EXIT_FAIL)
			   : e->code == AG_E_DOCKER ? AG_EXIT_DOCKER
						    : AG_EXIT_PREFLIGHT;
		fail_err(r, step == NET_FINISH ? "egress" : "preflight", code, e);
		r->net_cleanup_failed = step == NET_FINISH && code == AG_EXIT_CLEANUP;
		ag_error_free(e);
	}
	return rc;
}

static void stage_cleanup_container(struct run *r)
{
	if (!r->eng_ok) {
		r->cleanup.state = AG_CLEANUP_NOT_CREATED;
		r->cleanup.liveness_verified = true;
		r->cleanup.message = "no container was created";
		return;
	}
	/* By id, or (create answer lost) by this run's unique label. */
	ag_ledger_remove(&r->eng, r->container_id, r->create_attempted, AG_RUN_ID_LABEL, r->suffix,
			 &r->own.owner, AG_DOCKER_CONTROL_TIMEOUT_MS, &r->cleanup, NULL);
	/* The agent first, then what the network hooks made (the study's gateway). */
	(void)net_hook(r, NET_FINISH);
	/* A container may exist even after a failed verdict (created beside the probe). */
	if (r->create_attempted || (r->pf_ran && ag_preflight_passed(&r->pf)))
		residue(r, true);
}

/* Nothing of this run is alive: cleanup complete and no residue by label. */
static bool run_containers_gone(const struct run *r)
{
	if (!ag_cleanup_state_complete(r->cleanup.state))
		return false;
	if (!r->create_attempted)
		return true;
	return r->residue_after_ok && r->residue_ours_after == 0;
}

/* Compares the source against the fixed baseline: did anything touch it? */
static void stage_source_integrity(struct run *r)
{
	struct ag_ws_baseline b = {0};
	struct ag_ws_snapshot now = AG_WS_SNAPSHOT_INIT;
	struct ag_error *e = NULL;
	int wsfd = ag_ws_open_run(r->lifecycle_fd, AG_RUN_WORKSPACE_ID, &e);
	if (wsfd < 0 || ag_ws_baseline_load(wsfd, r->prep.digest, &b, &e) < 0) {
		r->source_reason = e ? e->reason : "run.source.baseline";
		goto out;
	}
	/* the same copy rules as the baseline's, so what stayed out stays out */
	if (r->o->observer)
		r->ws_opts.progress = ag_live_progress_source;
	if (ag_ws_source_snapshot(r->o->repo_fd, &r->ws_opts, &now, &e) < 0) {
		r->source_reason = e->reason;
		goto out;
	}
	r->source_checked = true;
	size_t i = 0, j = 0;
	while (i < b.snap.n || j < now.n) {
		const struct ag_ws_entry *x = i < b.snap.n ? &b.snap.v[i] : NULL;
		const struct ag_ws_entry *y = j < now.n ? &now.v[j] : NULL;
		int c = !x ? 1 : !y ? -1 : strcmp(x->path, y->path);
		const char *path = NULL;
		if (c < 0) {
			path = x->path;
			i++;
		} else if (c > 0) {
			path = y->path;
			j++;
		} else {
			if (x->kind != y->kind || x->size != y->size || x->mode != y->mode ||
			    memcmp(x->sha, y->sha, 32) != 0)
				path = x->path;
			i++;
			j++;
		}
		if (path) {
			r->source_diff_total++;
			if (r->source_diff.n < AG_RUN_SOURCE_DIFF_MAX)
				ag_strv_push_owned(&r->source_diff, ag_ws_path_display(path));
		}
	}
	r->source_unchanged = r->source_diff_total == 0;
out:
	if (wsfd >= 0)
		close(wsfd);
	ag_error_free(e);
	ag_ws_baseline_release(&b);
	ag_ws_snapshot_release(&now);
}

static void stage_capture(struct run *r)
{
	struct ag_error *e = NULL;
	struct ag_ws_capture_opts co = {.expected_digest = r->prep.digest};
	if (r->o->observer) {
		co.progress = ag_live_progress_capture;
		co.progress_ctx = (void *)r->o->observer;
	}
	if (ag_ws_capture(r->lifecycle_fd, AG_RUN_WORKSPACE_ID, &co, &r->mut, &e) < 0) {
		r->capture_reason = e->reason;
		fail_err(r, "workspace_prep", AG_EXIT_WORKSPACE, e);
		ag_error_free(e);
		return;
	}
	r->mut_ok = true;
}

/* The workspace beneath its run directory, no link followed; -1 if gone. */
static int open_workspace(struct run *r)
{
	struct ag_error *e = NULL;
	int wsfd = -1, rundir = ag_ws_open_run(r->lifecycle_fd, AG_RUN_WORKSPACE_ID, &e);
	if (rundir >= 0) {
		wsfd = openat(rundir, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(rundir);
	}
	ag_error_free(e);
	return wsfd;
}

/*
 * Post-execution policy checks: after the capture, while the workspace
 * still exists (the content scan reads it beneath its fd, no links).
 */
static void stage_checks(struct run *r)
{
	struct ag_error *e = NULL;
	int wsfd = r->mut_ok ? open_workspace(r) : -1;
	const char *end = NULL;
	if (r->outcome && strcmp(r->outcome, "oom_killed") == 0)
		end = "was killed by the out-of-memory killer (memory limit)";
	else if (r->outcome && strcmp(r->outcome, "timed_out") == 0)
		end = "timed out";
	else if (r->outcome && strcmp(r->outcome, "cancelled") == 0)
		end = "was cancelled";
	else if (r->outcome && strcmp(r->outcome, "exited") != 0)
		end = "ended without an exit status of its own";
	struct ag_check_input in = {
	    .cfg = r->o->cfg,
	    .mut = r->mut_ok ? &r->mut : NULL,
	    /* the agent ran only when its container's process started */
	    .command_ran = r->agent_started,
	    /* only a normal exit can pass tests-passed */
	    .command_exit = r->exit_status,
	    .command_end = end,
	    .command_label = "contained-run",
	    .argv = r->o->argv,
	    .argc = r->o->argc,
	    .policy_blocked = r->policy_blocked,
	    .workspace_fd = wsfd,
	    .env = r->o->env, /* configured secrets: the secret scan looks for them */
	};
	if (ag_checks_evaluate(&in, &r->checks, &e) == 0)
		r->checks_ok = true;
	else
		fail_err(r, "evidence", AG_EXIT_WORKSPACE, e);
	ag_error_free(e);
	if (wsfd >= 0)
		close(wsfd);
}

/*
 * changes.patch: after the capture and the proof that the source is
 * unchanged (the old side is read from it), before the workspace (the new
 * side) is deleted. Not a failure of the run when it cannot be made: the
 * artifact says why. Never written when the secret scan failed (the patch
 * would carry what it found) or when it holds a configured secret value.
 */
static void stage_patch(struct run *r)
{
	struct ag_run_patch *p = &r->patch;
	r->patch_recorded = r->mut_ok;
	if (!r->mut_ok)
		return;
	p->status = "none";
	if (r->mut.n == 0)
		return;
	p->status = "omitted";
	if (!r->source_checked || !r->source_unchanged) {
		p->reason = "patch.source_changed";
		return;
	}
	/* The patch carries file content: never one the secret scan flagged. */
	const struct ag_check_result *ss = r->checks_ok ? &r->checks.v[AG_CK_SECRET_SCAN] : NULL;
	if (ss && ss->evaluated && !ss->passed) {
		p->reason = "patch.secret_scan";
		return;
	}
	int wsfd = open_workspace(r);
	if (wsfd < 0) {
		p->reason = "patch.workspace";
		return;
	}
	struct ag_buf b = AG_BUF_INIT(AG_PATCH_MAX_BYTES, "limit.patch.size");
	struct ag_patch_stats st;
	struct ag_error *e = NULL;
	if (ag_patch_build(r->o->repo_fd, wsfd, &r->mut, &b, &st, &e) < 0) {
		p->reason = e ? e->reason : "patch.failed";
	} else if (b.len == 0) {
		p->status = "none"; /* only changes a git patch does not carry */
	} else if (ag_redact_contains_secret(r->o->redact, b.buf, b.len)) {
		p->reason = "patch.secret"; /* a configured secret value in the agent's files */
	} else if (ag_write_file_atomic_at(r->run_fd, AG_RUN_PATCH_FILE, AG_RUN_PATCH_FILE, b.buf,
					   b.len, 0644, true, &e) < 0) {
		p->reason = "patch.write";
	} else {
		p->status = "written";
		ag_sha256_hex(b.buf, b.len, p->sha256);
		p->bytes = b.len;
		r->out->patch_written = true;
	}
	p->files = st.files;
	p->binary = st.binary;
	p->dirs_skipped = st.dirs_skipped;
	ag_error_free(e);
	ag_buf_release(&b);
	close(wsfd);
}

static void stage_workspace_cleanup(struct run *r)
{
	if (!r->ws_prepared) {
		r->ws_status = "not_prepared";
		/* A staging tree is rolled back by prepare itself. */
		if (r->lifecycle_fd >= 0)
			(void)unlinkat(r->run_fd, AG_RUN_LIFECYCLE_DIR, AT_REMOVEDIR);
		return;
	}
	if (!run_containers_gone(r)) {
		/* CONTRACT: cleanup.workspace_after_absence */
		r->ws_status = "retained";
		return;
	}
	struct ag_ws_cleanup_report rep;
	struct ag_error *e = NULL;
	if (ag_ws_cleanup(r->lifecycle_fd, AG_RUN_WORKSPACE_ID, &rep, &e) < 0) {
		r->ws_status = "incomplete";
		ag_error_free(e);
		return;
	}
	r->ws_status = "removed";
	if (unlinkat(r->run_fd, AG_RUN_LIFECYCLE_DIR, AT_REMOVEDIR) < 0)
		r->ws_status = "incomplete";
}

/* ---- result ---- */

static void record_cleanup_failure(struct run *r)
{
	bool container_ok = ag_cleanup_state_complete(r->cleanup.state);
	bool residue_ok = !r->residue_after_ok
			      ? !(r->create_attempted || (r->pf_ran && ag_preflight_passed(&r->pf)))
			      : r->residue_ours_after == 0;
	bool ws_ok = strcmp(r->ws_status, "incomplete") != 0;
	r->out->cleanup_complete = container_ok && residue_ok && ws_ok && !r->net_cleanup_failed;
	if (r->out->cleanup_complete)
		return;
	r->cleanup_reason = !container_ok ? "cleanup.container"
			    : !residue_ok ? "cleanup.residue"
			    : !ws_ok	  ? "cleanup.workspace"
					  : "cleanup.study_egress";
	r->cleanup_message =
	    ag_xasprintf("cleanup not verified: container %s, residue %s, workspace %s",
			 ag_cleanup_state_name(r->cleanup.state),
			 residue_ok ? "none" : "present or unknown", r->ws_status);
	if (!r->stage) {
		fail(r, "cleanup", AG_EXIT_CLEANUP, r->cleanup_reason, "%s", r->cleanup_message);
		r->cleanup_reason = NULL;
	}
}

/* The artifact again, after a late failure recorded in r: a failing verdict. */
static json_t *rebuild_failed(const struct run *r, struct ag_run_facts *f, json_t *old)
{
	f->pass = false;
	f->exit_code = r->exit_code;
	f->stage = r->stage;
	f->reason = r->reason;
	f->message = r->message;
	json_decref(old);
	json_t *a = ag_run_artifact_build(f);
	if (r->o->net)
		r->o->net->artifact(r->o->net->data, a);
	return a;
}

int ag_contained_run(const struct ag_run_opts *o, struct ag_run_outcome *out, struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	struct run R = {.o = o, .out = out, .run_fd = -1, .lifecycle_fd = -1};
	struct run *r = &R;
	r->started_ms = now_ms();
	r->ws_status = "not_prepared";
	if (make_run_dir(r, err) < 0) {
		if (r->run_fd >= 0)
			close(r->run_fd);
		free(r->run_id);
		free(r->suffix);
		free(r->container_name);
		return -1;
	}
	/* stages: each stops the run on failure; the tail always runs */
	struct ag_run_timings *tm = &out->timings;
	uint64_t t = now_ms();
#define LAP(field)                                                                                 \
	do {                                                                                       \
		uint64_t n_ = now_ms();                                                            \
		tm->field += n_ - t;                                                               \
		t = n_;                                                                            \
	} while (0)
	int ok = stage_policy(r);
	LAP(policy);
	struct pf_job job;
	if (ok == 0 && stage_preflight_start(r, &job) == 0) {
		uint64_t pf0 = t;
		residue(r, false);
		bool created = false;
		if (preflight_probing(&job)) {
			LAP(preflight);
			ok = stage_workspace(r);
			LAP(workspace);
			created = ok == 0 && net_hook(r, NET_SETUP) == 0 &&
				  stage_create(r, job.image_id) == 0 &&
				  net_hook(r, NET_VERIFY) == 0;
			LAP(container);
		}
		/* The preflight overlaps the two stages above: its own wall time. */
		bool passed = stage_preflight_finish(r, &job) == 0;
		t = now_ms();
		tm->preflight = t - pf0;
		if (passed && created) {
			(void)stage_start(r);
			LAP(execution);
		}
	} else {
		LAP(preflight);
	}
	classify(r);
	stage_cleanup_container(r);
	LAP(cleanup);
	if (r->ws_prepared && run_containers_gone(r)) {
		/* Capture only once nothing can write the workspace any more. */
		stage_capture(r);
	}
	LAP(capture);
	stage_checks(r);
	if (r->ws_prepared)
		stage_source_integrity(r);
	stage_patch(r);
	r->out->patch_status = r->patch_recorded ? r->patch.status : NULL; /* static */
	r->out->patch_reason = r->patch.reason;
	LAP(checks);
	stage_workspace_cleanup(r);
	record_cleanup_failure(r);
	LAP(cleanup);

	/* verdict: no failure stage, checks pass, cleanup complete, capture ok */
	bool tests_passed = r->checks_ok && r->checks.v[AG_CK_TESTS_PASSED].passed;
	bool checks_pass = r->checks_ok && r->checks.pass;
	out->pass = !r->stage && checks_pass && out->cleanup_complete && r->mut_ok;
	out->exit_code = r->stage ? r->exit_code : (out->pass ? AG_EXIT_PASS : AG_EXIT_FAIL);
	if (!r->stage && r->executed && !tests_passed)
		r->reason = "run.agent_failed";
	else if (!r->stage && !checks_pass)
		r->reason = "run.checks_failed";
	out->score = r->checks_ok ? r->checks.score : 0;
	out->score_known = r->checks_ok && r->agent_started;
	for (int i = 0; r->checks_ok && i < AG_CK__COUNT; i++) {
		const struct ag_check_result *ck = &r->checks.v[i];
		if (!ck->evaluated || ck->passed)
			continue;
		const char *first =
		    ck->evidence.n ? ck->evidence.v[0] : (ck->message ? ck->message : "");
		char *line = ag_xasprintf("%s (%s): %s", ag_check_name(ck->id),
					  ag_severity_name(ck->severity), first);
		ag_strv_push_owned(&out->failed_checks,
				   ag_redact(o->redact, line, strlen(line),
					     AG_CHECK_EVIDENCE_MAX_BYTES + 64, 0, NULL));
		free(line);
	}

	struct ag_run_facts facts = {
	    .run_id = r->run_id,
	    .config = o->cfg,
	    .argv = o->argv,
	    .argc = o->argc,
	    .redact = o->redact,
	    .env = o->env,
	    .pf = r->pf_ran ? &r->pf : NULL,
	    .cli_version = r->eng_ok ? r->eng.client : NULL,
	    .policy_blocked = r->policy_blocked,
	    .ws_prepared = r->ws_prepared,
	    .prep = &r->prep,
	    .ws_exclude_counts = r->ws_exclude_counts,
	    .ws_status = r->ws_status,
	    .mut = r->mut_ok ? &r->mut : NULL,
	    .source_checked = r->source_checked,
	    .source_unchanged = r->source_unchanged,
	    .source_diff = &r->source_diff,
	    .source_diff_total = r->source_diff_total,
	    .source_reason = r->source_reason,
	    .container_id = r->container_id,
	    .container_name = r->container_name,
	    .owner_label = r->suffix,
	    .bound_image_id = r->bound_image_id,
	    .verified = r->verified,
	    .verified_controls = r->verified_controls,
	    .fingerprint_checked = r->fingerprint_checked,
	    .fingerprint_same = r->fingerprint_same,
	    .residue_before_ok = r->residue_before_ok,
	    .residue_before = r->residue_before,
	    .residue_after_ok = r->residue_after_ok,
	    .residue_after = r->residue_after,
	    .residue_ours_after = r->residue_ours_after,
	    .cleanup = &r->cleanup,
	    .cleanup_complete = out->cleanup_complete,
	    .executed = r->executed,
	    .agent_started = r->agent_started,
	    .outcome = r->outcome,
	    .exit_status = r->exit_status,
	    .oom_killed = r->oom_killed,
	    .timed_out = r->executed && r->outcome && strcmp(r->outcome, "timed_out") == 0,
	    .timeout_enforced_by = ag_deadline_by_name(r->deadline_by),
	    .init_deadline_seconds = r->init_bin ? ag_run_init_deadline(r->o->timeout_seconds) : 0,
	    .cancelled = r->outcome && strcmp(r->outcome, "cancelled") == 0,
	    .stdout_text = r->stdout_red,
	    .stderr_text = r->stderr_red,
	    .stdout_truncated = r->stdout_trunc,
	    .stderr_truncated = r->stderr_trunc,
	    .stdout_bytes = r->stdout_bytes,
	    .stderr_bytes = r->stderr_bytes,
	    .exec_ms = r->exec_ms,
	    .duration_ms = now_ms() - r->started_ms,
	    .pass = out->pass,
	    .exit_code = out->exit_code,
	    .checks = r->checks_ok ? &r->checks : NULL,
	    .patch = r->patch_recorded ? &r->patch : NULL,
	    .stage = r->stage,
	    .reason = r->reason,
	    .message = r->message,
	    .cleanup_reason = r->cleanup_reason,
	    .cleanup_message = r->cleanup_message,
	};
	json_t *artifact = ag_run_artifact_build(&facts);
	if (o->net)
		o->net->artifact(o->net->data, artifact);
	struct ag_error *e = NULL;
	/* CONTRACT: evidence.bounds (the containment object keeps its own, tighter bounds) */
	if (ag_canon_check(json_object_get(artifact, "containment_evidence"),
			   &ag_canon_containment_bounds, &e) < 0) {
		fail_err(r, "evidence", AG_EXIT_WORKSPACE, e);
		ag_error_free(e);
		e = NULL;
		out->pass = false;
		out->exit_code = AG_EXIT_WORKSPACE;
		facts.pass = false;
		facts.exit_code = AG_EXIT_WORKSPACE;
		facts.stage = r->stage;
		facts.reason = r->reason;
		facts.message = r->message;
		json_decref(artifact);
		artifact = ag_run_artifact_build(&facts);
		if (o->net)
			o->net->artifact(o->net->data, artifact);
		/* Still over its bounds: record that the object is unavailable. */
		if (ag_canon_check(json_object_get(artifact, "containment_evidence"),
				   &ag_canon_containment_bounds, &e) < 0) {
			json_object_set_new(artifact, "containment_evidence",
					    json_pack("{s:s, s:i, s:s, s:s}", "schema",
						      "agentguard.containment-evidence",
						      "schema_version", 1, "state", "unavailable",
						      "reason", e->reason));
			ag_error_free(e);
			e = NULL;
		}
	}
	int wrc = write_json_file(r, AG_RUN_ARTIFACT_FILE, artifact, &ag_canon_artifact_bounds, &e);
	if (wrc < 0 && e->code == AG_E_LIMIT) {
		/*
		 * Over the artifact's bounds (the output caps should prevent it):
		 * the artifact is still written, without the captured output,
		 * which is recorded as truncated, and the run fails closed.
		 */
		fail_err(r, "evidence", AG_EXIT_WORKSPACE, e);
		ag_error_free(e);
		e = NULL;
		out->pass = false;
		facts.stdout_text = facts.stderr_text = "";
		facts.stdout_truncated = facts.stderr_truncated = true;
		artifact = rebuild_failed(r, &facts, artifact);
		wrc = write_json_file(r, AG_RUN_ARTIFACT_FILE, artifact, &ag_canon_artifact_bounds,
				      &e);
	}
	if (wrc == 0) {
		out->artifact_written = true;
	} else {
		fail_err(r, "evidence", AG_EXIT_WORKSPACE, e);
		out->pass = false;
		out->exit_code = AG_EXIT_WORKSPACE;
	}
	/* CONTRACT: evidence.tamper_evident (seal + signature + chain in the runs root) */
	struct ag_seal_result sres = {0};
	struct ag_seal_opts so = {.key = o->signing_key, .cancel = o->cancel};
	if (out->artifact_written &&
	    ag_seal_run(o->runs_root_fd, r->run_id, AG_RUN_ARTIFACT_FILE, &so, &sres, &e) < 0) {
		/*
		 * Unsealed evidence cannot be trusted later: fail closed and say so
		 * in the artifact itself (rewritten). When only the chain lock was
		 * out of reach (held too long, or the run was cancelled while
		 * waiting) the rewritten artifact is still sealed and signed, outside
		 * the chain, so it stays attributable; otherwise it stays unsealed.
		 */
		bool cancelled = strcmp(e->reason, "evidence.seal.cancelled") == 0;
		const char *unchained = cancelled ? "cancelled"
					: strcmp(e->reason, "evidence.seal.lock_timeout") == 0
					    ? "lock_timeout"
					    : NULL;
		if (cancelled)
			fail(r, "cancelled", 128 + (int)*o->cancel, e->reason, "%s", e->msg);
		else
			fail_err(r, "evidence", AG_EXIT_WORKSPACE, e);
		ag_error_free(e);
		e = NULL;
		out->pass = false;
		out->exit_code = r->exit_code;
		artifact = rebuild_failed(r, &facts, artifact);
		if (write_json_file(r, AG_RUN_ARTIFACT_FILE, artifact, &ag_canon_artifact_bounds,
				    &e) == 0 &&
		    unchained &&
		    ag_seal_run_unchained(o->runs_root_fd, r->run_id, AG_RUN_ARTIFACT_FILE,
					  o->signing_key, unchained, &e) == 0)
			out->chain_start = unchained;
		else
			out->seal_failed = true;
	} else {
		out->chain_start = sres.chain_start;
	}
	ag_error_free(e);
	json_decref(artifact);
	(void)write_marker(r, out->cleanup_complete ? "complete" : "retained");
	LAP(evidence);
#undef LAP
	tm->total = now_ms() - r->started_ms;

	/* what the CLI prints */
	out->run_id = ag_steal_ptr(&r->run_id);
	out->preflight_status = r->pf_ran ? ag_pf_status_name(r->pf.status) : NULL;
	out->claim_level = r->pf_ran ? ag_pf_claim_name(r->pf.claim) : NULL;
	out->command_ran = r->executed;
	out->agent_started = r->agent_started;
	out->changes_known = r->mut_ok;
	out->capture_reason = r->capture_reason;
	out->command_exit_code = r->exit_status;
	out->timed_out = facts.timed_out;
	out->cancelled = facts.cancelled;
	out->outcome = r->outcome;
	if (r->mut_ok) {
		out->changed_total = r->mut.n;
		for (size_t i = 0; i < r->mut.n && i < AG_RUN_CHANGED_LIST_MAX; i++) {
			const struct ag_ws_change *ch = &r->mut.v[i];
			if (ch->kind == AG_WS_RENAMED) {
				char *a = ag_ws_path_display(ch->old_path);
				char *b2 = ag_ws_path_display(ch->path);
				ag_strv_pushf(&out->changed_files, "%s -> %s (renamed)", a, b2);
				free(a);
				free(b2);
			} else {
				char *a = ag_ws_path_display(ch->path);
				ag_strv_pushf(&out->changed_files, "%s (%s)", a,
					      ag_ws_change_name(ch->kind));
				free(a);
			}
		}
	}
	out->failure_stage = r->stage;
	out->failure_reason = r->reason;
	out->failure_message = r->message ? ag_steal_ptr(&r->message) : NULL;
	out->cleanup_failure_reason = r->cleanup_reason;
	out->cleanup_status = ag_cleanup_state_name(r->cleanup.state);
	out->workspace_status = r->ws_status;
	out->source_unchanged_known = r->source_checked;
	out->source_unchanged = r->source_unchanged;
	out->exit_code = r->stage ? r->exit_code : out->exit_code;

	/* release */
	free(r->ws_exclude_counts);
	free(r->suffix);
	free(r->container_name);
	free(r->message);
	free(r->cleanup_message);
	free(r->container_id);
	free(r->bound_image_id);
	free(r->init_bin);
	json_decref(r->verified_controls);
	free(r->stdout_red);
	free(r->stderr_red);
	if (r->pr_init)
		ag_engine_stream_release(&r->pr);
	if (r->pf_ran)
		ag_preflight_result_release(&r->pf);
	if (r->eng_ok)
		ag_engine_close(&r->eng);
	if (r->mut_ok)
		ag_ws_mutations_release(&r->mut);
	ag_checks_release(&r->checks);
	ag_strv_release(&r->source_diff);
	if (r->lifecycle_fd >= 0)
		close(r->lifecycle_fd);
	close(r->run_fd);
	return 0;
}
