#include "lib/base/ag.h"

#include <sys/random.h>

AG_NORETURN static void oom(void)
{
	static const char msg[] = "agentguard: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	abort();
}

void *ag_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *ag_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *ag_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *ag_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *ag_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *ag_xvasprintf(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *ag_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = ag_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int ag_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return -1;
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!*p)
		return -1;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return -1;
	errno = 0;
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (errno || !end || *end)
		return -1;
	*out = (int64_t)v;
	return 0;
}

void ag_random_name(char *out, size_t size, const char *prefix)
{
	unsigned char b[8];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		got += (size_t)n;
	}
	size_t pl = strlen(prefix);
	if (size < pl + 2 * sizeof(b) + 1)
		abort(); /* a caller's buffer too small: a programming error */
	memcpy(out, prefix, pl);
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(b); i++) {
		out[pl + 2 * i] = hex[b[i] >> 4];
		out[pl + 2 * i + 1] = hex[b[i] & 15];
	}
	out[pl + 2 * sizeof(b)] = '\0';
}
