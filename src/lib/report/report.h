/*
 * report.h: render a verified contained-run artifact for people and tools.
 *
 * Every value taken from the artifact is untrusted (file names and argv
 * come from the agent) and is bounded (AG_REPORT_VALUE_MAX bytes) and
 * escaped for the output format: control characters become \xNN and bidi
 * overrides \uNNNN in every format; Markdown escapes its punctuation and HTML's <>&; HTML and XML
 * escape <>&"'. Formats:
 *   text   terminal summary
 *   md     Markdown for $GITHUB_STEP_SUMMARY, with "## Containment Evidence"
 *   html   one self-contained page (inline CSS, no script, no external URL)
 *   json   the artifact's exact canonical bytes
 *   sarif  SARIF 2.1.0 of the checks (failed checks are results)
 *   junit  JUnit XML of the checks
 * Containment evidence never goes into SARIF or JUnit (it is run
 * provenance, not a finding or a test case). Nor does a study run's egress
 * section (text, md and html: ag_report_render_run).
 */
#ifndef AG_REPORT_H
#define AG_REPORT_H

#include "lib/base/ag.h"

#include <jansson.h>

struct ag_error;
struct ag_buf;

enum ag_report_format {
	AG_REPORT_TEXT,
	AG_REPORT_MD,
	AG_REPORT_HTML,
	AG_REPORT_JSON,
	AG_REPORT_SARIF,
	AG_REPORT_JUNIT,
};

/* "text", "md" (or "markdown"), "html", "json", "sarif", "junit". */
int ag_report_format_parse(const char *s, enum ag_report_format *out);

/*
 * A study run's egress manifest (the artifact's study_egress.manifest, beside
 * it in the run directory) as the report read it. `manifest` is set only when
 * the file's SHA-256 is the one the sealed artifact records; otherwise
 * `problem` says why it is not shown (a static phrase).
 */
struct ag_report_egress {
	json_t *manifest;
	const char *problem;
};

/*
 * Reads AG_EGRESS_MANIFEST_FILE from run_fd for a study run's artifact:
 * O_NOFOLLOW, a regular file of at most AG_EGRESS_MANIFEST_MAX_BYTES, its
 * SHA-256 the artifact's study_egress.manifest_sha256, one JSON object.
 * Never fails: what could not be read is eg->problem. Release with
 * ag_report_egress_release.
 */
void ag_report_egress_load_at(int run_fd, const json_t *artifact, struct ag_report_egress *eg);
void ag_report_egress_release(struct ag_report_egress *eg);

/*
 * Appends the report of `artifact` (already verified; `bytes` are its exact
 * file bytes, used by json) to out. Fails only when out's bound is hit.
 */
int ag_report_render(const json_t *artifact, const char *bytes, size_t len,
		     enum ag_report_format fmt, struct ag_buf *out, struct ag_error **err);
/*
 * The same with a study run's manifest as loaded (eg NULL: not read). text,
 * md and html then show the egress section: the trial's verdict, the
 * destinations grouped by (decision, host, port, reason) with request and
 * byte counts (the manifest's `aggregates` when it has them, else grouped
 * from its events), at most AG_REPORT_EGRESS_ROWS rows, denied first, the
 * self-tests and the gateway image.
 */
int ag_report_render_run(const json_t *artifact, const char *bytes, size_t len,
			 const struct ag_report_egress *eg, enum ag_report_format fmt,
			 struct ag_buf *out, struct ag_error **err);

#endif
