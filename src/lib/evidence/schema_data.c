/*
 * The shipped evidence JSON Schemas, compiled into the library so
 * `agentguard evidence verify` checks the same rules Python's jsonschema
 * checks in the tests, without a data directory.
 */
#include "lib/base/ag.h"
#include "lib/evidence/jschema.h"

__asm__(".section .rodata\n"
	".global ag_schema_contained_run_json\n"
	".type ag_schema_contained_run_json, @object\n"
	"ag_schema_contained_run_json:\n"
	".incbin \"data/schemas/contained-run-v1.schema.json\"\n"
	".byte 0\n"
	".global ag_schema_containment_evidence_json\n"
	".type ag_schema_containment_evidence_json, @object\n"
	"ag_schema_containment_evidence_json:\n"
	".incbin \"data/schemas/containment-evidence-v1.schema.json\"\n"
	".byte 0\n"
	".previous\n");
