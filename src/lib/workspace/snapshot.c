#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/base/termsafe.h"
#include "lib/workspace/snapshot.h"

#include <dirent.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* One hex digit in the given case only (encodings are canonical), or -1. */
static int hexdigit(char c, bool upper)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	char a = upper ? 'A' : 'a';
	if (c >= a && c <= a + 5)
		return c - a + 10;
	return -1;
}

bool ag_ws_force_no_openat2;

const char *const ag_ws_reserved_names[3] = {".git", ".agentguard",
					     ".agentguard_agent_events.jsonl"};

void ag_ws_limits_default(struct ag_ws_limits *l)
{
	l->max_entries = AG_WS_MAX_ENTRIES;
	l->max_file_bytes = AG_WS_MAX_FILE_BYTES;
	l->max_total_bytes = AG_WS_MAX_TOTAL_BYTES;
	l->max_symlink_target_bytes = AG_WS_MAX_SYMLINK_TARGET_BYTES;
	l->max_path_bytes = AG_WS_MAX_PATH_BYTES;
	l->max_depth = AG_WS_MAX_DEPTH;
	l->max_text_bytes = AG_WS_MAX_TEXT_BYTES;
}

const char *ag_ws_content_name(enum ag_ws_content c)
{
	switch (c) {
	case AG_WS_CONTENT_TEXT:
		return "text";
	case AG_WS_CONTENT_BINARY:
		return "binary";
	case AG_WS_CONTENT_NON_UTF8:
		return "non_utf8";
	case AG_WS_CONTENT_SYMLINK:
		return "symlink";
	case AG_WS_CONTENT_NA:
		break;
	}
	return "not_applicable";
}

void ag_ws_snapshot_release(struct ag_ws_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].target);
	}
	free(s->v);
	free(s->idv);
	*s = (struct ag_ws_snapshot)AG_WS_SNAPSHOT_INIT;
}

void ag_ws_sha_hex(const uint8_t sha[32], char hex[AG_SHA256_HEX_LEN + 1])
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < 32; i++) {
		hex[2 * i] = d[sha[i] >> 4];
		hex[2 * i + 1] = d[sha[i] & 15];
	}
	hex[AG_SHA256_HEX_LEN] = '\0';
}

bool ag_ws_sha_from_hex(const char *hex, uint8_t sha[32])
{
	if (strlen(hex) != AG_SHA256_HEX_LEN)
		return false;
	for (size_t i = 0; i < 32; i++) {
		int h = hexdigit(hex[2 * i], false), l = hexdigit(hex[2 * i + 1], false);
		if (h < 0 || l < 0)
			return false;
		sha[i] = (uint8_t)(h << 4 | l);
	}
	return true;
}

void ag_ws_sha_of(const void *p, size_t n, uint8_t sha[32])
{
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(p, n, hex);
	(void)ag_ws_sha_from_hex(hex, sha);
}

void ag_ws_snapshot_releasep(struct ag_ws_snapshot *s)
{
	ag_ws_snapshot_release(s);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ag_ws_entry *)a)->path, ((const struct ag_ws_entry *)b)->path);
}

static ssize_t find_index(const struct ag_ws_snapshot *s, const char *path)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->v[mid].path, path);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const struct ag_ws_entry *ag_ws_snapshot_find(const struct ag_ws_snapshot *s, const char *path)
{
	ssize_t i = find_index(s, path);
	return i < 0 ? NULL : &s->v[i];
}

/* ---------------------------------------------------------------- names */

static bool ascii_caseeq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
		if (x >= 'A' && x <= 'Z')
			x = (unsigned char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (unsigned char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

/* CONTRACT: workspace.reserved_paths */
int ag_ws_reserved_component(const char *name, size_t len)
{
	int prefix = 0;
	for (size_t i = 0; i < AG_ARRAY_SIZE(ag_ws_reserved_names); i++) {
		const char *r = ag_ws_reserved_names[i];
		size_t rl = strlen(r);
		if (len < rl || !ascii_caseeq(name, r, rl))
			continue;
		if (len == rl)
			return i == 0 ? 1 : 2; /* exact names win over prefixes */
		char c = name[rl];
		if (c == '.' || c == '-' || c == '_')
			prefix = 3;
	}
	return prefix;
}

/* ------------------------------------------------------------- encoding */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	uint32_t cp;
	return ag_utf8_decode(p, n, &cp);
}

bool ag_ws_utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t k = utf8_seq(p + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static const char hexd[] = "0123456789ABCDEF";

int ag_ws_path_encode(struct ag_buf *b, const char *p, size_t n, struct ag_error **err)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		size_t k = utf8_seq(u + i, n - i);
		if (c < 0x20 || c == 0x7f || c == '%' || k == 0) {
			char e[3] = {'%', hexd[c >> 4], hexd[c & 15]};
			if (ag_buf_add(b, e, 3, err) < 0)
				return -1;
			i++;
			continue;
		}
		if (ag_buf_add(b, p + i, k, err) < 0)
			return -1;
		i += k;
	}
	return 0;
}

char *ag_ws_path_display(const char *p)
{
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, NULL);
	struct ag_error *e = NULL;
	size_t n = strlen(p);
	if (ag_ws_path_encode(&b, p, n, &e) < 0) {
		ag_error_free(e);
		ag_buf_release(&b);
		return ag_xstrdup("?");
	}
	if (b.len > AG_WS_DISPLAY_PATH_BYTES) {
		size_t cut = AG_WS_DISPLAY_PATH_BYTES;
		/* do not cut inside a %XX escape or a UTF-8 sequence */
		while (cut > 0 && (((unsigned char)b.buf[cut] & 0xC0) == 0x80))
			cut--;
		if (cut >= 1 && b.buf[cut - 1] == '%')
			cut -= 1;
		else if (cut >= 2 && b.buf[cut - 2] == '%')
			cut -= 2;
		b.len = cut;
		b.buf[cut] = '\0';
		char *r = ag_xasprintf("%s...", b.buf);
		ag_buf_release(&b);
		return r;
	}
	return ag_buf_detach(&b, NULL);
}

char *ag_ws_path_decode(const char *s, size_t n, size_t *outlen)
{
	char *o = ag_xmalloc(n + 1);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			if (i + 2 >= n) {
				free(o);
				return NULL;
			}
			int h = hexdigit(s[i + 1], true), l = hexdigit(s[i + 2], true);
			if (h < 0 || l < 0) {
				free(o);
				return NULL;
			}
			o[j++] = (char)(h << 4 | l);
			i += 2;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			free(o);
			return NULL;
		}
		o[j++] = (char)c;
	}
	o[j] = '\0';
	if (outlen)
		*outlen = j;
	return o;
}

/* ------------------------------------------------------- open beneath */

static int open_fallback(int rootfd, const char *relpath, int flags, mode_t mode)
{
	int dfd = -1;
	const char *p = relpath;
	int cur = rootfd;
	for (;;) {
		const char *slash = strchr(p, '/');
		if (!slash)
			break;
		size_t l = (size_t)(slash - p);
		if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.')) {
			if (dfd >= 0)
				close(dfd);
			errno = EXDEV;
			return -1;
		}
		char *comp = ag_xstrndup(p, l);
		int nfd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		free(comp);
		if (dfd >= 0)
			close(dfd);
		if (nfd < 0) {
			/* A symlink component gives ENOTDIR with O_PATH|O_DIRECTORY|O_NOFOLLOW. */
			errno = e == ENOTDIR ? ELOOP : e;
			return -1;
		}
		dfd = cur = nfd;
		p = slash + 1;
	}
	if (!*p || !strcmp(p, ".") || !strcmp(p, "..")) {
		if (dfd >= 0)
			close(dfd);
		errno = EXDEV;
		return -1;
	}
	int fd = openat(cur, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int e = errno;
	if (dfd >= 0)
		close(dfd);
	errno = e;
	return fd;
}

int ag_ws_open_beneath(int rootfd, const char *relpath, int flags, mode_t mode)
{
	static atomic_int no_openat2;
	if (!ag_ws_force_no_openat2 && !atomic_load(&no_openat2)) {
		struct open_how how = {
		    .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		    .mode = (flags & O_CREAT) ? mode : 0,
		    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd;
		do
			fd = syscall(SYS_openat2, rootfd, relpath, &how, sizeof(how));
		while (fd < 0 && errno == EAGAIN);
		/* ENAMETOOLONG: the whole path exceeds PATH_MAX; walk it by components */
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != ENAMETOOLONG))
			return (int)fd;
		if (errno == ENOSYS)
			atomic_store(&no_openat2, 1);
	}
	return open_fallback(rootfd, relpath, flags, mode);
}

/* ----------------------------------------------------------------- walk */

struct walk {
	const struct ag_ws_snapshot_opts *o;
	const struct ag_ws_limits *l;
	struct ag_ws_snapshot *s;
	char *path; /* current directory path, max_path_bytes + NAME_MAX + 2 */
	size_t cap;
	uint64_t progress_ms; /* when progress was last reported */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Reports p when forced or when AG_PROGRESS_INTERVAL_MS passed since *last. */
static void progress_tick(const struct ag_ws_snapshot_opts *o, uint64_t *last,
			  const struct ag_ws_progress *p, bool force)
{
	if (!o->progress)
		return;
	uint64_t now = mono_ms();
	if (!force && now - *last < AG_PROGRESS_INTERVAL_MS)
		return;
	*last = now;
	o->progress(o->progress_ctx, p);
}

static const char *R_ENTRIES = "limit.workspace.entries";
static const char *R_FILE_BYTES = "limit.workspace.file_bytes";
static const char *R_TOTAL = "limit.workspace.total_bytes";
static const char *R_TARGET = "limit.workspace.symlink_target";
static const char *R_PATHLEN = "limit.workspace.path_length";
static const char *R_DEPTH = "limit.workspace.depth";
static const char *R_CHANGED = "workspace.source_changed";
static const char *R_UNREADABLE = "workspace.unreadable";

static int path_err(struct ag_error **err, enum ag_code code, int e, const char *reason,
		    const char *what, const char *path)
{
	_cleanup_free_ char *d = ag_ws_path_display(path);
	if (e)
		return ag_err(err, code, e, reason, "'%s': %s: %s", d, what, strerror(e));
	return ag_err(err, code, 0, reason, "'%s': %s", d, what);
}

static int errno_err(struct ag_error **err, int e, const char *what, const char *path)
{
	if (e == ENOENT || e == ELOOP || e == ENOTDIR || e == EXDEV || e == ENXIO)
		return path_err(err, AG_E_UNSAFE_PATH, e, R_CHANGED, "changed during the walk",
				path);
	if (e == EACCES || e == EPERM)
		return path_err(err, AG_E_IO, e, R_UNREADABLE, what, path);
	return path_err(err, AG_E_IO, e, "workspace.io", what, path);
}

static size_t grow(size_t alloc)
{
	return alloc ? alloc + alloc / 2 : 256; /* 1.5x: a smaller realloc peak than doubling */
}

static struct ag_ws_entry *push_entry(struct walk *w, const char *path, const struct stat *st)
{
	struct ag_ws_snapshot *s = w->s;
	if (w->o->progress) {
		struct ag_ws_progress p = {.entries = s->n + 1, .bytes = s->total_bytes};
		progress_tick(w->o, &w->progress_ms, &p, false);
	}
	if (s->n == s->alloc) {
		s->alloc = grow(s->alloc);
		s->v = ag_xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	if (s->nid == s->idalloc) {
		s->idalloc = grow(s->idalloc);
		s->idv = ag_xrealloc(s->idv, s->idalloc * sizeof(*s->idv));
	}
	struct ag_ws_entry *e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->path = ag_xstrdup(path);
	e->ident = (uint32_t)s->nid;
	s->idv[s->nid++] = (struct ag_ws_ident){
	    .dev = st->st_dev,
	    .ino = st->st_ino,
	    .mode = st->st_mode,
	    .nlink = st->st_nlink,
	    .mtim = st->st_mtim,
	    .ctim = st->st_ctim,
	};
	return e;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
	char **v;
	size_t n, alloc;
};

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

/* The filter's verdict on dirfd/name (at w->path[0..plen)): true to leave it out. */
static int filtered_out(struct walk *w, int dirfd, size_t plen, const struct dirent *de,
			struct ag_error **err)
{
	const struct ag_ws_snapshot_opts *o = w->o;
	size_t nl = strlen(de->d_name);
	if (!o->filter || o->mode != AG_WS_PREPARE ||
	    ag_ws_reserved_component(de->d_name, nl) == 1 ||
	    (plen == 0 && o->exclude_agentguard_root && !strcmp(de->d_name, ".agentguard")))
		return 0;
	bool is_dir = de->d_type == DT_DIR;
	if (de->d_type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno_err(err, errno, "cannot stat", w->path[0] ? w->path : ".");
		is_dir = S_ISDIR(st.st_mode);
	}
	/* w->path has room for one more name (cap = max path + NAME_MAX + 2) */
	char *at = w->path + (plen ? plen + 1 : 0);
	if (plen)
		w->path[plen] = '/';
	memcpy(at, de->d_name, nl + 1);
	int v = o->filter(o->filter_ctx, w->path, is_dir);
	if (v == -2 || (v >= 0 && (size_t)v >= o->nfilter_counts)) {
		int r = path_err(err, AG_E_LIMIT, 0, "workspace.exclude.undecided",
				 "the copy rules cannot decide on this path", w->path);
		w->path[plen] = '\0';
		return r;
	}
	w->path[plen] = '\0';
	if (v < 0)
		return 0;
	o->filter_counts[v]++;
	return 1;
}

/* What a user can do about a tree that is too large to copy. */
static const char *size_hint(const struct walk *w)
{
	return w->o->mode == AG_WS_PREPARE
		   ? "; leave what the agent does not need out of the copy with the config key "
		     "workspace.exclude (and keep workspace.include_ignored off)"
		   : "";
}

/* Reads a directory's names (bounded by the remaining entry budget), sorted. */
static int read_names(struct walk *w, int dirfd, size_t plen, struct names *ns,
		      struct ag_error **err)
{
	int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return errno_err(err, errno, "cannot open directory", w->path[0] ? w->path : ".");
	DIR *d = fdopendir(dup);
	if (!d) {
		int e = errno;
		close(dup);
		return errno_err(err, e, "cannot open directory", w->path[0] ? w->path : ".");
	}
	/* the dup shares the caller's offset: always read from the start */
	rewinddir(d);
	uint64_t budget = w->l->max_entries - w->s->n + 1;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno) {
				int e = errno;
				closedir(d);
				return errno_err(err, e, "cannot read directory",
						 w->path[0] ? w->path : ".");
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int fo = filtered_out(w, dirfd, plen, de, err);
		if (fo < 0) {
			closedir(d);
			return -1;
		}
		if (fo)
			continue;
		if (ns->n >= budget) {
			closedir(d);
			return ag_err(err, AG_E_LIMIT, 0, R_ENTRIES,
				      "tree has more than %" PRIu64 " entries (%s)%s",
				      w->l->max_entries, R_ENTRIES, size_hint(w));
		}
		if (ns->n == ns->alloc) {
			ns->alloc = ns->alloc ? ns->alloc * 2 : 32;
			ns->v = ag_xrealloc(ns->v, ns->alloc * sizeof(*ns->v));
		}
		ns->v[ns->n++] = ag_xstrdup(de->d_name);
	}
	closedir(d);
	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), name_cmp);
	return 0;
}

static uint32_t masked_mode(enum ag_ws_mode m, mode_t st_mode)
{
	uint32_t perm = (uint32_t)(st_mode & 07777);
	if (m == AG_WS_CAPTURE)
		return perm;
	/* CONTRACT: workspace.copy.mode_mask: no setuid/setgid/sticky, no group/other write */
	perm &= 0755;
	if (S_ISDIR(st_mode))
		perm |= 0700;
	return perm;
}

static int walk_dir(struct walk *w, int dirfd, size_t plen, uint64_t depth, struct ag_error **err)
{
	struct names ns = {0};
	int r = read_names(w, dirfd, plen, &ns, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < ns.n; i++) {
		const char *name = ns.v[i];
		size_t nl = strlen(name);
		size_t newlen = plen ? plen + 1 + nl : nl;
		if (newlen > w->l->max_path_bytes) {
			w->path[plen] = '\0';
			r = ag_err(err, AG_E_LIMIT, 0, R_PATHLEN,
				   "a path below '%s' is longer than %" PRIu64 " bytes",
				   plen ? w->path : ".", w->l->max_path_bytes);
			goto out;
		}
		if (plen)
			w->path[plen] = '/';
		memcpy(w->path + (plen ? plen + 1 : 0), name, nl + 1);

		if (depth == 0 && w->o->exclude_agentguard_root && !strcmp(name, ".agentguard")) {
			struct stat xs;
			if (fstatat(dirfd, name, &xs, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(xs.st_mode))
				continue; /* the caller's own runs root, never copied */
		}
		if (depth == 0 && w->o->skip_root_git && w->o->mode == AG_WS_CAPTURE &&
		    !strcmp(name, ".git"))
			continue; /* the agent's repository (gitbase.h), never entered */
		int rc = ag_ws_reserved_component(name, nl);
		if (rc == 1 && w->o->mode == AG_WS_PREPARE)
			continue; /* .git control metadata is never copied */
		if (rc == 1) {
			r = path_err(
			    err, AG_E_UNSAFE_PATH, 0, "workspace.git_spoofing",
			    "Git control metadata inside the workspace (reserved path spoofing)",
			    w->path);
			goto out;
		}
		if (rc == 2) {
			r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.reserved_path",
				     "reserved path", w->path);
			goto out;
		}
		if (rc == 3) {
			r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.reserved_prefix",
				     "reserved path prefix collision", w->path);
			goto out;
		}

		struct stat st;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno_err(err, errno, "cannot stat", w->path);
			goto out;
		}
		if (w->s->n >= w->l->max_entries) {
			r = ag_err(err, AG_E_LIMIT, 0, R_ENTRIES,
				   "tree has more than %" PRIu64 " entries (%s)%s",
				   w->l->max_entries, R_ENTRIES, size_hint(w));
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth + 1 > w->l->max_depth) {
				r = path_err(err, AG_E_LIMIT, 0, R_DEPTH,
					     "directory nesting exceeds the depth limit", w->path);
				goto out;
			}
			struct ag_ws_entry *e = push_entry(w, w->path, &st);
			e->kind = AG_WS_DIR;
			e->mode = masked_mode(w->o->mode, st.st_mode);
			_cleanup_close_ int sub =
			    openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = errno_err(err, errno, "cannot open directory", w->path);
				goto out;
			}
			struct stat st2;
			if (fstat(sub, &st2) < 0 || st2.st_dev != st.st_dev ||
			    st2.st_ino != st.st_ino) {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED,
					     "changed during the walk", w->path);
				goto out;
			}
			r = walk_dir(w, sub, newlen, depth + 1, err);
			if (r < 0)
				goto out;
		} else if (S_ISREG(st.st_mode)) {
			/* a file being unlinked or replaced right now shows nlink 0 */
			if (st.st_nlink == 0) {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED,
					     "changed during the walk", w->path);
				goto out;
			}
			/* CONTRACT: workspace.hardlink */
			if (st.st_nlink != 1) {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.hardlink",
					     "regular file with more than one link (hardlink)",
					     w->path);
				goto out;
			}
			uint64_t sz = (uint64_t)st.st_size;
			if (sz > w->l->max_file_bytes) {
				_cleanup_free_ char *d = ag_ws_path_display(w->path);
				r = ag_err(err, AG_E_LIMIT, 0, R_FILE_BYTES,
					   "'%s' is larger than %" PRIu64 " bytes (%s)%s", d,
					   w->l->max_file_bytes, R_FILE_BYTES, size_hint(w));
				goto out;
			}
			if (sz > w->l->max_total_bytes - w->s->total_bytes) {
				r = ag_err(err, AG_E_LIMIT, 0, R_TOTAL,
					   "tree holds more than %" PRIu64 " bytes (%s)%s",
					   w->l->max_total_bytes, R_TOTAL, size_hint(w));
				goto out;
			}
			w->s->total_bytes += sz;
			struct ag_ws_entry *e = push_entry(w, w->path, &st);
			e->kind = AG_WS_FILE;
			e->size = sz;
			e->mode = masked_mode(w->o->mode, st.st_mode);
		} else if (S_ISLNK(st.st_mode)) {
			size_t cap = w->l->max_symlink_target_bytes + 1;
			_cleanup_free_ char *t = ag_xmalloc(cap + 1);
			ssize_t tl = readlinkat(dirfd, name, t, cap);
			if (tl < 0) {
				r = errno_err(err, errno == EINVAL ? ENOENT : errno,
					      "cannot read symlink", w->path);
				goto out;
			}
			if ((uint64_t)tl > w->l->max_symlink_target_bytes) {
				r = path_err(err, AG_E_LIMIT, 0, R_TARGET,
					     "symlink target is too large", w->path);
				goto out;
			}
			t[tl] = '\0';
			if (memchr(t, '\0', (size_t)tl)) {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.symlink.dangling",
					     "invalid symlink target", w->path);
				goto out;
			}
			/* CONTRACT: workspace.symlink.absolute */
			if (t[0] == '/') {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.symlink.absolute",
					     "symlink with an absolute target", w->path);
				goto out;
			}
			if (tl == 0) {
				r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.symlink.dangling",
					     "symlink with an empty target", w->path);
				goto out;
			}
			struct ag_ws_entry *e = push_entry(w, w->path, &st);
			e->kind = AG_WS_SYMLINK;
			e->content = AG_WS_CONTENT_SYMLINK;
			e->mode = 0777;
			e->size = (uint64_t)tl;
			e->target = ag_steal_ptr(&t);
			ag_ws_sha_of(e->target, e->size, e->sha);
		} else {
			/* CONTRACT: workspace.special_file (never opened) */
			r = path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.special_file",
				     "FIFO, socket or device file", w->path);
			goto out;
		}
	}
	r = 0;
out:
	w->path[plen] = '\0';
	names_free(&ns);
	return r;
}

/* ------------------------------------------------------------ symlinks */

/*
 * Resolves the link at index li against the walked set. On success fills
 * out (capacity max_path_bytes + 1) with the resolved relative path ("" is
 * the root). CONTRACT: workspace.symlink.rules
 */
static int resolve_link(const struct ag_ws_snapshot *s, const struct ag_ws_limits *l, size_t li,
			unsigned *hops, char *out, struct ag_error **err)
{
	const struct ag_ws_entry *le = &s->v[li];
	const char *R_DANGLING = "workspace.symlink.dangling";
	if (++*hops > AG_WS_SYMLINK_MAX_HOPS)
		return path_err(err, AG_E_UNSAFE_PATH, 0, R_DANGLING,
				"symlink chain is too long or loops", le->path);
	/* start from the link's parent directory */
	size_t cur = 0;
	const char *slash = strrchr(le->path, '/');
	if (slash) {
		cur = (size_t)(slash - le->path);
		memcpy(out, le->path, cur);
	}
	out[cur] = '\0';
	const char *p = le->target;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t cl = end ? (size_t)(end - p) : strlen(p);
		const char *next = end ? end + 1 : p + cl;
		if (cl == 0 || (cl == 1 && p[0] == '.')) {
			p = next;
			continue;
		}
		if (cl == 2 && p[0] == '.' && p[1] == '.') {
			if (cur == 0)
				return path_err(err, AG_E_UNSAFE_PATH, 0,
						"workspace.symlink.escaping",
						"symlink escapes the tree", le->path);
			char *ls = memrchr(out, '/', cur);
			cur = ls ? (size_t)(ls - out) : 0;
			out[cur] = '\0';
			p = next;
			continue;
		}
		if (ag_ws_reserved_component(p, cl) == 1 ||
		    (ag_ws_reserved_component(p, cl) == 3 && ascii_caseeq(p, ".git", 4)))
			return path_err(err, AG_E_UNSAFE_PATH, 0, "workspace.symlink.git",
					"symlink into Git control metadata", le->path);
		size_t nl = cur ? cur + 1 + cl : cl;
		if (nl > l->max_path_bytes)
			return path_err(err, AG_E_LIMIT, 0, R_PATHLEN,
					"symlink resolves to a path that is too long", le->path);
		if (cur)
			out[cur] = '/';
		memcpy(out + (cur ? cur + 1 : 0), p, cl);
		cur = nl;
		out[cur] = '\0';
		ssize_t idx = find_index(s, out);
		if (idx < 0)
			return path_err(err, AG_E_UNSAFE_PATH, 0, R_DANGLING,
					"symlink does not resolve to an entry of the tree",
					le->path);
		const struct ag_ws_entry *t = &s->v[idx];
		if (t->kind == AG_WS_SYMLINK) {
			char *sub = ag_xmalloc(l->max_path_bytes + 1);
			int r = resolve_link(s, l, (size_t)idx, hops, sub, err);
			if (r < 0) {
				free(sub);
				return r;
			}
			cur = strlen(sub);
			memcpy(out, sub, cur + 1);
			free(sub);
			idx = cur ? find_index(s, out) : -1;
			t = idx >= 0 ? &s->v[idx] : NULL;
		}
		/* more components, or a trailing '/', need a directory here */
		if (end && t && t->kind != AG_WS_DIR)
			return path_err(err, AG_E_UNSAFE_PATH, 0, R_DANGLING,
					"symlink passes through a non-directory", le->path);
		p = next;
	}
	return 0;
}

static int check_links(const struct ag_ws_snapshot *s, const struct ag_ws_limits *l,
		       struct ag_error **err)
{
	_cleanup_free_ char *buf = ag_xmalloc(l->max_path_bytes + 1);
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].kind != AG_WS_SYMLINK)
			continue;
		unsigned hops = 0;
		if (resolve_link(s, l, i, &hops, buf, err) < 0)
			return -1;
	}
	return 0;
}

/* --------------------------------------------------------- hash / copy */

#define IO_CHUNK (256 * 1024)

struct hasher {
	const struct ag_ws_snapshot_opts *o;
	int rootfd;
	struct ag_ws_snapshot *s;
	size_t *files; /* indices of regular files */
	size_t nfiles;
	atomic_size_t next;
	atomic_bool stop;
	pthread_mutex_t lock;
	size_t err_index; /* lowest failing file index (deterministic error) */
	struct ag_error *err;
	atomic_uint_fast64_t files_done, bytes_done; /* progress, all workers */
	uint64_t bytes_total;
	uint64_t progress_ms;
	pthread_t reporter; /* the calling thread: the only one that reports */
};

static void hash_progress(struct hasher *h, bool force)
{
	if (!h->o->progress || !pthread_equal(pthread_self(), h->reporter))
		return;
	struct ag_ws_progress p = {
	    .reading = true,
	    .entries = atomic_load(&h->files_done),
	    .entries_total = h->nfiles,
	    .bytes = atomic_load(&h->bytes_done),
	    .bytes_total = h->bytes_total,
	};
	progress_tick(h->o, &h->progress_ms, &p, force);
}

static bool same_identity(const struct ag_ws_entry *e, const struct ag_ws_ident *id,
			  const struct stat *st)
{
	return st->st_dev == id->dev && st->st_ino == id->ino && st->st_mode == id->mode &&
	       (uint64_t)st->st_size == e->size && st->st_nlink == id->nlink &&
	       st->st_mtim.tv_sec == id->mtim.tv_sec && st->st_mtim.tv_nsec == id->mtim.tv_nsec &&
	       st->st_ctim.tv_sec == id->ctim.tv_sec && st->st_ctim.tv_nsec == id->ctim.tv_nsec;
}

static int pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Streaming classifier: NUL => binary; else UTF-8 validity; line count. */
struct classify {
	unsigned char pend[4];
	size_t npend;
	bool binary, bad_utf8, last_nl;
	uint64_t lines;
};

static void classify_chunk(struct classify *c, const unsigned char *p, size_t n)
{
	if (c->binary || !n)
		return;
	if (memchr(p, 0, n)) {
		c->binary = true;
		return;
	}
	for (const unsigned char *q = p; (q = memchr(q, '\n', n - (size_t)(q - p))); q++)
		c->lines++;
	c->last_nl = p[n - 1] == '\n';
	if (c->bad_utf8)
		return;
	size_t i = 0;
	if (c->npend) {
		/* complete a sequence split across chunks */
		unsigned char tmp[8];
		memcpy(tmp, c->pend, c->npend);
		size_t take = n < 4 ? n : 4;
		memcpy(tmp + c->npend, p, take);
		size_t have = c->npend + take;
		size_t k = utf8_seq(tmp, have);
		if (!k) {
			if (have < 4 && take == n && (tmp[0] >= 0xC2 && tmp[0] <= 0xF4)) {
				/* still incomplete: keep pending */
				memcpy(c->pend, tmp, have);
				c->npend = have;
				return;
			}
			c->bad_utf8 = true;
			return;
		}
		i = k - c->npend;
		c->npend = 0;
	}
	while (i < n) {
		/* ASCII fast path, 8 bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = utf8_seq(p + i, n - i);
		if (!k) {
			if (n - i < 4) {
				/* maybe a sequence cut by the chunk end: re-check with a
				 * generous buffer (valid prefix only) */
				unsigned char t[4] = {0};
				memcpy(t, p + i, n - i);
				unsigned char c0 = t[0];
				size_t need = c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : 2;
				bool prefix_ok = c0 >= 0xC2 && c0 <= 0xF4 && n - i < need;
				for (size_t j = 1; prefix_ok && j < n - i; j++)
					if ((t[j] & 0xC0) != 0x80)
						prefix_ok = false;
				if (prefix_ok) {
					memcpy(c->pend, p + i, n - i);
					c->npend = n - i;
					return;
				}
			}
			c->bad_utf8 = true;
			return;
		}
		i += k;
	}
}

static void classify_finish(struct classify *c, uint64_t size, struct ag_ws_entry *e)
{
	if (c->binary) {
		e->content = AG_WS_CONTENT_BINARY;
		e->line_count = 0;
		return;
	}
	if (c->npend)
		c->bad_utf8 = true;
	e->content = c->bad_utf8 ? AG_WS_CONTENT_NON_UTF8 : AG_WS_CONTENT_TEXT;
	e->line_count = c->lines + ((size && !c->last_nl) ? 1 : 0);
}

/*
 * Opens a walked regular file for reading without ever opening anything
 * else: an O_PATH handle is taken first (no open of the object itself), its
 * identity is compared with the walk, and only then is the same inode
 * reopened for reading through /proc/self/fd. Without /proc the file is
 * opened directly (O_NONBLOCK, O_NOCTTY) and checked after the open.
 * CONTRACT: workspace.copy.identity
 */
static int open_verified(int rootfd, const struct ag_ws_entry *e, const struct ag_ws_ident *id,
			 struct stat *st, struct ag_error **err)
{
	if (e->kind != AG_WS_FILE)
		return ag_err(err, AG_E_INTERNAL, 0, "internal.workspace", "not a regular file");
	_cleanup_close_ int pfd = ag_ws_open_beneath(rootfd, e->path, O_PATH, 0);
	if (pfd < 0)
		return errno_err(err, errno, "cannot open", e->path);
	if (fstat(pfd, st) < 0)
		return errno_err(err, errno, "cannot stat", e->path);
	if (!same_identity(e, id, st))
		return path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED,
				"changed between the walk and the open", e->path);
	char proc[40];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	int fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		fd = ag_ws_open_beneath(rootfd, e->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return errno_err(err, errno, "cannot open", e->path);
	if (fstat(fd, st) < 0 || !same_identity(e, id, st)) {
		close(fd);
		return path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED,
				"changed between the walk and the open", e->path);
	}
	return fd;
}

int ag_ws_open_entry(int rootfd, const struct ag_ws_snapshot *s, const struct ag_ws_entry *e,
		     struct ag_error **err)
{
	struct stat st;
	if (!s->idv || e->ident >= s->nid)
		return ag_err(err, AG_E_INTERNAL, 0, "internal.workspace",
			      "entry has no walk identity");
	return open_verified(rootfd, e, &s->idv[e->ident], &st, err);
}

static int hash_one(struct hasher *h, struct ag_ws_entry *e, char *buf, struct ag_error **err)
{
	const struct ag_ws_ident *id = &h->s->idv[e->ident];
	struct stat st;
	_cleanup_close_ int fd = open_verified(h->rootfd, e, id, &st, err);
	if (fd < 0)
		return -1;
	/* O_NONBLOCK has no effect on reads of a regular file: it stays set */
	_cleanup_close_ int out = -1;
	if (h->o->dest_rootfd >= 0) {
		out = ag_ws_open_beneath(h->o->dest_rootfd, e->path,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, 0600);
		if (out < 0)
			return path_err(err, AG_E_IO, errno, "workspace.io",
					"cannot create the copy", e->path);
	}
	struct ag_sha256 *sh = ag_sha256_new();
	struct classify c = {0};
	uint64_t done = 0;
	while (e->size > 0) { /* an empty file that grows is caught by the fstat below */
		ssize_t r = read(fd, buf, IO_CHUNK);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int en = errno;
			char dummy[AG_SHA256_HEX_LEN + 1];
			ag_sha256_final_hex(sh, dummy);
			return path_err(err, AG_E_IO, en, "workspace.io", "cannot read", e->path);
		}
		if (r == 0)
			break;
		if ((uint64_t)r > e->size - done) {
			char dummy[AG_SHA256_HEX_LEN + 1];
			ag_sha256_final_hex(sh, dummy);
			return path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED,
					"grew while it was read", e->path);
		}
		ag_sha256_update(sh, buf, (size_t)r);
		classify_chunk(&c, (unsigned char *)buf, (size_t)r);
		if ((out >= 0 && ag_write_full(out, buf, (size_t)r) < 0) ||
		    (e->retained &&
		     pwrite_all(h->o->text_fd, buf, (size_t)r, (off_t)(e->text_off + done)) < 0)) {
			int en = errno;
			char dummy[AG_SHA256_HEX_LEN + 1];
			ag_sha256_final_hex(sh, dummy);
			return path_err(err, AG_E_IO, en, "workspace.io", "cannot write the copy",
					e->path);
		}
		done += (uint64_t)r;
		atomic_fetch_add(&h->bytes_done, (uint64_t)r);
		hash_progress(h, false);
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_final_hex(sh, hex);
	(void)ag_ws_sha_from_hex(hex, e->sha);
	if (done != e->size || fstat(fd, &st) < 0 || !same_identity(e, id, &st))
		return path_err(err, AG_E_UNSAFE_PATH, 0, R_CHANGED, "changed while it was read",
				e->path);
	classify_finish(&c, e->size, e);
	if (out >= 0) {
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		if (fchmod(out, e->mode) < 0 || futimens(out, ts) < 0)
			return path_err(err, AG_E_IO, errno, "workspace.io",
					"cannot set the mode of the copy", e->path);
	}
	return 0;
}

static void *hash_worker(void *arg)
{
	struct hasher *h = arg;
	char *buf = ag_xmalloc(IO_CHUNK);
	for (;;) {
		if (atomic_load(&h->stop))
			break;
		size_t i = atomic_fetch_add(&h->next, 1);
		if (i >= h->nfiles)
			break;
		struct ag_error *e = NULL;
		int hr = hash_one(h, &h->s->v[h->files[i]], buf, &e);
		atomic_fetch_add(&h->files_done, 1);
		hash_progress(h, false);
		if (hr < 0) {
			pthread_mutex_lock(&h->lock);
			if (!h->err || i < h->err_index) {
				ag_error_free(h->err);
				h->err = e;
				h->err_index = i;
			} else {
				ag_error_free(e);
			}
			pthread_mutex_unlock(&h->lock);
			atomic_store(&h->stop, true);
		}
	}
	free(buf);
	return NULL;
}

static int hash_files(int rootfd, const struct ag_ws_snapshot_opts *o, struct ag_ws_snapshot *s,
		      struct ag_error **err)
{
	struct hasher h = {.o = o, .rootfd = rootfd, .s = s};
	h.files = ag_xmalloc((s->n ? s->n : 1) * sizeof(*h.files));
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].kind == AG_WS_FILE) {
			h.files[h.nfiles++] = i;
			h.bytes_total += s->v[i].size;
		}
	atomic_init(&h.files_done, 0);
	atomic_init(&h.bytes_done, 0);
	h.reporter = pthread_self();
	hash_progress(&h, true);
	atomic_init(&h.next, 0);
	atomic_init(&h.stop, false);
	pthread_mutex_init(&h.lock, NULL);
	unsigned nt = o->threads ? o->threads : 2;
	if (nt > 16)
		nt = 16;
	if (nt > h.nfiles)
		nt = h.nfiles ? (unsigned)h.nfiles : 1;
	pthread_t tids[16];
	unsigned started = 0;
	for (unsigned t = 1; t < nt; t++) {
		if (pthread_create(&tids[started], NULL, hash_worker, &h) != 0)
			break; /* fewer workers is still correct */
		started++;
	}
	hash_worker(&h);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	pthread_mutex_destroy(&h.lock);
	free(h.files);
	if (h.err) {
		ag_error_free(*err);
		*err = h.err;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- copy */

/* Creates the directory or symlink e in the copy, beneath its parent. */
static int create_in_copy(int dest, const struct ag_ws_entry *e, struct ag_error **err)
{
	const char *slash = strrchr(e->path, '/');
	_cleanup_close_ int pfd = -1;
	if (slash) {
		_cleanup_free_ char *parent = ag_xstrndup(e->path, (size_t)(slash - e->path));
		pfd = ag_ws_open_beneath(dest, parent, O_PATH | O_DIRECTORY, 0);
		if (pfd < 0)
			return path_err(err, AG_E_IO, errno, "workspace.io",
					"cannot open the copy's directory", e->path);
	}
	int at = slash ? pfd : dest;
	const char *name = slash ? slash + 1 : e->path;
	int r = e->kind == AG_WS_DIR ? mkdirat(at, name, 0700) : symlinkat(e->target, at, name);
	if (r < 0)
		return path_err(err, AG_E_IO, errno, "workspace.io", "cannot create the copy",
				e->path);
	return 0;
}

static int make_entries(const struct ag_ws_snapshot_opts *o, const struct ag_ws_snapshot *s,
			uint8_t kind, struct ag_error **err)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].kind == kind && create_in_copy(o->dest_rootfd, &s->v[i], err) < 0)
			return -1;
	return 0;
}

static int make_links_and_modes(const struct ag_ws_snapshot_opts *o, const struct ag_ws_snapshot *s,
				struct ag_error **err)
{
	if (make_entries(o, s, AG_WS_SYMLINK, err) < 0)
		return -1;
	/* directory modes last, deepest first, so read-only sources still copy */
	for (size_t i = s->n; i-- > 0;) {
		const struct ag_ws_entry *e = &s->v[i];
		if (e->kind != AG_WS_DIR)
			continue;
		_cleanup_close_ int dfd =
		    ag_ws_open_beneath(o->dest_rootfd, e->path, O_RDONLY | O_DIRECTORY, 0);
		struct timespec ts[2] = {{0, UTIME_OMIT}, s->idv[e->ident].mtim};
		if (dfd < 0 || fchmod(dfd, e->mode) < 0 || futimens(dfd, ts) < 0)
			return path_err(err, AG_E_IO, errno, "workspace.io",
					"cannot set directory mode", e->path);
	}
	return 0;
}

/* ----------------------------------------------------------------- take */

int ag_ws_snapshot_take(int rootfd, const struct ag_ws_snapshot_opts *opts,
			struct ag_ws_snapshot *out, struct ag_error **err)
{
	_cleanup_snapshot_ struct ag_ws_snapshot s = AG_WS_SNAPSHOT_INIT;
	struct ag_ws_limits dl;
	ag_ws_limits_default(&dl);
	const struct ag_ws_limits *l = opts->limits ? opts->limits : &dl;
	struct stat rst;
	if (fstat(rootfd, &rst) < 0 || !S_ISDIR(rst.st_mode))
		return ag_err(err, AG_E_IO, errno, "workspace.io", "tree root is not a directory");
	_cleanup_free_ char *path = ag_xmalloc(l->max_path_bytes + 2 + 256);
	path[0] = '\0';
	struct walk w = {.o = opts, .l = l, .s = &s, .path = path};
	if (walk_dir(&w, rootfd, 0, 0, err) < 0)
		return -1;
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), entry_cmp);
	if (check_links(&s, l, err) < 0)
		return -1;
	if (opts->text_fd >= 0) {
		/* Deterministic retention: sorted order, whole files, within budget. */
		uint64_t budget =
		    l->max_text_bytes < l->max_total_bytes ? l->max_text_bytes : l->max_total_bytes;
		uint64_t off = 0;
		for (size_t i = 0; i < s.n; i++) {
			struct ag_ws_entry *e = &s.v[i];
			if (e->kind != AG_WS_FILE || e->size == 0 || e->size > budget - off)
				continue;
			e->retained = true;
			e->text_off = off;
			off += e->size;
		}
	}
	if (opts->dest_rootfd >= 0 && make_entries(opts, &s, AG_WS_DIR, err) < 0)
		return -1;
	if (opts->after_walk)
		opts->after_walk(opts->hook_ctx);
	if (hash_files(rootfd, opts, &s, err) < 0)
		return -1;
	if (opts->dest_rootfd >= 0 && make_links_and_modes(opts, &s, err) < 0)
		return -1;
	if (opts->progress) {
		uint64_t files = 0;
		for (size_t i = 0; i < s.n; i++)
			files += s.v[i].kind == AG_WS_FILE;
		struct ag_ws_progress p = {.reading = true,
					   .done = true,
					   .entries = files,
					   .entries_total = files,
					   .bytes = s.total_bytes,
					   .bytes_total = s.total_bytes};
		progress_tick(opts, &w.progress_ms, &p, true);
	}
	*out = s;
	s = (struct ag_ws_snapshot)AG_WS_SNAPSHOT_INIT;
	return 0;
}

/* ------------------------------------------------------------ serialize */

int ag_ws_entry_serialize(const struct ag_ws_entry *e, struct ag_buf *b, struct ag_error **err)
{
	if (ag_buf_adds(b, "e\t", err) < 0 ||
	    ag_ws_path_encode(b, e->path, strlen(e->path), err) < 0)
		return -1;
	char off[24] = "-";
	if (e->retained)
		snprintf(off, sizeof(off), "%" PRIu64, e->text_off);
	char hex[AG_SHA256_HEX_LEN + 1] = "-";
	if (e->kind != AG_WS_DIR)
		ag_ws_sha_hex(e->sha, hex);
	if (ag_buf_addf(b, err, "\t%c\t%04o\t%" PRIu64 "\t%s\t%s\t%" PRIu64 "\t%s\t", e->kind,
			e->mode, e->kind == AG_WS_DIR ? 0 : e->size, hex,
			ag_ws_content_name(e->content), e->line_count, off) < 0)
		return -1;
	if (e->target && ag_ws_path_encode(b, e->target, e->size, err) < 0)
		return -1;
	return ag_buf_adds(b, "\n", err);
}

int ag_ws_snapshot_serialize(const struct ag_ws_snapshot *s, struct ag_buf *b,
			     struct ag_error **err)
{
	for (size_t i = 0; i < s->n; i++)
		if (ag_ws_entry_serialize(&s->v[i], b, err) < 0)
			return -1;
	return 0;
}

void ag_ws_snapshot_digest(const struct ag_ws_snapshot *s, char hex[AG_SHA256_HEX_LEN + 1])
{
	struct ag_sha256 *h = ag_sha256_new();
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, NULL);
	for (size_t i = 0; i < s->n; i++) {
		struct ag_error *e = NULL;
		ag_buf_reset(&b);
		if (ag_ws_entry_serialize(&s->v[i], &b, &e) < 0)
			abort(); /* unbounded buffer: cannot fail */
		ag_sha256_update(h, b.buf, b.len);
	}
	ag_buf_release(&b);
	ag_sha256_final_hex(h, hex);
}
