/*
 * vuln.c: the stage-1 HIGH/CRITICAL vulnerability policy over Trivy JSON
 * reports (Results[].Vulnerabilities[]). No scanner runs here; with no
 * report the status is "not_scanned", which nothing reads as clean.
 *
 * Fails: any CRITICAL; any HIGH with a fixed version; an unfixed HIGH
 * without a matching exception; an exception for the agent image (agent
 * exceptions are forbidden); an expired exception; a stale exception (it
 * matches no current finding). A malformed report or exceptions file is an
 * input error (-1), never a pass.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"

static const char *const reachability_values[] = {
    "vulnerable_code_not_present", "vulnerable_code_not_in_execute_path",
    "vulnerable_code_cannot_be_controlled_by_adversary", "inline_mitigations_already_exist", NULL};

static const struct ag_read_reasons why = {"images.vuln.read", "images.vuln.read",
					   "images.vuln.read", "images.vuln.size"};

static int exc_err(struct ag_error **err, const char *reason, size_t i, const char *msg)
{
	char key[48];
	snprintf(key, sizeof(key), "exceptions[%zu]", i);
	return ag_err_at(err, AG_E_CONFIG, reason, NULL, 0, 0, key, "%s", msg);
}

static bool is_date(const char *s)
{
	if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
			return false;
	int mo = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

static bool nonempty_str(json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0 &&
	       json_string_length(v) <= AG_IMAGES_MANIFEST_STRING_MAX;
}

static bool str_list(json_t *v, bool https)
{
	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_array_size(v) > AG_IMAGES_MANIFEST_ARTIFACTS_MAX)
		return false;
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x)
	{
		if (!nonempty_str(x))
			return false;
		if (https && (strncmp(json_string_value(x), "https://", 8) != 0 ||
			      json_string_length(x) <= 8))
			return false;
	}
	return true;
}

static json_t *load(const char *path, const char *what, struct ag_error **err)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, path, what, AG_IMAGES_REPORT_MAX_BYTES, &why, &data, &len,
			    err) < 0)
		return NULL;
	json_error_t je;
	json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(v)) {
		json_decref(v);
		ag_err(err, AG_E_CONFIG, 0, "images.vuln.json", "%s is not one JSON object", what);
		return NULL;
	}
	return v;
}

/* Checks the exceptions document; structural problems are errors. */
static int check_exceptions(json_t *doc, const char *today, struct ag_error **err)
{
	static const char *const keys[] = {"id",
					   "package",
					   "installed_version",
					   "image_role",
					   "approved_on",
					   "expires_on",
					   "advisory_references",
					   "reachability",
					   "reevaluation_triggers",
					   "justification",
					   NULL};
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	json_t *ver = json_object_get(doc, "schema_version");
	json_t *list = json_object_get(doc, "exceptions");
	if (!schema || strcmp(schema, AG_IMAGES_EXCEPTIONS_SCHEMA) != 0 || !json_is_integer(ver) ||
	    json_integer_value(ver) != 1 || !json_is_array(list) || json_object_size(doc) != 3)
		return ag_err(err, AG_E_CONFIG, 0, "images.exceptions.schema",
			      "the exceptions file must be " AG_IMAGES_EXCEPTIONS_SCHEMA
			      " version 1 with exactly schema, schema_version, exceptions");
	if (json_array_size(list) > AG_IMAGES_VULN_MAX_EXCEPTIONS)
		return ag_err(err, AG_E_LIMIT, 0, "images.exceptions.count",
			      "more than %d exceptions", AG_IMAGES_VULN_MAX_EXCEPTIONS);
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		if (!json_is_object(e))
			return exc_err(err, "images.exceptions.shape", i, "not an object");
		if (ag_images_unknown_key(e, keys))
			return exc_err(err, "images.exceptions.unknown_key", i,
				       "unknown key in an exception");
		const char *id = json_string_value(json_object_get(e, "id"));
		if (!id || strncmp(id, "CVE-", 4) != 0 || strlen(id) < 13 || strlen(id) > 32)
			return exc_err(err, "images.exceptions.id", i,
				       "id must be an exact CVE identifier");
		if (!nonempty_str(json_object_get(e, "package")) ||
		    !nonempty_str(json_object_get(e, "installed_version")))
			return exc_err(err, "images.exceptions.package", i,
				       "exact package name and installed version are required");
		enum ag_image_role role;
		const char *rs = json_string_value(json_object_get(e, "image_role"));
		if (!rs || ag_image_role_parse(rs, &role) < 0)
			return exc_err(err, "images.exceptions.role", i,
				       "image_role must be gateway (or agent, which is refused)");
		const char *ap = json_string_value(json_object_get(e, "approved_on"));
		const char *ex = json_string_value(json_object_get(e, "expires_on"));
		if (!is_date(ap) || !is_date(ex))
			return exc_err(err, "images.exceptions.date", i,
				       "approved_on and expires_on must be YYYY-MM-DD");
		if (strcmp(ap, today) > 0)
			return exc_err(err, "images.exceptions.approved_future", i,
				       "approved_on lies in the future");
		if (!str_list(json_object_get(e, "advisory_references"), true))
			return exc_err(
			    err, "images.exceptions.advisory", i,
			    "advisory_references must be a non-empty list of https URLs");
		const char *re = json_string_value(json_object_get(e, "reachability"));
		bool rok = false;
		for (size_t j = 0; re && reachability_values[j] && !rok; j++)
			rok = strcmp(re, reachability_values[j]) == 0;
		if (!rok)
			return exc_err(err, "images.exceptions.reachability", i,
				       "reachability must be one of the fixed values");
		if (!str_list(json_object_get(e, "reevaluation_triggers"), false))
			return exc_err(err, "images.exceptions.triggers", i,
				       "reevaluation_triggers must be a non-empty list");
		if (!nonempty_str(json_object_get(e, "justification")))
			return exc_err(err, "images.exceptions.justification", i,
				       "a justification is required");
	}
	return 0;
}

struct tally {
	json_int_t critical, high_fixable, high_unfixed, high_excepted, findings;
	json_t *failures;
};

static void add_failure(struct tally *t, const char *reason, const char *role, const char *id,
			const char *pkg, const char *ver)
{
	if (json_array_size(t->failures) >= AG_IMAGES_VULN_LIST_MAX)
		return; /* the counts stay exact */
	json_array_append_new(t->failures,
			      json_pack("{s:s, s:s, s:s, s:s, s:s}", "reason", reason, "image_role",
					role, "id", id ? id : "", "package", pkg ? pkg : "",
					"installed_version", ver ? ver : ""));
}

static bool exc_matches(json_t *e, enum ag_image_role role, const char *id, const char *pkg,
			const char *ver)
{
	const char *rs = json_string_value(json_object_get(e, "image_role"));
	return rs && strcmp(rs, ag_image_role_name(role)) == 0 &&
	       strcmp(json_string_value(json_object_get(e, "id")), id) == 0 &&
	       strcmp(json_string_value(json_object_get(e, "package")), pkg) == 0 &&
	       strcmp(json_string_value(json_object_get(e, "installed_version")), ver) == 0;
}

static int scan_report(json_t *rep, enum ag_image_role role, json_t *excs, bool *used,
		       const char *today, struct tally *t, struct ag_error **err)
{
	json_t *sv = json_object_get(rep, "SchemaVersion");
	json_t *results = json_object_get(rep, "Results");
	if (!json_is_integer(sv) || json_integer_value(sv) != 2)
		return ag_err(err, AG_E_CONFIG, 0, "images.vuln.report_schema",
			      "a report is not Trivy JSON SchemaVersion 2");
	/* A report without Results says nothing was scanned: not clean. */
	if (!json_is_array(results))
		return ag_err(err, AG_E_CONFIG, 0, "images.vuln.report_results",
			      "a report has no Results list (scanner output incomplete)");
	const char *rn = ag_image_role_name(role);
	size_t i, j;
	json_t *r, *v;
	json_array_foreach(results, i, r)
	{
		json_t *vulns = json_object_get(r, "Vulnerabilities");
		if (!json_is_object(r) || (vulns && !json_is_null(vulns) && !json_is_array(vulns)))
			return ag_err(err, AG_E_CONFIG, 0, "images.vuln.report_shape",
				      "a report result is malformed");
		json_array_foreach(vulns, j, v)
		{
			if (++t->findings > AG_IMAGES_VULN_MAX_FINDINGS)
				return ag_err(err, AG_E_LIMIT, 0, "images.vuln.findings",
					      "more than %d findings", AG_IMAGES_VULN_MAX_FINDINGS);
			const char *id = json_string_value(json_object_get(v, "VulnerabilityID"));
			const char *pkg = json_string_value(json_object_get(v, "PkgName"));
			const char *ver = json_string_value(json_object_get(v, "InstalledVersion"));
			const char *sev = json_string_value(json_object_get(v, "Severity"));
			json_t *fixed = json_object_get(v, "FixedVersion");
			if (!id || !pkg || !ver || !sev || (fixed && !json_is_string(fixed)))
				return ag_err(
				    err, AG_E_CONFIG, 0, "images.vuln.finding_shape",
				    "a finding lacks its id, package, version or severity");
			if (strcmp(sev, "CRITICAL") == 0) {
				t->critical++;
				add_failure(t, "critical", rn, id, pkg, ver);
			} else if (strcmp(sev, "HIGH") == 0) {
				if (fixed && json_string_length(fixed) > 0) {
					t->high_fixable++;
					add_failure(t, "fixable_high", rn, id, pkg, ver);
					continue;
				}
				t->high_unfixed++;
				bool ok = false;
				size_t k;
				json_t *e;
				json_array_foreach(excs, k, e)
				{
					if (!exc_matches(e, role, id, pkg, ver))
						continue;
					used[k] = true;
					const char *exp =
					    json_string_value(json_object_get(e, "expires_on"));
					if (role == AG_ROLE_AGENT || strcmp(exp, today) < 0)
						continue; /* reported below per exception */
					ok = true;
				}
				if (ok)
					t->high_excepted++;
				else
					add_failure(t, "unexcepted_high", rn, id, pkg, ver);
			}
		}
	}
	return 0;
}

int ag_vuln_policy_run(const char *exceptions_path, const struct ag_vuln_report_input *reports,
		       size_t nreports, const char *today, json_t **result, struct ag_error **err)
{
	if (nreports > AG_IMAGES_VULN_MAX_REPORTS)
		return ag_err(err, AG_E_LIMIT, 0, "images.vuln.reports", "more than %d reports",
			      AG_IMAGES_VULN_MAX_REPORTS);
	json_t *doc = load(exceptions_path, "exceptions file", err);
	if (!doc)
		return -1;
	if (check_exceptions(doc, today, err) < 0) {
		json_decref(doc);
		return -1;
	}
	json_t *excs = json_object_get(doc, "exceptions");
	size_t nexc = json_array_size(excs);
	bool *used = ag_xcalloc(nexc ? nexc : 1, sizeof(bool));
	struct tally t = {0, 0, 0, 0, 0, json_array()};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < nreports; i++) {
		json_t *rep = load(reports[i].path, "scan report", err);
		if (!rep) {
			rc = -1;
			break;
		}
		rc = scan_report(rep, reports[i].role, excs, used, today, &t, err);
		json_decref(rep);
	}
	if (rc == 0) {
		/* Exception-level failures: forbidden, expired, stale. */
		size_t k;
		json_t *e;
		json_array_foreach(excs, k, e)
		{
			const char *id = json_string_value(json_object_get(e, "id"));
			const char *pkg = json_string_value(json_object_get(e, "package"));
			const char *ver =
			    json_string_value(json_object_get(e, "installed_version"));
			const char *rs = json_string_value(json_object_get(e, "image_role"));
			if (strcmp(rs, "agent") == 0)
				add_failure(&t, "agent_exception_forbidden", rs, id, pkg, ver);
			else if (strcmp(json_string_value(json_object_get(e, "expires_on")),
					today) < 0)
				add_failure(&t, "expired_exception", rs, id, pkg, ver);
			else if (nreports && !used[k])
				add_failure(&t, "stale_exception", rs, id, pkg, ver);
		}
		const char *status = nreports == 0		   ? "not_scanned"
				     : json_array_size(t.failures) ? "fail"
								   : "pass";
		if (nreports == 0 && json_array_size(t.failures))
			status = "fail";
		*result = json_pack("{s:s, s:b, s:I, s:{s:I, s:I, s:I, s:I}, s:o}", "status",
				    status, "scanner_failures_suppressed", 0, "reports",
				    (json_int_t)nreports, "counts", "critical", t.critical,
				    "high_fixable", t.high_fixable, "high_unfixed", t.high_unfixed,
				    "high_excepted", t.high_excepted, "failures", t.failures);
		t.failures = NULL;
	}
	json_decref(t.failures);
	free(used);
	json_decref(doc);
	return rc;
}
