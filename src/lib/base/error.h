/*
 * error.h: the one error convention of the library.
 *
 * A failing function returns a negative int (or NULL) and fills
 * `struct ag_error **err`, its last parameter. The error carries a code that
 * maps to an exit code, a static reason token that tests and evidence
 * assert on, and a sanitized human message. Callers add context on the way
 * up with ag_err_wrap(); only src/cli prints, once.
 */
#ifndef AG_ERROR_H
#define AG_ERROR_H

#include "lib/base/ag.h"

enum ag_code {
	AG_OK = 0,
	AG_E_USAGE,	  /* bad command line */
	AG_E_CONFIG,	  /* config invalid; location filled when known */
	AG_E_UNVERIFIED,  /* a required property could not be verified */
	AG_E_DOCKER,	  /* docker client failed or answered badly */
	AG_E_LIMIT,	  /* a bound was hit */
	AG_E_UNSAFE_PATH, /* link, escape, special file or hardlink */
	AG_E_IO,	  /* filesystem or OS failure */
	AG_E_CLEANUP,	  /* cleanup or liveness not verified */
	AG_E_INTERNAL,	  /* programmer error */
};

struct ag_error {
	enum ag_code code;
	int sys_errno;	    /* 0 when synthetic */
	const char *reason; /* static token, e.g. "config.yaml.alias" */
	char *msg;	    /* sanitized human text */
	char *file;	    /* config file as the user named it, or NULL */
	unsigned line;	    /* 1-based; 0 when unknown */
	unsigned column;    /* 1-based; 0 when unknown */
	char *key;	    /* key path, e.g. contained_execution.environment[2].name */
};

/* Fills *err (which must be NULL) and returns -1. */
int ag_err(struct ag_error **err, enum ag_code code, int sys_errno, const char *reason,
	   const char *fmt, ...) AG_PRINTF(5, 6);
/* Same, with a location. file/key may be NULL. */
int ag_err_at(struct ag_error **err, enum ag_code code, const char *reason, const char *file,
	      unsigned line, unsigned column, const char *key, const char *fmt, ...)
    AG_PRINTF(8, 9);
/* Prefixes context to an existing error's message; returns -1. */
int ag_err_wrap(struct ag_error **err, const char *fmt, ...) AG_PRINTF(2, 3);
void ag_error_free(struct ag_error *e);
void ag_error_freep(struct ag_error **e);
#define _cleanup_err_ _cleanup_(ag_error_freep)

/*
 * Formats the error for a person on one line:
 *   config 'F' line L column C: KEY: MESSAGE [reason]
 * The returned string is owned by the caller.
 */
char *ag_error_format(const struct ag_error *e);

const char *ag_code_name(enum ag_code code);

#endif
