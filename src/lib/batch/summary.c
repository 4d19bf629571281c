/*
 * summary.c: what a batch says about its trials. Every claim about a trial
 * (its result, exit code, duration, egress denials) is read from that
 * trial's verified evidence, never from a child's say-so or an earlier
 * summary; a trial without verified evidence says only how its process
 * ended and why (the error's reason token).
 */
#include "lib/batch/batch.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/json.h"
#include "lib/evidence/verify.h"

#include <math.h>

#define SUMMARY_SCHEMA "agentguard.batch-summary"

static const char *exit_name(int code)
{
	static const char *const names[] = {"pass",   "fail",	"config",  "preflight", "workspace",
					    "policy", "docker", "timeout", "cleanup"};
	if (code < 0)
		return "not_run";
	if (code < (int)AG_ARRAY_SIZE(names))
		return names[code];
	if (code > 128 && code < 160)
		return "cancelled";
	return "other";
}

/* Fills rec from the run's verified artifact; false when it does not verify.
 * The trial's directory and the run's are opened without following a link;
 * a study run's artifact must name this trial (its trial id). */
static const char *jpath_str(const json_t *a, const char *path)
{
	return ag_json_path_str(a, path);
}

static bool from_evidence(json_t *rec, int trials_fd, const char *id, const char *run_id,
			  const struct ag_trust *trust, const char **problem)
{
	int tfd = openat(trials_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd =
	    tfd >= 0 ? openat(tfd, run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (tfd >= 0)
		close(tfd);
	if (fd < 0) {
		*problem = "batch.evidence.missing";
		return false;
	}
	struct ag_verify_report rep;
	struct ag_error *err = NULL;
	struct ag_verify_opts vo = {.trust = trust};
	int rc = ag_evidence_verify_at(fd, &vo, &rep, &err);
	if (rc < 0) {
		*problem = err && err->reason ? err->reason : "evidence.unverified";
		ag_error_free(err);
		ag_verify_report_release(&rep);
		close(fd);
		return false;
	}
	const json_t *a = rep.artifact;
	const char *tid = jpath_str(a, "study_egress.trial_id");
	if (json_is_object(json_object_get(a, "study_egress")) && (!tid || strcmp(tid, id) != 0)) {
		*problem = "batch.evidence.other_trial";
		ag_verify_report_release(&rep);
		close(fd);
		return false;
	}
	const json_t *ec = json_object_get(a, "exit_code");
	int code = json_is_integer(ec) ? (int)json_integer_value(ec) : -1;
	json_object_set_new(rec, "exit_code", json_integer(code));
	json_object_set_new(rec, "exit_name", json_string(exit_name(code)));
	json_object_set_new(rec, "result", ag_json_str_or_null(ag_json_path_str(a, "result")));
	json_object_set_new(rec, "outcome",
			    ag_json_str_or_null(ag_json_path_str(a, "command_result.outcome")));
	const json_t *d = json_object_get(a, "duration_seconds");
	json_object_set_new(rec, "duration_seconds",
			    json_is_number(d) ? json_real(round(json_number_value(d) * 1000) / 1000)
					      : json_null());
	/* a study run's sealed count of the requests its gateway denied */
	const json_t *den = ag_json_path(a, "study_egress.denied");
	json_object_set_new(rec, "egress_denied",
			    json_is_integer(den) ? json_integer(json_integer_value(den))
						 : json_null());
	ag_verify_report_release(&rep);
	close(fd);
	return true;
}

json_t *ag_batch_trial_record(const json_t *base, int trials_fd, const char *run_id,
			      const struct ag_trust *trust, const struct ag_batch_outcome *o)
{
	json_t *rec = json_deep_copy(base);
	const char *id = ag_json_path_str(rec, "id");
	const char *problem = NULL;
	bool verified = run_id && id && ag_batch_name_ok(run_id, 255) &&
			from_evidence(rec, trials_fd, id, run_id, trust, &problem);
	if (run_id && !problem && !verified)
		problem = "batch.evidence.run_id";
	if (!verified) {
		json_object_set_new(rec, "exit_code",
				    o->exit_code >= 0 ? json_integer(o->exit_code) : json_null());
		json_object_set_new(rec, "exit_name", json_string(exit_name(o->exit_code)));
		json_object_set_new(rec, "result", json_null());
		json_object_set_new(rec, "outcome", json_null());
		json_object_set_new(rec, "duration_seconds",
				    o->wall_ms ? json_real((double)o->wall_ms / 1000)
					       : json_null());
		json_object_set_new(rec, "egress_denied", json_null());
	}
	bool reason_ok = o->reason && ag_batch_name_ok(o->reason, AG_BATCH_REASON_MAX);
	json_object_set_new(rec, "reason", reason_ok ? json_string(o->reason) : json_null());
	json_object_set_new(rec, "resumed", json_boolean(o->resumed && verified));
	json_t *ev = json_object();
	json_object_set_new(ev, "verified", json_boolean(verified));
	json_object_set_new(ev, "run_id", verified ? json_string(run_id) : json_null());
	json_object_set_new(ev, "path",
			    verified ? json_sprintf("%s/%s/%s", AG_BATCH_TRIALS_DIR, id, run_id)
				     : json_null());
	json_object_set_new(ev, "problem",
			    !verified && problem ? json_string(problem) : json_null());
	json_object_set_new(rec, "evidence", ev);
	return rec;
}

json_t *ag_batch_trial_base(const struct ag_batch *b, const struct ag_batch_trial *t)
{
	const struct ag_batch_entry *e = &b->entries[t->entry];
	return json_pack("{s:s, s:s, s:I, s:I, s:s}", "id", t->id, "entry", e->name, "repetition",
			 (json_int_t)t->rep, "index", (json_int_t)t->index, "mode",
			 e->mode == AG_BATCH_STUDY ? "study" : "contained");
}

bool ag_batch_record_final(const json_t *rec)
{
	return json_is_true(ag_json_path(rec, "evidence.verified")) &&
	       strcmp(ag_json_path_str(rec, "exit_name") ?: "", "cancelled") != 0;
}

static int by_index(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "index"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "index"));
	return x < y ? -1 : x > y;
}

json_t *ag_batch_summary_of(const char *sha256, size_t total, json_t *records, unsigned shard_k,
			    unsigned shard_n, json_t *plan)
{
	size_t n = json_array_size(records);
	json_t **v = ag_xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(records, i);
	qsort(v, n, sizeof(*v), by_index);
	json_t *sorted = json_array();
	json_t *outcomes = json_object();
	json_int_t passed = 0, failed = 0, not_run = 0;
	for (size_t i = 0; i < n; i++) {
		json_array_append(sorted, v[i]);
		/* an exit without verified evidence is only the child's (or, in a
		 * merge, an unsigned summary's) word: counted apart */
		const char *name =
		    json_is_true(ag_json_path(v[i], "evidence.verified"))
			? ag_json_path_str(v[i], "exit_name") ?: "other"
		    : strcmp(ag_json_path_str(v[i], "exit_name") ?: "", "not_run") == 0
			? "not_run"
			: "unverified";
		json_t *c = json_object_get(outcomes, name);
		json_object_set_new(outcomes, name,
				    json_integer((c ? json_integer_value(c) : 0) + 1));
		if (!ag_batch_record_final(v[i]))
			not_run++;
		else if (!strcmp(name, "pass"))
			passed++;
		else
			failed++;
	}
	free(v);
	json_decref(records);
	json_t *s = json_object();
	json_object_set_new(s, "schema", json_string(SUMMARY_SCHEMA));
	json_object_set_new(s, "schema_version", json_integer(1));
	json_object_set_new(s, "batch_sha256", json_string(sha256));
	json_object_set_new(s, "trials_total", json_integer((json_int_t)total));
	json_object_set_new(s, "shard",
			    shard_n ? json_pack("{s:I, s:I}", "index", (json_int_t)shard_k, "count",
						(json_int_t)shard_n)
				    : json_null());
	json_object_set_new(s, "plan", plan ? plan : json_null());
	json_object_set_new(s, "trials_in_scope", json_integer((json_int_t)n));
	json_object_set_new(s, "passed", json_integer(passed));
	json_object_set_new(s, "failed", json_integer(failed));
	json_object_set_new(s, "not_run", json_integer(not_run));
	json_object_set_new(s, "pass_rate",
			    json_real(n ? round((double)passed / (double)n * 10000) / 10000 : 0));
	json_object_set_new(s, "complete", json_boolean(not_run == 0));
	json_object_set_new(s, "exit_outcomes", outcomes);
	json_object_set_new(s, "trials", sorted);
	return s;
}

json_t *ag_batch_summary(const struct ag_batch *b, json_t *records, unsigned shard_k,
			 unsigned shard_n, json_t *plan)
{
	return ag_batch_summary_of(b->sha256, b->n_trials, records, shard_k, shard_n, plan);
}

/* ---- rendering ---- */

enum esc { ESC_TEXT, ESC_MD, ESC_HTML };

/* Values are names and numbers AgentGuard checked; escaped all the same. */
static int put(struct ag_buf *o, enum esc m, const char *s, struct ag_error **err)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int rc;
		if (*p < 0x20 || *p == 0x7f)
			rc = ag_buf_addf(o, err, "\\x%02x", *p);
		else if (m == ESC_HTML && strchr("<>&\"'", *p))
			rc = ag_buf_addf(o, err, "&#%d;", *p);
		else if (m == ESC_MD && strchr("\\`*_{}[]<>()#+!|", *p))
			rc = ag_buf_addf(o, err, "\\%c", *p);
		else
			rc = ag_buf_add(o, p, 1, err);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static const char *cell_str(const json_t *rec, const char *path, char *tmp, size_t n)
{
	const json_t *v = ag_json_path(rec, path);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(tmp, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(tmp, n, "%.3f", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(tmp, n, "%s", json_is_true(v) ? "yes" : "no");
	else
		snprintf(tmp, n, "-");
	return tmp;
}

static const char *const columns[][2] = {{"id", "trial"},
					 {"exit_name", "exit"},
					 {"result", "result"},
					 {"outcome", "outcome"},
					 {"duration_seconds", "seconds"},
					 {"egress_denied", "denied"},
					 {"evidence.path", "evidence"},
					 {"evidence.problem", "problem"}};

static int render_rows(const json_t *s, enum esc m, struct ag_buf *o, struct ag_error **err)
{
	const char *open = m == ESC_HTML ? "<tr>" : m == ESC_MD ? "|" : "";
	const char *sep_open = m == ESC_HTML ? "<td>" : m == ESC_MD ? " " : "";
	const char *sep_close = m == ESC_HTML ? "</td>" : m == ESC_MD ? " |" : "  ";
	const char *close_ = m == ESC_HTML ? "</tr>\n" : "\n";
	if (ag_buf_adds(o, m == ESC_HTML ? "<table>\n<tr>" : open, err) < 0)
		return -1;
	for (size_t c = 0; c < AG_ARRAY_SIZE(columns); c++)
		if (ag_buf_addf(o, err, "%s%s%s", m == ESC_HTML ? "<th>" : sep_open, columns[c][1],
				m == ESC_HTML ? "</th>" : sep_close) < 0)
			return -1;
	if (ag_buf_adds(o, close_, err) < 0)
		return -1;
	if (m == ESC_MD) {
		if (ag_buf_adds(o, "|", err) < 0)
			return -1;
		for (size_t c = 0; c < AG_ARRAY_SIZE(columns); c++)
			if (ag_buf_adds(o, " --- |", err) < 0)
				return -1;
		if (ag_buf_adds(o, "\n", err) < 0)
			return -1;
	}
	size_t i;
	const json_t *rec;
	json_array_foreach(json_object_get(s, "trials"), i, rec)
	{
		if (ag_buf_adds(o, open, err) < 0)
			return -1;
		for (size_t c = 0; c < AG_ARRAY_SIZE(columns); c++) {
			char tmp[64];
			if (ag_buf_adds(o, sep_open, err) < 0 ||
			    put(o, m, cell_str(rec, columns[c][0], tmp, sizeof(tmp)), err) < 0 ||
			    ag_buf_adds(o, sep_close, err) < 0)
				return -1;
		}
		if (ag_buf_adds(o, close_, err) < 0)
			return -1;
	}
	return m == ESC_HTML ? ag_buf_adds(o, "</table>\n", err) : 0;
}

static int render_head(const json_t *s, enum esc m, struct ag_buf *o, struct ag_error **err)
{
	json_int_t n = json_integer_value(json_object_get(s, "trials_in_scope"));
	char line[512];
	snprintf(line, sizeof(line),
		 "%" JSON_INTEGER_FORMAT " trials: %" JSON_INTEGER_FORMAT
		 " passed, %" JSON_INTEGER_FORMAT " failed, %" JSON_INTEGER_FORMAT
		 " not run (pass rate %.1f%%)",
		 n, json_integer_value(json_object_get(s, "passed")),
		 json_integer_value(json_object_get(s, "failed")),
		 json_integer_value(json_object_get(s, "not_run")),
		 json_number_value(json_object_get(s, "pass_rate")) * 100);
	const json_t *sh = json_object_get(s, "shard");
	char scope[160];
	if (json_is_object(sh))
		snprintf(scope, sizeof(scope),
			 "shard %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
			 " of a batch of %" JSON_INTEGER_FORMAT " trials",
			 json_integer_value(json_object_get(sh, "index")),
			 json_integer_value(json_object_get(sh, "count")),
			 json_integer_value(json_object_get(s, "trials_total")));
	else if (json_is_integer(json_object_get(s, "merged_shards")))
		snprintf(scope, sizeof(scope),
			 "merged from %" JSON_INTEGER_FORMAT " shards (every trial's evidence "
			 "verified)",
			 json_integer_value(json_object_get(s, "merged_shards")));
	else
		snprintf(scope, sizeof(scope), "the whole batch");
	const char *sha = ag_json_path_str(s, "batch_sha256") ?: "-";
	struct ag_buf outc = AG_BUF_INIT(4096, "limit.batch.render");
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)json_object_get(s, "exit_outcomes"), k, v)
	{
		if (ag_buf_addf(&outc, err, "%s%s %" JSON_INTEGER_FORMAT, outc.len ? ", " : "", k,
				json_integer_value(v)) < 0) {
			ag_buf_release(&outc);
			return -1;
		}
	}
	int rc = -1;
	switch (m) {
	case ESC_TEXT:
		rc = ag_buf_addf(o, err, "AgentGuard batch: %s\n%s; batch file sha256 %s\n", line,
				 scope, sha);
		break;
	case ESC_MD:
		rc = ag_buf_addf(o, err,
				 "## AgentGuard batch\n\n%s\n\n%s; batch file sha256 `%s`\n\n",
				 line, scope, sha);
		break;
	case ESC_HTML:
		rc =
		    ag_buf_addf(o, err,
				"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
				"<title>AgentGuard batch</title><style>body{font-family:sans-serif;"
				"margin:2em}table{border-collapse:collapse}td,th{border:1px solid "
				"#999;padding:.2em .5em;text-align:left}</style></head><body>\n"
				"<h1>AgentGuard batch</h1>\n<p>%s</p>\n<p>%s; batch file sha256 "
				"<code>%s</code></p>\n",
				line, scope, sha);
		break;
	}
	if (rc == 0 && outc.len) {
		if (m == ESC_HTML)
			rc = ag_buf_adds(o, "<p>exit outcomes: ", err) < 0 ||
				     put(o, m, outc.buf, err) < 0 ||
				     ag_buf_adds(o, "</p>\n", err) < 0
				 ? -1
				 : 0;
		else
			rc = ag_buf_adds(o, "exit outcomes: ", err) < 0 ||
				     put(o, m, outc.buf, err) < 0 ||
				     ag_buf_adds(o, m == ESC_MD ? "\n\n" : "\n", err) < 0
				 ? -1
				 : 0;
	}
	ag_buf_release(&outc);
	return rc;
}

int ag_batch_render(const json_t *summary, const char *fmt, struct ag_buf *out,
		    struct ag_error **err)
{
	enum esc m;
	if (!strcmp(fmt, "text"))
		m = ESC_TEXT;
	else if (!strcmp(fmt, "md"))
		m = ESC_MD;
	else if (!strcmp(fmt, "html"))
		m = ESC_HTML;
	else
		return ag_err(err, AG_E_USAGE, 0, "batch.format", "unknown summary format");
	if (render_head(summary, m, out, err) < 0 || render_rows(summary, m, out, err) < 0)
		return -1;
	return m == ESC_HTML ? ag_buf_adds(out, "</body></html>\n", err) : 0;
}

int ag_batch_write_summary(int out_fd, const json_t *summary, struct ag_error **err)
{
	char *dump = json_dumps(summary, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_ENSURE_ASCII);
	if (!dump)
		return ag_err(err, AG_E_INTERNAL, 0, "batch.summary",
			      "the summary cannot be written");
	char *js = ag_xasprintf("%s\n", dump);
	free(dump);
	int rc = ag_write_file_atomic_at(out_fd, AG_BATCH_SUMMARY_FILE, AG_BATCH_SUMMARY_FILE, js,
					 strlen(js), 0644, false, err);
	free(js);
	static const char *const fmts[][2] = {{"text", "batch-summary.txt"},
					      {"md", "batch-summary.md"},
					      {"html", "batch-summary.html"}};
	for (size_t i = 0; rc == 0 && i < AG_ARRAY_SIZE(fmts); i++) {
		struct ag_buf b = AG_BUF_INIT(AG_BATCH_RENDER_MAX, "limit.batch.render");
		rc = ag_batch_render(summary, fmts[i][0], &b, err);
		if (rc == 0)
			rc = ag_write_file_atomic_at(out_fd, fmts[i][1], fmts[i][1], b.buf, b.len,
						     0644, false, err);
		ag_buf_release(&b);
	}
	return rc;
}

/* ---- merge ---- */

static bool sha_ok(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static int read_summary(const char *dir, size_t which, json_t **out, struct ag_error **err)
{
	static const struct ag_read_reasons why = {"batch.merge.symlink", "batch.merge.not_regular",
						   "batch.merge.read", "batch.merge.too_large"};
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ag_err(err, AG_E_IO, errno, "batch.merge.read",
			      "shard directory %zu cannot be opened", which + 1);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(fd, AG_BATCH_SUMMARY_FILE, AG_BATCH_SUMMARY_FILE,
			    AG_BATCH_SUMMARY_MAX_BYTES, &why, &data, &len, err) < 0)
		return ag_err_wrap(err, "shard directory %zu", which + 1);
	json_error_t je;
	json_t *s = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!s || !json_is_object(s) ||
	    strcmp(ag_json_path_str(s, "schema") ?: "", SUMMARY_SCHEMA) != 0 ||
	    json_integer_value(json_object_get(s, "schema_version")) != 1 ||
	    !sha_ok(ag_json_path_str(s, "batch_sha256")) ||
	    !json_is_integer(json_object_get(s, "trials_total")) ||
	    !json_is_array(json_object_get(s, "trials"))) {
		json_decref(s);
		return ag_err(err, AG_E_UNVERIFIED, 0, "batch.merge.summary",
			      "shard directory %zu holds no batch summary AgentGuard wrote",
			      which + 1);
	}
	*out = s;
	return 0;
}

#define MERGE_FAIL(reason, ...) ag_err(err, AG_E_UNVERIFIED, 0, reason, __VA_ARGS__)

/* One shard's records, recomputed from evidence, appended to records. */
/* What the merge holds of the trials it has read: by index, the trial's id
 * and entry, and where each entry's repetitions start. */
struct merge_seen {
	char **id, **entry;
	json_int_t *offset; /* index - repetition, the same for every repetition */
	size_t total;
};

/* The trial's identity is consistent: id is ENTRY (repetition 1) or
 * ENTRY.REP, unique in the merge, and each entry's repetitions sit at one
 * offset, as the batch file's expansion puts them. A shard summary is not
 * signed: this is what keeps a record from borrowing another trial's
 * evidence (the evidence lives under trials/<id>). */
static const char *identity_problem(const struct merge_seen *m, const char *id, const char *entry,
				    json_int_t rep, json_int_t idx)
{
	char want[AG_BATCH_NAME_MAX + 32];
	snprintf(want, sizeof(want), "%s.%" JSON_INTEGER_FORMAT, entry, rep);
	if (rep < 1 || (strcmp(id, want) != 0 && !(rep == 1 && strcmp(id, entry) == 0)))
		return "its id is not its entry and repetition";
	for (size_t k = 0; k < m->total; k++) {
		if (!m->id[k])
			continue;
		if (strcmp(m->id[k], id) == 0)
			return "its id is another trial's";
		if (strcmp(m->entry[k], entry) == 0 && m->offset[k] != idx - rep)
			return "its entry's repetitions are not where the batch file puts them";
	}
	return NULL;
}

static int merge_shard(const char *dir, size_t which, const json_t *s, size_t total,
		       unsigned char *seen, struct merge_seen *ms, const struct ag_trust *trust,
		       json_t *records, struct ag_error **err)
{
	_cleanup_free_ char *tdir = ag_xasprintf("%s/%s", dir, AG_BATCH_TRIALS_DIR);
	_cleanup_close_ int tfd = open(tdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	size_t i;
	const json_t *r;
	json_array_foreach(json_object_get(s, "trials"), i, r)
	{
		const char *id = ag_json_path_str(r, "id");
		const json_t *ix = json_object_get(r, "index");
		json_int_t idx = json_is_integer(ix) ? json_integer_value(ix) : -1;
		if (!id || !ag_batch_name_ok(id, AG_BATCH_NAME_MAX + 8) || idx < 0 ||
		    (size_t)idx >= total ||
		    !ag_batch_name_ok(ag_json_path_str(r, "entry"), AG_BATCH_NAME_MAX) ||
		    !json_is_integer(json_object_get(r, "repetition")))
			return MERGE_FAIL("batch.merge.summary",
					  "shard directory %zu: trial record %zu is malformed",
					  which + 1, i);
		if (seen[idx])
			return MERGE_FAIL("batch.merge.overlap",
					  "trial '%s' (index %" JSON_INTEGER_FORMAT
					  ") is in two shards",
					  id, idx);
		json_int_t rep = json_integer_value(json_object_get(r, "repetition"));
		const char *why = identity_problem(ms, id, ag_json_path_str(r, "entry"), rep, idx);
		if (why)
			return MERGE_FAIL(
			    "batch.merge.identity",
			    "shard directory %zu: trial '%s' (index %" JSON_INTEGER_FORMAT "): %s",
			    which + 1, id, idx, why);
		seen[idx] = 1;
		ms->id[idx] = ag_xstrdup(id);
		ms->entry[idx] = ag_xstrdup(ag_json_path_str(r, "entry"));
		ms->offset[idx] = idx - rep;
		const char *mode = ag_json_path_str(r, "mode") ?: "";
		json_t *base = json_pack("{s:s, s:s, s:O, s:I, s:s}", "id", id, "entry",
					 ag_json_path_str(r, "entry"), "repetition",
					 json_object_get(r, "repetition"), "index", idx, "mode",
					 !strcmp(mode, "study") ? "study" : "contained");
		const char *run_id = ag_json_path_str(r, "evidence.run_id");
		const json_t *ec = json_object_get(r, "exit_code");
		struct ag_batch_outcome o = {
		    .exit_code = json_is_integer(ec) ? (int)json_integer_value(ec) : -1,
		    .reason = ag_json_path_str(r, "reason"),
		    .resumed = json_is_true(json_object_get(r, "resumed"))};
		const json_t *d = json_object_get(r, "duration_seconds");
		if (!run_id && json_is_number(d) && json_number_value(d) > 0 &&
		    json_number_value(d) < 1e9)
			o.wall_ms = (uint64_t)(json_number_value(d) * 1000);
		json_t *rec = ag_batch_trial_record(base, tfd, run_id, trust, &o);
		json_decref(base);
		if (run_id && !json_is_true(ag_json_path(rec, "evidence.verified"))) {
			const char *p = ag_json_path_str(rec, "evidence.problem") ?: "unverified";
			int rc = MERGE_FAIL("batch.merge.evidence",
					    "shard directory %zu: the evidence of trial '%s' does "
					    "not verify [%s]",
					    which + 1, id, p);
			json_decref(rec);
			return rc;
		}
		json_array_append_new(records, rec);
	}
	return 0;
}

int ag_batch_merge(const char *const *dirs, size_t n, const struct ag_trust *trust, json_t **out,
		   struct ag_error **err)
{
	json_t **s = ag_xcalloc(n + 1, sizeof(*s));
	unsigned char *seen = NULL, *shard_seen = ag_xcalloc(n + 1, 1);
	struct merge_seen ms = {0};
	json_t *records = json_array();
	int rc = -1;
	const char *sha = NULL;
	json_int_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if (read_summary(dirs[i], i, &s[i], err) < 0)
			goto out;
		const json_t *sh = json_object_get(s[i], "shard");
		json_int_t k = json_integer_value(json_object_get(sh, "index"));
		json_int_t cnt =
		    json_is_object(sh) ? json_integer_value(json_object_get(sh, "count")) : 1;
		if (!json_is_object(sh) && n == 1)
			k = 1;
		if (i == 0) {
			sha = ag_json_path_str(s[0], "batch_sha256");
			total = json_integer_value(json_object_get(s[0], "trials_total"));
			if (total < 1 || total > AG_BATCH_TRIALS_MAX) {
				MERGE_FAIL("batch.merge.summary",
					   "shard directory 1: trials_total is out of range");
				goto out;
			}
		}
		if (strcmp(ag_json_path_str(s[i], "batch_sha256"), sha) != 0 ||
		    json_integer_value(json_object_get(s[i], "trials_total")) != total) {
			MERGE_FAIL("batch.merge.other_batch",
				   "shard directory %zu is a shard of another batch file", i + 1);
			goto out;
		}
		if (cnt != (json_int_t)n || k < 1 || k > cnt || shard_seen[k]) {
			MERGE_FAIL("batch.merge.shards",
				   "shard directory %zu is shard %" JSON_INTEGER_FORMAT
				   "/%" JSON_INTEGER_FORMAT
				   "; merge needs shards 1..%zu of %zu, each once",
				   i + 1, k, cnt, n, n);
			goto out;
		}
		shard_seen[k] = 1;
	}
	seen = ag_xcalloc((size_t)total, 1);
	ms.total = (size_t)total;
	ms.id = ag_xcalloc((size_t)total, sizeof(*ms.id));
	ms.entry = ag_xcalloc((size_t)total, sizeof(*ms.entry));
	ms.offset = ag_xcalloc((size_t)total, sizeof(*ms.offset));
	for (size_t i = 0; i < n; i++)
		if (merge_shard(dirs[i], i, s[i], (size_t)total, seen, &ms, trust, records, err) <
		    0)
			goto out;
	for (json_int_t i = 0; i < total; i++)
		if (!seen[i]) {
			MERGE_FAIL("batch.merge.missing",
				   "trial index %" JSON_INTEGER_FORMAT " is in no shard's summary",
				   i);
			goto out;
		}
	*out = ag_batch_summary_of(sha, (size_t)total, records, 0, 0, NULL);
	records = NULL;
	json_object_set_new(*out, "merged_shards", json_integer((json_int_t)n));
	rc = 0;
out:
	json_decref(records);
	for (size_t i = 0; i < n; i++)
		json_decref(s[i]);
	free(s);
	for (size_t i = 0; i < ms.total; i++) {
		free(ms.id[i]);
		free(ms.entry[i]);
	}
	free(ms.id);
	free(ms.entry);
	free(ms.offset);
	free(seen);
	free(shard_seen);
	return rc;
}
