/*
 * lazylib.c: the tables of lazylib.h, filled by dlopen(3) and dlsym(3).
 */
#define AG_LAZYLIB_IMPL
#include "lib/base/ag.h"
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <git2.h>

#include "lib/base/lazylib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(AG_SONAME_CURL) || !defined(AG_SONAME_GIT2) || !defined(AG_SONAME_ARCHIVE)
#error "the Makefile passes the sonames of libcurl, libgit2 and libarchive"
#endif
/* An empty name would make dlopen(3) return the program itself. */
_Static_assert(sizeof(AG_SONAME_CURL) > 1, "no soname for libcurl (objdump missing?)");
_Static_assert(sizeof(AG_SONAME_GIT2) > 1, "no soname for libgit2 (objdump missing?)");
_Static_assert(sizeof(AG_SONAME_ARCHIVE) > 1, "no soname for libarchive (objdump missing?)");

struct lazy {
	const char *soname;
	pthread_once_t once;
	bool ok;
	char why[256]; /* dlerror()'s text, a leading path replaced by the soname */
};

/* dlopen SONAME; false with why[] set. RTLD_LOCAL: its symbols serve only us. */
static void *open_lib(struct lazy *l)
{
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* glibc names the file it found but could not use ("/x/libcurl.so.4:
		 * file too short"): a host path, which no message may carry. */
		const char *e = dlerror(), *c;
		if (!e)
			e = "dlopen failed";
		if (e[0] == '/' && (c = strstr(e, ": ")) != NULL)
			snprintf(l->why, sizeof l->why, "%s%s", l->soname, c);
		else
			snprintf(l->why, sizeof l->why, "%s", e);
	}
	return h;
}

static bool resolve(struct lazy *l, void *h, const char *name, void *slot)
{
	dlerror();
	void *sym = dlsym(h, name);
	if (!sym) {
		snprintf(l->why, sizeof l->why, "%s has no %s", l->soname, name);
		return false;
	}
	memcpy(slot, &sym, sizeof sym); /* POSIX: a function pointer fits a void * */
	return true;
}

static int load(struct lazy *l, struct ag_error **err)
{
	if (l->ok)
		return 0;
	return ag_err(err, AG_E_INTERNAL, 0, "lib.load",
		      "the shared library %s could not be loaded: %s", l->soname, l->why);
}

static void need_failed(const struct lazy *l)
{
	fprintf(stderr, "agentguard: the shared library %s could not be loaded: %s\n", l->soname,
		l->why);
	abort();
}

/* LAZY(lib, SONAME, FUNCS): lib's table, its loader and its accessor. */
#define LAZY(lib, SONAME, FUNCS)                                                                   \
	static struct lazy lib##_l = {.soname = SONAME, .once = PTHREAD_ONCE_INIT};                \
	static struct ag_lazy_##lib##_fns lib##_t;                                                 \
	static void lib##_init(void)                                                               \
	{                                                                                          \
		void *h = open_lib(&lib##_l);                                                      \
		bool ok = h != NULL;                                                               \
		FUNCS(RESOLVE_##lib)                                                               \
		lib##_l.ok = ok;                                                                   \
	}                                                                                          \
	int ag_lazy_##lib##_load(struct ag_error **err)                                            \
	{                                                                                          \
		pthread_once(&lib##_l.once, lib##_init);                                           \
		return load(&lib##_l, err);                                                        \
	}                                                                                          \
	const struct ag_lazy_##lib##_fns *ag_lazy_##lib(void)                                      \
	{                                                                                          \
		pthread_once(&lib##_l.once, lib##_init);                                           \
		if (!lib##_l.ok)                                                                   \
			need_failed(&lib##_l);                                                     \
		return &lib##_t;                                                                   \
	}

#define RESOLVE_curl(n) ok = ok && resolve(&curl_l, h, #n, &curl_t.n);
#define RESOLVE_git2(n) ok = ok && resolve(&git2_l, h, #n, &git2_t.n);
#define RESOLVE_archive(n) ok = ok && resolve(&archive_l, h, #n, &archive_t.n);

LAZY(curl, AG_SONAME_CURL, AG_LAZY_CURL_FUNCS)
LAZY(git2, AG_SONAME_GIT2, AG_LAZY_GIT2_FUNCS)
LAZY(archive, AG_SONAME_ARCHIVE, AG_LAZY_ARCHIVE_FUNCS)
