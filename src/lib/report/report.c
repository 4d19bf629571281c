#include "lib/base/ag.h"
#include "lib/base/sanitize.h"
#include "lib/base/size.h"
#include "lib/report/report.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/termsafe.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/egress/manifest.h"
#include "lib/run/contained_run.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>

/*
 * ESC_TERM is ESC_TEXT for a person (the text report): a backtick, which
 * check evidence uses to quote a name, becomes a plain quote. ESC_MD and
 * ESC_HTML turn backtick-quoted spans into <code> elements. ESC_TEXT
 * (SARIF) and ESC_XML keep them as they are.
 */
enum esc { ESC_TEXT, ESC_TERM, ESC_MD, ESC_HTML, ESC_XML };

/* An output buffer that latches its first error, so renderers stay linear. */
struct out {
	struct ag_buf *b;
	struct ag_error **err;
	bool failed;
};

static void put(struct out *o, const char *s)
{
	if (!o->failed && ag_buf_adds(o->b, s, o->err) < 0)
		o->failed = true;
}

static void putn(struct out *o, const char *s, size_t n)
{
	if (!o->failed && ag_buf_add(o->b, s, n, o->err) < 0)
		o->failed = true;
}

AG_PRINTF(2, 3) static void putf(struct out *o, const char *fmt, ...)
{
	if (o->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = ag_xvasprintf(fmt, ap);
	va_end(ap);
	put(o, s);
	free(s);
}

/*
 * Writes n bytes of an untrusted value, bounded and escaped for `mode`;
 * with `spans`, backtick-quoted names are shown as ESC_TERM/MD/HTML say.
 */
static void valn(struct out *o, enum esc mode, const char *s, size_t n, bool spans)
{
	bool cut = false;
	if (n > AG_REPORT_VALUE_MAX) {
		n = AG_REPORT_VALUE_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		cut = true;
	}
	bool code = false; /* inside a backtick-quoted span (MD, HTML) */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[16];
		const char *r = NULL;
		size_t adv = 1;
		if (c == '`' && spans && mode == ESC_TERM) {
			put(o, "'");
			continue;
		}
		if (c == '`' && spans && (mode == ESC_MD || mode == ESC_HTML)) {
			put(o, code ? "</code>" : "<code>");
			code = !code;
			continue;
		}
		/* controls, C1, bidi, line separators, invalid UTF-8: the one escaper */
		if (ag_termsafe_step(s + i, n - i, e, &adv)) {
			put(o, e);
			i += adv - 1;
			continue;
		}
		if (adv > 1) { /* a safe multi-byte character */
			putn(o, s + i, adv);
			i += adv - 1;
			continue;
		} else if (mode == ESC_HTML || mode == ESC_XML || mode == ESC_MD) {
			switch (c) {
			case '&':
				r = "&amp;";
				break;
			case '<':
				r = "&lt;";
				break;
			case '>':
				r = "&gt;";
				break;
			case '"':
				r = "&quot;";
				break;
			case '\'':
				r = "&#39;";
				break;
			default:
				break;
			}
			if (!r && mode == ESC_MD && strchr("\\`*_{}[]()#|~$", c)) {
				e[0] = '\\';
				e[1] = (char)c;
				e[2] = '\0';
				r = e;
			}
		}
		if (r)
			put(o, r);
		else
			putn(o, s + i, 1);
	}
	if (code)
		put(o, "</code>");
	if (cut)
		put(o, AG_PH_CUT);
}

/* Writes an untrusted value ("-" for none), bounded and escaped for `mode`. */
static void val(struct out *o, enum esc mode, const char *s)
{
	if (!s)
		put(o, "-");
	else
		valn(o, mode, s, strlen(s), true);
}

/* ---- artifact access ---- */

static const json_t *jget(const json_t *v, const char *path)
{
	/* "a.b.c" */
	char key[64];
	while (v && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		path += n;
		if (*path == '.')
			path++;
	}
	return v;
}

static const char *jstr(const json_t *v, const char *path)
{
	return json_string_value(jget(v, path));
}

/* The runtime line: "runc", or "gvisor (engine runtime R; gVisor's kernel
 * shown from inside by the probe)" (or "not shown"), from the artifact's
 * preflight; NULL for an artifact from before issue 24. Bounded by buf. */
static const char *runtime_text(const json_t *a, char *buf, size_t cap)
{
	const char *rt = jstr(a, "preflight.requested.runtime");
	if (!rt)
		return NULL;
	/* what inspection showed the agent's container ran with */
	const char *seen =
	    jstr(a, "containment_evidence.controls.verified_resource_controls.runtime");
	if (strcmp(rt, "gvisor") != 0) {
		snprintf(buf, cap, "%.32s (the engine's runtime %.64s)", rt,
			 seen ? seen : "not shown");
		return buf;
	}
	const char *name = jstr(a, "preflight.requested.runtime_name");
	bool proven = json_is_true(jget(a, "preflight.inspected.runtime_proof.gvisor"));
	snprintf(buf, cap, "gvisor (engine runtime %.64s; gVisor's kernel %s)", name ? name : "?",
		 proven ? "shown from inside by the probe" : "NOT shown");
	return buf;
}

/* A scalar as display text ("-" for null/missing); *buf holds numbers. */
/*
 * A scalar as short text for a fixed slot of every format (results, counts,
 * statuses, image references: tokens). A string is shown only when it is
 * such a token (at most 512 bytes of [A-Za-z0-9 ._:/@+-]), so nothing from
 * the artifact reaches a terminal or markup unescaped through here;
 * anything else reads "(unexpected)".
 */
static const char *jtext(const json_t *v, const char *path, char buf[64])
{
	const json_t *x = jget(v, path);
	if (json_is_string(x)) {
		const char *t = json_string_value(x);
		size_t n = json_string_length(x);
		if (n > 512 || strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789 ._:/@+-") != n)
			return "(unexpected)";
		return t;
	}
	if (json_is_integer(x))
		snprintf(buf, 64, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
	else if (json_is_real(x))
		snprintf(buf, 64, "%.3g", json_real_value(x));
	else if (json_is_true(x))
		return "yes";
	else if (json_is_false(x))
		return "no";
	else
		return "-";
	return buf;
}

static long long jint(const json_t *v, const char *path, long long dflt)
{
	const json_t *x = jget(v, path);
	return json_is_integer(x) ? (long long)json_integer_value(x) : dflt;
}

static size_t count_failed(const json_t *checks)
{
	size_t n = 0, i;
	const json_t *c;
	json_array_foreach(checks, i, c) if (!json_is_true(json_object_get(c, "passed"))) n++;
	return n;
}

/* The agent's command was executed (a run refused earlier has no score). */
static bool agent_ran(const json_t *a)
{
	return json_is_object(json_object_get(a, "command_result"));
}

/* What a report says of the changes of a run whose agent never ran. */
#define NO_CHANGES "none (the agent never ran)"

/* The study's egress verdict is not "complete" (a study run only). */
static bool egress_not_complete(const json_t *a)
{
	const json_t *st = json_object_get(a, "study_egress");
	const char *c = jstr(st, "completion");
	return json_is_object(st) && (!c || strcmp(c, "complete") != 0);
}

/* The run failed: its result is not PASS, or its study's egress is not complete. */
static bool run_failed(const json_t *a)
{
	return !(jstr(a, "result") && strcmp(jstr(a, "result"), "PASS") == 0) ||
	       egress_not_complete(a);
}

/* Size of a score_text buffer. */
#define SCORE_TEXT_MAX 192

/*
 * The score, or a plain statement that there is none. The score grades the
 * checks only: beside a failed run it says so and why (the failure's reason,
 * the study's egress verdict, or the failed checks), so a FAIL never reads
 * as "100" alone.
 */
static const char *score_text(const json_t *a, char buf[SCORE_TEXT_MAX])
{
	if (json_is_true(jget(a, "command_result.cancelled")))
		return "none (the run was cancelled)"; /* a score of a cut-short run misleads */
	if (!agent_ran(a))
		return "none (the agent never ran)";
	char sb[64], r1[64], r2[64], why[160];
	const char *score = jtext(a, "score", sb);
	if (!run_failed(a))
		return snprintf(buf, SCORE_TEXT_MAX, "%s", score) > 0 ? buf : "-";
	size_t nf = count_failed(json_object_get(a, "checks"));
	if (json_is_object(json_object_get(a, "failure")))
		snprintf(why, sizeof(why), "%s", jtext(a, "failure.reason", r1));
	else if (egress_not_complete(a))
		snprintf(why, sizeof(why), "egress %s (%s)",
			 jtext(a, "study_egress.completion", r1),
			 jtext(a, "study_egress.completion_reason", r2));
	else if (nf)
		snprintf(why, sizeof(why), "%zu check%s failed", nf, nf == 1 ? "" : "s");
	else
		snprintf(why, sizeof(why), "see the result");
	snprintf(buf, SCORE_TEXT_MAX, "%s (checks only; the run failed: %s)", score, why);
	return buf;
}

/*
 * The run's start time, UTC, from its id ("TASK-contained-YYYYMMDDhhmmss..."),
 * which is sealed with the artifact: "YYYY-MM-DDThh:mm:ss" (the form JUnit's
 * timestamp attribute takes) or false when the id has no such stamp.
 */
static bool run_started(const json_t *a, char out[32])
{
	const char *id = jstr(a, "run_id"), *p = NULL;
	for (const char *q = id; q && (q = strstr(q, "-contained-")); q++)
		p = q + 11;
	if (!p)
		return false;
	for (int i = 0; i < 14; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	snprintf(out, 32, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s", p, p + 4, p + 6, p + 8, p + 10, p + 12);
	return true;
}

struct control_row;
static size_t control_rows(const json_t *a, struct control_row *rows, size_t max);
static bool controls_mismatch(const json_t *a);

/* Loud warnings: cleanup/liveness not verified, reduced claim, a mismatch. */
static size_t warnings(const json_t *a, const char *w[5])
{
	size_t n = 0;
	const json_t *ce = json_object_get(a, "containment_evidence");
	if (!json_is_true(json_object_get(a, "cleanup_complete")))
		w[n++] = "Cleanup was not verified complete: a container or the workspace copy may "
			 "remain.";
	const json_t *lv = jget(ce, "cleanup.liveness_verified");
	if (json_is_false(lv) || (json_is_null(lv) && jstr(ce, "cleanup.container_status") &&
				  strcmp(jstr(ce, "cleanup.container_status"), "not_created") != 0))
		w[n++] = "Container liveness was not verified: the agent container may still be "
			 "running.";
	const char *claim = jstr(ce, "security_claim_level");
	if (claim && strcmp(claim, "docker-desktop-reduced") == 0)
		w[n++] =
		    "Reduced claim (docker-desktop-reduced): a desktop-managed VM sits between "
		    "host and container.";
	else if (claim && strcmp(claim, "linux-docker-engine") != 0)
		w[n++] =
		    "No containment claim: the Docker preflight did not establish the boundary.";
	if (controls_mismatch(a))
		w[n++] = "A requested control differs from what Docker reported for the created "
			 "container (see MISMATCH below).";
	return n;
}

/* ---- requested vs verified controls ---- */

static long long size_bytes(const char *s)
{
	int64_t v;
	return ag_size_parse(s, AG_SIZE_DOCKER, &v) == 0 ? (long long)v : -1;
}

struct control_row {
	const char *label;
	char requested[128];
	char verified[128]; /* "" when not verified */
	const char *status; /* verified, requested-unverified, MISMATCH */
};

static void fmt_scalar(const json_t *x, char *buf, size_t n)
{
	if (json_is_string(x))
		snprintf(buf, n, "%s", json_string_value(x));
	else if (json_is_integer(x))
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
	else if (json_is_real(x))
		snprintf(buf, n, "%g", json_real_value(x));
	else if (json_is_boolean(x))
		snprintf(buf, n, "%s", json_is_true(x) ? "yes" : "no");
	else if (json_is_array(x)) {
		size_t i, o = 0;
		const json_t *e;
		buf[0] = '\0';
		json_array_foreach(x, i, e)
		{
			if (o + 2 >= n)
				break;
			int w = snprintf(buf + o, n - o, "%s%s", i ? ", " : "",
					 json_is_string(e) ? json_string_value(e) : "?");
			if (w < 0 || (size_t)w >= n - o)
				break;
			o += (size_t)w;
		}
	} else
		buf[0] = '\0';
}

/*
 * A study run's agent joins the run's own internal study network by design
 * (`study-egress run`), whatever the configuration's sandbox.network asks
 * for: that network, named from the sealed run id as the run names it
 * ("agentguard-" + run suffix + "-study"), is what Docker must report. A
 * study run whose agent sat on any other network is still a MISMATCH.
 */
static bool study_network(const json_t *a, char *buf, size_t n)
{
	const char *id = jstr(a, "run_id");
	if (!json_is_object(json_object_get(a, "study_egress")) || !id)
		return false;
	char *sfx = ag_run_suffix(id);
	snprintf(buf, n, "agentguard-%s-study", sfx);
	free(sfx);
	return true;
}

static size_t control_rows(const json_t *a, struct control_row *rows, size_t max)
{
	const json_t *ctl = jget(a, "containment_evidence.controls");
	const json_t *ver = json_object_get(ctl, "verified_resource_controls");
	bool have = json_is_object(ver) && json_object_size(ver) > 0;
	static const struct {
		const char *label, *req, *ver;
	} map[] = {
	    {"network", "network", "network"},
	    {"read-only root filesystem", "read_only_root", "read_only_rootfs"},
	    {"no-new-privileges", "no_new_privileges", "no_new_privileges"},
	    {"drop all capabilities", "cap_drop_all", "cap_drop_all"},
	    {"pids limit", "pids_limit", "pids_limit"},
	    {"memory limit", "memory_limit", "memory_bytes"},
	    {"cpu limit", "cpu_limit", "cpu.requested_cpus"},
	    {"uid:gid", NULL, "uid_gid"},
	    {"tmpfs paths", "tmpfs_paths", "tmpfs_paths"},
	    {"privileged", "privileged", "privileged"},
	    {"docker socket mount", "docker_socket_mount", "docker_socket_mount"},
	    {"device exposure", "device_exposure", "device_exposure"},
	    {"host namespace sharing", "host_namespace_sharing", "host_namespace_sharing"},
	    {"image identity", NULL, "image_identity"},
	    {"container identity", NULL, "container_identity"},
	};
	size_t n = 0;
	for (size_t i = 0; i < AG_ARRAY_SIZE(map) && n < max; i++) {
		struct control_row *r = &rows[n++];
		r->label = map[i].label;
		if (i == 0 && study_network(a, r->requested, sizeof(r->requested)))
			r->label = "network (study)";
		else if (map[i].req)
			fmt_scalar(json_object_get(ctl, map[i].req), r->requested,
				   sizeof(r->requested));
		else if (strcmp(map[i].label, "uid:gid") == 0)
			snprintf(r->requested, sizeof(r->requested), "%lld:%lld",
				 jint(ctl, "uid", -1), jint(ctl, "gid", -1));
		else
			snprintf(r->requested, sizeof(r->requested), "matched");
		const json_t *v = have ? jget(ver, map[i].ver) : NULL;
		fmt_scalar(v, r->verified, sizeof(r->verified));
		if (!v || !r->verified[0]) {
			r->verified[0] = '\0';
			r->status = "requested-unverified";
			continue;
		}
		bool same;
		if (strcmp(map[i].ver, "memory_bytes") == 0)
			same = size_bytes(r->requested) == json_integer_value(v);
		else if (strcmp(map[i].ver, "cpu.requested_cpus") == 0)
			same = json_is_number(json_object_get(ctl, "cpu_limit")) &&
			       fabs(json_number_value(json_object_get(ctl, "cpu_limit")) -
				    json_number_value(v)) < 1e-9;
		else if (strcmp(map[i].ver, "tmpfs_paths") == 0) {
			/* the workspace mount is a tmpfs on the probe only; the
			 * requested /tmp must be among the verified ones */
			same = strstr(r->verified, "/tmp") != NULL;
		} else
			same = strcmp(r->requested, r->verified) == 0;
		r->status = same ? "verified" : "MISMATCH";
	}
	return n;
}

static bool controls_mismatch(const json_t *a)
{
	struct control_row rows[20];
	size_t n = control_rows(a, rows, AG_ARRAY_SIZE(rows));
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].status, "MISMATCH") == 0)
			return true;
	return false;
}

/* ---- mutation summary ---- */

struct muts {
	size_t modified, added, deleted, renamed;
	long long total, lines_added, lines_deleted;
	const char *line_status;
};

static struct muts mutation_counts(const json_t *a)
{
	struct muts m;
	m.modified = json_array_size(jget(a, "mutations.modified_files"));
	m.added = json_array_size(jget(a, "mutations.added_files"));
	m.deleted = json_array_size(jget(a, "mutations.deleted_files"));
	m.renamed = json_array_size(jget(a, "mutations.renamed_files"));
	m.total = jint(a, "mutations.changed_files_total", -1);
	m.lines_added = jint(a, "diff_summary.lines_added", -1);
	m.lines_deleted = jint(a, "diff_summary.lines_deleted", -1);
	m.line_status = jstr(a, "diff_summary.line_count_status");
	return m;
}

/* Calls fn(kind letter, path, new path or NULL) for listed changes, bounded. */
static void each_change(const json_t *a,
			void (*fn)(struct out *, enum esc, char, const char *, const char *),
			struct out *o, enum esc mode)
{
	static const struct {
		char k;
		const char *key;
	} kinds[] = {{'M', "mutations.modified_files"},
		     {'A', "mutations.added_files"},
		     {'D', "mutations.deleted_files"}};
	for (size_t k = 0; k < AG_ARRAY_SIZE(kinds); k++) {
		size_t i;
		const json_t *p;
		json_array_foreach(jget(a, kinds[k].key), i, p)
		{
			if (i >= AG_REPORT_LIST_ITEMS)
				break;
			fn(o, mode, kinds[k].k, json_string_value(p), NULL);
		}
	}
	size_t i;
	const json_t *r;
	json_array_foreach(jget(a, "mutations.renamed_files"), i, r)
	{
		if (i >= AG_REPORT_LIST_ITEMS)
			break;
		fn(o, mode, 'R', jstr(r, "source_path"), jstr(r, "destination_path"));
	}
}

static const char *kind_name(char k)
{
	return k == 'M' ? "modified" : k == 'A' ? "added" : k == 'D' ? "deleted" : "renamed";
}

/* ---- the agent's output (its last lines) and what the copy left out ---- */

/* The last lines of one captured stream, from the artifact's redacted text. */
struct tail {
	const char *name; /* "stdout" or "stderr" */
	const char *s;	  /* the stream; lines [start, n) are shown */
	size_t start, n, total, shown;
	bool truncated; /* the capture itself was cut (max_output_bytes) */
};

static bool output_tail(const json_t *a, const char *name, struct tail *t)
{
	const json_t *cr = json_object_get(a, "command_result");
	const json_t *x = json_object_get(cr, name);
	if (!json_is_string(x) || json_string_length(x) == 0)
		return false;
	const char *s = json_string_value(x);
	size_t n = json_string_length(x);
	if (s[n - 1] == '\n') /* it ends the last line; it starts none */
		n--;
	*t = (struct tail){.name = name, .s = s, .n = n, .total = 1};
	char tk[32];
	snprintf(tk, sizeof(tk), "%s_truncated", name);
	t->truncated = json_is_true(json_object_get(cr, tk));
	for (size_t i = 0; i < n; i++)
		t->total += s[i] == '\n';
	size_t end = n;
	while (t->shown < AG_REPORT_OUTPUT_LINES) {
		const char *nl = memrchr(s, '\n', end);
		t->shown++;
		if (!nl) {
			t->start = 0;
			break;
		}
		t->start = (size_t)(nl - s) + 1;
		end = (size_t)(nl - s);
	}
	return true;
}

/* "stdout, the last 2 of 40 lines (redacted; the capture was cut)" */
static void tail_head(struct out *o, const struct tail *t)
{
	if (t->shown == t->total)
		putf(o, "%s, %zu line%s (redacted%s)", t->name, t->total, t->total == 1 ? "" : "s",
		     t->truncated ? "; the capture was cut at max_output_bytes" : "");
	else
		putf(o, "%s, the last %zu of %zu lines (redacted%s)", t->name, t->shown, t->total,
		     t->truncated ? "; the capture was cut at max_output_bytes" : "");
}

/* Each shown line: prefix, the line escaped for mode and bounded, suffix. */
static void tail_lines(struct out *o, enum esc mode, const struct tail *t, const char *prefix,
		       const char *suffix)
{
	size_t p = t->start;
	for (;;) {
		const char *nl = memchr(t->s + p, '\n', t->n - p);
		size_t len = nl ? (size_t)(nl - (t->s + p)) : t->n - p;
		put(o, prefix);
		valn(o, mode, t->s + p, len, false);
		put(o, suffix);
		if (!nl)
			break;
		p += len + 1;
	}
}

/* How one format shows the agent's output (text, md, html). `after` may
 * name the stream with one %s. */
struct tail_fmt {
	const char *heading; /* once, before the first stream shown (NULL: none) */
	const char *before, *after, *close;
	enum esc mode;
	const char *prefix, *suffix; /* around each line */
};

/* The last lines of the agent's stdout and stderr, as `f` shows them. */
static void output_tails(struct out *o, const json_t *a, const struct tail_fmt *f)
{
	static const char *const streams[] = {"stdout", "stderr"};
	bool head = false;
	for (size_t k = 0; k < AG_ARRAY_SIZE(streams); k++) {
		struct tail t;
		if (!output_tail(a, streams[k], &t))
			continue;
		if (!head && f->heading)
			put(o, f->heading);
		head = true;
		put(o, f->before);
		tail_head(o, &t);
		putf(o, f->after, t.name);
		tail_lines(o, f->mode, &t, f->prefix, f->suffix);
		put(o, f->close);
	}
}

/* "N ignored files left out of the copy (rule R)", or NULL when not recorded. */
static const char *copy_text(const json_t *a, char buf[160])
{
	const json_t *c = jget(a, "containment_evidence.workspace.copy");
	const json_t *k = json_object_get(c, "excluded_ignored_entries");
	if (!json_is_integer(k))
		return NULL;
	char rb[64];
	json_int_t v = json_integer_value(k);
	snprintf(buf, 160, "%" JSON_INTEGER_FORMAT " ignored file%s left out of the copy (rule %s)",
		 v, v == 1 ? "" : "s", jtext(c, "rule", rb));
	return buf;
}

/* ---- the egress section of a study run ---- */

/* One destination key with its counts; the strings are the manifest's. */
struct eg_row {
	const char *decision, *host, *reason;
	long long port, requests, bytes_in, bytes_out;
};

/* The destinations of one manifest, grouped and sorted (eg_collect). */
struct eg_view {
	struct eg_row *rows;
	size_t n, cap;
	size_t more_keys;      /* entries past AG_REPORT_EGRESS_KEYS_MAX */
	size_t events;	       /* events grouped (when there are no aggregates) */
	bool from_aggregates;  /* the manifest's aggregates (manifest.h) */
	bool aggregates_bad;   /* `aggregates` present but its keys not a list */
	bool aggregates_whole; /* their "complete" */
	long long ov_allowed, ov_denied, sampled; /* overflow counts, events left out */
};

static long long sat_add(long long x, long long y)
{
	return y > 0 && x > LLONG_MAX - y ? LLONG_MAX : x + y;
}

/* A count from the manifest: a non-negative integer, else 0. */
static long long count_of(const json_t *x)
{
	return json_is_integer(x) && json_integer_value(x) >= 0 ? (long long)json_integer_value(x)
								: 0;
}

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && strcmp(x, y) == 0);
}

static void eg_add(struct eg_view *v, const struct eg_row *r)
{
	for (size_t i = 0; i < v->n; i++) {
		struct eg_row *w = &v->rows[i];
		if (w->port == r->port && same_str(w->decision, r->decision) &&
		    same_str(w->host, r->host) && same_str(w->reason, r->reason)) {
			w->requests = sat_add(w->requests, r->requests);
			w->bytes_in = sat_add(w->bytes_in, r->bytes_in);
			w->bytes_out = sat_add(w->bytes_out, r->bytes_out);
			return;
		}
	}
	if (v->n >= AG_REPORT_EGRESS_KEYS_MAX) {
		v->more_keys++;
		return;
	}
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->rows = ag_xrealloc(v->rows, v->cap * sizeof(*v->rows));
	}
	v->rows[v->n++] = *r;
}

/* deny first, anything else next, allow last */
static int decision_rank(const char *d)
{
	return d && strcmp(d, "deny") == 0 ? 0 : d && strcmp(d, "allow") == 0 ? 2 : 1;
}

static int str_cmp(const char *x, const char *y)
{
	return x && y ? strcmp(x, y) : x ? 1 : y ? -1 : 0;
}

static int eg_cmp(const void *p, const void *q)
{
	const struct eg_row *x = p, *y = q;
	int c = decision_rank(x->decision) - decision_rank(y->decision);
	if (c)
		return c;
	if (x->requests != y->requests)
		return x->requests > y->requests ? -1 : 1;
	if ((c = str_cmp(x->host, y->host)) != 0)
		return c;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if ((c = str_cmp(x->reason, y->reason)) != 0)
		return c;
	return str_cmp(x->decision, y->decision);
}

/*
 * Groups a manifest's destinations by (decision, host, port, reason): its
 * aggregates' keys ({decision, host, port, reason, requests, bytes_in,
 * bytes_out}, complete counts; manifest.h) when it has aggregates, else its
 * events (each one request, keyed by its requested host and port). Bounded
 * by AG_REPORT_EGRESS_KEYS_MAX keys.
 */
static void eg_collect(const json_t *m, struct eg_view *v)
{
	*v = (struct eg_view){0};
	const json_t *agg = json_object_get(m, "aggregates");
	size_t i;
	const json_t *e;
	if (agg) {
		const json_t *keys = json_object_get(agg, "keys");
		v->from_aggregates = true;
		v->aggregates_bad = !json_is_array(keys);
		v->aggregates_whole = json_is_true(json_object_get(agg, "complete"));
		v->ov_allowed = count_of(jget(agg, "overflow.requests_allowed"));
		v->ov_denied = count_of(jget(agg, "overflow.requests_denied"));
		v->sampled = count_of(json_object_get(agg, "sampled_out"));
		json_array_foreach(keys, i, e)
		{
			struct eg_row r = {jstr(e, "decision"),
					   jstr(e, "host"),
					   jstr(e, "reason"),
					   jint(e, "port", -1),
					   count_of(json_object_get(e, "requests")),
					   count_of(json_object_get(e, "bytes_in")),
					   count_of(json_object_get(e, "bytes_out"))};
			eg_add(v, &r);
		}
	} else {
		json_array_foreach(json_object_get(m, "events"), i, e)
		{
			const json_t *rq = json_object_get(e, "requested");
			if (!json_is_object(rq))
				rq = json_object_get(e, "effective");
			struct eg_row r = {jstr(e, "decision"),
					   jstr(rq, "host"),
					   jstr(e, "reason"),
					   jint(rq, "port", -1),
					   1,
					   count_of(jget(e, "bytes.in")),
					   count_of(jget(e, "bytes.out"))};
			eg_add(v, &r);
			v->events++;
		}
	}
	if (v->n > 1)
		qsort(v->rows, v->n, sizeof(*v->rows), eg_cmp);
}

/* How one format shows the egress section. */
struct eg_fmt {
	enum esc mode;
	const char *head;		     /* the section heading */
	const char *line, *end;		     /* around one statement */
	const char *bold, *unbold;	     /* around a label */
	const char *table, *row, *sep, *eol; /* the destinations table */
	const char *table_end;
};

static const struct eg_fmt eg_text = {
    ESC_TERM,
    "Egress (study run):\n",
    "  ",
    "\n",
    "",
    "",
    "    decision | host | port | reason | requests | bytes in | bytes out\n",
    "    ",
    " | ",
    "\n",
    "",
};
static const struct eg_fmt eg_md = {
    ESC_MD,
    "## Egress (study run)\n\n",
    "",
    "\n\n",
    "**",
    "**",
    "| Decision | Host | Port | Reason | Requests | Bytes in | Bytes out |\n"
    "|---|---|---|---|---|---|---|\n",
    "| ",
    " | ",
    " |\n",
    "\n"};
static const struct eg_fmt eg_html = {
    ESC_HTML,
    "<h2 id=\"egress\">Egress (study run)</h2>\n",
    "<p>",
    "</p>\n",
    "<strong>",
    "</strong>",
    "<table id=\"egress-destinations\"><tr><th>Decision</th><th>Host</th><th>Port</th>"
    "<th>Reason</th><th>Requests</th><th>Bytes in</th><th>Bytes out</th></tr>\n",
    "<tr><td>",
    "</td><td>",
    "</td></tr>\n",
    "</table>\n"};

/* An untrusted manifest value, escaped for the format ("-" for none). */
static void eg_val(struct out *o, const struct eg_fmt *f, const char *s)
{
	if (!s)
		put(o, "-");
	else
		valn(o, f->mode, s, strlen(s), false);
}

static void eg_label(struct out *o, const struct eg_fmt *f, const char *label)
{
	putf(o, "%s%s%s%s ", f->line, f->bold, label, f->unbold);
}

static void eg_row_out(struct out *o, const struct eg_fmt *f, const struct eg_row *r)
{
	bool deny = r->decision && strcmp(r->decision, "deny") == 0;
	put(o, f->row);
	if (f->mode == ESC_HTML)
		put(o, deny ? "<span class=\"bad\">" : "<span>");
	eg_val(o, f, r->decision);
	if (f->mode == ESC_HTML)
		put(o, "</span>");
	put(o, f->sep);
	eg_val(o, f, r->host);
	put(o, f->sep);
	if (r->port >= 0)
		putf(o, "%lld", r->port);
	else
		put(o, "-");
	put(o, f->sep);
	eg_val(o, f, r->reason);
	putf(o, "%s%lld%s%lld%s%lld%s", f->sep, r->requests, f->sep, r->bytes_in, f->sep,
	     r->bytes_out, f->eol);
}

/* The destinations table (at most AG_REPORT_EGRESS_ROWS rows) and where
 * its counts come from. */
static void eg_destinations(struct out *o, const struct eg_fmt *f, const json_t *m)
{
	struct eg_view v;
	eg_collect(m, &v);
	eg_label(o, f, "Destinations:");
	if (v.aggregates_bad)
		put(o, "the manifest's aggregates hold no list of keys; nothing to show");
	else if (v.from_aggregates) {
		putf(o,
		     "%zu (decision, host, port, reason) key%s from the manifest's aggregates (%s)",
		     v.n + v.more_keys, v.n + v.more_keys == 1 ? "" : "s",
		     v.aggregates_whole ? "complete counts" : "NOT complete: counts were lost");
		if (v.ov_allowed > 0 || v.ov_denied > 0)
			putf(o, "; %lld allowed and %lld denied request%s past the key bound",
			     v.ov_allowed, v.ov_denied, v.ov_allowed + v.ov_denied == 1 ? "" : "s");
		if (v.sampled > 0)
			putf(o, "; %lld individual record%s sampled out of the events", v.sampled,
			     v.sampled == 1 ? "" : "s");
	} else
		putf(o, "%zu key%s grouped from the manifest's %zu recorded event%s",
		     v.n + v.more_keys, v.n + v.more_keys == 1 ? "" : "s", v.events,
		     v.events == 1 ? "" : "s");
	const json_t *gs = json_object_get(m, "gateway_status");
	if (!v.from_aggregates && (json_is_true(json_object_get(gs, "evidence_truncated")) ||
				   json_is_false(json_object_get(gs, "evidence_complete"))))
		put(o, "; the gateway's evidence is incomplete or truncated, so these counts "
		       "cover only the recorded events");
	put(o, f->end);
	if (v.n) {
		put(o, f->table);
		for (size_t i = 0; i < v.n && i < AG_REPORT_EGRESS_ROWS; i++)
			eg_row_out(o, f, &v.rows[i]);
		put(o, f->table_end);
	}
	size_t more = v.more_keys + (v.n > AG_REPORT_EGRESS_ROWS ? v.n - AG_REPORT_EGRESS_ROWS : 0);
	if (more)
		putf(o, "%s%zu more destination%s not shown (at most %d rows)%s", f->line, more,
		     more == 1 ? "" : "s", AG_REPORT_EGRESS_ROWS, f->end);
	free(v.rows);
}

/*
 * Credential injection (a manifest with "tls_terminated"): per destination,
 * whether the gateway terminated its TLS to inject a credential (and which
 * header) or spliced it, from the events' "tls" (manifest.h); at most
 * AG_REPORT_EGRESS_ROWS destinations.
 */
static void eg_tls(struct out *o, const struct eg_fmt *f, const json_t *m)
{
	const json_t *list = json_object_get(m, "tls_terminated");
	if (!json_is_array(list))
		return;
	eg_label(o, f, "TLS:");
	size_t i, k = 0;
	const json_t *t;
	put(o, "terminated by the gateway to inject a credential (the agent held a "
	       "placeholder): ");
	json_array_foreach(list, i, t)
	{
		put(o, k++ ? ", " : "");
		eg_val(o, f, jstr(t, "host"));
		putf(o, ":%lld, header ", (long long)jint(t, "port", -1));
		eg_val(o, f, jstr(t, "header"));
	}
	if (!k)
		put(o, "none");
	put(o, f->end);
	/* what each tunnel was, as the gateway recorded it */
	const char *seen_h[AG_REPORT_EGRESS_ROWS], *seen_m[AG_REPORT_EGRESS_ROWS];
	long long seen_p[AG_REPORT_EGRESS_ROWS];
	size_t n = 0, more = 0;
	const json_t *e;
	json_array_foreach(json_object_get(m, "events"), i, e)
	{
		const json_t *tls = json_object_get(e, "tls");
		const char *h = jstr(json_object_get(e, "requested"), "host");
		const char *mode = jstr(tls, "mode");
		long long port = jint(json_object_get(e, "requested"), "port", -1);
		if (!mode || !h)
			continue;
		bool dup = false;
		for (size_t j = 0; j < n && !dup; j++)
			dup =
			    seen_p[j] == port && !strcmp(seen_h[j], h) && !strcmp(seen_m[j], mode);
		if (dup)
			continue;
		if (n == AG_REPORT_EGRESS_ROWS) {
			more++;
			continue;
		}
		seen_h[n] = h, seen_m[n] = mode, seen_p[n] = port;
		if (n++)
			put(o, f->line);
		else
			eg_label(o, f, "Tunnels:");
		eg_val(o, f, h);
		putf(o, ":%lld ", port);
		eg_val(o, f, mode);
		if (jstr(tls, "injected_header")) {
			put(o, " (header ");
			eg_val(o, f, jstr(tls, "injected_header"));
			put(o, " injected)");
		} else if (!strcmp(mode, "spliced")) {
			put(o, " (the agent's own TLS; no credential added)");
		}
		put(o, f->end);
	}
	if (more)
		putf(o, "%s%zu more tunnel%s not shown%s", f->line, more, more == 1 ? "" : "s",
		     f->end);
}

/* The self-tests the study ran before the agent started (the artifact's). */
static void eg_selftests(struct out *o, const struct eg_fmt *f, const json_t *st)
{
	const json_t *t = json_object_get(st, "self_tests");
	eg_label(o, f, "Self-tests:");
	if (!json_is_object(t) || json_object_size(t) == 0)
		put(o, "none recorded");
	size_t k = 0;
	const char *key;
	const json_t *x;
	json_object_foreach((json_t *)t, key, x)
	{
		if (k == AG_REPORT_EGRESS_SELFTESTS) {
			putf(o, ", and %zu more", json_object_size(t) - k);
			break;
		}
		put(o, k++ ? ", " : "");
		eg_val(o, f, key);
		put(o, " = ");
		char b[64];
		eg_val(o, f, json_is_string(x) ? json_string_value(x) : jtext(x, "", b));
	}
	put(o, f->end);
}

/* The gateway image: its pinned reference, and the identity the manifest seals. */
static void eg_gateway(struct out *o, const struct eg_fmt *f, const json_t *st, const json_t *m)
{
	const json_t *id = json_object_get(m, "gateway_image_identity");
	eg_label(o, f, "Gateway image:");
	eg_val(o, f,
	       jstr(st, "gateway_image") ? jstr(st, "gateway_image")
					 : jstr(id, "configured_reference"));
	if (json_is_object(id)) {
		put(o, " (local image id ");
		eg_val(o, f, jstr(id, "local_image_id"));
		put(o, ", the gateway container's ");
		eg_val(o, f, jstr(id, "container_bound_image_id"));
		put(o, ", platform ");
		eg_val(o, f, jstr(id, "platform"));
		put(o, ")");
	}
	put(o, f->end);
}

/* The egress section of a study run (nothing for any other run). */
static void egress_section(struct out *o, const json_t *a, const struct ag_report_egress *eg,
			   const struct eg_fmt *f)
{
	const json_t *st = json_object_get(a, "study_egress");
	if (!json_is_object(st))
		return;
	const json_t *m = eg ? eg->manifest : NULL;
	char b1[64], b2[64];
	put(o, f->head);
	eg_label(o, f, "Verdict:");
	eg_val(o, f, jstr(st, "completion"));
	put(o, " (");
	eg_val(o, f, jstr(st, "completion_reason"));
	put(o, "); trial ");
	eg_val(o, f, jstr(st, "trial_id"));
	putf(o, ", %s event%s, %s denied; topology verified %s; gateway ", jtext(st, "events", b1),
	     jint(st, "events", 0) == 1 ? "" : "s", jtext(st, "denied", b2),
	     json_is_true(json_object_get(st, "topology_verified")) ? "yes" : "NO");
	eg_val(o, f, jstr(st, "gateway_state"));
	putf(o, ", its stream %s%s",
	     json_is_true(json_object_get(st, "gateway_stream_complete")) ? "complete"
									  : "INCOMPLETE",
	     f->end);
	eg_label(o, f, "Manifest:");
	if (m)
		putf(o, "%s, its SHA-256 the one the sealed artifact records",
		     AG_EGRESS_MANIFEST_FILE);
	else
		putf(o, "not shown: %s",
		     eg && eg->problem ? eg->problem : "the manifest was not read");
	put(o, f->end);
	if (m) {
		eg_destinations(o, f, m);
		eg_tls(o, f, m);
	}
	eg_selftests(o, f, st);
	eg_gateway(o, f, st, m);
}

/*
 * The manifest beside a study run's artifact, read as the egress_manifest
 * check of `evidence verify` reads it, and shown only when its SHA-256 is
 * still the sealed one.
 */
void ag_report_egress_load_at(int run_fd, const json_t *a, struct ag_report_egress *eg)
{
	static const struct ag_read_reasons why = {"report.egress.symlink",
						   "report.egress.not_regular", "report.egress.io",
						   "report.egress.too_large"};
	*eg = (struct ag_report_egress){0};
	const json_t *st = json_object_get(a, "study_egress");
	const char *file = jstr(st, "manifest"), *want = jstr(st, "manifest_sha256");
	if (!json_is_object(st)) {
		eg->problem = "this is no study run";
		return;
	}
	if (!file || !want || strcmp(file, AG_EGRESS_MANIFEST_FILE) != 0) {
		eg->problem = "the artifact records no manifest of this study";
		return;
	}
	char *data = NULL;
	size_t n = 0;
	struct ag_error *e = NULL;
	if (ag_read_file_at(run_fd, AG_EGRESS_MANIFEST_FILE, AG_EGRESS_MANIFEST_FILE,
			    AG_EGRESS_MANIFEST_MAX_BYTES + 1, &why, &data, &n, &e) < 0) {
		const char *r = e ? e->reason : "";
		eg->problem =
		    strcmp(r, why.symlink) == 0	      ? "the manifest is a symbolic link"
		    : strcmp(r, why.not_regular) == 0 ? "the manifest is not a regular file"
		    : strcmp(r, why.too_large) == 0   ? "the manifest is larger than its bound"
						      : "the manifest could not be read";
		ag_error_free(e);
		return;
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(data, n, hex);
	if (strcmp(hex, want) != 0) {
		eg->problem = "the manifest is not the one the sealed artifact records (SHA-256 "
			      "mismatch)";
	} else {
		json_error_t je;
		eg->manifest = json_loadb(data, n, JSON_REJECT_DUPLICATES, &je);
		if (!json_is_object(eg->manifest)) {
			json_decref(eg->manifest);
			eg->manifest = NULL;
			eg->problem = "the manifest is not one JSON object";
		}
	}
	free(data);
}

void ag_report_egress_release(struct ag_report_egress *eg)
{
	json_decref(eg->manifest);
	eg->manifest = NULL;
}

/* ---- text ---- */

static void text_change(struct out *o, enum esc mode, char k, const char *p, const char *np)
{
	putf(o, "  %c ", k);
	val(o, mode, p);
	if (np) {
		put(o, " -> ");
		val(o, mode, np);
	}
	put(o, "\n");
}

static void evidence_lines(struct out *o, enum esc mode, const json_t *c, const char *prefix,
			   const char *suffix)
{
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(c, "evidence"), i, e)
	{
		if (i >= AG_REPORT_EVIDENCE_ITEMS) {
			putf(o, "%s(%zu more)%s", prefix,
			     json_array_size(json_object_get(c, "evidence")) - i, suffix);
			break;
		}
		put(o, prefix);
		val(o, mode, json_string_value(e));
		put(o, suffix);
	}
}

static void render_text(const json_t *a, const struct ag_report_egress *eg, struct out *o)
{
	char b1[64], b2[64], b3[64];
	const json_t *ce = json_object_get(a, "containment_evidence");
	put(o, "AgentGuard contained run ");
	val(o, ESC_TERM, jstr(a, "run_id"));
	put(o, " (task ");
	val(o, ESC_TERM, jstr(a, "task_id"));
	put(o, ")\n");
	bool pass = jstr(a, "result") && strcmp(jstr(a, "result"), "PASS") == 0;
	bool failed_stage = json_is_object(json_object_get(a, "failure"));
	put(o, pass ? "Passed:     yes\n" : "Passed:     no");
	if (!pass && failed_stage) {
		put(o, ", it failed at the ");
		val(o, ESC_TERM, jstr(a, "failure.stage"));
		put(o, " stage\n");
	} else if (!pass && count_failed(json_object_get(a, "checks")) > 0) {
		putf(o, ", it failed at the checks stage (%zu failed)\n",
		     count_failed(json_object_get(a, "checks")));
	} else if (!pass) {
		put(o, "\n");
	}
	putf(o, "Agent ran:  %s\n", agent_ran(a) ? "yes" : "no");
	char sc[SCORE_TEXT_MAX];
	putf(o, "Result:     %s  score %s  exit %s  duration %s s\n", jtext(a, "result", b1),
	     score_text(a, sc), jtext(a, "exit_code", b3), jtext(a, "duration_seconds", b2));
	if (failed_stage) {
		put(o, "Failure:    stage ");
		val(o, ESC_TERM, jstr(a, "failure.stage"));
		put(o, " [");
		val(o, ESC_TERM, jstr(a, "failure.reason"));
		put(o, "] ");
		val(o, ESC_TERM, jstr(a, "failure.message"));
		put(o, "\n");
	}
	put(o, "Preflight:  ");
	val(o, ESC_TERM, jstr(ce, "preflight.status"));
	put(o, " (claim ");
	val(o, ESC_TERM, jstr(ce, "security_claim_level"));
	put(o, ")\n");
	char rtb[192];
	const char *rt = runtime_text(a, rtb, sizeof(rtb));
	if (rt) {
		put(o, "Runtime:    ");
		val(o, ESC_TERM, rt);
		put(o, "\n");
	}
	put(o, "Command:    ");
	val(o, ESC_TERM,
	    jstr(a, "command_result.outcome") ? jstr(a, "command_result.outcome") : "not executed");
	if (json_is_object(json_object_get(a, "command_result")))
		putf(o, ", exit status %s", jtext(a, "command_result.exit_code", b1));
	put(o, "\n");
	struct muts m = mutation_counts(a);
	if (!agent_ran(a)) {
		putf(o, "Changes:    %s\n", NO_CHANGES);
	} else {
		putf(o,
		     "Changes:    %s file(s): %zu modified, %zu added, %zu deleted, %zu renamed; ",
		     jtext(a, "mutations.changed_files_total", b1), m.modified, m.added, m.deleted,
		     m.renamed);
		putf(o, "+%s/-%s lines (%s)\n", jtext(a, "diff_summary.lines_added", b2),
		     jtext(a, "diff_summary.lines_deleted", b3),
		     m.line_status ? m.line_status : "-");
	}
	each_change(a, text_change, o, ESC_TERM);
	char cb[160];
	if (copy_text(a, cb))
		putf(o, "Copy:       %s\n", cb);
	static const struct tail_fmt text_tail = {NULL,	    "Agent output: ", "\n", "",
						  ESC_TERM, "  | ",	      "\n"};
	output_tails(o, a, &text_tail);
	const json_t *checks = json_object_get(a, "checks");
	size_t nf = count_failed(checks);
	putf(o, "Checks:     %zu passed, %zu failed\n", json_array_size(checks) - nf, nf);
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c)
	{
		if (json_is_true(json_object_get(c, "passed")))
			continue;
		put(o, "  FAIL [");
		val(o, ESC_TERM, jstr(c, "severity"));
		put(o, "] ");
		val(o, ESC_TERM, jstr(c, "name"));
		put(o, ": ");
		val(o, ESC_TERM, jstr(c, "message"));
		put(o, "\n");
		evidence_lines(o, ESC_TERM, c, "      - ", "\n");
	}
	egress_section(o, a, eg, &eg_text);
	putf(o, "Cleanup:    container %s, liveness %s, workspace %s, overall %s\n",
	     jtext(ce, "cleanup.container_status", b1),
	     json_is_true(jget(ce, "cleanup.liveness_verified"))    ? "verified"
	     : json_is_false(jget(ce, "cleanup.liveness_verified")) ? "NOT VERIFIED"
								    : "not applicable",
	     jtext(ce, "cleanup.workspace_status", b2),
	     json_is_true(json_object_get(a, "cleanup_complete")) ? "complete" : "INCOMPLETE");
	const char *w[5];
	size_t nw = warnings(a, w);
	for (size_t k = 0; k < nw; k++)
		putf(o, "WARNING:    %s\n", w[k]);
	put(o, "Evidence:   verified (schema, canonical form, seal, chain)\n");
}

/* ---- markdown ---- */

static void md_change(struct out *o, enum esc mode, char k, const char *p, const char *np)
{
	putf(o, "| %s | ", kind_name(k));
	val(o, mode, p);
	if (np) {
		put(o, " &rarr; ");
		val(o, mode, np);
	}
	put(o, " |\n");
}

static void md_names(struct out *o, const json_t *env, const char *label, const char *key)
{
	putf(o, "| %s | ", label);
	const json_t *v = json_object_get(env, key);
	if (!json_array_size(v))
		put(o, "none");
	size_t i;
	const json_t *e;
	json_array_foreach(v, i, e)
	{
		put(o, i ? ", " : "");
		val(o, ESC_MD, json_string_value(e));
	}
	put(o, " |\n");
}

static void render_md(const json_t *a, const struct ag_report_egress *eg, struct out *o)
{
	char b1[64], b2[64], b3[64];
	const json_t *ce = json_object_get(a, "containment_evidence");
	bool pass = jstr(a, "result") && strcmp(jstr(a, "result"), "PASS") == 0;
	putf(o, "# AgentGuard contained run: %s\n\n", pass ? "PASS" : "FAIL");
	put(o, "| Run | Task | Result | Score | Exit | Duration |\n|---|---|---|---|---|---|\n| ");
	val(o, ESC_MD, jstr(a, "run_id"));
	put(o, " | ");
	val(o, ESC_MD, jstr(a, "task_id"));
	char sc[SCORE_TEXT_MAX];
	putf(o, " | **%s** | %s | %s | %s s |\n\n", pass ? "PASS" : "FAIL", score_text(a, sc),
	     jtext(a, "exit_code", b2), jtext(a, "duration_seconds", b3));
	if (json_is_object(json_object_get(a, "failure"))) {
		put(o, "**Failure:** stage <code>");
		val(o, ESC_HTML, jstr(a, "failure.stage"));
		put(o, "</code>, reason <code>");
		val(o, ESC_HTML, jstr(a, "failure.reason"));
		put(o, "</code>: ");
		val(o, ESC_MD, jstr(a, "failure.message"));
		put(o, "\n\n");
	}
	const json_t *checks = json_object_get(a, "checks");
	size_t nf = count_failed(checks);
	putf(o, "## Checks\n\n%zu passed, %zu failed.\n\n", json_array_size(checks) - nf, nf);
	if (json_array_size(checks)) {
		put(o, "| Check | Result | Severity | Message |\n|---|---|---|---|\n");
		size_t i;
		const json_t *c;
		json_array_foreach(checks, i, c)
		{
			put(o, "| ");
			val(o, ESC_MD,
			    jstr(c, "display_name") ? jstr(c, "display_name") : jstr(c, "name"));
			putf(o, " | %s | ",
			     json_is_true(json_object_get(c, "passed")) ? "pass" : "**FAIL**");
			val(o, ESC_MD, jstr(c, "severity"));
			put(o, " | ");
			val(o, ESC_MD, jstr(c, "message"));
			if (!json_is_true(json_object_get(c, "passed")))
				evidence_lines(o, ESC_MD, c, "<br>&bull; ", "");
			put(o, " |\n");
		}
		put(o, "\n");
	}
	struct muts m = mutation_counts(a);
	if (!agent_ran(a))
		putf(o, "## Changes\n\n%s.\n\n", NO_CHANGES);
	else
		putf(o,
		     "## Changes\n\n%s file(s): %zu modified, %zu added, %zu deleted, %zu renamed; "
		     "+%s / -%s lines (%s).\n\n",
		     jtext(a, "mutations.changed_files_total", b1), m.modified, m.added, m.deleted,
		     m.renamed, jtext(a, "diff_summary.lines_added", b2),
		     jtext(a, "diff_summary.lines_deleted", b3),
		     m.line_status ? m.line_status : "-");
	if (m.modified + m.added + m.deleted + m.renamed) {
		put(o, "| Change | Path |\n|---|---|\n");
		each_change(a, md_change, o, ESC_MD);
		put(o, "\n");
	}
	char cb[160];
	if (copy_text(a, cb))
		putf(o, "%s.\n\n", cb);
	static const struct tail_fmt md_tail = {
	    "## Agent output\n\n", "", ":\n\n<pre>\n", "</pre>\n\n", ESC_HTML, "", "\n"};
	output_tails(o, a, &md_tail);

	egress_section(o, a, eg, &eg_md);
	put(o, "## Containment Evidence\n\n");
	const char *w[5];
	size_t nw = warnings(a, w);
	if (nw) {
		put(o, "> [!WARNING]\n> **Warning**\n");
		for (size_t k = 0; k < nw; k++)
			putf(o, "> - %s\n", w[k]);
		put(o, "\n");
	}
	put(o, "| | |\n|---|---|\n| Execution mode | ");
	val(o, ESC_MD, jstr(ce, "execution_mode"));
	put(o, " |\n| Security claim | ");
	val(o, ESC_MD, jstr(ce, "security_claim_level"));
	put(o, " |\n| Preflight | ");
	val(o, ESC_MD, jstr(ce, "preflight.status"));
	putf(o, " (%s of %s checks passed) |\n", jtext(ce, "preflight.checks_passed", b1),
	     jtext(ce, "preflight.checks_total", b2));
	char rtb[192];
	const char *rt = runtime_text(a, rtb, sizeof(rtb));
	if (rt) {
		put(o, "| Runtime | ");
		val(o, ESC_MD, rt);
		put(o, " |\n");
	}
	put(o, "| Execution | ");
	val(o, ESC_MD, jstr(ce, "execution.status"));
	put(o, " |\n\n");

	put(o, "### Controls: requested vs verified\n\n"
	       "| Control | Requested | Verified on the created container | Status |\n"
	       "|---|---|---|---|\n");
	struct control_row rows[20];
	size_t nr = control_rows(a, rows, AG_ARRAY_SIZE(rows));
	for (size_t i = 0; i < nr; i++) {
		putf(o, "| %s | ", rows[i].label);
		val(o, ESC_MD, rows[i].requested);
		put(o, " | ");
		val(o, ESC_MD, rows[i].verified[0] ? rows[i].verified : "not verified");
		putf(o, " | %s |\n",
		     strcmp(rows[i].status, "verified") == 0 ? "verified" : rows[i].status);
	}
	put(o, "\n### Image identity\n\n| | |\n|---|---|\n");
	static const char *const img[][2] = {
	    {"Configured reference", "image.configured_reference"},
	    {"Registry digest", "image.registry_digest"},
	    {"Local image id", "image.local_image_id"},
	    {"Container-bound image id", "image.container_bound_image_id"},
	    {"Identity consistent", "image.identity_consistent"},
	    {"Pull policy", "image.pull_policy"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(img); i++) {
		putf(o, "| %s | ", img[i][0]);
		val(o, ESC_MD, jtext(ce, img[i][1], b1));
		put(o, " |\n");
	}
	put(o, "\n### Environment (names only; values are never recorded)\n\n| | |\n|---|---|\n");
	const json_t *env = json_object_get(ce, "environment");
	md_names(o, env, "Supplied", "supplied_names");
	md_names(o, env, "Sensitive", "sensitive_names");
	md_names(o, env, "Missing", "missing_names");
	md_names(o, env, "Defaults", "default_names");
	put(o, "\n### Cleanup and liveness\n\n| | |\n|---|---|\n");
	static const char *const cl[][2] = {
	    {"Container cleanup", "cleanup.container_status"},
	    {"Liveness verified", "cleanup.liveness_verified"},
	    {"Workspace cleanup", "cleanup.workspace_status"},
	    {"Residue of this run", "cleanup.residue_this_run"},
	    {"Overall cleanup complete", "cleanup.overall_complete"},
	    {"Source repository unchanged", "workspace.source_unchanged"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cl); i++) {
		putf(o, "| %s | ", cl[i][0]);
		val(o, ESC_MD, jtext(ce, cl[i][1], b1));
		put(o, " |\n");
	}
	put(o, "\n");
	size_t i;
	const json_t *n;
	json_array_foreach(json_object_get(ce, "notes"), i, n)
	{
		put(o, "- ");
		val(o, ESC_MD, json_string_value(n));
		put(o, "\n");
	}
	put(o, "\n_Evidence verified by <code>agentguard evidence verify</code> (schema, "
	       "canonical form, "
	       "seal, chain) before this report was written._\n");
}

/* ---- html ---- */

static const char html_css[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}"
    "main{max-width:980px;margin:0 auto;padding:24px}"
    "h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 8px;"
    "border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    ".verdict{display:inline-block;padding:6px 16px;border-radius:6px;font-weight:700;"
    "font-size:20px;color:#fff}.pass{background:#1a7f37}.fail{background:#cf222e}"
    "table{border-collapse:collapse;width:100%;background:#fff;margin:6px 0}"
    "th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
    "td{overflow-wrap:anywhere}th{background:#eef1f4}"
    ".warn{background:#fff8c5;border:2px solid #d4a72c;border-radius:6px;padding:8px 14px;"
    "margin:10px 0}.warn strong{color:#7d4e00}"
    ".ok{color:#1a7f37;font-weight:600}.bad{color:#cf222e;font-weight:700}"
    ".muted{color:#57606a}code{font:13px ui-monospace,monospace}"
    ".bar{display:flex;height:24px;border-radius:4px;overflow:hidden;margin:8px 0;"
    "background:#eaeef2}.bar div{height:100%;color:#fff;font-size:12px;font-weight:600;"
    "line-height:24px;text-align:center;white-space:nowrap;overflow:hidden}"
    ".k-modified{background:#bf8700}.k-added{background:#1a7f37}.k-deleted{background:#cf222e}"
    ".k-renamed{background:#8250df}.swatch{display:inline-block;width:10px;height:10px;"
    "margin-right:6px;border-radius:2px}";

static void html_change(struct out *o, enum esc mode, char k, const char *p, const char *np)
{
	putf(o, "<tr><td><span class=\"swatch k-%s\"></span>%s</td><td><code>", kind_name(k),
	     kind_name(k));
	val(o, mode, p);
	if (np) {
		put(o, "</code> &rarr; <code>");
		val(o, mode, np);
	}
	put(o, "</code></td></tr>\n");
}

static void html_row(struct out *o, const char *label, const char *value)
{
	putf(o, "<tr><th>%s</th><td>", label);
	val(o, ESC_HTML, value);
	put(o, "</td></tr>\n");
}

static void html_names(struct out *o, const json_t *env, const char *label, const char *key)
{
	putf(o, "<tr><th>%s</th><td>", label);
	const json_t *v = json_object_get(env, key);
	if (!json_array_size(v))
		put(o, "<span class=\"muted\">none</span>");
	size_t i;
	const json_t *e;
	json_array_foreach(v, i, e)
	{
		put(o, i ? ", <code>" : "<code>");
		val(o, ESC_HTML, json_string_value(e));
		put(o, "</code>");
	}
	put(o, "</td></tr>\n");
}

/* The html page's Containment Evidence, and its end. */
static void html_containment(const json_t *a, struct out *o)
{
	char b1[64];
	const json_t *ce = json_object_get(a, "containment_evidence");
	put(o, "<h2>Containment Evidence</h2>\n<table>\n");
	html_row(o, "Execution mode", jstr(ce, "execution_mode"));
	html_row(o, "Security claim", jstr(ce, "security_claim_level"));
	html_row(o, "Preflight", jstr(ce, "preflight.status"));
	char rtb[192];
	const char *rt = runtime_text(a, rtb, sizeof(rtb));
	if (rt)
		html_row(o, "Runtime", rt);
	html_row(o, "Execution", jstr(ce, "execution.status"));
	put(o,
	    "</table>\n<h3>Controls: requested vs verified</h3>\n<table><tr><th>Control</th>"
	    "<th>Requested</th><th>Verified on the created container</th><th>Status</th></tr>\n");
	struct control_row rows[20];
	size_t nr = control_rows(a, rows, AG_ARRAY_SIZE(rows));
	for (size_t i = 0; i < nr; i++) {
		putf(o, "<tr><td>%s</td><td>", rows[i].label);
		val(o, ESC_HTML, rows[i].requested);
		put(o, "</td><td>");
		val(o, ESC_HTML, rows[i].verified[0] ? rows[i].verified : "not verified");
		putf(o, "</td><td class=\"%s\">%s</td></tr>\n",
		     strcmp(rows[i].status, "verified") == 0 ? "ok" : "bad", rows[i].status);
	}
	put(o, "</table>\n<h3>Image identity</h3>\n<table>\n");
	html_row(o, "Configured reference", jtext(ce, "image.configured_reference", b1));
	html_row(o, "Registry digest", jtext(ce, "image.registry_digest", b1));
	html_row(o, "Local image id", jtext(ce, "image.local_image_id", b1));
	html_row(o, "Container-bound image id", jtext(ce, "image.container_bound_image_id", b1));
	html_row(o, "Identity consistent", jtext(ce, "image.identity_consistent", b1));
	put(o, "</table>\n<h3>Environment <span class=\"muted\">(names only; values are never "
	       "recorded)</span></h3>\n<table>\n");
	const json_t *env = json_object_get(ce, "environment");
	html_names(o, env, "Supplied", "supplied_names");
	html_names(o, env, "Sensitive", "sensitive_names");
	html_names(o, env, "Missing", "missing_names");
	html_names(o, env, "Defaults", "default_names");
	put(o, "</table>\n<h3>Cleanup and liveness</h3>\n<table>\n");
	html_row(o, "Container cleanup", jtext(ce, "cleanup.container_status", b1));
	html_row(o, "Liveness verified", jtext(ce, "cleanup.liveness_verified", b1));
	html_row(o, "Workspace cleanup", jtext(ce, "cleanup.workspace_status", b1));
	html_row(o, "Overall cleanup complete", jtext(ce, "cleanup.overall_complete", b1));
	html_row(o, "Source repository unchanged", jtext(ce, "workspace.source_unchanged", b1));
	put(o, "</table>\n<ul class=\"muted\">\n");
	size_t i;
	const json_t *n;
	json_array_foreach(json_object_get(ce, "notes"), i, n)
	{
		put(o, "<li>");
		val(o, ESC_HTML, json_string_value(n));
		put(o, "</li>\n");
	}
	put(o, "</ul>\n<p class=\"muted\">Evidence verified by <code>agentguard evidence "
	       "verify</code> (schema, canonical form, seal, chain) before this page was "
	       "written.</p>\n</main></body></html>\n");
}

static void render_html(const json_t *a, const struct ag_report_egress *eg, struct out *o)
{
	char b1[64], b2[64], b3[64];
	bool pass = jstr(a, "result") && strcmp(jstr(a, "result"), "PASS") == 0;
	put(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	       "style-src 'unsafe-inline'; img-src data:\">\n"
	       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
	       "AgentGuard run ");
	val(o, ESC_HTML, jstr(a, "run_id"));
	putf(o, "</title>\n<style>%s</style></head>\n<body><main>\n", html_css);
	putf(o,
	     "<h1>AgentGuard contained run</h1>\n<p><span id=\"verdict\" class=\"verdict "
	     "%s\">%s</span></p>\n",
	     pass ? "pass" : "fail", pass ? "PASS" : "FAIL");
	put(o, "<table>\n");
	html_row(o, "Run", jstr(a, "run_id"));
	html_row(o, "Task", jstr(a, "task_id"));
	char sc[SCORE_TEXT_MAX];
	html_row(o, "Score", score_text(a, sc));
	html_row(o, "AgentGuard exit code", jtext(a, "exit_code", b1));
	html_row(o, "Duration (s)", jtext(a, "duration_seconds", b1));
	html_row(o, "Command outcome",
		 jstr(a, "command_result.outcome") ? jstr(a, "command_result.outcome")
						   : "not executed");
	html_row(o, "Command exit status", jtext(a, "command_result.exit_code", b1));
	if (json_is_object(json_object_get(a, "failure"))) {
		html_row(o, "Failure stage", jstr(a, "failure.stage"));
		html_row(o, "Failure reason", jstr(a, "failure.reason"));
		html_row(o, "Failure message", jstr(a, "failure.message"));
	}
	put(o, "</table>\n");

	const char *w[5];
	size_t nw = warnings(a, w);
	for (size_t k = 0; k < nw; k++)
		putf(o, "<div class=\"warn\" role=\"alert\"><strong>Warning:</strong> %s</div>\n",
		     w[k]);

	const json_t *checks = json_object_get(a, "checks");
	size_t nf = count_failed(checks);
	putf(o, "<h2>Checks</h2>\n<p>%zu passed, %zu failed.</p>\n", json_array_size(checks) - nf,
	     nf);
	if (json_array_size(checks)) {
		put(o, "<table><tr><th>Check</th><th>Result</th><th>Severity</th><th>Message and "
		       "evidence</th></tr>\n");
		size_t i;
		const json_t *c;
		json_array_foreach(checks, i, c)
		{
			bool ok = json_is_true(json_object_get(c, "passed"));
			put(o, "<tr><td>");
			val(o, ESC_HTML,
			    jstr(c, "display_name") ? jstr(c, "display_name") : jstr(c, "name"));
			putf(o, "</td><td class=\"%s\">%s</td><td>", ok ? "ok" : "bad",
			     ok ? "pass" : "FAIL");
			val(o, ESC_HTML, jstr(c, "severity"));
			put(o, "</td><td>");
			val(o, ESC_HTML, jstr(c, "message"));
			if (!ok) {
				put(o, "<ul>");
				evidence_lines(o, ESC_HTML, c, "<li>", "</li>");
				put(o, "</ul>");
			}
			put(o, "</td></tr>\n");
		}
		put(o, "</table>\n");
	}

	struct muts m = mutation_counts(a);
	size_t sum = m.modified + m.added + m.deleted + m.renamed;
	put(o, "<h2>Changes</h2>\n");
	if (sum) {
		put(o, "<div class=\"bar\" aria-label=\"mutation summary\">");
		const size_t cnt[4] = {m.modified, m.added, m.deleted, m.renamed};
		const char *const kn[4] = {"modified", "added", "deleted", "renamed"};
		for (size_t k = 0; k < 4; k++)
			if (cnt[k])
				putf(o,
				     "<div class=\"k-%s\" style=\"width:%.2f%%\" title=\"%s: %zu\">"
				     "%s %zu</div>",
				     kn[k], 100.0 * (double)cnt[k] / (double)sum, kn[k], cnt[k],
				     kn[k], cnt[k]);
		put(o, "</div>\n");
	}
	if (!agent_ran(a)) {
		putf(o, "<p id=\"mutations\">%s.</p>\n", NO_CHANGES);
	} else {
		putf(o,
		     "<table id=\"mutations\"><tr><th>Modified</th><th>Added</th><th>Deleted</th>"
		     "<th>Renamed</th><th>Total changed</th><th>Lines added</th><th>Lines "
		     "deleted</th>"
		     "<th>Line "
		     "counts</th></tr>\n<tr><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td>"
		     "<td>%s</td><td>+%s</td><td>-%s</td><td>",
		     m.modified, m.added, m.deleted, m.renamed,
		     jtext(a, "mutations.changed_files_total", b1),
		     jtext(a, "diff_summary.lines_added", b2),
		     jtext(a, "diff_summary.lines_deleted", b3));
		val(o, ESC_HTML, m.line_status);
		put(o, "</td></tr></table>\n");
	}
	if (sum) {
		put(o, "<table><tr><th>Change</th><th>Path</th></tr>\n");
		each_change(a, html_change, o, ESC_HTML);
		put(o, "</table>\n");
	}
	char cb[160];
	if (copy_text(a, cb))
		putf(o, "<p id=\"copy\">%s.</p>\n", cb);
	static const struct tail_fmt html_tail = {"<h2>Agent output</h2>\n",
						  "<p>",
						  ":</p>\n<pre id=\"agent-%s\">",
						  "</pre>\n",
						  ESC_HTML,
						  "",
						  "\n"};
	output_tails(o, a, &html_tail);

	egress_section(o, a, eg, &eg_html);
	html_containment(a, o);
}

/* ---- sarif ---- */

static const char *sarif_level(const char *sev)
{
	if (!sev)
		return "error";
	if (strcmp(sev, "warning") == 0)
		return "warning";
	if (strcmp(sev, "info") == 0)
		return "note";
	return "error";
}

/* A bounded copy of an untrusted string for JSON/XML text (control chars escaped). */
static char *bounded(const char *s)
{
	struct ag_buf b = AG_BUF_INIT(AG_REPORT_VALUE_MAX * 8, "limit.report.value");
	struct ag_error *e = NULL;
	struct out o = {&b, &e, false};
	val(&o, ESC_TEXT, s);
	ag_error_free(e);
	return ag_buf_detach(&b, NULL);
}

static json_t *jbounded(const char *s)
{
	char *t = bounded(s);
	json_t *j = json_string(t);
	free(t);
	return j ? j : json_string("[UNREPRESENTABLE]");
}

/* The configuration file: where a result that names no changed path is located. */
#define SARIF_CONFIG_URI "agentguard.yaml"

/* s is one of the run's changed paths (either end of a rename). */
static bool changed_path(const json_t *a, const char *s, size_t n)
{
	static const char *const keys[] = {"mutations.modified_files", "mutations.added_files",
					   "mutations.deleted_files"};
	size_t i;
	const json_t *p;
	for (size_t k = 0; k < AG_ARRAY_SIZE(keys); k++)
		json_array_foreach(jget(a, keys[k]), i, p)
		{
			const char *v = json_string_value(p);
			if (v && strlen(v) == n && memcmp(v, s, n) == 0)
				return true;
		}
	json_array_foreach(jget(a, "mutations.renamed_files"), i, p)
	{
		const char *x = jstr(p, "source_path"), *y = jstr(p, "destination_path");
		if ((x && strlen(x) == n && memcmp(x, s, n) == 0) ||
		    (y && strlen(y) == n && memcmp(y, s, n) == 0))
			return true;
	}
	return false;
}

/*
 * A relative URI reference for a repository path (RFC 3986): every byte
 * outside the unreserved set and '/' is percent-encoded. NULL for a path
 * that is not relative or is too long.
 */
static char *sarif_uri(const char *s, size_t n)
{
	if (n == 0 || s[0] == '/' || n * 3 >= AG_REPORT_SARIF_URI_MAX)
		return NULL;
	char *u = ag_xmalloc(n * 3 + 1), *q = u;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (isalnum(c) || strchr("-._~/", c))
			*q++ = (char)c;
		else {
			static const char hex[] = "0123456789ABCDEF";
			*q++ = '%';
			*q++ = hex[c >> 4];
			*q++ = hex[c & 15];
		}
	}
	*q = '\0';
	return u;
}

static json_t *sarif_location(const char *uri, long long line)
{
	return json_pack("{s:{s:{s:s, s:s}, s:{s:I}}}", "physicalLocation", "artifactLocation",
			 "uri", uri, "uriBaseId", "%SRCROOT%", "region", "startLine",
			 (json_int_t)(line > 0 ? line : 1));
}

/* Adds the location of path s[0..n) once. */
static void sarif_add(json_t *locs, const char *s, size_t n, long long line)
{
	if (json_array_size(locs) >= AG_REPORT_SARIF_LOCATIONS_MAX)
		return;
	char *uri = sarif_uri(s, n);
	if (!uri)
		return;
	size_t i;
	const json_t *l;
	json_array_foreach(locs, i, l)
	{
		const char *have =
		    jstr(json_object_get(l, "physicalLocation"), "artifactLocation.uri");
		if (have && strcmp(have, uri) == 0) {
			free(uri);
			return;
		}
	}
	json_array_append_new(locs, sarif_location(uri, line));
	free(uri);
}

/*
 * The changed paths a failed check's evidence names: "`PATH`..." (a path
 * rule), "`PATH:LINE`..." (a content match) and "Outside allowed paths:
 * PATH[ (rename ...)]". A name counts only when it is one of the run's own
 * changed paths, so a command in backquotes is never taken for a file.
 */
static void sarif_locations(const json_t *a, const json_t *check, json_t *locs)
{
	static const char outside[] = "Outside allowed paths: ";
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(check, "evidence"), i, e)
	{
		const char *s = json_string_value(e), *p = NULL;
		size_t n = 0;
		if (!s)
			continue;
		if (s[0] == '`' && strchr(s + 1, '`')) {
			p = s + 1;
			n = (size_t)(strchr(p, '`') - p);
		} else if (strncmp(s, outside, sizeof(outside) - 1) == 0) {
			p = s + sizeof(outside) - 1;
			n = strlen(p);
			static const char *const roles[] = {" (rename source)",
							    " (rename destination)"};
			for (size_t k = 0; k < AG_ARRAY_SIZE(roles); k++)
				if (n > strlen(roles[k]) &&
				    strcmp(p + n - strlen(roles[k]), roles[k]) == 0)
					n -= strlen(roles[k]);
		}
		if (!p)
			continue;
		if (changed_path(a, p, n)) {
			sarif_add(locs, p, n, 1);
			continue;
		}
		/* PATH:LINE */
		const char *colon = memrchr(p, ':', n);
		if (colon && colon > p && (size_t)(colon - p) + 1 < n) {
			long long line = 0;
			const char *d = colon + 1;
			for (; d < p + n && *d >= '0' && *d <= '9' && line < 1000000000; d++)
				line = line * 10 + (*d - '0');
			if (d == p + n && changed_path(a, p, (size_t)(colon - p)))
				sarif_add(locs, p, (size_t)(colon - p), line);
		}
	}
	if (json_array_size(locs) == 0)
		json_array_append_new(locs, sarif_location(SARIF_CONFIG_URI, 1));
}

static json_t *sarif_rule(const char *id, const char *disp, const char *level)
{
	return json_pack("{s:o, s:o, s:{s:o}, s:{s:s}}", "id", jbounded(id), "name", jbounded(disp),
			 "shortDescription", "text", jbounded(disp), "defaultConfiguration",
			 "level", level);
}

/*
 * SARIF 2.1.0 as GitHub code scanning takes it: every result has a rule
 * (by id and index), a message and at least one location, a relative URI
 * under %SRCROOT% with a start line. A run that failed at a stage other than
 * the checks (preflight, workspace, execution, cleanup) has one more result,
 * of the rule "contained-run", naming the stage.
 */
static void render_sarif(const json_t *a, struct out *o)
{
	json_t *rules = json_array(), *results = json_array();
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(a, "checks"), i, c)
	{
		const char *name = jstr(c, "name") ? jstr(c, "name") : "check";
		const char *disp = jstr(c, "display_name") ? jstr(c, "display_name") : name;
		json_array_append_new(rules,
				      sarif_rule(name, disp, sarif_level(jstr(c, "severity"))));
		if (json_is_true(json_object_get(c, "passed")))
			continue;
		struct ag_buf b = AG_BUF_INIT(AG_REPORT_VALUE_MAX * 16, "limit.report.value");
		struct ag_error *e = NULL;
		struct out mo = {&b, &e, false};
		val(&mo, ESC_TEXT, jstr(c, "message") ? jstr(c, "message") : "check failed");
		evidence_lines(&mo, ESC_TEXT, c, "\n- ", "");
		ag_error_free(e);
		json_t *msg = json_string(b.buf);
		ag_buf_release(&b);
		json_t *locs = json_array();
		sarif_locations(a, c, locs);
		json_array_append_new(
		    results, json_pack("{s:o, s:I, s:s, s:{s:o}, s:o, s:{s:o}}", "ruleId",
				       jbounded(name), "ruleIndex", (json_int_t)i, "level",
				       sarif_level(jstr(c, "severity")), "message", "text",
				       msg ? msg : json_string("check failed"), "locations", locs,
				       "properties", "severity", jbounded(jstr(c, "severity"))));
	}
	if (json_is_object(json_object_get(a, "failure"))) {
		struct ag_buf b = AG_BUF_INIT(AG_REPORT_VALUE_MAX * 4, "limit.report.value");
		struct ag_error *e = NULL;
		struct out mo = {&b, &e, false};
		put(&mo, "The contained run failed at the ");
		val(&mo, ESC_TEXT, jstr(a, "failure.stage") ? jstr(a, "failure.stage") : "unknown");
		put(&mo, " stage [");
		val(&mo, ESC_TEXT, jstr(a, "failure.reason") ? jstr(a, "failure.reason") : "-");
		put(&mo, "]: ");
		val(&mo, ESC_TEXT, jstr(a, "failure.message") ? jstr(a, "failure.message") : "-");
		ag_error_free(e);
		json_t *msg = json_string(b.buf);
		ag_buf_release(&b);
		json_array_append_new(rules, sarif_rule("contained-run", "Contained run", "error"));
		json_array_append_new(
		    results,
		    json_pack("{s:s, s:I, s:s, s:{s:o}, s:[o]}", "ruleId", "contained-run",
			      "ruleIndex", (json_int_t)(json_array_size(rules) - 1), "level",
			      "error", "message", "text", msg ? msg : json_string("the run failed"),
			      "locations", sarif_location(SARIF_CONFIG_URI, 1)));
	}
	char when[32];
	json_t *inv =
	    json_pack("{s:b}", "executionSuccessful",
		      agent_ran(a) && json_is_true(json_object_get(a, "cleanup_complete")));
	if (run_started(a, when)) {
		char z[40];
		snprintf(z, sizeof(z), "%sZ", when);
		json_object_set_new(inv, "startTimeUtc", json_string(z));
	}
	json_t *s = json_pack(
	    "{s:s, s:s, s:[{s:{s:{s:s, s:o, s:o}}, s:o, s:[o], s:{s:{s:s, s:s, s:o, s:o, s:o}}}]}",
	    "$schema", "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0", "runs",
	    "tool", "driver", "name", "AgentGuard", "version",
	    jbounded(jstr(a, "tool.version") ? jstr(a, "tool.version") : "unknown"), "rules", rules,
	    "results", results, "invocations", inv, "properties", "agentguard", "input",
	    "contained-run", "export", "sarif", "run_id", jbounded(jstr(a, "run_id")), "task_id",
	    jbounded(jstr(a, "task_id")), "result", jbounded(jstr(a, "result")));
	char *txt = s ? json_dumps(s, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	json_decref(s);
	if (!txt) {
		if (!o->failed)
			ag_err(o->err, AG_E_INTERNAL, 0, "report.encode", "cannot encode SARIF");
		o->failed = true;
		return;
	}
	put(o, txt);
	put(o, "\n");
	free(txt);
}

/* ---- junit ---- */

static void render_junit(const json_t *a, struct out *o)
{
	const json_t *checks = json_object_get(a, "checks");
	size_t n = json_array_size(checks), nf = count_failed(checks);
	bool synthetic = n == 0;
	bool run_failed = !(jstr(a, "result") && strcmp(jstr(a, "result"), "PASS") == 0);
	if (synthetic) {
		n = 1;
		nf = run_failed ? 1 : 0;
	}
	char dur[64];
	const json_t *d = json_object_get(a, "duration_seconds");
	snprintf(dur, sizeof(dur), "%.3f", json_is_number(d) ? json_number_value(d) : 0.0);
	/* The run's start (UTC, from its sealed id), in JUnit's timestamp form. */
	char when[32], stamp[48] = "";
	if (run_started(a, when))
		snprintf(stamp, sizeof(stamp), " timestamp=\"%s\"", when);
	put(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	putf(o,
	     "<testsuites name=\"agentguard\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	     "skipped=\"0\" time=\"%s\"%s>\n",
	     n, nf, dur, stamp);
	put(o, "  <testsuite name=\"agentguard.contained-run.");
	val(o, ESC_XML, jstr(a, "task_id"));
	putf(o, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%s\"%s>\n", n,
	     nf, dur, stamp);
	put(o, "    <properties><property name=\"run_id\" value=\"");
	val(o, ESC_XML, jstr(a, "run_id"));
	put(o, "\"/></properties>\n");
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c)
	{
		put(o, "    <testcase classname=\"agentguard.contained-run.");
		val(o, ESC_XML, jstr(a, "task_id"));
		put(o, "\" name=\"");
		val(o, ESC_XML, jstr(a, "task_id"));
		put(o, "::");
		val(o, ESC_XML, jstr(c, "name"));
		put(o, "\" time=\"0\"");
		if (json_is_true(json_object_get(c, "passed"))) {
			put(o, "/>\n");
			continue;
		}
		put(o, ">\n      <failure type=\"AgentGuardFailure\" message=\"");
		val(o, ESC_XML, jstr(c, "message"));
		put(o, "\">");
		put(o, "[");
		val(o, ESC_XML, jstr(c, "severity"));
		put(o, "] ");
		val(o, ESC_XML, jstr(c, "message"));
		evidence_lines(o, ESC_XML, c, "\n- ", "");
		put(o, "</failure>\n    </testcase>\n");
	}
	if (synthetic) {
		/* No check ran (e.g. the preflight refused): one test case carries the
		 * run's verdict so a failed run never looks green. */
		put(o, "    <testcase classname=\"agentguard.contained-run.");
		val(o, ESC_XML, jstr(a, "task_id"));
		put(o, "\" name=\"");
		val(o, ESC_XML, jstr(a, "task_id"));
		put(o, "::contained-run\" time=\"0\"");
		if (!run_failed) {
			put(o, "/>\n");
		} else {
			put(o, ">\n      <failure type=\"AgentGuardFailure\" message=\"");
			val(o, ESC_XML,
			    jstr(a, "failure.reason") ? jstr(a, "failure.reason")
						      : "the run failed");
			put(o, "\">stage ");
			val(o, ESC_XML, jstr(a, "failure.stage"));
			put(o, ": ");
			val(o, ESC_XML, jstr(a, "failure.message"));
			put(o, "</failure>\n    </testcase>\n");
		}
	}
	put(o, "  </testsuite>\n</testsuites>\n");
}

int ag_report_format_parse(const char *s, enum ag_report_format *out)
{
	static const struct {
		const char *name;
		enum ag_report_format f;
	} t[] = {{"text", AG_REPORT_TEXT},  {"md", AG_REPORT_MD},     {"markdown", AG_REPORT_MD},
		 {"html", AG_REPORT_HTML},  {"json", AG_REPORT_JSON}, {"sarif", AG_REPORT_SARIF},
		 {"junit", AG_REPORT_JUNIT}};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++)
		if (strcmp(s, t[i].name) == 0) {
			*out = t[i].f;
			return 0;
		}
	return -1;
}

int ag_report_render(const json_t *artifact, const char *bytes, size_t len,
		     enum ag_report_format fmt, struct ag_buf *b, struct ag_error **err)
{
	return ag_report_render_run(artifact, bytes, len, NULL, fmt, b, err);
}

int ag_report_render_run(const json_t *artifact, const char *bytes, size_t len,
			 const struct ag_report_egress *eg, enum ag_report_format fmt,
			 struct ag_buf *b, struct ag_error **err)
{
	struct out o = {b, err, false};
	switch (fmt) {
	case AG_REPORT_TEXT:
		render_text(artifact, eg, &o);
		break;
	case AG_REPORT_MD:
		render_md(artifact, eg, &o);
		break;
	case AG_REPORT_HTML:
		render_html(artifact, eg, &o);
		break;
	case AG_REPORT_JSON:
		putn(&o, bytes, len);
		break;
	case AG_REPORT_SARIF:
		render_sarif(artifact, &o);
		break;
	case AG_REPORT_JUNIT:
	default:
		render_junit(artifact, &o);
		break;
	}
	return o.failed ? -1 : 0;
}
