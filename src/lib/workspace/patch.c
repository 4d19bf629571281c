#include "lib/base/ag.h"
#include "lib/workspace/patch.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/workspace/mutation.h"

#include <git2.h>
#include "lib/base/lazylib.h"
#include <limits.h>
#include <sys/stat.h>

/* One side of one file: content and git mode (0 when absent). */
struct side {
	char *data;
	size_t len;
	unsigned mode; /* 0100644, 0100755, 0120000; 0 absent */
};

static void side_release(struct side *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}

/*
 * Opens the directory holding rel beneath root, one component at a time
 * with O_NOFOLLOW (no link is followed anywhere); *leaf points into rel.
 */
static int open_parent(int root, const char *rel, char *copy, const char **leaf,
		       struct ag_error **err)
{
	size_t n = strlen(rel);
	if (n == 0 || n >= PATH_MAX || rel[0] == '/')
		return ag_err(err, AG_E_UNSAFE_PATH, 0, "patch.path", "not a relative path");
	memcpy(copy, rel, n + 1);
	int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return ag_err(err, AG_E_IO, errno, "patch.open", "cannot open a changed file");
	char *p = copy;
	for (char *slash; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = '\0';
		if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
			close(cur);
			return ag_err(err, AG_E_UNSAFE_PATH, 0, "patch.path",
				      "unusual path component");
		}
		int next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		if (next < 0)
			return ag_err(err, AG_E_IO, e, "patch.open",
				      "cannot open a changed file's directory");
		cur = next;
	}
	if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
		close(cur);
		return ag_err(err, AG_E_UNSAFE_PATH, 0, "patch.path", "unusual path component");
	}
	*leaf = p;
	return cur;
}

/* Reads a regular file or a symlink's target beneath root, within *budget. */
static int read_side(int root, const char *rel, uint64_t *budget, struct side *s,
		     struct ag_error **err)
{
	static const struct ag_read_reasons why = {"patch.symlink", "patch.special", "patch.read",
						   "limit.patch.input"};
	char copy[PATH_MAX];
	const char *leaf = NULL;
	int dir = open_parent(root, rel, copy, &leaf, err);
	if (dir < 0)
		return -1;
	struct stat st;
	int rc = -1;
	if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		ag_err(err, AG_E_IO, errno, "patch.read", "cannot stat a changed file");
	} else if (S_ISLNK(st.st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlinkat(dir, leaf, t, sizeof(t));
		if (n < 0 || (size_t)n >= sizeof(t) || (uint64_t)n > *budget) {
			ag_err(err, AG_E_IO, errno, "patch.read", "cannot read a changed link");
		} else {
			s->data = ag_xstrndup(t, (size_t)n);
			s->len = (size_t)n;
			s->mode = 0120000;
			*budget -= (uint64_t)n;
			rc = 0;
		}
	} else if (S_ISREG(st.st_mode)) {
		int fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat fs;
		if (fd < 0 || fstat(fd, &fs) < 0) {
			ag_err(err, AG_E_IO, errno, "patch.read", "cannot open a changed file");
		} else if (ag_read_fd(fd, "changed file", (size_t)*budget, &why, &s->data, &s->len,
				      err) == 0) {
			s->mode = (fs.st_mode & 0111) ? 0100755 : 0100644;
			*budget -= s->len;
			rc = 0;
		}
		if (fd >= 0)
			close(fd);
	} else {
		ag_err(err, AG_E_UNSAFE_PATH, 0, "patch.special",
		       "a changed entry is not a file or link");
	}
	close(dir);
	return rc;
}

/* git's quote_c_style with core.quotePath: "PREFIX..." when needed. */
static int put_path(struct ag_buf *b, const char *prefix, const char *p, struct ag_error **err)
{
	bool quote = false;
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c < 0x20 || *c == '"' || *c == '\\' || *c >= 0x7f)
			quote = true;
	if (!quote)
		return ag_buf_addf(b, err, "%s%s", prefix, p);
	if (ag_buf_addf(b, err, "\"%s", prefix) < 0)
		return -1;
	for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
		static const char from[] = "\a\b\t\n\v\f\r\"\\", to[] = "abtnvfr\"\\";
		const char *k = *c ? strchr(from, *c) : NULL;
		int rc = k			     ? ag_buf_addf(b, err, "\\%c", to[k - from])
			 : (*c < 0x20 || *c >= 0x7f) ? ag_buf_addf(b, err, "\\%03o", *c)
						     : ag_buf_add(b, c, 1, err);
		if (rc < 0)
			return -1;
	}
	return ag_buf_adds(b, "\"", err);
}

static void blob_hex(const struct side *s, char hex[GIT_OID_HEXSZ + 1])
{
	git_oid id;
	memset(hex, '0', GIT_OID_HEXSZ);
	hex[GIT_OID_HEXSZ] = '\0';
	if (s->mode && git_odb_hash(&id, s->data ? s->data : "", s->len, GIT_OBJECT_BLOB) == 0)
		git_oid_fmt(hex, &id);
}

struct print_ctx {
	struct ag_buf *out;
	struct ag_error **err;
	bool no_data; /* a binary file libgit2 could not encode */
};

/* Hunks and binary data as git prints them; the file header is ours. */
static int print_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		      void *data)
{
	(void)d;
	(void)h;
	struct print_ctx *c = data;
	if (l->origin == GIT_DIFF_LINE_FILE_HDR)
		return 0;
	if (l->origin == GIT_DIFF_LINE_BINARY && l->content_len >= 12 &&
	    memcmp(l->content, "Binary files", 12) == 0) {
		c->no_data = true;
		return -1;
	}
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION) {
		char o = l->origin;
		if (ag_buf_add(c->out, &o, 1, c->err) < 0)
			return -1;
	}
	return ag_buf_add(c->out, l->content, l->content_len, c->err) < 0 ? -1 : 0;
}

/*
 * One file section: old (path a) to new (path b); either side may be
 * absent (mode 0). rename: a pure rename (same content and mode).
 */
static int section(struct ag_buf *out, const char *a, const struct side *o, const char *b,
		   const struct side *n, bool rename, struct ag_patch_stats *st,
		   struct ag_error **err)
{
	bool same = o->mode && n->mode && o->len == n->len &&
		    (o->len == 0 || memcmp(o->data, n->data, o->len) == 0);
	if (!rename && same && o->mode == n->mode)
		return 0; /* only bits git does not track changed */
	const char *pa = o->mode ? a : b, *pb = n->mode ? b : a;
	if (ag_buf_adds(out, "diff --git ", err) < 0 || put_path(out, "a/", pa, err) < 0 ||
	    ag_buf_adds(out, " ", err) < 0 || put_path(out, "b/", pb, err) < 0 ||
	    ag_buf_adds(out, "\n", err) < 0)
		return -1;
	if (!o->mode && ag_buf_addf(out, err, "new file mode %06o\n", n->mode) < 0)
		return -1;
	if (!n->mode && ag_buf_addf(out, err, "deleted file mode %06o\n", o->mode) < 0)
		return -1;
	if (o->mode && n->mode && o->mode != n->mode &&
	    ag_buf_addf(out, err, "old mode %06o\nnew mode %06o\n", o->mode, n->mode) < 0)
		return -1;
	if (rename) {
		if (ag_buf_adds(out, "similarity index 100%\nrename from ", err) < 0 ||
		    put_path(out, "", a, err) < 0 || ag_buf_adds(out, "\nrename to ", err) < 0 ||
		    put_path(out, "", b, err) < 0 || ag_buf_adds(out, "\n", err) < 0)
			return -1;
	}
	st->files++;
	if (same)
		return 0; /* header only: a mode change or a pure rename */
	char ho[GIT_OID_HEXSZ + 1], hn[GIT_OID_HEXSZ + 1];
	blob_hex(o, ho);
	blob_hex(n, hn);
	if (ag_buf_addf(out, err, "index %s..%s", ho, hn) < 0 ||
	    (o->mode && o->mode == n->mode && ag_buf_addf(out, err, " %06o", o->mode) < 0) ||
	    ag_buf_adds(out, "\n", err) < 0)
		return -1;

	git_diff_options opts;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_SHOW_BINARY;
	opts.context_lines = AG_PATCH_CONTEXT_LINES;
	opts.interhunk_lines = 0;
	git_patch *p = NULL;
	/* A NULL buffer is an absent side; an empty file is "" of length 0. */
	if (git_patch_from_buffers(&p, o->mode ? (o->data ? o->data : "") : NULL, o->len, pa,
				   n->mode ? (n->data ? n->data : "") : NULL, n->len, pb,
				   &opts) < 0)
		return ag_err(err, AG_E_INTERNAL, 0, "patch.diff", "libgit2 could not diff a file");
	const git_diff_delta *d = git_patch_get_delta(p);
	bool binary = d && (d->flags & GIT_DIFF_FLAG_BINARY);
	int rc = 0;
	if (!binary && git_patch_num_hunks(p) > 0) {
		if (ag_buf_adds(out, "--- ", err) < 0 ||
		    (o->mode ? put_path(out, "a/", pa, err) : ag_buf_adds(out, "/dev/null", err)) <
			0 ||
		    ag_buf_adds(out, "\n+++ ", err) < 0 ||
		    (n->mode ? put_path(out, "b/", pb, err) : ag_buf_adds(out, "/dev/null", err)) <
			0 ||
		    ag_buf_adds(out, "\n", err) < 0)
			rc = -1;
	}
	struct print_ctx pc = {out, err, false};
	if (rc == 0 && git_patch_print(p, print_line, &pc) != 0) {
		rc = -1;
		if (pc.no_data && !*err)
			ag_err(err, AG_E_INTERNAL, 0, "patch.binary",
			       "a binary file could not be encoded");
		else if (!*err)
			ag_err(err, AG_E_INTERNAL, 0, "patch.diff",
			       "libgit2 could not print a file");
	}
	if (binary)
		st->binary++;
	git_patch_free(p);
	return rc;
}

static bool is_dir(uint8_t kind)
{
	return kind == AG_WS_DIR;
}

int ag_patch_build(int old_rootfd, int new_rootfd, const struct ag_ws_mutations *m,
		   struct ag_buf *out, struct ag_patch_stats *st, struct ag_error **err)
{
	memset(st, 0, sizeof(*st));
	if (ag_lazy_git2_load(err) < 0)
		return -1;
	if (git_libgit2_init() < 0)
		return ag_err(err, AG_E_INTERNAL, 0, "patch.libgit2", "libgit2 did not initialise");
	uint64_t budget = AG_PATCH_MAX_INPUT_BYTES;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < m->n; i++) {
		const struct ag_ws_change *c = &m->v[i];
		struct side o = {0}, n = {0};
		const char *a = c->kind == AG_WS_RENAMED ? c->old_path : c->path;
		bool old_file = c->kind != AG_WS_ADDED && !is_dir(c->old_kind);
		bool new_file = c->kind != AG_WS_DELETED && !is_dir(c->new_kind);
		if (c->kind != AG_WS_RENAMED && c->kind != AG_WS_ADDED && is_dir(c->old_kind))
			st->dirs_skipped++;
		else if (c->kind != AG_WS_DELETED && is_dir(c->new_kind))
			st->dirs_skipped++;
		if ((old_file && read_side(old_rootfd, a, &budget, &o, err) < 0) ||
		    (new_file && read_side(new_rootfd, c->path, &budget, &n, err) < 0)) {
			rc = -1;
		} else if (c->kind == AG_WS_RENAMED) {
			rc = section(out, a, &o, c->path, &n, true, st, err);
		} else if (o.mode && n.mode && (o.mode == 0120000) != (n.mode == 0120000)) {
			/* a type change is a deletion and an addition, as in git */
			struct side none = {0};
			rc = section(out, a, &o, c->path, &none, false, st, err);
			if (rc == 0)
				rc = section(out, a, &none, c->path, &n, false, st, err);
		} else if (o.mode || n.mode) {
			rc = section(out, a, &o, c->path, &n, false, st, err);
		}
		side_release(&o);
		side_release(&n);
	}
	st->bytes_read = AG_PATCH_MAX_INPUT_BYTES - budget;
	git_libgit2_shutdown();
	return rc;
}

const char *ag_patch_why_missing(const char *status, const char *reason)
{
	static const struct {
		const char *reason, *text;
	} why[] = {
	    {"patch.secret_scan",
	     "withheld: the secret scan found a secret in the agent's changed files (see the "
	     "secret-scan check)"},
	    {"patch.secret", "withheld: a configured secret value is in the agent's changed files"},
	    {"patch.source_changed",
	     "not made: the source repository changed during the run, so the patch's old side "
	     "is not known"},
	    {"limit.patch.size", "not written: the patch is over its size limit (32 MiB)"},
	    {"limit.patch.input",
	     "not written: the changed files are over the patch's input limit"},
	    {"patch.workspace", "not made: the workspace could not be opened"},
	    {"patch.write", "not written: the run directory could not be written"},
	};
	if (!status)
		return "not recorded: this run's artifact has no patch record";
	if (strcmp(status, "none") == 0)
		return "none: the agent changed nothing a patch carries";
	if (strcmp(status, "not_captured") == 0)
		return "not made: the agent's changes were not captured";
	if (strcmp(status, "written") == 0)
		return "written";
	for (size_t i = 0; reason && i < AG_ARRAY_SIZE(why); i++)
		if (strcmp(reason, why[i].reason) == 0)
			return why[i].text;
	return "not made: the patch could not be built";
}
