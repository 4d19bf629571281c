#include "lib/base/ag.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"

char ag_buf_empty[1];

void ag_buf_init(struct ag_buf *b, size_t max, const char *reason)
{
	b->buf = ag_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
	b->reason = reason;
}

void ag_buf_release(struct ag_buf *b)
{
	if (b->alloc)
		free(b->buf);
	b->buf = ag_buf_empty;
	b->len = 0;
	b->alloc = 0;
}

void ag_buf_releasep(struct ag_buf *b)
{
	ag_buf_release(b);
}

int ag_buf_add(struct ag_buf *b, const void *data, size_t n, struct ag_error **err)
{
	if (n > b->max || b->len > b->max - n)
		return ag_err(err, AG_E_LIMIT, 0, b->reason ? b->reason : "limit.buffer",
			      "data exceeds the %zu-byte limit", b->max);
	size_t need = b->len + n + 1;
	if (need > b->alloc) {
		size_t na = b->alloc ? b->alloc : 64;
		while (na < need)
			na = na > SIZE_MAX / 2 ? need : na * 2;
		b->buf = b->alloc ? ag_xrealloc(b->buf, na) : ag_xmalloc(na);
		if (!b->alloc)
			b->buf[0] = '\0';
		b->alloc = na;
	}
	if (n)
		memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

int ag_buf_adds(struct ag_buf *b, const char *s, struct ag_error **err)
{
	return ag_buf_add(b, s, strlen(s), err);
}

int ag_buf_addf(struct ag_buf *b, struct ag_error **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = ag_xvasprintf(fmt, ap);
	va_end(ap);
	int r = ag_buf_add(b, s, strlen(s), err);
	free(s);
	return r;
}

void ag_buf_reset(struct ag_buf *b)
{
	b->len = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}

char *ag_buf_detach(struct ag_buf *b, size_t *len)
{
	char *r = b->alloc ? b->buf : ag_xstrdup("");
	if (len)
		*len = b->len;
	b->buf = ag_buf_empty;
	b->len = 0;
	b->alloc = 0;
	return r;
}
