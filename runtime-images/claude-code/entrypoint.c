/*
 * agentguard-claude-entrypoint: the Claude Code agent image's entrypoint,
 * and `claude` on its PATH (a link), so `contained-run ... -- claude -p ...`
 * works exactly as typed.
 *
 * Runs the pinned Claude Code binary (the native linux-x64 executable of
 * @anthropic-ai/claude-code-linux-x64 2.1.332) non-interactively:
 *  - a leading "claude" argument is dropped, so `IMAGE claude -p ...` and
 *    `IMAGE -p ...` mean the same;
 *  - only print mode (`-p` / `--print`), `--version`/`-v` and
 *    `--help`/`-h` are accepted, given before any subcommand could be;
 *    anything else (the interactive TUI, which has no terminal under
 *    AgentGuard, `update`, `mcp`, `install`, ...) exits 64 without
 *    starting claude;
 *  - claude gets a fresh environment: fixed PATH, LANG, LC_ALL, SHELL
 *    (/bin/bash, which its Bash tool runs commands with), HOME (the caller's
 *    when absolute, else /tmp/agentguard-home), the proxy variables a study
 *    run sets (so its requests go through the gateway) and the credential
 *    from ANTHROPIC_API_KEY only. Nothing else passes (another endpoint is
 *    chosen in the argv, `--settings '{"env":{"ANTHROPIC_BASE_URL":...}}'`:
 *    AgentGuard withholds every environment value from its evidence, and a
 *    study's egress record must show the URL it checked):
 *    no ANTHROPIC_AUTH_TOKEN, no CLAUDE_CODE_OAUTH_TOKEN, no other
 *    credential variable;
 *  - SSL_CERT_FILE is the image's CA bundle, except when the caller sets
 *    exactly /agentguard-trial-ca.pem (a study run with credential
 *    injection binds the trial CA there, docs/study-egress.md): then that
 *    file, and NODE_EXTRA_CA_CERTS too when the caller sets it to it. No
 *    other value of either passes;
 *  - every request Claude Code would make besides the model API (update
 *    checks, telemetry, error reports, feedback) is turned off
 *    (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC and the single switches), so
 *    a study's egress holds the provider only;
 *  - print mode runs with `--permission-mode bypassPermissions` inserted
 *    first (the caller's own later option wins): AgentGuard's container is
 *    the sandbox, and there is nobody to answer a permission prompt.
 *
 * Built static with musl (no libc needed by the entrypoint itself). The
 * value of ANTHROPIC_API_KEY is never printed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* AgentGuard's trial CA (credential injection) */
#define TRIAL_CA "/agentguard-trial-ca.pem"

#define CLAUDE_BIN "/usr/local/lib/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
#define DEFAULT_HOME "/tmp/agentguard-home"
#define ENV_MAX_VALUE 4096

static int usage(void)
{
	static const char msg[] =
	    "agentguard-claude-entrypoint: only non-interactive use is supported:\n"
	    "  claude -p [OPTIONS] PROMPT | claude --version | claude --help\n"
	    "The credential is read from ANTHROPIC_API_KEY only.\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		return 64;
	return 64;
}

static char *pair(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s = malloc(n);
	if (!s)
		_exit(71);
	snprintf(s, n, "%s=%s", name, value);
	return s;
}

static int is(const char *a, const char *x, const char *y)
{
	return strcmp(a, x) == 0 || (y && strcmp(a, y) == 0);
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > first && strcmp(argv[first], "claude") == 0)
		first++;
	/* Print mode, --version or --help, given before any word that could be
	 * a subcommand: a word before it must be the value of a long option
	 * (`--settings JSON -p ...`) and no subcommand's name (claude 2.1.332's
	 * list), so `claude update -p` or `claude --verbose mcp -p` never start
	 * claude. */
	static const char *const subcommands[] = {
	    "agents",	   "attach",  "auth",	 "auto-mode",	"doctor", "gateway",
	    "import",	   "install", "logs",	 "mcp",		"plugin", "plugins",
	    "purge",	   "respawn", "rm",	 "setup-token", "stop",	  "kill",
	    "ultrareview", "update",  "upgrade", NULL};
	int print = 0, info = 0;
	for (int i = first; i < argc && !print && !info; i++) {
		const char *a = argv[i];
		if (is(a, "-p", "--print"))
			print = 1;
		else if (is(a, "--version", "-v") || is(a, "--help", "-h"))
			info = 1;
		else if (a[0] != '-') {
			const char *prev = i > first ? argv[i - 1] : "";
			if (strncmp(prev, "--", 2) != 0 || strchr(prev, '=') || !prev[2])
				return usage();
			for (int k = 0; subcommands[k]; k++)
				if (strcmp(a, subcommands[k]) == 0)
					return usage();
		}
	}
	if (!print && !info)
		return usage();
	const char *home = getenv("HOME");
	if (!home || home[0] != '/' || strlen(home) > ENV_MAX_VALUE)
		home = DEFAULT_HOME;
	static const char *const passed[] = {"ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
					     "ANTHROPIC_API_KEY"};
	char *envp[24];
	int e = 0;
	envp[e++] = pair("PATH", "/usr/local/bin:/usr/bin:/bin");
	envp[e++] = pair("HOME", home);
	envp[e++] = pair("LANG", "C.UTF-8");
	envp[e++] = pair("LC_ALL", "C.UTF-8");
	envp[e++] = pair("SHELL", "/bin/bash");
	const char *ca = getenv("SSL_CERT_FILE");
	bool trial = ca && strcmp(ca, TRIAL_CA) == 0;
	envp[e++] = pair("SSL_CERT_FILE", trial ? TRIAL_CA : "/etc/ssl/certs/ca-certificates.crt");
	ca = getenv("NODE_EXTRA_CA_CERTS");
	if (ca && strcmp(ca, TRIAL_CA) == 0)
		envp[e++] = pair("NODE_EXTRA_CA_CERTS", TRIAL_CA);
	envp[e++] = pair("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
	envp[e++] = pair("DISABLE_AUTOUPDATER", "1");
	envp[e++] = pair("DISABLE_TELEMETRY", "1");
	envp[e++] = pair("DISABLE_ERROR_REPORTING", "1");
	envp[e++] = pair("DISABLE_BUG_COMMAND", "1");
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
		const char *v = getenv(passed[i]);
		if (v && *v && strlen(v) <= ENV_MAX_VALUE)
			envp[e++] = pair(passed[i], v);
	}
	envp[e] = NULL;
	char **nargv = calloc((size_t)(argc - first) + 4, sizeof(char *));
	if (!nargv)
		return 71;
	size_t k = 0;
	nargv[k++] = (char *)"claude";
	if (print) {
		nargv[k++] = (char *)"--permission-mode";
		nargv[k++] = (char *)"bypassPermissions";
	}
	for (int i = first; i < argc; i++)
		nargv[k++] = argv[i];
	nargv[k] = NULL;
	execve(CLAUDE_BIN, nargv, envp);
	static const char fail[] = "agentguard-claude-entrypoint: cannot start claude\n";
	if (write(2, fail, sizeof(fail) - 1) < 0)
		return 127;
	return 127;
}
