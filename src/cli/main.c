#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/workspace/gitinfo.h"

#include <sys/stat.h>

static const char main_help[] =
    "Usage: agentguard COMMAND [ARGS...]\n"
    "\n"
    "Run untrusted AI coding agents in a Docker container whose security\n"
    "properties are verified before launch, and keep evidence of what they did.\n"
    "\n"
    "Commands:\n"
    "  contained-run CONFIG [OPTIONS] -- ARGV...\n"
    "                             run ARGV in a verified container against a copy of\n"
    "                             the repository and write evidence (the main job)\n"
    "  cleanup [--runs-root DIR]  after a crash, remove the containers and workspaces\n"
    "                             of runs AgentGuard can prove it owns\n"
    "  evidence verify FILE|RUN_DIR [--public-key FILE]... [--standalone] [--json]\n"
    "                             verify a run's artifact, signed seal and hash chain\n"
    "  evidence keygen FILE       write a new Ed25519 evidence signing key (0600)\n"
    "  evidence public-key [--signing-key FILE]\n"
    "                             print the signing key's public half\n"
    "  patch RUN_DIR              print the run's changes.patch (verified; review it\n"
    "                             before git apply: it is the agent's content)\n"
    "  report RUN_DIR|FILE [--format text|md|html|json|sarif|junit] [--public-key FILE]\n"
    "  report --list [--runs-root DIR] [--json] [--public-key FILE]\n"
    "                             render a verified run artifact, or list runs\n"
    "  validate CONFIG [--json]   check an agentguard.yaml and show the effective\n"
    "                             contained-execution settings\n"
    "  schema                     print the JSON Schema (Draft 2020-12) of the config\n"
    "  init [DIR] [--preset untrusted-agent] [--force] [--dry-run]\n"
    "                             write a commented starter agentguard.yaml\n"
    "  preflight CONFIG [--json] [--docker-socket PATH]\n"
    "                             verify Docker can enforce the contained boundary\n"
    "  render CONFIG [--workspace DIR] -- ARGV...\n"
    "                             print the docker argv (dry run, no Docker call)\n"
    "  study-egress policy|decide|manifest|plan ...\n"
    "                             live-study egress helpers: destination policy,\n"
    "                             decisions, manifests, topology plan (no Docker)\n"
    "  runtime-image identity|freeze|validate|vuln-policy ...\n"
    "                             stage-1 runtime images: identities, freeze\n"
    "                             manifest, vulnerability policy\n"
    "  help [COMMAND]             show help for a command\n"
    "\n"
    "Options:\n"
    "  --version                  print the version and exit\n"
    "  -h, --help                 show this help\n"
    "\n"
    "Exit codes: 0 success, 1 failure (or init conflict), 2 config or usage error,\n"
    "3 preflight, 4 workspace, 5 policy, 6 Docker, 7 timeout, 8 cleanup,\n"
    "128+N contained-run or study-egress run cancelled by signal N (SIGHUP 129,\n"
    "SIGINT 130, SIGQUIT 131, SIGPIPE 141, SIGTERM 143).\n";

/* curl's main_checkfds: make sure 0/1/2 exist so no file lands on them. */
static void check_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);
			if (n < 0)
				_exit(AG_EXIT_CONFIG);
			if (n != fd)
				close(n);
		}
	}
}

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
    {"validate", ag_cmd_validate},   {"schema", ag_cmd_schema},
    {"init", ag_cmd_init},	     {"render", ag_cmd_render},
    {"preflight", ag_cmd_preflight}, {"contained-run", ag_cmd_contained_run},
    {"cleanup", ag_cmd_cleanup},     {"evidence", ag_cmd_evidence},
    {"report", ag_cmd_report},	     {"study-egress", ag_cmd_study_egress},
    {"patch", ag_cmd_patch},	     {"runtime-image", ag_cmd_runtime_image},
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < AG_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	/* the workspace's git reader: this program re-executed (gitinfo.h) */
	if (argc > 1 && strcmp(argv[1], AG_WS_GIT_READER_ARG) == 0)
		return ag_ws_git_reader_main(argc, argv);
	check_fds();
	/* while single-threaded: the image the git reader is started from; a
	 * failure here fails only a run that reads a repository, closed */
	(void)ag_ws_git_reader_enable();
	if (argc < 2) {
		fputs(main_help, stderr);
		return AG_EXIT_CONFIG;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("agentguard %s\n", AG_VERSION);
		return AG_EXIT_PASS;
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		fputs(main_help, stdout);
		return AG_EXIT_PASS;
	}
	if (strcmp(cmd, "help") == 0) {
		if (argc < 3) {
			fputs(main_help, stdout);
			return AG_EXIT_PASS;
		}
		const struct command *c = find_command(argv[2]);
		if (!c) {
			fputs("agentguard: unknown command '", stderr);
			ag_cli_put_sanitized(stderr, argv[2]);
			fputs("' [usage]\n", stderr);
			return AG_EXIT_CONFIG;
		}
		char *hargv[] = {argv[2], (char *)"--help", NULL};
		return c->fn(2, hargv);
	}
	const struct command *c = find_command(cmd);
	ag_cli_json_scan(c ? c->name : "agentguard", argc - 1, argv + 1);
	if (!c) {
		ag_cli_json_error("usage", "usage", "unknown command", NULL);
		fputs("agentguard: unknown command '", stderr);
		ag_cli_put_sanitized(stderr, cmd);
		fputs("' [usage]\nTry 'agentguard --help'.\n", stderr);
		return AG_EXIT_CONFIG;
	}
	return c->fn(argc - 1, argv + 1);
}
