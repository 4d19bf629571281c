#include "lib/base/ag.h"
#include "cli/cli.h"
#include "cli/keys.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/termsafe.h"
#include "lib/evidence/verify.h"
#include "lib/run/recover.h"
#include "lib/report/report.h"

#include <dirent.h>
#include <jansson.h>
#include <sys/stat.h>
#include <time.h>

static const char help[] =
    "Usage: agentguard report RUN_DIR|FILE [--format FORMAT] [--public-key FILE]...\n"
    "       agentguard report --list [--runs-root DIR] [--json] [--public-key FILE]...\n"
    "\n"
    "Render a contained-run artifact after verifying it exactly as\n"
    "'agentguard evidence verify' does (signature by a trusted key: one given\n"
    "with --public-key or the local signing key); an artifact that does not\n"
    "verify is refused (exit 2). FORMAT is one of:\n"
    "  text    terminal summary (default)\n"
    "  md      Markdown for $GITHUB_STEP_SUMMARY, with ## Containment Evidence\n"
    "  html    one self-contained page (inline CSS, no script, no external URL)\n"
    "  json    the canonical artifact as-is\n"
    "  sarif   SARIF 2.1.0 of the checks (failed checks are results)\n"
    "  junit   JUnit XML of the checks\n"
    "The report goes to standard output. For a study run, text, md and html\n"
    "also show its egress: the verdict, the destinations with request and\n"
    "byte counts (from the sealed manifest), the self-tests, the gateway image.\n"
    "\n"
    "--list prints the runs of DIR (default .agentguard/contained-runs), newest\n"
    "first, one line each: run id, result, exit code, time (UTC), evidence state;\n"
    "with --json one object (docs/json-output.md, agentguard.run-list).\n"
    "A run that does not verify shows no result or exit code (its claims are not\n"
    "evidence), only INVALID and the reason; a run that crashed and was\n"
    "recovered by 'agentguard cleanup' (a signed recovery record) shows\n"
    "'recovered', also without a result.\n"
    "\n"
    "Exit codes: 0 written, 2 invalid artifact or usage error.\n";

struct row {
	char *run_id;
	char *line;
	json_t *obj; /* --json */
	time_t mtime;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return -strcmp(x->run_id, y->run_id);
}

static void put_field(struct ag_buf *b, const char *s)
{
	struct ag_error *e = NULL;
	if (ag_termsafe_add(b, s, strlen(s), &e) < 0)
		ag_error_free(e); /* the line stays cut at its bound */
}

/* A JSON string of an untrusted value, or null when it is not UTF-8. */
static json_t *jstr_or_null(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	return j ? j : json_null();
}

static int print_list_json(struct row *rows, size_t n, bool exists, bool more)
{
	json_t *runs = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(runs, rows[i].obj);
	json_t *o = json_pack("{s:b, s:o, s:b}", "runs_root_exists", exists, "runs", runs,
			      "truncated", more);
	return ag_cli_json_print(o, "agentguard.run-list") == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

/* A run that does not verify but carries a valid recovery record (recover.h). */
static bool is_recovered(int dfd, const char *name, const struct ag_trust *trust)
{
	int afd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (afd < 0)
		return false;
	struct ag_error *e = NULL;
	bool ok = ag_run_recovered_check(afd, name, trust, &e) == 0;
	ag_error_free(e);
	close(afd);
	return ok;
}

/* One run of the list: verified (its claims), recovered, or INVALID (no claims). */
static void list_row(int dfd, const char *root, const char *name, time_t mt,
		     const struct ag_trust *trust, struct row *row)
{
	char *path = ag_xasprintf("%s/%s", root, name);
	struct ag_verify_report rep;
	struct ag_error *err = NULL;
	struct ag_verify_opts vo = {.trust = trust};
	int rc = ag_evidence_verify(path, &vo, &rep, &err);
	free(path);
	bool recovered = rc < 0 && is_recovered(dfd, name, trust);
	const char *state = rc == 0 ? "verified" : recovered ? "recovered" : "invalid";
	int afd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (afd >= 0) {
		struct stat as;
		if (fstatat(afd, "contained-run.json", &as, AT_SYMLINK_NOFOLLOW) == 0)
			mt = as.st_mtime;
		close(afd);
	}
	struct ag_buf b = AG_BUF_INIT(4096, "limit.report.list");
	put_field(&b, name);
	const json_t *a = rc == 0 ? rep.artifact : NULL; /* unverified: no claims */
	const char *result = json_string_value(json_object_get(a, "result"));
	const json_t *ec = json_object_get(a, "exit_code");
	char exitbuf[32] = "-";
	if (json_is_integer(ec))
		snprintf(exitbuf, sizeof(exitbuf), "%" JSON_INTEGER_FORMAT, json_integer_value(ec));
	struct tm tm;
	char when[32] = "-";
	if (gmtime_r(&mt, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	bool invalid = rc < 0 && !recovered;
	struct ag_error *e = NULL;
	if (ag_buf_addf(&b, &e, "  %-4s  exit %-3s  %s  ",
			result && strlen(result) <= 4 ? result : "-", exitbuf, when) < 0 ||
	    ag_buf_adds(&b, invalid ? "INVALID [" : state, &e) < 0 ||
	    (invalid && (ag_buf_adds(&b, err->reason, &e) < 0 || ag_buf_adds(&b, "]", &e) < 0)))
		ag_error_free(e);
	row->run_id = ag_xstrdup(name);
	row->line = ag_buf_detach(&b, NULL);
	row->obj =
	    json_pack("{s:o, s:o, s:o, s:s, s:b, s:s, s:o}", "run_id", jstr_or_null(name), "result",
		      jstr_or_null(result), "exit_code",
		      json_is_integer(ec) ? json_integer(json_integer_value(ec)) : json_null(),
		      "time", when, "verified", rc == 0, "state", state, "reason",
		      invalid && err ? jstr_or_null(err->reason) : json_null());
	row->mtime = mt;
	ag_error_free(err);
	ag_verify_report_release(&rep);
}

static int open_runs_root(const char *root, DIR **out)
{
	*out = NULL;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		ag_cli_json_error("config", "report.runs_root", "cannot open the runs root", NULL);
		fprintf(stderr,
			"agentguard: error: cannot open the runs root: %s [report.runs_root]\n",
			strerror(errno));
		return -1;
	}
	*out = fdopendir(fd);
	if (!*out) {
		close(fd);
		ag_cli_json_error("config", "report.runs_root", "cannot read the runs root", NULL);
		fprintf(stderr,
			"agentguard: error: cannot read the runs root [report.runs_root]\n");
		return -1;
	}
	return 0;
}

static int list_runs(const char *root, const struct ag_trust *trust)
{
	DIR *d = NULL;
	int orc = open_runs_root(root, &d);
	if (orc < 0)
		return AG_EXIT_CONFIG;
	if (orc > 0) {
		if (ag_cli_json_mode)
			return print_list_json(NULL, 0, false, false);
		puts("no runs: the runs root does not exist");
		return AG_EXIT_PASS;
	}
	struct row *rows = NULL;
	size_t n = 0;
	bool more = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (n >= AG_REPORT_LIST_RUNS_MAX) {
			more = true;
			break;
		}
		rows = ag_xrealloc(rows, (n + 1) * sizeof(*rows));
		list_row(dirfd(d), root, de->d_name, st.st_mtime, trust, &rows[n]);
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(rows, n, sizeof(*rows), row_cmp);
	int rc = AG_EXIT_PASS;
	if (ag_cli_json_mode)
		rc = print_list_json(rows, n, true, more);
	else if (n == 0)
		puts("no runs");
	for (size_t i = 0; i < n; i++) {
		if (!ag_cli_json_mode)
			puts(rows[i].line);
		free(rows[i].line);
		free(rows[i].run_id);
		json_decref(rows[i].obj);
	}
	free(rows);
	if (more && !ag_cli_json_mode)
		printf("(more than %d runs; the rest are not listed)\n", AG_REPORT_LIST_RUNS_MAX);
	return rc;
}

int ag_cmd_report(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *runs = ".agentguard/contained-runs";
	bool list = false, runs_given = false;
	const char *pubs[AG_VERIFY_PUBLIC_KEYS_MAX];
	size_t npubs = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		int pk = ag_cli_public_key_arg("report", argc, argv, &i, pubs, &npubs);
		if (pk < 0)
			return AG_EXIT_CONFIG;
		if (pk > 0) {
			continue;
		} else if (strcmp(a, "--list") == 0) {
			list = true;
		} else if (strcmp(a, "--json") == 0) {
			/* JSON mode was set by ag_cli_json_scan; only with --list */
		} else if (strcmp(a, "--format") == 0 || strcmp(a, "--runs-root") == 0) {
			if (i + 1 >= argc)
				return ag_cli_usage("report", "%s needs a value", a);
			if (a[2] == 'f')
				format = argv[++i];
			else {
				runs = argv[++i];
				runs_given = true;
			}
		} else if (strncmp(a, "--format=", 9) == 0) {
			format = a + 9;
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage("report", "unknown option '%s'", a);
		} else if (!path) {
			path = a;
		} else {
			return ag_cli_usage("report", "unexpected argument '%s'", a);
		}
	}
	if (list && path)
		return ag_cli_usage("report", "--list takes no RUN_DIR");
	struct ag_cli_trust t;
	if (list) {
		int trc = ag_cli_trust_load(&t, pubs, npubs);
		if (trc != AG_EXIT_PASS)
			return trc;
		int lrc = list_runs(runs, &t.trust);
		ag_cli_trust_release(&t);
		return lrc;
	}
	if (runs_given)
		return ag_cli_usage("report", "--runs-root goes with --list");
	if (ag_cli_json_mode)
		return ag_cli_usage("report", "--json goes with --list (the artifact itself is "
					      "--format json)");
	if (!path)
		return ag_cli_usage("report", "missing argument RUN_DIR|FILE");
	enum ag_report_format fmt;
	if (ag_report_format_parse(format, &fmt) < 0)
		return ag_cli_usage(
		    "report", "unknown format '%s' (text, md, html, json, sarif, junit)", format);
	int trc = ag_cli_trust_load(&t, pubs, npubs);
	if (trc != AG_EXIT_PASS)
		return trc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_verify_report rep;
	struct ag_verify_opts vo = {.trust = &t.trust};
	int vrc = ag_evidence_verify(path, &vo, &rep, &err);
	ag_cli_trust_release(&t);
	if (vrc < 0) {
		ag_err_wrap(&err, "refusing to report an artifact that does not verify");
		ag_cli_print_error(err);
		ag_verify_report_release(&rep);
		return AG_EXIT_CONFIG;
	}
	/* A study run's egress manifest, re-read beside the verified artifact
	 * (shown only while its SHA-256 is still the sealed one). */
	struct ag_report_egress eg = {0};
	bool study = json_is_object(json_object_get(rep.artifact, "study_egress"));
	if (study) {
		struct ag_error *de = NULL;
		int rfd = ag_evidence_run_dir(path, &de);
		if (rfd >= 0) {
			ag_report_egress_load_at(rfd, rep.artifact, &eg);
			close(rfd);
		} else {
			eg.problem = "the run directory could not be opened";
		}
		ag_error_free(de);
	}
	struct ag_buf out = AG_BUF_INIT(AG_REPORT_MAX_BYTES, "limit.report.size");
	int rc = ag_report_render_run(rep.artifact, rep.bytes, rep.len, study ? &eg : NULL, fmt,
				      &out, &err);
	ag_report_egress_release(&eg);
	ag_verify_report_release(&rep);
	if (rc < 0) {
		ag_buf_release(&out);
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	bool ok = fwrite(out.buf, 1, out.len, stdout) == out.len && fflush(stdout) == 0;
	ag_buf_release(&out);
	if (!ok) {
		fprintf(stderr, "agentguard: error: cannot write the report [report.io]\n");
		return AG_EXIT_CONFIG;
	}
	return AG_EXIT_PASS;
}
