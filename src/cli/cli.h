/*
 * cli.h: the thin command-line layer. Only src/cli prints or exits.
 */
#ifndef AG_CLI_H
#define AG_CLI_H

#include "lib/base/ag.h"
#include "lib/base/exit.h"

#include <jansson.h>

struct ag_error;

/* Exit codes: lib/base/exit.h (the library decides them, the CLI returns them). */

/* Prints "agentguard: error: ..." for an error on stderr, sanitized. */
/*
 * "agentguard: next step: ..." for a failure a person can fix (by its reason
 * token): root or a wrong uid, the Docker socket's permission, an image not
 * present locally (docker pull IMAGE) or the starter's placeholder image, an
 * incomplete cleanup. Nothing for any other reason. key, image, socket: the
 * error's key path, the configured image, the --docker-socket (may be NULL).
 */
#define AG_CLI_NEXT_STEP_MAX 1024
void ag_cli_next_step(FILE *f, const char *reason, const char *key, const char *image,
		      const char *socket);
/* "The agent's changes: no patch, WHY [reason]" when the run's patch was omitted. */
void ag_cli_patch_missing(FILE *f, const char *status, const char *reason);
/* ag_cli_put_sanitized for a person: the backticks that quote names become plain quotes. */
void ag_cli_put_human(FILE *f, const char *s);
void ag_cli_print_error(const struct ag_error *e);
/* Prints a usage error for `cmd` and returns AG_EXIT_CONFIG. */
int ag_cli_usage(const char *cmd, const char *fmt, ...) AG_PRINTF(2, 3);
/*
 * The preflight probe installed beside this executable
 * (dirname(/proc/self/exe)/agentguard-probe), heap string; NULL when the
 * executable's path cannot be read (the preflight then fails closed).
 */
char *ag_cli_probe_path(void);
/* The running agentguard binary's own path (/proc/self/exe, heap), or NULL
 * when it cannot be read whole. */
char *ag_cli_self_path(void);
/* The agent's static init, installed beside agentguard like the probe. */
char *ag_cli_init_path(void);
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
/*
 * contained-run with an extension (study-egress run): its own options
 * before '--', a last step before the run (e.g. the network hooks), and its
 * lines in the summary. option() answers 0 not mine, 1 a flag, 2 an option
 * that took `val`, -1 a usage error it printed.
 */
struct ag_run_opts;
struct ag_run_record;
struct ag_config;
struct ag_cli_run_ext {
	const char *command; /* for usage messages */
	const char *help;
	const char *summary_schema;
	int (*option)(void *data, const char *arg, const char *val);
	int (*prepare)(void *data, const struct ag_config *c, struct ag_run_opts *o);
	/* the extension's own lines of the summary (summary NULL: text on stdout) */
	void (*report)(void *data, const struct ag_run_record *rec, json_t *summary);
	void *data;
};
int ag_cli_contained_run(int argc, char **argv, const struct ag_cli_run_ext *ext);
int ag_cmd_study_run(int argc, char **argv);
int ag_cmd_cleanup(int argc, char **argv);
int ag_cmd_evidence(int argc, char **argv);
int ag_cmd_report(int argc, char **argv);
int ag_cmd_study_egress(int argc, char **argv);
int ag_cmd_patch(int argc, char **argv);
int ag_cmd_runtime_image(int argc, char **argv);
int ag_cmd_batch(int argc, char **argv);

extern const char ag_schema_json[];
extern const char ag_schema_json_end[];
extern const char ag_egress_policy_schema_json[], ag_egress_policy_schema_json_end[];
extern const char ag_egress_manifest_schema_json[], ag_egress_manifest_schema_json_end[];

#endif
