/*
 * The shipped JSON Schema, compiled into the binary so `agentguard schema`
 * prints exactly data/schemas/agentguard-config-v1.schema.json.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"

__asm__(".section .rodata\n"
	".global ag_schema_json\n"
	".type ag_schema_json, @object\n"
	"ag_schema_json:\n"
	".incbin \"data/schemas/agentguard-config-v1.schema.json\"\n"
	".global ag_schema_json_end\n"
	"ag_schema_json_end:\n"
	".byte 0\n"
	".previous\n");
