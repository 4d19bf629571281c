/*
 * strv.h: a NULL-terminated vector of owned strings (argv, env, lists).
 */
#ifndef AG_STRV_H
#define AG_STRV_H

#include "lib/base/ag.h"

struct ag_strv {
	char **v; /* NULL-terminated; NULL only before the first push */
	size_t n;
	size_t alloc;
};

#define AG_STRV_INIT                                                                               \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void ag_strv_push(struct ag_strv *s, const char *str);
void ag_strv_pushf(struct ag_strv *s, const char *fmt, ...) AG_PRINTF(2, 3);
/* Takes ownership of a heap string. */
void ag_strv_push_owned(struct ag_strv *s, char *str);
void ag_strv_release(struct ag_strv *s);
void ag_strv_releasep(struct ag_strv *s);
#define _cleanup_strv_ _cleanup_(ag_strv_releasep)
/* Index of the first equal string, or -1. */
ssize_t ag_strv_find(const struct ag_strv *s, const char *str);
void ag_strv_sort(struct ag_strv *s);
/* Never NULL: an empty vector yields a static {NULL}. */
char *const *ag_strv_argv(const struct ag_strv *s);

#endif
