/*
 * checks.c: the post-execution policy checks (see checks.h, docs/checks.md).
 */
#include "lib/base/ag.h"
#include "lib/policy/checks.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/redact.h"
#include "lib/config/env_allowlist.h"
#include "lib/policy/pathmatch.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/snapshot.h"

#include <inttypes.h>
#include <stdarg.h>
#include <sys/stat.h>

static const struct {
	const char *name, *display;
	enum ag_severity sev;
	enum ag_check key; /* policy.<key>.severity */
} registry[AG_CK__COUNT] = {
    [AG_CK_TESTS_PASSED] = {"tests-passed", "Tests passed", AG_SEV_ERROR, AG_CHECK_TESTS_PASS},
    [AG_CK_FORBIDDEN_PATHS] = {"forbidden-paths", "Forbidden paths", AG_SEV_CRITICAL,
			       AG_CHECK_FORBIDDEN_PATHS},
    [AG_CK_TEST_TAMPERING] = {"test-tampering", "Test tampering", AG_SEV_ERROR,
			      AG_CHECK_TEST_TAMPERING},
    [AG_CK_UNSAFE_COMMANDS] = {"unsafe-commands", "Unsafe commands", AG_SEV_CRITICAL,
			       AG_CHECK_UNSAFE_COMMANDS},
    [AG_CK_SCOPE_ADHERENCE] = {"scope-adherence", "Scope adherence", AG_SEV_WARNING,
			       AG_CHECK_SCOPE_ADHERENCE},
    [AG_CK_DIFF_SIZE] = {"diff-size", "Diff size", AG_SEV_WARNING, AG_CHECK_DIFF_SIZE},
    [AG_CK_SECRET_SCAN] = {"secret-scan", "Secret scan", AG_SEV_CRITICAL, AG_CHECK_SECRET_SCAN},
};

const char *ag_check_name(enum ag_check_id id)
{
	return (unsigned)id < AG_CK__COUNT ? registry[id].name : "unknown";
}

const char *ag_check_display(enum ag_check_id id)
{
	return (unsigned)id < AG_CK__COUNT ? registry[id].display : "Unknown";
}

enum ag_severity ag_check_default_severity(enum ag_check_id id)
{
	return (unsigned)id < AG_CK__COUNT ? registry[id].sev : AG_SEV_CRITICAL;
}

void ag_scan_limits_default(struct ag_scan_limits *l)
{
	l->max_files = AG_CHECK_SCAN_MAX_FILES;
	l->max_file_bytes = AG_CHECK_SCAN_MAX_FILE_BYTES;
	l->max_total_bytes = AG_CHECK_SCAN_MAX_TOTAL_BYTES;
	l->max_line_bytes = AG_CHECK_SCAN_MAX_LINE_BYTES;
	l->max_matches = AG_CHECK_SCAN_MAX_MATCHES;
	l->max_per_detector_file = AG_CHECK_SCAN_MAX_PER_DETECTOR_FILE;
}

/* ---- evidence ---- */

static void ev(struct ag_check_result *r, const char *fmt, ...) AG_PRINTF(2, 3);
static void ev(struct ag_check_result *r, const char *fmt, ...)
{
	r->evidence_total++;
	if (r->evidence.n >= AG_CHECK_EVIDENCE_MAX_ITEMS)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = ag_xvasprintf(fmt, ap);
	va_end(ap);
	if (strlen(s) > AG_CHECK_EVIDENCE_MAX_BYTES) {
		/* cut on a UTF-8 boundary; every part is ASCII-safe or valid UTF-8 */
		size_t n = AG_CHECK_EVIDENCE_MAX_BYTES - 3;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		memcpy(s + n, "...", 4);
	}
	ag_strv_push_owned(&r->evidence, s);
}

static void set_msg(struct ag_check_result *r, const char *fmt, ...) AG_PRINTF(2, 3);
static void set_msg(struct ag_check_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(r->message);
	r->message = ag_xvasprintf(fmt, ap);
	va_end(ap);
}

/* ---- changed paths: every change, both ends of a rename ---- */

struct endpoint {
	const char *raw;
	char *shown;	  /* escaped, bounded */
	const char *role; /* NULL, "rename source", "rename destination" */
};

static size_t endpoints(const struct ag_ws_mutations *m, struct endpoint **out)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		n += m->v[i].kind == AG_WS_RENAMED ? 2 : 1;
	struct endpoint *e = ag_xcalloc(n ? n : 1, sizeof(*e));
	size_t k = 0;
	for (size_t i = 0; m && i < m->n; i++) {
		const struct ag_ws_change *c = &m->v[i];
		if (c->kind == AG_WS_RENAMED) {
			e[k++] = (struct endpoint){c->old_path, ag_ws_path_display(c->old_path),
						   "rename source"};
			e[k++] = (struct endpoint){c->path, ag_ws_path_display(c->path),
						   "rename destination"};
		} else {
			e[k++] = (struct endpoint){c->path, ag_ws_path_display(c->path), NULL};
		}
	}
	*out = e;
	return n;
}

static void endpoints_free(struct endpoint *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].shown);
	free(e);
}

static const char *role_suffix(const struct endpoint *e)
{
	return !e->role				       ? ""
	       : strcmp(e->role, "rename source") == 0 ? " (rename source)"
						       : " (rename destination)";
}

/*
 * Every endpoint matching one of `patterns` is evidence. A match that hit
 * the work bound counts as a match (fail closed). Returns the hit count.
 */
static size_t match_list(struct ag_check_result *r, const struct endpoint *e, size_t ne,
			 const struct ag_strv *patterns, const char *kind, uint64_t steps)
{
	size_t hits = 0;
	for (size_t i = 0; i < ne; i++) {
		for (size_t k = 0; k < patterns->n; k++) {
			enum ag_pm_result m = ag_pm_match_bounded(patterns->v[k], e[i].raw, steps);
			if (m == AG_PM_NOMATCH)
				continue;
			hits++;
			if (m == AG_PM_MATCH)
				ev(r, "`%s`%s matched %spattern `%s`", e[i].shown,
				   role_suffix(&e[i]), kind, patterns->v[k]);
			else
				ev(r,
				   "`%s`%s could not be matched against %spattern `%s` within the "
				   "work bound; failing closed",
				   e[i].shown, role_suffix(&e[i]), kind, patterns->v[k]);
			break;
		}
	}
	return hits;
}

/* ---- line-count status ---- */

const char *ag_checks_line_status(const struct ag_ws_mutations *m)
{
	if (!m)
		return "unavailable";
	int worst = 0; /* 0 exact, 1 incomplete, 2 binary */
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].lines == AG_WS_LINES_BINARY && worst < 2)
			worst = 2;
		else if (m->v[i].lines == AG_WS_LINES_INCOMPLETE && worst < 1)
			worst = 1;
	}
	return worst == 2 ? "binary" : worst == 1 ? "incomplete" : "exact";
}

/* ---- secret content detectors: linear scans, no regex engine ---- */

static bool up_or_digit(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool alnum(unsigned char c)
{
	return up_or_digit(c) || (c >= 'a' && c <= 'z');
}

static size_t run_of(const unsigned char *l, size_t n, bool (*cls)(unsigned char), size_t want)
{
	size_t k = 0;
	while (k < n && k < want && cls(l[k]))
		k++;
	return k;
}

/* AKIA[0-9A-Z]{16} */
static bool det_aws(const unsigned char *l, size_t n)
{
	for (size_t i = 0; i + 20 <= n; i++)
		if (memcmp(l + i, "AKIA", 4) == 0 &&
		    run_of(l + i + 4, n - i - 4, up_or_digit, 16) == 16)
			return true;
	return false;
}

static bool tok(unsigned char c)
{
	return alnum(c) || c == '_' || c == '-';
}

static bool pat_char(unsigned char c)
{
	return alnum(c) || c == '_';
}

static bool space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* (api[_-]?key|secret|token)\s*[:=]\s*['"]?[A-Za-z0-9_-]{16,}, keyword case-insensitive */
static bool det_generic(const unsigned char *l, size_t n)
{
	static const char *const kw[] = {"api_key", "api-key", "apikey", "secret", "token"};
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < AG_ARRAY_SIZE(kw); k++) {
			size_t kl = strlen(kw[k]);
			if (i + kl > n || strncasecmp((const char *)l + i, kw[k], kl) != 0)
				continue;
			size_t j = i + kl;
			while (j < n && space(l[j]))
				j++;
			if (j >= n || (l[j] != ':' && l[j] != '='))
				continue;
			j++;
			while (j < n && space(l[j]))
				j++;
			if (j < n && (l[j] == '\'' || l[j] == '"'))
				j++;
			if (run_of(l + j, n - j, tok, 16) == 16)
				return true;
		}
	}
	return false;
}

/* gh[pousr]_[A-Za-z0-9]{36,} | github_pat_[A-Za-z0-9_]{22,} */
static bool det_github(const unsigned char *l, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++) {
		if (l[i] == 'g' && l[i + 1] == 'h' && strchr("pousr", l[i + 2]) && l[i + 2] &&
		    l[i + 3] == '_' && run_of(l + i + 4, n - i - 4, alnum, 36) == 36)
			return true;
		if (i + 11 <= n && memcmp(l + i, "github_pat_", 11) == 0 &&
		    run_of(l + i + 11, n - i - 11, pat_char, 22) == 22)
			return true;
	}
	return false;
}

/* npm_[A-Za-z0-9]{36} */
static bool det_npm(const unsigned char *l, size_t n)
{
	for (size_t i = 0; i + 40 <= n; i++)
		if (memcmp(l + i, "npm_", 4) == 0 && run_of(l + i + 4, n - i - 4, alnum, 36) == 36)
			return true;
	return false;
}

static bool upper_space(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || c == ' ';
}

/* -----BEGIN [A-Z ]*PRIVATE KEY----- */
static bool det_pkey(const unsigned char *l, size_t n)
{
	static const char head[] = "-----BEGIN ", tail[] = "PRIVATE KEY";
	const size_t hl = sizeof(head) - 1, tl = sizeof(tail) - 1;
	for (size_t i = 0; i + hl <= n; i++) {
		if (memcmp(l + i, head, hl) != 0)
			continue;
		size_t j = i + hl;
		size_t r = run_of(l + j, n - j, upper_space, SIZE_MAX);
		size_t end = j + r; /* [A-Z ]* is greedy and '-' ends it */
		if (r >= tl && memcmp(l + end - tl, tail, tl) == 0 && end + 5 <= n &&
		    memcmp(l + end, "-----", 5) == 0)
			return true;
	}
	return false;
}

static const struct {
	unsigned bit;
	const char *id;
	bool (*fn)(const unsigned char *, size_t);
} builtins[] = {
    {AG_DET_AWS_ACCESS_KEY_ID, "aws-access-key-id-shape", det_aws},
    {AG_DET_GENERIC_API_KEY, "generic-api-key-assignment", det_generic},
    {AG_DET_GITHUB_TOKEN, "github-token-shape", det_github},
    {AG_DET_NPM_TOKEN, "npm-token-shape", det_npm},
    {AG_DET_PRIVATE_KEY_HEADER, "private-key-header", det_pkey},
};
#define N_BUILTINS AG_ARRAY_SIZE(builtins)

/* ---- content scan ---- */

/*
 * A configured secret (the value of a sensitive environment entry) found in
 * a changed file is a match like a detector's. Values shorter than this are
 * not searched for: a two-character "secret" would match ordinary text.
 */
#define CONFIGURED_SECRET_MIN 6
#define CONFIGURED_SECRET_ID "configured-secret"

struct scanner {
	const struct ag_config *cfg;
	const struct ag_scan_limits *lim;
	struct ag_content_scan *s;
	size_t alloc;
	uint64_t *per_file; /* N_BUILTINS + literal patterns + configured secrets */
	bool stop;
	const char **secrets; /* configured secret values (borrowed from the env) */
	size_t n_secrets;
};

/* The values of the run's sensitive environment entries, long enough to search for. */
static size_t configured_secrets(const struct ag_env_resolved *env, const char ***out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t i = 0; env && i < env->sensitive.n; i++) {
		size_t nl = strlen(env->sensitive.v[i]);
		for (size_t k = 0; k < env->assignments.n; k++) {
			const char *a = env->assignments.v[k];
			if (strncmp(a, env->sensitive.v[i], nl) == 0 && a[nl] == '=' &&
			    strlen(a + nl + 1) >= CONFIGURED_SECRET_MIN) {
				*out = ag_xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n++] = a + nl + 1;
				break;
			}
		}
	}
	return n;
}

static void incomplete(struct ag_content_scan *s, const char *reason)
{
	if (s->complete) {
		s->complete = false;
		s->reason = reason;
	}
}

static void record(struct scanner *sc, const char *shown, uint64_t line, const char *det)
{
	struct ag_content_scan *s = sc->s;
	if (s->n_matches >= sc->lim->max_matches) {
		s->match_limit_reached = true;
		sc->stop = true;
		return;
	}
	if (s->n_matches == sc->alloc) {
		sc->alloc = sc->alloc ? sc->alloc * 2 : 8;
		s->matches = ag_xrealloc(s->matches, sc->alloc * sizeof(*s->matches));
	}
	s->matches[s->n_matches++] = (struct ag_secret_match){ag_xstrdup(shown), line, det};
}

static void scan_line(struct scanner *sc, const char *shown, const unsigned char *l, size_t n,
		      uint64_t lineno)
{
	const struct ag_config *c = sc->cfg;
	for (size_t d = 0; d < N_BUILTINS && !sc->stop; d++) {
		if (!(c->builtin_detectors & builtins[d].bit) ||
		    sc->per_file[d] >= sc->lim->max_per_detector_file)
			continue;
		if (builtins[d].fn(l, n)) {
			sc->per_file[d]++;
			record(sc, shown, lineno, builtins[d].id);
		}
	}
	for (size_t k = 0; k < c->n_secret_content_patterns && !sc->stop; k++) {
		const struct ag_secret_pattern *p = &c->secret_content_patterns[k];
		size_t pl = strlen(p->contains);
		if (!pl || sc->per_file[N_BUILTINS + k] >= sc->lim->max_per_detector_file)
			continue;
		if (memmem(l, n, p->contains, pl)) {
			sc->per_file[N_BUILTINS + k]++;
			record(sc, shown, lineno, p->id);
		}
	}
	uint64_t *cs = &sc->per_file[N_BUILTINS + c->n_secret_content_patterns];
	for (size_t k = 0; k < sc->n_secrets && !sc->stop && *cs < sc->lim->max_per_detector_file;
	     k++) {
		if (memmem(l, n, sc->secrets[k], strlen(sc->secrets[k]))) {
			(*cs)++;
			record(sc, shown, lineno, CONFIGURED_SECRET_ID);
			break; /* one match per line: which secret is never said */
		}
	}
}

/* Reads one regular file beneath wsfd, bounded. 0 ok, -1 with a reason. */
static int read_bounded(int wsfd, const char *path, uint64_t max, uint64_t total_left, char **out,
			size_t *outlen, const char **reason)
{
	int fd = ag_ws_open_beneath(wsfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0) {
		*reason = "policy.scan.open";
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*reason = "policy.scan.not_regular";
		return -1;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		*reason = "policy.scan.file_bytes";
		return -1;
	}
	if ((uint64_t)st.st_size > total_left) {
		close(fd);
		*reason = "policy.scan.total_bytes";
		return -1;
	}
	size_t cap = (size_t)st.st_size + 1;
	char *b = ag_xmalloc(cap + 1);
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			close(fd);
			*reason = "policy.scan.read";
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap)
			break;
	}
	close(fd);
	if (n != (size_t)st.st_size) { /* changed under us: not what was captured */
		free(b);
		*reason = "policy.scan.changed";
		return -1;
	}
	b[n] = '\0';
	*out = b;
	*outlen = n;
	return 0;
}

static void content_scan(const struct ag_check_input *in, struct ag_content_scan *s)
{
	const struct ag_config *c = in->cfg;
	struct ag_scan_limits dl;
	ag_scan_limits_default(&dl);
	struct scanner sc = {.cfg = c, .lim = in->limits ? in->limits : &dl, .s = s};
	s->complete = true;
	if (!in->mut) {
		incomplete(s, "policy.scan.no_capture");
		return;
	}
	sc.n_secrets = configured_secrets(in->env, &sc.secrets);
	sc.per_file = ag_xcalloc(N_BUILTINS + c->n_secret_content_patterns + 1, sizeof(uint64_t));
	for (size_t i = 0; i < in->mut->n && !sc.stop; i++) {
		const struct ag_ws_change *ch = &in->mut->v[i];
		if (ch->kind == AG_WS_DELETED)
			continue;
		if (ch->kind == AG_WS_RENAMED) {
			/* identical identity: the content is the baseline's, not new */
			s->files_skipped_rename++;
			continue;
		}
		if (ch->new_kind != AG_WS_FILE)
			continue;
		if (in->workspace_fd < 0) {
			incomplete(s, "policy.scan.unavailable");
			break;
		}
		if (s->files_scanned >= sc.lim->max_files) {
			incomplete(s, "policy.scan.files");
			break;
		}
		char *buf = NULL;
		size_t n = 0;
		const char *why = NULL;
		if (read_bounded(in->workspace_fd, ch->path, sc.lim->max_file_bytes,
				 sc.lim->max_total_bytes - s->bytes_scanned, &buf, &n, &why) < 0) {
			incomplete(s, why);
			if (strcmp(why, "policy.scan.total_bytes") == 0)
				break;
			continue;
		}
		s->files_scanned++;
		s->bytes_scanned += n;
		if (memchr(buf, '\0', n)) {
			s->files_skipped_binary++;
			free(buf);
			continue;
		}
		char *shown = ag_ws_path_display(ch->path);
		memset(sc.per_file, 0,
		       (N_BUILTINS + c->n_secret_content_patterns + 1) * sizeof(uint64_t));
		const unsigned char *p = (const unsigned char *)buf;
		uint64_t lineno = 0;
		size_t off = 0;
		while (off < n && !sc.stop) {
			const unsigned char *nl = memchr(p + off, '\n', n - off);
			size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
			lineno++;
			if (len > sc.lim->max_line_bytes)
				incomplete(s, "policy.scan.line_bytes");
			else
				scan_line(&sc, shown, p + off, len, lineno);
			off += len + 1;
		}
		free(shown);
		free(buf);
	}
	free(sc.per_file);
	free(sc.secrets);
}

/* ---- the checks ---- */

static enum ag_severity severity_of(const struct ag_config *c, enum ag_check_id id)
{
	enum ag_severity s = c->severity[registry[id].key];
	return s == AG_SEV_DEFAULT ? registry[id].sev : s;
}

static void check_tests(const struct ag_check_input *in, struct ag_check_result *r)
{
	const char *label = in->command_label ? in->command_label : "contained-run";
	r->passed = in->command_ran && in->command_exit == 0;
	if (!in->command_ran) {
		set_msg(r, "The contained command did not run.");
		ev(r, "`%s` did not run", label);
		return;
	}
	if (in->command_end) {
		r->passed = false;
		set_msg(r, "The contained command did not exit 0.");
		ev(r, "`%s` %s", label, in->command_end);
		return;
	}
	set_msg(r, r->passed ? "The contained command exited 0."
			     : "The contained command did not exit 0.");
	ev(r, "`%s` exited %d", label, in->command_exit);
}

static void unavailable(struct ag_check_result *r)
{
	r->passed = false;
	set_msg(r, "Mutation evidence is unavailable; failing closed.");
	ev(r, "No mutation capture for this run; failing closed.");
}

static void check_paths(const struct ag_check_input *in, struct ag_check_result *r,
			const struct endpoint *e, size_t ne, const struct ag_strv *pats,
			const char *kind, const char *what, uint64_t steps)
{
	if (pats->n == 0) {
		r->passed = true;
		set_msg(r, "No %s configured.", what);
		return;
	}
	if (!in->mut) {
		unavailable(r);
		return;
	}
	size_t hits = match_list(r, e, ne, pats, kind, steps);
	r->passed = hits == 0;
	if (hits)
		set_msg(r, "%zu changed path%s matched %s.", hits, hits == 1 ? "" : "s", what);
	else
		set_msg(r, "No changed path matched %s.", what);
}

static void check_unsafe(const struct ag_check_input *in, struct ag_check_result *r)
{
	const struct ag_config *c = in->cfg;
	/* contained-run has no command log: the argv policy is enforced before launch */
	r->passed = true;
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, "limit.run.argv");
	struct ag_error *e = NULL;
	for (size_t i = 0; i < in->argc; i++)
		if ((i && ag_buf_add(&b, " ", 1, &e) < 0) || ag_buf_adds(&b, in->argv[i], &e) < 0)
			abort();
	size_t hits = 0;
	for (size_t i = 0; i < c->unsafe_commands.n; i++) {
		const char *u = c->unsafe_commands.v[i];
		if (!*u || !strstr(b.buf, u))
			continue;
		hits++;
		if (in->policy_blocked)
			ev(r,
			   "The agent argv matched unsafe_commands entry `%s`; blocked before "
			   "launch (enforce).",
			   u);
		else
			ev(r,
			   "The agent argv matched unsafe_commands entry `%s`; allowed and "
			   "recorded (audit).",
			   u);
	}
	ag_buf_release(&b);
	if (hits)
		set_msg(r,
			"No command log in contained-run (policy is applied to the argv before "
			"launch); %zu argv match%s recorded.",
			hits, hits == 1 ? "" : "es");
	else
		set_msg(r, "No command log in contained-run (policy is applied to the argv before "
			   "launch); no argv match.");
}

static void check_scope(const struct ag_check_input *in, struct ag_check_result *r,
			const struct endpoint *e, size_t ne, uint64_t steps)
{
	const struct ag_config *c = in->cfg;
	if (!in->mut) {
		unavailable(r);
		return;
	}
	bool ok = true;
	size_t nf = in->mut->n; /* files: a rename is one, though both its ends are judged */
	if ((int64_t)nf < c->expected_min || (int64_t)nf > c->expected_max) {
		ok = false;
		ev(r, "Changed %zu files; expected between %" PRId64 " and %" PRId64 ".", nf,
		   c->expected_min, c->expected_max);
	}
	size_t outside = 0;
	if (c->allowed_paths.n) {
		for (size_t i = 0; i < ne; i++) {
			bool allowed = false, limit = false;
			for (size_t k = 0; k < c->allowed_paths.n && !allowed; k++) {
				enum ag_pm_result m =
				    ag_pm_match_bounded(c->allowed_paths.v[k], e[i].raw, steps);
				allowed = m == AG_PM_MATCH;
				limit |= m == AG_PM_LIMIT;
			}
			if (allowed)
				continue;
			outside++;
			if (limit)
				ev(r,
				   "Outside allowed paths: %s%s (pattern work bound hit; failing "
				   "closed)",
				   e[i].shown, role_suffix(&e[i]));
			else
				ev(r, "Outside allowed paths: %s%s", e[i].shown,
				   role_suffix(&e[i]));
		}
	}
	r->passed = ok && outside == 0;
	if (r->passed)
		set_msg(r, "Changed %zu files within the expected scope.", nf);
	else
		set_msg(r,
			"Changed %zu files; %zu outside allowed paths; expected %" PRId64
			"..%" PRId64 ".",
			ne, outside, c->expected_min, c->expected_max);
}

static void check_diff(const struct ag_check_input *in, struct ag_check_result *r,
		       const char *status)
{
	const struct ag_config *c = in->cfg;
	bool any = c->max_files_changed.set || c->max_lines_added.set || c->max_lines_deleted.set;
	if (!any) {
		r->passed = true;
		set_msg(r, "No diff limits configured.");
		return;
	}
	if (!in->mut) {
		unavailable(r);
		return;
	}
	bool ok = true;
	size_t nf = in->mut->n; /* a rename is one changed file */
	if (c->max_files_changed.set && (int64_t)nf > c->max_files_changed.v) {
		ok = false;
		ev(r, "Changed %zu files; limit is %" PRId64 ".", nf, c->max_files_changed.v);
	}
	bool lines = c->max_lines_added.set || c->max_lines_deleted.set;
	if (lines && strcmp(status, "exact") != 0) {
		ok = false;
		ev(r,
		   "Diff line count evidence is incomplete or unavailable; failing closed for "
		   "configured line limits (%s).",
		   status);
	} else {
		const struct ag_ws_mutations *m = in->mut;
		if (c->max_lines_added.set && m->lines_added > (uint64_t)c->max_lines_added.v) {
			ok = false;
			ev(r, "Added %" PRIu64 " lines; limit is %" PRId64 ".", m->lines_added,
			   c->max_lines_added.v);
		}
		if (c->max_lines_deleted.set &&
		    m->lines_deleted > (uint64_t)c->max_lines_deleted.v) {
			ok = false;
			ev(r, "Deleted %" PRIu64 " lines; limit is %" PRId64 ".", m->lines_deleted,
			   c->max_lines_deleted.v);
		}
	}
	r->passed = ok;
	if (ok)
		set_msg(r,
			"The diff is within the configured limits (%zu files, +%" PRIu64
			" -%" PRIu64 " lines).",
			nf, in->mut->lines_added, in->mut->lines_deleted);
	else
		set_msg(r, "The diff exceeds the configured limits or cannot be measured.");
}

static void check_secrets(const struct ag_check_input *in, struct ag_checks *out,
			  struct ag_check_result *r, const struct endpoint *e, size_t ne,
			  uint64_t steps)
{
	const struct ag_config *c = in->cfg;
	struct ag_content_scan *s = &out->scan;
	const char **cs = NULL;
	size_t ncs = configured_secrets(in->env, &cs);
	free(cs);
	s->configured = c->builtin_detectors != 0 || c->n_secret_content_patterns != 0 || ncs;
	if (c->secret_patterns.n == 0 && !s->configured) {
		r->passed = true;
		set_msg(r, "No secret patterns or content detectors configured.");
		return;
	}
	if (!in->mut) {
		s->complete = false;
		s->reason = "policy.scan.no_capture";
		unavailable(r);
		return;
	}
	if (s->configured)
		content_scan(in, s);
	bool ok = true;
	if (s->configured && !s->complete) {
		ok = false;
		ev(r, "Secret content scan incomplete (%s); failing closed.", s->reason);
	}
	size_t path_hits = match_list(r, e, ne, &c->secret_patterns, "", steps);
	if (path_hits)
		ok = false;
	for (size_t i = 0; i < s->n_matches; i++)
		ev(r, "`%s:%" PRIu64 "` matched secret-content detector `%s`", s->matches[i].path,
		   s->matches[i].line, s->matches[i].detector);
	if (s->match_limit_reached)
		ev(r, "Secret content match limit reached; further matches not recorded.");
	if (s->n_matches)
		ok = false;
	r->passed = ok;
	if (ok)
		set_msg(r, "No secret path or content matched%s.",
			s->configured ? "" : " (no content detectors configured)");
	else
		set_msg(r, "%zu secret path match%s, %zu content match%s%s.", path_hits,
			path_hits == 1 ? "" : "es", s->n_matches, s->n_matches == 1 ? "" : "es",
			s->configured && !s->complete ? "; content scan incomplete" : "");
}

int ag_checks_evaluate(const struct ag_check_input *in, struct ag_checks *out,
		       struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	if (!in || !in->cfg)
		return ag_err(err, AG_E_INTERNAL, 0, "policy.internal", "checks need a config");
	const struct ag_config *c = in->cfg;
	uint64_t steps = in->pathmatch_max_steps ? in->pathmatch_max_steps : AG_PATHMATCH_MAX_STEPS;
	out->scan.complete = true;
	for (int i = 0; i < AG_CK__COUNT; i++) {
		out->v[i].id = (enum ag_check_id)i;
		out->v[i].severity = severity_of(c, (enum ag_check_id)i);
	}
	struct endpoint *e = NULL;
	size_t ne = endpoints(in->mut, &e);
	out->changed_paths = ne;
	out->line_count_status = ag_checks_line_status(in->mut);

	out->v[AG_CK_TESTS_PASSED].evaluated = true;
	check_tests(in, &out->v[AG_CK_TESTS_PASSED]);
	out->v[AG_CK_UNSAFE_COMMANDS].evaluated = true;
	check_unsafe(in, &out->v[AG_CK_UNSAFE_COMMANDS]);
	/* Change checks only when the agent ran: otherwise nothing could change. */
	if (in->command_ran) {
		for (int i = AG_CK_FORBIDDEN_PATHS; i < AG_CK__COUNT; i++)
			out->v[i].evaluated = true;
		check_paths(in, &out->v[AG_CK_FORBIDDEN_PATHS], e, ne, &c->forbidden_paths,
			    "forbidden ", "forbidden paths", steps);
		check_paths(in, &out->v[AG_CK_TEST_TAMPERING], e, ne, &c->test_paths, "test ",
			    "test paths", steps);
		check_scope(in, &out->v[AG_CK_SCOPE_ADHERENCE], e, ne, steps);
		check_diff(in, &out->v[AG_CK_DIFF_SIZE], out->line_count_status);
		check_secrets(in, out, &out->v[AG_CK_SECRET_SCAN], e, ne, steps);
	}
	endpoints_free(e, ne);

	int score = 100;
	bool pass = true;
	for (int i = 0; i < AG_CK__COUNT; i++) {
		const struct ag_check_result *r = &out->v[i];
		if (!r->evaluated || r->passed)
			continue;
		switch (r->severity) {
		case AG_SEV_CRITICAL:
			score -= 50;
			pass = false;
			break;
		case AG_SEV_ERROR:
			score -= 30;
			pass = false;
			break;
		case AG_SEV_WARNING:
			score -= 10;
			break;
		default:
			break;
		}
	}
	out->score = score < 0 ? 0 : score;
	out->pass = pass;
	return 0;
}

void ag_checks_release(struct ag_checks *c)
{
	if (!c)
		return;
	for (int i = 0; i < AG_CK__COUNT; i++) {
		free(c->v[i].message);
		ag_strv_release(&c->v[i].evidence);
	}
	for (size_t i = 0; i < c->scan.n_matches; i++)
		free(c->scan.matches[i].path);
	free(c->scan.matches);
	memset(c, 0, sizeof(*c));
}

/* ---- JSON ---- */

static json_t *jstr(const struct ag_redactor *r, const char *s, size_t max)
{
	char *t = ag_redact(r, s ? s : "", strlen(s ? s : ""), max, 0, NULL);
	json_t *j = json_string(t);
	free(t);
	return j ? j : json_string("[UNREPRESENTABLE]");
}

json_t *ag_checks_json(const struct ag_checks *c, const struct ag_redactor *r)
{
	json_t *a = json_array();
	for (int i = 0; i < AG_CK__COUNT; i++) {
		const struct ag_check_result *x = &c->v[i];
		if (!x->evaluated)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(ag_check_name(x->id)));
		json_object_set_new(o, "display_name", json_string(ag_check_display(x->id)));
		json_object_set_new(o, "passed", json_boolean(x->passed));
		json_object_set_new(o, "severity", json_string(ag_severity_name(x->severity)));
		json_object_set_new(o, "message", jstr(r, x->message, 512));
		json_t *ev = json_array();
		for (size_t k = 0; k < x->evidence.n; k++)
			json_array_append_new(
			    ev, jstr(r, x->evidence.v[k], AG_CHECK_EVIDENCE_MAX_BYTES));
		json_object_set_new(o, "evidence", ev);
		json_object_set_new(o, "evidence_total",
				    json_integer((json_int_t)x->evidence_total));
		if (x->id == AG_CK_SECRET_SCAN)
			json_object_set_new(o, "content_scan", ag_checks_scan_json(c, r));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *ag_checks_scan_json(const struct ag_checks *c, const struct ag_redactor *r)
{
	const struct ag_content_scan *s = &c->scan;
	json_t *o = json_object();
	const char *status = !s->configured	      ? "not_configured"
			     : !s->complete	      ? "incomplete"
			     : s->match_limit_reached ? "match_limit"
						      : "complete";
	json_object_set_new(o, "status", json_string(status));
	json_object_set_new(o, "reason",
			    s->configured && !s->complete && s->reason ? json_string(s->reason)
								       : json_null());
	json_object_set_new(o, "files_scanned", json_integer((json_int_t)s->files_scanned));
	json_object_set_new(o, "bytes_scanned", json_integer((json_int_t)s->bytes_scanned));
	json_object_set_new(o, "files_skipped_binary",
			    json_integer((json_int_t)s->files_skipped_binary));
	json_object_set_new(o, "files_skipped_exact_rename",
			    json_integer((json_int_t)s->files_skipped_rename));
	json_object_set_new(o, "matches_total", json_integer((json_int_t)s->n_matches));
	json_t *m = json_array();
	for (size_t i = 0; i < s->n_matches; i++)
		json_array_append_new(m, json_pack("{s:o, s:I, s:s}", "path",
						   jstr(r, s->matches[i].path, 4096), "line",
						   (json_int_t)s->matches[i].line, "detector",
						   s->matches[i].detector));
	json_object_set_new(o, "matches", m);
	return o;
}
