/*
 * Every evidence word is in its schema (issue 18, item 9): each value of
 * each state enum that reaches the contained-run artifact, translated by
 * its one name function, is rendered into every artifact field that
 * carries it, and the whole artifact is validated against the shipped
 * schemas (data/schemas/, the same validator `evidence verify` runs).
 *
 * The base is a real artifact of a passing run
 * (tests/fixtures/evidence/contained-run-pass.json). Each enum is iterated
 * up to its __COUNT, so a value added without a schema entry fails here.
 * A new state enum that reaches the artifact gets a row in `enums` below.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/docker/inspect.h"
#include "lib/docker/ledger.h"
#include "lib/evidence/jschema.h"
#include "lib/policy/checks.h"
#include "lib/run/record.h"
#include "lib/workspace/gitinfo.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

/* Adapters: every name function as "int -> word". */
static const char *w_cleanup(int v)
{
	return ag_cleanup_state_name((enum ag_cleanup_state)v);
}
static const char *w_pf_status(int v)
{
	return ag_pf_status_name((enum ag_pf_status)v);
}
static const char *w_pf_claim(int v)
{
	return ag_pf_claim_name((enum ag_pf_claim)v);
}
static const char *w_platform(int v)
{
	return ag_platform_name((enum ag_platform)v);
}
static const char *w_network(int v)
{
	return ag_network_name((enum ag_network)v);
}
static const char *w_source(int v)
{
	return ag_ws_source_kind_name((enum ag_ws_source_kind)v);
}
static const char *w_check(int v)
{
	return ag_check_name((enum ag_check_id)v);
}
static const char *w_severity(int v)
{
	return ag_severity_name((enum ag_severity)v);
}
static const char *w_outcome(int v)
{
	return ag_run_outcome_name((enum ag_run_outcome)v);
}
static const char *w_ws_status(int v)
{
	return ag_run_ws_status_name((enum ag_run_ws_status)v);
}
static const char *w_patch_status(int v)
{
	return ag_run_patch_status_name((enum ag_run_patch_status)v);
}
static const char *w_exec_status(int v)
{
	return ag_run_exec_status_name((enum ag_run_exec_status)v);
}

#define MAX_FIELDS 4

struct state_enum {
	const char *name;
	int first, count; /* values first .. count-1 */
	const char *(*word)(int);
	const char *fields[MAX_FIELDS]; /* "/"-separated paths into the artifact */
};

static const struct state_enum enums[] = {
    {"cleanup state",
     0,
     AG_CLEANUP__COUNT,
     w_cleanup,
     {"preflight/cleanup/status", "cleanup/status",
      "containment_evidence/cleanup/container_status"}},
    {"preflight status",
     0,
     AG_PF_STATUS__COUNT,
     w_pf_status,
     {"preflight/status", "containment_evidence/preflight/status"}},
    {"preflight claim",
     0,
     AG_PF_CLAIM__COUNT,
     w_pf_claim,
     {"preflight/claim_level", "containment_evidence/preflight/claim_level",
      "containment_evidence/security_claim_level"}},
    {"platform",
     0,
     AG_PLATFORM__COUNT,
     w_platform,
     {"preflight/requested/platform", "containment_evidence/requested/platform"}},
    {"network",
     0,
     AG_NET__COUNT,
     w_network,
     {"preflight/requested/network", "containment_evidence/requested/network",
      "containment_evidence/controls/network"}},
    {"workspace source kind",
     0,
     AG_WS_SOURCE__COUNT,
     w_source,
     {"containment_evidence/workspace/source_kind"}},
    {"check", 0, AG_CK__COUNT, w_check, {"checks/0/name"}},
    /* AG_RUN_OUTCOME_NONE is "did not run": null (test_outcome_none_is_null). */
    {"run outcome",
     AG_RUN_OUTCOME_NONE + 1,
     AG_RUN_OUTCOME__COUNT,
     w_outcome,
     {"command_result/outcome", "containment_evidence/execution/outcome"}},
    {"workspace status",
     0,
     AG_RUN_WS__COUNT,
     w_ws_status,
     {"cleanup/workspace_status", "containment_evidence/workspace/cleanup_status",
      "containment_evidence/cleanup/workspace_status"}},
    {"patch status", 0, AG_RUN_PATCH__COUNT, w_patch_status, {"patch/status"}},
    {"execution status",
     0,
     AG_RUN_EXEC__COUNT,
     w_exec_status,
     {"containment_evidence/execution/status"}},
    /* AG_SEV_DEFAULT is "not overridden": the artifact records the resolved one. */
    {"check severity", AG_SEV_INFO, AG_SEV_CRITICAL + 1, w_severity, {"checks/0/severity"}},
};

static json_t *base_artifact(void)
{
	const char *root = getenv("AG_ROOT");
	char *p =
	    ag_xasprintf("%s/tests/fixtures/evidence/contained-run-pass.json", root ? root : ".");
	json_error_t je;
	json_t *a = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
	free(p);
	assert_non_null(a);
	return a;
}

/* Sets the string at a "/"-separated path (every step must exist). */
static void set_path(json_t *root, const char *path, const char *word)
{
	json_t *cur = root;
	const char *p = path;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char *tok = ag_xstrndup(p, n);
		json_t *parent = cur;
		if (json_is_array(parent)) {
			size_t i = strtoul(tok, NULL, 10);
			cur = json_array_get(parent, i);
			if (!slash && cur)
				assert_int_equal(json_array_set_new(parent, i, json_string(word)),
						 0);
		} else {
			cur = json_object_get(parent, tok);
			if (!slash && cur)
				json_object_set_new(parent, tok, json_string(word));
		}
		if (!cur)
			fail_msg("artifact has no %s (at %s)", path, tok);
		free(tok);
		if (!slash)
			break;
		p = slash + 1;
	}
}

static const char *validate(const json_t *schema, const json_t *a, char *why, size_t n)
{
	const json_t *refs[] = {schema};
	struct ag_error *e = NULL;
	int rc = ag_jschema_validate(schema, refs, 1, a, &e);
	snprintf(why, n, "%s: %s", rc == 0 ? "ok" : e->reason, rc == 0 ? "" : e->msg);
	ag_error_free(e);
	return rc == 0 ? NULL : why;
}

static void test_base_artifact_validates(void **state)
{
	(void)state;
	json_t *schema = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, NULL);
	json_t *a = base_artifact();
	char why[512];
	const char *bad = validate(schema, a, why, sizeof(why));
	if (bad)
		fail_msg("the base artifact does not validate: %s", bad);
	json_decref(a);
	json_decref(schema);
}

static void test_every_state_word_validates(void **state)
{
	(void)state;
	json_t *schema = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(schema);
	json_t *base = base_artifact();
	size_t rendered = 0;
	for (size_t k = 0; k < AG_ARRAY_SIZE(enums); k++) {
		const struct state_enum *se = &enums[k];
		assert_true(se->count > se->first);
		for (int v = se->first; v < se->count; v++) {
			const char *word = se->word(v);
			assert_non_null(word);
			for (size_t f = 0; f < MAX_FIELDS && se->fields[f]; f++) {
				json_t *a = json_deep_copy(base);
				set_path(a, se->fields[f], word);
				char why[512];
				const char *bad = validate(schema, a, why, sizeof(why));
				if (bad)
					fail_msg(
					    "%s value %d (\"%s\") at %s is not in the schema: %s",
					    se->name, v, word, se->fields[f], bad);
				json_decref(a);
				rendered++;
			}
		}
	}
	assert_true(rendered > 30);
	json_decref(base);
	json_decref(schema);
}

/* The test can fail: a word outside a field's enum is caught. */
static void test_foreign_word_is_caught(void **state)
{
	(void)state;
	json_t *schema = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, NULL);
	json_t *a = base_artifact();
	set_path(a, "preflight/cleanup/status", "remove_failed");
	char why[512];
	const char *bad = validate(schema, a, why, sizeof(why));
	assert_non_null(bad);
	assert_non_null(strstr(bad, "evidence.schema.enum"));
	json_decref(a);
	json_decref(schema);
}

/* A command that did not run has no outcome word: null, which the schema
 * allows in both places. Every other outcome has a word of its own. */
static void test_outcome_none_is_null(void **state)
{
	(void)state;
	assert_null(ag_run_outcome_name(AG_RUN_OUTCOME_NONE));
	json_t *schema = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, NULL);
	json_t *a = base_artifact();
	json_object_set_new(json_object_get(a, "command_result"), "outcome", json_null());
	json_object_set_new(
	    json_object_get(json_object_get(a, "containment_evidence"), "execution"), "outcome",
	    json_null());
	char why[512];
	const char *bad = validate(schema, a, why, sizeof(why));
	if (bad)
		fail_msg("a null outcome does not validate: %s", bad);
	json_decref(a);
	json_decref(schema);
	for (int i = AG_RUN_OUTCOME_NONE + 1; i < AG_RUN_OUTCOME__COUNT; i++) {
		assert_non_null(w_outcome(i));
		for (int j = i + 1; j < AG_RUN_OUTCOME__COUNT; j++)
			assert_string_not_equal(w_outcome(i), w_outcome(j));
	}
}

/* One translation: every cleanup state has its own word, and the
 * manifest's coarse word is one of that schema's four. */
static void test_cleanup_words_distinct(void **state)
{
	(void)state;
	for (int i = 0; i < AG_CLEANUP__COUNT; i++) {
		for (int j = i + 1; j < AG_CLEANUP__COUNT; j++)
			assert_string_not_equal(w_cleanup(i), w_cleanup(j));
		const char *m = ag_cleanup_state_manifest_word((enum ag_cleanup_state)i);
		assert_true(!strcmp(m, "removed") || !strcmp(m, "already_absent") ||
			    !strcmp(m, "not_created") || !strcmp(m, "incomplete"));
		/* complete states never project to "incomplete", and vice versa */
		assert_int_equal(ag_cleanup_state_complete((enum ag_cleanup_state)i),
				 strcmp(m, "incomplete") != 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_base_artifact_validates),
	    cmocka_unit_test(test_every_state_word_validates),
	    cmocka_unit_test(test_foreign_word_is_caught),
	    cmocka_unit_test(test_cleanup_words_distinct),
	    cmocka_unit_test(test_outcome_none_is_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
