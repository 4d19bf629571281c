/*
 * buf.h: the one growable byte buffer, with a hard maximum.
 *
 * Invariants (after git's strbuf): `buf` is never NULL and always
 * NUL-terminated; `len < alloc` once allocated. Appending past `max`
 * fails with AG_E_LIMIT and leaves the buffer unchanged.
 */
#ifndef AG_BUF_H
#define AG_BUF_H

#include "lib/base/ag.h"

struct ag_error;

struct ag_buf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t max;	    /* hard cap on len */
	const char *reason; /* reason token reported when max is hit */
};

extern char ag_buf_empty[];
#define AG_BUF_INIT(maxbytes, why)                                                                 \
	{                                                                                          \
		ag_buf_empty, 0, 0, (maxbytes), (why)                                              \
	}

void ag_buf_init(struct ag_buf *b, size_t max, const char *reason);
void ag_buf_release(struct ag_buf *b);
void ag_buf_releasep(struct ag_buf *b);
#define _cleanup_buf_ _cleanup_(ag_buf_releasep)

AG_MUST_USE int ag_buf_add(struct ag_buf *b, const void *data, size_t n, struct ag_error **err);
AG_MUST_USE int ag_buf_adds(struct ag_buf *b, const char *s, struct ag_error **err);
AG_MUST_USE int ag_buf_addf(struct ag_buf *b, struct ag_error **err, const char *fmt, ...)
    AG_PRINTF(3, 4);
void ag_buf_reset(struct ag_buf *b);
/* Hands the heap string to the caller and resets the buffer. */
char *ag_buf_detach(struct ag_buf *b, size_t *len);

#endif
