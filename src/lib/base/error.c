#include "lib/base/ag.h"
#include "lib/base/error.h"

int ag_err(struct ag_error **err, enum ag_code code, int sys_errno, const char *reason,
	   const char *fmt, ...)
{
	if (!err)
		return -1;
	struct ag_error *e = ag_xcalloc(1, sizeof(*e));
	va_list ap;
	va_start(ap, fmt);
	e->msg = ag_xvasprintf(fmt, ap);
	va_end(ap);
	e->code = code;
	e->sys_errno = sys_errno;
	e->reason = reason ? reason : "internal.unnamed";
	ag_error_free(*err);
	*err = e;
	return -1;
}

int ag_err_at(struct ag_error **err, enum ag_code code, const char *reason, const char *file,
	      unsigned line, unsigned column, const char *key, const char *fmt, ...)
{
	if (!err)
		return -1;
	struct ag_error *e = ag_xcalloc(1, sizeof(*e));
	va_list ap;
	va_start(ap, fmt);
	e->msg = ag_xvasprintf(fmt, ap);
	va_end(ap);
	e->code = code;
	e->reason = reason ? reason : "internal.unnamed";
	e->file = file ? ag_xstrdup(file) : NULL;
	e->line = line;
	e->column = column;
	e->key = key ? ag_xstrdup(key) : NULL;
	ag_error_free(*err);
	*err = e;
	return -1;
}

int ag_err_wrap(struct ag_error **err, const char *fmt, ...)
{
	if (!err || !*err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *prefix = ag_xvasprintf(fmt, ap);
	va_end(ap);
	char *joined = ag_xasprintf("%s: %s", prefix, (*err)->msg);
	free(prefix);
	free((*err)->msg);
	(*err)->msg = joined;
	return -1;
}

void ag_error_free(struct ag_error *e)
{
	if (!e)
		return;
	free(e->msg);
	free(e->file);
	free(e->key);
	free(e);
}

void ag_error_freep(struct ag_error **e)
{
	ag_error_free(*e);
	*e = NULL;
}

char *ag_error_format(const struct ag_error *e)
{
	if (!e)
		return ag_xstrdup("unknown error");
	char *loc;
	if (e->file && e->line)
		loc = ag_xasprintf("config '%s' line %u column %u: ", e->file, e->line, e->column);
	else if (e->file)
		loc = ag_xasprintf("config '%s': ", e->file);
	else
		loc = ag_xstrdup("");
	char *out = ag_xasprintf("%s%s%s%s [%s]", loc, e->key ? e->key : "", e->key ? ": " : "",
				 e->msg, e->reason);
	free(loc);
	return out;
}

const char *ag_code_name(enum ag_code code)
{
	switch (code) {
	case AG_OK:
		return "ok";
	case AG_E_USAGE:
		return "usage";
	case AG_E_CONFIG:
		return "config";
	case AG_E_UNVERIFIED:
		return "unverified";
	case AG_E_DOCKER:
		return "docker";
	case AG_E_LIMIT:
		return "limit";
	case AG_E_UNSAFE_PATH:
		return "unsafe_path";
	case AG_E_IO:
		return "io";
	case AG_E_CLEANUP:
		return "cleanup";
	case AG_E_INTERNAL:
		return "internal";
	default:
		return "unknown";
	}
}
