#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/sha256.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/workspace.h"

#include <sys/stat.h>

const char *ag_ws_change_name(enum ag_ws_change_kind k)
{
	switch (k) {
	case AG_WS_ADDED:
		return "added";
	case AG_WS_DELETED:
		return "deleted";
	case AG_WS_MODIFIED:
		return "modified";
	case AG_WS_RENAMED:
		break;
	}
	return "renamed";
}

const char *ag_ws_lines_name(enum ag_ws_lines l)
{
	switch (l) {
	case AG_WS_LINES_EXACT:
		return "exact";
	case AG_WS_LINES_BINARY:
		return "binary";
	case AG_WS_LINES_INCOMPLETE:
		return "incomplete";
	case AG_WS_LINES_NOT_APPLICABLE:
		break;
	}
	return "not_applicable";
}

void ag_ws_mutations_release(struct ag_ws_mutations *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].old_path);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ line diff */

struct line {
	const char *p;
	size_t len;
	uint64_t h;
};

static size_t split_lines(const char *s, size_t n, struct line **out, size_t max)
{
	size_t cnt = 0;
	for (const char *q = s; (q = memchr(q, '\n', n - (size_t)(q - s))); q++)
		cnt++;
	if (n && s[n - 1] != '\n')
		cnt++;
	if (cnt > max)
		return SIZE_MAX;
	struct line *v = ag_xmalloc((cnt ? cnt : 1) * sizeof(*v));
	size_t i = 0;
	const char *p = s, *end = s + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl + 1 : end;
		uint64_t h = 1469598103934665603ULL;
		for (const char *c = p; c < le; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		v[i++] = (struct line){p, (size_t)(le - p), h};
		p = le;
	}
	*out = v;
	return cnt;
}

static bool line_eq(const struct line *a, const struct line *b)
{
	return a->h == b->h && a->len == b->len && !memcmp(a->p, b->p, a->len);
}

/* CONTRACT: workspace.capture.exact_lines */
int ag_ws_line_diff(const char *a, size_t na, const char *b, size_t nb, uint64_t *added,
		    uint64_t *deleted)
{
	_cleanup_free_ struct line *la = NULL;
	_cleanup_free_ struct line *lb = NULL;
	size_t n = split_lines(a, na, &la, AG_WS_DIFF_MAX_LINES);
	if (n == SIZE_MAX)
		return 1;
	size_t m = split_lines(b, nb, &lb, AG_WS_DIFF_MAX_LINES);
	if (m == SIZE_MAX)
		return 1;
	size_t s = 0;
	while (s < n && s < m && line_eq(&la[s], &lb[s]))
		s++;
	size_t e = 0;
	while (e < n - s && e < m - s && line_eq(&la[n - 1 - e], &lb[m - 1 - e]))
		e++;
	const struct line *A = la + s, *B = lb + s;
	int64_t N = (int64_t)(n - s - e), M = (int64_t)(m - s - e);
	if (N == 0 || M == 0) {
		*added = (uint64_t)M;
		*deleted = (uint64_t)N;
		return 0;
	}
	int64_t max = N + M;
	_cleanup_free_ int64_t *V = ag_xcalloc((size_t)(2 * max + 3), sizeof(int64_t));
	int64_t off = max + 1;
	uint64_t cost = 0;
	for (int64_t d = 0; d <= max; d++) {
		for (int64_t k = -d; k <= d; k += 2) {
			int64_t x;
			if (k == -d || (k != d && V[off + k - 1] < V[off + k + 1]))
				x = V[off + k + 1];
			else
				x = V[off + k - 1] + 1;
			int64_t y = x - k;
			while (x < N && y < M && line_eq(&A[x], &B[y])) {
				x++;
				y++;
				cost++;
			}
			V[off + k] = x;
			if (x >= N && y >= M) {
				int64_t lcs = (N + M - d) / 2;
				*added = (uint64_t)(M - lcs);
				*deleted = (uint64_t)(N - lcs);
				return 0;
			}
		}
		cost += (uint64_t)d + 1;
		if (cost > AG_WS_DIFF_MAX_COST)
			return 1;
	}
	return 1; /* not reached */
}

/* -------------------------------------------------------------- capture */

struct cap {
	int evfd, wsfd;
	int textfd;
	const struct ag_ws_snapshot *cur;
};

static void push_change(struct ag_ws_mutations *m, size_t *alloc, struct ag_ws_change c)
{
	if (m->n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		m->v = ag_xrealloc(m->v, *alloc * sizeof(*m->v));
	}
	m->v[m->n++] = c;
}

/* Same kind, mode and (for files and links) size and SHA-256. */
static bool same_content(const struct ag_ws_entry *a, const struct ag_ws_entry *b)
{
	if (a->kind != b->kind || a->mode != b->mode)
		return false;
	if (a->kind == AG_WS_DIR)
		return true;
	return a->size == b->size && !memcmp(a->sha, b->sha, sizeof(a->sha));
}

static bool is_textish(const struct ag_ws_entry *e)
{
	return e->content == AG_WS_CONTENT_TEXT || e->content == AG_WS_CONTENT_NON_UTF8;
}

/* Reads size bytes at off into a heap buffer; NULL unless they hash to sha. */
static char *pread_verified(int fd, uint64_t off, uint64_t size, const uint8_t sha[32])
{
	char *buf = ag_xmalloc(size + 1);
	uint64_t got = 0;
	while (fd >= 0 && got < size) {
		ssize_t r = pread(fd, buf + got, size - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (uint64_t)r;
	}
	uint8_t have[32];
	ag_ws_sha_of(buf, got, have);
	if (got != size || memcmp(have, sha, sizeof(have))) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Reads the current file for a diff, with the identity/hash check. 1 = too large. */
static int read_current(struct cap *c, const struct ag_ws_entry *e, char **out,
			struct ag_error **err)
{
	if (e->size > AG_WS_DIFF_MAX_FILE_BYTES)
		return 1;
	_cleanup_close_ int fd = ag_ws_open_entry(c->wsfd, c->cur, e, err);
	if (fd < 0)
		return -1;
	*out = pread_verified(fd, 0, e->size, e->sha);
	if (!*out) {
		_cleanup_free_ char *d = ag_ws_path_display(e->path);
		return ag_err(err, AG_E_UNSAFE_PATH, 0, "workspace.source_changed",
			      "'%s' changed during capture", d);
	}
	return 0;
}

static int read_baseline_text(struct cap *c, const struct ag_ws_entry *b, char **out,
			      struct ag_error **err)
{
	*out = pread_verified(c->textfd, b->text_off, b->size, b->sha);
	if (!*out)
		return ag_err(err, AG_E_UNVERIFIED, 0, "workspace.baseline_corrupt",
			      "retained baseline text does not match the baseline");
	return 0;
}

static int modified_lines(struct cap *c, const struct ag_ws_entry *b, const struct ag_ws_entry *e,
			  struct ag_ws_change *ch, struct ag_error **err)
{
	if (b->kind != AG_WS_FILE || e->kind != AG_WS_FILE) {
		ch->lines = (b->kind == AG_WS_FILE || e->kind == AG_WS_FILE)
				? AG_WS_LINES_INCOMPLETE
				: AG_WS_LINES_NOT_APPLICABLE;
		/* a file replaced by a link/dir: its lines are all deleted, exactly */
		if (b->kind == AG_WS_FILE && is_textish(b)) {
			ch->lines = AG_WS_LINES_EXACT;
			ch->lines_deleted = b->line_count;
		} else if (e->kind == AG_WS_FILE && is_textish(e)) {
			ch->lines = AG_WS_LINES_EXACT;
			ch->lines_added = e->line_count;
		} else if (b->kind == AG_WS_FILE || e->kind == AG_WS_FILE) {
			ch->lines = AG_WS_LINES_BINARY;
		}
		return 0;
	}
	if (b->content == AG_WS_CONTENT_BINARY || e->content == AG_WS_CONTENT_BINARY) {
		ch->lines = AG_WS_LINES_BINARY;
		return 0;
	}
	if (!memcmp(b->sha, e->sha, sizeof(b->sha))) { /* mode-only change */
		ch->lines = AG_WS_LINES_EXACT;
		return 0;
	}
	if (b->size == 0) {
		ch->lines = AG_WS_LINES_EXACT;
		ch->lines_added = e->line_count;
		return 0;
	}
	if (e->size == 0) {
		ch->lines = AG_WS_LINES_EXACT;
		ch->lines_deleted = b->line_count;
		return 0;
	}
	if (!b->retained) {
		ch->lines = AG_WS_LINES_INCOMPLETE;
		return 0;
	}
	_cleanup_free_ char *cur = NULL;
	int r = read_current(c, e, &cur, err);
	if (r < 0)
		return -1;
	if (r == 1) {
		ch->lines = AG_WS_LINES_INCOMPLETE;
		return 0;
	}
	_cleanup_free_ char *base = NULL;
	if (read_baseline_text(c, b, &base, err) < 0)
		return -1;
	if (ag_ws_line_diff(base, b->size, cur, e->size, &ch->lines_added, &ch->lines_deleted))
		ch->lines = AG_WS_LINES_INCOMPLETE;
	else
		ch->lines = AG_WS_LINES_EXACT;
	return 0;
}

static void whole_lines(const struct ag_ws_entry *e, bool added, struct ag_ws_change *ch)
{
	if (e->kind != AG_WS_FILE)
		ch->lines = AG_WS_LINES_NOT_APPLICABLE;
	else if (e->content == AG_WS_CONTENT_BINARY)
		ch->lines = AG_WS_LINES_BINARY;
	else {
		ch->lines = AG_WS_LINES_EXACT;
		if (added)
			ch->lines_added = e->line_count;
		else
			ch->lines_deleted = e->line_count;
	}
}

struct ident_ref {
	const struct ag_ws_entry *e;
	size_t change; /* index into the change list */
	bool added;
};

static int ident_cmp(const void *x, const void *y)
{
	const struct ident_ref *a = x, *b = y;
	int c = memcmp(a->e->sha, b->e->sha, sizeof(a->e->sha));
	if (c)
		return c;
	if (a->e->kind != b->e->kind)
		return a->e->kind < b->e->kind ? -1 : 1;
	if (a->e->mode != b->e->mode)
		return a->e->mode < b->e->mode ? -1 : 1;
	if (a->e->size != b->e->size)
		return a->e->size < b->e->size ? -1 : 1;
	if (a->added != b->added)
		return a->added ? 1 : -1;
	return strcmp(a->e->path, b->e->path);
}

static int change_cmp(const void *x, const void *y)
{
	const struct ag_ws_change *a = x, *b = y;
	int c = strcmp(a->path, b->path);
	if (c)
		return c;
	return (int)a->kind - (int)b->kind;
}

/* CONTRACT: workspace.capture.renames (unique identity on both sides) */
static void pair_renames(struct ag_ws_mutations *m, const struct ag_ws_snapshot *base,
			 const struct ag_ws_snapshot *cur)
{
	size_t nref = 0;
	for (size_t i = 0; i < m->n; i++)
		if ((m->v[i].kind == AG_WS_ADDED && m->v[i].new_kind != AG_WS_DIR) ||
		    (m->v[i].kind == AG_WS_DELETED && m->v[i].old_kind != AG_WS_DIR))
			nref++;
	if (!nref)
		return;
	struct ident_ref *r = ag_xmalloc(nref * sizeof(*r));
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct ag_ws_change *c = &m->v[i];
		if (c->kind == AG_WS_ADDED && c->new_kind != AG_WS_DIR)
			r[k++] = (struct ident_ref){ag_ws_snapshot_find(cur, c->path), i, true};
		else if (c->kind == AG_WS_DELETED && c->old_kind != AG_WS_DIR)
			r[k++] = (struct ident_ref){ag_ws_snapshot_find(base, c->path), i, false};
	}
	qsort(r, nref, sizeof(*r), ident_cmp);
	for (size_t i = 0; i < nref;) {
		size_t j = i;
		size_t nd = 0, na = 0, di = 0, ai = 0;
		while (j < nref && r[j].e->kind == r[i].e->kind && r[j].e->mode == r[i].e->mode &&
		       r[j].e->size == r[i].e->size &&
		       !memcmp(r[j].e->sha, r[i].e->sha, sizeof(r[i].e->sha))) {
			if (r[j].added) {
				na++;
				ai = j;
			} else {
				nd++;
				di = j;
			}
			j++;
		}
		if (nd == 1 && na == 1) {
			struct ag_ws_change *a = &m->v[r[ai].change], *d = &m->v[r[di].change];
			a->kind = AG_WS_RENAMED;
			a->old_path = ag_steal_ptr(&d->path);
			a->old_kind = d->old_kind;
			a->lines =
			    r[ai].e->kind == AG_WS_FILE
				? (r[ai].e->content == AG_WS_CONTENT_BINARY ? AG_WS_LINES_BINARY
									    : AG_WS_LINES_EXACT)
				: AG_WS_LINES_NOT_APPLICABLE;
			a->lines_added = a->lines_deleted = 0;
			/* d->path is now NULL: that half is dropped below */
		}
		i = j;
	}
	free(r);
	size_t w = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (!m->v[i].path)
			continue;
		m->v[w++] = m->v[i];
	}
	m->n = w;
}

static int compare(struct cap *c, const struct ag_ws_baseline *bl, const struct ag_ws_snapshot *cur,
		   struct ag_ws_mutations *m, struct ag_error **err)
{
	const struct ag_ws_snapshot *base = &bl->snap;
	size_t alloc = 0, i = 0, j = 0;
	for (;;) {
		/* Changes are counted in files and symlinks, as the earlier
		 * implementation did: a directory is only where files are, so a
		 * new file in a new directory is one change, a removed empty
		 * directory none, and a file that became a directory is a deleted
		 * file (plus the files the directory now holds). */
		while (i < base->n && base->v[i].kind == AG_WS_DIR)
			i++;
		while (j < cur->n && cur->v[j].kind == AG_WS_DIR)
			j++;
		if (i >= base->n && j >= cur->n)
			break;
		int cmp = i >= base->n	? 1
			  : j >= cur->n ? -1
					: strcmp(base->v[i].path, cur->v[j].path);
		struct ag_ws_change ch = {0};
		if (cmp < 0) {
			const struct ag_ws_entry *b = &base->v[i++];
			ch.kind = AG_WS_DELETED;
			ch.path = ag_xstrdup(b->path);
			ch.old_kind = b->kind;
			whole_lines(b, false, &ch);
		} else if (cmp > 0) {
			const struct ag_ws_entry *e = &cur->v[j++];
			ch.kind = AG_WS_ADDED;
			ch.path = ag_xstrdup(e->path);
			ch.new_kind = e->kind;
			whole_lines(e, true, &ch);
		} else {
			const struct ag_ws_entry *b = &base->v[i++], *e = &cur->v[j++];
			if (same_content(b, e))
				continue;
			ch.kind = AG_WS_MODIFIED;
			ch.path = ag_xstrdup(b->path);
			ch.old_kind = b->kind;
			ch.new_kind = e->kind;
			if (modified_lines(c, b, e, &ch, err) < 0) {
				free(ch.path);
				return -1;
			}
		}
		push_change(m, &alloc, ch);
	}
	pair_renames(m, base, cur);
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), change_cmp);
	m->lines_complete = true;
	for (size_t k = 0; k < m->n; k++) {
		struct ag_ws_change *ch = &m->v[k];
		switch (ch->kind) {
		case AG_WS_ADDED:
			m->added++;
			break;
		case AG_WS_DELETED:
			m->deleted++;
			break;
		case AG_WS_MODIFIED:
			m->modified++;
			break;
		case AG_WS_RENAMED:
			m->renamed++;
			break;
		}
		if (ch->lines == AG_WS_LINES_EXACT) {
			m->lines_added += ch->lines_added;
			m->lines_deleted += ch->lines_deleted;
		} else if (ch->lines != AG_WS_LINES_NOT_APPLICABLE) {
			m->lines_complete = false;
		}
	}
	return 0;
}

int ag_ws_capture(int rootfd, const char *id, const struct ag_ws_capture_opts *opts,
		  struct ag_ws_mutations *out, struct ag_error **err)
{
	static const struct ag_ws_capture_opts defaults = {0};
	const struct ag_ws_capture_opts *o = opts ? opts : &defaults;
	struct ag_ws_limits dl;
	ag_ws_limits_default(&dl);
	const struct ag_ws_limits *l = o->limits ? o->limits : &dl;
	memset(out, 0, sizeof(*out));

	_cleanup_close_ int run = ag_ws_open_run(rootfd, id, err);
	if (run < 0)
		return ag_err_wrap(err, "workspace capture");
	struct ag_ws_baseline bl;
	if (ag_ws_baseline_load(run, o->expected_digest, &bl, err) < 0)
		return ag_err_wrap(err, "workspace capture");
	struct cap c = {.evfd = -1, .wsfd = -1, .textfd = -1};
	int r = -1;
	_cleanup_snapshot_ struct ag_ws_snapshot cur = AG_WS_SNAPSHOT_INIT;
	c.wsfd = openat(run, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	c.evfd = openat(run, "evidence", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.wsfd < 0 || c.evfd < 0) {
		ag_err(err, AG_E_UNSAFE_PATH, errno, "workspace.not_owned",
		       "workspace layout is not intact");
		goto out;
	}
	c.textfd = openat(c.evfd, AG_WS_TEXT_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct ag_ws_snapshot_opts so = {
	    .mode = AG_WS_CAPTURE,
	    .limits = l,
	    .dest_rootfd = -1,
	    .text_fd = -1,
	    .threads = o->threads,
	    .after_walk = o->after_walk,
	    .hook_ctx = o->hook_ctx,
	    .progress = o->progress,
	    .progress_ctx = o->progress_ctx,
	    .skip_root_git = o->skip_root_git,
	};
	/* CONTRACT: workspace.capture.same_rules */
	if (ag_ws_snapshot_take(c.wsfd, &so, &cur, err) < 0)
		goto out;
	c.cur = &cur;
	if (compare(&c, &bl, &cur, out, err) < 0)
		goto out;
	ag_ws_snapshot_digest(&cur, out->current_digest);
	memcpy(out->baseline_digest, bl.digest, sizeof(bl.digest));
	out->entries = cur.n;
	r = 0;
out:
	if (c.wsfd >= 0)
		close(c.wsfd);
	if (c.evfd >= 0)
		close(c.evfd);
	if (c.textfd >= 0)
		close(c.textfd);
	ag_ws_baseline_release(&bl);
	if (r < 0) {
		ag_ws_mutations_release(out);
		return ag_err_wrap(err, "workspace capture");
	}
	return 0;
}
