/*
 * agentguard-codex-entrypoint: the agent image's only entrypoint.
 *
 * Runs the pinned Codex CLI (the static musl binary of
 * @openai/codex-linux-x64 0.159.2) non-interactively:
 *  - only `exec ...` (the non-interactive mode), `--version`/`-V` and
 *    `--help`/`-h` are accepted; anything else (the interactive TUI, login,
 *    update, ...) exits 64 without starting codex;
 *  - a leading "codex" argument is dropped, so `IMAGE codex exec ...` and
 *    `IMAGE exec ...` mean the same;
 *  - codex gets a fresh environment: fixed PATH, LANG, LC_ALL, SHELL
 *    (/bin/bash, which its exec_command runs commands with), HOME (the
 *    caller's HOME when it is an absolute path, else /tmp/agentguard-home),
 *    the proxy variables a study run sets (ALL_PROXY, HTTPS_PROXY,
 *    HTTP_PROXY, NO_PROXY: the gateway's address, so Codex's requests go
 *    through it) and the credential from CODEX_API_KEY only. Nothing else
 *    passes, in particular no OPENAI_API_KEY or other credential variable;
 *  - SSL_CERT_FILE is the image's CA bundle, except when the caller sets
 *    exactly /agentguard-trial-ca.pem (a study run with credential
 *    injection binds the trial CA there, docs/study-egress.md): then that
 *    file, and CODEX_CA_CERTIFICATE too when the caller sets it to it.
 *    No other value of either passes;
 *  - `exec` runs with Codex's own sandbox off and no approval prompts
 *    (the first options of FAIL_FAST below): AgentGuard's container is the sandbox, and Codex's
 *    bubblewrap cannot start inside it (no user namespaces, no mounts);
 *  - `exec` fails promptly, with codex's own error and exit status, when
 *    the model API cannot be reached (FAIL_FAST below), instead of
 *    waiting for the network until AgentGuard's timeout ends the run.
 *
 * Built static with musl (no libc needed in the image, no shell). The
 * value of CODEX_API_KEY is never printed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODEX_BIN                                                                                  \
	"/usr/local/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/"    \
	"bin/codex"
#define CODEX_PATH_DIR                                                                             \
	"/usr/local/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/"    \
	"codex-path"
#define DEFAULT_HOME "/tmp/agentguard-home"
#define ENV_MAX_VALUE 4096
#define TRIAL_CA "/agentguard-trial-ca.pem"

/*
 * Inserted right after `exec` (the caller's own -c options come later and
 * win). First the sandbox and approvals of a contained run (above). Then
 * the requests Codex 0.159.2 makes besides the model API, measured through
 * a study's gateway: analytics (ab.chatgpt.com) and the plugin catalogue
 * (chatgpt.com, github.com, api.github.com) are turned off, so a study's
 * egress holds the provider only. Then: Codex 0.159.2 waits for the network without end when a
 * connection fails (feature unbounded_connection_retries, on by default) and retries each request
 * (request_max_retries, stream_max_retries, WebSockets then HTTPS) before that. The built-in
 * "openai" provider cannot be amended, so the same endpoint is declared as provider
 * "agentguard-openai" with no retries, HTTPS only, and its key read from CODEX_API_KEY.
 */
static const char *const FAIL_FAST[] = {
    "-c",
    "sandbox_mode=\"danger-full-access\"",
    "-c",
    "approval_policy=\"never\"",
    "-c",
    "analytics.enabled=false",
    "-c",
    "features.plugins=false",
    "-c",
    "features.unbounded_connection_retries=false",
    "-c",
    "model_providers.agentguard-openai={name=\"OpenAI\", "
    "base_url=\"https://api.openai.com/v1\", env_key=\"CODEX_API_KEY\", "
    "wire_api=\"responses\", request_max_retries=0, stream_max_retries=0, "
    "supports_websockets=false}",
    "-c",
    "model_provider=\"agentguard-openai\"",
};
#define N_FAIL_FAST (sizeof(FAIL_FAST) / sizeof(FAIL_FAST[0]))

static int usage(void)
{
	static const char msg[] =
	    "agentguard-codex-entrypoint: only non-interactive use is supported:\n"
	    "  codex exec [OPTIONS] PROMPT | codex --version | codex --help\n"
	    "The credential is read from CODEX_API_KEY only.\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		return 64;
	return 64;
}

static int allowed(const char *a)
{
	static const char *const ok[] = {"exec", "e", "--version", "-V", "--help", "-h", NULL};
	for (int i = 0; ok[i]; i++)
		if (strcmp(a, ok[i]) == 0)
			return 1;
	return 0;
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

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > first && strcmp(argv[first], "codex") == 0)
		first++;
	if (argc <= first || !allowed(argv[first]))
		return usage();

	const char *home = getenv("HOME");
	if (!home || home[0] != '/' || strlen(home) > ENV_MAX_VALUE)
		home = DEFAULT_HOME;
	const char *key = getenv("CODEX_API_KEY");
	if (key && strlen(key) > ENV_MAX_VALUE)
		key = NULL;

	static const char *const proxies[] = {"ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"};
	char *envp[16];
	int e = 0;
	envp[e++] = pair("PATH", CODEX_PATH_DIR ":/usr/local/bin:/usr/bin:/bin");
	envp[e++] = pair("HOME", home);
	envp[e++] = pair("LANG", "C.UTF-8");
	envp[e++] = pair("LC_ALL", "C.UTF-8");
	envp[e++] = pair("SHELL", "/bin/bash");
	const char *ca = getenv("SSL_CERT_FILE");
	bool trial = ca && strcmp(ca, TRIAL_CA) == 0;
	envp[e++] = pair("SSL_CERT_FILE", trial ? TRIAL_CA : "/etc/ssl/certs/ca-certificates.crt");
	ca = getenv("CODEX_CA_CERTIFICATE");
	if (ca && strcmp(ca, TRIAL_CA) == 0)
		envp[e++] = pair("CODEX_CA_CERTIFICATE", TRIAL_CA);
	for (size_t i = 0; i < sizeof(proxies) / sizeof(proxies[0]); i++) {
		const char *v = getenv(proxies[i]);
		if (v && strlen(v) <= ENV_MAX_VALUE)
			envp[e++] = pair(proxies[i], v);
	}
	if (key && *key)
		envp[e++] = pair("CODEX_API_KEY", key);
	envp[e] = NULL;

	/* argv for codex: "codex", the caller's subcommand, for exec the
	 * fail-fast options, then the rest of the caller's arguments. */
	int is_exec = strcmp(argv[first], "exec") == 0 || strcmp(argv[first], "e") == 0;
	size_t extra = is_exec ? N_FAIL_FAST : 0;
	char **nargv = calloc((size_t)(argc - first) + extra + 2, sizeof(char *));
	if (!nargv)
		return 71;
	size_t k = 0;
	nargv[k++] = (char *)"codex";
	nargv[k++] = argv[first];
	for (size_t i = 0; i < extra; i++)
		nargv[k++] = (char *)FAIL_FAST[i];
	for (int i = first + 1; i < argc; i++)
		nargv[k++] = argv[i];
	nargv[k] = NULL;
	execve(CODEX_BIN, nargv, envp);
	static const char fail[] = "agentguard-codex-entrypoint: cannot start codex\n";
	if (write(2, fail, sizeof(fail) - 1) < 0)
		return 127;
	return 127;
}
