#include "lib/base/ag.h"
#include "cli/cli.h"

static const char help[] =
    "Usage: agentguard schema\n"
    "\n"
    "Print the JSON Schema (Draft 2020-12) for agentguard.yaml v1, including\n"
    "contained_execution and its environment allowlist. Rules a JSON Schema\n"
    "cannot express are listed in the schema's description and enforced by\n"
    "'agentguard validate'.\n";

int ag_cmd_schema(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		return ag_cli_usage("schema", "unexpected argument '%s'", argv[i]);
	}
	size_t n = (size_t)(ag_schema_json_end - ag_schema_json);
	if (fwrite(ag_schema_json, 1, n, stdout) != n || fflush(stdout) != 0)
		return AG_EXIT_FAIL;
	return AG_EXIT_PASS;
}
