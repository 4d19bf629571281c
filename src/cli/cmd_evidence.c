#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/evidence/verify.h"

#include <jansson.h>

static const char help[] =
    "Usage: agentguard evidence verify FILE|RUN_DIR [--public-key FILE]... [--standalone]\n"
    "                                  [--json]\n"
    "       agentguard evidence keygen FILE\n"
    "       agentguard evidence public-key [--signing-key FILE]\n"
    "\n"
    "verify: check a contained-run artifact: it parses (no duplicate keys), is an\n"
    "agentguard.contained-run v1 artifact within every bound, matches the\n"
    "shipped JSON Schema, is in canonical form, has a consistent image\n"
    "identity, holds no private host path or credential shape, matches its\n"
    "seal (contained-run.seal.json), the seal carries a valid Ed25519\n"
    "signature (contained-run.seal.sig) by a TRUSTED key, and the run is still\n"
    "linked into the hash chain of its runs root (previous run's seal, head).\n"
    "Trusted keys are only those given with --public-key FILE (PEM, as\n"
    "'evidence public-key' prints it) and the local signing key's public half.\n"
    "--standalone checks one archived run directory on its own (everything but\n"
    "the chain) and says that the chain was not checked.\n"
    "RUN_DIR is <runs-root>/<run-id>; FILE is its contained-run.json.\n"
    "--json prints one JSON object: valid, checks passed, failed check, reason,\n"
    "signer, chain_checked.\n"
    "\n"
    "keygen: write a new Ed25519 signing key (PKCS#8 PEM, mode 0600) to FILE;\n"
    "an existing FILE is never overwritten. For CI: an ephemeral key passed to\n"
    "'contained-run --signing-key FILE'.\n"
    "\n"
    "public-key: print the PEM public key of FILE, or of the local signing key\n"
    "(${XDG_STATE_HOME:-$HOME/.local/state}/agentguard/signing-key.pem, created\n"
    "on first use), and its fingerprint on stderr.\n"
    "\n"
    "Exit codes: 0 valid / written, 2 invalid (the reason is printed) or usage\n"
    "error.\n";

static int is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static int cmd_keygen(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 2; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return ag_cli_usage("evidence", "unknown option '%s'", argv[i]);
		if (path)
			return ag_cli_usage("evidence", "unexpected argument '%s'", argv[i]);
		path = argv[i];
	}
	if (!path)
		return ag_cli_usage("evidence", "keygen needs the FILE to write");
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_sign_key *k = NULL;
	if (ag_sign_key_generate(path, &err) < 0 || ag_sign_key_load(path, 0, &k, NULL, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	printf("wrote a new Ed25519 signing key: %s\n", ag_sign_key_fingerprint(k));
	ag_sign_key_free(k);
	return AG_EXIT_PASS;
}

static int cmd_public_key(int argc, char **argv)
{
	const char *given = NULL;
	for (int i = 2; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(argv[i], "--signing-key") == 0 && i + 1 < argc)
			given = argv[++i];
		else if (strncmp(argv[i], "--signing-key=", 14) == 0)
			given = argv[i] + 14;
		else
			return ag_cli_usage("evidence", "unexpected argument '%s'", argv[i]);
	}
	struct ag_sign_key *k = NULL;
	int rc = ag_cli_signing_key(given, &k, NULL);
	if (rc != AG_EXIT_PASS)
		return rc;
	char *pem = ag_sign_key_public_pem(k);
	if (pem)
		fputs(pem, stdout);
	fprintf(stderr, "fingerprint: %s\n", ag_sign_key_fingerprint(k));
	free(pem);
	ag_sign_key_free(k);
	return pem ? AG_EXIT_PASS : AG_EXIT_CONFIG;
}

/* Why a run starts a chain segment, for people (lib/evidence/seal.h). */
static const char *chain_start_text(const char *why)
{
	if (strcmp(why, "empty") == 0)
		return "it is the first run sealed in this runs root, so there is no earlier run "
		       "to link to; this is normal";
	if (strcmp(why, "lock_timeout") == 0 || strcmp(why, "cancelled") == 0)
		return "the chain lock was not taken, so the run was sealed outside the chain";
	if (strncmp(why, "head_", 5) == 0)
		return "the runs root's newest seal could not be verified under this signing key, "
		       "so the run did not link to it";
	return "no earlier run to link to";
}

static int cmd_verify(int argc, char **argv)
{
	const char *path = NULL;
	bool as_json = false, standalone = false;
	const char *pubs[AG_VERIFY_PUBLIC_KEYS_MAX];
	size_t npubs = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (is_help(a)) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		int pk = ag_cli_public_key_arg("evidence", argc, argv, &i, pubs, &npubs);
		if (pk < 0)
			return AG_EXIT_CONFIG;
		if (pk > 0) {
			continue;
		} else if (strcmp(a, "--json") == 0) {
			as_json = true;
		} else if (strcmp(a, "--standalone") == 0) {
			standalone = true;
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage("evidence", "unknown option '%s'", a);
		} else if (!path) {
			path = a;
		} else {
			return ag_cli_usage("evidence", "unexpected argument '%s'", a);
		}
	}
	if (!path)
		return ag_cli_usage("evidence", "missing argument FILE|RUN_DIR");
	struct ag_cli_trust t;
	int trc = ag_cli_trust_load(&t, pubs, npubs);
	if (trc != AG_EXIT_PASS)
		return trc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_verify_report rep;
	struct ag_verify_opts vo = {.trust = &t.trust, .standalone = standalone};
	int rc = ag_evidence_verify(path, &vo, &rep, &err);
	ag_cli_trust_release(&t);
	if (as_json) {
		json_t *passed = json_array();
		for (size_t i = 0; i < rep.npassed; i++)
			json_array_append_new(passed, json_string(rep.passed[i]));
		json_t *o =
		    json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}", "valid", rc == 0,
			      "checks_passed", passed, "failed_check",
			      rep.failed ? json_string(rep.failed) : json_null(), "reason",
			      err ? json_string(err->reason) : json_null(), "message",
			      err && err->msg ? json_string(err->msg) : json_null(), "run_id",
			      rep.run_id && json_is_string(json_object_get(rep.artifact, "run_id"))
				  ? json_deep_copy(json_object_get(rep.artifact, "run_id"))
				  : json_null(),
			      "signer", rep.signer ? json_string(rep.signer) : json_null(),
			      "chain_checked", rep.chain_checked, "chain_start",
			      rep.chain_start ? json_string(rep.chain_start) : json_null());
		ag_cli_json_print(o, "agentguard.evidence-verify");
	}
	if (rc < 0) {
		if (!as_json) /* with --json the document above says it all: stdout only */
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
		printf("signed by: %s\n", rep.signer);
		if (!rep.chain_checked)
			puts("chain: NOT CHECKED (--standalone): this run was verified on its own; "
			     "whether runs before or after it were removed or replaced is not "
			     "known");
		else if (rep.chain_start)
			printf("chain: this run starts a chain segment (%s): %s\n", rep.chain_start,
			       chain_start_text(rep.chain_start));
	}
	ag_verify_report_release(&rep);
	return AG_EXIT_PASS;
}

int ag_cmd_evidence(int argc, char **argv)
{
	if (argc >= 2 && is_help(argv[1])) {
		fputs(help, stdout);
		return AG_EXIT_PASS;
	}
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return cmd_verify(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "keygen") == 0)
		return cmd_keygen(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "public-key") == 0)
		return cmd_public_key(argc, argv);
	return ag_cli_usage("evidence", "expected a subcommand: verify, keygen or public-key");
}
