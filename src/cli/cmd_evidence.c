#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/evidence/verify.h"

#include <jansson.h>

static const char help[] =
    "Usage: agentguard evidence verify FILE|RUN_DIR [--json]\n"
    "\n"
    "Verify a contained-run artifact: it parses (no duplicate keys), is an\n"
    "agentguard.contained-run v1 artifact within every bound, matches the\n"
    "shipped JSON Schema, is in canonical form, has a consistent image\n"
    "identity, holds no private host path or credential shape, matches its\n"
    "seal (contained-run.seal.json), and is still linked into the hash chain\n"
    "of its runs root (previous run's seal, chain head).\n"
    "\n"
    "RUN_DIR is <runs-root>/<run-id>; FILE is its contained-run.json.\n"
    "--json prints one JSON object: valid, checks passed, failed check, reason.\n"
    "\n"
    "Exit codes: 0 valid, 2 invalid (the reason is printed) or usage error.\n";

int ag_cmd_evidence(int argc, char **argv)
{
	const char *path = NULL;
	bool as_json = false;
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(help, stdout);
		return AG_EXIT_PASS;
	}
	if (argc < 2 || strcmp(argv[1], "verify") != 0)
		return ag_cli_usage("evidence", "expected the subcommand 'verify'");
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(a, "--json") == 0)
			as_json = true;
		else if (a[0] == '-' && a[1])
			return ag_cli_usage("evidence", "unknown option '%s'", a);
		else if (!path)
			path = a;
		else
			return ag_cli_usage("evidence", "unexpected argument '%s'", a);
	}
	if (!path)
		return ag_cli_usage("evidence", "missing argument FILE|RUN_DIR");
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_verify_report rep;
	int rc = ag_evidence_verify(path, &rep, &err);
	if (as_json) {
		json_t *passed = json_array();
		for (size_t i = 0; i < rep.npassed; i++)
			json_array_append_new(passed, json_string(rep.passed[i]));
		json_t *o = json_pack(
		    "{s:b, s:o, s:o, s:o, s:o, s:o}", "valid", rc == 0, "checks_passed", passed,
		    "failed_check", rep.failed ? json_string(rep.failed) : json_null(), "reason",
		    err ? json_string(err->reason) : json_null(), "message",
		    err && err->msg ? json_string(err->msg) : json_null(), "run_id",
		    rep.run_id && json_is_string(json_object_get(rep.artifact, "run_id"))
			? json_deep_copy(json_object_get(rep.artifact, "run_id"))
			: json_null());
		ag_cli_json_print(o, "agentguard.evidence-verify");
	}
	if (rc < 0) {
		ag_cli_print_error(err);
		ag_verify_report_release(&rep);
		return AG_EXIT_CONFIG;
	}
	if (!as_json) {
		fputs("valid: ", stdout);
		ag_cli_put_sanitized(stdout, rep.run_id ? rep.run_id : "?");
		printf(" (%zu checks passed: ", rep.npassed);
		for (size_t i = 0; i < rep.npassed; i++)
			printf("%s%s", i ? ", " : "", rep.passed[i]);
		puts(")");
	}
	ag_verify_report_release(&rep);
	return AG_EXIT_PASS;
}
