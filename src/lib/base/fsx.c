#include "lib/base/ag.h"
#include "lib/base/fsx.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"

#include <sys/stat.h>

int ag_read_file_at(int dirfd, const char *path, const char *display, size_t max,
		    const struct ag_read_reasons *why, char **out, size_t *len,
		    struct ag_error **err)
{
	_cleanup_close_ int fd =
	    openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return ag_err(err, AG_E_UNSAFE_PATH, errno, why->symlink,
				      "'%s' is a symbolic link; refusing to follow it", display);
		return ag_err(err, AG_E_IO, errno, why->open, "cannot open '%s': %s", display,
			      strerror(errno));
	}
	return ag_read_fd(fd, display, max, why, out, len, err);
}

int ag_read_fd(int fd, const char *display, size_t max, const struct ag_read_reasons *why,
	       char **out, size_t *len, struct ag_error **err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return ag_err(err, AG_E_IO, errno, why->open, "cannot stat '%s': %s", display,
			      strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ag_err(err, AG_E_UNSAFE_PATH, 0, why->not_regular,
			      "'%s' is not a regular file", display);
	if ((uint64_t)st.st_size > max)
		return ag_err(err, AG_E_LIMIT, 0, why->too_large,
			      "'%s' is larger than the %zu-byte limit", display, max);
	/* Clear O_NONBLOCK for the read loop of a regular file. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);

	_cleanup_buf_ struct ag_buf b = AG_BUF_INIT(max, why->too_large);
	char chunk[65536];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return ag_err(err, AG_E_IO, errno, why->open, "cannot read '%s': %s",
				      display, strerror(errno));
		}
		if (r == 0)
			break;
		/* The file may grow after fstat: the buffer cap still holds. */
		if (ag_buf_add(&b, chunk, (size_t)r, err) < 0) {
			ag_error_free(*err);
			*err = NULL;
			return ag_err(err, AG_E_LIMIT, 0, why->too_large,
				      "'%s' is larger than the %zu-byte limit", display, max);
		}
	}
	*out = ag_buf_detach(&b, len);
	return 0;
}

int ag_write_full(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int ag_write_file_atomic_at(int dirfd, const char *name, const char *display, const void *data,
			    size_t len, mode_t mode, bool exclusive, struct ag_error **err)
{
	_cleanup_free_ char *tmp = NULL;
	int fd = -1;
	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		free(tmp);
		unsigned rnd = 0;
		(void)!getentropy(&rnd, sizeof(rnd));
		tmp = ag_xasprintf(".%s.%08x.tmp", name, rnd);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd < 0 && errno != EEXIST)
			return ag_err(err, AG_E_IO, errno, "io.create", "cannot create '%s': %s",
				      display, strerror(errno));
	}
	if (fd < 0)
		return ag_err(err, AG_E_IO, EEXIST, "io.create", "cannot create '%s'", display);
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			unlinkat(dirfd, tmp, 0);
			return ag_err(err, AG_E_IO, e, "io.write", "cannot write '%s': %s", display,
				      strerror(e));
		}
		p += w;
		left -= (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return ag_err(err, AG_E_IO, e, "io.write", "cannot write '%s': %s", display,
			      strerror(e));
	}
	close(fd);
	int r = exclusive ? renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE)
			  : renameat(dirfd, tmp, dirfd, name);
	if (r < 0) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		if (e == EEXIST)
			return ag_err(err, AG_E_IO, e, "io.exists", "'%s' already exists", display);
		return ag_err(err, AG_E_IO, e, "io.rename", "cannot publish '%s': %s", display,
			      strerror(e));
	}
	return 0;
}

int ag_open_or_make_dirs(const char *path, mode_t mode)
{
	_cleanup_free_ char *copy = ag_xstrdup(path);
	int cur = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *p = copy;
	while (cur >= 0 && *p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (mkdirat(cur, p, mode) < 0 && errno != EEXIST) {
			int e = errno;
			close(cur);
			errno = e;
			return -1;
		}
		int next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		cur = next;
		errno = e;
		if (!slash)
			break;
		p = slash + 1;
	}
	return cur;
}
