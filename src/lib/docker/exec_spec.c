/*
 * exec_spec.c: typed Docker execution spec -> validated, deterministic argv
 * (exec_spec.h, docs/docker-argv.md).
 */
#include "lib/base/ag.h"
#include "lib/docker/exec_spec.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/size.h"
#include "lib/config/env_allowlist.h"
#include "lib/config/imageref.h"
#include "lib/docker/inspect.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h> /* isfinite only: no libm */

#define FAIL(reason, ...) ag_err(err, AG_E_CONFIG, 0, reason, __VA_ARGS__)

/* ^[1-9][0-9]*[kKmMgG]?$ within [min, max] bytes (k = 1024). */
static bool size_ok(const char *s, int64_t min, int64_t max)
{
	int64_t v;
	return ag_size_parse(s, AG_SIZE_CONFIG, &v) == 0 && v >= min && v <= max;
}

static bool has_control(const char *s)
{
	return ag_env_value_has_control(s, strlen(s));
}

/* No "." or ".." segment, no empty segment ("//"), no trailing "/". */
static bool normalized_abs(const char *p)
{
	if (p[0] != '/')
		return false;
	const char *seg = p + 1;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		if (n == 0)
			return false; /* "//", trailing "/", or "/" itself */
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
		if (!end)
			return true;
		seg = end + 1;
	}
}

/* a == b, or a is inside b. */
static bool path_within(const char *a, const char *b)
{
	size_t n = strlen(b);
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

static int check_container_path(const char *p, const char *what, struct ag_error **err)
{
	static const char *const forbidden[] = {"/proc", "/sys", "/dev", "/var/run", "/run", NULL};
	if (!p || !p[0])
		return FAIL("render.path.invalid", "%s: a container path is required", what);
	size_t n = strlen(p);
	if (n > AG_CONTAINER_PATH_MAX)
		return FAIL("render.path.invalid", "%s: longer than %d bytes", what,
			    AG_CONTAINER_PATH_MAX);
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '/' || c == '-'))
			return FAIL("render.path.invalid", "%s: must match ^/[A-Za-z0-9._/-]+$",
				    what);
	}
	if (!normalized_abs(p))
		return FAIL("render.path.invalid",
			    "%s: must be absolute and normalized (not '/', no '//', '.', '..' "
			    "or trailing '/')",
			    what);
	for (size_t i = 0; forbidden[i]; i++)
		if (path_within(p, forbidden[i]))
			return FAIL("render.path.forbidden", "%s: must not be under %s", what,
				    forbidden[i]);
	return 0;
}

static int check_host_path(const char *p, struct ag_error **err)
{
	if (p[0] != '/')
		return FAIL("render.host_path.not_absolute",
			    "workspace host path must be absolute");
	if (strlen(p) > AG_HOST_PATH_MAX)
		return FAIL("render.host_path.invalid_char",
			    "workspace host path is longer than %d bytes", AG_HOST_PATH_MAX);
	/* ',' '=' and '"' are --mount field syntax (CSV); controls never belong. */
	for (const char *c = p; *c; c++)
		if (*c == ',' || *c == '=' || *c == '"' || (unsigned char)*c < 0x20 ||
		    (unsigned char)*c == 0x7f)
			return FAIL("render.host_path.invalid_char",
				    "workspace host path must not contain ',', '=', '\"' or "
				    "control characters");
	if (strcmp(p, "/") == 0)
		return FAIL("render.host_path.root", "the host root cannot be the workspace");
	if (!normalized_abs(p))
		return FAIL("render.host_path.not_normalized",
			    "workspace host path must be normalized (no '//', '.', '..' or "
			    "trailing '/')");
	return 0;
}

/* The single-file binds and the file size limit (exec_spec.h). */
static int check_file_binds(const struct ag_exec_spec *s, struct ag_error **err)
{
	if (s->file_size_max &&
	    (s->file_size_max < AG_EXEC_FSIZE_MIN || s->file_size_max > AG_EXEC_FSIZE_MAX))
		return FAIL("render.fsize.invalid", "the file size limit must be %d..%lld bytes",
			    AG_EXEC_FSIZE_MIN, (long long)AG_EXEC_FSIZE_MAX);
	if (!s->n_file_binds)
		return 0;
	if (s->n_file_binds > AG_EXEC_FILE_BINDS_MAX || !s->file_binds)
		return FAIL("render.file_bind.invalid", "at most %d file binds",
			    AG_EXEC_FILE_BINDS_MAX);
	if (s->workspace_host_path || s->probe_host_path || s->init_host_path)
		return FAIL("render.file_bind.invalid",
			    "file binds go only inside a tmpfs workspace, alone");
	for (size_t i = 0; i < s->n_file_binds; i++) {
		const struct ag_exec_file_bind *b = &s->file_binds[i];
		if (!b->host_path || check_host_path(b->host_path, err) < 0 ||
		    check_container_path(b->container_path, "file bind", err) < 0)
			return *err ? -1
				    : FAIL("render.file_bind.invalid",
					   "a file bind needs a host path");
		if (!path_within(b->container_path, s->workspace_container_path) ||
		    strcmp(b->container_path, s->workspace_container_path) == 0)
			return FAIL("render.file_bind.invalid",
				    "a file bind must lie inside the workspace path");
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->file_binds[j].container_path, b->container_path) == 0)
				return FAIL("render.file_bind.invalid", "two file binds at %s",
					    b->container_path);
	}
	return 0;
}

/* ^agentguard-[a-z0-9][a-z0-9_.-]{0,62}$ */
static bool name_ok(const char *s)
{
	static const char prefix[] = "agentguard-";
	if (strncmp(s, prefix, sizeof(prefix) - 1) != 0)
		return false;
	const char *r = s + sizeof(prefix) - 1;
	size_t n = strlen(r);
	if (n < 1 || n > 63)
		return false;
	if (!((r[0] >= 'a' && r[0] <= 'z') || (r[0] >= '0' && r[0] <= '9')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9') || r[i] == '_' ||
		      r[i] == '.' || r[i] == '-'))
			return false;
	return true;
}

/* ^agentguard\.[a-z0-9.-]+$ */
static bool label_key_ok(const char *s)
{
	static const char prefix[] = "agentguard.";
	size_t n = strlen(s);
	if (n > AG_LABEL_KEY_MAX || strncmp(s, prefix, sizeof(prefix) - 1) != 0 ||
	    n == sizeof(prefix) - 1)
		return false;
	for (const char *c = s + sizeof(prefix) - 1; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '-'))
			return false;
	return true;
}

/* ^[A-Za-z0-9._:-]{1,128}$ */
static bool label_value_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > AG_LABEL_VALUE_MAX)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == ':' || *c == '-'))
			return false;
	return true;
}

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Orders "NAME=VALUE" entries by NAME (not by the whole string: "A1=" < "A="
 * bytewise, but the name "A" sorts before "A1"). */
static int env_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = name_len(x), ny = name_len(y);
	int c = memcmp(x, y, nx < ny ? nx : ny);
	if (c)
		return c;
	return nx < ny ? -1 : nx > ny;
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ag_label *)a)->key, ((const struct ag_label *)b)->key);
}

/* ^[a-z0-9][a-z0-9-]{0,62}$ */
static bool alias_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 63 || s[0] == '-')
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return false;
	return true;
}

static bool ip_ok(const char *s, bool v6_too)
{
	unsigned char b[16];
	return s && strlen(s) < 64 &&
	       (inet_pton(AF_INET, s, b) == 1 || (v6_too && inet_pton(AF_INET6, s, b) == 1));
}

/* The live-study network fields (exec_spec.h): all or nothing. */
static int check_study_network(const struct ag_exec_spec *s, struct ag_error **err)
{
	if (!s->network_name) {
		if (s->network_alias || s->ipv4_address || s->n_dns || s->ip_forward_off ||
		    s->group_add)
			return FAIL("render.network.study_only",
				    "alias, fixed address, DNS, sysctl and group need a study "
				    "network");
		return 0;
	}
	if (!name_ok(s->network_name))
		return FAIL("render.network.name_invalid",
			    "network name must match ^agentguard-[a-z0-9][a-z0-9_.-]{0,62}$");
	if (s->network_alias && !alias_ok(s->network_alias))
		return FAIL("render.network.alias_invalid",
			    "network alias must match ^[a-z0-9][a-z0-9-]{0,62}$");
	if (s->ipv4_address && !ip_ok(s->ipv4_address, false))
		return FAIL("render.network.ip_invalid", "the fixed address must be IPv4");
	/* CONTRACT: egress.dns_controlled (never the engine's forwarding default) */
	if (s->n_dns == 0 || s->n_dns > AG_RENDER_DNS_MAX)
		return FAIL("render.network.dns_invalid",
			    "a study container needs 1..%d DNS servers", AG_RENDER_DNS_MAX);
	for (size_t i = 0; i < s->n_dns; i++)
		if (!ip_ok(s->dns[i], true))
			return FAIL("render.network.dns_invalid",
				    "DNS server %zu is not an IP address", i + 1);
	if (s->group_add < 0 || s->group_add > AG_CE_UID_MAX)
		return FAIL("render.network.study_only", "supplementary group must be 1..%d",
			    AG_CE_UID_MAX);
	return 0;
}

/* NAME=VALUE is one of the trial CA's variables, as a spec with
 * ca_host_path sets them (and only such a spec). */
static bool ca_var(const struct ag_exec_spec *s, const char *name, const char *value)
{
	static const char *const vars[] = {AG_EXEC_CA_VARS};
	if (!s->ca_host_path || strcmp(value, AG_EXEC_CA_PATH) != 0)
		return false;
	for (size_t i = 0; i < AG_ARRAY_SIZE(vars); i++)
		if (strcmp(name, vars[i]) == 0)
			return true;
	return false;
}

/* CONTRACT: env.allowlist (renderer re-validation: 36 entries, names,
 * unique, values <= 4096 without controls, 16384 bytes). */
static int check_env(const struct ag_exec_spec *s, struct ag_error **err)
{
	if (s->n_env > AG_ENV_RENDER_MAX_ENTRIES - AG_ARRAY_SIZE(ag_env_defaults))
		return FAIL("render.env.too_many", "more than %d environment entries",
			    AG_ENV_MAX_ENTRIES);
	size_t total = 0;
	for (size_t i = 0; i < s->n_env; i++) {
		const char *e = s->env[i];
		if (!e || !strchr(e, '='))
			return FAIL("render.env.malformed",
				    "environment entry %zu is not NAME=VALUE", i + 1);
		size_t nl = name_len(e);
		_cleanup_free_ char *name = ag_xstrndup(e, nl);
		if (nl == 0 || nl > AG_ENV_NAME_MAX || !ag_env_name_valid(name))
			return FAIL("render.env.name_invalid",
				    "environment entry %zu: name must match ^[A-Z_][A-Z0-9_]*$ "
				    "(at most %d characters)",
				    i + 1, AG_ENV_NAME_MAX);
		if (ag_env_name_reserved(name) && !ca_var(s, name, e + nl + 1))
			return FAIL("render.env.reserved",
				    "environment name '%s' is reserved (fixed defaults and host "
				    "control names cannot be set)",
				    name);
		for (size_t j = 0; j < i; j++)
			if (name_len(s->env[j]) == nl && strncasecmp(s->env[j], e, nl) == 0)
				return FAIL("render.env.duplicate",
					    "environment name '%s' appears twice", name);
		const char *v = e + nl + 1;
		size_t vl = strlen(v);
		if (vl > AG_ENV_VALUE_MAX || has_control(v))
			return FAIL("render.env.value_invalid",
				    "environment value of '%s' is longer than %d bytes or has "
				    "control characters",
				    name, AG_ENV_VALUE_MAX);
		total += nl + 1 + vl;
		if (total > AG_ENV_TOTAL_BYTES)
			return FAIL("render.env.total", "configured environment exceeds %d bytes",
				    AG_ENV_TOTAL_BYTES);
	}
	return 0;
}

int ag_exec_spec_validate(const struct ag_exec_spec *s, struct ag_error **err)
{
	if (s->runtime && !ag_runtime_name_valid(s->runtime))
		return FAIL("render.runtime.invalid",
			    "the runtime must be an engine runtime name (a-z 0-9 . _ -)");
	/* image */
	if (!s->image || !s->image[0])
		return FAIL("render.image.invalid", "an image reference is required");
	if (s->image[0] == '-')
		return FAIL("render.image.option_like", "image reference must not start with '-'");
	struct ag_image_ref ref = {0};
	struct ag_error *e = NULL;
	if (ag_image_ref_parse(s->image, &ref, &e) < 0) {
		ag_error_free(e);
		return FAIL("render.image.invalid", "image reference is not valid");
	}
	bool pinned = ag_image_ref_pinned(&ref);
	ag_image_ref_release(&ref);
	if (!pinned)
		return FAIL("render.image.not_pinned",
			    "image reference must be pinned by digest (@sha256:...)");

	/* identity and limits (CONTRACT: container.nonroot, container.limits) */
	if (s->network != AG_NET_NONE && s->network != AG_NET_BRIDGE)
		return FAIL("render.network.invalid", "network must be none or bridge");
	if (s->uid < AG_CE_UID_MIN || s->uid > AG_CE_UID_MAX)
		return FAIL("render.uid.invalid", "uid must be 1..%d", AG_CE_UID_MAX);
	if (s->gid < AG_CE_UID_MIN || s->gid > AG_CE_UID_MAX)
		return FAIL("render.gid.invalid", "gid must be 1..%d", AG_CE_UID_MAX);
	if (!isfinite(s->cpu_limit) || s->cpu_limit < AG_CE_CPU_MIN || s->cpu_limit > AG_CE_CPU_MAX)
		return FAIL("render.cpu.invalid", "cpu limit must be a number in 0.1..8");
	if (!size_ok(s->memory_limit, AG_CE_MEMORY_MIN, AG_CE_MEMORY_MAX))
		return FAIL("render.memory.invalid",
			    "memory limit must be a size string ^[1-9][0-9]*[kKmMgG]?$ in "
			    "64m..16g");
	if (s->pids_limit < AG_CE_PIDS_MIN || s->pids_limit > AG_CE_PIDS_MAX)
		return FAIL("render.pids.invalid", "pids limit must be %d..%d", AG_CE_PIDS_MIN,
			    AG_CE_PIDS_MAX);
	if (!size_ok(s->tmpfs_size, AG_CE_TMPFS_MIN, AG_CE_TMPFS_MAX))
		return FAIL("render.tmpfs.size_invalid",
			    "tmpfs size must be a size string in 64k..4g");
	if (s->workspace_tmpfs_size &&
	    !size_ok(s->workspace_tmpfs_size, AG_CE_TMPFS_MIN, AG_CE_TMPFS_MAX))
		return FAIL("render.tmpfs.size_invalid",
			    "workspace tmpfs size must be a size string in 64k..4g");

	/* paths (CONTRACT: workspace.single_mount) */
	if (check_container_path(s->tmpfs_path, "tmpfs path", err) < 0 ||
	    check_container_path(s->workspace_container_path, "workspace path", err) < 0)
		return -1;
	if (path_within(s->tmpfs_path, s->workspace_container_path) ||
	    path_within(s->workspace_container_path, s->tmpfs_path))
		return FAIL("render.path.overlap",
			    "tmpfs path and workspace path must differ and not be nested");
	if (s->entrypoint && check_container_path(s->entrypoint, "entrypoint", err) < 0)
		return -1;
	if (s->workspace_host_path && check_host_path(s->workspace_host_path, err) < 0)
		return -1;
	if (s->probe_host_path && check_host_path(s->probe_host_path, err) < 0)
		return -1;
	if (s->ca_host_path && check_host_path(s->ca_host_path, err) < 0)
		return -1;
	if (s->init_host_path) {
		if (check_host_path(s->init_host_path, err) < 0)
			return -1;
		if (s->probe_host_path || s->entrypoint)
			return FAIL("render.init.invalid",
				    "the agent's init cannot be combined with the probe or another "
				    "entrypoint");
		if (s->init_deadline_seconds < 1 ||
		    s->init_deadline_seconds > AG_EXEC_INIT_DEADLINE_MAX)
			return FAIL("render.init.invalid",
				    "the init's deadline must be 1..%d seconds",
				    AG_EXEC_INIT_DEADLINE_MAX);
	} else if (s->init_deadline_seconds) {
		return FAIL("render.init.invalid", "a deadline needs the init");
	}
	if (check_file_binds(s, err) < 0)
		return -1;

	/* name and labels */
	if (s->container_name && !name_ok(s->container_name))
		return FAIL("render.name.invalid",
			    "container name must match ^agentguard-[a-z0-9][a-z0-9_.-]{0,62}$");
	if (s->n_labels > AG_RENDER_MAX_LABELS)
		return FAIL("render.label.too_many", "more than %d labels", AG_RENDER_MAX_LABELS);
	for (size_t i = 0; i < s->n_labels; i++) {
		const struct ag_label *l = &s->labels[i];
		if (!l->key || !label_key_ok(l->key))
			return FAIL("render.label.key_invalid",
				    "label key must match ^agentguard\\.[a-z0-9.-]+$ (at most %d "
				    "bytes)",
				    AG_LABEL_KEY_MAX);
		if (!l->value || !label_value_ok(l->value))
			return FAIL("render.label.value_invalid",
				    "label value must match ^[A-Za-z0-9._:-]{1,%d}$",
				    AG_LABEL_VALUE_MAX);
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->labels[j].key, l->key) == 0)
				return FAIL("render.label.duplicate", "label '%s' appears twice",
					    l->key);
	}

	if (check_env(s, err) < 0 || check_study_network(s, err) < 0)
		return -1;

	/* child argv: verbatim, bounded */
	if (!s->command || s->n_command == 0)
		return FAIL("render.argv.empty", "the contained command is empty");
	if (s->n_command > AG_CHILD_ARGV_MAX_ITEMS)
		return FAIL("render.argv.too_long", "the contained command has more than %d items",
			    AG_CHILD_ARGV_MAX_ITEMS);
	size_t total = 0;
	for (size_t i = 0; i < s->n_command; i++) {
		if (!s->command[i])
			return FAIL("render.argv.empty", "contained command item %zu is missing",
				    i + 1);
		size_t n = strlen(s->command[i]);
		if (n > AG_CHILD_ARG_MAX_BYTES)
			return FAIL("render.argv.too_long",
				    "contained command item %zu is longer than %d bytes", i + 1,
				    AG_CHILD_ARG_MAX_BYTES);
		total += n + 1;
		if (total > AG_CHILD_ARGV_MAX_BYTES)
			return FAIL("render.argv.too_long",
				    "contained command is longer than %d bytes",
				    AG_CHILD_ARGV_MAX_BYTES);
	}
	if (!s->command[0][0])
		return FAIL("render.argv.first_empty",
			    "the contained command's program must not be empty");
	return 0;
}

/* CONTRACT: env.defaults (fixed, first-class, sorted with the rest): the
 * container's whole environment, sorted by name (borrowed strings). */
static const char **full_env(const struct ag_exec_spec *s, size_t *n)
{
	*n = AG_ARRAY_SIZE(ag_env_defaults) + s->n_env;
	const char **env = ag_xcalloc(*n, sizeof(*env));
	for (size_t i = 0; i < AG_ARRAY_SIZE(ag_env_defaults); i++)
		env[i] = ag_env_defaults[i];
	for (size_t i = 0; i < s->n_env; i++)
		env[AG_ARRAY_SIZE(ag_env_defaults) + i] = s->env[i];
	qsort(env, *n, sizeof(*env), env_cmp);
	return env;
}

char *ag_render_cpus(double cpus)
{
	/* Called with validated limits (0.1..8), so the cast cannot overflow. */
	if (cpus > -1e15 && cpus < 1e15 && (double)(long long)cpus == cpus)
		return ag_xasprintf("%lld", (long long)cpus);
	char *s = ag_xasprintf("%.6f", cpus);
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '0')
		s[--n] = '\0';
	if (n > 0 && s[n - 1] == '.')
		s[--n] = '\0';
	return s;
}

int ag_render_argv(const struct ag_exec_spec *s, enum ag_render_mode mode, struct ag_strv *out,
		   struct ag_error **err)
{
	if (ag_exec_spec_validate(s, err) < 0)
		return -1;
	struct ag_strv a = AG_STRV_INIT;
	if (mode == AG_RENDER_CREATE) {
		ag_strv_push(&a, "create");
	} else {
		ag_strv_push(&a, "run");
		ag_strv_push(&a, "--rm");
	}
	if (s->container_name) {
		ag_strv_push(&a, "--name");
		ag_strv_push(&a, s->container_name);
	}
	ag_strv_push(&a, "--network");
	ag_strv_push(&a, s->network_name ? s->network_name : ag_network_name(s->network));
	if (s->network_alias) {
		ag_strv_push(&a, "--network-alias");
		ag_strv_push(&a, s->network_alias);
	}
	if (s->ipv4_address) {
		ag_strv_push(&a, "--ip");
		ag_strv_push(&a, s->ipv4_address);
	}
	for (size_t i = 0; i < s->n_dns; i++) {
		ag_strv_push(&a, "--dns");
		ag_strv_push(&a, s->dns[i]);
	}
	if (s->ip_forward_off) {
		ag_strv_push(&a, "--sysctl");
		ag_strv_push(&a, "net.ipv4.ip_forward=0");
	}
	if (s->runtime) {
		ag_strv_push(&a, "--runtime");
		ag_strv_push(&a, s->runtime);
	}
	ag_strv_push(&a, "--security-opt");
	ag_strv_push(&a, "no-new-privileges");
	ag_strv_push(&a, "--cap-drop");
	ag_strv_push(&a, "ALL");
	/* The daemon default is the host cgroup namespace on cgroup v1. */
	ag_strv_push(&a, "--cgroupns");
	ag_strv_push(&a, "private");
	ag_strv_push(&a, "--pids-limit");
	ag_strv_pushf(&a, "%" PRId64, s->pids_limit);
	ag_strv_push(&a, "--memory");
	ag_strv_push(&a, s->memory_limit);
	/* Equal to --memory: no swap beyond the memory limit. */
	ag_strv_push(&a, "--memory-swap");
	ag_strv_push(&a, s->memory_limit);
	ag_strv_push(&a, "--cpus");
	ag_strv_push_owned(&a, ag_render_cpus(s->cpu_limit));
	ag_strv_push(&a, "--read-only");
	/* The image's HEALTHCHECK never runs: nothing but the argv runs inside. */
	ag_strv_push(&a, "--no-healthcheck");
	/* Output only over the attach stream: the engine keeps no log on disk. */
	ag_strv_push(&a, "--log-driver");
	ag_strv_push(&a, "none");
	if (s->file_size_max) {
		ag_strv_push(&a, "--ulimit");
		ag_strv_pushf(&a, "fsize=%" PRId64, s->file_size_max);
	}
	ag_strv_push(&a, "--tmpfs");
	ag_strv_pushf(&a,
		      "%s:rw,noexec,nosuid,nodev,size=%s,uid=%" PRId64 ",gid=%" PRId64 ",mode=700",
		      s->tmpfs_path, s->tmpfs_size, s->uid, s->gid);
	if (s->workspace_host_path) {
		ag_strv_push(&a, "--mount");
		ag_strv_pushf(&a, "type=bind,source=%s,target=%s", s->workspace_host_path,
			      s->workspace_container_path);
	} else {
		ag_strv_push(&a, "--tmpfs");
		ag_strv_pushf(&a,
			      "%s:rw,noexec,nosuid,nodev,size=%s,uid=%" PRId64 ",gid=%" PRId64
			      ",mode=700",
			      s->workspace_container_path,
			      s->workspace_tmpfs_size ? s->workspace_tmpfs_size : s->tmpfs_size,
			      s->uid, s->gid);
	}
	if (s->probe_host_path) {
		ag_strv_push(&a, "--mount");
		ag_strv_pushf(&a, "type=bind,source=%s,target=%s,readonly", s->probe_host_path,
			      AG_EXEC_PROBE_PATH);
	}
	if (s->init_host_path) {
		ag_strv_push(&a, "--mount");
		ag_strv_pushf(&a, "type=bind,source=%s,target=%s,readonly", s->init_host_path,
			      AG_EXEC_INIT_PATH);
	}
	if (s->ca_host_path) {
		ag_strv_push(&a, "--mount");
		ag_strv_pushf(&a, "type=bind,source=%s,target=%s,readonly", s->ca_host_path,
			      AG_EXEC_CA_PATH);
	}
	for (size_t i = 0; i < s->n_file_binds; i++) {
		const struct ag_exec_file_bind *b = &s->file_binds[i];
		ag_strv_push(&a, "--mount");
		ag_strv_pushf(&a, "type=bind,source=%s,target=%s%s", b->host_path,
			      b->container_path, b->read_only ? ",readonly" : "");
	}
	ag_strv_push(&a, "--workdir");
	ag_strv_push(&a, s->workspace_container_path);
	ag_strv_push(&a, "--user");
	ag_strv_pushf(&a, "%" PRId64 ":%" PRId64, s->uid, s->gid);
	if (s->group_add) {
		ag_strv_push(&a, "--group-add");
		ag_strv_pushf(&a, "%" PRId64, s->group_add);
	}

	size_t n_env;
	_cleanup_free_ const char **env = full_env(s, &n_env);
	for (size_t i = 0; i < n_env; i++) {
		ag_strv_push(&a, "--env");
		ag_strv_push(&a, env[i]);
	}
	/*
	 * The argv runs exactly: argv[0] replaces the image's ENTRYPOINT (one
	 * token, so a leading '-' stays a value; never empty, which would
	 * mean "reset to the image's command"), and the rest replaces its
	 * CMD. Docker then ignores the image's CMD, and resolves a relative
	 * argv[0] through the container's PATH, as exec would.
	 */
	size_t first = 0;
	if (s->init_host_path) {
		/* the init takes the whole argv after its own deadline and "--" */
		ag_strv_push(&a, "--entrypoint");
		ag_strv_push(&a, AG_EXEC_INIT_PATH);
	} else if (s->entrypoint) {
		ag_strv_push(&a, "--entrypoint");
		ag_strv_push(&a, s->entrypoint);
	} else {
		ag_strv_pushf(&a, "--entrypoint=%s", s->command[0]);
		first = 1;
	}
	if (s->n_labels) {
		_cleanup_free_ struct ag_label *labels = ag_xcalloc(s->n_labels, sizeof(*labels));
		memcpy(labels, s->labels, s->n_labels * sizeof(*labels));
		qsort(labels, s->n_labels, sizeof(*labels), label_cmp);
		for (size_t i = 0; i < s->n_labels; i++) {
			ag_strv_push(&a, "--label");
			ag_strv_pushf(&a, "%s=%s", labels[i].key, labels[i].value);
		}
	}
	ag_strv_push(&a, "--");
	ag_strv_push(&a, s->image);
	if (s->init_host_path) {
		ag_strv_pushf(&a, "%" PRId64, s->init_deadline_seconds);
		ag_strv_push(&a, "--");
	}
	for (size_t i = first; i < s->n_command; i++)
		ag_strv_push(&a, s->command[i]);

	for (size_t i = 0; i < a.n; i++)
		ag_strv_push_owned(out, a.v[i]);
	free(a.v);
	return 0;
}

int ag_exec_spec_from_config(const struct ag_config *c, const struct ag_exec_inputs *in,
			     struct ag_exec_spec *out, struct ag_error **err)
{
	const struct ag_contained *ce = &c->contained;
	if (!ce->present)
		return FAIL("render.config.not_contained",
			    "the config has no contained_execution block");
	*out = (struct ag_exec_spec){
	    .image = c->sandbox.image,
	    .network = ce->network,
	    .uid = ce->required_uid,
	    .gid = ce->required_gid,
	    .cpu_limit = ce->cpu_limit,
	    .memory_limit = ce->memory_limit,
	    .pids_limit = ce->pids_limit,
	    .tmpfs_path = AG_EXEC_TMPFS_PATH,
	    .tmpfs_size = ce->tmpfs_size,
	    .workspace_host_path = in->workspace_host_path,
	    .workspace_container_path = AG_EXEC_WORKSPACE_PATH,
	    .workspace_tmpfs_size = NULL,
	    .container_name = in->container_name,
	    .probe_host_path = in->probe_host_path,
	    .init_host_path = in->init_host_path,
	    .init_deadline_seconds = in->init_deadline_seconds,
	    .ca_host_path = in->ca_host_path,
	    .entrypoint = in->entrypoint,
	    .env = in->env,
	    .n_env = in->n_env,
	    .labels = in->labels,
	    .n_labels = in->n_labels,
	    .command = in->command,
	    .n_command = in->n_command,
	    .runtime = ce->runtime == AG_RUNTIME_GVISOR ? ce->runtime_name : NULL,
	};
	return ag_exec_spec_validate(out, err);
}

/*
 * The Engine API create request for the same spec: every field the argv
 * renderer emits, as Config + HostConfig (docs/docker-argv.md maps them).
 */
int ag_render_create_request(const struct ag_exec_spec *s, json_t **out, struct ag_error **err)
{
	if (ag_exec_spec_validate(s, err) < 0)
		return -1;
	int64_t mem = 0;
	if (ag_size_parse(s->memory_limit, AG_SIZE_CONFIG, &mem) < 0)
		return FAIL("render.memory.invalid", "memory limit is not a size");
	json_t *c = json_object();
	json_object_set_new(c, "Image", json_string(s->image));
	json_object_set_new(c, "User", json_sprintf("%" PRId64 ":%" PRId64, s->uid, s->gid));
	json_object_set_new(c, "WorkingDir", json_string(s->workspace_container_path));
	json_object_set_new(c, "AttachStdin", json_false());
	json_object_set_new(c, "AttachStdout", json_true());
	json_object_set_new(c, "AttachStderr", json_true());
	json_object_set_new(c, "Tty", json_false());
	json_object_set_new(c, "OpenStdin", json_false());
	size_t n_env;
	_cleanup_free_ const char **env = full_env(s, &n_env);
	json_t *je = json_array();
	for (size_t i = 0; i < n_env; i++)
		json_array_append_new(je, json_string(env[i]));
	json_object_set_new(c, "Env", je);
	/* As the argv: argv[0] replaces the image's ENTRYPOINT, the rest its CMD. */
	size_t first = s->entrypoint || s->init_host_path ? 0 : 1;
	json_object_set_new(c, "Entrypoint",
			    json_pack("[s]", s->init_host_path ? AG_EXEC_INIT_PATH
					     : s->entrypoint   ? s->entrypoint
							       : s->command[0]));
	json_t *cmd = json_array();
	if (s->init_host_path) {
		/* the init's deadline and "--", then the whole argv as its child's */
		json_array_append_new(cmd, json_sprintf("%" PRId64, s->init_deadline_seconds));
		json_array_append_new(cmd, json_string("--"));
	}
	for (size_t i = first; i < s->n_command; i++)
		json_array_append_new(cmd, json_string(s->command[i]));
	json_object_set_new(c, "Cmd", cmd);
	/* --no-healthcheck: the image's HEALTHCHECK never runs. */
	json_object_set_new(c, "Healthcheck", json_pack("{s:[s]}", "Test", "NONE"));
	json_t *labels = json_object();
	for (size_t i = 0; i < s->n_labels; i++)
		json_object_set_new(labels, s->labels[i].key, json_string(s->labels[i].value));
	json_object_set_new(c, "Labels", labels);
	json_object_set_new(c, "NetworkDisabled", json_false());

	json_t *h = json_object();
	json_object_set_new(
	    h, "NetworkMode",
	    json_string(s->network_name ? s->network_name : ag_network_name(s->network)));
	if (s->network_name) {
		json_t *ep = json_object();
		if (s->network_alias)
			json_object_set_new(ep, "Aliases", json_pack("[s]", s->network_alias));
		if (s->ipv4_address)
			json_object_set_new(ep, "IPAMConfig",
					    json_pack("{s:s}", "IPv4Address", s->ipv4_address));
		json_t *nc = json_object();
		json_object_set_new(nc, s->network_name, ep);
		json_object_set_new(c, "NetworkingConfig",
				    json_pack("{s:o}", "EndpointsConfig", nc));
		json_t *dns = json_array();
		for (size_t i = 0; i < s->n_dns; i++)
			json_array_append_new(dns, json_string(s->dns[i]));
		json_object_set_new(h, "Dns", dns);
		if (s->ip_forward_off)
			json_object_set_new(h, "Sysctls",
					    json_pack("{s:s}", "net.ipv4.ip_forward", "0"));
		if (s->group_add)
			json_object_set_new(
			    h, "GroupAdd",
			    json_pack("[o]", json_sprintf("%" PRId64, s->group_add)));
	}
	if (s->runtime)
		json_object_set_new(h, "Runtime", json_string(s->runtime));
	json_object_set_new(h, "SecurityOpt", json_pack("[s]", "no-new-privileges"));
	json_object_set_new(h, "CapDrop", json_pack("[s]", "ALL"));
	json_object_set_new(h, "CgroupnsMode", json_string("private"));
	json_object_set_new(h, "PidsLimit", json_integer(s->pids_limit));
	json_object_set_new(h, "Memory", json_integer(mem));
	json_object_set_new(h, "MemorySwap", json_integer(mem));
	/* --cpus X is NanoCpus X * 1e9 (the validated range keeps it exact enough). */
	json_object_set_new(h, "NanoCpus", json_integer((json_int_t)(s->cpu_limit * 1e9 + 0.5)));
	json_object_set_new(h, "ReadonlyRootfs", json_true());
	json_object_set_new(h, "LogConfig", json_pack("{s:s,s:{}}", "Type", "none", "Config"));
	if (s->file_size_max)
		json_object_set_new(h, "Ulimits",
				    json_pack("[{s:s,s:I,s:I}]", "Name", "fsize", "Soft",
					      (json_int_t)s->file_size_max, "Hard",
					      (json_int_t)s->file_size_max));
	json_t *tmpfs = json_object();
	json_object_set_new(tmpfs, s->tmpfs_path,
			    json_sprintf("rw,noexec,nosuid,nodev,size=%s,uid=%" PRId64
					 ",gid=%" PRId64 ",mode=700",
					 s->tmpfs_size, s->uid, s->gid));
	if (!s->workspace_host_path)
		json_object_set_new(
		    tmpfs, s->workspace_container_path,
		    json_sprintf("rw,noexec,nosuid,nodev,size=%s,uid=%" PRId64 ",gid=%" PRId64
				 ",mode=700",
				 s->workspace_tmpfs_size ? s->workspace_tmpfs_size : s->tmpfs_size,
				 s->uid, s->gid));
	json_object_set_new(h, "Tmpfs", tmpfs);
	json_t *mounts = json_array();
	if (s->workspace_host_path)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s}", "Type", "bind", "Source",
							s->workspace_host_path, "Target",
							s->workspace_container_path));
	if (s->probe_host_path)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:b}", "Type", "bind",
							"Source", s->probe_host_path, "Target",
							AG_EXEC_PROBE_PATH, "ReadOnly", 1));
	if (s->init_host_path)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:b}", "Type", "bind",
							"Source", s->init_host_path, "Target",
							AG_EXEC_INIT_PATH, "ReadOnly", 1));
	if (s->ca_host_path)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:b}", "Type", "bind",
							"Source", s->ca_host_path, "Target",
							AG_EXEC_CA_PATH, "ReadOnly", 1));
	for (size_t i = 0; i < s->n_file_binds; i++)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:b}", "Type", "bind",
							"Source", s->file_binds[i].host_path,
							"Target", s->file_binds[i].container_path,
							"ReadOnly", s->file_binds[i].read_only));
	if (json_array_size(mounts))
		json_object_set_new(h, "Mounts", mounts);
	else
		json_decref(mounts);
	json_object_set_new(h, "RestartPolicy", json_pack("{s:s}", "Name", "no"));
	json_object_set_new(c, "HostConfig", h);
	*out = c;
	return 0;
}
