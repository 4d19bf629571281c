/*
 * test_report.c: what `agentguard report` says of a study run: the study
 * network is the agent's verified network (no false MISMATCH, a real one
 * still shown), a failed run's score never stands alone beside FAIL.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/report/report.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define RUN_ID "study-task-contained-20261202012528266562-8f1f679c"
#define STUDY_NET "agentguard-ed-20261202012528266562-8f1f679c-study"

static char *render(const json_t *a, enum ag_report_format f)
{
	struct ag_buf b = AG_BUF_INIT(1 << 22, "t");
	struct ag_error *e = NULL;
	assert_int_equal(ag_report_render(a, "", 0, f, &b, &e), 0);
	assert_null(e);
	return ag_buf_detach(&b, NULL);
}

/* A study run whose checks all passed (score 100) and whose egress failed. */
static json_t *study_artifact(const char *verified_network)
{
	json_t *a = json_pack(
	    "{s:s, s:s, s:s, s:i, s:i, s:{s:s, s:i}, s:{s:s, s:s, s:s},"
	    " s:[{s:s, s:b, s:s}], s:{s:s, s:s},"
	    " s:{s:{s:s, s:{s:s}}}}",
	    "run_id", RUN_ID, "task_id", "study-task", "result", "FAIL", "score", 100, "exit_code",
	    1, "command_result", "outcome", "exited", "exit_code", 0, "failure", "stage", "egress",
	    "reason", "study.egress_failed", "message", "the egress manifest is failed", "checks",
	    "name", "tests", "passed", 1, "severity", "error", "study_egress", "completion",
	    "failed", "completion_reason", "destination_denied", "containment_evidence", "controls",
	    "network", "none", "verified_resource_controls", "network", verified_network);
	assert_non_null(a);
	return a;
}

static void test_study_network_verified(void **state)
{
	(void)state;
	json_t *a = study_artifact(STUDY_NET);
	static const enum ag_report_format fmts[] = {AG_REPORT_TEXT, AG_REPORT_MD, AG_REPORT_HTML};
	for (size_t i = 0; i < AG_ARRAY_SIZE(fmts); i++) {
		char *s = render(a, fmts[i]);
		assert_null(strstr(s, "MISMATCH"));
		if (fmts[i] != AG_REPORT_TEXT)
			assert_non_null(strstr(s, "network (study)"));
		free(s);
	}
	json_decref(a);
}

static void test_study_network_mismatch_shown(void **state)
{
	(void)state;
	/* the agent of a study run on another network (the default bridge, or
	 * another run's study network): still a mismatch */
	static const char *const other[] = {"bridge", "none",
					    "agentguard-ed-20261202012528266562-00000000-study"};
	for (size_t k = 0; k < AG_ARRAY_SIZE(other); k++) {
		json_t *a = study_artifact(other[k]);
		char *t = render(a, AG_REPORT_TEXT), *m = render(a, AG_REPORT_MD),
		     *h = render(a, AG_REPORT_HTML);
		assert_non_null(strstr(t, "WARNING:    A requested control differs"));
		assert_non_null(strstr(m, "| network (study) | " STUDY_NET " | "));
		assert_non_null(strstr(m, " | MISMATCH |"));
		assert_non_null(strstr(h, "<td class=\"bad\">MISMATCH</td>"));
		free(t);
		free(m);
		free(h);
		json_decref(a);
	}
	/* a run that is no study run compares sandbox.network as before */
	json_t *a = study_artifact("none");
	json_object_del(a, "study_egress");
	char *m = render(a, AG_REPORT_MD);
	assert_non_null(strstr(m, "| network | none | none | verified |"));
	assert_null(strstr(m, "MISMATCH"));
	free(m);
	json_decref(a);
}

static void test_fail_never_beside_a_bare_score(void **state)
{
	(void)state;
	json_t *a = study_artifact(STUDY_NET);
	char *t = render(a, AG_REPORT_TEXT), *m = render(a, AG_REPORT_MD),
	     *h = render(a, AG_REPORT_HTML);
	assert_non_null(strstr(
	    t, "Result:     FAIL  score 100 (checks only; the run failed: study.egress_failed)"
	       "  exit 1"));
	assert_null(strstr(t, "score 100  "));
	assert_non_null(
	    strstr(m, "| **FAIL** | 100 (checks only; the run failed: study.egress_failed) | 1 |"));
	assert_null(strstr(m, "| 100 |"));
	assert_non_null(strstr(h, "<tr><th>Score</th><td>100 (checks only; the run failed: "
				  "study.egress_failed)</td></tr>"));
	free(t);
	free(m);
	free(h);
	/* no failure record, the egress verdict incomplete: that is the reason */
	json_object_del(a, "failure");
	json_object_set_new(json_object_get(a, "study_egress"), "completion",
			    json_string("incomplete"));
	json_object_set_new(json_object_get(a, "study_egress"), "completion_reason",
			    json_string("gateway_evidence_incomplete"));
	t = render(a, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "score 100 (checks only; the run failed: egress incomplete "
				  "(gateway_evidence_incomplete))"));
	free(t);
	/* a PASS keeps its plain score */
	json_object_set_new(a, "result", json_string("PASS"));
	json_object_set_new(json_object_get(a, "study_egress"), "completion",
			    json_string("complete"));
	t = render(a, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "Result:     PASS  score 100  exit 1"));
	free(t);
	/* a failed check is the reason when nothing else is */
	json_object_set_new(a, "result", json_string("FAIL"));
	json_object_set_new(a, "score", json_integer(60));
	json_array_append_new(json_object_get(a, "checks"),
			      json_pack("{s:s, s:b}", "name", "scope", "passed", 0));
	t = render(a, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "score 60 (checks only; the run failed: 1 check failed)"));
	free(t);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_study_network_verified),
	    cmocka_unit_test(test_study_network_mismatch_shown),
	    cmocka_unit_test(test_fail_never_beside_a_bare_score),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
