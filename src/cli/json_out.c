/*
 * json_out.c: every JSON document the CLI prints (docs/json-output.md).
 *
 * Each carries "schema" (agentguard.<what>) and "schema_version"; keys are
 * sorted, output is compact ASCII on one line. Under --json a usage or
 * config error, or any error before the command printed its own document,
 * is one error object on stdout (schema agentguard.error), besides the
 * usual line on stderr; the exit code is the documented one.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"

#include <jansson.h>

bool ag_cli_json_mode;
const char *ag_cli_json_command = "agentguard";
static bool printed;

void ag_cli_json_scan(const char *command, int argc, char **argv)
{
	ag_cli_json_command = command;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--json") == 0)
			ag_cli_json_mode = true;
	}
}

int ag_cli_json_print(json_t *o, const char *schema)
{
	if (!json_object_get(o, "schema"))
		json_object_set_new(o, "schema", json_string(schema));
	json_object_set_new(o, "schema_version", json_integer(AG_CLI_JSON_SCHEMA_VERSION));
	char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	printed = true;
	if (!s)
		return -1;
	puts(s);
	free(s);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* A string jansson accepts (valid UTF-8), or a marker. */
static json_t *jstr_or(const char *s)
{
	json_t *j = s ? json_string(s) : json_null();
	return j ? j : json_string("[UNREPRESENTABLE]");
}

const char *ag_cli_json_kind(const struct ag_error *e)
{
	return e ? ag_code_name(e->code) : "internal";
}

void ag_cli_json_error(const char *kind, const char *reason, const char *message,
		       const struct ag_error *e)
{
	if (!ag_cli_json_mode || printed)
		return;
	json_t *err = json_object();
	json_object_set_new(err, "kind", json_string(kind));
	json_object_set_new(err, "reason", jstr_or(reason));
	json_object_set_new(err, "message", jstr_or(message));
	json_object_set_new(err, "key", jstr_or(e ? e->key : NULL));
	json_object_set_new(err, "line", e && e->line > 0 ? json_integer(e->line) : json_null());
	json_object_set_new(err, "column",
			    e && e->column > 0 ? json_integer(e->column) : json_null());
	json_t *o = json_object();
	json_object_set_new(o, "command", jstr_or(ag_cli_json_command));
	json_object_set_new(o, "error", err);
	ag_cli_json_print(o, "agentguard.error");
}
