/*
 * cli.h: the thin command-line layer. Only src/cli prints or exits.
 */
#ifndef AG_CLI_H
#define AG_CLI_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;

/* Exit codes (docs/exit-codes.md); stable, below 126. */
enum ag_exit {
	AG_EXIT_PASS = 0,      /* success */
	AG_EXIT_FAIL = 1,      /* agent or check failed; init: file conflict */
	AG_EXIT_CONFIG = 2,    /* config or usage error */
	AG_EXIT_PREFLIGHT = 3, /* Docker preflight not supported */
	AG_EXIT_WORKSPACE = 4, /* workspace preparation or capture */
	AG_EXIT_POLICY = 5,    /* blocked by policy before launch */
	AG_EXIT_DOCKER = 6,    /* Docker operational failure */
	AG_EXIT_TIMEOUT = 7,   /* contained command timed out */
	AG_EXIT_CLEANUP = 8,   /* cleanup or liveness not verified */
};

/* Prints "agentguard: error: ..." for an error on stderr, sanitized. */
void ag_cli_print_error(const struct ag_error *e);
/* Prints a usage error for `cmd` and returns AG_EXIT_CONFIG. */
int ag_cli_usage(const char *cmd, const char *fmt, ...) AG_PRINTF(2, 3);
/* Writes untrusted s to f through the one terminal escaper (lib/base/termsafe.h). */
void ag_cli_put_sanitized(FILE *f, const char *s);

/*
 * JSON output (json_out.c, docs/json-output.md). ag_cli_json_scan() runs
 * before a command: --json before any "--" turns on JSON mode, in which
 * errors also print one agentguard.error object on stdout (unless the
 * command already printed its document).
 */
#define AG_CLI_JSON_SCHEMA_VERSION 1
extern bool ag_cli_json_mode;
void ag_cli_json_scan(const char *command, int argc, char **argv);
/* Adds schema and schema_version to o, prints it on one line, frees o. */
int ag_cli_json_print(json_t *o, const char *schema);
/* "usage", "config", "docker", ... from the error's code. */
const char *ag_cli_json_kind(const struct ag_error *e);
/* In JSON mode (and nothing printed yet): the error object on stdout. */
void ag_cli_json_error(const char *kind, const char *reason, const char *message,
		       const struct ag_error *e);

int ag_cmd_validate(int argc, char **argv);
int ag_cmd_schema(int argc, char **argv);
int ag_cmd_init(int argc, char **argv);
int ag_cmd_render(int argc, char **argv);
int ag_cmd_preflight(int argc, char **argv);
int ag_cmd_contained_run(int argc, char **argv);
int ag_cmd_cleanup(int argc, char **argv);
int ag_cmd_evidence(int argc, char **argv);
int ag_cmd_report(int argc, char **argv);
int ag_cmd_study_egress(int argc, char **argv);
int ag_cmd_patch(int argc, char **argv);

extern const char ag_schema_json[];
extern const char ag_schema_json_end[];
extern const char ag_egress_policy_schema_json[], ag_egress_policy_schema_json_end[];
extern const char ag_egress_manifest_schema_json[], ag_egress_manifest_schema_json_end[];

#endif
