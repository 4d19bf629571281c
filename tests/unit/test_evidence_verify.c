/*
 * Evidence verification in memory: the C interpreter of the shipped JSON
 * Schemas (types, enums, const, required, closed objects, lengths in code
 * points, patterns, ranges, $ref across the two schemas) and the in-memory
 * checks of ag_evidence_verify_bytes (parse with duplicate keys, version,
 * bounds) with their reason tokens; and the report escaper never lets markup
 * through. Whole-artifact cases run on real artifacts in t0550/t0570.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/evidence/jschema.h"
#include "lib/evidence/verify.h"
#include "lib/report/report.h"

#include <jansson.h>

static const char *schema_reason(const char *schema, const char *inst)
{
	static char reason[64];
	json_t *s = json_loads(schema, 0, NULL),
	       *v = json_loads(inst, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	assert_non_null(s);
	assert_non_null(v);
	struct ag_error *e = NULL;
	const json_t *refs[] = {s};
	int rc = ag_jschema_validate(s, refs, 1, v, &e);
	snprintf(reason, sizeof(reason), "%s", rc == 0 ? "ok" : e->reason);
	ag_error_free(e);
	json_decref(s);
	json_decref(v);
	return reason;
}

static void test_jschema_keywords(void **state)
{
	(void)state;
	const char *obj =
	    "{\"type\":\"object\",\"required\":[\"a\"],\"additionalProperties\":false,"
	    "\"properties\":{\"a\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,"
	    "\"maximum\":9},\"b\":{\"enum\":[\"x\",\"y\"]},\"c\":{\"type\":\"string\","
	    "\"maxLength\":2,\"pattern\":\"^[a-z\\u00e9]+$\"},\"d\":{\"type\":\"array\","
	    "\"maxItems\":2,\"items\":{\"type\":\"boolean\"}},\"e\":{\"const\":false}}}";
	assert_string_equal(schema_reason(obj, "{\"a\":1}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":null}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":1.0}"), "ok"); /* 1.0 is an integer */
	assert_string_equal(schema_reason(obj, "{\"a\":1.5}"), "evidence.schema.type");
	assert_string_equal(schema_reason(obj, "{\"a\":\"1\"}"), "evidence.schema.type");
	assert_string_equal(schema_reason(obj, "{\"a\":10}"), "evidence.schema.range");
	assert_string_equal(schema_reason(obj, "{\"a\":-1}"), "evidence.schema.range");
	assert_string_equal(schema_reason(obj, "{}"), "evidence.schema.required");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"z\":1}"), "evidence.schema.additional");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"b\":\"y\"}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"b\":\"q\"}"), "evidence.schema.enum");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"c\":\"ab\"}"), "ok");
	/* two code points, three bytes */
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"c\":\"a\\u00e9\"}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"c\":\"abc\"}"),
			    "evidence.schema.length");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"c\":\"A\"}"), "evidence.schema.pattern");
	/* an embedded NUL never matches a pattern */
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"c\":\"a\\u0000\"}"),
			    "evidence.schema.pattern");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"d\":[true,false]}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"d\":[true,1]}"), "evidence.schema.type");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"d\":[true,true,true]}"),
			    "evidence.schema.items");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"e\":false}"), "ok");
	assert_string_equal(schema_reason(obj, "{\"a\":1,\"e\":0}"), "evidence.schema.const");
	assert_string_equal(schema_reason("{\"$ref\":\"nowhere\"}", "1"), "evidence.schema.ref");
	const char *defs = "{\"$defs\":{\"n\":{\"type\":\"integer\"}},\"$ref\":\"#/$defs/n\"}";
	assert_string_equal(schema_reason(defs, "1"), "ok");
	assert_string_equal(schema_reason(defs, "\"1\""), "evidence.schema.type");
	assert_string_equal(schema_reason("{\"oneOf\":[]}", "1"), "evidence.schema.ref");
}

static void test_shipped_schemas_load(void **state)
{
	(void)state;
	json_error_t je;
	json_t *a = json_loads(ag_schema_contained_run_json, JSON_REJECT_DUPLICATES, &je);
	json_t *c = json_loads(ag_schema_containment_evidence_json, JSON_REJECT_DUPLICATES, &je);
	assert_non_null(a);
	assert_non_null(c);
	assert_true(json_is_false(json_object_get(a, "additionalProperties")));
	assert_true(json_is_false(json_object_get(c, "additionalProperties")));
	/* the containment root requires exactly the 14 upstream keys */
	assert_int_equal(json_array_size(json_object_get(c, "required")), 14);
	/* the artifact schema embeds the same containment schema */
	json_t *emb = json_object_get(json_object_get(a, "$defs"), "containment_evidence");
	json_t *cc = json_deep_copy(c);
	json_object_del(cc, "$schema");
	json_object_del(cc, "$id");
	json_object_del(cc, "title");
	assert_true(json_equal(emb, cc));
	json_decref(cc);
	json_decref(a);
	json_decref(c);
}

static const char *bytes_reason(const char *s, const char **failed)
{
	static char reason[64];
	struct ag_verify_report rep;
	struct ag_error *e = NULL;
	int rc = ag_evidence_verify_bytes(s, strlen(s), &rep, &e);
	snprintf(reason, sizeof(reason), "%s", rc == 0 ? "ok" : e->reason);
	if (failed)
		*failed = rep.failed;
	ag_error_free(e);
	ag_verify_report_release(&rep);
	return reason;
}

static void test_verify_bytes_early_checks(void **state)
{
	(void)state;
	const char *failed = NULL;
	assert_string_equal(bytes_reason("not json", &failed), "evidence.parse");
	assert_string_equal(failed, "parse");
	assert_string_equal(bytes_reason("[1]\n", NULL), "evidence.parse");
	assert_string_equal(bytes_reason("{\"a\":1,\"a\":2}\n", NULL), "evidence.parse");
	assert_string_equal(
	    bytes_reason("{\"schema\":\"agentguard.contained-run\",\"schema_version\":2}\n",
			 &failed),
	    "evidence.version");
	assert_string_equal(failed, "version");
	/* deeper than the artifact bound (12) fails bounds before the schema */
	struct ag_buf b = AG_BUF_INIT(4096, "t");
	struct ag_error *e = NULL;
	assert_int_equal(
	    ag_buf_adds(&b,
			"{\"schema\":\"agentguard.contained-run\",\"schema_version\":1,\"x\":", &e),
	    0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(ag_buf_adds(&b, "[", &e), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(ag_buf_adds(&b, "]", &e), 0);
	assert_int_equal(ag_buf_adds(&b, "}\n", &e), 0);
	assert_string_equal(bytes_reason(b.buf, &failed), "evidence.depth");
	assert_string_equal(failed, "bounds");
	ag_buf_release(&b);
	/* within bounds but not the schema's shape */
	assert_string_equal(
	    bytes_reason("{\"schema\":\"agentguard.contained-run\",\"schema_version\":1}\n",
			 &failed),
	    "evidence.schema.required");
	assert_string_equal(failed, "structure");
}

static void test_report_escaping(void **state)
{
	(void)state;
	json_t *a = json_pack("{s:s, s:s, s:s, s:[{s:s, s:b, s:s, s:s, s:[s]}], s:{s:[s]}}",
			      "run_id", "r<script>", "task_id", "t\"&'", "result", "FAIL", "checks",
			      "name", "x<y>", "passed", 0, "severity", "error", "message",
			      "m<b>\x01", "evidence", "e</failure>", "mutations", "added_files",
			      "<img src=x onerror=alert(1)>\xe2\x80\xaegpj.exe");
	static const enum ag_report_format fmts[] = {AG_REPORT_TEXT, AG_REPORT_MD, AG_REPORT_HTML,
						     AG_REPORT_SARIF, AG_REPORT_JUNIT};
	for (size_t i = 0; i < AG_ARRAY_SIZE(fmts); i++) {
		struct ag_buf b = AG_BUF_INIT(1 << 20, "t");
		struct ag_error *e = NULL;
		assert_int_equal(ag_report_render(a, "", 0, fmts[i], &b, &e), 0);
		assert_null(strchr(b.buf, '\x01'));
		assert_null(strstr(b.buf, "\xe2\x80\xae"));
		if (fmts[i] != AG_REPORT_SARIF && fmts[i] != AG_REPORT_JUNIT)
			assert_non_null(strstr(b.buf, "\\u202e"));
		if (fmts[i] != AG_REPORT_TEXT && fmts[i] != AG_REPORT_SARIF) {
			assert_null(strstr(b.buf, "<script"));
			assert_null(strstr(b.buf, "<img"));
			assert_null(strstr(b.buf, "e</failure>"));
			assert_null(strstr(b.buf, "<b>"));
		}
		ag_buf_release(&b);
	}
	json_decref(a);
	enum ag_report_format f;
	assert_int_equal(ag_report_format_parse("markdown", &f), 0);
	assert_int_equal(f, AG_REPORT_MD);
	assert_int_equal(ag_report_format_parse("pdf", &f), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jschema_keywords),
	    cmocka_unit_test(test_shipped_schemas_load),
	    cmocka_unit_test(test_verify_bytes_early_checks),
	    cmocka_unit_test(test_report_escaping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
