/*
 * cli.h: the thin command-line layer. Only src/cli prints or exits.
 */
#ifndef AG_CLI_H
#define AG_CLI_H

#include "lib/base/ag.h"
#include "lib/base/exit.h"

struct ag_error;

/* Exit codes: lib/base/exit.h (the library decides them, the CLI returns them). */

/* Prints "agentguard: error: ..." for an error on stderr, sanitized. */
void ag_cli_print_error(const struct ag_error *e);
/* Prints a usage error for `cmd` and returns AG_EXIT_CONFIG. */
int ag_cli_usage(const char *cmd, const char *fmt, ...) AG_PRINTF(2, 3);
/*
 * The preflight probe installed beside this executable
 * (dirname(/proc/self/exe)/agentguard-probe), heap string; NULL when the
 * executable's path cannot be read (the preflight then fails closed).
 */
char *ag_cli_probe_path(void);
/* Writes s to f with control characters escaped as \xNN. */
void ag_cli_put_sanitized(FILE *f, const char *s);

int ag_cmd_validate(int argc, char **argv);
int ag_cmd_schema(int argc, char **argv);
int ag_cmd_init(int argc, char **argv);
int ag_cmd_render(int argc, char **argv);
int ag_cmd_preflight(int argc, char **argv);
int ag_cmd_contained_run(int argc, char **argv);
int ag_cmd_cleanup(int argc, char **argv);
int ag_cmd_evidence(int argc, char **argv);
int ag_cmd_report(int argc, char **argv);

extern const char ag_schema_json[];
extern const char ag_schema_json_end[];

#endif
