#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/base/termsafe.h"

#include <limits.h>

void ag_cli_put_sanitized(FILE *f, const char *s)
{
	ag_termsafe_fput(f, s);
}

void ag_cli_print_error(const struct ag_error *e)
{
	ag_cli_json_error(ag_cli_json_kind(e), e ? e->reason : NULL, e ? e->msg : NULL, e);
	char *s = ag_error_format(e);
	fputs("agentguard: error: ", stderr);
	ag_cli_put_sanitized(stderr, s);
	fputc('\n', stderr);
	free(s);
}

int ag_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = ag_xvasprintf(fmt, ap);
	va_end(ap);
	ag_cli_json_error("usage", "usage", msg, NULL);
	fputs("agentguard: usage error: ", stderr);
	ag_cli_put_sanitized(stderr, msg);
	fprintf(stderr, " [usage]\nTry 'agentguard %s --help'.\n", cmd);
	free(msg);
	return AG_EXIT_CONFIG;
}

/* NAME beside the running agentguard binary (a heap path), or NULL. */
static char *beside_self(const char *name)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return NULL;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return ag_xasprintf("%s/%s", buf, name);
}

char *ag_cli_probe_path(void)
{
	return beside_self("agentguard-probe");
}

char *ag_cli_init_path(void)
{
	return beside_self("agentguard-init");
}
