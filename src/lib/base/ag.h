/*
 * ag.h: the first include of every AgentGuard source file.
 *
 * Common system headers, scope-bound cleanup helpers, ownership transfer
 * helpers and the banned-function list. Nothing here allocates by itself.
 */
#ifndef AG_AG_H
#define AG_AG_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AG_VERSION "0.1.0"

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(ag_freep)
#define _cleanup_close_ _cleanup_(ag_closep)
#define AG_UNUSED __attribute__((unused))
#define AG_MUST_USE __attribute__((warn_unused_result))
#define AG_NORETURN __attribute__((noreturn))
#define AG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define AG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void ag_freep(void *p)
{
	free(*(void **)p);
}

/* Closes *fd when it is >= 0; errors on close of a read-only fd are moot. */
static inline void ag_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

/* Moves ownership of a pointer out of a cleanup-bound local. */
#define ag_steal_ptr(pp)                                                                           \
	({                                                                                         \
		__typeof__(*(pp)) _ptr_ = *(pp);                                                   \
		*(pp) = NULL;                                                                      \
		_ptr_;                                                                             \
	})

/* Moves ownership of an fd out of a cleanup-bound local. */
static inline int ag_take_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

/*
 * Allocation that aborts on exhaustion: out-of-memory is not a recoverable
 * condition for a CLI tool. Containers created before an abort are found
 * again by label through `agentguard cleanup`.
 */
void *ag_xmalloc(size_t n);
void *ag_xcalloc(size_t n, size_t size);
void *ag_xrealloc(void *p, size_t n);
char *ag_xstrdup(const char *s);
char *ag_xstrndup(const char *s, size_t n);
char *ag_xasprintf(const char *fmt, ...) AG_PRINTF(1, 2);
char *ag_xvasprintf(const char *fmt, va_list ap) AG_PRINTF(1, 0);

/* Checked decimal parsing: the whole string must be a number in range. */
int ag_parse_i64(const char *s, int64_t *out);

/* out = prefix + 16 lower-case hex digits from getrandom (a name nobody can
 * guess or collide with); out has room for strlen(prefix) + 17 bytes. Aborts
 * when the kernel has no entropy source at all: nothing can be named safely. */
void ag_random_name(char *out, size_t size, const char *prefix);

#include "lib/base/banned.h"

#endif
