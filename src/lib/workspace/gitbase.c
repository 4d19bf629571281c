/*
 * gitbase.c: the workspace's baseline repository (gitbase.h).
 */
#include "lib/base/ag.h"
#include "lib/workspace/gitbase.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/proc.h"
#include "lib/workspace/gitinfo.h"

#include <dirent.h>
#include <git2.h>
#include "lib/base/lazylib.h"
#include <sys/stat.h>

static const char *R_BASE = "workspace.git_baseline_failed";

#define BASE_FAILED AG_WS_GIT_CHILD_FAILED
#define BASE_NOMEM AG_WS_GIT_CHILD_NOMEM

/* ------------------------------------------------------- the child's side */

struct walk {
	git_repository *repo;
	git_index *idx;
	size_t entries;
	int status; /* 0, BASE_FAILED or BASE_NOMEM */
	char path[AG_WS_MAX_PATH_BYTES + 1];
};

static int fail(struct walk *w)
{
	const git_error *e = git_error_last();
	if (!w->status)
		w->status = (e && e->klass == GIT_ERROR_NOMEMORY) || errno == ENOMEM ? BASE_NOMEM
										     : BASE_FAILED;
	return -1;
}

/* The whole regular file at dirfd/name (no link followed), at most the
 * workspace's file bound. */
static char *read_all(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > AG_WS_MAX_FILE_BYTES) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t cap = (size_t)st.st_size, n = 0;
	char *buf = malloc(cap ? cap : 1);
	while (buf) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r == 0 && n != cap)) {
			free(buf); /* changed under us: not the copied bytes */
			buf = NULL;
			break;
		}
		n += (size_t)r;
		if (r == 0 || n == cap) {
			char extra;
			if (n == cap && read(fd, &extra, 1) != 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

static int add_entry(struct walk *w, const struct stat *st, unsigned mode, const git_oid *id)
{
	git_index_entry e;
	memset(&e, 0, sizeof(e));
	e.path = w->path;
	e.mode = mode;
	e.id = *id;
	/* stat data as git records it: `git status` then needs no rehash */
	e.ctime.seconds = (int32_t)st->st_ctim.tv_sec;
	e.ctime.nanoseconds = (uint32_t)st->st_ctim.tv_nsec;
	e.mtime.seconds = (int32_t)st->st_mtim.tv_sec;
	e.mtime.nanoseconds = (uint32_t)st->st_mtim.tv_nsec;
	e.dev = (uint32_t)st->st_dev;
	e.ino = (uint32_t)st->st_ino;
	e.uid = (uint32_t)st->st_uid;
	e.gid = (uint32_t)st->st_gid;
	e.file_size = (uint32_t)st->st_size;
	return git_index_add(w->idx, &e) < 0 ? fail(w) : 0;
}

/* Every entry below dirfd (w->path its relative path, plen long). */
static int walk_dir(struct walk *w, int dirfd, size_t plen, unsigned depth)
{
	if (depth > AG_WS_MAX_DEPTH)
		return fail(w);
	int dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return fail(w);
	}
	rewinddir(d);
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		const char *name = de->d_name;
		size_t nl = strlen(name);
		if (!strcmp(name, ".") || !strcmp(name, "..") ||
		    (depth == 0 && !strcmp(name, ".git")))
			continue;
		if (++w->entries > AG_WS_MAX_ENTRIES || plen + 1 + nl > AG_WS_MAX_PATH_BYTES) {
			rc = fail(w);
			break;
		}
		size_t at = plen ? plen + 1 : 0;
		if (plen)
			w->path[plen] = '/';
		memcpy(w->path + at, name, nl + 1);
		struct stat st;
		git_oid id;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = fail(w);
		} else if (S_ISDIR(st.st_mode)) {
			int sub =
			    openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = sub < 0 ? fail(w) : walk_dir(w, sub, at + nl, depth + 1);
			if (sub >= 0)
				close(sub);
		} else if (S_ISREG(st.st_mode)) {
			size_t len = 0;
			char *buf = read_all(dirfd, name, &len);
			rc = !buf || git_blob_create_from_buffer(&id, w->repo, buf, len) < 0
				 ? fail(w)
				 : add_entry(w, &st,
					     st.st_mode & 0100 ? GIT_FILEMODE_BLOB_EXECUTABLE
							       : GIT_FILEMODE_BLOB,
					     &id);
			free(buf);
		} else if (S_ISLNK(st.st_mode)) {
			char target[AG_WS_MAX_SYMLINK_TARGET_BYTES + 1];
			ssize_t tl = readlinkat(dirfd, name, target, sizeof(target));
			rc = tl < 0 || (size_t)tl >= sizeof(target) ||
				     git_blob_create_from_buffer(&id, w->repo, target, (size_t)tl) <
					 0
				 ? fail(w)
				 : add_entry(w, &st, GIT_FILEMODE_LINK, &id);
		} else {
			rc = fail(w); /* the copy holds files, directories and links only */
		}
		w->path[plen] = '\0';
	}
	if (rc == 0 && errno)
		rc = fail(w);
	closedir(d);
	return rc;
}

/* libgit2's template leaves a sample in .git/hooks (mode 0777): the
 * directory is emptied, so no hook of ours is there to run. */
static int empty_hooks(void)
{
	int h = open(".git/hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = h >= 0 ? fdopendir(h) : NULL;
	if (!d) {
		if (h >= 0)
			close(h);
		return errno == ENOENT ? 0 : -1;
	}
	int rc = 0;
	for (struct dirent *de; rc == 0 && (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	return rc;
}

/* The repository's config: names a Linux tree may hold and git on Linux
 * checks out (a ':', a '\\', a trailing dot) are not refused as if the work
 * tree were on NTFS or HFS+; links and executable bits are real. */
static int repo_config(git_repository *repo)
{
	git_config *cfg = NULL;
	/* init probed symlink and chmod support with calls the sandbox
	 * refuses, and would record false: the agent's git would then check
	 * a link out as a file, or drop executable bits */
	int rc = git_repository_config(&cfg, repo) < 0 ||
			 git_config_set_bool(cfg, "core.protectNTFS", 0) < 0 ||
			 git_config_set_bool(cfg, "core.protectHFS", 0) < 0 ||
			 git_config_set_bool(cfg, "core.symlinks", 1) < 0 ||
			 git_config_set_bool(cfg, "core.filemode", 1) < 0
		     ? -1
		     : 0;
	git_config_free(cfg);
	return rc;
}

int ag_ws_git_baseline_child(int out_fd)
{
	static struct walk w;
	git_repository_init_options io;
	if (git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION) < 0)
		return BASE_FAILED;
	io.flags = GIT_REPOSITORY_INIT_NO_REINIT;
	io.initial_head = AG_WS_GIT_BASELINE_BRANCH;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, commit_id;
	int wsfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0 || git_repository_init_ext(&w.repo, ".", &io) < 0 || empty_hooks() < 0 ||
	    repo_config(w.repo) < 0 || git_repository_index(&w.idx, w.repo) < 0 ||
	    walk_dir(&w, wsfd, 0, 0) < 0 || git_index_write(w.idx) < 0 ||
	    git_index_write_tree(&tree_id, w.idx) < 0 ||
	    git_tree_lookup(&tree, w.repo, &tree_id) < 0 ||
	    git_signature_new(&sig, AG_WS_GIT_BASELINE_NAME, AG_WS_GIT_BASELINE_EMAIL,
			      AG_WS_GIT_BASELINE_TIME, 0) < 0 ||
	    git_commit_create(&commit_id, w.repo, "HEAD", sig, sig, NULL,
			      "AgentGuard baseline: the workspace as copied\n", tree, 0, NULL) < 0)
		return w.status ? w.status : (fail(&w), w.status);
	char line[GIT_OID_HEXSZ + 3] = "B";
	git_oid_tostr(line + 1, GIT_OID_HEXSZ + 1, &commit_id);
	line[GIT_OID_HEXSZ + 1] = '\n';
	return ag_write_full(out_fd, line, GIT_OID_HEXSZ + 2) < 0 ? BASE_FAILED : 0;
}

/* ------------------------------------------------------ the parent's side */

int ag_ws_git_baseline(int wsfd, unsigned timeout_ms, char commit[41], struct ag_error **err)
{
	commit[0] = '\0';
	struct stat st;
	if (fstatat(wsfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return ag_err(err, AG_E_IO, EEXIST, R_BASE,
			      "the workspace already holds a .git entry");
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	int status = -1;
	int rc = ag_ws_git_run_child(wsfd, AG_WS_GIT_WRITE_BASELINE,
				     timeout_ms ? timeout_ms : AG_WS_GIT_BASELINE_TIMEOUT_MS, &r,
				     &status, err);
	if (rc == 0)
		rc = ag_ws_git_child_bounds(
		    status, "the workspace repository's writer", AG_WS_GIT_BASELINE_CPU_MAX_S,
		    "it needs seccomp and Landlock ABI 2, Linux 5.19 or later; "
		    "workspace.git: none turns the repository off",
		    err);
	if (rc == 0 && status != 0)
		rc = ag_err(err, AG_E_IO, 0, R_BASE,
			    "cannot write the workspace's git repository (writer status %d; "
			    "workspace.git: none turns it off)",
			    status);
	else if (rc == 0 && (r.out.len != GIT_OID_HEXSZ + 2 || r.out.buf[0] != 'B' ||
			     r.out.buf[GIT_OID_HEXSZ + 1] != '\n' ||
			     strspn(r.out.buf + 1, "0123456789abcdef") != GIT_OID_HEXSZ))
		rc = ag_err(err, AG_E_IO, 0, R_BASE, "the baseline writer's answer is malformed");
	if (rc == 0) {
		memcpy(commit, r.out.buf + 1, GIT_OID_HEXSZ);
		commit[GIT_OID_HEXSZ] = '\0';
	}
	ag_proc_result_release(&r);
	return rc;
}
