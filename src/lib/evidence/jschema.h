/*
 * jschema.h: the subset of JSON Schema Draft 2020-12 that AgentGuard's own
 * evidence schemas use (data/schemas/contained-run-v1.schema.json and
 * containment-evidence-v1.schema.json), interpreted in C so verification
 * needs no Python.
 *
 * Keywords: type (string or list), const, enum, properties, required,
 * additionalProperties (false or a schema), items, maxItems, minItems,
 * maxLength, minLength (code points), pattern (POSIX ERE: the schemas use
 * only anchored character classes), minimum, maximum, and $ref either to
 * "#/$defs/NAME" of refs[0] or to the $id of one of the given schemas.
 * Annotations ($schema, $id, $defs, title, description) are ignored; any
 * other keyword is a programmer error (evidence.schema.ref). Recursion
 * follows the instance, whose depth the caller bounds first.
 *
 * Reasons: evidence.schema.type, .const, .enum, .required, .additional,
 * .items, .length, .pattern, .range, .ref (schema bug).
 */
#ifndef AG_JSCHEMA_H
#define AG_JSCHEMA_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;

extern const char ag_schema_contained_run_json[];
extern const char ag_schema_containment_evidence_json[];

/* Validates inst against schema; refs resolve among refs[0..nrefs), and
 * "#/$defs/NAME" in refs[0] (the root schema). */
int ag_jschema_validate(const json_t *schema, const json_t *const *refs, size_t nrefs,
			const json_t *inst, struct ag_error **err);

#endif
