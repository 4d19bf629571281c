#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"

#include <limits.h>

void ag_cli_put_sanitized(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

void ag_cli_print_error(const struct ag_error *e)
{
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
	fputs("agentguard: usage error: ", stderr);
	ag_cli_put_sanitized(stderr, msg);
	fprintf(stderr, " [usage]\nTry 'agentguard %s --help'.\n", cmd);
	free(msg);
	return AG_EXIT_CONFIG;
}

char *ag_cli_probe_path(void)
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
	return ag_xasprintf("%s/agentguard-probe", buf);
}
