/*
 * evidence.h (run): builds the contained-run v1 artifact and the
 * agentguard.containment-evidence v1 object it carries, from the run record
 * (record.h: what one run observed; docs/evidence.md).
 *
 * Requested intent and observed state are kept apart; every string passes
 * the redactor; host paths become portable roles (${REPOSITORY_ROOT},
 * ${RUN_ROOT}); container identity is recorded as short SHA-256 hashes;
 * environment names only, never values; no raw Docker argv or output.
 */
#ifndef AG_RUN_EVIDENCE_H
#define AG_RUN_EVIDENCE_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_run_record;

/* The whole contained-run.json object, read from the run record (new reference). */
json_t *ag_run_artifact_build(const struct ag_run_record *r);

/* First 16 hex digits of SHA-256(s): identities recorded without the value. */
void ag_short_hash(const char *s, char out[17]);

#endif
