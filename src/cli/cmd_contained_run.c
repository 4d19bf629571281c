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
#include "lib/policy/checks.h"
#include "lib/run/contained_run.h"
#include "lib/run/setup.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/snapshot.h"
#include "lib/run/live.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>

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
    "                       signing-key.pem). 'agentguard evidence keygen' makes one.\n"
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

/* The command line, parsed. */
struct run_args {
	const char *config, *repo, *runs_root, *docker, *signing_key;
	int64_t timeout;
	bool allow_fail, as_json, quiet;
	const char *const *argv; /* the agent argv, after the literal '--' */
	size_t argc;
};

/* A valued option (--repo DIR or --repo=DIR): 1 consumed, 0 not one, -1 usage error. */
static int valued_option(const char *cmd, int stop, char **argv, int *i, struct run_args *a,
			 int *rc)
{
	static const char *const valued[] = {"--repo", "--runs-root", "--timeout",
					     "--docker-socket", "--signing-key"};
	const char *arg = argv[*i], *opt = NULL, *val = NULL;
	for (size_t k = 0; k < AG_ARRAY_SIZE(valued); k++) {
		size_t l = strlen(valued[k]);
		if (strcmp(arg, valued[k]) == 0) {
			if (*i + 1 >= stop) {
				*rc = ag_cli_usage(cmd, "%s needs a value", valued[k]);
				return -1;
			}
			opt = valued[k];
			val = argv[++*i];
		} else if (strncmp(arg, valued[k], l) == 0 && arg[l] == '=') {
			opt = valued[k];
			val = arg + l + 1;
		}
	}
	if (!opt)
		return 0;
	if (strcmp(opt, "--repo") == 0)
		a->repo = val;
	else if (strcmp(opt, "--runs-root") == 0)
		a->runs_root = val;
	else if (strcmp(opt, "--docker-socket") == 0)
		a->docker = val;
	else if (strcmp(opt, "--signing-key") == 0)
		a->signing_key = val;
	else if (ag_parse_i64(val, &a->timeout) < 0 || a->timeout < 1 ||
		 a->timeout > AG_TIMEOUT_MAX_SECONDS) {
		*rc = ag_cli_usage(cmd, "--timeout must be a whole number of seconds from 1 to %d",
				   AG_TIMEOUT_MAX_SECONDS);
		return -1;
	}
	return 1;
}

/* The options before '--'; -1 to go on, else the exit code. */
static int parse_options(int stop, char **argv, const struct ag_cli_run_ext *ext,
			 struct run_args *a)
{
	const char *cmd = ext ? ext->command : "contained-run";
	for (int i = 1; i < stop; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			fputs(ext ? ext->help : help, stdout);
			return AG_EXIT_PASS;
		}
		if (ext) {
			/* the extension's own options first (a value, or a flag) */
			int er = ext->option(ext->data, arg, i + 1 < stop ? argv[i + 1] : NULL);
			if (er < 0)
				return AG_EXIT_CONFIG;
			i += er > 1;
			if (er)
				continue;
		}
		bool *flag = strcmp(arg, "--allow-fail-result") == 0 ? &a->allow_fail
			     : strcmp(arg, "--json") == 0	     ? &a->as_json
			     : strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0 ? &a->quiet
										     : NULL;
		if (flag) {
			*flag = true;
			continue;
		}
		int rc = AG_EXIT_CONFIG, v = valued_option(cmd, stop, argv, &i, a, &rc);
		if (v < 0)
			return rc;
		if (v)
			continue;
		if (arg[0] == '-' && arg[1])
			return ag_cli_usage(cmd, "unknown option '%s' before '--'", arg);
		if (a->config)
			return ag_cli_usage(cmd,
					    "unexpected argument '%s': the agent argv goes after a "
					    "literal '--'",
					    arg);
		a->config = arg;
	}
	return -1;
}

/* The whole command line; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, const struct ag_cli_run_ext *ext, struct run_args *a)
{
	const char *cmd = ext ? ext->command : "contained-run";
	int boundary = -1;
	for (int i = 1; i < argc && boundary < 0; i++)
		if (strcmp(argv[i], "--") == 0)
			boundary = i;
	int rc = parse_options(boundary < 0 ? argc : boundary, argv, ext, a);
	if (rc >= 0)
		return rc;
	if (!a->config)
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
	a->argv = (const char *const *)argv + boundary + 1;
	a->argc = (size_t)(argc - boundary - 1);
	return -1;
}

/* A setup rule's refusal, worded as before the rules moved to the library. */
static void print_setup_error(const struct ag_error *e)
{
	fprintf(stderr, "agentguard: %s: ", e->code == AG_E_USAGE ? "usage error" : "error");
	ag_cli_put_sanitized(stderr, e->msg);
	fprintf(stderr, " [%s]\n", e->reason);
}

/* What a run shows: the record, and where its files are. */
struct summary {
	const struct ag_run_record *r;
	const struct ag_cli_run_ext *ext;
	const struct ag_redactor *red;
	const char *task_id, *runs, *report;
	const char *image, *socket; /* for the next step a failure names */
	struct ag_strv failed;
};

static void print_failure(const struct summary *s)
{
	const struct ag_run_record *r = s->r;
	const struct ag_run_failure *f = &r->failure;
	if (!f->stage)
		return;
	fputs("Failure: ", stderr);
	ag_cli_put_sanitized(stderr, f->stage);
	fputs(": ", stderr);
	ag_cli_put_sanitized(stderr, f->message ? f->message : "");
	fputs(" [", stderr);
	ag_cli_put_sanitized(stderr, f->reason ? f->reason : "run.failed");
	fputs("]\n", stderr);
	if (f->cleanup_reason)
		fprintf(stderr, "Cleanup failure: [%s]\n", f->cleanup_reason);
	ag_cli_next_step(stderr, f->reason, NULL, s->image, s->socket);
	if (f->cleanup_reason)
		ag_cli_next_step(stderr, f->cleanup_reason, NULL, NULL, NULL);
}

/* "name (severity): first evidence" for each failed check, redacted. */
static void failed_checks(const struct ag_run_record *r, const struct ag_redactor *red,
			  struct ag_strv *out)
{
	for (int i = 0; r->checks.ok && i < AG_CK__COUNT; i++) {
		const struct ag_check_result *ck = &r->checks.checks.v[i];
		if (!ck->evaluated || ck->passed)
			continue;
		const char *first =
		    ck->evidence.n ? ck->evidence.v[0] : (ck->message ? ck->message : "");
		char *line = ag_xasprintf("%s (%s): %s", ag_check_name(ck->id),
					  ag_severity_name(ck->severity), first);
		ag_strv_push_owned(out, ag_redact(red, line, strlen(line),
						  AG_CHECK_EVIDENCE_MAX_BYTES + 64, 0, NULL));
		free(line);
	}
}

/* "PATH (kind)" or "OLD -> NEW (renamed)", escaped, for the listed changes. */
static char *change_line(const struct ag_ws_change *ch)
{
	char *a = ag_ws_path_display(ch->kind == AG_WS_RENAMED ? ch->old_path : ch->path);
	char *line;
	if (ch->kind == AG_WS_RENAMED) {
		char *b = ag_ws_path_display(ch->path);
		line = ag_xasprintf("%s -> %s (renamed)", a, b);
		free(b);
	} else {
		line = ag_xasprintf("%s (%s)", a, ag_ws_change_name(ch->kind));
	}
	free(a);
	return line;
}

static json_t *timings_json(const struct ag_run_timings *tm)
{
	return json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "policy_ms", (json_int_t)tm->policy,
	    "preflight_ms", (json_int_t)tm->preflight, "workspace_ms", (json_int_t)tm->workspace,
	    "container_ms", (json_int_t)tm->container, "execution_ms", (json_int_t)tm->execution,
	    "cleanup_ms", (json_int_t)tm->cleanup, "capture_ms", (json_int_t)tm->capture,
	    "checks_ms", (json_int_t)tm->checks, "evidence_ms", (json_int_t)tm->evidence,
	    "total_ms", (json_int_t)tm->total);
}

static json_t *str_or_null(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	return j ? j : json_null();
}

static void summary_json(const struct summary *s)
{
	const struct ag_run_record *r = s->r;
	bool pf = r->preflight.ran;
	json_t *j = json_object();
	json_object_set_new(j, "run_id", json_string(r->run_id));
	json_object_set_new(j, "result", json_string(r->result.pass ? "PASS" : "FAIL"));
	json_object_set_new(j, "score",
			    ag_run_record_score_known(r) ? json_integer(r->checks.checks.score)
							 : json_null());
	json_t *fc = json_array();
	for (size_t i = 0; i < s->failed.n; i++) {
		json_t *x = json_string(s->failed.v[i]);
		json_array_append_new(fc, x ? x : json_string("[UNREPRESENTABLE]"));
	}
	json_object_set_new(j, "failed_checks", fc);
	json_object_set_new(j, "exit_code", json_integer(r->result.exit_code));
	json_object_set_new(j, "preflight",
			    str_or_null(pf ? ag_pf_status_name(r->preflight.result.status) : NULL));
	json_object_set_new(j, "claim_level",
			    str_or_null(pf ? ag_pf_claim_name(r->preflight.result.claim) : NULL));
	json_object_set_new(j, "outcome", str_or_null(ag_run_outcome_name(r->exec.outcome)));
	json_object_set_new(j, "command_exit_code",
			    r->exec.executed && r->exec.exit_status >= 0
				? json_integer(r->exec.exit_status)
				: json_null());
	json_object_set_new(j, "changed_files_total",
			    r->mutations.ok ? json_integer((json_int_t)r->mutations.mut.n)
					    : json_null());
	json_object_set_new(j, "cleanup_complete", json_boolean(r->ledger.cleanup_complete));
	json_object_set_new(j, "failure_stage", str_or_null(r->failure.stage));
	json_object_set_new(j, "failure_reason", str_or_null(r->failure.reason));
	/* Only a file that was written is ever named. */
	json_object_set_new(j, "report",
			    str_or_null(r->result.artifact_written ? s->report : NULL));
	json_object_set_new(j, "timings", timings_json(&r->timings));
	bool patch = r->patch.recorded && r->patch.status == AG_RUN_PATCH_WRITTEN;
	char *pp = patch ? ag_xasprintf("%s/%s/changes.patch", s->runs, r->run_id) : NULL;
	json_object_set_new(j, "patch", str_or_null(pp));
	free(pp);
	/* what became of the patch, in the artifact's words */
	json_object_set_new(j, "patch_status",
			    json_string(ag_run_patch_status_name(
				r->patch.recorded ? r->patch.status : AG_RUN_PATCH_NOT_CAPTURED)));
	json_object_set_new(j, "patch_reason", str_or_null(r->patch.reason));
	if (s->ext)
		s->ext->report(s->ext->data, r, j);
	ag_cli_json_print(j, s->ext ? s->ext->summary_schema : "agentguard.contained-run-summary");
	print_failure(s);
}

static void text_command(const struct ag_run_record *r)
{
	const struct ag_run_exec *x = &r->exec;
	if (x->executed) {
		if (!x->agent_started && x->exit_status >= 0)
			printf("Command exit code: %d (Docker's launcher: the command never "
			       "started)\n",
			       x->exit_status);
		else if (!x->agent_started)
			puts("Command exit code: none (the command never started)");
		else if (x->exit_status >= 0)
			printf("Command exit code: %d\n", x->exit_status);
		else if (r->exec.outcome == AG_RUN_OUTCOME_OOM_KILLED)
			puts("Command exit code: none (killed by the out-of-memory killer)");
		else
			puts("Command exit code: none (stopped by AgentGuard)");
		printf("Outcome: %s\n", x->outcome ? ag_run_outcome_name(x->outcome) : "unknown");
	}
	if (x->timed_out)
		puts("Command timed out: yes");
	if (x->cancelled)
		puts("Cancelled: yes");
}

static void text_changes(const struct summary *s)
{
	const struct ag_run_record *r = s->r;
	const struct ag_ws_mutations *m = &r->mutations.mut;
	if (r->mutations.ok) {
		puts("Changed files:");
		if (m->n == 0)
			puts("- none");
	} else if (r->workspace.capture_reason) {
		printf("Changed files: unknown (the workspace capture failed [%s])\n",
		       r->workspace.capture_reason);
	} else if (!r->exec.agent_started) {
		puts("Changed files: none (the agent did not run)");
	} else {
		puts("Changed files: unknown (the workspace was not captured)");
	}
	size_t listed = 0;
	for (size_t i = 0; r->mutations.ok && i < m->n && i < AG_RUN_CHANGED_LIST_MAX; i++) {
		char *line = change_line(&m->v[i]);
		char *red = ag_redact(s->red, line, strlen(line), 1024, 0, NULL);
		fputs("- ", stdout);
		ag_cli_put_sanitized(stdout, red);
		putchar('\n');
		free(red);
		free(line);
		listed++;
	}
	if (r->mutations.ok && m->n > listed)
		printf("- ... and %zu more\n", m->n - listed);
	if (r->source.checked)
		printf("Source repository unchanged: %s\n", r->source.unchanged ? "yes" : "NO");
}

static void summary_text(const struct summary *s)
{
	const struct ag_run_record *r = s->r;
	puts("AgentGuard Contained Run");
	fputs("Task: ", stdout);
	ag_cli_put_sanitized(stdout, s->task_id);
	putchar('\n');
	printf("Result: %s\n", r->result.pass ? "PASS" : "FAIL");
	if (r->exec.cancelled) /* a score of what was cut short would mislead */
		puts("Score: none (the run was cancelled)");
	else if (ag_run_record_score_known(r) && !r->result.pass)
		/* the score grades the checks only: never a bare 100/100 beside FAIL */
		printf("Score: %d/100 (checks only; the run failed: %s)\n", r->checks.checks.score,
		       r->failure.reason ? r->failure.reason : "checks failed");
	else if (ag_run_record_score_known(r))
		printf("Score: %d/100\n", r->checks.checks.score);
	else
		puts("Score: none (the agent did not run)");
	if (s->failed.n)
		puts("Failed checks:");
	for (size_t i = 0; i < s->failed.n; i++) {
		fputs("- ", stdout);
		ag_cli_put_human(stdout, s->failed.v[i]);
		putchar('\n');
	}
	if (r->preflight.ran)
		printf("Docker preflight: %s; claim: %s\n",
		       ag_pf_status_name(r->preflight.result.status),
		       ag_pf_claim_name(r->preflight.result.claim));
	text_command(r);
	text_changes(s);
	if (s->ext)
		s->ext->report(s->ext->data, r, NULL);
	fflush(stdout);
	print_failure(s);
	printf("Cleanup complete: %s (container %s, workspace %s)\n",
	       r->ledger.cleanup_complete ? "yes" : "NO",
	       ag_cleanup_state_name(ag_run_agent(r)->cleanup.state),
	       ag_run_ws_status_name(r->workspace.status));
	if (r->result.artifact_written) {
		fputs("Contained run report path: ", stdout);
		ag_cli_put_sanitized(stdout, s->report);
		putchar('\n');
	} else {
		puts("Contained run report: not written (see the failure above)");
	}
	if (r->patch.recorded && r->patch.status == AG_RUN_PATCH_WRITTEN) {
		fputs("The agent's changes: agentguard patch ", stdout);
		ag_cli_put_sanitized(stdout, s->runs);
		printf("/%s (review before git apply)\n", r->run_id);
	} else {
		ag_cli_patch_missing(
		    stdout, r->patch.recorded ? ag_run_patch_status_name(r->patch.status) : NULL,
		    r->patch.reason);
	}
}

static void print_seal_warning(const struct ag_run_result *res)
{
	const char *cs = res->chain_start;
	if (res->seal_failed)
		fputs("agentguard: warning: the artifact was written but could not be sealed "
		      "into the runs root's chain [evidence.seal]\n",
		      stderr);
	else if (cs && (strcmp(cs, "lock_timeout") == 0 || strcmp(cs, "cancelled") == 0))
		fprintf(stderr,
			"agentguard: warning: the chain lock was not taken (%s): the artifact is "
			"sealed and signed outside the runs root's chain [evidence.chain.%s]\n",
			cs, cs);
	else if (cs && strcmp(cs, "empty") != 0)
		fprintf(stderr,
			"agentguard: warning: the runs root's chain head could not be verified "
			"under this signing key (%s); this run starts a new chain segment instead "
			"of extending it [evidence.chain.new_segment]\n",
			cs);
}

/* Prints what the run recorded; returns the exit code. */
static int report_run(const struct ag_run_record *r, const struct run_args *a,
		      const struct ag_cli_run_ext *ext, const struct ag_redactor *red,
		      const char *runs)
{
	struct summary s = {.r = r,
			    .ext = ext,
			    .red = red,
			    .runs = runs,
			    .task_id = r->opts->cfg->task_id,
			    .image = r->opts->cfg->sandbox.image,
			    .socket = a->docker,
			    .failed = AG_STRV_INIT};
	char *report = ag_xasprintf("%s/%s/contained-run.json", runs, r->run_id);
	s.report = report;
	failed_checks(r, red, &s.failed);
	if (a->as_json)
		summary_json(&s);
	else
		summary_text(&s);
	print_seal_warning(&r->result);
	ag_strv_release(&s.failed);
	free(report);
	int rc = r->result.exit_code;
	return a->allow_fail && rc == AG_EXIT_FAIL ? AG_EXIT_PASS : rc;
}

/*
 * Cancellation: SIGINT, SIGTERM, SIGHUP (the terminal closed), SIGQUIT and
 * SIGPIPE (stdout's reader went away) all stop the run the same way:
 * cleanup by id, the artifact, exit 128+N. A write that raised SIGPIPE
 * fails with EPIPE instead of killing AgentGuard, so the teardown goes on
 * writing nowhere.
 */
static void catch_signals(void)
{
	static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < AG_ARRAY_SIZE(stop_signals); i++)
		sigaddset(&sa.sa_mask, stop_signals[i]);
	for (size_t i = 0; i < AG_ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
}

/* Everything the run is given, opened and checked (the rules: lib/run/setup.h). */
struct run_setting {
	struct ag_config *cfg;
	struct ag_sign_key *key;
	char *key_path;
	struct ag_redactor red;
	struct ag_env_resolved env;
	bool env_ok;
	struct ag_run_setup setup;
};

static void setting_release(struct run_setting *st)
{
	if (st->env_ok)
		ag_env_resolved_release(&st->env);
	ag_redactor_release(&st->red);
	ag_sign_key_free(st->key);
	free(st->key_path);
	ag_run_setup_release(&st->setup);
	ag_config_free(st->cfg);
}

/* Config, identity rule, key, environment, repository and runs root: the exit code. */
static int open_setting(const struct run_args *a, struct run_setting *st)
{
	_cleanup_err_ struct ag_error *err = NULL;
	/* 1. config and the host identity rule */
	if (ag_config_load(a->config, &st->cfg, &err) < 0 ||
	    ag_config_check_contained_run(st->cfg, geteuid(), getegid(), &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	/* the evidence signing key: before anything runs, so a key problem costs nothing */
	int krc = ag_cli_signing_key(a->signing_key, &st->key, &st->key_path);
	if (krc != AG_EXIT_PASS)
		return krc;
	/* 2. the environment allowlist; values join the redaction set */
	ag_run_setup_secrets(st->cfg, a->argv, a->argc, &st->red);
	if (ag_env_resolve(&st->cfg->contained, host_lookup, NULL, &st->red, &st->env, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	st->env_ok = true;
	/* 3. repository and runs root */
	const struct ag_run_setup_in in = {
	    .cfg = st->cfg,
	    .config_path = a->config,
	    .repo = a->repo,
	    .runs_root = a->runs_root,
	    .key_path = st->key_path,
	    .home = getenv("HOME"),
	};
	if (ag_run_setup_open(&in, &st->setup, &st->red, &err) < 0) {
		print_setup_error(err);
		return AG_EXIT_CONFIG;
	}
	return AG_EXIT_PASS;
}

int ag_cmd_contained_run(int argc, char **argv)
{
	return ag_cli_contained_run(argc, argv, NULL);
}

int ag_cli_contained_run(int argc, char **argv, const struct ag_cli_run_ext *ext)
{
	struct run_args a = {0};
	_cleanup_err_ struct ag_error *err = NULL;
	int rc = parse_args(argc, argv, ext, &a);
	if (rc >= 0)
		return rc;
	struct run_setting st = {.red = AG_REDACTOR_INIT, .setup = {.repo_fd = -1, .runs_fd = -1}};
	rc = open_setting(&a, &st);
	if (rc != AG_EXIT_PASS)
		goto out;
	catch_signals();
	/* what the run shows while it runs (cli/live_out.c) */
	struct ag_cli_live live = {
	    .quiet = a.quiet, .json = a.as_json, .progress = !a.quiet && isatty(STDERR_FILENO)};
	const struct ag_run_observer observer = {ag_cli_live_event, &live};
	static char *probe, *init; /* for the life of the process */
	if (!probe)
		probe = ag_cli_probe_path();
	if (!init)
		init = ag_cli_init_path();
	struct ag_run_opts o = {
	    .cfg = st.cfg,
	    .repo_fd = st.setup.repo_fd,
	    .repo_abs = st.setup.repo_abs,
	    .runs_root_fd = st.setup.runs_fd,
	    .runs_root_abs = st.setup.runs_abs,
	    .runs_root_in_repo = st.setup.in_repo,
	    .runs_root_rel = st.setup.runs_rel,
	    .signing_key = st.key,
	    .argv = a.argv,
	    .argc = a.argc,
	    .timeout_seconds = a.timeout ? a.timeout : st.cfg->command_timeout_seconds,
	    .env = &st.env,
	    .redact = &st.red,
	    .docker_socket = a.docker,
	    .probe_path = probe,
	    .init_path = init,
	    .cancel = &cancel_signal,
	    .observer = &observer,
	};
	if (ext && (rc = ext->prepare(ext->data, st.cfg, &o)) != AG_EXIT_PASS)
		goto out;
	struct ag_run_record rec;
	int crc = ag_contained_run(&o, &rec, &err);
	ag_cli_live_end(&live);
	if (crc < 0) {
		ag_cli_print_error(err);
		rc = AG_EXIT_WORKSPACE;
	} else {
		rc = report_run(&rec, &a, ext, &st.red, st.setup.runs);
	}
	ag_run_record_release(&rec);
out:
	setting_release(&st);
	return rc;
}
