/*
 * contained_run.c: the stages of the contained run (pipeline.h). Each stage
 * calls into the library (preflight, workspace, exec_spec, ledger) and
 * records what it observed in its part of the run record; the table and
 * its driver (pipeline.c) decide what runs, and always clean up what exists
 * (container first, by id) before the evidence is written.
 */
#include "lib/base/ag.h"
#include "lib/run/pipeline.h"
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

/* ---- run directory, marker ---- */

int ag_run_write_json(struct ag_run_ctx *c, const char *name, json_t *v,
		      const struct ag_canon_bounds *b, struct ag_error **err)
{
	char *s = NULL;
	size_t n = 0;
	if (ag_canon_dump(v, b, &s, &n, err) < 0)
		return -1;
	char *nl = ag_xasprintf("%s\n", s);
	free(s);
	int rc = ag_write_file_atomic_at(c->run_fd, name, name, nl, n + 1, 0644, false, err);
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

int ag_run_write_marker(struct ag_run_ctx *c, const char *state)
{
	/* Signed, so `agentguard cleanup` recovers only runs AgentGuard started (recover.h). */
	struct ag_error *e = NULL;
	int rc = ag_run_marker_write(c->run_fd, c->rec->run_id, state, c->o->signing_key, &e);
	ag_error_free(e);
	return rc;
}

int ag_run_make_dir(struct ag_run_ctx *c, struct ag_error **err)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		free(c->rec->run_id);
		c->rec->run_id = ag_run_id_new(c->o->cfg->task_id);
		if (mkdirat(c->o->runs_root_fd, c->rec->run_id, 0700) == 0)
			break;
		if (errno != EEXIST || attempt == 3)
			return ag_err(err, AG_E_IO, errno, "run.dir.create",
				      "cannot create the run directory: %s", strerror(errno));
	}
	c->run_fd = openat(c->o->runs_root_fd, c->rec->run_id,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->run_fd < 0)
		return ag_err(err, AG_E_IO, errno, "run.dir.open", "cannot open the run directory");
	/* The bind-mounted workspace lives below; 0711 lets only the owner list. */
	(void)fchmod(c->run_fd, 0711);
	c->rec->ledger.suffix = ag_run_suffix(c->rec->run_id);
	c->rec->ledger.container_name = ag_xasprintf("agentguard-%s", c->rec->ledger.suffix);
	ag_run_owner_init(&c->rec->ledger.own, c->rec->ledger.container_name,
			  c->rec->ledger.suffix);
	/* The ledger: the agent's entry first, found by the run's unique label
	 * when its create answer is lost. */
	struct ag_run_ledger *l = &c->rec->ledger;
	ag_ledger_init(&l->objects, AG_RUN_ID_LABEL, l->suffix, AG_DOCKER_CONTROL_TIMEOUT_MS);
	c->agent = ag_ledger_add(&l->objects, AG_LEDGER_CONTAINER, AG_RUN_ROLE_AGENT,
				 l->container_name, l->own.labels, AG_ARRAY_SIZE(l->own.labels));
	if (ag_run_write_marker(c, "created") < 0)
		return ag_err(err, AG_E_IO, errno, "run.marker", "cannot write the run marker");
	/* Paths below the run root become ${RUN_ROOT} wherever they appear. */
	char *abs = ag_xasprintf("%s/%s", c->o->runs_root_abs, c->rec->run_id);
	ag_redactor_add_root(c->o->redact, abs, "${RUN_ROOT}");
	/*
	 * Inside the container, mountinfo shows the workspace's source relative
	 * to the filesystem it lives on, so every tail of the run directory's
	 * path that still ends in the (unique) run id is a root too.
	 */
	for (const char *p = strchr(abs + 1, '/'); p; p = strchr(p + 1, '/'))
		ag_redactor_add_root(c->o->redact, p, "${RUN_ROOT}");
	free(abs);
	return 0;
}

/* ---- stages ---- */

static bool run_containers_gone(const struct ag_run_ctx *c);

/* CONTRACT: policy.unsafe_commands (enforce blocks before any container exists) */
int ag_stage_policy(struct ag_run_ctx *c)
{
	const struct ag_config *cfg = c->o->cfg;
	if (cfg->command_policy != AG_CMD_POLICY_ENFORCE || cfg->unsafe_commands.n == 0)
		return 0;
	/* Substring match over the argv joined by spaces (upstream semantics). */
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, "limit.run.argv");
	struct ag_error *e = NULL;
	for (size_t i = 0; i < c->o->argc; i++)
		if ((i && ag_buf_add(&b, " ", 1, &e) < 0) || ag_buf_adds(&b, c->o->argv[i], &e) < 0)
			abort();
	for (size_t i = 0; i < cfg->unsafe_commands.n; i++) {
		if (strstr(b.buf, cfg->unsafe_commands.v[i])) {
			c->rec->policy.blocked = true;
			c->rec->policy.match = cfg->unsafe_commands.v[i];
			ag_run_fail(
			    c, AG_FAIL_POLICY, 0, "policy.unsafe_command",
			    "the agent argv matches an unsafe_commands entry; blocked before "
			    "launch");
			break;
		}
	}
	ag_buf_release(&b);
	return c->rec->policy.blocked ? -1 : 0;
}

/*
 * The preflight runs on its own thread and its own engine connection. Once
 * its checks up to the probe have passed (on_probe), the run prepares the
 * workspace and creates and verifies its own container while the probe
 * runs; the agent starts only after the final verdict, which includes the
 * verified removal of the probe.
 */
static void pf_on_probe(void *data, const char *image_id)
{
	struct ag_pf_job *j = data;
	pthread_mutex_lock(&j->mu);
	j->image_id = image_id ? ag_xstrdup(image_id) : NULL;
	j->probing = true;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

static void *pf_main(void *data)
{
	struct ag_pf_job *j = data;
	struct ag_preflight_opts po = AG_PREFLIGHT_OPTS_INIT;
	po.socket_path = j->c->o->docker_socket;
	po.probe_path = j->c->o->probe_path;
	po.on_probe = pf_on_probe;
	po.on_probe_data = j;
	int rc = ag_preflight_run(j->c->o->cfg, NULL, &po, &j->c->rec->preflight.result, &j->err);
	pthread_mutex_lock(&j->mu);
	j->rc = rc;
	j->done = true;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Opens the run's engine connection and starts the preflight beside it. */
int ag_stage_preflight_start(struct ag_run_ctx *c)
{
	struct ag_pf_job *j = &c->job;
	struct ag_error *e = NULL;
	c->pf_started_ms = ag_run_now_ms();
	if (ag_engine_open(c->o->docker_socket, &c->eng, &e) < 0) {
		ag_run_fail(c, AG_FAIL_PREFLIGHT, 0, e->reason, "Docker engine unavailable: %s",
			    e->msg);
		ag_error_free(e);
		return -1;
	}
	c->eng_ok = true;
	ag_preflight_result_init(&c->rec->preflight.result);
	c->rec->preflight.ran = true;
	*j = (struct ag_pf_job){.c = c, .started = true};
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	if (pthread_create(&j->th, NULL, pf_main, j) != 0)
		abort(); /* no thread for the preflight: nothing safe to do */
	return 0;
}

/* Waits until the probe is about to run; -1 (the main line halts) when the
 * preflight ended first: its verdict, joined next, says why. */
int ag_stage_probe_wait(struct ag_run_ctx *c)
{
	struct ag_pf_job *j = &c->job;
	pthread_mutex_lock(&j->mu);
	while (!j->probing && !j->done)
		pthread_cond_wait(&j->cv, &j->mu);
	bool probing = j->probing;
	pthread_mutex_unlock(&j->mu);
	return probing ? 0 : -1;
}

/* Joins the preflight (always, once started); 0 when its verdict passed. Its
 * wall time runs from its start: it overlaps workspace and container. */
int ag_stage_preflight_finish(struct ag_run_ctx *c)
{
	struct ag_pf_job *j = &c->job;
	if (!j->started)
		return -1;
	j->started = false;
	pthread_join(j->th, NULL);
	c->rec->timings.preflight = ag_run_now_ms() - c->pf_started_ms;
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j->image_id);
	j->image_id = NULL;
	if (j->rc < 0) {
		ag_run_fail_err(c, AG_FAIL_PREFLIGHT, 0, j->err);
		ag_error_free(j->err);
		return -1;
	}
	if (!ag_preflight_passed(&c->rec->preflight.result)) {
		ag_run_fail(c, AG_FAIL_PREFLIGHT, 0,
			    c->rec->preflight.result.reason ? c->rec->preflight.result.reason
							    : "preflight.failed",
			    "Docker contained-execution preflight failed: %s",
			    ag_pf_status_name(c->rec->preflight.result.status));
		return -1;
	}
	return 0;
}

static void residue(struct ag_run_ctx *c, bool after);

/* The census of AgentGuard's containers before this run creates its own. */
int ag_stage_residue_before(struct ag_run_ctx *c)
{
	residue(c, false);
	return 0;
}

static void residue(struct ag_run_ctx *c, bool after)
{
	struct ag_strv ids = AG_STRV_INIT;
	int rc = ag_container_list_labelled(&c->eng, AG_RUN_OWNER_LABEL, AG_RUN_OWNER_VALUE,
					    AG_DOCKER_CONTROL_TIMEOUT_MS, &ids);
	if (!after) {
		c->rec->ledger.residue_before_ok = rc == 0;
		c->rec->ledger.residue_before = ids.n;
	} else {
		c->rec->ledger.residue_after_ok = rc == 0;
		c->rec->ledger.residue_after = ids.n;
		struct ag_strv ours = AG_STRV_INIT;
		int rc2 =
		    ag_container_list_labelled(&c->eng, AG_RUN_ID_LABEL, c->rec->ledger.suffix,
					       AG_DOCKER_CONTROL_TIMEOUT_MS, &ours);
		if (rc2 < 0)
			c->rec->ledger.residue_after_ok = false;
		c->rec->ledger.residue_ours_after = ours.n;
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

int ag_stage_workspace(struct ag_run_ctx *c)
{
	struct ag_error *e = NULL;
	if (mkdirat(c->run_fd, AG_RUN_LIFECYCLE_DIR, 0711) < 0) {
		ag_run_fail(c, AG_FAIL_WORKSPACE, 0, "workspace.lifecycle_dir",
			    "cannot create the lifecycle directory");
		return -1;
	}
	c->lifecycle_fd = openat(c->run_fd, AG_RUN_LIFECYCLE_DIR,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->lifecycle_fd < 0) {
		ag_run_fail(c, AG_FAIL_WORKSPACE, 0, "workspace.lifecycle_dir",
			    "cannot open the lifecycle directory");
		return -1;
	}
	/* CONTRACT: evidence.outside_agent_repo (.agentguard/ holds only what we wrote) */
	if (c->o->runs_root_in_repo) {
		const struct ag_sign_key *const keys[] = {c->o->signing_key};
		const struct ag_trust own = {keys, 1};
		if (ag_runs_audit(c->o->repo_fd, c->o->runs_root_rel, c->rec->run_id,
				  c->o->trust ? c->o->trust : &own, &e) < 0) {
			ag_run_fail_err(c, AG_FAIL_WORKSPACE, 0, e);
			ag_error_free(e);
			return -1;
		}
	}
	struct ag_ws_prepare_opts *po = &c->ws_opts;
	const struct ag_config *cfg = c->o->cfg;
	po->exclude_agentguard_root = c->o->runs_root_in_repo;
	po->include_ignored = cfg->workspace_include_ignored;
	po->exclude = (const char *const *)cfg->workspace_exclude.v;
	po->nexclude = cfg->workspace_exclude.n;
	po->exclude_match = ws_exclude_match;
	c->rec->workspace.exclude_counts = ag_xcalloc(po->nexclude + 1, sizeof(uint64_t));
	po->exclude_counts = c->rec->workspace.exclude_counts;
	po->git_baseline = !cfg->workspace_git_none;
	if (c->o->observer) {
		po->progress = ag_live_progress_copy;
		po->progress_ctx = (void *)c->o->observer;
	}
	if (ag_ws_prepare(c->o->repo_fd, c->lifecycle_fd, AG_RUN_WORKSPACE_ID, po,
			  &c->rec->workspace.prep, &e) < 0) {
		ag_run_fail_err(c, AG_FAIL_WORKSPACE, 0, e);
		ag_error_free(e);
		return -1;
	}
	c->rec->workspace.prepared = true;
	c->rec->workspace.status = AG_RUN_WS_PREPARED;
	/* The container user must be able to write its workspace: it is ours (same uid). */
	return 0;
}

static char *workspace_host_path(const struct ag_run_ctx *c)
{
	return ag_xasprintf("%s/%s/%s/%s/workspace", c->o->runs_root_abs, c->rec->run_id,
			    AG_RUN_LIFECYCLE_DIR, AG_RUN_WORKSPACE_ID);
}

/* Re-reads the daemon facts the preflight relied on; false when they changed. */
static bool fingerprint_same(struct ag_run_ctx *c)
{
	struct ag_engine_facts f = {0};
	struct ag_pf_findings fi = AG_PF_FINDINGS_INIT;
	bool ok = false;
	struct ag_error *e = NULL;
	json_t *jv = NULL, *ji = NULL;
	if (ag_engine_json(&c->eng, "GET", "/version", NULL, 0, "GET /version", &jv, &e) < 0 ||
	    ag_engine_json(&c->eng, "GET", "/info", NULL, 0, "GET /info", &ji, &e) < 0)
		goto out;
	json_t *both = json_pack("{s:{s:s},s:O}", "Client", "Version", c->eng.client, "Server", jv);
	ag_inspect_version(both, &f, &fi);
	json_decref(both);
	ag_inspect_info(ji, &f, &fi);
	if (fi.n)
		goto out;
#define SAME(a, b) ((!(a) && !(b)) || ((a) && (b) && strcmp((a), (b)) == 0))
	ok = SAME(f.server_version, c->rec->preflight.result.engine_version) &&
	     SAME(f.api_version, c->rec->preflight.result.api_version) &&
	     SAME(f.os, c->rec->preflight.result.os) &&
	     SAME(f.arch, c->rec->preflight.result.arch) &&
	     SAME(f.cgroup_driver, c->rec->preflight.result.cgroup_driver) &&
	     SAME(f.cgroup_version, c->rec->preflight.result.cgroup_version) &&
	     SAME(f.runtime, c->rec->preflight.result.runtime) &&
	     f.desktop == c->rec->preflight.result.docker_desktop;
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
	const struct ag_run_ctx *c = data;
	return c->o->cancel && *c->o->cancel;
}

int ag_stage_create(struct ag_run_ctx *c)
{
	const char *image_id = c->job.image_id;
	const struct ag_config *cfg = c->o->cfg;
	struct ag_error *e = NULL;
	char *host_ws = workspace_host_path(c);
	const struct ag_label labels[] = {{AG_RUN_OWNER_LABEL, AG_RUN_OWNER_VALUE},
					  {AG_RUN_ID_LABEL, c->rec->ledger.suffix}};
	struct ag_exec_inputs in = {
	    .workspace_host_path = host_ws,
	    .container_name = c->rec->ledger.container_name,
	    .env = (const char *const *)ag_strv_argv(&c->o->env->assignments),
	    .n_env = c->o->env->assignments.n,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = c->o->argv,
	    .n_command = c->o->argc,
	};
	/* The renderer adds the four defaults itself: pass configured entries only. */
	struct ag_strv configured = AG_STRV_INIT;
	for (size_t i = 0; i < c->o->env->assignments.n; i++) {
		const char *a = c->o->env->assignments.v[i];
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
	if (ag_run_init_verify(c->o->init_path, &c->init_bin, &e) < 0) {
		ag_run_fail_err(c, AG_FAIL_PREFLIGHT, 0, e);
		goto out;
	}
	in.init_host_path = c->init_bin;
	in.init_deadline_seconds = ag_run_init_deadline(c->o->timeout_seconds);
	c->rec->exec.init_deadline_seconds = in.init_deadline_seconds;
	if (ag_exec_spec_from_config(cfg, &in, &spec, &e) < 0 ||
	    (c->o->net && c->o->net->agent_spec(c->o->net->data, &spec, &e) < 0)) {
		ag_run_fail_err(c, AG_FAIL_DOCKER, 0, e);
		goto out;
	}
	/* create, then bind identity by the returned id and the owner labels */
	if (ag_ledger_entry_create(&c->rec->ledger.objects, &c->eng, c->agent, &spec, NULL, &e) <
	    0) {
		/* Docker may have made it anyway: cleanup finds it by the run's label. */
		ag_run_fail_err(c, AG_FAIL_DOCKER, 0, e);
		goto out;
	}
	/*
	 * The container's id (and the 12-digit form Docker prints and uses as
	 * the hostname) is recorded only as a hash: wherever Docker's client
	 * or the agent prints it, it is redacted.
	 */
	{
		char shortid[13];
		memcpy(shortid, c->agent->id, 12);
		shortid[12] = '\0';
		ag_redactor_add_secret(c->o->redact, c->agent->id);
		ag_redactor_add_secret(c->o->redact, shortid);
	}
	{
		json_t *v = NULL;
		if (ag_container_lookup(&c->eng, c->agent->id, AG_DOCKER_CONTROL_TIMEOUT_MS, &v) !=
		    0) {
			ag_run_fail(c, AG_FAIL_DOCKER, 0, "run.identity.inspect",
				    "the created container could not be inspected by its id");
			goto out;
		}
		/* What it must show: derived from the spec that rendered the create. */
		struct ag_probe_expect x;
		const struct ag_inspect_created made = {AG_INSPECT_AGENT, c->agent->id, image_id,
							NULL};
		if (ag_inspect_expect_from_spec(&spec, &made, &x, &e) < 0) {
			json_decref(v);
			ag_run_fail_err(c, AG_FAIL_DOCKER, 0, e);
			goto out;
		}
		struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		c->rec->container.verified_controls = json_object();
		ag_inspect_container(v, &x, c->rec->container.verified_controls, &f);
		const char *img = ag_json_path_str(v, "Image");
		if (img && ag_is_image_id(img))
			c->rec->container.bound_image_id = ag_xstrdup(img);
		json_decref(v);
		if (f.n) {
			/* CONTRACT: run.verify_created (the container that runs shows every
			 * control) */
			ag_run_fail(
			    c, AG_FAIL_PREFLIGHT, 0, f.v[0].reason,
			    "the created container does not show a required control: %s: %s",
			    f.v[0].control, f.v[0].detail ? f.v[0].detail : "");
			ag_pf_findings_release(&f);
			goto out;
		}
		ag_pf_findings_release(&f);
		c->rec->container.verified = true;
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
int ag_stage_start(struct ag_run_ctx *c)
{
	const struct ag_config *cfg = c->o->cfg;
	struct ag_error *e = NULL;
	char *host_ws = workspace_host_path(c);
	int rc = -1;
	/* CONTRACT: run.daemon_fingerprint (facts preflight relied on, re-checked) */
	c->rec->container.fingerprint_checked = true;
	c->rec->container.fingerprint_same = fingerprint_same(c);
	if (!c->rec->container.fingerprint_same) {
		ag_run_fail(c, AG_FAIL_PREFLIGHT, 0, "run.daemon_changed",
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
		int wfd = openat(c->lifecycle_fd, AG_RUN_WORKSPACE_ID "/workspace",
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bool same = wfd >= 0 && fstat(wfd, &by_fd) == 0 && stat(host_ws, &by_path) == 0 &&
			    by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
		if (wfd >= 0)
			close(wfd);
		if (!same) {
			ag_run_fail(
			    c, AG_FAIL_PREFLIGHT, 0, "run.workspace_path_swapped",
			    "the workspace's host path no longer leads to the prepared workspace");
			goto out;
		}
	}
	if (should_cancel(c)) {
		c->rec->exec.outcome = AG_RUN_OUTCOME_CANCELLED;
		ag_run_fail(c, AG_FAIL_CANCELLED, AG_EXIT_SIGNAL_BASE + (int)*c->o->cancel,
			    "run.cancelled", "the run was cancelled before start");
		goto out;
	}
	{
		struct ag_engine_stream_opts so = {
		    .stdout_max = (size_t)cfg->max_output_bytes,
		    .stderr_max = (size_t)cfg->max_output_bytes,
		    .timeout_ms = (unsigned)(c->o->timeout_seconds * 1000),
		    .should_cancel = should_cancel,
		    .should_cancel_data = c,
		};
		/* the agent's output, live, redacted by the same set (lib/run/live.h) */
		struct ag_live *live = NULL;
		if (c->o->observer) {
			live = ag_live_new(c->o->redact, so.stdout_max, c->o->observer);
			so.on_output = ag_live_output;
			so.on_output_data = live;
			c->o->observer->event(
			    c->o->observer->ctx,
			    &(struct ag_run_event){.kind = AG_RUN_EV_AGENT_START});
		}
		ag_engine_stream_init(&c->pr);
		c->pr_init = true;
		uint64_t t0 = ag_run_now_ms();
		ag_engine_attach_run(&c->eng, c->agent->id, &so, &c->pr, &e);
		c->rec->exec.ms = ag_run_now_ms() - t0;
		if (live) {
			ag_live_finish(live);
			ag_live_free(live);
			c->o->observer->event(c->o->observer->ctx,
					      &(struct ag_run_event){.kind = AG_RUN_EV_AGENT_END});
		}
		c->rec->exec.executed = true;
		if (c->pr.end == AG_STREAM_NOT_STARTED) {
			/* Attach or start refused: classify() reads the container's state. */
			ag_error_free(e);
			e = NULL;
		} else if (c->pr.end == AG_STREAM_ENDED) {
			/* The stream ended with the process; its state settles by wait. */
			_cleanup_free_ char *wpath =
			    ag_xasprintf("/containers/%s/wait?condition=not-running", c->agent->id);
			json_t *w = NULL;
			if (ag_engine_json(&c->eng, "POST", wpath, NULL,
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
int ag_stage_classify(struct ag_run_ctx *c)
{
	if (!c->rec->exec.executed)
		return 0;
	const struct ag_engine_stream *p = &c->pr;
	json_t *v = NULL;
	bool have_state =
	    c->agent->id &&
	    ag_container_lookup(&c->eng, c->agent->id, AG_DOCKER_CONTROL_TIMEOUT_MS, &v) == 0;
	const json_t *ec = have_state ? ag_json_path(v, "State.ExitCode") : NULL;
	const char *derr = have_state ? ag_json_path_str(v, "State.Error") : NULL;
	const char *started = have_state ? ag_json_path_str(v, "State.StartedAt") : NULL;
	c->rec->exec.oom_killed = have_state && json_is_true(ag_json_path(v, "State.OOMKilled"));
	bool never_started = started && strncmp(started, "0001-01-01", 10) == 0;
	bool still_running = have_state && json_is_true(ag_json_path(v, "State.Running"));
	bool init_not_found = false; /* the init could not exec the argv (run/deadline.h) */
	c->rec->exec.exit_status = json_is_integer(ec) ? (int)json_integer_value(ec) : -1;
	/* A container stopped by AgentGuard (or still running, or never started)
	 * has no exit status of its own. */
	if (still_running || never_started || p->end != AG_STREAM_ENDED)
		c->rec->exec.exit_status = -1;
	if (p->end == AG_STREAM_CANCELLED) {
		c->rec->exec.outcome = AG_RUN_OUTCOME_CANCELLED;
		ag_run_fail(c, AG_FAIL_CANCELLED,
			    AG_EXIT_SIGNAL_BASE + (int)(c->o->cancel ? *c->o->cancel : 2),
			    "run.cancelled",
			    "AgentGuard was asked to stop; the container was cleaned up");
	} else if (p->end == AG_STREAM_TIMED_OUT ||
		   (p->end == AG_STREAM_ENDED && !still_running &&
		    ag_run_init_deadline_held(c->rec->exec.exit_status, c->rec->exec.ms,
					      c->o->timeout_seconds))) {
		/* AgentGuard's timer, or (it was late) the init's deadline */
		c->rec->exec.timeout_enforced_by = ag_deadline_by_name(
		    p->end == AG_STREAM_TIMED_OUT ? AG_DEADLINE_AGENTGUARD : AG_DEADLINE_INIT);
		c->rec->exec.exit_status = -1;
		c->rec->exec.outcome = AG_RUN_OUTCOME_TIMED_OUT;
		ag_run_fail(c, AG_FAIL_TIMEOUT, 0, "run.timeout",
			    "the contained command timed out after %" PRId64 " seconds",
			    c->o->timeout_seconds);
	} else if (c->rec->exec.oom_killed) {
		c->rec->exec.outcome = AG_RUN_OUTCOME_OOM_KILLED;
		/*
		 * Docker says OOMKilled when any process of the container hit the
		 * limit; the agent may still have exited 0. A run the kernel cut
		 * short never records a success status.
		 */
		if (c->rec->exec.exit_status == 0)
			c->rec->exec.exit_status = -1;
	} else if ((derr && *derr) || never_started || p->end == AG_STREAM_NOT_STARTED ||
		   !json_is_integer(ec) ||
		   (p->end == AG_STREAM_ENDED &&
		    ag_run_init_exec_failed(c->rec->exec.exit_status, p->out.buf, p->out.len,
					    p->err.buf, p->err.len, &init_not_found))) {
		c->rec->exec.outcome = AG_RUN_OUTCOME_DOCKER_LAUNCH_FAILURE;
		/*
		 * The agent never ran: its exit status is unknown, unless Docker's
		 * own launcher status says why (125 Docker, 126 not executable,
		 * 127 not found).
		 */
		if (c->rec->exec.exit_status < 125 || c->rec->exec.exit_status > 127)
			c->rec->exec.exit_status = -1;
		/* runc's words for an argv[0] it could not exec (only a hint: no text is kept) */
		bool not_found =
		    init_not_found || (derr && strstr(derr, "exec: \"") &&
				       (strcasestr(derr, "executable file not found") ||
					strcasestr(derr, "no such file or directory")));
		ag_run_fail(c, AG_FAIL_DOCKER, 0, "run.launch_failed",
			    "Docker failed before or while launching the contained command%s",
			    not_found ? " (the argv's executable was not found in the image)" : "");
	} else if (p->end == AG_STREAM_DROPPED) {
		c->rec->exec.outcome = AG_RUN_OUTCOME_DOCKER_CLIENT_SIGNALED;
		ag_run_fail(c, AG_FAIL_DOCKER, 0, "run.attach_dropped",
			    "the output stream from the Docker daemon ended early");
	} else {
		c->rec->exec.outcome = AG_RUN_OUTCOME_EXITED;
	}
	c->rec->exec.agent_started =
	    !never_started && c->rec->exec.outcome != AG_RUN_OUTCOME_DOCKER_LAUNCH_FAILURE;
	json_decref(v);
	bool t1 = false, t2 = false;
	/*
	 * Output cut at the capture cap may end in the first part of a secret,
	 * which no longer matches it: drop that tail before redacting.
	 */
	size_t tail = 0;
	for (size_t i = 0; c->o->redact && i < c->o->redact->secrets.n; i++) {
		size_t l = strlen(c->o->redact->secrets.v[i]);
		if (l > tail)
			tail = l;
	}
	/*
	 * The artifact keeps at most AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES of each
	 * stream (max_output_bytes may allow far more in the capture): the
	 * artifact must always be writable within its bounds.
	 */
	size_t cap = (size_t)c->o->cfg->max_output_bytes;
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
	c->rec->exec.stdout_text =
	    ag_redact(c->o->redact, p->out.buf, olen, cap, AG_REDACT_KEEP_NEWLINES, &t1);
	c->rec->exec.stderr_text =
	    ag_redact(c->o->redact, p->err.buf, elen, cap, AG_REDACT_KEEP_NEWLINES, &t2);
	c->rec->exec.stdout_truncated = ocut || t1;
	c->rec->exec.stderr_truncated = ecut || t2;
	c->rec->exec.stdout_bytes = p->stdout_total;
	c->rec->exec.stderr_bytes = p->stderr_total;
	if (!c->rec->exec.agent_started) {
		/*
		 * Nothing of the agent ran: what the streams hold is the Docker
		 * client's own error text (container ids, daemon detail), never
		 * recorded raw. The failure message says what happened.
		 */
		c->rec->exec.stdout_text[0] = '\0';
		c->rec->exec.stderr_text[0] = '\0';
		c->rec->exec.stdout_truncated = c->rec->exec.stderr_truncated = false;
		c->rec->exec.stdout_bytes = c->rec->exec.stderr_bytes = 0;
	}
	return 0;
}

/* The network hooks (contained_run.h), each failure recorded like a stage's. */
enum net_step { NET_SETUP, NET_VERIFY, NET_FINISH };
static int net_hook(struct ag_run_ctx *c, enum net_step step);

int ag_stage_net_setup(struct ag_run_ctx *c)
{
	return net_hook(c, NET_SETUP);
}

int ag_stage_net_verify(struct ag_run_ctx *c)
{
	return net_hook(c, NET_VERIFY);
}

static int net_hook(struct ag_run_ctx *c, enum net_step step)
{
	const struct ag_run_net_hooks *h = c->o->net;
	if (!h || (step == NET_FINISH && !c->eng_ok))
		return 0;
	struct ag_error *e = NULL;
	_cleanup_free_ char *dir = ag_xasprintf("%s/%s", c->o->runs_root_abs, c->rec->run_id);
	int rc = step == NET_SETUP
		     ? h->setup(h->data, &c->eng, c->run_fd, dir, c->rec->ledger.suffix, &e)
		 : step == NET_VERIFY
		     ? h->verify(h->data, &c->eng, c->agent->id, &e)
		     : h->finish(h->data, c->run_fd,
				 c->rec->workspace.prepared ? c->rec->workspace.prep.digest : NULL,
				 &c->agent->cleanup, &e);
	if (rc < 0) {
		int code = step == NET_FINISH
			       ? (e->code == AG_E_CLEANUP ? AG_EXIT_CLEANUP : AG_EXIT_FAIL)
			   : e->code == AG_E_DOCKER ? AG_EXIT_DOCKER
						    : AG_EXIT_PREFLIGHT;
		ag_run_fail_err(c, step == NET_FINISH ? AG_FAIL_EGRESS : AG_FAIL_PREFLIGHT, code,
				e);
		c->rec->failure.net_cleanup_failed = step == NET_FINISH && code == AG_EXIT_CLEANUP;
		ag_error_free(e);
	}
	return rc;
}

int ag_stage_cleanup_container(struct ag_run_ctx *c)
{
	/* Without an engine nothing was created: every entry stays not_created. */
	if (!c->eng_ok)
		return 0;
	/*
	 * Every object of the run, newest created first, each by id, or (create
	 * answer lost) by the run's unique label: the agent, then what the
	 * network hooks entered (the study's gateway, stopped with SIGTERM
	 * first, then its networks). The hooks then judge what that showed.
	 */
	ag_ledger_teardown(&c->rec->ledger.objects, &c->eng);
	(void)net_hook(c, NET_FINISH);
	/* A container may exist even after a failed verdict (created beside the probe). */
	if (c->agent->attempted ||
	    (c->rec->preflight.ran && ag_preflight_passed(&c->rec->preflight.result)))
		residue(c, true);
	return 0;
}

/* Nothing of this run is alive: cleanup complete and no residue by label. */
static bool run_containers_gone(const struct ag_run_ctx *c)
{
	if (!ag_cleanup_state_complete(c->agent->cleanup.state))
		return false;
	if (!c->agent->attempted)
		return true;
	return c->rec->ledger.residue_after_ok && c->rec->ledger.residue_ours_after == 0;
}

/* Compares the source against the fixed baseline: did anything touch it? */
int ag_stage_source_integrity(struct ag_run_ctx *c)
{
	if (!c->rec->workspace.prepared)
		return 0;
	struct ag_ws_baseline b = {0};
	struct ag_ws_snapshot now = AG_WS_SNAPSHOT_INIT;
	struct ag_error *e = NULL;
	int wsfd = ag_ws_open_run(c->lifecycle_fd, AG_RUN_WORKSPACE_ID, &e);
	if (wsfd < 0 || ag_ws_baseline_load(wsfd, c->rec->workspace.prep.digest, &b, &e) < 0) {
		c->rec->source.reason = e ? e->reason : "run.source.baseline";
		goto out;
	}
	/* the same copy rules as the baseline's, so what stayed out stays out */
	if (c->o->observer)
		c->ws_opts.progress = ag_live_progress_source;
	if (ag_ws_source_snapshot(c->o->repo_fd, &c->ws_opts, &now, &e) < 0) {
		c->rec->source.reason = e->reason;
		goto out;
	}
	c->rec->source.checked = true;
	size_t i = 0, j = 0;
	while (i < b.snap.n || j < now.n) {
		const struct ag_ws_entry *x = i < b.snap.n ? &b.snap.v[i] : NULL;
		const struct ag_ws_entry *y = j < now.n ? &now.v[j] : NULL;
		int cmp = !x ? 1 : !y ? -1 : strcmp(x->path, y->path);
		const char *path = NULL;
		if (cmp < 0) {
			path = x->path;
			i++;
		} else if (cmp > 0) {
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
			c->rec->source.diff_total++;
			if (c->rec->source.diff.n < AG_RUN_SOURCE_DIFF_MAX)
				ag_strv_push_owned(&c->rec->source.diff, ag_ws_path_display(path));
		}
	}
	c->rec->source.unchanged = c->rec->source.diff_total == 0;
out:
	if (wsfd >= 0)
		close(wsfd);
	ag_error_free(e);
	ag_ws_baseline_release(&b);
	ag_ws_snapshot_release(&now);
	return 0;
}

int ag_stage_capture(struct ag_run_ctx *c)
{
	/* Capture only once nothing can write the workspace any more. */
	if (!c->rec->workspace.prepared || !run_containers_gone(c))
		return 0;
	struct ag_error *e = NULL;
	struct ag_ws_capture_opts co = {.expected_digest = c->rec->workspace.prep.digest,
					.skip_root_git =
					    c->rec->workspace.prep.git_baseline[0] != '\0'};
	if (c->o->observer) {
		co.progress = ag_live_progress_capture;
		co.progress_ctx = (void *)c->o->observer;
	}
	if (ag_ws_capture(c->lifecycle_fd, AG_RUN_WORKSPACE_ID, &co, &c->rec->mutations.mut, &e) <
	    0) {
		c->rec->workspace.capture_reason = e->reason;
		ag_run_fail_err(c, AG_FAIL_WORKSPACE, 0, e);
		ag_error_free(e);
		return 0;
	}
	c->rec->mutations.ok = true;
	return 0;
}

/* The workspace beneath its run directory, no link followed; -1 if gone. */
static int open_workspace(struct ag_run_ctx *c)
{
	struct ag_error *e = NULL;
	int wsfd = -1, rundir = ag_ws_open_run(c->lifecycle_fd, AG_RUN_WORKSPACE_ID, &e);
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
int ag_stage_checks(struct ag_run_ctx *c)
{
	struct ag_error *e = NULL;
	int wsfd = c->rec->mutations.ok ? open_workspace(c) : -1;
	const char *end = NULL;
	if (c->rec->exec.outcome == AG_RUN_OUTCOME_OOM_KILLED)
		end = "was killed by the out-of-memory killer (memory limit)";
	else if (c->rec->exec.outcome == AG_RUN_OUTCOME_TIMED_OUT)
		end = "timed out";
	else if (c->rec->exec.outcome == AG_RUN_OUTCOME_CANCELLED)
		end = "was cancelled";
	else if (c->rec->exec.outcome != AG_RUN_OUTCOME_NONE &&
		 c->rec->exec.outcome != AG_RUN_OUTCOME_EXITED)
		end = "ended without an exit status of its own";
	struct ag_check_input in = {
	    .cfg = c->o->cfg,
	    .mut = c->rec->mutations.ok ? &c->rec->mutations.mut : NULL,
	    /* the agent ran only when its container's process started */
	    .command_ran = c->rec->exec.agent_started,
	    /* only a normal exit can pass tests-passed */
	    .command_exit = c->rec->exec.exit_status,
	    .command_end = end,
	    .command_label = "contained-run",
	    .argv = c->o->argv,
	    .argc = c->o->argc,
	    .policy_blocked = c->rec->policy.blocked,
	    .workspace_fd = wsfd,
	    .env = c->o->env, /* configured secrets: the secret scan looks for them */
	};
	if (ag_checks_evaluate(&in, &c->rec->checks.checks, &e) == 0)
		c->rec->checks.ok = true;
	else
		ag_run_fail_err(c, AG_FAIL_EVIDENCE, 0, e);
	ag_error_free(e);
	if (wsfd >= 0)
		close(wsfd);
	return 0;
}

/*
 * changes.patch: after the capture and the proof that the source is
 * unchanged (the old side is read from it), before the workspace (the new
 * side) is deleted. Not a failure of the run when it cannot be made: the
 * artifact says why. Never written when the secret scan failed (the patch
 * would carry what it found) or when it holds a configured secret value.
 */
int ag_stage_patch(struct ag_run_ctx *c)
{
	struct ag_run_patch *p = &c->rec->patch;
	c->rec->patch.recorded = c->rec->mutations.ok;
	if (!c->rec->mutations.ok)
		return 0;
	p->status = AG_RUN_PATCH_NONE;
	if (c->rec->mutations.mut.n == 0)
		return 0;
	p->status = AG_RUN_PATCH_OMITTED;
	if (!c->rec->source.checked || !c->rec->source.unchanged) {
		p->reason = "patch.source_changed";
		return 0;
	}
	/* The patch carries file content: never one the secret scan flagged. */
	const struct ag_check_result *ss =
	    c->rec->checks.ok ? &c->rec->checks.checks.v[AG_CK_SECRET_SCAN] : NULL;
	if (ss && ss->evaluated && !ss->passed) {
		p->reason = "patch.secret_scan";
		return 0;
	}
	int wsfd = open_workspace(c);
	if (wsfd < 0) {
		p->reason = "patch.workspace";
		return 0;
	}
	struct ag_buf b = AG_BUF_INIT(AG_PATCH_MAX_BYTES, "limit.patch.size");
	struct ag_patch_stats st;
	struct ag_error *e = NULL;
	if (ag_patch_build(c->o->repo_fd, wsfd, &c->rec->mutations.mut, &b, &st, &e) < 0) {
		p->reason = e ? e->reason : "patch.failed";
	} else if (b.len == 0) {
		p->status = AG_RUN_PATCH_NONE; /* only changes a git patch does not carry */
	} else if (ag_redact_contains_secret(c->o->redact, b.buf, b.len)) {
		p->reason = "patch.secret"; /* a configured secret value in the agent's files */
	} else if (ag_write_file_atomic_at(c->run_fd, AG_RUN_PATCH_FILE, AG_RUN_PATCH_FILE, b.buf,
					   b.len, 0644, true, &e) < 0) {
		p->reason = "patch.write";
	} else {
		p->status = AG_RUN_PATCH_WRITTEN;
		ag_sha256_hex(b.buf, b.len, p->sha256);
		p->bytes = b.len;
	}
	p->files = st.files;
	p->binary = st.binary;
	p->dirs_skipped = st.dirs_skipped;
	ag_error_free(e);
	ag_buf_release(&b);
	close(wsfd);
	return 0;
}

int ag_stage_workspace_cleanup(struct ag_run_ctx *c)
{
	if (!c->rec->workspace.prepared) {
		c->rec->workspace.status = AG_RUN_WS_NOT_PREPARED;
		/* A staging tree is rolled back by prepare itself. */
		if (c->lifecycle_fd >= 0)
			(void)unlinkat(c->run_fd, AG_RUN_LIFECYCLE_DIR, AT_REMOVEDIR);
		return 0;
	}
	if (!run_containers_gone(c)) {
		/* CONTRACT: cleanup.workspace_after_absence */
		c->rec->workspace.status = AG_RUN_WS_RETAINED;
		return 0;
	}
	struct ag_ws_cleanup_report rep;
	struct ag_error *e = NULL;
	if (ag_ws_cleanup(c->lifecycle_fd, AG_RUN_WORKSPACE_ID, &rep, &e) < 0) {
		c->rec->workspace.status = AG_RUN_WS_INCOMPLETE;
		ag_error_free(e);
		return 0;
	}
	c->rec->workspace.status = AG_RUN_WS_REMOVED;
	if (unlinkat(c->run_fd, AG_RUN_LIFECYCLE_DIR, AT_REMOVEDIR) < 0)
		c->rec->workspace.status = AG_RUN_WS_INCOMPLETE;
	return 0;
}
