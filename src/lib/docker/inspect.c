#include "lib/base/ag.h"
#include "lib/base/size.h"
#include "lib/docker/inspect.h"
#include "lib/docker/exec_spec.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/base/sha256.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/docker/docker_json.h"

#include <ctype.h>
#include <inttypes.h>

const char *ag_pf_status_name(enum ag_pf_status s)
{
	switch (s) {
	case AG_PF_SUPPORTED:
		return "supported";
	case AG_PF_EXPERIMENTAL:
		return "experimental";
	case AG_PF_UNAVAILABLE:
		return "unavailable";
	case AG_PF_UNSAFE:
		return "unsafe";
	default:
		return "unsafe";
	}
}

const char *ag_pf_claim_name(enum ag_pf_claim c)
{
	switch (c) {
	case AG_PF_CLAIM_LINUX_ENGINE:
		return "linux-docker-engine";
	case AG_PF_CLAIM_DESKTOP_REDUCED:
		return "docker-desktop-reduced";
	case AG_PF_CLAIM_NONE:
	default:
		return "none";
	}
}

/* A size Docker reports back ("16m", "65536"); -1 when it is not one. */
static int64_t docker_size(const char *s)
{
	int64_t v;
	return ag_size_parse(s, AG_SIZE_DOCKER, &v) == 0 ? v : -1;
}

/* ---- findings ---- */

void ag_pf_findings_add(struct ag_pf_findings *f, const char *control, enum ag_pf_verdict verdict,
			const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *raw = ag_xvasprintf(fmt, ap);
	va_end(ap);
	if (f->n == f->alloc) {
		f->alloc = f->alloc ? f->alloc * 2 : 8;
		f->v = ag_xrealloc(f->v, f->alloc * sizeof(*f->v));
	}
	f->v[f->n++] = (struct ag_pf_finding){
	    .control = control,
	    .reason = reason,
	    .verdict = verdict,
	    .detail =
		ag_sanitize(NULL, AG_SANITIZE_ENGINE, raw, strlen(raw), AG_PF_DIAGNOSTIC_MAX_BYTES),
	};
	free(raw);
}

enum ag_pf_verdict ag_pf_findings_worst(const struct ag_pf_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].verdict == AG_PF_V_UNSAFE)
			return AG_PF_V_UNSAFE;
	return AG_PF_V_UNAVAILABLE;
}

ssize_t ag_pf_findings_find(const struct ag_pf_findings *f, const char *reason)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].reason, reason) == 0)
			return (ssize_t)i;
	return -1;
}

void ag_pf_findings_release(struct ag_pf_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].detail);
	free(f->v);
	*f = (struct ag_pf_findings)AG_PF_FINDINGS_INIT;
}

void ag_pf_findings_releasep(struct ag_pf_findings *f)
{
	ag_pf_findings_release(f);
}

/* ---- small helpers ---- */

static bool is_hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

bool ag_is_container_id(const char *s)
{
	return is_hex64(s);
}

bool ag_is_image_id(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && is_hex64(s + 7);
}

/* Strings from docker are bounded (docker_json) but still untrusted: keep
 * only a sanitized copy of anything that ends up in evidence. */
static char *san_dup(const char *s)
{
	return s ? ag_sanitize(NULL, AG_SANITIZE_ENGINE, s, strlen(s), AG_PF_DIAGNOSTIC_MAX_BYTES)
		 : NULL;
}

static bool contains_ci(const char *hay, const char *needle)
{
	return hay && strcasestr(hay, needle) != NULL;
}

static int parse_api(const char *s, int *maj, int *min)
{
	if (!s)
		return -1;
	char *end;
	errno = 0;
	long a = strtol(s, &end, 10);
	if (errno || end == s || *end != '.' || a < 0 || a > 1000)
		return -1;
	const char *p = end + 1;
	long b = strtol(p, &end, 10);
	if (errno || end == p || *end != '\0' || b < 0 || b > 1000)
		return -1;
	*maj = (int)a;
	*min = (int)b;
	return 0;
}

void ag_engine_facts_release(struct ag_engine_facts *e)
{
	free(e->client_version);
	free(e->server_version);
	free(e->api_version);
	free(e->os);
	free(e->arch);
	free(e->platform_name);
	free(e->operating_system);
	free(e->os_type);
	free(e->cgroup_driver);
	free(e->cgroup_version);
	free(e->runtime);
	ag_strv_release(&e->runtimes);
	ag_strv_release(&e->runtime_args);
	ag_strv_release(&e->security_options);
	memset(e, 0, sizeof(*e));
	e->ncpu = -1;
}

/* ---- version / info ---- */

void ag_inspect_version(const json_t *v, struct ag_engine_facts *e, struct ag_pf_findings *f)
{
	const json_t *client = json_object_get(v, "Client");
	const json_t *server = json_object_get(v, "Server");
	if (!json_is_object(client)) {
		ag_pf_findings_add(f, "client", AG_PF_V_UNAVAILABLE, "docker.version.no_client",
				   "docker version has no Client object");
		return;
	}
	if (!json_is_object(server)) {
		ag_pf_findings_add(f, "server", AG_PF_V_UNAVAILABLE, "docker.version.no_server",
				   "docker version has no Server object (daemon not reached)");
		return;
	}
	const char *cv = ag_json_path_str(client, "Version");
	const char *sv = ag_json_path_str(server, "Version");
	const char *api = ag_json_path_str(server, "ApiVersion");
	const char *os = ag_json_path_str(server, "Os");
	const char *arch = ag_json_path_str(server, "Arch");
	const json_t *plat = json_object_get(server, "Platform");
	const char *pname = ag_json_path_str(server, "Platform.Name");
	free(e->client_version);
	free(e->server_version);
	free(e->api_version);
	free(e->os);
	free(e->arch);
	free(e->platform_name);
	e->client_version = san_dup(cv);
	e->server_version = san_dup(sv);
	e->api_version = san_dup(api);
	e->os = san_dup(os);
	e->arch = san_dup(arch);
	e->platform_name = san_dup(pname ? pname : "");
	if (!cv || !*cv)
		ag_pf_findings_add(f, "client_version", AG_PF_V_UNAVAILABLE,
				   "docker.version.client_version", "Client.Version missing");
	if (!sv || !*sv)
		ag_pf_findings_add(f, "server_version", AG_PF_V_UNAVAILABLE,
				   "docker.version.server_version", "Server.Version missing");
	if (plat && !json_is_object(plat))
		ag_pf_findings_add(f, "platform", AG_PF_V_UNAVAILABLE, "docker.version.platform",
				   "Server.Platform is not an object");
	if (!api || parse_api(api, &e->api_major, &e->api_minor) < 0)
		ag_pf_findings_add(f, "api_version", AG_PF_V_UNAVAILABLE,
				   "docker.version.api_version",
				   "Server.ApiVersion missing or not MAJOR.MINOR");
	if (!os)
		ag_pf_findings_add(f, "os", AG_PF_V_UNAVAILABLE, "docker.version.os",
				   "Server.Os missing");
	else if (strcmp(os, "linux") != 0)
		ag_pf_findings_add(f, "os", AG_PF_V_UNSAFE, "preflight.engine.not_linux",
				   "engine OS is '%s', not linux", os);
	if (!arch || !*arch)
		ag_pf_findings_add(f, "arch", AG_PF_V_UNAVAILABLE, "docker.version.arch",
				   "Server.Arch missing");
	if (contains_ci(pname, "docker desktop"))
		e->desktop = true;
}

static void info_bool(const json_t *v, const char *key, bool *val, bool *known)
{
	const json_t *j = json_object_get(v, key);
	*known = json_is_boolean(j);
	*val = json_is_true(j);
}

void ag_inspect_info(const json_t *v, struct ag_engine_facts *e, struct ag_pf_findings *f)
{
	e->have_info = true;
	const char *osys = ag_json_path_str(v, "OperatingSystem");
	const char *ostype = ag_json_path_str(v, "OSType");
	const char *sv = ag_json_path_str(v, "ServerVersion");
	free(e->operating_system);
	free(e->os_type);
	free(e->cgroup_driver);
	free(e->cgroup_version);
	free(e->runtime);
	e->operating_system = san_dup(osys);
	e->os_type = san_dup(ostype);
	e->cgroup_driver = san_dup(ag_json_path_str(v, "CgroupDriver"));
	e->cgroup_version = san_dup(ag_json_path_str(v, "CgroupVersion"));
	e->runtime = san_dup(ag_json_path_str(v, "DefaultRuntime"));
	ag_strv_release(&e->security_options);
	const json_t *so = json_object_get(v, "SecurityOptions");
	if (json_is_array(so)) {
		size_t i;
		const json_t *x;
		json_array_foreach(so, i, x) if (json_is_string(x))
		    ag_strv_push_owned(&e->security_options, san_dup(json_string_value(x)));
	}
	ag_strv_release(&e->runtimes);
	ag_strv_release(&e->runtime_args);
	const char *rk;
	const json_t *rv;
	json_object_foreach((json_t *)json_object_get(v, "Runtimes"), rk, rv)
	{
		if (e->runtimes.n >= 16)
			break;
		ag_strv_push_owned(&e->runtimes, san_dup(rk));
		const json_t *args = json_object_get(rv, "runtimeArgs");
		for (size_t k = 0; k < json_array_size(args) && e->runtime_args.n < 64; k++) {
			/* sanitized: an argument may name a private path */
			char *raw = ag_xasprintf("%s %s", rk,
						 json_is_string(json_array_get(args, k))
						     ? json_string_value(json_array_get(args, k))
						     : "(not a string)");
			ag_strv_push_owned(&e->runtime_args, san_dup(raw));
			free(raw);
		}
	}
	info_bool(v, "MemoryLimit", &e->memory_limit, &e->memory_limit_known);
	info_bool(v, "PidsLimit", &e->pids_limit, &e->pids_limit_known);
	info_bool(v, "CpuCfsQuota", &e->cpu_cfs_quota, &e->cpu_cfs_quota_known);
	info_bool(v, "CpuCfsPeriod", &e->cpu_cfs_period, &e->cpu_cfs_period_known);
	const json_t *ncpu = json_object_get(v, "NCPU");
	e->ncpu = json_is_integer(ncpu) ? json_integer_value(ncpu) : -1;
	if (contains_ci(osys, "docker desktop"))
		e->desktop = true;
	if (!osys)
		ag_pf_findings_add(f, "operating_system", AG_PF_V_UNAVAILABLE,
				   "docker.info.operating_system", "info.OperatingSystem missing");
	/* Contradictions between the two daemon answers fail closed. */
	if (ostype && e->os && strcmp(ostype, e->os) != 0)
		ag_pf_findings_add(f, "os", AG_PF_V_UNSAFE, "preflight.engine.contradiction",
				   "docker version says OS '%s' but docker info says '%s'", e->os,
				   ostype);
	else if (ostype && strcmp(ostype, "linux") != 0)
		ag_pf_findings_add(f, "os", AG_PF_V_UNSAFE, "preflight.engine.not_linux",
				   "docker info OSType is '%s', not linux", ostype);
	if (sv && e->server_version && strcmp(sv, e->server_version) != 0)
		ag_pf_findings_add(f, "server_version", AG_PF_V_UNSAFE,
				   "preflight.engine.contradiction",
				   "docker version says engine '%s' but docker info says '%s'",
				   e->server_version, sv);
}

void ag_inspect_runtime_claim(const struct ag_engine_facts *e, const struct ag_contained *ce,
			      struct ag_pf_findings *f)
{
	if (ce->runtime != AG_RUNTIME_GVISOR)
		return;
	bool listed = false;
	for (size_t i = 0; i < e->runtimes.n; i++)
		listed |= strcmp(e->runtimes.v[i], ce->runtime_name) == 0;
	if (!listed) {
		ag_pf_findings_add(f, "runtime", AG_PF_V_UNAVAILABLE, "preflight.runtime.absent",
				   "the engine has no runtime named '%s' (register gVisor's runsc "
				   "under \"runtimes\" in the engine's daemon.json, "
				   "docs/contained-run.md)",
				   ce->runtime_name);
		return;
	}
	size_t nl = strlen(ce->runtime_name);
	for (size_t i = 0; i < e->runtime_args.n; i++) {
		const char *a = e->runtime_args.v[i];
		if (strncmp(a, ce->runtime_name, nl) != 0 || a[nl] != ' ')
			continue;
		const char *arg = a + nl + 1;
		static const char *const ok[] = {"--platform=ptrace", "--platform=systrap",
						 "--platform=kvm",    "--network=none",
						 "--oci-seccomp",     "--oci-seccomp=true"};
		bool allowed = false;
		for (size_t k = 0; k < AG_ARRAY_SIZE(ok) && !allowed; k++)
			allowed = strcmp(arg, ok[k]) == 0;
		if (!allowed)
			ag_pf_findings_add(
			    f, "runtime", AG_PF_V_UNSAFE, "preflight.runtime.args",
			    "the engine runs '%s' with '%s', which AgentGuard does not "
			    "accept (only --platform=ptrace|systrap|kvm, "
			    "--network=none, --oci-seccomp)",
			    ce->runtime_name, arg);
	}
}

void ag_inspect_platform_claim(const struct ag_engine_facts *e, enum ag_platform platform,
			       struct ag_pf_findings *f)
{
	if (platform == AG_PLATFORM_LINUX_ENGINE && e->desktop)
		ag_pf_findings_add(f, "platform", AG_PF_V_UNSAFE, "preflight.platform.desktop",
				   "Docker Desktop detected but the config claims "
				   "linux-docker-engine; Desktop carries reduced claims only");
	else if (platform == AG_PLATFORM_DESKTOP_EXPERIMENTAL && !e->desktop)
		ag_pf_findings_add(f, "platform", AG_PF_V_UNSAFE, "preflight.platform.not_desktop",
				   "config plans docker-desktop-experimental but the engine is "
				   "not Docker Desktop");
}

static void need_bool(bool known, bool val, const char *control, const char *field,
		      const char *reason_missing, const char *reason_false,
		      struct ag_pf_findings *f)
{
	if (!known)
		ag_pf_findings_add(f, control, AG_PF_V_UNAVAILABLE, reason_missing,
				   "info.%s missing or not a boolean", field);
	else if (!val)
		ag_pf_findings_add(f, control, AG_PF_V_UNSAFE, reason_false,
				   "engine reports %s false: the limit cannot be enforced", field);
}

void ag_inspect_resource_support(const struct ag_engine_facts *e, struct ag_pf_findings *f)
{
	need_bool(e->memory_limit_known, e->memory_limit, "memory", "MemoryLimit",
		  "docker.info.memory_limit", "preflight.resources.memory_unsupported", f);
	need_bool(e->pids_limit_known, e->pids_limit, "pids", "PidsLimit", "docker.info.pids_limit",
		  "preflight.resources.pids_unsupported", f);
	need_bool(e->cpu_cfs_quota_known, e->cpu_cfs_quota, "cpu", "CpuCfsQuota",
		  "docker.info.cpu_cfs", "preflight.resources.cpu_unsupported", f);
	need_bool(e->cpu_cfs_period_known, e->cpu_cfs_period, "cpu", "CpuCfsPeriod",
		  "docker.info.cpu_cfs", "preflight.resources.cpu_unsupported", f);
	if (e->ncpu < 0)
		ag_pf_findings_add(f, "cpu", AG_PF_V_UNAVAILABLE, "docker.info.ncpu",
				   "info.NCPU missing or not an integer");
	else if (e->ncpu == 0)
		ag_pf_findings_add(f, "cpu", AG_PF_V_UNSAFE, "preflight.resources.ncpu",
				   "engine reports NCPU 0");
}

void ag_inspect_api_support(const struct ag_engine_facts *e, struct ag_pf_findings *f)
{
	if (!e->api_version)
		ag_pf_findings_add(f, "api_version", AG_PF_V_UNAVAILABLE,
				   "docker.version.api_version", "engine API version unknown");
	else if (e->api_major < AG_PF_MIN_API_MAJOR ||
		 (e->api_major == AG_PF_MIN_API_MAJOR && e->api_minor < AG_PF_MIN_API_MINOR))
		ag_pf_findings_add(
		    f, "read_only_root_tmpfs", AG_PF_V_UNSAFE, "preflight.api.too_old",
		    "engine API %d.%d is older than %d.%d (read-only root + tmpfs)", e->api_major,
		    e->api_minor, AG_PF_MIN_API_MAJOR, AG_PF_MIN_API_MINOR);
}

void ag_inspect_network(const json_t *v, enum ag_network net, struct ag_pf_findings *f)
{
	const char *want = ag_network_name(net);
	const char *name = ag_json_path_str(v, "Name");
	const char *driver = ag_json_path_str(v, "Driver");
	/* The built-in networks: none uses the "null" driver, bridge "bridge". */
	const char *want_driver = net == AG_NET_NONE ? "null" : "bridge";
	if (!name)
		ag_pf_findings_add(f, "network", AG_PF_V_UNAVAILABLE, "docker.network.name",
				   "network inspect has no Name");
	else if (strcmp(name, want) != 0)
		ag_pf_findings_add(f, "network", AG_PF_V_UNSAFE, "preflight.network.mismatch",
				   "network inspect answered '%s' for '%s'", name, want);
	if (driver && strcmp(driver, want_driver) != 0)
		ag_pf_findings_add(f, "network", AG_PF_V_UNSAFE, "preflight.network.driver",
				   "network '%s' uses driver '%s', expected '%s'", want, driver,
				   want_driver);
}

/* ---- image ---- */

void ag_image_facts_release(struct ag_image_facts *i)
{
	free(i->local_image_id);
	free(i->registry_digest);
	free(i->platform);
	free(i->entrypoint_sha256);
	ag_strv_release(&i->env_names);
	memset(i, 0, sizeof(*i));
}

/*
 * The image's own entrypoint and environment. The run overrides the
 * entrypoint (the argv runs exactly) and disables health checks, but image
 * ENV still reaches the agent: its names are recorded, and a reserved one
 * (LD_PRELOAD, DOCKER_HOST, ...) makes the image unsafe.
 */
static void image_metadata(const json_t *v, struct ag_image_facts *out, struct ag_pf_findings *f)
{
	const json_t *cfg = json_object_get(v, "Config");
	if (cfg && !json_is_null(cfg) && !json_is_object(cfg)) {
		ag_pf_findings_add(f, "image_config", AG_PF_V_UNSAFE, "preflight.image.config",
				   "image inspect Config is not an object");
		return;
	}
	const json_t *ep = json_object_get(cfg, "Entrypoint");
	const json_t *env = json_object_get(cfg, "Env");
	if ((ep && !json_is_null(ep) && !json_is_array(ep)) ||
	    (env && !json_is_null(env) && !json_is_array(env))) {
		ag_pf_findings_add(f, "image_config", AG_PF_V_UNSAFE, "preflight.image.config",
				   "image Config.Entrypoint or Config.Env is not a list");
		return;
	}
	out->metadata_known = true;
	if (json_is_array(ep) && json_array_size(ep) > 0) {
		out->entrypoint_present = true;
		char *s = json_dumps(ep, JSON_COMPACT | JSON_ENSURE_ASCII);
		char hex[AG_SHA256_HEX_LEN + 1];
		ag_sha256_hex(s ? s : "", s ? strlen(s) : 0, hex);
		free(s);
		out->entrypoint_sha256 = ag_xstrdup(hex);
	}
	size_t i;
	const json_t *e;
	json_array_foreach(env, i, e)
	{
		const char *kv = json_string_value(e);
		const char *eq = kv ? strchr(kv, '=') : NULL;
		if (!eq || eq == kv) {
			ag_pf_findings_add(
			    f, "image_env", AG_PF_V_UNSAFE, "preflight.image.env_malformed",
			    "image Config.Env holds an entry that is not NAME=VALUE");
			continue;
		}
		size_t n = (size_t)(eq - kv);
		char *name = ag_xstrndup(kv, n);
		out->env_total++;
		bool valid = n <= AG_RUN_IMAGE_ENV_NAME_MAX_BYTES && ag_env_name_valid(name);
		/* The value (after '=') is never read, kept or recorded. */
		if (ag_env_name_is_reserved(name) && !ag_env_name_is_default(name, n)) {
			ag_pf_findings_add(f, "image_env", AG_PF_V_UNSAFE,
					   "preflight.image.env_reserved",
					   "the image's ENV sets %s, a reserved variable",
					   valid ? name : "(unrepresentable)");
		}
		if (out->env_names.n < AG_RUN_IMAGE_ENV_NAMES_MAX)
			ag_strv_push(&out->env_names, valid ? name : "[UNREPRESENTABLE_NAME]");
		free(name);
	}
	ag_strv_sort(&out->env_names);
}

void ag_inspect_image(const json_t *v, const struct ag_image_ref *ref, struct ag_image_facts *out,
		      struct ag_pf_findings *f)
{
	if (!ref->digest || !ref->repository) {
		ag_pf_findings_add(f, "image", AG_PF_V_UNSAFE, "preflight.image.not_pinned",
				   "configured image is not pinned by digest");
		return;
	}
	const char *id = ag_json_path_str(v, "Id");
	const char *os = ag_json_path_str(v, "Os");
	const char *arch = ag_json_path_str(v, "Architecture");
	const char *variant = ag_json_path_str(v, "Variant");
	if (!ag_is_image_id(id))
		ag_pf_findings_add(f, "image_id", AG_PF_V_UNSAFE, "preflight.image.bad_id",
				   "image inspect Id is not sha256:<64 hex>");
	else
		out->local_image_id = ag_xstrdup(id);
	if (!os || strcmp(os, "linux") != 0)
		ag_pf_findings_add(f, "image_os", AG_PF_V_UNSAFE, "preflight.image.not_linux",
				   "image OS is '%s', not linux", os ? os : "(missing)");
	if (os && arch) {
		char *p = variant && *variant ? ag_xasprintf("%s/%s/%s", os, arch, variant)
					      : ag_xasprintf("%s/%s", os, arch);
		out->platform = san_dup(p);
		free(p);
	}
	char *want = ag_xasprintf("%s@%s", ref->repository, ref->digest);
	const json_t *rd = json_object_get(v, "RepoDigests");
	size_t matches = 0;
	if (json_is_array(rd)) {
		size_t i;
		const json_t *x;
		json_array_foreach(rd, i, x) if (json_is_string(x) &&
						 strcmp(json_string_value(x), want) == 0) matches++;
	}
	if (!json_is_array(rd))
		ag_pf_findings_add(f, "registry_digest", AG_PF_V_UNSAFE,
				   "preflight.image.no_repo_digests",
				   "image inspect has no RepoDigests list");
	else if (matches != 1)
		ag_pf_findings_add(f, "registry_digest", AG_PF_V_UNSAFE,
				   "preflight.image.digest_mismatch",
				   "RepoDigests does not contain the configured repository@digest "
				   "exactly once");
	else
		out->registry_digest = ag_xstrdup(want);
	free(want);
	image_metadata(v, out, f);
}

/* ---- container ---- */

static const json_t *hc(const json_t *v, const char *key)
{
	return json_object_get(json_object_get(v, "HostConfig"), key);
}

static bool empty_list(const json_t *j)
{
	return !j || json_is_null(j) || (json_is_array(j) && json_array_size(j) == 0);
}

static bool str_in(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

static bool array_has_str(const json_t *a, const char *s)
{
	if (!json_is_array(a))
		return false;
	size_t i;
	const json_t *x;
	json_array_foreach(a, i, x) if (json_is_string(x) &&
					strcmp(json_string_value(x), s) == 0) return true;
	return false;
}

/*
 * One tmpfs option string must be exactly the rendered set: rw, noexec,
 * nosuid, nodev, size, uid, gid, mode=700; anything extra (exec, suid, dev,
 * a second size) or missing fails.
 */
static void check_tmpfs_opts(const char *path, const char *opts, int64_t size, int64_t uid,
			     int64_t gid, struct ag_pf_findings *f)
{
	bool rw = false, noexec = false, nosuid = false, nodev = false, sz = false, u = false,
	     g = false, mode = false;
	char *copy = ag_xstrdup(opts);
	bool bad = false;
	char *what = NULL;
	for (char *p = copy; p && !bad;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (strcmp(p, "rw") == 0 && !rw)
			rw = true;
		else if (strcmp(p, "noexec") == 0 && !noexec)
			noexec = true;
		else if (strcmp(p, "nosuid") == 0 && !nosuid)
			nosuid = true;
		else if (strcmp(p, "nodev") == 0 && !nodev)
			nodev = true;
		else if (strncmp(p, "size=", 5) == 0 && !sz) {
			int64_t got = docker_size(p + 5);
			sz = true;
			if (got != size) {
				bad = true;
				what = ag_xasprintf("size %s, expected %" PRId64 " bytes", p + 5,
						    size);
			}
		} else if (strncmp(p, "uid=", 4) == 0 && !u) {
			int64_t got;
			u = true;
			if (ag_parse_i64(p + 4, &got) < 0 || got != uid) {
				bad = true;
				what = ag_xasprintf("uid=%s, expected %" PRId64, p + 4, uid);
			}
		} else if (strncmp(p, "gid=", 4) == 0 && !g) {
			int64_t got;
			g = true;
			if (ag_parse_i64(p + 4, &got) < 0 || got != gid) {
				bad = true;
				what = ag_xasprintf("gid=%s, expected %" PRId64, p + 4, gid);
			}
		} else if ((strcmp(p, "mode=700") == 0 || strcmp(p, "mode=0700") == 0) && !mode)
			mode = true;
		else {
			bad = true;
			what = ag_xasprintf("unexpected or repeated option '%s'", p);
		}
		p = comma ? comma + 1 : NULL;
	}
	if (!bad && !(rw && noexec && nosuid && nodev && sz && u && g && mode)) {
		bad = true;
		what = ag_xstrdup("missing one of rw,noexec,nosuid,nodev,size,uid,gid,mode=700");
	}
	if (bad)
		ag_pf_findings_add(f, "tmpfs", AG_PF_V_UNSAFE, "preflight.probe.tmpfs_options",
				   "tmpfs %s: %s", path, what);
	free(what);
	free(copy);
}

static json_t *jstr_or_null_owned(char *s)
{
	json_t *j = s ? json_string(s) : json_null();
	free(s);
	return j;
}

/*
 * A resource limit Docker must show exactly as requested: a missing, zero,
 * negative (unlimited) or different value is a downgrade.
 */
static void expect_limit(const json_t *got, const char *field, const char *evidence_key,
			 const char *control, const char *reason, int64_t want, json_t *insp,
			 struct ag_pf_findings *f)
{
	json_object_set_new(insp, evidence_key,
			    json_is_integer(got) ? json_integer(json_integer_value(got))
						 : json_null());
	if (!json_is_integer(got) || json_integer_value(got) <= 0)
		ag_pf_findings_add(f, control, AG_PF_V_UNSAFE, reason,
				   "HostConfig.%s missing, zero or unlimited", field);
	else if (json_integer_value(got) != want)
		ag_pf_findings_add(f, control, AG_PF_V_UNSAFE, reason,
				   "HostConfig.%s is %" JSON_INTEGER_FORMAT ", requested %" PRId64,
				   field, json_integer_value(got), want);
}

/* Index of the file bind of x that (type, src, dst) is, or -1. */
static ssize_t file_bind_index(const struct ag_probe_expect *x, const char *type, const char *src,
			       const char *dst)
{
	if (!type || strcmp(type, "bind") != 0 || !src || !dst)
		return -1;
	for (size_t i = 0; i < x->n_file_binds; i++)
		if (strcmp(src, x->file_binds[i].source) == 0 &&
		    strcmp(dst, x->file_binds[i].target) == 0)
			return (ssize_t)i;
	return -1;
}

/*
 * What runs and how: the entrypoint the spec rendered (the argv runs
 * exactly, never the image's), the workspace as working directory, the
 * image's health check disabled, never restarted. Config.Cmd and
 * Config.Env are dropped by the lookup before this sees the answer.
 */
static void check_process(const json_t *v, const struct ag_probe_expect *x,
			  struct ag_pf_findings *f)
{
	const enum ag_pf_verdict U = AG_PF_V_UNSAFE;
	const json_t *ep = ag_json_path(v, "Config.Entrypoint");
	if (!json_is_array(ep) || json_array_size(ep) != 1 || !x->entrypoint ||
	    strcmp(ag_json_str_or(json_array_get(ep, 0), ""), x->entrypoint) != 0)
		ag_pf_findings_add(f, "entrypoint", U, "preflight.probe.entrypoint",
				   "Config.Entrypoint is not the one element the spec rendered");
	const char *wd = ag_json_path_str(v, "Config.WorkingDir");
	if (!wd || !x->workspace || strcmp(wd, x->workspace) != 0)
		ag_pf_findings_add(f, "workdir", U, "preflight.probe.workdir",
				   "Config.WorkingDir is not the workspace");
	/* The image's HEALTHCHECK must not run beside the contained process. */
	const json_t *hct = ag_json_path(v, "Config.Healthcheck.Test");
	const char *hc0 = json_string_value(json_array_get(hct, 0));
	if (!(json_array_size(hct) == 1 && hc0 && strcmp(hc0, "NONE") == 0))
		ag_pf_findings_add(f, "healthcheck", U, "run.healthcheck_enabled",
				   "the created container would run the image's health check");
	const char *rp = ag_json_str_or(ag_json_path(v, "HostConfig.RestartPolicy.Name"), NULL);
	if ((rp && *rp && strcmp(rp, "no") != 0) || json_is_true(hc(v, "AutoRemove")))
		ag_pf_findings_add(f, "restart_policy", U, "preflight.probe.restart",
				   "the container would be restarted or removed by the engine");
}

/* The reason vocabulary of the network findings (see enum ag_inspect_role). */
struct net_reasons {
	const char *networks, *endpoint, *dns, *sysctls, *extra_hosts, *ports, *links;
};

static const struct net_reasons *net_reasons_of(const struct ag_probe_expect *x)
{
	static const struct net_reasons plain = {
	    "preflight.probe.networks", "preflight.probe.endpoint",    "preflight.probe.dns",
	    "preflight.probe.sysctls",	"preflight.probe.extra_hosts", "preflight.probe.ports",
	    "preflight.probe.links"};
	static const struct net_reasons gateway = {
	    "study.gateway.endpoints", "study.gateway.study_address", "study.gateway.dns",
	    "study.gateway.sysctl",    "study.inspect.extra_hosts",   "study.inspect.ports",
	    "study.inspect.links"};
	static const struct net_reasons agent = {
	    "study.agent.networks", "study.agent.networks",	 "study.agent.dns",
	    "study.agent.sysctls",  "study.inspect.extra_hosts", "study.inspect.ports",
	    "study.inspect.links"};
	static const struct net_reasons probe = {
	    "study.selftest.networks", "study.selftest.networks",   "study.selftest.dns",
	    "study.selftest.sysctls",  "study.inspect.extra_hosts", "study.inspect.ports",
	    "study.inspect.links"};
	if (!x->network_name)
		return &plain;
	switch (x->role) {
	case AG_INSPECT_GATEWAY:
		return &gateway;
	case AG_INSPECT_STUDY_PROBE:
		return &probe;
	case AG_INSPECT_AGENT:
	case AG_INSPECT_PREFLIGHT_PROBE:
	default:
		return &agent;
	}
}

static bool strings_exactly(const json_t *a, const char *const *want, size_t n)
{
	if (n == 0)
		return empty_list(a);
	if (!json_is_array(a) || json_array_size(a) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(ag_json_str_or(json_array_get(a, i), ""), want[i]) != 0)
			return false;
	return true;
}

/*
 * The network: endpoints exactly the spec's network plus any connected
 * after create; the study endpoint's alias and fixed address; DNS exactly
 * the spec's; sysctls exactly the one the spec may render; no extra hosts,
 * published ports or links.
 */
static void check_networks(const json_t *v, const struct ag_probe_expect *x,
			   struct ag_pf_findings *f)
{
	const enum ag_pf_verdict U = AG_PF_V_UNSAFE;
	const struct net_reasons *r = net_reasons_of(x);
	const json_t *nets = ag_json_path(v, "NetworkSettings.Networks");
	bool nets_ok = json_is_object(nets) && json_object_size(nets) == x->n_networks;
	for (size_t i = 0; nets_ok && i < x->n_networks; i++)
		nets_ok = json_is_object(json_object_get(nets, x->networks[i]));
	if (!nets_ok)
		ag_pf_findings_add(f, "network", U, r->networks,
				   "the container's endpoints are not exactly the %zu the spec "
				   "and the run gave",
				   x->n_networks);
	const json_t *ep = x->network_name ? json_object_get(nets, x->network_name) : NULL;
	if (x->network_alias) {
		bool alias = false;
		size_t i;
		const json_t *a;
		json_array_foreach(json_object_get(ep, "Aliases"), i,
				   a) if (strcmp(ag_json_str_or(a, ""), x->network_alias) == 0)
		    alias = true;
		if (!alias)
			ag_pf_findings_add(f, "network", U, r->endpoint,
					   "the endpoint lacks the alias the spec gave");
	}
	if (x->ipv4_address) {
		const char *cfg = ag_json_path_str(ep, "IPAMConfig.IPv4Address");
		const char *got = ag_json_str_or(json_object_get(ep, "IPAddress"), "");
		bool running = json_is_true(ag_json_path(v, "State.Running"));
		if (!cfg || strcmp(cfg, x->ipv4_address) != 0 ||
		    ((running || *got) && strcmp(got, x->ipv4_address) != 0))
			ag_pf_findings_add(f, "network", U, r->endpoint,
					   "the endpoint does not hold the fixed address the spec "
					   "gave");
	}
	if (!strings_exactly(hc(v, "Dns"), x->dns, x->n_dns))
		ag_pf_findings_add(f, "dns", U, r->dns, "HostConfig.Dns is not exactly the spec's");
	const json_t *sys = hc(v, "Sysctls");
	bool sys_ok =
	    x->ip_forward_off
		? json_is_object(sys) && json_object_size(sys) == 1 &&
		      strcmp(ag_json_str_or(json_object_get(sys, "net.ipv4.ip_forward"), ""),
			     "0") == 0
		: !sys || json_is_null(sys) || (json_is_object(sys) && json_object_size(sys) == 0);
	if (!sys_ok)
		ag_pf_findings_add(f, "sysctls", U, r->sysctls,
				   "HostConfig.Sysctls is not exactly what the spec rendered");
	const json_t *pb = hc(v, "PortBindings");
	if (!empty_list(hc(v, "ExtraHosts")))
		ag_pf_findings_add(f, "network", U, r->extra_hosts, "ExtraHosts is not empty");
	if ((pb && !json_is_null(pb) && !(json_is_object(pb) && json_object_size(pb) == 0)) ||
	    json_is_true(hc(v, "PublishAllPorts")))
		ag_pf_findings_add(f, "network", U, r->ports, "the container publishes ports");
	if (!empty_list(hc(v, "Links")))
		ag_pf_findings_add(f, "network", U, r->links, "Links is not empty");
}

/*
 * What the engine itself writes on the host's disk for the container, and
 * how large a file the container can write: the log driver is "none" (its
 * output reaches AgentGuard over the attach stream only, bounded there),
 * and the fsize ulimit is exactly the spec's (or none).
 */
static void check_disk_writes(const json_t *v, const struct ag_probe_expect *x, json_t *insp,
			      struct ag_pf_findings *f)
{
	const enum ag_pf_verdict U = AG_PF_V_UNSAFE;
	const char *driver = ag_json_path_str(hc(v, "LogConfig"), "Type");
	json_object_set_new(insp, "log_driver",
			    json_string(driver && strcmp(driver, "none") == 0 ? "none" : "other"));
	if (!driver || strcmp(driver, "none") != 0)
		ag_pf_findings_add(f, "log_driver", U, "preflight.probe.log_driver",
				   "HostConfig.LogConfig.Type is not none: the engine would keep "
				   "the container's output on the host's disk");
	const json_t *ul = hc(v, "Ulimits");
	bool ul_ok;
	if (!x->file_size_max) {
		ul_ok = empty_list(ul);
	} else {
		const json_t *u = json_array_get(ul, 0);
		ul_ok = json_is_array(ul) && json_array_size(ul) == 1 &&
			strcmp(ag_json_str_or(json_object_get(u, "Name"), ""), "fsize") == 0 &&
			json_is_integer(json_object_get(u, "Soft")) &&
			json_is_integer(json_object_get(u, "Hard")) &&
			json_integer_value(json_object_get(u, "Soft")) == x->file_size_max &&
			json_integer_value(json_object_get(u, "Hard")) == x->file_size_max;
	}
	if (x->file_size_max)
		json_object_set_new(insp, "file_size_max",
				    ul_ok ? json_integer(x->file_size_max) : json_null());
	if (!ul_ok)
		ag_pf_findings_add(f, "ulimits", U, "preflight.probe.ulimits",
				   "HostConfig.Ulimits is not exactly what the spec rendered");
}

static int64_t spec_bytes(const char *size)
{
	int64_t b = 0;
	return size && ag_size_parse(size, AG_SIZE_CONFIG, &b) == 0 ? b : -1;
}

static int add_file_bind(struct ag_probe_expect *x, const char *source, const char *target, bool rw,
			 struct ag_error **err)
{
	if (x->n_file_binds >= AG_INSPECT_FILE_BINDS_MAX)
		return ag_err(err, AG_E_LIMIT, 0, "inspect.expect.mounts",
			      "the spec renders more file binds than inspection judges");
	x->file_binds[x->n_file_binds++] = (struct ag_bind_expect){source, target, rw};
	return 0;
}

int ag_inspect_expect_from_spec(const struct ag_exec_spec *s, const struct ag_inspect_created *c,
				struct ag_probe_expect *x, struct ag_error **err)
{
	if (ag_exec_spec_validate(s, err) < 0)
		return -1;
	if (!ag_is_container_id(c->id))
		return ag_err(err, AG_E_INTERNAL, 0, "inspect.expect.id",
			      "no container id to bind the inspection to");
	const char *own_net = s->network_name ? s->network_name : ag_network_name(s->network);
	if (c->connected && strcmp(c->connected, own_net) == 0)
		return ag_err(err, AG_E_INTERNAL, 0, "inspect.expect.networks",
			      "the connected network is the one the container was created on");
	*x = (struct ag_probe_expect){
	    .role = c->role,
	    .id = c->id,
	    .name = s->container_name,
	    .image_id = c->image_id,
	    .labels = s->labels,
	    .n_labels = s->n_labels,
	    .uid = s->uid,
	    .gid = s->gid,
	    .memory_bytes = spec_bytes(s->memory_limit),
	    .pids_limit = s->pids_limit,
	    .cpu = s->cpu_limit,
	    .entrypoint = s->init_host_path ? AG_EXEC_INIT_PATH
			  : s->entrypoint   ? s->entrypoint
					    : s->command[0],
	    .tmpfs_path = s->tmpfs_path,
	    .tmpfs_bytes = spec_bytes(s->tmpfs_size),
	    .workspace = s->workspace_container_path,
	    .workspace_bytes =
		s->workspace_host_path
		    ? 0
		    : spec_bytes(s->workspace_tmpfs_size ? s->workspace_tmpfs_size : s->tmpfs_size),
	    .bind_source = s->workspace_host_path,
	    .network = s->network,
	    .network_name = s->network_name,
	    .networks = {own_net, c->connected},
	    .n_networks = c->connected ? 2 : 1,
	    .network_alias = s->network_alias,
	    .ipv4_address = s->ipv4_address,
	    .dns = s->dns,
	    .n_dns = s->n_dns,
	    .ip_forward_off = s->ip_forward_off,
	    .group_add = s->group_add,
	    .file_size_max = s->file_size_max,
	    .runtime = s->runtime,
	};
	/* Every file bind the spec renders, each exactly once (one line here
	 * per such spec field). */
	if (s->probe_host_path &&
	    add_file_bind(x, s->probe_host_path, AG_EXEC_PROBE_PATH, false, err) < 0)
		return -1;
	if (s->init_host_path &&
	    add_file_bind(x, s->init_host_path, AG_EXEC_INIT_PATH, false, err) < 0)
		return -1;
	if (s->ca_host_path && add_file_bind(x, s->ca_host_path, AG_EXEC_CA_PATH, false, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n_file_binds; i++)
		if (add_file_bind(x, s->file_binds[i].host_path, s->file_binds[i].container_path,
				  !s->file_binds[i].read_only, err) < 0)
			return -1;
	return 0;
}

void ag_inspect_container(const json_t *v, const struct ag_probe_expect *x, json_t *insp,
			  struct ag_pf_findings *f)
{
	const enum ag_pf_verdict U = AG_PF_V_UNSAFE;
	/* identity */
	const char *id = ag_json_path_str(v, "Id");
	const char *name = ag_json_path_str(v, "Name");
	bool id_ok = id && x->id && strcmp(id, x->id) == 0;
	bool name_ok = !x->name || (name && name[0] == '/' && strcmp(name + 1, x->name) == 0);
	if (!id_ok)
		ag_pf_findings_add(f, "container_identity", U, "preflight.probe.identity_id",
				   "inspected Id differs from the id docker create returned");
	if (!name_ok)
		ag_pf_findings_add(f, "container_identity", U, "preflight.probe.identity_name",
				   "inspected Name differs from the name the spec gave");
	/* Every label the spec rendered, with its value (the image may add more). */
	const json_t *labels = ag_json_path(v, "Config.Labels");
	bool labels_ok = x->n_labels == 0 || json_is_object(labels);
	for (size_t i = 0; labels_ok && i < x->n_labels; i++) {
		const char *lv = ag_json_str_or(json_object_get(labels, x->labels[i].key), NULL);
		labels_ok = lv && strcmp(lv, x->labels[i].value) == 0;
	}
	if (!labels_ok)
		ag_pf_findings_add(f, "container_identity", U, "preflight.probe.identity_labels",
				   "owned labels missing or different");
	json_object_set_new(insp, "container_identity",
			    json_string(id_ok && name_ok && labels_ok ? "matched" : "mismatched"));
	const char *img = ag_json_path_str(v, "Image");
	bool img_ok = img && x->image_id && strcmp(img, x->image_id) == 0;
	if (!img_ok)
		ag_pf_findings_add(f, "image_identity", U, "preflight.probe.image",
				   "container image differs from the pinned local image id");
	json_object_set_new(insp, "image_identity", json_string(img_ok ? "matched" : "mismatched"));

	/* user */
	const char *user = ag_json_path_str(v, "Config.User");
	char *want_user = ag_xasprintf("%" PRId64 ":%" PRId64, x->uid, x->gid);
	if (user) {
		char *su = san_dup(user);
		json_object_set_new(insp, "uid_gid", json_string(su));
		free(su);
	} else {
		json_object_set_new(insp, "uid_gid", json_null());
	}
	if (!user || strcmp(user, want_user) != 0)
		ag_pf_findings_add(f, "uid_gid", U, "preflight.probe.user",
				   "Config.User is '%s', expected '%s'", user ? user : "(missing)",
				   want_user);
	free(want_user);

	/* memory, then pids: positive integers equal to what was requested */
	expect_limit(hc(v, "Memory"), "Memory", "memory_bytes", "memory", "preflight.probe.memory",
		     x->memory_bytes, insp, f);

	/* swap: the renderer sets --memory-swap equal to --memory (no swap) */
	const json_t *swap = hc(v, "MemorySwap");
	json_object_set_new(insp, "memory_swap_bytes",
			    json_is_integer(swap) ? json_integer(json_integer_value(swap))
						  : json_null());
	if (!json_is_integer(swap) || json_integer_value(swap) != x->memory_bytes)
		ag_pf_findings_add(f, "memory", U, "preflight.probe.memory_swap",
				   "HostConfig.MemorySwap differs from the memory limit (swap "
				   "would extend it)");

	expect_limit(hc(v, "PidsLimit"), "PidsLimit", "pids_limit", "pids", "preflight.probe.pids",
		     x->pids_limit, insp, f);

	/* cpu: NanoCpus and/or CpuQuota/CpuPeriod; strings are refused */
	const json_t *nano = hc(v, "NanoCpus");
	const json_t *quota = hc(v, "CpuQuota");
	const json_t *period = hc(v, "CpuPeriod");
	json_t *cpu = json_object();
	json_object_set_new(cpu, "requested_cpus", json_real(x->cpu));
	json_object_set_new(cpu, "nano_cpus",
			    json_is_integer(nano) ? json_integer(json_integer_value(nano))
						  : json_null());
	json_object_set_new(cpu, "cpu_quota",
			    json_is_integer(quota) ? json_integer(json_integer_value(quota))
						   : json_null());
	json_object_set_new(cpu, "cpu_period",
			    json_is_integer(period) ? json_integer(json_integer_value(period))
						    : json_null());
	bool bad_type = (nano && !json_is_integer(nano) && !json_is_null(nano)) ||
			(quota && !json_is_integer(quota) && !json_is_null(quota)) ||
			(period && !json_is_integer(period) && !json_is_null(period));
	/* cpu is positive (config: 0.1..8.0): round half up without libm. */
	long long want_nano = (long long)(x->cpu * 1e9 + 0.5);
	bool have_nano = json_is_integer(nano) && json_integer_value(nano) > 0;
	bool have_quota = json_is_integer(quota) && json_integer_value(quota) > 0 &&
			  json_is_integer(period) && json_integer_value(period) > 0;
	const char *repr = have_nano && have_quota ? "NanoCpus+CpuQuota/CpuPeriod"
			   : have_nano		   ? "NanoCpus"
			   : have_quota		   ? "CpuQuota/CpuPeriod"
						   : "none";
	json_object_set_new(cpu, "representation", json_string(repr));
	json_object_set_new(insp, "cpu", cpu);
	if (bad_type)
		ag_pf_findings_add(f, "cpu", U, "preflight.probe.cpu",
				   "CPU fields are not integers");
	else if (!have_nano && !have_quota)
		ag_pf_findings_add(f, "cpu", U, "preflight.probe.cpu",
				   "neither NanoCpus nor CpuQuota/CpuPeriod is set (no CPU limit)");
	else {
		if (have_nano && json_integer_value(nano) != want_nano)
			ag_pf_findings_add(f, "cpu", U, "preflight.probe.cpu",
					   "NanoCpus is %" JSON_INTEGER_FORMAT ", requested %lld",
					   json_integer_value(nano), want_nano);
		if (have_quota) {
			double ratio =
			    (double)json_integer_value(quota) / (double)json_integer_value(period);
			if (ratio - x->cpu > 1e-6 || x->cpu - ratio > 1e-6)
				ag_pf_findings_add(
				    f, "cpu", U, "preflight.probe.cpu",
				    "CpuQuota/CpuPeriod is %.6f CPUs, requested %.6f", ratio,
				    x->cpu);
		}
	}

	/* read-only root, no-new-privileges, capabilities, privileged */
	const json_t *ro = hc(v, "ReadonlyRootfs");
	json_object_set_new(insp, "read_only_rootfs", json_boolean(json_is_true(ro)));
	if (!json_is_true(ro))
		ag_pf_findings_add(f, "read_only_rootfs", U, "preflight.probe.read_only",
				   "HostConfig.ReadonlyRootfs is not true");
	check_disk_writes(v, x, insp, f);
	const json_t *secopt = hc(v, "SecurityOpt");
	bool nnp = array_has_str(secopt, "no-new-privileges") ||
		   array_has_str(secopt, "no-new-privileges:true") ||
		   array_has_str(secopt, "no-new-privileges=true");
	if (array_has_str(secopt, "no-new-privileges:false") ||
	    array_has_str(secopt, "no-new-privileges=false"))
		nnp = false;
	json_object_set_new(insp, "no_new_privileges", json_boolean(nnp));
	if (!nnp)
		ag_pf_findings_add(f, "no_new_privileges", U, "preflight.probe.no_new_privileges",
				   "SecurityOpt lacks no-new-privileges");
	if (json_is_array(secopt)) {
		size_t i;
		const json_t *s;
		json_array_foreach(secopt, i, s)
		{
			const char *o = ag_json_str_or(s, "");
			if (strstr(o, "unconfined"))
				ag_pf_findings_add(
				    f, "security_opt", U, "preflight.probe.security_opt",
				    "SecurityOpt '%s' disables a confinement profile", o);
		}
	}
	const json_t *capdrop = hc(v, "CapDrop");
	const json_t *capadd = hc(v, "CapAdd");
	bool drop_all = array_has_str(capdrop, "ALL");
	json_object_set_new(insp, "cap_drop_all", json_boolean(drop_all && empty_list(capadd)));
	if (!drop_all)
		ag_pf_findings_add(f, "capabilities", U, "preflight.probe.cap_drop",
				   "CapDrop does not contain ALL");
	if (!empty_list(capadd))
		ag_pf_findings_add(f, "capabilities", U, "preflight.probe.cap_add",
				   "CapAdd is not empty");
	const char *rt = ag_json_str_or(hc(v, "Runtime"), NULL);
	json_object_set_new(insp, "runtime", jstr_or_null_owned(san_dup(rt)));
	if (x->runtime && (!rt || strcmp(rt, x->runtime) != 0))
		ag_pf_findings_add(f, "runtime", U, "preflight.probe.runtime",
				   "HostConfig.Runtime is '%s', expected '%s'",
				   rt ? rt : "(missing)", x->runtime);
	const json_t *priv = hc(v, "Privileged");
	json_object_set_new(insp, "privileged", json_boolean(!json_is_false(priv)));
	if (!json_is_false(priv))
		ag_pf_findings_add(f, "privileged", U, "preflight.probe.privileged",
				   "HostConfig.Privileged is not false");

	/* network */
	const char *nm = ag_json_str_or(hc(v, "NetworkMode"), NULL);
	char *snm = san_dup(nm);
	json_object_set_new(insp, "network", jstr_or_null_owned(snm));
	const char *want_net = x->network_name ? x->network_name : ag_network_name(x->network);
	if (!nm || strcmp(nm, want_net) != 0)
		ag_pf_findings_add(f, "network", U, "preflight.probe.network",
				   "NetworkMode is '%s', expected '%s'", nm ? nm : "(missing)",
				   want_net);

	/* namespaces */
	static const char *const private_only[] = {"", "private"};
	static const char *const ipc_ok[] = {"", "private", "none"};
	static const char *const cgroupns_ok[] = {"private"};
	struct {
		const char *key;
		const char *const *ok;
		size_t n;
	} ns[] = {
	    {"PidMode", private_only, 2},     {"IpcMode", ipc_ok, 3},
	    {"UsernsMode", private_only, 2},  {"UTSMode", private_only, 2},
	    {"CgroupnsMode", cgroupns_ok, 1}, {"Cgroup", private_only, 1},
	};
	bool ns_shared = false;
	for (size_t i = 0; i < AG_ARRAY_SIZE(ns); i++) {
		const json_t *j = hc(v, ns[i].key);
		/* Cgroup (another container's cgroup) may be absent on old engines. */
		if (!j && strcmp(ns[i].key, "Cgroup") == 0)
			continue;
		const char *val = ag_json_str_or(j, NULL);
		if (!val || !str_in(val, ns[i].ok, ns[i].n)) {
			ns_shared = true;
			ag_pf_findings_add(f, "host_namespace_sharing", U,
					   "preflight.probe.namespace", "HostConfig.%s is '%s'",
					   ns[i].key, val ? val : "(missing)");
		}
	}
	json_object_set_new(insp, "host_namespace_sharing", json_boolean(ns_shared));

	/* devices */
	bool dev = !empty_list(hc(v, "Devices")) || !empty_list(hc(v, "DeviceRequests")) ||
		   !empty_list(hc(v, "DeviceCgroupRules"));
	json_object_set_new(insp, "device_exposure", json_boolean(dev));
	if (dev)
		ag_pf_findings_add(f, "device_exposure", U, "preflight.probe.devices",
				   "Devices, DeviceRequests or DeviceCgroupRules is not empty");
	const json_t *ga = hc(v, "GroupAdd");
	char want_group[24];
	snprintf(want_group, sizeof(want_group), "%" PRId64, x->group_add);
	/* exactly the one group the spec gave, or none */
	bool group_ok = x->group_add
			    ? json_is_array(ga) && json_array_size(ga) == 1 &&
				  strcmp(ag_json_str_or(json_array_get(ga, 0), ""), want_group) == 0
			    : empty_list(ga);
	if (!group_ok)
		ag_pf_findings_add(f, "uid_gid", U, "preflight.probe.group_add",
				   "GroupAdd is not exactly the supplementary group the spec gave");
	if (!empty_list(hc(v, "VolumesFrom")))
		ag_pf_findings_add(f, "mounts", U, "preflight.probe.volumes_from",
				   "VolumesFrom is not empty");

	/* mounts: no bind (but the workspace), no volume, nothing naming the docker socket */
	bool sock = false;
	size_t binds_seen = 0, file_seen[AG_INSPECT_FILE_BINDS_MAX] = {0};
	const json_t *binds = hc(v, "Binds");
	if (!empty_list(binds)) {
		size_t i;
		const json_t *b;
		json_array_foreach(binds, i, b) if (strstr(ag_json_str_or(b, ""), "docker.sock"))
		    sock = true;
		ag_pf_findings_add(f, "mounts", U, "preflight.probe.binds",
				   "HostConfig.Binds is not empty");
	}
	const json_t *mounts = json_object_get(v, "Mounts");
	if (mounts && !json_is_null(mounts) && !json_is_array(mounts))
		ag_pf_findings_add(f, "mounts", U, "preflight.probe.mounts",
				   "Mounts is not a list");
	if (json_is_array(mounts)) {
		size_t i;
		const json_t *mt;
		json_array_foreach(mounts, i, mt)
		{
			const char *type = ag_json_path_str(mt, "Type");
			const char *src = ag_json_path_str(mt, "Source");
			const char *dst = ag_json_path_str(mt, "Destination");
			if ((src && strstr(src, "docker.sock")) ||
			    (dst && strstr(dst, "docker.sock")))
				sock = true;
			bool is_ws_bind = x->bind_source && type && strcmp(type, "bind") == 0 &&
					  src && dst && strcmp(src, x->bind_source) == 0 &&
					  strcmp(dst, x->workspace) == 0;
			ssize_t rb = file_bind_index(x, type, src, dst);
			if (rb >= 0 && json_is_boolean(json_object_get(mt, "RW")) &&
			    json_is_true(json_object_get(mt, "RW")) == x->file_binds[rb].rw) {
				file_seen[rb]++;
				continue;
			}
			if (is_ws_bind) {
				binds_seen++;
				const json_t *rw = json_object_get(mt, "RW");
				if (!json_is_true(rw))
					ag_pf_findings_add(
					    f, "mounts", U, "preflight.probe.mounts",
					    "the workspace bind mount is not read-write");
				continue;
			}
			if (!type || strcmp(type, "tmpfs") != 0)
				ag_pf_findings_add(f, "mounts", U, "preflight.probe.mounts",
						   "mount of type '%s' at '%s'",
						   type ? type : "(missing)", dst ? dst : "?");
		}
	}
	for (size_t i = 0; i < x->n_file_binds; i++)
		if (file_seen[i] != 1)
			ag_pf_findings_add(f, "mounts", U, "preflight.probe.mounts",
					   "expected exactly one %s mount at %s, saw %zu",
					   x->file_binds[i].rw ? "read-write" : "read-only",
					   x->file_binds[i].target, file_seen[i]);
	if (x->bind_source && binds_seen != 1)
		ag_pf_findings_add(
		    f, "mounts", U, "preflight.probe.workspace_bind",
		    "expected exactly one bind mount of the prepared workspace, saw %zu",
		    binds_seen);
	const json_t *hcmounts = hc(v, "Mounts");
	size_t hc_ws = 0, hc_other = 0, hc_file[AG_INSPECT_FILE_BINDS_MAX] = {0};
	if (json_is_array(hcmounts)) {
		size_t i;
		const json_t *mt;
		json_array_foreach(hcmounts, i, mt)
		{
			const char *type = ag_json_path_str(mt, "Type");
			const char *src = ag_json_path_str(mt, "Source");
			const char *dst = ag_json_path_str(mt, "Target");
			ssize_t rb = file_bind_index(x, type, src, dst);
			if (x->bind_source && type && strcmp(type, "bind") == 0 && src && dst &&
			    strcmp(src, x->bind_source) == 0 && strcmp(dst, x->workspace) == 0 &&
			    !json_is_true(json_object_get(mt, "ReadOnly")))
				hc_ws++;
			else if (rb >= 0 && json_is_true(json_object_get(mt, "ReadOnly")) !=
						x->file_binds[rb].rw)
				hc_file[rb]++;
			else
				hc_other++;
		}
	}
	bool hc_file_ok = true;
	for (size_t i = 0; i < x->n_file_binds; i++)
		hc_file_ok = hc_file_ok && hc_file[i] == 1;
	if ((!empty_list(hcmounts) && !json_is_array(hcmounts)) || hc_other ||
	    hc_ws != (x->bind_source ? 1u : 0u) || !hc_file_ok)
		ag_pf_findings_add(f, "mounts", U, "preflight.probe.mounts",
				   "HostConfig.Mounts holds something other than the workspace");
	json_object_set_new(insp, "docker_socket_mount", json_boolean(sock));
	if (sock)
		ag_pf_findings_add(f, "docker_socket_mount", U, "preflight.probe.docker_socket",
				   "a mount names docker.sock");

	/* tmpfs */
	const json_t *tmpfs = hc(v, "Tmpfs");
	json_t *tp = json_array();
	if (!json_is_object(tmpfs)) {
		ag_pf_findings_add(f, "tmpfs", U, "preflight.probe.tmpfs",
				   "HostConfig.Tmpfs is missing");
	} else {
		const char *k;
		const json_t *o;
		json_object_foreach((json_t *)tmpfs, k, o)
		{
			char *sk = san_dup(k);
			json_array_append_new(tp, json_string(sk));
			free(sk);
			bool is_tmp = x->tmpfs_path && strcmp(k, x->tmpfs_path) == 0;
			bool is_ws = !x->bind_source && strcmp(k, x->workspace) == 0;
			if (!is_tmp && !is_ws) {
				ag_pf_findings_add(f, "tmpfs", U, "preflight.probe.tmpfs",
						   "unexpected tmpfs at '%s'", k);
				continue;
			}
			if (!json_is_string(o)) {
				ag_pf_findings_add(f, "tmpfs", U, "preflight.probe.tmpfs",
						   "tmpfs %s options are not a string", k);
				continue;
			}
			check_tmpfs_opts(k, json_string_value(o),
					 is_tmp ? x->tmpfs_bytes : x->workspace_bytes, x->uid,
					 x->gid, f);
		}
		if (!x->tmpfs_path || !json_object_get(tmpfs, x->tmpfs_path))
			ag_pf_findings_add(f, "tmpfs", U, "preflight.probe.tmpfs",
					   "no tmpfs at the scratch path");
		if (!x->bind_source && !json_object_get(tmpfs, x->workspace))
			ag_pf_findings_add(f, "tmpfs", U, "preflight.probe.tmpfs",
					   "no tmpfs at the workspace path");
	}
	json_object_set_new(insp, "tmpfs_paths", tp);
	check_process(v, x, f);
	check_networks(v, x, f);
}

/* ---- probe ---- */

bool ag_inspect_probe_gvisor(const json_t *v)
{
	return strcmp(ag_json_str_or(json_object_get(v, "kernel_release"), ""),
		      AG_GVISOR_KERNEL_RELEASE) == 0 &&
	       strcmp(ag_json_str_or(json_object_get(v, "kernel_version"), ""),
		      AG_GVISOR_KERNEL_VERSION) == 0 &&
	       strcmp(ag_json_str_or(json_object_get(v, "root_fs"), ""), "9p") == 0 &&
	       json_is_true(json_object_get(v, "root_fs_trans_fd"));
}

json_t *ag_inspect_probe_runtime_proof(const char *out, size_t len, bool truncated)
{
	json_t *v = NULL;
	struct ag_error *err = NULL;
	if (ag_docker_json_parse(out, len, truncated, NULL, AG_DOCKER_JSON_OBJECT, &v, &err) < 0) {
		ag_error_free(err);
		return NULL;
	}
	json_t *o = json_object();
	static const char *const keys[] = {"kernel_release", "kernel_version", "root_fs"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(keys); i++)
		json_object_set_new(
		    o, keys[i],
		    jstr_or_null_owned(san_dup(ag_json_str_or(json_object_get(v, keys[i]), NULL))));
	json_object_set_new(o, "root_fs_trans_fd",
			    json_boolean(json_is_true(json_object_get(v, "root_fs_trans_fd"))));
	json_object_set_new(o, "gvisor", json_boolean(ag_inspect_probe_gvisor(v)));
	json_decref(v);
	return o;
}

void ag_inspect_probe_output(const char *out, size_t len, bool truncated,
			     const struct ag_probe_expect *x, struct ag_pf_findings *f)
{
	const enum ag_pf_verdict U = AG_PF_V_UNSAFE;
	json_t *v = NULL;
	struct ag_error *err = NULL;
	if (ag_docker_json_parse(out, len, truncated, NULL, AG_DOCKER_JSON_OBJECT, &v, &err) < 0) {
		ag_pf_findings_add(f, "uid_gid_probe", U, "preflight.probe.output",
				   "probe output is not the expected JSON line (%s)", err->reason);
		ag_error_free(err);
		return;
	}
	const json_t *ju = json_object_get(v, "uid");
	const json_t *jg = json_object_get(v, "gid");
	if (strcmp(ag_json_str_or(json_object_get(v, "probe"), ""), "agentguard-preflight") != 0)
		ag_pf_findings_add(f, "uid_gid_probe", U, "preflight.probe.output",
				   "probe output lacks its marker");
	if (!json_is_integer(ju) || json_integer_value(ju) != x->uid || !json_is_integer(jg) ||
	    json_integer_value(jg) != x->gid)
		ag_pf_findings_add(f, "uid_gid_probe", U, "preflight.probe.identity",
				   "probe ran with a different uid/gid than required");
	/*
	 * Under gVisor (x->runtime) some facts are shown differently, and the
	 * probe's second reading of each is taken, never a weaker claim:
	 * statvfs does not flag the read-only root (its mount entry does),
	 * /proc/self/status has no NoNewPrivs or CapAmb line (prctl answers
	 * the first; the second is derived, below),
	 * and the container's cgroup limits are applied to the sandbox on the
	 * host, not shown inside (HostConfig carries them; pids and memory are
	 * then not proven from inside, which the docs say). Above all the
	 * probe must show gVisor's kernel (ag_inspect_probe_gvisor).
	 */
	bool gv = x->runtime != NULL;
	if (gv && !ag_inspect_probe_gvisor(v))
		ag_pf_findings_add(f, "runtime", U, "preflight.probe.runtime_unproven",
				   "the probe does not show gVisor's kernel from inside");
	static const char *const flags[] = {"workspace_write", "tmp_write", "root_read_only"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(flags); i++) {
		bool ok = json_is_true(json_object_get(v, flags[i]));
		if (!ok && gv && i == 2)
			ok = json_is_true(json_object_get(v, "root_ro_mount"));
		if (!ok)
			ag_pf_findings_add(f, "uid_gid_probe", U, "preflight.probe.write_checks",
					   "probe check %s failed", flags[i]);
	}
	/* CONTRACT: container.capabilities (every set empty, seen from inside) */
	static const char *const caps[] = {"cap_inh", "cap_prm", "cap_eff", "cap_bnd", "cap_amb"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(caps); i++) {
		const json_t *cj = json_object_get(v, caps[i]);
		if (gv && i == 4 && json_is_null(cj))
			cj = json_object_get(v, "cap_amb_prctl");
		const char *c = ag_json_str_or(cj, "");
		bool zero = *c && strspn(c, "0") == strlen(c);
		/* gVisor answers neither (no CapAmb line, no PR_CAP_AMBIENT): the
		 * ambient set is a subset of permitted and inheritable, both shown
		 * empty above, so it is empty */
		if (gv && i == 4 && !zero && json_is_null(cj)) {
			const char *prm = ag_json_str_or(json_object_get(v, "cap_prm"), "");
			const char *inh = ag_json_str_or(json_object_get(v, "cap_inh"), "");
			zero = *prm && strspn(prm, "0") == strlen(prm) && *inh &&
			       strspn(inh, "0") == strlen(inh);
		}
		if (!zero)
			ag_pf_findings_add(f, "capabilities", U, "preflight.probe.capabilities",
					   "the probe holds capabilities (%s)", caps[i]);
	}
	const json_t *nnp = json_object_get(v, "no_new_privs");
	if (gv && json_is_null(nnp))
		nnp = json_object_get(v, "nnp_prctl");
	if (!json_is_integer(nnp) || json_integer_value(nnp) != 1)
		ag_pf_findings_add(f, "no_new_privileges", U, "preflight.probe.no_new_privs",
				   "NoNewPrivs is not 1 inside the container");
	const json_t *sc = json_object_get(v, "seccomp");
	if (!json_is_integer(sc) || json_integer_value(sc) != 2)
		ag_pf_findings_add(f, "seccomp", U, "preflight.probe.seccomp",
				   "the probe does not run under a seccomp filter");
	const json_t *ifs = json_object_get(v, "net_ifaces");
	bool has_lo = false, other = false;
	size_t i;
	const json_t *n;
	if (json_is_array(ifs))
		json_array_foreach(ifs, i, n)
		{
			if (strcmp(ag_json_str_or(n, ""), "lo") == 0)
				has_lo = true;
			else
				other = true;
		}
	if (!json_is_array(ifs) || !has_lo || (x->network == AG_NET_NONE && other))
		ag_pf_findings_add(f, "network", U, "preflight.probe.network",
				   "the probe sees network interfaces other than lo");
	if (!json_is_false(json_object_get(v, "docker_socket")))
		ag_pf_findings_add(f, "docker_socket_mount", U, "preflight.probe.docker_socket",
				   "a Docker or containerd socket is reachable inside");
	/* gVisor shows no cgroup inside: both null is the only other answer */
	bool hidden = gv && json_is_null(json_object_get(v, "pids_max")) &&
		      json_is_null(json_object_get(v, "memory_max"));
	const char *pm = ag_json_str_or(json_object_get(v, "pids_max"), "");
	int64_t pv = -1;
	if (!hidden && (ag_parse_i64(pm, &pv) < 0 || pv != x->pids_limit))
		ag_pf_findings_add(f, "pids_limit", U, "preflight.probe.pids",
				   "the container's cgroup does not show the pids limit");
	const char *mm = ag_json_str_or(json_object_get(v, "memory_max"), "");
	int64_t mv = -1;
	if (!hidden && (ag_parse_i64(mm, &mv) < 0 || mv != x->memory_bytes))
		ag_pf_findings_add(f, "memory", U, "preflight.probe.memory",
				   "the container's cgroup does not show the memory limit");
	json_decref(v);
}
