#include "lib/base/ag.h"
#include "lib/base/strv.h"

void ag_strv_push_owned(struct ag_strv *s, char *str)
{
	if (s->n + 2 > s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 8;
		s->v = ag_xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void ag_strv_push(struct ag_strv *s, const char *str)
{
	ag_strv_push_owned(s, ag_xstrdup(str));
}

void ag_strv_pushf(struct ag_strv *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *str = ag_xvasprintf(fmt, ap);
	va_end(ap);
	ag_strv_push_owned(s, str);
}

void ag_strv_release(struct ag_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

void ag_strv_releasep(struct ag_strv *s)
{
	ag_strv_release(s);
}

ssize_t ag_strv_find(const struct ag_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return (ssize_t)i;
	return -1;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ag_strv_sort(struct ag_strv *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp);
}

char *const *ag_strv_argv(const struct ag_strv *s)
{
	static char *const empty[] = {NULL};
	return s->v ? s->v : empty;
}
