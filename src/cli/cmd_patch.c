#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/termsafe.h"
#include "lib/evidence/verify.h"

static const char help[] =
    "Usage: agentguard patch RUN_DIR|FILE [--raw] [--public-key FILE]...\n"
    "\n"
    "Print the run's changes.patch: the agent's changes as a git-style patch\n"
    "(renames, mode changes, deletions, binary files as git binary patches).\n"
    "The run is verified first exactly as 'agentguard evidence verify' does,\n"
    "which includes the patch's SHA-256 sealed in the artifact and the seal's\n"
    "signature by a trusted key (--public-key, or the local signing key); a\n"
    "run that does not verify, or has no patch, is refused (exit 2).\n"
    "\n"
    "The patch is the agent's work and agent-controlled content: AgentGuard\n"
    "never applies or executes it. Read it before you apply it:\n"
    "    agentguard patch RUN > agent.patch && less agent.patch\n"
    "    git apply --check agent.patch && git apply agent.patch\n"
    "\n"
    "Piped or redirected, the bytes are written exactly as sealed. On a\n"
    "terminal, control characters (other than newline and tab) and bytes\n"
    "that are not UTF-8 are shown as \\xNN, C1 controls, bidirectional\n"
    "controls and U+2028/U+2029 as \\uNNNN, so the patch cannot drive the\n"
    "terminal; --raw (exact bytes) is refused on a terminal.\n"
    "\n"
    "Exit codes: 0 printed, 2 not verified, no patch, or usage error.\n";

/* The patch on a terminal: the one escaper (lib/base/termsafe.h), newlines
 * and tabs kept so the patch stays readable. */
static bool put_escaped(const char *data, size_t n)
{
	size_t i = 0, plain = 0;
	while (i < n) {
		char esc[16];
		size_t adv = 1, el = 0;
		if (data[i] != '\n' && data[i] != '\t')
			el = ag_termsafe_step(data + i, n - i, esc, &adv);
		if (el) {
			fwrite(data + plain, 1, i - plain, stdout);
			fwrite(esc, 1, el, stdout);
			plain = i + adv;
		}
		i += adv;
	}
	fwrite(data + plain, 1, n - plain, stdout);
	return !ferror(stdout);
}

int ag_cmd_patch(int argc, char **argv)
{
	const char *path = NULL;
	bool raw = false;
	const char *pubs[AG_VERIFY_PUBLIC_KEYS_MAX];
	size_t npubs = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		int pk = ag_cli_public_key_arg("patch", argc, argv, &i, pubs, &npubs);
		if (pk < 0)
			return AG_EXIT_CONFIG;
		if (pk > 0) {
			continue;
		} else if (strcmp(a, "--raw") == 0)
			raw = true;
		else if (a[0] == '-' && a[1])
			return ag_cli_usage("patch", "unknown option '%s'", a);
		else if (!path)
			path = a;
		else
			return ag_cli_usage("patch", "unexpected argument '%s'", a);
	}
	if (!path)
		return ag_cli_usage("patch", "missing argument RUN_DIR|FILE");
	bool tty = isatty(STDOUT_FILENO);
	if (raw && tty)
		return ag_cli_usage("patch", "--raw is refused on a terminal: the patch is the "
					     "agent's content (redirect it to a file)");
	struct ag_cli_trust t;
	int trc = ag_cli_trust_load(&t, pubs, npubs);
	if (trc != AG_EXIT_PASS)
		return trc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_verify_report rep;
	struct ag_verify_opts vo = {.trust = &t.trust};
	int vrc = ag_evidence_verify(path, &vo, &rep, &err);
	ag_cli_trust_release(&t);
	if (vrc < 0) {
		ag_err_wrap(&err, "refusing to print the patch of a run that does not verify");
		ag_cli_print_error(err);
		ag_verify_report_release(&rep);
		return AG_EXIT_CONFIG;
	}
	char *data = NULL;
	size_t n = 0;
	int run_fd = ag_evidence_run_dir(path, &err);
	int rc = run_fd < 0 ? -1 : ag_evidence_patch_read(run_fd, rep.artifact, &data, &n, &err);
	if (run_fd >= 0)
		close(run_fd);
	ag_verify_report_release(&rep);
	if (rc < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	bool ok = tty ? put_escaped(data, n) : fwrite(data, 1, n, stdout) == n;
	ok = fflush(stdout) == 0 && ok;
	free(data);
	if (!ok) {
		fprintf(stderr, "agentguard: error: cannot write the patch [patch.io]\n");
		return AG_EXIT_CONFIG;
	}
	return AG_EXIT_PASS;
}
