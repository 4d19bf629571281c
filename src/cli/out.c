#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/base/termsafe.h"
#include "lib/workspace/patch.h"

#include <errno.h>
#include <limits.h>

void ag_cli_put_sanitized(FILE *f, const char *s)
{
	ag_termsafe_fput(f, s);
}

void ag_cli_put_human(FILE *f, const char *s)
{
	char *t = ag_termsafe(s);
	for (char *p = t; *p; p++)
		if (*p == '`')
			*p = '\'';
	fputs(t, f);
	free(t);
}

void ag_cli_print_error(const struct ag_error *e)
{
	ag_cli_json_error(ag_cli_json_kind(e), e ? e->reason : NULL, e ? e->msg : NULL, e);
	char *s = ag_error_format(e);
	fputs("agentguard: error: ", stderr);
	ag_cli_put_sanitized(stderr, s);
	fputc('\n', stderr);
	free(s);
	if (e)
		ag_cli_next_step(stderr, e->reason, e->key, NULL, NULL);
}

/* The image `agentguard init` writes as a placeholder (never a real registry). */
static bool placeholder_image(const char *image)
{
	return image && strncmp(image, "registry.example.invalid/", 25) == 0;
}

static const char *next_step(const char *reason, const char *key, const char *image,
			     const char *socket, char *buf, size_t n)
{
	if (strcmp(reason, "config.cross.uid_mismatch") == 0 ||
	    strcmp(reason, "config.cross.gid_mismatch") == 0 ||
	    (strcmp(reason, "config.range") == 0 && key &&
	     (strcmp(key, "contained_execution.required_uid") == 0 ||
	      strcmp(key, "contained_execution.required_gid") == 0)))
		return geteuid() == 0 || strcmp(reason, "config.range") == 0
			   ? "run agentguard as an unprivileged user in the docker group, not "
			     "as root, with that user's ids (id -u, id -g) as required_uid and "
			     "required_gid: the agent's container never runs as root"
			   : "set contained_execution.required_uid and required_gid to your "
			     "own ids (id -u, id -g): the workspace is bind-mounted with them";
	if (strcmp(reason, "docker.engine.unavailable") == 0 ||
	    strcmp(reason, "docker.socket.missing") == 0) {
		const char *sock = socket ? socket : "/var/run/docker.sock";
		if (access(sock, F_OK) == 0 && access(sock, R_OK | W_OK) < 0 && errno == EACCES) {
			snprintf(buf, n,
				 "this user may not use the Docker socket %s (its permissions "
				 "allow only root and the docker group): add the user to the "
				 "docker group (sudo usermod -aG docker $USER, then log in again)",
				 sock);
			return buf;
		}
		return "start the Docker daemon (or name its socket with --docker-socket PATH)";
	}
	if (strcmp(reason, "preflight.image.missing") == 0) {
		if (placeholder_image(image))
			return "the config still names the starter's placeholder image: put your "
			       "agent's image, pinned by digest, in sandbox.image (agentguard "
			       "init --image REF --force pins a local image's digest)";
		if (image) {
			snprintf(buf, n,
				 "the image is not present locally (AgentGuard never pulls): "
				 "docker pull %s",
				 image);
			return buf;
		}
		return "the image is not present locally (AgentGuard never pulls): docker pull it";
	}
	if (strcmp(reason, "images.image.no_digest") == 0)
		return "push the image to a registry (a local one will do: docker tag IMAGE "
		       "127.0.0.1:5000/NAME:TAG, docker push 127.0.0.1:5000/NAME:TAG) and give "
		       "that reference; the push records the digest (README.md, Getting a digest)";
	if (strcmp(reason, "images.image.absent") == 0)
		return "build or pull the image first (docker images lists what is local)";
	if (strncmp(reason, "cleanup.", 8) == 0)
		return "run agentguard cleanup to remove what the run left behind";
	return NULL;
}

void ag_cli_next_step(FILE *f, const char *reason, const char *key, const char *image,
		      const char *socket)
{
	char buf[AG_CLI_NEXT_STEP_MAX];
	const char *s = reason ? next_step(reason, key, image, socket, buf, sizeof(buf)) : NULL;
	if (!s)
		return;
	fputs("agentguard: next step: ", f);
	ag_cli_put_sanitized(f, s);
	fputc('\n', f);
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

char *ag_cli_self_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return NULL;
	buf[n] = '\0';
	return ag_xstrdup(buf);
}

/* NAME beside the running agentguard binary (a heap path), or NULL. */
static char *beside_self(const char *name)
{
	_cleanup_free_ char *self = ag_cli_self_path();
	char *slash = self ? strrchr(self, '/') : NULL;
	if (!slash)
		return NULL;
	*slash = '\0';
	return ag_xasprintf("%s/%s", self, name);
}

char *ag_cli_probe_path(void)
{
	return beside_self("agentguard-probe");
}

char *ag_cli_init_path(void)
{
	return beside_self("agentguard-init");
}

void ag_cli_patch_missing(FILE *f, const char *status, const char *reason)
{
	if (!status || strcmp(status, "omitted") != 0)
		return; /* no change, or none recorded: nothing a person misses */
	fputs("The agent's changes: no patch, ", f);
	ag_cli_put_sanitized(f, ag_patch_why_missing(status, reason));
	if (reason) {
		fputs(" [", f);
		ag_cli_put_sanitized(f, reason);
		fputc(']', f);
	}
	fputc('\n', f);
}
