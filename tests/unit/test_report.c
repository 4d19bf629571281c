/*
 * test_report.c: what `agentguard report` says of a study run: the study
 * network is the agent's verified network (no false MISMATCH, a real one
 * still shown), a failed run's score never stands alone beside FAIL, and
 * the egress section: destinations grouped by (decision, host, port,
 * reason) from the manifest's events or its aggregates, bounded, escaped
 * for every format; the manifest read only when its hash is the sealed one.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/base/sha256.h"
#include "lib/egress/manifest.h"
#include "lib/report/report.h"

#include <fcntl.h>
#include <sys/stat.h>

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

/* ---- the egress section ---- */

static char *render_eg(const json_t *a, const json_t *m, enum ag_report_format f)
{
	struct ag_report_egress eg = {(json_t *)m, m ? NULL : "the manifest could not be read"};
	struct ag_buf b = AG_BUF_INIT(1 << 22, "t");
	struct ag_error *e = NULL;
	assert_int_equal(ag_report_render_run(a, "", 0, &eg, f, &b, &e), 0);
	return ag_buf_detach(&b, NULL);
}

static json_t *event(const char *decision, const char *host, int port, const char *reason, int in,
		     int out)
{
	return json_pack("{s:s, s:{s:s, s:i}, s:s, s:{s:i, s:i}}", "decision", decision,
			 "requested", "host", host, "port", port, "reason", reason, "bytes", "in",
			 in, "out", out);
}

#define HOSTILE "<script>alert(1)</script>\x1b[31m|*_`x`\xe2\x80\xae"

static json_t *hostile_manifest(void)
{
	json_t *ev = json_array();
	for (int i = 0; i < 3; i++)
		json_array_append_new(
		    ev, event("allow", "canary.test", 80, "approved_destination", 100, 10));
	json_array_append_new(ev, event("deny", HOSTILE, 443, "destination_not_approved", 0, 0));
	json_array_append_new(ev, event("deny", HOSTILE, 443, "destination_not_approved", 0, 0));
	json_t *m =
	    json_pack("{s:o, s:{s:s, s:s, s:s, s:s}}", "events", ev, "gateway_image_identity",
		      "configured_reference", "gw@sha256:ab", "local_image_id", "sha256:11<b>",
		      "container_bound_image_id", "sha256:11", "platform", "linux/amd64");
	assert_non_null(m);
	return m;
}

static json_t *egress_artifact(void)
{
	json_t *a = study_artifact(STUDY_NET);
	json_t *st = json_object_get(a, "study_egress");
	json_object_set_new(st, "gateway_image", json_string("gw@sha256:ab"));
	json_object_set_new(st, "trial_id", json_string("t-1"));
	json_object_set_new(st, "events", json_integer(5));
	json_object_set_new(st, "denied", json_integer(2));
	json_object_set_new(st, "self_tests",
			    json_pack("{s:s, s:s}", "gateway_port", "open", "dns", "<i>no_answer"));
	return a;
}

static void test_egress_grouped_and_escaped(void **state)
{
	(void)state;
	json_t *a = egress_artifact(), *m = hostile_manifest();
	char *t = render_eg(a, m, AG_REPORT_TEXT), *md = render_eg(a, m, AG_REPORT_MD),
	     *h = render_eg(a, m, AG_REPORT_HTML);
	/* verdict, grouping (deny first), counts, self-tests, gateway image */
	assert_non_null(strstr(t, "Verdict: failed (destination_denied); trial t-1, 5 events, 2 "
				  "denied"));
	assert_non_null(strstr(t, "2 keys grouped from the manifest's 5 recorded events"));
	assert_non_null(strstr(t, "    allow | canary.test | 80 | approved_destination | 3 | 300 | "
				  "30\n"));
	assert_true(strstr(t, "    deny | ") < strstr(t, "    allow | "));
	assert_non_null(strstr(t, " | 443 | destination_not_approved | 2 | 0 | 0\n"));
	assert_non_null(strstr(t, "Self-tests: gateway_port = open, dns = <i>no_answer"));
	assert_non_null(strstr(t, "Gateway image: gw@sha256:ab (local image id sha256:11<b>"));
	assert_non_null(strstr(md, "| allow | canary.test | 80 | approved\\_destination | 3 | 300 "
				   "| 30 |"));
	assert_non_null(strstr(h,
			       "<tr><td><span>allow</span></td><td>canary.test</td><td>80</td>"
			       "<td>approved_destination</td><td>3</td><td>300</td><td>30</td>"));
	assert_non_null(strstr(h, "<span class=\"bad\">deny</span>"));
	/* hostile strings: no raw escape, bidi override, tag, or table cell */
	const char *all[] = {t, md, h};
	for (size_t i = 0; i < 3; i++) {
		assert_null(strchr(all[i], '\x1b'));
		assert_null(strstr(all[i], "\xe2\x80\xae"));
		assert_non_null(strstr(all[i], "\\x1b"));
	}
	assert_null(strstr(md, "<script"));
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, "<b>"));
	assert_null(strstr(h, "<i>"));
	assert_non_null(
	    strstr(md, "&lt;script&gt;alert\\(1\\)&lt;/script&gt;\\x1b\\[31m\\|\\*\\_\\`x\\`"));
	assert_non_null(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m|*_`x`\\u202e"));
	free(t);
	free(md);
	free(h);
	json_decref(m);
	json_decref(a);
}

static void test_egress_bounded(void **state)
{
	(void)state;
	json_t *a = egress_artifact();
	json_t *ev = json_array();
	char host[2100];
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	json_array_append_new(ev, event("deny", host, 80, "destination_not_approved", 0, 0));
	for (int i = 0; i < AG_REPORT_EGRESS_ROWS + 19; i++) {
		char h[32];
		snprintf(h, sizeof(h), "junk-%03d.test", i);
		json_array_append_new(ev, event("deny", h, 80, "destination_not_approved", 0, 0));
	}
	json_array_append_new(ev, event("allow", "canary.test", 80, "approved_destination", 5, 6));
	json_t *m = json_pack("{s:o}", "events", ev);
	static const enum ag_report_format fmts[] = {AG_REPORT_TEXT, AG_REPORT_MD, AG_REPORT_HTML};
	for (size_t i = 0; i < AG_ARRAY_SIZE(fmts); i++) {
		char *s = render_eg(a, m, fmts[i]);
		/* 61 keys: 40 rows, then a line for the other 21 */
		assert_non_null(strstr(s, "21 more destinations not shown (at most 40 rows)"));
		assert_non_null(strstr(s, "junk-000.test"));
		assert_null(strstr(s, "junk-058.test"));
		/* the long host is cut at the report's value bound */
		char run[AG_REPORT_VALUE_MAX + 2];
		memset(run, 'a', sizeof(run) - 1);
		run[sizeof(run) - 1] = '\0';
		assert_null(strstr(s, run));
		assert_non_null(strstr(s, "a" AG_PH_CUT));
		free(s);
	}
	json_decref(m);
	/* more distinct keys than the report groups: the rest are counted */
	json_t *agg = json_array();
	for (int i = 0; i < AG_REPORT_EGRESS_KEYS_MAX + 76; i++) {
		char h[32];
		snprintf(h, sizeof(h), "k-%05d.test", i);
		json_array_append_new(agg, json_pack("{s:s, s:s, s:i, s:s, s:i, s:i, s:i}",
						     "decision", "deny", "host", h, "port", 80,
						     "reason", "destination_not_approved",
						     "requests", 1, "bytes_in", 0, "bytes_out", 0));
	}
	m = json_pack("{s:{s:o, s:b}}", "aggregates", "keys", agg, "complete", 1);
	char *t = render_eg(a, m, AG_REPORT_TEXT);
	char want[128];
	snprintf(want, sizeof(want), "%d (decision, host, port, reason) keys",
		 AG_REPORT_EGRESS_KEYS_MAX + 76);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "%d more destinations not shown",
		 AG_REPORT_EGRESS_KEYS_MAX + 76 - AG_REPORT_EGRESS_ROWS);
	assert_non_null(strstr(t, want));
	free(t);
	json_decref(m);
	json_decref(a);
}

static void test_egress_aggregates_preferred(void **state)
{
	(void)state;
	json_t *a = egress_artifact();
	/* the aggregates are complete; the events only a sample */
	json_t *m = json_pack(
	    "{s:{s:[{s:s, s:s, s:i, s:s, s:I, s:I, s:I}, {s:s, s:s, s:i, s:s, s:i, s:i, s:i}],"
	    " s:b, s:{s:i, s:i}, s:i}, s:[o]}",
	    "aggregates", "keys", "decision", "allow", "host", "canary.test", "port", 80, "reason",
	    "approved_destination", "requests", (json_int_t)20000, "bytes_in",
	    (json_int_t)5000000000, "bytes_out", (json_int_t)7, "decision", "deny", "host",
	    "junk.test", "port", 80, "reason", "destination_not_approved", "requests", 70,
	    "bytes_in", 0, "bytes_out", 0, "complete", 1, "overflow", "requests_allowed", 0,
	    "requests_denied", 3, "sampled_out", 19000, "events",
	    event("allow", "canary.test", 80, "approved_destination", 1, 1));
	char *t = render_eg(a, m, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "2 (decision, host, port, reason) keys from the manifest's "
				  "aggregates (complete counts); 0 allowed and 3 denied requests "
				  "past the key bound; 19000 individual records sampled out"));
	assert_non_null(strstr(t, "    allow | canary.test | 80 | approved_destination | 20000 | "
				  "5000000000 | 7\n"));
	assert_non_null(strstr(t, "    deny | junk.test | 80 | destination_not_approved | 70 | 0 | "
				  "0\n"));
	free(t);
	/* aggregates that are not whole say so */
	json_object_set_new(json_object_get(m, "aggregates"), "complete", json_false());
	t = render_eg(a, m, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "(NOT complete: counts were lost)"));
	free(t);
	/* aggregates whose keys are no list are said so, not guessed around */
	json_object_set_new(m, "aggregates", json_string("x"));
	t = render_eg(a, m, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "the manifest's aggregates hold no list of keys"));
	assert_null(strstr(t, "    allow | "));
	free(t);
	json_decref(m);
	/* no manifest: the section says so, with what the artifact itself holds */
	t = render_eg(a, NULL, AG_REPORT_TEXT);
	assert_non_null(strstr(t, "Manifest: not shown: the manifest could not be read"));
	assert_non_null(strstr(t, "Gateway image: gw@sha256:ab\n"));
	assert_non_null(strstr(t, "Verdict: failed (destination_denied)"));
	free(t);
	/* a run that is no study run has no egress section */
	json_object_del(a, "study_egress");
	t = render_eg(a, NULL, AG_REPORT_TEXT);
	assert_null(strstr(t, "Egress"));
	free(t);
	json_decref(a);
}

static void write_at(int dfd, const char *name, const char *s)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

static void test_egress_load(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_report.XXXXXX";
	assert_non_null(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	const char *text = "{\"events\":[]}\n";
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(text, strlen(text), hex);
	json_t *a = egress_artifact();
	json_t *st = json_object_get(a, "study_egress");
	json_object_set_new(st, "manifest", json_string(AG_EGRESS_MANIFEST_FILE));
	json_object_set_new(st, "manifest_sha256", json_string(hex));
	struct ag_report_egress eg;
	/* absent */
	ag_report_egress_load_at(dfd, a, &eg);
	assert_null(eg.manifest);
	assert_string_equal(eg.problem, "the manifest could not be read");
	/* the sealed one */
	write_at(dfd, AG_EGRESS_MANIFEST_FILE, text);
	ag_report_egress_load_at(dfd, a, &eg);
	assert_non_null(eg.manifest);
	assert_null(eg.problem);
	ag_report_egress_release(&eg);
	/* changed after the seal */
	write_at(dfd, AG_EGRESS_MANIFEST_FILE, "{\"events\":[1]}\n");
	ag_report_egress_load_at(dfd, a, &eg);
	assert_null(eg.manifest);
	assert_non_null(strstr(eg.problem, "SHA-256 mismatch"));
	char *t = render_eg(a, eg.manifest, AG_REPORT_TEXT);
	free(t);
	/* a link in its place (even to a file with the right bytes) */
	write_at(dfd, "real.json", text);
	assert_int_equal(unlinkat(dfd, AG_EGRESS_MANIFEST_FILE, 0), 0);
	assert_int_equal(symlinkat("real.json", dfd, AG_EGRESS_MANIFEST_FILE), 0);
	ag_report_egress_load_at(dfd, a, &eg);
	assert_null(eg.manifest);
	assert_string_equal(eg.problem, "the manifest is a symbolic link");
	/* the right hash of something that is not one JSON object */
	assert_int_equal(unlinkat(dfd, AG_EGRESS_MANIFEST_FILE, 0), 0);
	write_at(dfd, AG_EGRESS_MANIFEST_FILE, "[1]\n");
	ag_sha256_hex("[1]\n", 4, hex);
	json_object_set_new(st, "manifest_sha256", json_string(hex));
	ag_report_egress_load_at(dfd, a, &eg);
	assert_null(eg.manifest);
	assert_string_equal(eg.problem, "the manifest is not one JSON object");
	/* the artifact records none */
	json_object_set_new(st, "manifest", json_null());
	ag_report_egress_load_at(dfd, a, &eg);
	assert_string_equal(eg.problem, "the artifact records no manifest of this study");
	unlinkat(dfd, AG_EGRESS_MANIFEST_FILE, 0);
	unlinkat(dfd, "real.json", 0);
	close(dfd);
	rmdir(dir);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_study_network_verified),
	    cmocka_unit_test(test_study_network_mismatch_shown),
	    cmocka_unit_test(test_fail_never_beside_a_bare_score),
	    cmocka_unit_test(test_egress_grouped_and_escaped),
	    cmocka_unit_test(test_egress_bounded),
	    cmocka_unit_test(test_egress_aggregates_preferred),
	    cmocka_unit_test(test_egress_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
