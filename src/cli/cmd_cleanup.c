#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"
#include "lib/run/recover.h"

static const char help[] =
	"Usage: agentguard cleanup [--runs-root DIR] [--probe-age SECONDS] [--docker-socket PATH]\n"
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
	"Preflight probe containers orphaned by a crash are removed too: only those\n"
	"carrying all three probe labels (the name label equal to the container's\n"
	"own name) and created more than --probe-age seconds ago (default 120; a\n"
	"live preflight keeps its probe for well under a minute, so a smaller value\n"
	"can make a concurrent preflight fail closed).\n"
	"\n"
	"Exit codes: 0 everything found was cleaned (or nothing to do), 8 something\n"
	"could not be verified or removed, 2 usage error, 6 Docker unavailable.\n";

static void log_line(const char *line, void *data)
{
	(void)data;
	ag_cli_put_sanitized(stdout, line);
	putchar('\n');
}

int ag_cmd_cleanup(int argc, char **argv)
{
	const char *runs = ".agentguard/contained-runs", *docker = NULL;
	int64_t probe_age = AG_RUN_PROBE_ORPHAN_SECONDS;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(a, "--probe-age") == 0 && i + 1 < argc) {
			if (ag_parse_i64(argv[++i], &probe_age) < 0 || probe_age < 0 ||
			    probe_age > 86400 * 365)
				return ag_cli_usage("cleanup", "--probe-age needs a number of seconds");
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
			puts("nothing to clean: the runs root does not exist");
			return AG_EXIT_PASS;
		}
		fprintf(stderr, "agentguard: error: cannot open the runs root: %s [run.runs_root]\n",
			strerror(errno));
		return AG_EXIT_CONFIG;
	}
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_engine cli = AG_ENGINE_INIT;
	if (ag_engine_open(docker, &cli, &err) < 0) {
		close(fd);
		ag_cli_print_error(err);
		return err->code == AG_E_USAGE ? AG_EXIT_CONFIG : AG_EXIT_DOCKER;
	}
	struct ag_recover_report rep;
	int rc = ag_run_recover(fd, &cli, probe_age, log_line, NULL, &rep, &err);
	close(fd);
	ag_engine_close(&cli);
	if (rc < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CLEANUP;
	}
	printf("cleanup: %zu run(s) examined, %zu recovered, %zu still running, %zu incomplete, "
	       "%zu container(s) removed, %zu workspace(s) removed\n",
	       rep.runs_examined, rep.runs_recovered, rep.runs_live, rep.runs_incomplete,
	       rep.containers_removed, rep.workspaces_removed);
	return rep.runs_incomplete ? AG_EXIT_CLEANUP : AG_EXIT_PASS;
}
