#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/workspace/workspace.h"
#include "lib/workspace/gitbase.h"

#include <dirent.h>
#include <inttypes.h>
#include <jansson.h>
#include <sys/stat.h>

#define STAGING_SUFFIX ".preparing"

static const char *R_EXISTS = "workspace.exists";
#define R_CORRUPT "workspace.baseline_corrupt"

/* ------------------------------------------------------------ validation */

int ag_ws_id_validate(const char *id, struct ag_error **err)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n > AG_WS_ID_MAX || id[0] == '.' || id[0] == '-')
		return ag_err(err, AG_E_USAGE, 0, "workspace.id_invalid",
			      "workspace id must be 1..%d characters of [A-Za-z0-9._-], not "
			      "starting with '.' or '-'",
			      AG_WS_ID_MAX);
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return ag_err(err, AG_E_USAGE, 0, "workspace.id_invalid",
				      "workspace id contains a character outside [A-Za-z0-9._-]");
	}
	size_t sl = strlen(STAGING_SUFFIX);
	if (n >= sl && !strcmp(id + n - sl, STAGING_SUFFIX))
		return ag_err(err, AG_E_USAGE, 0, "workspace.id_invalid",
			      "workspace id must not end in '%s'", STAGING_SUFFIX);
	return 0;
}

/* Splits a relative path check: no empty/./.. parts, no leading '/', no '\\' or control bytes. */
static bool rel_path_ok(const char *p)
{
	if (!*p || p[0] == '/')
		return false;
	const char *c = p;
	for (;;) {
		const char *s = strchr(c, '/');
		size_t l = s ? (size_t)(s - c) : strlen(c);
		if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!s)
			break;
		c = s + 1;
	}
	for (const unsigned char *u = (const unsigned char *)p; *u; u++)
		if (*u < 0x20 || *u == 0x7f || *u == '\\')
			return false;
	return true;
}

static int reserved_in_path(const char *p)
{
	const char *c = p;
	for (;;) {
		const char *s = strchr(c, '/');
		size_t l = s ? (size_t)(s - c) : strlen(c);
		int r = ag_ws_reserved_component(c, l);
		if (r)
			return r;
		if (!s)
			return 0;
		c = s + 1;
	}
}

/* CONTRACT: workspace.writable_paths */
int ag_ws_writable_normalise(const char *const *in, size_t n, struct ag_strv *out,
			     struct ag_error **err)
{
	_cleanup_strv_ struct ag_strv v = AG_STRV_INIT;
	if (n == 0 || n > AG_WS_MAX_WRITABLE_PATHS)
		return ag_err(err, AG_E_USAGE, 0, "workspace.writable.invalid",
			      "between 1 and %d writable paths are required",
			      AG_WS_MAX_WRITABLE_PATHS);
	for (size_t i = 0; i < n; i++) {
		const char *p = in[i];
		if (!p || strlen(p) > AG_WS_MAX_PATH_BYTES)
			return ag_err(err, AG_E_USAGE, 0, "workspace.writable.invalid",
				      "writable path %zu is missing or too long", i);
		_cleanup_free_ char *s = ag_xstrdup(p);
		size_t l = strlen(s);
		while (l > 1 && s[l - 1] == '/')
			s[--l] = '\0';
		if (!strcmp(s, ".")) {
			ag_strv_push(&v, ".");
			continue;
		}
		if (!rel_path_ok(s))
			return ag_err(err, AG_E_USAGE, 0, "workspace.writable.invalid",
				      "writable path %zu is not a normalised relative path", i);
		if (reserved_in_path(s))
			return ag_err(err, AG_E_UNSAFE_PATH, 0, "workspace.writable.reserved",
				      "writable path %zu names a reserved path", i);
		ag_strv_push(&v, s);
	}
	ag_strv_sort(&v);
	for (size_t i = 0; i < v.n; i++) {
		if (!strcmp(v.v[i], ".") && v.n > 1)
			return ag_err(err, AG_E_USAGE, 0, "workspace.writable.root_not_alone",
				      "writable root '.' must be the only writable path");
		if (i && !strcmp(v.v[i], v.v[i - 1]))
			return ag_err(err, AG_E_USAGE, 0, "workspace.writable.duplicate",
				      "writable paths must be unique");
	}
	for (size_t i = 0; i < v.n; i++)
		for (size_t j = 0; j < v.n; j++) {
			size_t li = strlen(v.v[i]);
			if (i != j && !strncmp(v.v[i], v.v[j], li) && v.v[j][li] == '/')
				return ag_err(err, AG_E_USAGE, 0, "workspace.writable.overlap",
					      "writable paths must not overlap");
		}
	*out = v;
	v = (struct ag_strv)AG_STRV_INIT;
	return 0;
}

static bool mount_ok(const char *m)
{
	return m && m[0] == '/' && m[1] && strlen(m) <= AG_WS_MAX_PATH_BYTES &&
	       m[strlen(m) - 1] != '/' && rel_path_ok(m + 1);
}

int ag_ws_mounts_validate(const char *a, const char *e, struct ag_error **err)
{
	if (!mount_ok(a) || !mount_ok(e))
		return ag_err(err, AG_E_USAGE, 0, "workspace.mount.invalid",
			      "mount points must be absolute, normalised and not '/'");
	size_t la = strlen(a), le = strlen(e);
	if (!strcmp(a, e) || (la < le && !strncmp(a, e, la) && e[la] == '/') ||
	    (le < la && !strncmp(e, a, le) && a[le] == '/'))
		return ag_err(err, AG_E_USAGE, 0, "workspace.mount.overlap",
			      "the evidence mount must not equal, contain or be inside the agent "
			      "mount");
	return 0;
}

/* -------------------------------------------------------------- removal */

/*
 * Iterative, fd-relative removal with constant stack and at most two open
 * directory fds, whatever the depth: the walk descends by openat(O_NOFOLLOW)
 * and climbs back by "..", whose identity must be the recorded parent's
 * (else the tree moved under us: fail closed). Per level the heap keeps the
 * directory's identity, its name and the names that could not be removed
 * (skipped on rescans, so every scan makes progress or ends the level).
 */
struct rm_level {
	dev_t dev;
	ino_t ino;
	char *name; /* in the parent; NULL for the top */
	struct ag_strv failed;
};

/* Opens dirfd/name (a directory lstat'ed as *st) for removal: owner rwx. */
static int rm_open_dir(int dirfd, const char *name, const struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat fs;
	if (fstat(fd, &fs) < 0 || fs.st_dev != st->st_dev || fs.st_ino != st->st_ino) {
		close(fd);
		return -1;
	}
	if ((fs.st_mode & 0700) != 0700 && fchmod(fd, (fs.st_mode & 07777) | 0700) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

enum rm_scan { RM_SCAN_DONE, RM_SCAN_AGAIN, RM_SCAN_DESCEND };

/* One pass over the directory at fd: unlinks what is not a directory and
 * stops at the first directory to descend into (*sub, *sst). */
static enum rm_scan rm_scan(int fd, struct rm_level *L, char **sub, struct stat *sst,
			    uint64_t *removed, uint64_t *remaining)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		if (dup >= 0)
			close(dup);
		ag_strv_push(&L->failed, "."); /* this level cannot be listed */
		(*remaining)++;
		return RM_SCAN_DONE;
	}
	enum rm_scan r = RM_SCAN_DONE;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, "..") || ag_strv_find(&L->failed, n) >= 0)
			continue;
		struct stat st;
		if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			ag_strv_push(&L->failed, n);
			(*remaining)++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			*sub = ag_xstrdup(n);
			*sst = st;
			r = RM_SCAN_DESCEND;
			break;
		}
		if (unlinkat(fd, n, 0) < 0 && errno != ENOENT) {
			ag_strv_push(&L->failed, n);
			(*remaining)++;
			continue;
		}
		(*removed)++;
		r = RM_SCAN_AGAIN; /* entries may shift under readdir: look again */
	}
	closedir(d);
	return r;
}

int ag_ws_remove_tree(int dirfd, const char *name, uint64_t *removed, uint64_t *remaining)
{
	uint64_t a = 0, b = 0;
	if (!removed)
		removed = &a;
	if (!remaining)
		remaining = &b;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		(*remaining)++;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT) {
			(*remaining)++;
			return -1;
		}
		(*removed)++;
		return 0;
	}
	int fd = rm_open_dir(dirfd, name, &st);
	if (fd < 0) {
		(*remaining)++;
		return -1;
	}
	size_t n = 1, alloc = 16;
	struct rm_level *lv = ag_xcalloc(alloc, sizeof(*lv));
	lv[0] = (struct rm_level){st.st_dev, st.st_ino, NULL, AG_STRV_INIT};
	bool moved = false;
	for (;;) {
		struct rm_level *L = &lv[n - 1];
		char *sub = NULL;
		struct stat sst;
		enum rm_scan s = rm_scan(fd, L, &sub, &sst, removed, remaining);
		if (s == RM_SCAN_AGAIN)
			continue;
		if (s == RM_SCAN_DESCEND) {
			int cfd = rm_open_dir(fd, sub, &sst);
			if (cfd < 0) {
				ag_strv_push_owned(&L->failed, sub);
				(*remaining)++;
				continue;
			}
			if (n == alloc) {
				alloc *= 2;
				lv = ag_xrealloc(lv, alloc * sizeof(*lv));
			}
			lv[n++] = (struct rm_level){sst.st_dev, sst.st_ino, sub, AG_STRV_INIT};
			close(fd);
			fd = cfd;
			continue;
		}
		if (n == 1)
			break;
		/* this level is as empty as it gets: climb to the recorded parent */
		int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat ps;
		if (pfd < 0 || fstat(pfd, &ps) < 0 || ps.st_dev != lv[n - 2].dev ||
		    ps.st_ino != lv[n - 2].ino) {
			if (pfd >= 0)
				close(pfd);
			moved = true;
			(*remaining)++;
			break;
		}
		close(fd);
		fd = pfd;
		bool level_failed = L->failed.n > 0;
		char *nm = L->name;
		ag_strv_release(&L->failed);
		n--;
		if (level_failed) {
			ag_strv_push_owned(&lv[n - 1].failed, nm);
		} else if (unlinkat(fd, nm, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			ag_strv_push_owned(&lv[n - 1].failed, nm);
			(*remaining)++;
		} else {
			(*removed)++;
			free(nm);
		}
	}
	close(fd);
	bool ok = !moved && lv[0].failed.n == 0;
	for (size_t i = 0; i < n; i++) {
		free(lv[i].name);
		ag_strv_release(&lv[i].failed);
	}
	free(lv);
	if (!ok)
		return -1;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
		(*remaining)++;
		return -1;
	}
	(*removed)++;
	return 0;
}

/* ------------------------------------------------------------- baseline */

static int add_enc(struct ag_buf *b, const char *s, struct ag_error **err)
{
	return ag_ws_path_encode(b, s, strlen(s), err);
}

static int baseline_serialize(const struct ag_ws_gitinfo *g, const struct ag_ws_snapshot *s,
			      struct ag_buf *b, struct ag_error **err)
{
	if (ag_buf_addf(b, err,
			"agentguard-workspace-baseline\t1\nsource_kind\t%s\ngit_head\t%s\n"
			"git_status\t%zu\n",
			ag_ws_source_kind_name(g->kind), g->head[0] ? g->head : "-",
			g->nstatus) < 0)
		return -1;
	for (size_t i = 0; i < g->nstatus; i++) {
		const struct ag_ws_git_status *st = &g->status[i];
		if (ag_buf_addf(b, err, "s\t%s\t", st->xy) < 0 || add_enc(b, st->path, err) < 0 ||
		    ag_buf_adds(b, "\t", err) < 0 ||
		    (st->source_path && add_enc(b, st->source_path, err) < 0) ||
		    ag_buf_adds(b, "\n", err) < 0)
			return -1;
	}
	if (ag_buf_addf(b, err, "entries\t%zu\n", s->n) < 0 ||
	    ag_ws_snapshot_serialize(s, b, err) < 0 || ag_buf_adds(b, "end\n", err) < 0)
		return -1;
	return 0;
}

void ag_ws_baseline_release(struct ag_ws_baseline *b)
{
	ag_ws_gitinfo_release(&b->git);
	ag_ws_snapshot_release(&b->snap);
}

/* Splits line [p, e) at tabs into at most max fields; returns the count. */
static size_t split_tabs(char *p, char *e, char **f, size_t max)
{
	size_t n = 0;
	f[n++] = p;
	for (char *q = p; q < e; q++)
		if (*q == '\t') {
			*q = '\0';
			if (n == max)
				return max + 1;
			f[n++] = q + 1;
		}
	*e = '\0';
	return n;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	if (!*s || (s[0] == '0' && s[1]))
		return false;
	uint64_t x = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

static int content_from_name(const char *s)
{
	static const struct {
		const char *n;
		int c;
	} t[] = {{"text", AG_WS_CONTENT_TEXT},
		 {"binary", AG_WS_CONTENT_BINARY},
		 {"non_utf8", AG_WS_CONTENT_NON_UTF8},
		 {"symlink", AG_WS_CONTENT_SYMLINK},
		 {"not_applicable", AG_WS_CONTENT_NA}};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++)
		if (!strcmp(s, t[i].n))
			return t[i].c;
	return -1;
}

static int corrupt(struct ag_error **err, size_t line)
{
	return ag_err(err, AG_E_IO, 0, R_CORRUPT, "baseline line %zu is malformed", line);
}

static int baseline_parse(char *buf, size_t len, struct ag_ws_baseline *b, struct ag_error **err)
{
	char *p = buf, *end = buf + len;
	size_t line = 0;
	uint64_t nstatus = 0, nentries = 0;
	enum { HDR, KIND, HEAD, NSTAT, STAT, NENT, ENT, END, DONE } state = HDR;
	uint64_t seen = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return corrupt(err, line + 1);
		line++;
		char *f[12];
		size_t nf = split_tabs(p, nl, f, 11);
		p = nl + 1;
		switch (state) {
		case HDR:
			if (nf != 2 || strcmp(f[0], "agentguard-workspace-baseline") ||
			    strcmp(f[1], "1"))
				return corrupt(err, line);
			state = KIND;
			break;
		case KIND:
			if (nf != 2 || strcmp(f[0], "source_kind"))
				return corrupt(err, line);
			if (!strcmp(f[1], "git"))
				b->source_kind = AG_WS_SOURCE_GIT;
			else if (!strcmp(f[1], "git-empty"))
				b->source_kind = AG_WS_SOURCE_GIT_EMPTY;
			else if (!strcmp(f[1], "directory"))
				b->source_kind = AG_WS_SOURCE_DIRECTORY;
			else
				return corrupt(err, line);
			b->git.kind = b->source_kind;
			state = HEAD;
			break;
		case HEAD:
			if (nf != 2 || strcmp(f[0], "git_head") || strlen(f[1]) > 64)
				return corrupt(err, line);
			if (strcmp(f[1], "-"))
				memcpy(b->git_head, f[1], strlen(f[1]) + 1);
			memcpy(b->git.head, b->git_head, sizeof(b->git.head));
			state = NSTAT;
			break;
		case NSTAT:
			if (nf != 2 || strcmp(f[0], "git_status") || !parse_u64(f[1], &nstatus) ||
			    nstatus > AG_WS_GIT_STATUS_MAX_ENTRIES)
				return corrupt(err, line);
			b->git.status = ag_xcalloc(nstatus ? nstatus : 1, sizeof(*b->git.status));
			state = nstatus ? STAT : NENT;
			break;
		case STAT: {
			if (nf != 4 || strcmp(f[0], "s") || strlen(f[1]) != 2)
				return corrupt(err, line);
			struct ag_ws_git_status *s = &b->git.status[b->git.nstatus];
			memcpy(s->xy, f[1], 3);
			s->path = ag_ws_path_decode(f[2], strlen(f[2]), NULL);
			b->git.nstatus++;
			if (!s->path)
				return corrupt(err, line);
			if (f[3][0]) {
				s->source_path = ag_ws_path_decode(f[3], strlen(f[3]), NULL);
				if (!s->source_path)
					return corrupt(err, line);
			}
			if (b->git.nstatus == nstatus)
				state = NENT;
			break;
		}
		case NENT:
			if (nf != 2 || strcmp(f[0], "entries") || !parse_u64(f[1], &nentries) ||
			    nentries > AG_WS_MAX_ENTRIES * 16ULL)
				return corrupt(err, line);
			b->snap.alloc = nentries ? nentries : 1;
			b->snap.v = ag_xcalloc(b->snap.alloc, sizeof(*b->snap.v));
			state = nentries ? ENT : END;
			break;
		case ENT: {
			if (nf != 10 || strcmp(f[0], "e") || strlen(f[2]) != 1)
				return corrupt(err, line);
			struct ag_ws_entry *e = &b->snap.v[b->snap.n];
			e->path = ag_ws_path_decode(f[1], strlen(f[1]), NULL);
			b->snap.n++;
			uint64_t mode;
			char *mend;
			mode = strtoull(f[3], &mend, 8);
			int content = content_from_name(f[6]);
			if (!e->path || !*e->path || *mend || strlen(f[3]) != 4 || mode > 07777 ||
			    !parse_u64(f[4], &e->size) || !parse_u64(f[7], &e->line_count) ||
			    content < 0)
				return corrupt(err, line);
			if (b->snap.n > 1 && strcmp(b->snap.v[b->snap.n - 2].path, e->path) >= 0)
				return corrupt(err, line); /* must be strictly sorted */
			e->mode = (uint32_t)mode;
			e->kind = (uint8_t)f[2][0];
			e->content = (uint8_t)content;
			if (e->kind == AG_WS_DIR) {
				if (strcmp(f[5], "-") || f[9][0] || strcmp(f[8], "-"))
					return corrupt(err, line);
			} else if (e->kind == AG_WS_FILE || e->kind == AG_WS_SYMLINK) {
				if (!ag_ws_sha_from_hex(f[5], e->sha))
					return corrupt(err, line);
				if (e->kind == AG_WS_SYMLINK) {
					size_t tl = 0;
					e->target = ag_ws_path_decode(f[9], strlen(f[9]), &tl);
					if (!e->target || tl != e->size)
						return corrupt(err, line);
				} else if (f[9][0]) {
					return corrupt(err, line);
				}
				if (strcmp(f[8], "-")) {
					if (e->kind != AG_WS_FILE || !parse_u64(f[8], &e->text_off))
						return corrupt(err, line);
					e->retained = true;
				}
			} else {
				return corrupt(err, line);
			}
			if (e->kind == AG_WS_FILE)
				b->snap.total_bytes += e->size;
			if (++seen == nentries)
				state = END;
			break;
		}
		case END:
			if (nf != 1 || strcmp(f[0], "end"))
				return corrupt(err, line);
			state = DONE;
			break;
		case DONE:
			return corrupt(err, line);
		}
	}
	if (state != DONE)
		return corrupt(err, line + 1);
	return 0;
}

int ag_ws_open_run(int rootfd, const char *id, struct ag_error **err)
{
	if (ag_ws_id_validate(id, err) < 0)
		return -1;
	int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return ag_err(err, AG_E_IO, errno, "workspace.not_found",
				      "workspace '%s' does not exist", id);
		if (errno == ELOOP || errno == ENOTDIR)
			return ag_err(err, AG_E_UNSAFE_PATH, errno, "workspace.not_owned",
				      "workspace '%s' is not a lifecycle-owned directory", id);
		return ag_err(err, AG_E_IO, errno, "workspace.io", "cannot open workspace '%s': %s",
			      id, strerror(errno));
	}
	return fd;
}

static const struct ag_read_reasons meta_reasons = {
    .symlink = "workspace.metadata_invalid",
    .not_regular = "workspace.metadata_invalid",
    .open = "workspace.metadata_invalid",
    .too_large = "workspace.metadata_invalid",
};

static int load_metadata(int rundirfd, json_t **out, struct ag_error **err)
{
	_cleanup_close_ int ev =
	    openat(rundirfd, "evidence", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ev < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.metadata_invalid",
			      "workspace evidence directory is missing");
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(ev, AG_WS_METADATA_FILE, "evidence/" AG_WS_METADATA_FILE,
			    AG_WS_METADATA_MAX_BYTES, &meta_reasons, &data, &len, err) < 0)
		return -1;
	json_error_t je;
	json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j) ||
	    json_integer_value(json_object_get(j, "schema_version")) != 1) {
		json_decref(j);
		return ag_err(err, AG_E_IO, 0, "workspace.metadata_invalid",
			      "workspace metadata is malformed");
	}
	*out = j;
	return 0;
}

static const struct ag_read_reasons base_reasons = {
    .symlink = R_CORRUPT,
    .not_regular = R_CORRUPT,
    .open = R_CORRUPT,
    .too_large = R_CORRUPT,
};

int ag_ws_baseline_load(int rundirfd, const char *expected_digest, struct ag_ws_baseline *b,
			struct ag_error **err)
{
	memset(b, 0, sizeof(*b));
	json_t *meta = NULL;
	if (load_metadata(rundirfd, &meta, err) < 0)
		return -1;
	const char *md =
	    json_string_value(json_object_get(json_object_get(meta, "baseline"), "digest"));
	char want[AG_SHA256_HEX_LEN + 1] = "";
	uint8_t raw[32];
	if (md && ag_ws_sha_from_hex(md, raw))
		memcpy(want, md, sizeof(want));
	json_decref(meta);
	if (!want[0])
		return ag_err(err, AG_E_IO, 0, "workspace.metadata_invalid",
			      "workspace metadata names no baseline digest");
	_cleanup_close_ int ev =
	    openat(rundirfd, "evidence", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ev < 0 ||
	    ag_read_file_at(ev, AG_WS_BASELINE_FILE, "evidence/" AG_WS_BASELINE_FILE,
			    AG_WS_BASELINE_MAX_BYTES, &base_reasons, &data, &len, err) < 0) {
		if (!*err)
			ag_err(err, AG_E_IO, errno, R_CORRUPT, "baseline is missing");
		return -1;
	}
	char got[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(data, len, got);
	if (strcmp(got, want) || (expected_digest && strcmp(got, expected_digest)))
		return ag_err(err, AG_E_UNVERIFIED, 0, "workspace.baseline_mismatch",
			      "baseline digest does not match the recorded digest");
	if (baseline_parse(data, len, b, err) < 0) {
		ag_ws_baseline_release(b);
		return -1;
	}
	memcpy(b->digest, got, sizeof(got));
	return 0;
}

/* ------------------------------------------------------------- metadata */

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static char *metadata_json(const char *id, const struct ag_ws_prepared *p,
			   const struct ag_ws_prepare_opts *o, const struct ag_ws_limits *l,
			   const struct ag_strv *writable, const char *agent_mount,
			   const char *evidence_mount, size_t nstatus)
{
	bool excluded_root = o->exclude_agentguard_root;
	static const char *const cleanup[] = {"workspace", "evidence", "."};
	json_t *root = json_object();
	json_object_set_new(root, "schema_version", json_integer(1));
	json_object_set_new(root, "workspace_id", json_string(id));
	json_object_set_new(root, "source_kind",
			    json_string(ag_ws_source_kind_name(p->source_kind)));
	json_t *b = json_object();
	json_object_set_new(b, "digest", json_string(p->digest));
	json_object_set_new(b, "digest_algorithm", json_string("sha256"));
	json_object_set_new(b, "file", json_string("evidence/" AG_WS_BASELINE_FILE));
	json_object_set_new(b, "format", json_string("agentguard-workspace-baseline/1"));
	json_object_set_new(b, "path_encoding", json_string("utf8-percent-v1"));
	json_object_set_new(b, "text_file", json_string("evidence/" AG_WS_TEXT_FILE));
	json_object_set_new(b, "text_bytes", json_integer((json_int_t)p->text_bytes));
	json_object_set_new(b, "entries", json_integer((json_int_t)p->entries));
	json_object_set_new(b, "files", json_integer((json_int_t)p->files));
	json_object_set_new(b, "total_bytes", json_integer((json_int_t)p->total_bytes));
	json_object_set_new(b, "git_head", p->git_head[0] ? json_string(p->git_head) : json_null());
	json_object_set_new(b, "git_status_entries", json_integer((json_int_t)nstatus));
	json_object_set_new(root, "baseline", b);
	json_object_set_new(root, "agent_mount", json_string(agent_mount));
	json_object_set_new(root, "evidence_mount", json_string(evidence_mount));
	json_object_set_new(root, "agent_visible_writable_paths",
			    strv_json((const char *const *)writable->v, writable->n));
	json_object_set_new(root, "agentguard_evidence", json_string("evidence"));
	json_object_set_new(root, "cleanup_targets", strv_json(cleanup, AG_ARRAY_SIZE(cleanup)));
	static const char *const excluded[] = {".agentguard"};
	json_object_set_new(root, "excluded_paths", strv_json(excluded, excluded_root ? 1 : 0));
	json_t *copy = ag_ws_copy_json(p, o->exclude, o->nexclude, o->exclude_counts, NULL, NULL);
	json_object_set_new(copy, "include_ignored", json_boolean(o->include_ignored));
	json_object_set_new(root, "copy", copy);
	json_object_set_new(root, "reserved_paths",
			    strv_json(ag_ws_reserved_names, AG_ARRAY_SIZE(ag_ws_reserved_names)));
	static const char *const seps[] = {".", "-", "_"};
	json_object_set_new(root, "reserved_prefix_separators", strv_json(seps, 3));
	json_t *lim = json_object();
	json_object_set_new(lim, "max_entries", json_integer((json_int_t)l->max_entries));
	json_object_set_new(lim, "max_file_bytes", json_integer((json_int_t)l->max_file_bytes));
	json_object_set_new(lim, "max_total_bytes", json_integer((json_int_t)l->max_total_bytes));
	json_object_set_new(lim, "max_symlink_target_bytes",
			    json_integer((json_int_t)l->max_symlink_target_bytes));
	json_object_set_new(lim, "max_path_bytes", json_integer((json_int_t)l->max_path_bytes));
	json_object_set_new(lim, "max_depth", json_integer((json_int_t)l->max_depth));
	json_object_set_new(lim, "max_text_bytes", json_integer((json_int_t)l->max_text_bytes));
	json_object_set_new(root, "limits", lim);
	char *s = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!s)
		abort();
	char *r = ag_xasprintf("%s\n", s);
	free(s);
	return r;
}

/* ---------------------------------------------------------- copy rules */

/* Rule indexes of the snapshot filter: 0 is git's ignore rules, 1 + i the
 * i-th exclude pattern. */
struct copy_filter {
	const struct ag_ws_prepare_opts *o;
	const struct ag_ws_gitinfo *git; /* NULL: no git rule */
};

static int copy_filter(void *ctx, const char *path, bool is_dir)
{
	const struct copy_filter *cf = ctx;
	const struct ag_ws_prepare_opts *o = cf->o;
	for (size_t i = 0; o->exclude_match && i < o->nexclude; i++) {
		int m = o->exclude_match(o->exclude[i], path);
		if (m < 0)
			return -2;
		if (m > 0)
			return (int)(1 + i);
	}
	if (cf->git && ag_ws_git_included(cf->git, path, is_dir) == AG_WS_GIT_EXCLUDED)
		return 0;
	return -1;
}

static bool git_rule_applies(const struct ag_ws_prepare_opts *o, const struct ag_ws_gitinfo *g)
{
	return !o->include_ignored && g->kind != AG_WS_SOURCE_DIRECTORY;
}

/* Points the snapshot options at the copy rules; counts has 1 + nexclude slots. */
static void copy_rules_apply(struct ag_ws_snapshot_opts *so, struct copy_filter *cf,
			     const struct ag_ws_prepare_opts *o, const struct ag_ws_gitinfo *g,
			     uint64_t *counts)
{
	cf->o = o;
	cf->git = git_rule_applies(o, g) ? g : NULL;
	if (!cf->git && !o->nexclude)
		return;
	so->filter = copy_filter;
	so->filter_ctx = cf;
	so->filter_counts = counts;
	so->nfilter_counts = 1 + o->nexclude;
}

const char *ag_ws_copy_rule_name(const struct ag_ws_prepared *p)
{
	return p->git_copy_rule ? "git-tracked-and-unignored" : "all-files";
}

json_t *ag_ws_copy_json(const struct ag_ws_prepared *p, const char *const *patterns, size_t n,
			const uint64_t *counts,
			json_t *(*pattern_json)(const char *pattern, void *ctx), void *ctx)
{
	json_t *copy = json_object();
	json_object_set_new(copy, "rule", json_string(ag_ws_copy_rule_name(p)));
	json_object_set_new(copy, "excluded_ignored_entries",
			    json_integer((json_int_t)p->excluded_ignored));
	json_t *pats = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *pe = json_object();
		json_object_set_new(pe, "pattern",
				    pattern_json ? pattern_json(patterns[i], ctx)
						 : json_string(patterns[i]));
		json_object_set_new(pe, "excluded_entries",
				    json_integer(counts ? (json_int_t)counts[i] : 0));
		json_array_append_new(pats, pe);
	}
	json_object_set_new(copy, "exclude", pats);
	return copy;
}

static unsigned git_what(const struct ag_ws_prepare_opts *o)
{
	/* with ignored files copied, the baseline lists them one by one (as
	 * before); otherwise an ignored directory is one entry, never entered */
	return o->include_ignored ? AG_WS_GIT_STATUS : AG_WS_GIT_STATUS_COLLAPSED | AG_WS_GIT_PATHS;
}

int ag_ws_source_snapshot(int srcfd, const struct ag_ws_prepare_opts *opts,
			  struct ag_ws_snapshot *out, struct ag_error **err)
{
	static const struct ag_ws_prepare_opts defaults = {0};
	const struct ag_ws_prepare_opts *o = opts ? opts : &defaults;
	struct ag_ws_gitinfo git = {0};
	if (!o->include_ignored) {
		struct ag_ws_git_opts go = {.what = AG_WS_GIT_PATHS,
					    .timeout_ms = o->git_timeout_ms};
		if (ag_ws_gitinfo_collect(srcfd, &go, &git, err) < 0)
			return -1;
	}
	struct ag_ws_snapshot_opts so = {
	    .mode = AG_WS_PREPARE,
	    .limits = o->limits,
	    .dest_rootfd = -1,
	    .text_fd = -1,
	    .threads = o->threads,
	    .exclude_agentguard_root = o->exclude_agentguard_root,
	    .progress = o->progress,
	    .progress_ctx = o->progress_ctx,
	};
	struct copy_filter cf;
	uint64_t *counts = ag_xcalloc(1 + o->nexclude, sizeof(*counts));
	copy_rules_apply(&so, &cf, o, &git, counts);
	int r = ag_ws_snapshot_take(srcfd, &so, out, err);
	free(counts);
	ag_ws_gitinfo_release(&git);
	return r;
}

/* -------------------------------------------------------------- prepare */

static int exists_at(int rootfd, const char *name)
{
	struct stat st;
	if (fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

static int prepare_staged(int srcfd, int stagefd, const char *id,
			  const struct ag_ws_prepare_opts *o, const struct ag_ws_limits *l,
			  const struct ag_strv *writable, const char *am, const char *em,
			  struct ag_ws_gitinfo *git, struct ag_ws_prepared *out,
			  struct ag_error **err)
{
	if (mkdirat(stagefd, "workspace", 0700) < 0 || mkdirat(stagefd, "evidence", 0700) < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io",
			      "cannot create the staging layout: %s", strerror(errno));
	_cleanup_close_ int wsfd =
	    openat(stagefd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int evfd =
	    openat(stagefd, "evidence", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0 || evfd < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io",
			      "cannot open the staging layout");
	_cleanup_close_ int textfd =
	    openat(evfd, AG_WS_TEXT_FILE, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (textfd < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io", "cannot create the text store");

	_cleanup_snapshot_ struct ag_ws_snapshot snap = AG_WS_SNAPSHOT_INIT;
	struct ag_ws_snapshot_opts so = {
	    .mode = AG_WS_PREPARE,
	    .limits = l,
	    .dest_rootfd = wsfd,
	    .text_fd = textfd,
	    .threads = o->threads,
	    .after_walk = o->after_walk,
	    .hook_ctx = o->hook_ctx,
	    .exclude_agentguard_root = o->exclude_agentguard_root,
	    .progress = o->progress,
	    .progress_ctx = o->progress_ctx,
	};
	struct copy_filter cf;
	_cleanup_free_ uint64_t *counts = ag_xcalloc(1 + o->nexclude, sizeof(*counts));
	copy_rules_apply(&so, &cf, o, git, counts);
	if (ag_ws_snapshot_take(srcfd, &so, &snap, err) < 0)
		return -1;
	out->git_copy_rule = cf.git != NULL;
	out->excluded_ignored = counts[0];
	for (size_t i = 0; i < o->nexclude && o->exclude_counts; i++)
		o->exclude_counts[i] = counts[1 + i];

	uint64_t text_bytes = 0;
	for (size_t i = 0; i < snap.n; i++) {
		const struct ag_ws_entry *e = &snap.v[i];
		if (e->kind == AG_WS_FILE)
			out->files++;
		if (e->retained && e->text_off + e->size > text_bytes)
			text_bytes = e->text_off + e->size;
	}
	if (ftruncate(textfd, (off_t)text_bytes) < 0 || fsync(textfd) < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io", "cannot finish the text store");

	_cleanup_buf_ struct ag_buf b =
	    AG_BUF_INIT(AG_WS_BASELINE_MAX_BYTES, "limit.workspace.baseline_bytes");
	if (baseline_serialize(git, &snap, &b, err) < 0)
		return -1;
	ag_sha256_hex(b.buf, b.len, out->digest);
	if (ag_write_file_atomic_at(evfd, AG_WS_BASELINE_FILE, "evidence/" AG_WS_BASELINE_FILE,
				    b.buf, b.len, 0600, true, err) < 0)
		return -1;
	out->source_kind = git->kind;
	memcpy(out->git_head, git->head, sizeof(out->git_head));
	out->entries = snap.n;
	out->total_bytes = snap.total_bytes;
	out->text_bytes = text_bytes;

	_cleanup_free_ char *meta = metadata_json(id, out, o, l, writable, am, em, git->nstatus);
	if (ag_write_file_atomic_at(evfd, AG_WS_METADATA_FILE, "evidence/" AG_WS_METADATA_FILE,
				    meta, strlen(meta), 0600, true, err) < 0)
		return -1;

	/* the workspace root takes the source root's masked mode */
	struct stat st;
	if (o->git_baseline && ag_ws_git_baseline(wsfd, 0, out->git_baseline, err) < 0)
		return -1;
	if (fstat(srcfd, &st) < 0 || fchmod(wsfd, (st.st_mode & 0755) | 0700) < 0 ||
	    fchmod(evfd, 0700) < 0 || fsync(evfd) < 0 || fsync(wsfd) < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io",
			      "cannot finish the staging layout");
	return 0;
}

int ag_ws_prepare(int srcfd, int rootfd, const char *id, const struct ag_ws_prepare_opts *opts,
		  struct ag_ws_prepared *out, struct ag_error **err)
{
	static const struct ag_ws_prepare_opts defaults = {0};
	const struct ag_ws_prepare_opts *o = opts ? opts : &defaults;
	struct ag_ws_limits dl;
	ag_ws_limits_default(&dl);
	const struct ag_ws_limits *l = o->limits ? o->limits : &dl;
	static const char *const dot[] = {"."};
	const char *am = o->agent_mount ? o->agent_mount : AG_WS_AGENT_MOUNT;
	const char *em = o->evidence_mount ? o->evidence_mount : AG_WS_EVIDENCE_MOUNT;
	memset(out, 0, sizeof(*out));

	if (ag_ws_id_validate(id, err) < 0 || ag_ws_mounts_validate(am, em, err) < 0)
		return -1;
	_cleanup_strv_ struct ag_strv writable = AG_STRV_INIT;
	if (ag_ws_writable_normalise(o->writable_paths ? o->writable_paths : dot,
				     o->writable_paths ? o->nwritable : 1, &writable, err) < 0)
		return -1;

	_cleanup_free_ char *staging = ag_xasprintf("%s" STAGING_SUFFIX, id);
	int e1 = exists_at(rootfd, id), e2 = exists_at(rootfd, staging);
	if (e1 < 0 || e2 < 0)
		return ag_err(err, AG_E_IO, errno, "workspace.io",
			      "cannot inspect the lifecycle root");
	if (e1 || e2)
		return ag_err(err, AG_E_IO, EEXIST, R_EXISTS, "workspace id '%s' already exists",
			      id);

	/* CONTRACT: workspace.baseline.git_before_copy */
	struct ag_ws_gitinfo git = {0};
	struct ag_ws_git_opts go = {.what = git_what(o), .timeout_ms = o->git_timeout_ms};
	if (ag_ws_gitinfo_collect(srcfd, &go, &git, err) < 0)
		return ag_err_wrap(err, "workspace preparation");

	if (mkdirat(rootfd, staging, 0700) < 0) {
		int e = errno;
		ag_ws_gitinfo_release(&git);
		if (e == EEXIST)
			return ag_err(err, AG_E_IO, e, R_EXISTS, "workspace id '%s' already exists",
				      id);
		return ag_err(err, AG_E_IO, e, "workspace.io",
			      "cannot create the staging directory: %s", strerror(e));
	}
	int r;
	{
		_cleanup_close_ int stagefd =
		    openat(rootfd, staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (stagefd < 0)
			r = ag_err(err, AG_E_IO, errno, "workspace.io",
				   "cannot open the staging directory");
		else
			r = prepare_staged(srcfd, stagefd, id, o, l, &writable, am, em, &git, out,
					   err);
		if (r == 0 && fsync(stagefd) < 0)
			r = ag_err(err, AG_E_IO, errno, "workspace.io", "cannot sync staging");
	}
	ag_ws_gitinfo_release(&git);
	/* CONTRACT: workspace.publish.atomic */
	if (r == 0 && renameat2(rootfd, staging, rootfd, id, RENAME_NOREPLACE) < 0)
		r = ag_err(err, AG_E_IO, errno, errno == EEXIST ? R_EXISTS : "workspace.io",
			   "cannot publish workspace '%s'", id);
	if (r == 0) {
		(void)fsync(rootfd);
		return 0;
	}
	/* CONTRACT: workspace.rollback */
	uint64_t removed = 0, remaining = 0;
	if (ag_ws_remove_tree(rootfd, staging, &removed, &remaining) < 0) {
		const char *inner = (*err)->reason;
		ag_err_wrap(err,
			    "preparation failed (%s) and rollback left %" PRIu64
			    " lifecycle-owned entries in place",
			    inner, remaining);
		(*err)->reason = "workspace.rollback_failed";
		(*err)->code = AG_E_CLEANUP;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	return ag_err_wrap(err, "workspace preparation");
}

/* -------------------------------------------------------------- cleanup */

/* CONTRACT: workspace.cleanup.owned_only */
int ag_ws_cleanup(int rootfd, const char *id, struct ag_ws_cleanup_report *rep,
		  struct ag_error **err)
{
	memset(rep, 0, sizeof(*rep));
	_cleanup_close_ int run = ag_ws_open_run(rootfd, id, err);
	if (run < 0)
		return -1;
	json_t *meta = NULL;
	if (load_metadata(run, &meta, err) < 0) {
		rep->remaining = 1;
		ag_err_wrap(err, "cleanup cannot tell which paths are lifecycle-owned");
		(*err)->reason = "workspace.cleanup_incomplete";
		(*err)->code = AG_E_CLEANUP;
		return -1;
	}
	json_t *targets = json_object_get(meta, "cleanup_targets");
	const char *idm = json_string_value(json_object_get(meta, "workspace_id"));
	bool ok = json_is_array(targets) && idm && !strcmp(idm, id);
	bool remove_self = false;
	size_t i;
	json_t *t;
	/* Validate every target before removing anything. */
	json_array_foreach(targets, i, t)
	{
		const char *s = json_string_value(t);
		if (!s || (strcmp(s, ".") && (strchr(s, '/') || !rel_path_ok(s))))
			ok = false;
	}
	if (!ok) {
		json_decref(meta);
		rep->remaining = 1;
		return ag_err(err, AG_E_CLEANUP, 0, "workspace.cleanup_incomplete",
			      "workspace metadata names invalid cleanup targets; nothing removed");
	}
	bool failed = false;
	json_array_foreach(targets, i, t)
	{
		const char *s = json_string_value(t);
		if (!strcmp(s, ".")) {
			remove_self = true;
			continue;
		}
		/* stop at the first failure: the evidence (and its record of what
		 * is owned) stays for a later attempt */
		if (ag_ws_remove_tree(run, s, &rep->removed, &rep->remaining) < 0) {
			failed = true;
			break;
		}
	}
	json_decref(meta);
	if (remove_self && !failed) {
		if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0) {
			failed = true;
			rep->remaining++; /* entries nobody recorded stay in place */
		} else {
			rep->removed++;
		}
	}
	rep->complete = !failed;
	if (failed)
		return ag_err(err, AG_E_CLEANUP, 0, "workspace.cleanup_incomplete",
			      "workspace cleanup incomplete: %" PRIu64 " entries remain",
			      rep->remaining);
	return 0;
}
