#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/docker/preflight.h"

#include <jansson.h>

static const char help[] =
    "Usage: agentguard preflight CONFIG [--json] [--docker-socket PATH]\n"
    "\n"
    "Verify, before any agent runs, that the local Docker Engine can give\n"
    "CONFIG's contained_execution boundary: the client and daemon answer\n"
    "(bounded JSON), the engine is Linux (Docker Desktop only for a\n"
    "docker-desktop-experimental plan), the network, resource limits,\n"
    "read-only root and tmpfs are supported, the digest-pinned image is\n"
    "present locally (never pulled), and a probe container created with the\n"
    "same controls shows every one of them on inspection by its immutable id.\n"
    "The probe then runs one fixed /bin/sh script as the required uid:gid\n"
    "(never the image entrypoint or anything from the repository) and is\n"
    "removed by id; its absence is verified.\n"
    "\n"
    "Prints 'Docker preflight: STATUS; claim: CLAIM' and each failed check,\n"
    "or with --json the canonical evidence object.\n"
    "STATUS is supported, experimental, unavailable or unsafe.\n"
    "\n"
    "Options:\n"
    "  --json         print the evidence JSON on stdout\n"
    "  --docker-socket PATH  the Docker Engine socket (absolute; root-owned,\n"
    "                 in a root-owned directory chain, the daemon running as\n"
    "                 root); default /var/run/docker.sock\n"
    "  -h, --help     show this help\n"
    "\n"
    "A config that asks for a property outside the boundary (a forbidden\n"
    "allow_* flag, host networking, a tag-only image) is reported as unsafe\n"
    "without any Docker call.\n"
    "\n"
    "Exit codes: 0 supported or experimental, 3 unavailable or unsafe,\n"
    "2 other config errors or usage error.\n";

static void print_text(const struct ag_preflight_result *r, const char *image, const char *socket)
{
	printf("Docker preflight: %s; claim: %s\n", ag_pf_status_name(r->status),
	       ag_pf_claim_name(r->claim));
	const json_t *checks = json_object_get(r->evidence, "checks");
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c)
	{
		if (json_is_true(json_object_get(c, "passed")))
			continue;
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *status = json_string_value(json_object_get(c, "status"));
		const char *reason = json_string_value(json_object_get(c, "reason"));
		const char *diag = json_string_value(json_object_get(c, "diagnostic"));
		printf("  failed: %s: %s: ", name ? name : "?", status ? status : "?");
		ag_cli_put_sanitized(stdout, diag ? diag : "");
		printf(" [%s]\n", reason ? reason : "preflight.unknown");
		fflush(stdout);
		ag_cli_next_step(stderr, reason, NULL, image, socket);
	}
	const char *cleanup =
	    json_string_value(json_object_get(json_object_get(r->evidence, "cleanup"), "status"));
	if (cleanup && strcmp(cleanup, "not_created") != 0)
		printf("  probe cleanup: %s\n", cleanup);
}

int ag_cmd_preflight(int argc, char **argv)
{
	const char *path = NULL, *docker = NULL;
	bool as_json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(a, "--json") == 0) {
			as_json = true;
		} else if (strcmp(a, "--docker-socket") == 0) {
			if (i + 1 >= argc)
				return ag_cli_usage("preflight", "--docker-socket needs a PATH");
			if (docker)
				return ag_cli_usage("preflight", "--docker-socket given twice");
			docker = argv[++i];
		} else if (strncmp(a, "--docker-socket=", 16) == 0) {
			if (docker)
				return ag_cli_usage("preflight", "--docker-socket given twice");
			docker = a + 16;
		} else if (strcmp(a, "--") == 0 && i + 1 < argc && !path) {
			path = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage("preflight", "unknown option '%s'", a);
		} else if (path) {
			return ag_cli_usage("preflight", "only one CONFIG may be given");
		} else {
			path = a;
		}
	}
	if (!path)
		return ag_cli_usage("preflight", "missing CONFIG argument");
	if (docker && docker[0] != '/')
		return ag_cli_usage("preflight", "--docker-socket PATH must be absolute");

	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_config_ struct ag_config *c = NULL;
	if (ag_config_load(path, &c, &err) < 0) {
		/*
		 * A config that asks for a property outside the approved boundary
		 * (a forbidden flag, host networking, a tag-only image) is an
		 * `unsafe` verdict for the preflight, reached with no Docker call.
		 * Any other config error is a plain config error (exit 2).
		 */
		if (strncmp(err->reason, "config.contained.", 17) != 0 &&
		    strncmp(err->reason, "config.image.", 13) != 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		if (as_json) {
			json_t *ev =
			    json_pack("{s:s, s:i, s:s, s:s, s:b, s:b, s:s, s:s, s:[{s:s, s:b, s:s, "
				      "s:s, s:s}]}",
				      "schema", "agentguard.docker-preflight", "preflight_version",
				      1, "status", "unsafe", "claim_level", "none", "supported", 0,
				      "approved_boundary_constructible", 0, "failed_check",
				      "contained_execution_contract", "reason", err->reason,
				      "checks", "name", "contained_execution_contract", "passed", 0,
				      "status", "unsafe", "reason", err->reason, "diagnostic",
				      err->key ? err->key : "contained_execution");
			ag_cli_json_print(ev, "agentguard.docker-preflight");
		} else {
			puts("Docker preflight: unsafe; claim: none");
			printf("  failed: contained_execution_contract: unsafe: ");
			ag_cli_put_sanitized(stdout, err->key ? err->key : "contained_execution");
			printf(" [%s]\n", err->reason);
			ag_cli_print_error(err);
		}
		return AG_EXIT_PREFLIGHT;
	}
	struct ag_preflight_opts opts = AG_PREFLIGHT_OPTS_INIT;
	opts.socket_path = docker;
	_cleanup_free_ char *probe = ag_cli_probe_path();
	opts.probe_path = probe;
	_cleanup_preflight_result_ struct ag_preflight_result r;
	ag_preflight_result_init(&r);
	if (ag_preflight_run(c, NULL, &opts, &r, &err) < 0) {
		ag_cli_print_error(err);
		return err->code == AG_E_USAGE ? AG_EXIT_CONFIG : AG_EXIT_PREFLIGHT;
	}
	if (as_json) {
		ag_cli_json_print(json_incref(r.evidence), "agentguard.docker-preflight");
	} else {
		print_text(&r, c->sandbox.image, docker);
	}
	return ag_preflight_passed(&r) ? AG_EXIT_PASS : AG_EXIT_PREFLIGHT;
}
