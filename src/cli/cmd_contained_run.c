#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "cli/live_out.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/redact.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/run/contained_run.h"
#include "lib/run/live.h"

#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <signal.h>
#include <sys/stat.h>

static const char help[] =
    "Usage: agentguard contained-run CONFIG [--repo DIR] [--runs-root DIR]\n"
    "         [--timeout SECONDS] [--allow-fail-result] [--json] [--quiet]\n"
    "         [--docker-socket PATH] [--signing-key FILE] -- ARGV...\n"
    "\n"
    "Run one explicit argv (the agent, or a command it would run) inside a\n"
    "Docker container whose security properties are verified before launch,\n"
    "against a lifecycle-owned copy of the repository, and write evidence of\n"
    "what happened.\n"
    "\n"
    "  CONFIG               Path to the AgentGuard config file (agentguard.yaml)\n"
    "                       with a contained_execution v1 block.\n"
    "  --                   Required. Every token after it is the agent argv,\n"
    "                       kept exactly (--help, -h, '--', shell characters...).\n"
    "  --repo DIR           Repository to copy into the workspace (default: the\n"
    "                       config's repo_template, relative to the config file,\n"
    "                       else the current directory). It is never mounted.\n"
    "  --runs-root DIR      Where <run-id>/contained-run.json is written (default\n"
    "                       .agentguard/contained-runs). Inside the repository it\n"
    "                       must be under the repository's top-level .agentguard/.\n"
    "  --timeout SECONDS    Agent timeout, 1..86400 (default: the config's\n"
    "                       command_timeout_seconds).\n"
    "  --allow-fail-result  Exit 0 when the agent or a check failed (exit 1); never\n"
    "                       hides exit codes 2-8.\n"
    "  --json               Print a JSON summary instead of text (stdout holds only\n"
    "                       that document; the agent's output goes to stderr).\n"
    "  -q, --quiet          Do not show the agent's output or any progress.\n"
    "  --docker-socket PATH The Docker Engine socket (absolute; root-owned, in a\n"
    "                       root-owned directory chain; the daemon must run as\n"
    "                       root). Default /var/run/docker.sock.\n"
    "  --signing-key FILE   Ed25519 key (PKCS#8 PEM, 0600) that signs the evidence\n"
    "                       seal (default: the local key, created on first use:\n"
    "                       ${XDG_STATE_HOME:-$HOME/.local/state}/agentguard/\n"
    "                       signing-key.pem). `agentguard evidence keygen` makes one.\n"
    "  -h, --help           Show this help.\n"
    "\n"
    "Order: config and uid/gid check, environment allowlist, Docker preflight,\n"
    "workspace preparation, container create + verification by id, start,\n"
    "cleanup by id (always), mutation capture, policy checks (docs/checks.md),\n"
    "source integrity, artifact. A failed error or critical check exits 1.\n"
    "SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE cancel cleanly: the container\n"
    "is removed, the artifact says cancelled, the exit code is 128+signal.\n"
    "\n"
    "While the agent runs, its output is shown live, redacted like the evidence\n"
    "(configured secrets in any encoded form, credential shapes, private paths)\n"
    "and escaped for the terminal: each stdout line as 'agent: LINE' on stdout,\n"
    "each stderr line as 'agent stderr: LINE' on stderr. Only whole lines are\n"
    "shown; it stops at max_output_bytes, as the capture does. On a terminal\n"
    "(stderr), the workspace copy, the change capture and the source check show\n"
    "their progress in place; piped, they print nothing. No colour is used.\n"
    "\n"
    "Exit codes: 0 pass, 1 agent or check failed, 2 config or usage, 3 preflight,\n"
    "4 workspace, 5 policy, 6 Docker, 7 timeout, 8 cleanup, 128+N cancelled by\n"
    "signal N (129 SIGHUP, 130 SIGINT, 131 SIGQUIT, 141 SIGPIPE, 143 SIGTERM).\n";

static volatile sig_atomic_t cancel_signal;

/* The first stop signal names the cancellation (a SIGPIPE from writing to a
 * closed terminal after SIGHUP does not rename it). */
static void on_signal(int sig)
{
	if (!cancel_signal)
		cancel_signal = sig;
}

static const char *host_lookup(const char *name, void *data)
{
	(void)data;
	return getenv(name);
}

static int fd_abs_path(int fd, char **out)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	char buf[4096];
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1 || buf[0] != '/')
		return -1;
	buf[n] = '\0';
	*out = ag_xstrdup(buf);
	return 0;
}

/*
 * The workspace is bind-mounted by path, so nobody but us (or root) may be
 * able to rename anything on the way to it: every directory from / to the
 * runs root must be owned by root or by us, and writable by others only
 * with the sticky bit (like /tmp) or by our own group.
 */
static int check_runs_root_ancestry(const char *abs, const char **bad)
{
	_cleanup_free_ char *p = ag_xstrdup(abs);
	size_t n = strlen(p);
	for (size_t i = n; i > 0; i--) {
		if (i != n && p[i] != '/')
			continue;
		char saved = p[i];
		p[i] = '\0';
		struct stat st;
		int rc = lstat(i ? p : "/", &st);
		p[i] = saved;
		if (rc < 0 || !S_ISDIR(st.st_mode))
			return -1;
		bool owner_ok = st.st_uid == 0 || st.st_uid == geteuid();
		bool others_ok = !(st.st_mode & S_IWOTH) || (st.st_mode & S_ISVTX);
		bool group_ok = !(st.st_mode & S_IWGRP) || (st.st_mode & S_ISVTX) ||
				st.st_gid == getegid() || st.st_gid == 0;
		if (!owner_ok || !others_ok || !group_ok) {
			*bad = owner_ok ? "writable by other users" : "owned by another user";
			return -1;
		}
	}
	struct stat st;
	if (lstat("/", &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		*bad = "the root directory is not root-owned";
		return -1;
	}
	return 0;
}

/* Does the key file's real directory lie at or below the repository? */
static bool key_inside(const char *key_path, const char *repo_abs)
{
	_cleanup_free_ char *copy = ag_xstrdup(key_path);
	char *slash = strrchr(copy, '/');
	const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
	_cleanup_free_ char *real = realpath(dir, NULL);
	if (!real)
		return true; /* cannot tell: fail closed */
	size_t n = strlen(repo_abs);
	return strncmp(real, repo_abs, n) == 0 && (real[n] == '/' || real[n] == '\0' || n == 1);
}

static void print_failure(const struct ag_run_outcome *o, const char *image, const char *socket)
{
	if (!o->failure_stage)
		return;
	fputs("Failure: ", stderr);
	ag_cli_put_sanitized(stderr, o->failure_stage);
	fputs(": ", stderr);
	ag_cli_put_sanitized(stderr, o->failure_message ? o->failure_message : "");
	fputs(" [", stderr);
	ag_cli_put_sanitized(stderr, o->failure_reason ? o->failure_reason : "run.failed");
	fputs("]\n", stderr);
	if (o->cleanup_failure_reason)
		fprintf(stderr, "Cleanup failure: [%s]\n", o->cleanup_failure_reason);
	ag_cli_next_step(stderr, o->failure_reason, NULL, image, socket);
	if (o->cleanup_failure_reason)
		ag_cli_next_step(stderr, o->cleanup_failure_reason, NULL, NULL, NULL);
}

int ag_cmd_contained_run(int argc, char **argv)
{
	return ag_cli_contained_run(argc, argv, NULL);
}

int ag_cli_contained_run(int argc, char **argv, const struct ag_cli_run_ext *ext)
{
	const char *cmd = ext ? ext->command : "contained-run";
	int boundary = -1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			boundary = i;
			break;
		}
	int stop = boundary < 0 ? argc : boundary;
	const char *config = NULL, *repo = NULL, *runs_root = NULL, *docker = NULL;
	const char *signing_key = NULL;
	int64_t timeout = 0;
	bool allow_fail = false, as_json = false, quiet = false;
	for (int i = 1; i < stop; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(ext ? ext->help : help, stdout);
			return AG_EXIT_PASS;
		}
		if (ext) {
			/* the extension's own options first (a value, or a flag) */
			int er = ext->option(ext->data, a, i + 1 < stop ? argv[i + 1] : NULL);
			if (er < 0)
				return AG_EXIT_CONFIG;
			i += er > 1;
			if (er)
				continue;
		}
		if (strcmp(a, "--allow-fail-result") == 0) {
			allow_fail = true;
			continue;
		}
		if (strcmp(a, "--json") == 0) {
			as_json = true;
			continue;
		}
		if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			quiet = true;
			continue;
		}
		static const char *const valued[] = {"--repo", "--runs-root", "--timeout",
						     "--docker-socket", "--signing-key"};
		const char *opt = NULL;
		for (size_t k = 0; k < AG_ARRAY_SIZE(valued); k++) {
			size_t l = strlen(valued[k]);
			if (strcmp(a, valued[k]) == 0) {
				if (i + 1 >= stop)
					return ag_cli_usage(cmd, "%s needs a value", valued[k]);
				opt = valued[k];
				val = argv[++i];
			} else if (strncmp(a, valued[k], l) == 0 && a[l] == '=') {
				opt = valued[k];
				val = a + l + 1;
			}
		}
		if (opt) {
			if (strcmp(opt, "--repo") == 0)
				repo = val;
			else if (strcmp(opt, "--runs-root") == 0)
				runs_root = val;
			else if (strcmp(opt, "--docker-socket") == 0)
				docker = val;
			else if (strcmp(opt, "--signing-key") == 0)
				signing_key = val;
			else if (ag_parse_i64(val, &timeout) < 0 || timeout < 1 ||
				 timeout > AG_TIMEOUT_MAX_SECONDS)
				return ag_cli_usage(cmd,
						    "--timeout must be a whole number of seconds "
						    "from 1 to %d",
						    AG_TIMEOUT_MAX_SECONDS);
			continue;
		}
		if (a[0] == '-' && a[1])
			return ag_cli_usage(cmd, "unknown option '%s' before '--'", a);
		if (config)
			return ag_cli_usage(cmd,
					    "unexpected argument '%s': the agent argv goes after a "
					    "literal '--'",
					    a);
		config = a;
	}
	if (!config)
		return ag_cli_usage(cmd,
				    "missing argument CONFIG (path to the AgentGuard config file)");
	if (boundary < 0)
		return ag_cli_usage(cmd,
				    "the literal '--' boundary is required before the agent argv");
	if (boundary + 1 >= argc)
		return ag_cli_usage(cmd, "the agent argv after '--' is empty");
	if (argv[boundary + 1][0] == '\0')
		return ag_cli_usage(cmd, "the agent argv must not start with an empty "
					 "string");

	/* 1. config and the host identity rule */
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_config_ struct ag_config *c = NULL;
	if (ag_config_load(config, &c, &err) < 0 ||
	    ag_config_check_contained_run(c, geteuid(), getegid(), &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}

	/* the evidence signing key: before anything runs, so a key problem costs nothing */
	struct ag_sign_key *key = NULL;
	_cleanup_free_ char *key_path = NULL;
	int krc = ag_cli_signing_key(signing_key, &key, &key_path);
	if (krc != AG_EXIT_PASS)
		return krc;

	/* 2. the environment allowlist; values join the redaction set */
	struct ag_redactor red = AG_REDACTOR_INIT;
	struct ag_env_resolved env;
	int rc = AG_EXIT_CONFIG;
	int repo_fd = -1, runs_fd = -1;
	char *repo_abs = NULL, *runs_abs = NULL, *cwd_abs = NULL;
	for (size_t i = 0; i < c->n_agent_environment; i++)
		ag_redactor_add_secret(&red, c->agent_environment[i].value);
	for (size_t i = 0; i < c->n_secret_content_patterns; i++)
		ag_redactor_add_secret(&red, c->secret_content_patterns[i].contains);
	/* credential arguments (--token X, -H "X-Api-Key: X", ...) of the agent argv */
	ag_redactor_add_argv(&red, (const char *const *)argv + boundary + 1,
			     (size_t)(argc - boundary - 1));
	if (ag_env_resolve(&c->contained, host_lookup, NULL, &red, &env, &err) < 0) {
		ag_cli_print_error(err);
		ag_redactor_release(&red);
		ag_sign_key_free(key);
		return AG_EXIT_CONFIG;
	}

	/* 3. repository and runs root */
	_cleanup_free_ char *repo_from_config = NULL;
	if (!repo && c->repo_template) {
		_cleanup_free_ char *dc = ag_xstrdup(config);
		repo_from_config = c->repo_template[0] == '/'
				       ? ag_xstrdup(c->repo_template)
				       : ag_xasprintf("%s/%s", dirname(dc), c->repo_template);
		repo = repo_from_config;
	}
	repo_fd = open(repo ? repo : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (repo_fd < 0 || fd_abs_path(repo_fd, &repo_abs) < 0) {
		fprintf(stderr,
			"agentguard: error: cannot open the repository directory: %s "
			"[run.repo]\n",
			strerror(errno));
		goto out;
	}
	if (key_inside(key_path, repo_abs)) {
		/* The workspace is a copy of the repository: the key would go with it. */
		fputs("agentguard: error: the evidence signing key lies inside the repository, so "
		      "the agent's copy would hold it; keep it outside (--signing-key FILE) "
		      "[evidence.key.in_repo]\n",
		      stderr);
		goto out;
	}
	int cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd >= 0) {
		(void)fd_abs_path(cwd_fd, &cwd_abs);
		close(cwd_fd);
	}
	const char *runs = runs_root ? runs_root : ".agentguard/contained-runs";
	runs_fd = ag_open_or_make_dirs(runs, 0755);
	if (runs_fd < 0 || fd_abs_path(runs_fd, &runs_abs) < 0) {
		fprintf(stderr,
			"agentguard: error: cannot create or open the runs root: %s "
			"[run.runs_root]\n",
			strerror(errno));
		goto out;
	}
	const char *why_bad = "not a directory";
	if (check_runs_root_ancestry(runs_abs, &why_bad) < 0) {
		/* CONTRACT: workspace.mount_path_integrity */
		fprintf(stderr,
			"agentguard: error: the runs root or a directory above it is %s, so the "
			"bind-mounted workspace path could be swapped [run.runs_root_unsafe]\n",
			why_bad);
		goto out;
	}
	struct stat rst;
	if (fstat(runs_fd, &rst) < 0 || rst.st_uid != geteuid() ||
	    ((rst.st_mode & (S_IWGRP | S_IWOTH)) && !(rst.st_mode & S_ISVTX))) {
		/* Others could plant runs, hold the chain lock or swap the head. */
		fputs("agentguard: error: the runs root is owned by another user or writable by "
		      "group or others (without the sticky bit); run `chmod go-w` on it or pick "
		      "another --runs-root [run.runs_root_unsafe]\n",
		      stderr);
		goto out;
	}
	size_t rl = strlen(repo_abs);
	bool in_repo =
	    strncmp(runs_abs, repo_abs, rl) == 0 && (runs_abs[rl] == '/' || runs_abs[rl] == '\0');
	if (in_repo) {
		/* CONTRACT: evidence.outside_agent_repo */
		const char *rest = runs_abs + rl;
		if (strncmp(rest, "/.agentguard/", 13) != 0 && strcmp(rest, "/.agentguard") != 0) {
			fputs(
			    "agentguard: usage error: the runs root is inside the repository but "
			    "not "
			    "under its top-level .agentguard/: evidence must stay outside what the "
			    "agent sees [run.runs_root_in_repo]\n",
			    stderr);
			goto out;
		}
	}
	/* Portable roles replace host roots everywhere (longest first). */
	ag_redactor_add_root(&red, repo_abs, "${REPOSITORY_ROOT}");
	ag_redactor_add_root(&red, runs_abs, "${RUNS_ROOT}");
	if (cwd_abs)
		ag_redactor_add_root(&red, cwd_abs, "${AGENTGUARD_ROOT}");
	const char *home = getenv("HOME");
	if (home && home[0] == '/' && home[1])
		ag_redactor_add_root(&red, home, "${HOME}");

	/*
	 * 4. cancellation: SIGINT, SIGTERM, SIGHUP (the terminal closed),
	 * SIGQUIT and SIGPIPE (stdout's reader went away) all stop the run
	 * the same way: cleanup by id, the artifact, exit 128+N. A write that
	 * raised SIGPIPE fails with EPIPE instead of killing AgentGuard, so
	 * the teardown goes on writing nowhere.
	 */
	static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < AG_ARRAY_SIZE(stop_signals); i++)
		sigaddset(&sa.sa_mask, stop_signals[i]);
	for (size_t i = 0; i < AG_ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);

	/* what the run shows while it runs (cli/live_out.c) */
	struct ag_cli_live live = {
	    .quiet = quiet, .json = as_json, .progress = !quiet && isatty(STDERR_FILENO)};
	const struct ag_run_observer observer = {ag_cli_live_event, &live};

	static char *probe, *init; /* for the life of the process */
	if (!probe)
		probe = ag_cli_probe_path();
	if (!init)
		init = ag_cli_init_path();
	struct ag_run_opts o = {
	    .cfg = c,
	    .repo_fd = repo_fd,
	    .repo_abs = repo_abs,
	    .runs_root_fd = runs_fd,
	    .runs_root_abs = runs_abs,
	    .runs_root_in_repo = in_repo,
	    .runs_root_rel = in_repo ? runs_abs + rl + 1 : NULL,
	    .signing_key = key,
	    .argv = (const char *const *)argv + boundary + 1,
	    .argc = (size_t)(argc - boundary - 1),
	    .timeout_seconds = timeout ? timeout : c->command_timeout_seconds,
	    .env = &env,
	    .redact = &red,
	    .docker_socket = docker,
	    .probe_path = probe,
	    .init_path = init,
	    .cancel = &cancel_signal,
	    .observer = &observer,
	};
	if (ext && (rc = ext->prepare(ext->data, c, &o)) != AG_EXIT_PASS)
		goto out;
	struct ag_run_outcome out;
	int crc = ag_contained_run(&o, &out, &err);
	ag_cli_live_end(&live);
	if (crc < 0) {
		ag_cli_print_error(err);
		rc = AG_EXIT_WORKSPACE;
		goto out;
	}
	char *report = ag_xasprintf("%s/%s/contained-run.json", runs, out.run_id);
	rc = out.exit_code;
	if (allow_fail && rc == AG_EXIT_FAIL)
		rc = AG_EXIT_PASS;
	if (as_json) {
		json_t *j = json_object();
		json_object_set_new(j, "run_id", json_string(out.run_id));
		json_object_set_new(j, "result", json_string(out.pass ? "PASS" : "FAIL"));
		json_object_set_new(j, "score",
				    out.score_known ? json_integer(out.score) : json_null());
		json_t *fc = json_array();
		for (size_t i = 0; i < out.failed_checks.n; i++) {
			json_t *x = json_string(out.failed_checks.v[i]);
			json_array_append_new(fc, x ? x : json_string("[UNREPRESENTABLE]"));
		}
		json_object_set_new(j, "failed_checks", fc);
		json_object_set_new(j, "exit_code", json_integer(out.exit_code));
		json_object_set_new(j, "preflight",
				    out.preflight_status ? json_string(out.preflight_status)
							 : json_null());
		json_object_set_new(j, "claim_level",
				    out.claim_level ? json_string(out.claim_level) : json_null());
		json_object_set_new(j, "outcome",
				    out.outcome ? json_string(out.outcome) : json_null());
		json_object_set_new(j, "command_exit_code",
				    out.command_ran && out.command_exit_code >= 0
					? json_integer(out.command_exit_code)
					: json_null());
		json_object_set_new(j, "changed_files_total",
				    out.changes_known ? json_integer((json_int_t)out.changed_total)
						      : json_null());
		json_object_set_new(j, "cleanup_complete", json_boolean(out.cleanup_complete));
		json_object_set_new(j, "failure_stage",
				    out.failure_stage ? json_string(out.failure_stage)
						      : json_null());
		json_object_set_new(j, "failure_reason",
				    out.failure_reason ? json_string(out.failure_reason)
						       : json_null());
		/* Only a file that was written is ever named. */
		json_t *rp = out.artifact_written ? json_string(report) : NULL;
		json_object_set_new(j, "report", rp ? rp : json_null());
		const struct ag_run_timings *tm = &out.timings;
		json_object_set_new(
		    j, "timings",
		    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "policy_ms",
			      (json_int_t)tm->policy, "preflight_ms", (json_int_t)tm->preflight,
			      "workspace_ms", (json_int_t)tm->workspace, "container_ms",
			      (json_int_t)tm->container, "execution_ms", (json_int_t)tm->execution,
			      "cleanup_ms", (json_int_t)tm->cleanup, "capture_ms",
			      (json_int_t)tm->capture, "checks_ms", (json_int_t)tm->checks,
			      "evidence_ms", (json_int_t)tm->evidence, "total_ms",
			      (json_int_t)tm->total));
		char *pp = out.patch_written ? ag_xasprintf("%s/%s/changes.patch", runs, out.run_id)
					     : NULL;
		json_t *pj = pp ? json_string(pp) : NULL;
		json_object_set_new(j, "patch", pj ? pj : json_null());
		free(pp);
		if (ext)
			ext->report(ext->data, j);
		ag_cli_json_print(j,
				  ext ? ext->summary_schema : "agentguard.contained-run-summary");
		print_failure(&out, c->sandbox.image, docker);
	} else {
		puts("AgentGuard Contained Run");
		fputs("Task: ", stdout);
		ag_cli_put_sanitized(stdout, c->task_id);
		putchar('\n');
		printf("Result: %s\n", out.pass ? "PASS" : "FAIL");
		if (out.cancelled) /* a score of what was cut short would mislead */
			puts("Score: none (the run was cancelled)");
		else if (out.score_known)
			printf("Score: %d/100\n", out.score);
		else
			puts("Score: none (the agent did not run)");
		if (out.failed_checks.n) {
			puts("Failed checks:");
			for (size_t i = 0; i < out.failed_checks.n; i++) {
				fputs("- ", stdout);
				ag_cli_put_human(stdout, out.failed_checks.v[i]);
				putchar('\n');
			}
		}
		if (out.preflight_status)
			printf("Docker preflight: %s; claim: %s\n", out.preflight_status,
			       out.claim_level);
		if (out.command_ran) {
			bool oom = out.outcome && strcmp(out.outcome, "oom_killed") == 0;
			if (!out.agent_started && out.command_exit_code >= 0)
				printf(
				    "Command exit code: %d (Docker's launcher: the command never "
				    "started)\n",
				    out.command_exit_code);
			else if (!out.agent_started)
				puts("Command exit code: none (the command never started)");
			else if (out.command_exit_code >= 0)
				printf("Command exit code: %d\n", out.command_exit_code);
			else if (oom)
				puts(
				    "Command exit code: none (killed by the out-of-memory killer)");
			else
				puts("Command exit code: none (stopped by AgentGuard)");
			printf("Outcome: %s\n", out.outcome ? out.outcome : "unknown");
		}
		if (out.timed_out)
			puts("Command timed out: yes");
		if (out.cancelled)
			puts("Cancelled: yes");
		if (out.changes_known) {
			puts("Changed files:");
			if (out.changed_files.n == 0)
				puts("- none");
		} else if (out.capture_reason) {
			printf("Changed files: unknown (the workspace capture failed [%s])\n",
			       out.capture_reason);
		} else if (!out.agent_started) {
			puts("Changed files: none (the agent did not run)");
		} else {
			puts("Changed files: unknown (the workspace was not captured)");
		}
		for (size_t i = 0; i < out.changed_files.n; i++) {
			fputs("- ", stdout);
			char *s = ag_redact(&red, out.changed_files.v[i],
					    strlen(out.changed_files.v[i]), 1024, 0, NULL);
			ag_cli_put_sanitized(stdout, s);
			free(s);
			putchar('\n');
		}
		if (out.changed_total > out.changed_files.n)
			printf("- ... and %zu more\n", out.changed_total - out.changed_files.n);
		if (out.source_unchanged_known)
			printf("Source repository unchanged: %s\n",
			       out.source_unchanged ? "yes" : "NO");
		if (ext)
			ext->report(ext->data, NULL);
		fflush(stdout);
		print_failure(&out, c->sandbox.image, docker);
		printf("Cleanup complete: %s (container %s, workspace %s)\n",
		       out.cleanup_complete ? "yes" : "NO", out.cleanup_status,
		       out.workspace_status);
		if (out.artifact_written) {
			fputs("Contained run report path: ", stdout);
			ag_cli_put_sanitized(stdout, report);
			putchar('\n');
		} else {
			puts("Contained run report: not written (see the failure above)");
		}
		if (out.patch_written) {
			fputs("The agent's changes: agentguard patch ", stdout);
			ag_cli_put_sanitized(stdout, runs);
			printf("/%s (review before git apply)\n", out.run_id);
		} else {
			ag_cli_patch_missing(stdout, out.patch_status, out.patch_reason);
		}
	}
	if (out.seal_failed)
		fputs("agentguard: warning: the artifact was written but could not be sealed "
		      "into the runs root's chain [evidence.seal]\n",
		      stderr);
	else if (out.chain_start && (strcmp(out.chain_start, "lock_timeout") == 0 ||
				     strcmp(out.chain_start, "cancelled") == 0))
		fprintf(stderr,
			"agentguard: warning: the chain lock was not taken (%s): the artifact is "
			"sealed and signed outside the runs root's chain [evidence.chain.%s]\n",
			out.chain_start, out.chain_start);
	else if (out.chain_start && strcmp(out.chain_start, "empty") != 0)
		fprintf(stderr,
			"agentguard: warning: the runs root's chain head could not be verified "
			"under this signing key (%s); this run starts a new chain segment instead "
			"of extending it [evidence.chain.new_segment]\n",
			out.chain_start);
	free(report);
	ag_run_outcome_release(&out);
out:
	ag_env_resolved_release(&env);
	ag_redactor_release(&red);
	ag_sign_key_free(key);
	if (repo_fd >= 0)
		close(repo_fd);
	if (runs_fd >= 0)
		close(runs_fd);
	free(repo_abs);
	free(runs_abs);
	free(cwd_abs);
	return rc;
}
