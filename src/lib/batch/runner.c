/*
 * runner.c: one shard of a batch, run.
 *
 * Each trial is an ordinary `agentguard contained-run` (or `study-egress
 * run`) child with OUT/trials/<id> as its runs root, so it has the same
 * preflight, cleanup, evidence and signal handling as a run started by
 * hand, and its own evidence chain. Workers (threads, `plan->jobs` of
 * them) each supervise one child at a time through ag_proc_run: bounded
 * output, its own process group. Study trials hold a subnet pair: no more
 * than plan->by_pool of them run at once.
 *
 * Resume: before anything starts, each trial's runs root is read (at most
 * AG_BATCH_ATTEMPTS_MAX run directories, newest first); the newest run
 * that verifies and was not cancelled is its result and it is not run
 * again. Attempts are never deleted.
 *
 * Cancel: once *cancel is set no trial starts; running children get
 * SIGTERM (they remove their containers and networks and write a
 * cancelled artifact) and AG_BATCH_CANCEL_GRACE_MS before SIGKILL.
 */
#include "lib/batch/batch.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/json.h"
#include "lib/base/proc.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/file.h>

struct runner {
	const struct ag_batch *b;
	const struct ag_batch_run_opts *o;
	int trials_fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t *todo, n_todo, next;
	json_t *records;
	size_t done, total;
	unsigned study_running, study_max;
};

static bool cancelled(void *data)
{
	const struct runner *r = data;
	return r->o->cancel && *r->o->cancel;
}

static int name_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* A run's binding: OUT/trials/<id>/.batch-run-<run-id> holds the digest of
 * the entry it ran (written when the run ends). Resume counts a run only
 * when its binding is the entry's digest now: a changed batch file (argv,
 * config bytes, repo, ...) runs the trial again. */
#define BINDING_PREFIX ".batch-run-"

static bool bound_to(int trial_fd, const char *run_id, const char *digest)
{
	static const struct ag_read_reasons why = {"batch.binding", "batch.binding",
						   "batch.binding", "batch.binding"};
	_cleanup_free_ char *name = ag_xasprintf(BINDING_PREFIX "%s", run_id);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	if (ag_read_file_at(trial_fd, name, name, AG_BATCH_BINDING_MAX_BYTES, &why, &data, &len,
			    &e) < 0) {
		ag_error_free(e);
		return false;
	}
	return len == strlen(digest) + 1 && memcmp(data, digest, len - 1) == 0 &&
	       data[len - 1] == '\n';
}

static void bind_run(int trials_fd, const char *id, const char *run_id, const char *digest)
{
	int fd = openat(trials_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_free_ char *name = ag_xasprintf(BINDING_PREFIX "%s", run_id);
	_cleanup_free_ char *text = ag_xasprintf("%s\n", digest);
	struct ag_error *e = NULL;
	if (ag_write_file_atomic_at(fd, name, name, text, strlen(text), 0600, false, &e) < 0)
		ag_error_free(e); /* unbound: resume runs the trial again */
	close(fd);
}

/* The trial's final record from an earlier run of the same entry, or NULL. */
static json_t *resumed(struct runner *r, const struct ag_batch_trial *t, struct ag_error **err)
{
	int fd = openat(r->trials_fd, t->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	char *names[AG_BATCH_ATTEMPTS_MAX];
	size_t n = 0;
	struct dirent *de;
	bool over = false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    !ag_batch_name_ok(de->d_name, 255))
			continue;
		if (n >= AG_BATCH_ATTEMPTS_MAX) {
			over = true;
			break;
		}
		names[n++] = ag_xstrdup(de->d_name);
	}
	json_t *rec = NULL;
	const char *digest = r->b->entries[t->entry].digest;
	if (over) {
		ag_err(err, AG_E_LIMIT, 0, "limit.batch.attempts",
		       "trial '%s' has more than %d runs in its directory; move old ones away",
		       t->id, AG_BATCH_ATTEMPTS_MAX);
	} else {
		qsort(names, n, sizeof(*names), name_desc);
		json_t *base = ag_batch_trial_base(r->b, t);
		for (size_t i = 0; i < n && !rec; i++) {
			if (!bound_to(dirfd(d), names[i], digest))
				continue;
			struct ag_batch_outcome out = {.exit_code = -1, .resumed = true};
			json_t *x =
			    ag_batch_trial_record(base, r->trials_fd, names[i], r->o->trust, &out);
			if (ag_batch_record_final(x))
				rec = x;
			else
				json_decref(x);
		}
		json_decref(base);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return rec;
}

struct argv_b {
	const char *v[AG_BATCH_ARGV_MAX + 40];
	size_t n;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->n + 1 < AG_ARRAY_SIZE(a->v))
		a->v[a->n++] = s;
}

static void add2(struct argv_b *a, const char *opt, const char *val)
{
	if (val) {
		add(a, opt);
		add(a, val);
	}
}

/* The child's run id and error reason from its --json document. */
static void child_doc(const struct ag_proc_result *res, char **run_id, char **reason)
{
	json_error_t je;
	json_t *j = res->stdout_truncated
			? NULL
			: json_loadb(res->out.buf, res->out.len, JSON_REJECT_DUPLICATES, &je);
	const char *id = ag_json_path_str(j, "run_id");
	const char *why = ag_json_path_str(j, "error.reason");
	*run_id = id && ag_batch_name_ok(id, 255) ? ag_xstrdup(id) : NULL;
	*reason = why && ag_batch_name_ok(why, AG_BATCH_REASON_MAX) ? ag_xstrdup(why) : NULL;
	json_decref(j);
}

static json_t *run_trial(struct runner *r, const struct ag_batch_trial *t)
{
	const struct ag_batch_entry *e = &r->b->entries[t->entry];
	const struct ag_batch_run_opts *o = r->o;
	json_t *base = ag_batch_trial_base(r->b, t);
	struct ag_batch_outcome out = {.exit_code = -1};
	if (mkdirat(r->trials_fd, t->id, 0700) < 0 && errno != EEXIST) {
		out.reason = "batch.trial_dir";
		json_t *rec = ag_batch_trial_record(base, r->trials_fd, NULL, o->trust, &out);
		json_decref(base);
		return rec;
	}
	_cleanup_free_ char *root =
	    ag_xasprintf("%s/%s/%s", o->out_dir, AG_BATCH_TRIALS_DIR, t->id);
	char timeout[24];
	snprintf(timeout, sizeof(timeout), "%" PRId64, e->timeout);
	struct argv_b a = {.n = 0};
	add(&a, "agentguard");
	if (e->mode == AG_BATCH_STUDY) {
		add(&a, "study-egress");
		add(&a, "run");
	} else {
		add(&a, "contained-run");
	}
	add(&a, e->config);
	add2(&a, "--runs-root", root);
	add(&a, "--json");
	add(&a, "--quiet");
	add2(&a, "--repo", e->repo);
	add2(&a, "--timeout", e->timeout ? timeout : NULL);
	add2(&a, "--docker-socket", o->docker_socket);
	add2(&a, "--signing-key", o->signing_key);
	if (e->mode == AG_BATCH_STUDY) {
		add2(&a, "--trial-id", t->id);
		add2(&a, "--policy", e->policy);
		add2(&a, "--gateway-image", e->gateway_image);
	}
	add(&a, "--");
	for (size_t i = 0; i < e->argc; i++)
		add(&a, e->argv[i]);
	a.v[a.n] = NULL;
	struct ag_proc_spec spec = {
	    .exe = o->self_exe,
	    .argv = a.v,
	    .envp = o->envp,
	    .stdout_max = AG_BATCH_CHILD_STDOUT_MAX,
	    .stderr_max = AG_BATCH_CHILD_STDERR_MAX,
	    .cap_policy = AG_PROC_CAP_TRUNCATE,
	    .kill_grace_ms = AG_BATCH_CANCEL_GRACE_MS,
	    .should_cancel = cancelled,
	    .should_cancel_data = r,
	};
	struct ag_proc_result res;
	ag_proc_result_init(&res);
	struct ag_error *err = NULL;
	_cleanup_free_ char *run_id = NULL, *reason = NULL;
	if (ag_proc_run(&spec, &res, &err) < 0) {
		out.reason = "batch.spawn";
		ag_error_free(err);
	} else if (res.status == AG_PROC_EXITED) {
		out.exit_code = res.exit_code;
	} else if (res.status == AG_PROC_SIGNALED) {
		out.exit_code = AG_EXIT_SIGNAL_BASE + res.term_signal;
	} else {
		out.reason = "batch.spawn";
	}
	if (res.status == AG_PROC_EXITED || res.status == AG_PROC_SIGNALED) {
		child_doc(&res, &run_id, &reason);
		out.reason = reason;
		if (run_id)
			bind_run(r->trials_fd, t->id, run_id, e->digest);
	}
	out.wall_ms = res.duration_ms;
	ag_proc_result_release(&res);
	json_t *rec = ag_batch_trial_record(base, r->trials_fd, run_id, o->trust, &out);
	json_decref(base);
	return rec;
}

static json_t *not_run(struct runner *r, const struct ag_batch_trial *t)
{
	json_t *base = ag_batch_trial_base(r->b, t);
	struct ag_batch_outcome out = {.exit_code = -1, .reason = "batch.cancelled"};
	json_t *rec = ag_batch_trial_record(base, r->trials_fd, NULL, r->o->trust, &out);
	json_decref(base);
	return rec;
}

static void finish(struct runner *r, json_t *rec)
{
	json_array_append_new(r->records, rec);
	r->done++;
	if (r->o->on_trial)
		r->o->on_trial(rec, r->done, r->total, r->o->data);
}

static void *worker(void *data)
{
	struct runner *r = data;
	pthread_mutex_lock(&r->mu);
	while (r->next < r->n_todo) {
		if (cancelled(r)) {
			const struct ag_batch_trial *t = &r->b->trials[r->todo[r->next++]];
			finish(r, not_run(r, t));
			continue;
		}
		/* the first trial that can start now: a study trial waits for a
		 * free subnet pair, a contained trial behind it does not */
		size_t pick = r->n_todo;
		for (size_t j = r->next; j < r->n_todo && pick == r->n_todo; j++) {
			bool st =
			    r->b->entries[r->b->trials[r->todo[j]].entry].mode == AG_BATCH_STUDY;
			if (!st || !r->study_max || r->study_running < r->study_max)
				pick = j;
		}
		if (pick == r->n_todo) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&r->cv, &r->mu, &ts);
			continue;
		}
		size_t tmp = r->todo[pick];
		r->todo[pick] = r->todo[r->next];
		r->todo[r->next] = tmp;
		const struct ag_batch_trial *t = &r->b->trials[r->todo[r->next]];
		bool study = r->b->entries[t->entry].mode == AG_BATCH_STUDY;
		r->next++;
		if (study)
			r->study_running++;
		pthread_mutex_unlock(&r->mu);
		json_t *rec = run_trial(r, t);
		pthread_mutex_lock(&r->mu);
		if (study)
			r->study_running--;
		finish(r, rec);
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* OUT/batch.lock, held (flock) for the whole run. */
static int lock_out(int out_fd, struct ag_error **err)
{
	int fd = openat(out_fd, "batch.lock",
			O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return ag_err(
		    err, AG_E_IO, e, "batch.out.lock",
		    "the output directory's batch.lock cannot be opened as a regular file");
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return ag_err(err, AG_E_UNVERIFIED, 0, "batch.out.busy",
			      "another batch is running in this output directory");
	}
	return fd;
}

int ag_batch_run(const struct ag_batch *b, const struct ag_batch_run_opts *o, json_t **summary_out,
		 struct ag_error **err)
{
	_cleanup_close_ int out_fd = ag_open_or_make_dirs(o->out_dir, 0700);
	if (out_fd < 0)
		return ag_err(err, AG_E_IO, errno, "batch.out.open",
			      "the output directory cannot be created or opened (a link is "
			      "never followed)");
	_cleanup_close_ int lock_fd = lock_out(out_fd, err);
	if (lock_fd < 0)
		return -1;
	if (mkdirat(out_fd, AG_BATCH_TRIALS_DIR, 0700) < 0 && errno != EEXIST)
		return ag_err(err, AG_E_IO, errno, "batch.out.open",
			      "the output directory's trials/ cannot be created");
	_cleanup_close_ int trials_fd =
	    openat(out_fd, AG_BATCH_TRIALS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (trials_fd < 0)
		return ag_err(err, AG_E_IO, errno, "batch.out.open",
			      "the output directory's trials/ is not a directory");
	struct runner r = {.b = b, .o = o, .trials_fd = trials_fd, .records = json_array()};
	r.study_max = o->plan->by_pool;
	r.todo = ag_xcalloc(b->n_trials + 1, sizeof(*r.todo));
	int rc = 0;
	for (size_t i = 0; i < b->n_trials; i++) {
		if (!ag_batch_in_shard(i, o->shard_k, o->shard_n))
			continue;
		r.total++;
		json_t *rec = resumed(&r, &b->trials[i], err);
		if (*err) {
			json_decref(rec);
			rc = -1;
			break;
		}
		if (rec)
			finish(&r, rec);
		else
			r.todo[r.n_todo++] = i;
	}
	if (rc == 0 && r.n_todo) {
		pthread_mutex_init(&r.mu, NULL);
		pthread_cond_init(&r.cv, NULL);
		unsigned jobs = o->plan->jobs ? o->plan->jobs : 1;
		pthread_t th[AG_BATCH_JOBS_MAX];
		unsigned started = 0;
		for (unsigned i = 0; i < jobs && i < AG_BATCH_JOBS_MAX; i++)
			if (pthread_create(&th[started], NULL, worker, &r) == 0)
				started++;
		if (!started)
			worker(&r); /* no thread could start: run them one at a time here */
		for (unsigned i = 0; i < started; i++)
			pthread_join(th[i], NULL);
		pthread_cond_destroy(&r.cv);
		pthread_mutex_destroy(&r.mu);
	}
	free(r.todo);
	if (rc < 0) {
		json_decref(r.records);
		return -1;
	}
	json_t *s = ag_batch_summary(b, r.records, o->shard_k, o->shard_n,
				     o->plan_json ? json_deep_copy(o->plan_json) : NULL);
	if (ag_batch_write_summary(out_fd, s, err) < 0) {
		json_decref(s);
		return -1;
	}
	*summary_out = s;
	return cancelled(&r) ? 1 : 0;
}
