#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/fsx.h"
#include "lib/base/error.h"
#include "lib/batch/batch.h"

#include <signal.h>

static const char help[] =
    "Usage: agentguard batch FILE --out DIR [--jobs N] [--shard K/N] [--plan]\n"
    "         [--json] [--quiet] [--docker-socket PATH] [--signing-key FILE]\n"
    "         [--public-key FILE]...\n"
    "       agentguard batch merge DIR... --out DIR [--json] [--public-key FILE]...\n"
    "\n"
    "Run the trials a batch file lists (docs/batch.md), each an ordinary\n"
    "contained run or study-egress run with its own evidence under\n"
    "DIR/trials/<trial>/, at a concurrency planned before the first starts.\n"
    "\n"
    "  FILE               the batch file (YAML or JSON): version: 1 and trials,\n"
    "                     each with name, config, argv and optionally mode\n"
    "                     (contained|study), repetitions, repo, timeout, policy,\n"
    "                     gateway_image; paths are relative to FILE\n"
    "  --out DIR          where the trials' evidence and the summary go\n"
    "                     (created 0700; one batch at a time in it)\n"
    "  --jobs N           trials at once, 1..64 (default: one per core). The plan\n"
    "                     may cut it: at most 4 per core, the trials' memory limits\n"
    "                     within 80% of the memory available now, and no more study\n"
    "                     trials than their subnet pool has free pairs; a batch\n"
    "                     whose one trial cannot fit is refused (exit 3)\n"
    "  --shard K/N        run only the trials whose position i (from 0, in file\n"
    "                     order, repetitions expanded) has i mod N = K-1\n"
    "  --plan             print the plan and exit; nothing runs\n"
    "  --json             print the summary (or the plan) as JSON on stdout\n"
    "  -q, --quiet        no line per finished trial on stderr\n"
    "  --docker-socket, --signing-key\n"
    "                     passed to every trial (see contained-run --help)\n"
    "  --public-key FILE  a key whose evidence counts as verified (the local\n"
    "                     signing key, and --signing-key, always do)\n"
    "\n"
    "Running it again with the same FILE and DIR resumes: a trial with a run\n"
    "of its entry as it is now (argv, config bytes, repo, ...) that verifies\n"
    "and was not cancelled is not run again. SIGINT, SIGTERM, SIGHUP, SIGQUIT\n"
    "or SIGPIPE starts no new trial and cancels the running ones (each removes\n"
    "its containers and writes a cancelled artifact); the summary is written\n"
    "either way: DIR/batch-summary.json, .txt, .md and .html, with the pass\n"
    "rate, exit outcomes, durations, egress denials and where each trial's\n"
    "evidence is. Every claim about a trial is read from its verified evidence.\n"
    "\n"
    "merge verifies every trial's evidence in the shard directories (shards\n"
    "1..N of one batch file, each once) and writes their combined summary to\n"
    "--out; a trial whose evidence does not verify refuses the merge.\n"
    "\n"
    "Exit codes: 0 every trial passed, 1 a trial did not pass or was not run\n"
    "(merge: refused), 2 usage or batch file, 3 refused by the plan or another\n"
    "batch running in DIR, 6 Docker, 128+N cancelled by signal N.\n";

static volatile sig_atomic_t cancel_signal;

static void on_signal(int sig)
{
	if (!cancel_signal)
		cancel_signal = sig;
}

static int exit_for(const struct ag_error *e)
{
	switch (e ? e->code : AG_E_INTERNAL) {
	case AG_E_USAGE:
	case AG_E_CONFIG:
		return AG_EXIT_CONFIG;
	case AG_E_UNVERIFIED:
		return AG_EXIT_PREFLIGHT;
	case AG_E_DOCKER:
		return AG_EXIT_DOCKER;
	default:
		return AG_EXIT_FAIL;
	}
}

static int fail(struct ag_error *e, int code)
{
	ag_cli_json_error(ag_cli_json_kind(e), e->reason, e->msg, e);
	ag_cli_print_error(e);
	ag_error_free(e);
	return code;
}

struct args {
	const char *file, *out, *shard, *socket, *signing_key;
	const char *pubs[AG_VERIFY_PUBLIC_KEYS_MAX];
	size_t npubs;
	const char *dirs[64];
	size_t ndirs;
	unsigned jobs;
	bool plan_only, as_json, quiet;
};

/* --opt VALUE or --opt=VALUE: 1 taken, 0 not this option, -1 usage error. */
static int value(int argc, char **argv, int *i, const char *opt, const char **out)
{
	size_t l = strlen(opt);
	const char *a = argv[*i];
	if (strcmp(a, opt) == 0) {
		if (*i + 1 >= argc) {
			ag_cli_usage("batch", "%s needs a value", opt);
			return -1;
		}
		*out = argv[++*i];
	} else if (strncmp(a, opt, l) == 0 && a[l] == '=') {
		*out = a + l + 1;
	} else {
		return 0;
	}
	return 1;
}

static int parse(int argc, char **argv, bool merge, struct args *a)
{
	for (int i = merge ? 2 : 1; i < argc; i++) {
		const char *s = argv[i];
		const char *jobs = NULL;
		int pk = ag_cli_public_key_arg("batch", argc, argv, &i, a->pubs, &a->npubs);
		if (pk < 0)
			return AG_EXIT_CONFIG;
		if (pk > 0)
			continue;
		int v = value(argc, argv, &i, "--out", &a->out);
		if (!merge && !v)
			v = value(argc, argv, &i, "--shard", &a->shard);
		if (!merge && !v)
			v = value(argc, argv, &i, "--docker-socket", &a->socket);
		if (!merge && !v)
			v = value(argc, argv, &i, "--signing-key", &a->signing_key);
		if (!merge && !v && (v = value(argc, argv, &i, "--jobs", &jobs)) > 0) {
			int64_t n;
			if (ag_parse_i64(jobs, &n) < 0 || n < 1 || n > AG_BATCH_JOBS_MAX)
				return ag_cli_usage("batch", "--jobs must be 1..%d",
						    AG_BATCH_JOBS_MAX);
			a->jobs = (unsigned)n;
		}
		if (v < 0)
			return AG_EXIT_CONFIG;
		if (v > 0)
			continue;
		if (!strcmp(s, "--json")) {
			a->as_json = true;
		} else if (!merge && (!strcmp(s, "--quiet") || !strcmp(s, "-q"))) {
			a->quiet = true;
		} else if (!merge && !strcmp(s, "--plan")) {
			a->plan_only = true;
		} else if (s[0] == '-' && s[1]) {
			return ag_cli_usage("batch", "unknown option '%s'", s);
		} else if (merge) {
			if (a->ndirs >= AG_ARRAY_SIZE(a->dirs))
				return ag_cli_usage("batch", "at most %zu shard directories",
						    AG_ARRAY_SIZE(a->dirs));
			a->dirs[a->ndirs++] = s;
		} else if (!a->file) {
			a->file = s;
		} else {
			return ag_cli_usage("batch", "one batch FILE only");
		}
	}
	if (merge && !a->ndirs)
		return ag_cli_usage("batch", "merge needs the shard directories");
	if (!merge && !a->file)
		return ag_cli_usage("batch", "FILE is required");
	if (!a->out && !(a->plan_only && !merge))
		return ag_cli_usage("batch", "--out DIR is required");
	return AG_EXIT_PASS;
}

static int print_summary(const json_t *s, bool as_json)
{
	if (as_json)
		return ag_cli_json_print(json_deep_copy(s), "agentguard.batch-summary");
	struct ag_buf b = AG_BUF_INIT(AG_BATCH_RENDER_MAX, "limit.batch.render");
	struct ag_error *e = NULL;
	int rc = ag_batch_render(s, "text", &b, &e);
	if (rc == 0)
		fputs(b.buf, stdout);
	else
		ag_error_free(e);
	ag_buf_release(&b);
	return rc;
}

struct progress {
	bool quiet;
};

static void on_trial(const json_t *rec, size_t done, size_t total, void *data)
{
	const struct progress *p = data;
	if (p->quiet)
		return;
	const char *res = json_string_value(json_object_get(rec, "exit_name"));
	const json_t *d = json_object_get(rec, "duration_seconds");
	bool ver = json_is_true(json_object_get(json_object_get(rec, "evidence"), "verified"));
	fprintf(stderr, "batch: [%zu/%zu] ", done, total);
	ag_cli_put_sanitized(stderr, json_string_value(json_object_get(rec, "id")));
	fprintf(stderr, " %s%s", res ? res : "?",
		json_is_true(json_object_get(rec, "resumed")) ? " (resumed)" : "");
	if (json_is_number(d))
		fprintf(stderr, " %.1f s", json_number_value(d));
	fprintf(stderr, ", evidence %s\n", ver ? "verified" : "none");
}

/* The trusted keys: --public-key, the local key, and --signing-key's own. */
static int trust_with(struct ag_cli_trust *t, const struct args *a, struct ag_sign_key **sk,
		      const struct ag_sign_key **keys, struct ag_trust *out)
{
	int rc = ag_cli_trust_load(t, a->pubs, a->npubs);
	if (rc != AG_EXIT_PASS)
		return rc;
	size_t n = 0;
	for (size_t i = 0; i < t->trust.n; i++)
		keys[n++] = t->trust.keys[i];
	if (sk && *sk)
		keys[n++] = *sk;
	out->keys = keys;
	out->n = n;
	return AG_EXIT_PASS;
}

static int cmd_merge(int argc, char **argv)
{
	struct args a = {0};
	int rc = parse(argc, argv, true, &a);
	if (rc != AG_EXIT_PASS)
		return rc;
	struct ag_cli_trust t;
	const struct ag_sign_key *keys[AG_VERIFY_PUBLIC_KEYS_MAX + 2];
	struct ag_trust trust;
	if ((rc = trust_with(&t, &a, NULL, keys, &trust)) != AG_EXIT_PASS)
		return rc;
	json_t *s = NULL;
	struct ag_error *e = NULL;
	if (ag_batch_merge(a.dirs, a.ndirs, &trust, &s, &e) < 0) {
		ag_cli_trust_release(&t);
		return fail(e, e->code == AG_E_UNVERIFIED ? AG_EXIT_FAIL : exit_for(e));
	}
	ag_cli_trust_release(&t);
	int ofd = ag_open_or_make_dirs(a.out, 0700);
	if (ofd < 0 || ag_batch_write_summary(ofd, s, &e) < 0) {
		if (ofd >= 0)
			close(ofd);
		json_decref(s);
		if (!e)
			ag_err(&e, AG_E_IO, errno, "batch.out.open",
			       "the --out directory cannot be created or opened");
		return fail(e, AG_EXIT_FAIL);
	}
	close(ofd);
	print_summary(s, a.as_json);
	bool ok = json_is_true(json_object_get(s, "complete")) &&
		  json_integer_value(json_object_get(s, "failed")) == 0;
	json_decref(s);
	return ok ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

int ag_cmd_batch(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return cmd_merge(argc, argv);
	struct args a = {0};
	int rc = parse(argc, argv, false, &a);
	if (rc != AG_EXIT_PASS)
		return rc;
	unsigned sk = 0, sn = 0;
	struct ag_error *e = NULL;
	if (a.shard && ag_batch_shard_parse(a.shard, &sk, &sn, &e) < 0)
		return fail(e, AG_EXIT_CONFIG);
	struct ag_batch *b = NULL;
	if (ag_batch_load(a.file, &b, &e) < 0 || ag_batch_load_configs(b, &e) < 0) {
		ag_batch_free(b);
		return fail(e, AG_EXIT_CONFIG);
	}
	struct ag_batch_facts f;
	struct ag_batch_plan plan;
	if (ag_batch_facts_read(b, a.socket, &f, &e) < 0 ||
	    ag_batch_plan_make(b, &f, a.jobs, sk, sn, &plan, &e) < 0) {
		ag_batch_facts_release(&f);
		ag_batch_free(b);
		return fail(e, exit_for(e));
	}
	json_t *pj = ag_batch_plan_json(&plan, &f);
	char *line = ag_batch_plan_text(&plan, &f);
	ag_batch_facts_release(&f);
	if (a.plan_only) {
		if (a.as_json)
			ag_cli_json_print(pj, "agentguard.batch-plan");
		else {
			printf("batch: %s\n", line);
			json_decref(pj);
		}
		free(line);
		ag_batch_free(b);
		return AG_EXIT_PASS;
	}
	if (!a.quiet)
		fprintf(stderr, "batch: %s\n", line);
	free(line);
	/* the signing key exists before the trials start, so none of them races
	 * to create it */
	struct ag_sign_key *key = NULL;
	if ((rc = ag_cli_signing_key(a.signing_key, &key, NULL)) != AG_EXIT_PASS) {
		json_decref(pj);
		ag_batch_free(b);
		return rc;
	}
	struct ag_cli_trust t;
	const struct ag_sign_key *keys[AG_VERIFY_PUBLIC_KEYS_MAX + 2];
	struct ag_trust trust;
	if ((rc = trust_with(&t, &a, &key, keys, &trust)) != AG_EXIT_PASS) {
		ag_sign_key_free(key);
		json_decref(pj);
		ag_batch_free(b);
		return rc;
	}
	_cleanup_free_ char *self = ag_cli_self_path();
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < AG_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	extern char **environ;
	struct progress pr = {a.quiet};
	struct ag_batch_run_opts o = {
	    .out_dir = a.out,
	    .shard_k = sk,
	    .shard_n = sn,
	    .plan = &plan,
	    .plan_json = pj,
	    .self_exe = self,
	    .docker_socket = a.socket,
	    .signing_key = a.signing_key,
	    .envp = (const char *const *)environ,
	    .trust = &trust,
	    .cancel = &cancel_signal,
	    .on_trial = on_trial,
	    .data = &pr,
	};
	json_t *s = NULL;
	int r = self ? ag_batch_run(b, &o, &s, &e)
		     : ag_err(&e, AG_E_IO, errno, "batch.self",
			      "AgentGuard cannot find its own executable (/proc/self/exe)");
	/* the batch is over: a closed pipe while printing its summary does
	 * not make it a cancelled one */
	int cancelled_by = cancel_signal;
	signal(SIGPIPE, SIG_IGN);
	json_decref(pj);
	ag_cli_trust_release(&t);
	ag_sign_key_free(key);
	ag_batch_free(b);
	if (r < 0)
		return fail(e, exit_for(e));
	print_summary(s, a.as_json);
	bool ok = json_is_true(json_object_get(s, "complete")) &&
		  json_integer_value(json_object_get(s, "failed")) == 0;
	json_decref(s);
	if (r == 1 || cancelled_by)
		return AG_EXIT_SIGNAL_BASE + (cancelled_by ? cancelled_by : SIGINT);
	return ok ? AG_EXIT_PASS : AG_EXIT_FAIL;
}
