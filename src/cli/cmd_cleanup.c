#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"
#include "lib/evidence/sign.h"
#include "lib/run/recover.h"

#include <ctype.h>

static const char help[] =
    "Usage: agentguard cleanup [--runs-root DIR] [--probe-age SECONDS]\n"
    "                          [--probe-label KEY=VALUE] [--docker-socket PATH]\n"
    "                          [--signing-key FILE] [--json]\n"
    "\n"
    "After a crash (AgentGuard killed with SIGKILL, a reboot mid-run), remove\n"
    "the containers and workspaces of runs in DIR (default\n"
    ".agentguard/contained-runs) whose AgentGuard process is gone.\n"
    "\n"
    "Only what AgentGuard can prove it owns is touched: a run directory with a\n"
    "valid marker naming that directory, a container listed by the run's label\n"
    "whose inspection shows the run's name and both owner labels. A run whose\n"
    "AgentGuard process is still alive is left alone. Each run is reported.\n"
    "\n"
    "A run is acted on only when its marker is signed by the signing key\n"
    "(--signing-key FILE, default the local key that signs runs), so a directory\n"
    "planted to look like a crashed run is left alone. When everything of a run\n"
    "is verified gone, cleanup writes a recovery record in its directory\n"
    "(recovered.json, outcome \"unknown\": the run left no result), signed with\n"
    "that key; a repository whose runs root holds the run then stays usable,\n"
    "and 'report --list' shows the run as recovered (docs/evidence.md).\n"
    "\n"
    "Preflight probe containers orphaned by a crash are removed too: only those\n"
    "carrying all three probe labels (the name label equal to the container's\n"
    "own name) and created more than --probe-age seconds ago (default 120; a\n"
    "live preflight keeps its probe for well under a minute, so a smaller value\n"
    "can make a concurrent preflight fail closed). --probe-label KEY=VALUE\n"
    "narrows that pass to probes that also carry the label (a test suite on a\n"
    "shared engine uses it to touch only probes it created itself).\n"
    "\n"
    "--json prints one JSON object (docs/json-output.md, agentguard.cleanup)\n"
    "instead of the lines; an error is a JSON error object.\n"
    "\n"
    "Exit codes: 0 everything found was cleaned (or nothing to do), 8 something\n"
    "could not be verified or removed, 2 usage error, 6 Docker unavailable.\n";

static void log_line(const char *line, void *data)
{
	json_t *lines = data;
	if (lines) { /* --json: collected (lines are sanitized by the library) */
		json_t *s = json_string(line);
		json_array_append_new(lines, s ? s : json_string("[UNREPRESENTABLE]"));
		return;
	}
	ag_cli_put_sanitized(stdout, line);
	putchar('\n');
}

/* The --json document (docs/json-output.md, agentguard.cleanup). */
static int print_json(bool root_exists, const struct ag_recover_report *r, json_t *lines)
{
	json_t *o = json_pack(
	    "{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o}", "runs_root_exists", root_exists,
	    "runs_examined", (json_int_t)r->runs_examined, "runs_recovered",
	    (json_int_t)r->runs_recovered, "runs_live", (json_int_t)r->runs_live, "runs_incomplete",
	    (json_int_t)r->runs_incomplete, "runs_unowned", (json_int_t)r->runs_unowned,
	    "containers_removed", (json_int_t)r->containers_removed, "workspaces_removed",
	    (json_int_t)r->workspaces_removed, "complete", r->runs_incomplete == 0, "log",
	    lines ? json_incref(lines) : json_array());
	return ag_cli_json_print(o, "agentguard.cleanup");
}

static bool valid_label_part(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

/*
 * The key that vouches for runs and signs recovery records: --signing-key
 * (must load), else the local key when it exists (never created here: a new
 * key could vouch for nothing). -1 after printing an error.
 */
static int load_key(const char *given, struct ag_sign_key **out)
{
	_cleanup_free_ char *def = given ? NULL : ag_cli_default_key_path();
	*out = NULL;
	if (!given && !def)
		return 0;
	_cleanup_err_ struct ag_error *err = NULL;
	if (ag_sign_key_load(given ? given : def, 0, out, NULL, &err) == 0)
		return 0;
	if (!given && strcmp(err->reason, "evidence.key.missing") == 0)
		return 0; /* no local key: no run can be vouched for (each is reported) */
	ag_err_wrap(&err, "%s", given ? "--signing-key" : "the local signing key");
	ag_cli_print_error(err);
	return -1;
}

int ag_cmd_cleanup(int argc, char **argv)
{
	const char *runs = ".agentguard/contained-runs", *docker = NULL, *key_path = NULL;
	int64_t probe_age = AG_RUN_PROBE_ORPHAN_SECONDS;
	_cleanup_free_ char *probe_key = NULL;
	const char *probe_value = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(a, "--json") == 0)
			continue; /* JSON mode was set by ag_cli_json_scan */
		if (strcmp(a, "--probe-age") == 0 && i + 1 < argc) {
			if (ag_parse_i64(argv[++i], &probe_age) < 0 || probe_age < 0 ||
			    probe_age > 86400 * 365)
				return ag_cli_usage("cleanup",
						    "--probe-age needs a number of seconds");
			continue;
		}
		if (strcmp(a, "--probe-label") == 0 && i + 1 < argc) {
			const char *kv = argv[++i], *eq = strchr(kv, '=');
			if (probe_key || !eq ||
			    !valid_label_part(kv, (size_t)(eq - kv), AG_LABEL_KEY_MAX) ||
			    !valid_label_part(eq + 1, strlen(eq + 1), AG_LABEL_VALUE_MAX))
				return ag_cli_usage("cleanup",
						    "--probe-label needs one KEY=VALUE "
						    "of letters, digits, '.', '_' and '-'");
			probe_key = ag_xstrndup(kv, (size_t)(eq - kv));
			probe_value = eq + 1;
			continue;
		}
		if (strcmp(a, "--signing-key") == 0 && i + 1 < argc) {
			key_path = argv[++i];
			continue;
		}
		if ((strcmp(a, "--runs-root") == 0 || strcmp(a, "--docker-socket") == 0) &&
		    i + 1 < argc) {
			if (a[2] == 'r')
				runs = argv[++i];
			else
				docker = argv[++i];
			continue;
		}
		return ag_cli_usage("cleanup", "unexpected argument '%s'", a);
	}
	int fd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			struct ag_recover_report none = {0};
			if (ag_cli_json_mode)
				return print_json(false, &none, NULL) == 0 ? AG_EXIT_PASS
									   : AG_EXIT_FAIL;
			puts("nothing to clean: the runs root does not exist");
			return AG_EXIT_PASS;
		}
		ag_cli_json_error("config", "run.runs_root", "cannot open the runs root", NULL);
		fprintf(stderr,
			"agentguard: error: cannot open the runs root: %s [run.runs_root]\n",
			strerror(errno));
		return AG_EXIT_CONFIG;
	}
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_sign_key *key = NULL;
	if (load_key(key_path, &key) < 0) {
		close(fd);
		return AG_EXIT_CONFIG;
	}
	struct ag_engine cli = AG_ENGINE_INIT;
	if (ag_engine_open(docker, &cli, &err) < 0) {
		close(fd);
		ag_sign_key_free(key);
		ag_cli_print_error(err);
		return err->code == AG_E_USAGE ? AG_EXIT_CONFIG : AG_EXIT_DOCKER;
	}
	struct ag_recover_report rep;
	const struct ag_recover_options opt = {probe_age, probe_key, probe_value, key};
	json_t *lines = ag_cli_json_mode ? json_array() : NULL;
	int rc = ag_run_recover(fd, &cli, &opt, log_line, lines, &rep, &err);
	close(fd);
	ag_engine_close(&cli);
	ag_sign_key_free(key);
	if (rc < 0) {
		json_decref(lines);
		ag_cli_print_error(err);
		return AG_EXIT_CLEANUP;
	}
	if (lines) {
		int prc = print_json(true, &rep, lines);
		json_decref(lines);
		if (prc < 0)
			return AG_EXIT_FAIL;
		return rep.runs_incomplete ? AG_EXIT_CLEANUP : AG_EXIT_PASS;
	}
	printf("cleanup: %zu run(s) examined, %zu recovered, %zu still running, %zu incomplete, "
	       "%zu container(s) removed, %zu workspace(s) removed\n",
	       rep.runs_examined, rep.runs_recovered, rep.runs_live, rep.runs_incomplete,
	       rep.containers_removed, rep.workspaces_removed);
	return rep.runs_incomplete ? AG_EXIT_CLEANUP : AG_EXIT_PASS;
}
