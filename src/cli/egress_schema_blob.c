/*
 * The study-egress JSON Schemas, compiled into the binary so
 * `agentguard study-egress schema policy|manifest` prints exactly
 * data/schemas/live-study-egress-{policy,manifest}-v1.schema.json.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"

__asm__(".section .rodata\n"
	".global ag_egress_policy_schema_json\n"
	".type ag_egress_policy_schema_json, @object\n"
	"ag_egress_policy_schema_json:\n"
	".incbin \"data/schemas/live-study-egress-policy-v1.schema.json\"\n"
	".global ag_egress_policy_schema_json_end\n"
	"ag_egress_policy_schema_json_end:\n"
	".byte 0\n"
	".global ag_egress_manifest_schema_json\n"
	".type ag_egress_manifest_schema_json, @object\n"
	"ag_egress_manifest_schema_json:\n"
	".incbin \"data/schemas/live-study-egress-manifest-v1.schema.json\"\n"
	".global ag_egress_manifest_schema_json_end\n"
	"ag_egress_manifest_schema_json_end:\n"
	".byte 0\n"
	".previous\n");
