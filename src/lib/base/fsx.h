/*
 * fsx.h: filesystem helpers that never follow a link they did not verify.
 */
#ifndef AG_FSX_H
#define AG_FSX_H

#include "lib/base/ag.h"

struct ag_error;

/* Reason tokens reported by ag_read_file_at, each a static string. */
struct ag_read_reasons {
	const char *symlink;	 /* final component is a symlink */
	const char *not_regular; /* FIFO, device, directory, socket */
	const char *open;	 /* open/stat/read failed */
	const char *too_large;	 /* larger than max */
};

/*
 * Reads a whole regular file of at most `max` bytes. The final path
 * component is opened with O_NOFOLLOW (a symlink is refused), O_NONBLOCK
 * (a FIFO cannot block) and must be a regular file. `display` is how the path is named in errors
 * (the user's spelling, never a resolved host path). `dirfd` may be
 * AT_FDCWD. On success *out is a NUL-terminated heap buffer.
 */
int ag_read_file_at(int dirfd, const char *path, const char *display, size_t max,
		    const struct ag_read_reasons *why, char **out, size_t *len,
		    struct ag_error **err);

/*
 * Reads an already-open regular file (fstat-checked) of at most `max` bytes,
 * like ag_read_file_at. The fd is not closed.
 */
int ag_read_fd(int fd, const char *display, size_t max, const struct ag_read_reasons *why,
	       char **out, size_t *len, struct ag_error **err);

/*
 * Writes `data` to dirfd/name atomically: a temporary file in the same
 * directory, fsync, then rename. With `exclusive`, an existing target is an
 * error (reason "io.exists") and is not replaced.
 */
int ag_write_file_atomic_at(int dirfd, const char *name, const char *display, const void *data,
			    size_t len, mode_t mode, bool exclusive, struct ag_error **err);

/* Writes all n bytes to fd, again after EINTR or a short write: 0, or -1
 * with errno (a write that wrote nothing counts as a failure). */
int ag_write_full(int fd, const void *p, size_t n);

/*
 * mkdir -p of `path` (absolute, or relative to the working directory), one
 * component at a time, never following a link; directories it creates get
 * `mode`. Returns an O_DIRECTORY descriptor of the last component, or -1
 * with errno set.
 */
int ag_open_or_make_dirs(const char *path, mode_t mode);

#endif
