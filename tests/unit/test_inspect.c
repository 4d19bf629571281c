/*
 * test_inspect.c: the bounded docker JSON parser and the pure preflight
 * validators, against real answers captured from the test engine
 * (tests/fixtures/docker/, *.json) and hand-edited faulty variants.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/config/imageref.h"
#include "lib/docker/docker_json.h"
#include "lib/base/size.h"
#include "lib/config/config.h"
#include "lib/docker/inspect.h"

#include <setjmp.h>
#include <cmocka.h>

#define CID "0d8a852c6d70735e685f00a877aafbcd62feafc75c979a9064c6100beb866306"
#define PNAME "agentguard-preflight-0123456789abcdef"
#define IMG_ID "sha256:5a6f72bf07494de44803a393e87fa18d81b1adb5d4b3962f3c6d190b9c6448c7"
#define IMG_REF                                                                                    \
	"127.0.0.1:5000/agentguard-test@sha256:"                                                   \
	"544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47"

static char *read_fixture(const char *name, size_t *len)
{
	const char *root = getenv("AG_ROOT");
	char *p = ag_xasprintf("%s/tests/fixtures/docker/%s", root ? root : ".", name);
	FILE *f = fopen(p, "rb");
	if (!f)
		fail_msg("cannot open fixture %s", p);
	free(p);
	char *buf = ag_xmalloc(1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static json_t *fixture(const char *name)
{
	size_t len;
	char *s = read_fixture(name, &len);
	json_t *v = NULL;
	struct ag_error *err = NULL;
	int r = ag_docker_json_parse(
	    s, len, false, NULL, AG_DOCKER_JSON_UNWRAP_SINGLE | AG_DOCKER_JSON_OBJECT, &v, &err);
	if (r < 0)
		fail_msg("fixture %s: %s", name, err->reason);
	free(s);
	return v;
}

/* ---- docker_json ---- */

static const char *parse_reason(const char *doc, bool truncated, unsigned flags)
{
	json_t *v = NULL;
	struct ag_error *err = NULL;
	static char reason[64];
	if (ag_docker_json_parse(doc, strlen(doc), truncated, NULL, flags, &v, &err) == 0) {
		json_decref(v);
		return "ok";
	}
	snprintf(reason, sizeof(reason), "%s", err->reason);
	ag_error_free(err);
	return reason;
}

static char *nest(size_t depth)
{
	char *s = ag_xmalloc(depth * 2 + 1);
	for (size_t i = 0; i < depth; i++) {
		s[i] = '[';
		s[depth * 2 - 1 - i] = ']';
	}
	s[depth * 2] = '\0';
	return s;
}

static void test_json_bounds(void **state)
{
	(void)state;
	const unsigned O = AG_DOCKER_JSON_OBJECT, U = AG_DOCKER_JSON_UNWRAP_SINGLE;
	assert_string_equal(parse_reason("{\"a\":1}\n", false, O), "ok");
	assert_string_equal(parse_reason("[{\"a\":1}]", false, U | O), "ok");
	assert_string_equal(parse_reason("", false, O), "docker.json.empty");
	assert_string_equal(parse_reason(" \n", false, O), "docker.json.empty");
	assert_string_equal(parse_reason("{\"a\":", false, O), "docker.json.malformed");
	assert_string_equal(parse_reason("{\"a\":1} x", false, O), "docker.json.malformed");
	assert_string_equal(parse_reason("{\"a\":1,\"a\":2}", false, O), "docker.json.malformed");
	assert_string_equal(parse_reason("{\"a\":\"x\\u0000y\"}", false, O),
			    "docker.json.malformed");
	assert_string_equal(parse_reason("{\"a\":1}", true, O), "docker.json.too_large");
	assert_string_equal(parse_reason("[1]", false, O), "docker.json.not_object");
	assert_string_equal(parse_reason("[]", false, U | O), "docker.json.not_single");
	assert_string_equal(parse_reason("[{},{}]", false, U | O), "docker.json.not_single");
	assert_string_equal(parse_reason("\"s\"", false, U | O), "docker.json.not_object");
	/* depth: 32 ok, 33 refused */
	char *d32 = nest(AG_PF_JSON_MAX_DEPTH), *d33 = nest(AG_PF_JSON_MAX_DEPTH + 1);
	assert_string_equal(parse_reason(d32, false, 0), "ok");
	assert_string_equal(parse_reason(d33, false, 0), "docker.json.depth");
	free(d32);
	free(d33);
	/* items: 512 ok, 513 refused */
	for (size_t n = AG_PF_JSON_MAX_ITEMS; n <= AG_PF_JSON_MAX_ITEMS + 1; n++) {
		char *s = ag_xmalloc(n * 2 + 3);
		size_t k = 0;
		s[k++] = '[';
		for (size_t i = 0; i < n; i++) {
			s[k++] = '0';
			s[k++] = i + 1 < n ? ',' : ']';
		}
		s[k] = '\0';
		assert_string_equal(parse_reason(s, false, 0),
				    n == AG_PF_JSON_MAX_ITEMS ? "ok" : "docker.json.items");
		free(s);
	}
	/* size: over 64 KiB refused before parsing */
	size_t big = AG_PF_JSON_MAX_BYTES + 1;
	char *s = ag_xmalloc(big + 1);
	memset(s, ' ', big);
	s[0] = '{';
	s[big - 1] = '}';
	s[big] = '\0';
	assert_string_equal(parse_reason(s, false, O), "docker.json.too_large");
	free(s);
	/* string length bound, with a small custom limit */
	struct ag_docker_json_limits lim = {1024, 4, 4, 8};
	json_t *v = NULL;
	struct ag_error *err = NULL;
	assert_int_equal(
	    ag_docker_json_parse("{\"k\":\"123456789\"}", 17, false, &lim, 0, &v, &err), -1);
	assert_string_equal(err->reason, "docker.json.string");
	ag_error_free(err);
	err = NULL;
	assert_int_equal(ag_docker_json_parse("{\"k\":[1,2,3,4,5]}", 17, false, &lim, 0, &v, &err),
			 -1);
	assert_string_equal(err->reason, "docker.json.items");
	ag_error_free(err);
}

static void test_json_path(void **state)
{
	(void)state;
	json_t *v = fixture("container.json");
	assert_string_equal(ag_json_path_str(v, "HostConfig.NetworkMode"), "none");
	assert_null(ag_json_path(v, "HostConfig.Nope"));
	assert_null(ag_json_path_str(v, "HostConfig.Memory"));
	assert_string_equal(ag_json_path_str(v, "Config.User"), "2001:2001");
	json_decref(v);
}

/* ---- version / info / platform ---- */

static void facts_from(const char *version, const char *info, struct ag_engine_facts *e,
		       struct ag_pf_findings *f)
{
	memset(e, 0, sizeof(*e));
	e->ncpu = -1;
	json_t *v = fixture(version);
	ag_inspect_version(v, e, f);
	json_decref(v);
	if (info) {
		json_t *i = fixture(info);
		ag_inspect_info(i, e, f);
		json_decref(i);
	}
}

static void test_engine_real(void **state)
{
	(void)state;
	struct ag_engine_facts e;
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	facts_from("version.json", "info.json", &e, &f);
	ag_inspect_platform_claim(&e, AG_PLATFORM_LINUX_ENGINE, &f);
	ag_inspect_resource_support(&e, &f);
	ag_inspect_api_support(&e, &f);
	assert_int_equal(f.n, 0);
	assert_string_equal(e.os, "linux");
	assert_string_equal(e.arch, "amd64");
	assert_string_equal(e.api_version, "1.41");
	assert_int_equal(e.api_major, 1);
	assert_int_equal(e.api_minor, 41);
	assert_false(e.desktop);
	assert_true(e.ncpu > 0);
	assert_string_equal(e.cgroup_driver, "cgroupfs");
	assert_int_equal(e.security_options.n, 1);
	/* the real engine is not Desktop: a desktop plan is unsafe */
	ag_inspect_platform_claim(&e, AG_PLATFORM_DESKTOP_EXPERIMENTAL, &f);
	assert_true(ag_pf_findings_find(&f, "preflight.platform.not_desktop") >= 0);
	ag_engine_facts_release(&e);
}

static void test_engine_faults(void **state)
{
	(void)state;
	static const struct {
		const char *version, *info;
		enum ag_platform platform;
		const char *reason;
		enum ag_pf_verdict verdict;
	} cases[] = {
	    {"version.json", "info-windows.json", AG_PLATFORM_LINUX_ENGINE,
	     "preflight.engine.contradiction", AG_PF_V_UNSAFE},
	    {"version.json", "info-desktop.json", AG_PLATFORM_LINUX_ENGINE,
	     "preflight.platform.desktop", AG_PF_V_UNSAFE},
	    {"version-desktop.json", "info.json", AG_PLATFORM_LINUX_ENGINE,
	     "preflight.platform.desktop", AG_PF_V_UNSAFE},
	    {"version.json", "info-no-memory-limit.json", AG_PLATFORM_LINUX_ENGINE,
	     "preflight.resources.memory_unsupported", AG_PF_V_UNSAFE},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		struct ag_engine_facts e;
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		facts_from(cases[i].version, cases[i].info, &e, &f);
		ag_inspect_platform_claim(&e, cases[i].platform, &f);
		ag_inspect_resource_support(&e, &f);
		ssize_t k = ag_pf_findings_find(&f, cases[i].reason);
		if (k < 0)
			fail_msg("case %zu: no %s", i, cases[i].reason);
		assert_int_equal(f.v[k].verdict, cases[i].verdict);
		ag_engine_facts_release(&e);
	}
	/* desktop detected + desktop plan: passes */
	struct ag_engine_facts e;
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	facts_from("version.json", "info-desktop.json", &e, &f);
	ag_inspect_platform_claim(&e, AG_PLATFORM_DESKTOP_EXPERIMENTAL, &f);
	assert_int_equal(f.n, 0);
	assert_true(e.desktop);
	ag_engine_facts_release(&e);
}

static void test_version_shapes(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *reason;
	} cases[] = {
	    {"{\"Client\":{\"Version\":\"1\"}}", "docker.version.no_server"},
	    {"{\"Server\":{}}", "docker.version.no_client"},
	    {"{\"Client\":{\"Version\":\"1\"},\"Server\":{\"Version\":\"2\",\"ApiVersion\":\"x\","
	     "\"Os\":\"linux\",\"Arch\":\"amd64\"}}",
	     "docker.version.api_version"},
	    {"{\"Client\":{\"Version\":\"1\"},\"Server\":{\"Version\":\"2\",\"ApiVersion\":\"1."
	     "41\","
	     "\"Os\":\"windows\",\"Arch\":\"amd64\"}}",
	     "preflight.engine.not_linux"},
	    {"{\"Client\":{\"Version\":\"1\"},\"Server\":{\"Version\":\"2\",\"ApiVersion\":\"1."
	     "41\","
	     "\"Os\":\"linux\",\"Arch\":\"\"}}",
	     "docker.version.arch"},
	    {"{\"Client\":{\"Version\":\"1\"},\"Server\":{\"Version\":2,\"ApiVersion\":\"1.41\","
	     "\"Os\":\"linux\",\"Arch\":\"amd64\"}}",
	     "docker.version.server_version"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		json_t *v = json_loads(cases[i].doc, 0, NULL);
		assert_non_null(v);
		struct ag_engine_facts e = {.ncpu = -1};
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_version(v, &e, &f);
		if (ag_pf_findings_find(&f, cases[i].reason) < 0)
			fail_msg("case %zu: no %s", i, cases[i].reason);
		json_decref(v);
		ag_engine_facts_release(&e);
	}
	/* API 1.24 is too old for read-only root + tmpfs */
	struct ag_engine_facts e = {
	    .api_version = ag_xstrdup("1.24"), .api_major = 1, .api_minor = 24};
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_api_support(&e, &f);
	assert_true(ag_pf_findings_find(&f, "preflight.api.too_old") >= 0);
	ag_engine_facts_release(&e);
}

/* ---- network / image ---- */

static void test_network(void **state)
{
	(void)state;
	json_t *none = fixture("network-none.json"), *bridge = fixture("network-bridge.json");
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_network(none, AG_NET_NONE, &f);
	ag_inspect_network(bridge, AG_NET_BRIDGE, &f);
	assert_int_equal(f.n, 0);
	ag_inspect_network(bridge, AG_NET_NONE, &f);
	assert_true(ag_pf_findings_find(&f, "preflight.network.mismatch") >= 0);
	assert_int_equal(ag_pf_findings_worst(&f), AG_PF_V_UNSAFE);
	json_decref(none);
	json_decref(bridge);
}

static void image_case(const char *fixture_name, const char *ref_s, const char *want_reason)
{
	struct ag_image_ref ref = {0};
	struct ag_error *err = NULL;
	assert_int_equal(ag_image_ref_parse(ref_s, &ref, &err), 0);
	json_t *v = fixture(fixture_name);
	struct ag_image_facts im = {0};
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_image(v, &ref, &im, &f);
	if (!want_reason) {
		assert_int_equal(f.n, 0);
		assert_string_equal(im.local_image_id, IMG_ID);
		assert_string_equal(im.registry_digest, IMG_REF);
		assert_string_equal(im.platform, "linux/amd64");
	} else if (ag_pf_findings_find(&f, want_reason) < 0) {
		fail_msg("%s: no %s", fixture_name, want_reason);
	}
	ag_image_facts_release(&im);
	ag_image_ref_release(&ref);
	json_decref(v);
}

static void test_image(void **state)
{
	(void)state;
	image_case("image.json", IMG_REF, NULL);
	image_case("image-other-digest.json", IMG_REF, "preflight.image.digest_mismatch");
	/* a tag-only reference is refused even if it reached this point */
	image_case("image.json", "127.0.0.1:5000/agentguard-test:1", "preflight.image.not_pinned");
	/* same digest under another repository name does not count */
	image_case("image.json",
		   "127.0.0.1:5000/other@sha256:"
		   "544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47",
		   "preflight.image.digest_mismatch");
}

/* ---- container inspect ---- */

/*
 * The spec that rendered the recorded container (tests/fixtures/docker/
 * container.json): every expectation below is derived from it, never
 * written by hand.
 */
#define FIXTURE_IMAGE                                                                              \
	"127.0.0.1:5000/agentguard-test@sha256:"                                                   \
	"544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47"
static const struct ag_label fixture_labels[] = {
    {"agentguard.owner", "preflight"},
    {"agentguard.preflight", "resource-controls"},
    {"agentguard.preflight.name", PNAME},
};
static const char *const fixture_cmd[] = {"/bin/sh", "-c", "true"};

static struct ag_exec_spec fixture_spec(void)
{
	return (struct ag_exec_spec){
	    .image = FIXTURE_IMAGE,
	    .network = AG_NET_NONE,
	    .uid = 2001,
	    .gid = 2001,
	    .cpu_limit = 1.0,
	    .memory_limit = "512m",
	    .pids_limit = 256,
	    .tmpfs_path = "/tmp",
	    .tmpfs_size = "256m",
	    .workspace_container_path = "/agentguard-workspace",
	    .container_name = PNAME,
	    .labels = fixture_labels,
	    .n_labels = AG_ARRAY_SIZE(fixture_labels),
	    .command = fixture_cmd,
	    .n_command = AG_ARRAY_SIZE(fixture_cmd),
	};
}

static struct ag_probe_expect expect_of(const struct ag_exec_spec *s, enum ag_inspect_role role,
					const char *connected)
{
	struct ag_probe_expect x;
	struct ag_error *err = NULL;
	const struct ag_inspect_created made = {role, CID, IMG_ID, connected};
	if (ag_inspect_expect_from_spec(s, &made, &x, &err) < 0)
		fail_msg("expectation: %s", err->reason);
	return x;
}

/*
 * The recorded answer predates --no-healthcheck in the create request;
 * the renderer now always sends Healthcheck {"Test":["NONE"]}.
 */
static json_t *container_fixture(const char *name)
{
	json_t *v = fixture(name);
	json_object_set_new(json_object_get(v, "Config"), "Healthcheck",
			    json_pack("{s:[s]}", "Test", "NONE"));
	return v;
}

static void test_container_real(void **state)
{
	(void)state;
	json_t *v = container_fixture("container.json");
	json_t *insp = json_object();
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	const struct ag_exec_spec spec = fixture_spec();
	const struct ag_probe_expect expect = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	ag_inspect_container(v, &expect, insp, &f);
	for (size_t i = 0; i < f.n; i++)
		print_message("finding: %s %s\n", f.v[i].reason, f.v[i].detail);
	assert_int_equal(f.n, 0);
	assert_string_equal(json_string_value(json_object_get(insp, "container_identity")),
			    "matched");
	assert_int_equal(json_integer_value(json_object_get(insp, "pids_limit")), 256);
	assert_true(json_is_false(json_object_get(insp, "host_namespace_sharing")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(insp, "cpu"), "representation")),
	    "NanoCpus");
	json_decref(insp);
	json_decref(v);
}

static void container_fault(const char *name, const char *reason)
{
	json_t *v = container_fixture(name);
	json_t *insp = json_object();
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	const struct ag_exec_spec spec = fixture_spec();
	const struct ag_probe_expect expect = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	ag_inspect_container(v, &expect, insp, &f);
	if (ag_pf_findings_find(&f, reason) < 0)
		fail_msg("%s: no %s", name, reason);
	assert_int_equal(ag_pf_findings_worst(&f), AG_PF_V_UNSAFE);
	json_decref(insp);
	json_decref(v);
}

static void test_container_fixture_faults(void **state)
{
	(void)state;
	container_fault("container-downgraded-memory.json", "preflight.probe.memory");
	container_fault("container-pids-zero.json", "preflight.probe.pids");
	container_fault("container-nanocpus-zero.json", "preflight.probe.cpu");
	container_fault("container-docker-sock.json", "preflight.probe.docker_socket");
	container_fault("container-docker-sock.json", "preflight.probe.binds");
	container_fault("container-host-namespaces.json", "preflight.probe.namespace");
	container_fault("container-other-id.json", "preflight.probe.identity_id");
}

/* Table of single-field edits of the real inspect answer. */
static void test_container_mutations(void **state)
{
	(void)state;
	static const struct {
		const char *section; /* "HostConfig", "Config" or "" (top) */
		const char *key;
		const char *json; /* new value; NULL deletes the key */
		const char *reason;
	} cases[] = {
	    {"HostConfig", "Memory", "0", "preflight.probe.memory"},
	    {"HostConfig", "Memory", NULL, "preflight.probe.memory"},
	    {"HostConfig", "Memory", "\"536870912\"", "preflight.probe.memory"},
	    {"HostConfig", "Memory", "1073741824", "preflight.probe.memory"},
	    {"HostConfig", "MemorySwap", "-1", "preflight.probe.memory_swap"},
	    {"HostConfig", "MemorySwap", NULL, "preflight.probe.memory_swap"},
	    {"HostConfig", "PidsLimit", NULL, "preflight.probe.pids"},
	    {"HostConfig", "PidsLimit", "-1", "preflight.probe.pids"},
	    {"HostConfig", "PidsLimit", "4096", "preflight.probe.pids"},
	    {"HostConfig", "NanoCpus", "500000000", "preflight.probe.cpu"},
	    {"HostConfig", "NanoCpus", "\"1000000000\"", "preflight.probe.cpu"},
	    {"HostConfig", "ReadonlyRootfs", "false", "preflight.probe.read_only"},
	    {"HostConfig", "SecurityOpt", "[]", "preflight.probe.no_new_privileges"},
	    {"HostConfig", "SecurityOpt", "[\"no-new-privileges\",\"seccomp=unconfined\"]",
	     "preflight.probe.security_opt"},
	    {"HostConfig", "CapDrop", "[\"NET_RAW\"]", "preflight.probe.cap_drop"},
	    {"HostConfig", "CapAdd", "[\"SYS_ADMIN\"]", "preflight.probe.cap_add"},
	    {"HostConfig", "Privileged", "true", "preflight.probe.privileged"},
	    {"HostConfig", "Privileged", NULL, "preflight.probe.privileged"},
	    {"HostConfig", "NetworkMode", "\"host\"", "preflight.probe.network"},
	    {"HostConfig", "NetworkMode", "\"bridge\"", "preflight.probe.network"},
	    {"HostConfig", "PidMode", "\"host\"", "preflight.probe.namespace"},
	    {"HostConfig", "IpcMode", "\"container:abc\"", "preflight.probe.namespace"},
	    {"HostConfig", "IpcMode", "\"shareable\"", "preflight.probe.namespace"},
	    {"HostConfig", "UsernsMode", "\"host\"", "preflight.probe.namespace"},
	    {"HostConfig", "UTSMode", "\"host\"", "preflight.probe.namespace"},
	    {"HostConfig", "CgroupnsMode", "\"host\"", "preflight.probe.namespace"},
	    {"HostConfig", "CgroupnsMode", "\"\"", "preflight.probe.namespace"},
	    {"HostConfig", "Cgroup", "\"container:abc\"", "preflight.probe.namespace"},
	    {"HostConfig", "Devices",
	     "[{\"PathOnHost\":\"/dev/kvm\",\"PathInContainer\":\"/dev/kvm\","
	     "\"CgroupPermissions\":\"rwm\"}]",
	     "preflight.probe.devices"},
	    {"HostConfig", "DeviceRequests", "[{\"Driver\":\"nvidia\"}]",
	     "preflight.probe.devices"},
	    {"HostConfig", "GroupAdd", "[\"docker\"]", "preflight.probe.group_add"},
	    {"HostConfig", "Binds", "[\"/srv:/srv\"]", "preflight.probe.binds"},
	    {"HostConfig", "Tmpfs", NULL, "preflight.probe.tmpfs"},
	    {"HostConfig", "Tmpfs",
	     "{\"/tmp\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001,mode=700\"}",
	     "preflight.probe.tmpfs"},
	    {"HostConfig", "Tmpfs",
	     "{\"/tmp\":\"rw,exec,nosuid,nodev,size=256m,uid=2001,gid=2001,mode=700\","
	     "\"/agentguard-workspace\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001,"
	     "mode=700\"}",
	     "preflight.probe.tmpfs_options"},
	    {"HostConfig", "Tmpfs",
	     "{\"/tmp\":\"rw,noexec,nosuid,nodev,size=1g,uid=2001,gid=2001,mode=700\","
	     "\"/agentguard-workspace\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001,"
	     "mode=700\"}",
	     "preflight.probe.tmpfs_options"},
	    {"HostConfig", "Tmpfs",
	     "{\"/tmp\":\"rw,noexec,nosuid,nodev,size=256m,uid=0,gid=2001,mode=700\","
	     "\"/agentguard-workspace\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001,"
	     "mode=700\"}",
	     "preflight.probe.tmpfs_options"},
	    {"HostConfig", "Tmpfs",
	     "{\"/tmp\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001\","
	     "\"/agentguard-workspace\":\"rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2001,"
	     "mode=700\"}",
	     "preflight.probe.tmpfs_options"},
	    {"Config", "User", "\"0:0\"", "preflight.probe.user"},
	    {"Config", "User", "\"\"", "preflight.probe.user"},
	    {"Config", "Labels", "{\"agentguard.owner\":\"someone-else\"}",
	     "preflight.probe.identity_labels"},
	    {"", "Name", "\"/agentguard-preflight-ffffffffffffffff\"",
	     "preflight.probe.identity_name"},
	    {"", "Image",
	     "\"sha256:"
	     "0000000000000000000000000000000000000000000000000000000000000000\"",
	     "preflight.probe.image"},
	    {"", "Mounts", "[{\"Type\":\"volume\",\"Name\":\"x\",\"Destination\":\"/data\"}]",
	     "preflight.probe.mounts"},
	    /* the engine would keep the container's output on the host's disk */
	    {"HostConfig", "LogConfig", "{\"Type\":\"json-file\",\"Config\":{}}",
	     "preflight.probe.log_driver"},
	    {"HostConfig", "LogConfig", NULL, "preflight.probe.log_driver"},
	    {"HostConfig", "Ulimits", "[{\"Name\":\"nofile\",\"Soft\":1024,\"Hard\":1024}]",
	     "preflight.probe.ulimits"},
	};
	const struct ag_exec_spec spec = fixture_spec();
	const struct ag_probe_expect expect = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		json_t *v = container_fixture("container.json");
		json_t *obj = *cases[i].section ? json_object_get(v, cases[i].section) : v;
		if (cases[i].json) {
			json_error_t je;
			json_t *nv = json_loads(cases[i].json, JSON_DECODE_ANY, &je);
			if (!nv)
				fail_msg("case %zu: bad test JSON", i);
			json_object_set_new(obj, cases[i].key, nv);
		} else {
			json_object_del(obj, cases[i].key);
		}
		json_t *insp = json_object();
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_container(v, &expect, insp, &f);
		if (ag_pf_findings_find(&f, cases[i].reason) < 0)
			fail_msg("case %zu (%s.%s): no %s", i, cases[i].section, cases[i].key,
				 cases[i].reason);
		assert_int_equal(ag_pf_findings_worst(&f), AG_PF_V_UNSAFE);
		json_decref(insp);
		json_decref(v);
	}
}

/*
 * Drift: every spec field the inspection judges changes the expectation.
 * The recorded container was created from fixture_spec(); a spec that
 * differs in one field (as a later change to what AgentGuard asks for
 * would) must make inspection of that old container fail with the named
 * reason, so what is asked for and what is checked cannot part ways.
 */
static const char *const study_dns[] = {"127.0.0.1"};
static const struct ag_label extra_label[] = {
    {"agentguard.owner", "preflight"},
    {"agentguard.preflight", "resource-controls"},
    {"agentguard.preflight.name", PNAME},
    {"agentguard.contained-run.id", "0123456789abcdef"},
};
static const struct ag_label other_value[] = {
    {"agentguard.owner", "contained-run"},
    {"agentguard.preflight", "resource-controls"},
    {"agentguard.preflight.name", PNAME},
};
static const char *const other_cmd[] = {"/bin/busybox", "sh", "-c", "true"};

static void edit_pids(struct ag_exec_spec *s)
{
	s->pids_limit = 512;
}
static void edit_memory(struct ag_exec_spec *s)
{
	s->memory_limit = "1g";
}
static void edit_cpu(struct ag_exec_spec *s)
{
	s->cpu_limit = 2.0;
}
static void edit_uid(struct ag_exec_spec *s)
{
	s->uid = 2002;
}
static void edit_gid(struct ag_exec_spec *s)
{
	s->gid = 2002;
}
static void edit_tmpfs_size(struct ag_exec_spec *s)
{
	s->tmpfs_size = "128m";
}
static void edit_ws_size(struct ag_exec_spec *s)
{
	s->workspace_tmpfs_size = "64m";
}
static void edit_tmpfs_path(struct ag_exec_spec *s)
{
	s->tmpfs_path = "/scratch";
}
static void edit_ws_path(struct ag_exec_spec *s)
{
	s->workspace_container_path = "/work";
}
static void edit_ws_bind(struct ag_exec_spec *s)
{
	s->workspace_host_path = "/srv/ws";
}
static void edit_probe_mount(struct ag_exec_spec *s)
{
	s->probe_host_path = "/usr/lib/probe";
}
static void edit_extra_label(struct ag_exec_spec *s)
{
	s->labels = extra_label;
	s->n_labels = AG_ARRAY_SIZE(extra_label);
}
/* The agent's init (its own read-only bind and the entrypoint). */
static void edit_init(struct ag_exec_spec *s)
{
	s->probe_host_path = NULL;
	s->entrypoint = NULL;
	s->init_host_path = "/usr/lib/agentguard/agentguard-init";
	s->init_deadline_seconds = 60;
}
static void edit_label_value(struct ag_exec_spec *s)
{
	s->labels = other_value;
	s->n_labels = AG_ARRAY_SIZE(other_value);
}
static void edit_name(struct ag_exec_spec *s)
{
	s->container_name = "agentguard-preflight-other";
}
static void edit_entrypoint(struct ag_exec_spec *s)
{
	s->entrypoint = "/agentguard-probe";
}
static void edit_command0(struct ag_exec_spec *s)
{
	s->command = other_cmd;
	s->n_command = AG_ARRAY_SIZE(other_cmd);
}
static void edit_network(struct ag_exec_spec *s)
{
	s->network = AG_NET_BRIDGE;
}
static void edit_study_net(struct ag_exec_spec *s)
{
	s->network_name = "agentguard-study-net";
	s->dns = study_dns;
	s->n_dns = 1;
}
static void edit_dns(struct ag_exec_spec *s)
{
	edit_study_net(s);
}
static void edit_sysctl(struct ag_exec_spec *s)
{
	edit_study_net(s);
	s->ip_forward_off = true;
}
static void edit_group(struct ag_exec_spec *s)
{
	edit_study_net(s);
	s->group_add = 2000;
}
static void edit_alias(struct ag_exec_spec *s)
{
	edit_study_net(s);
	s->network_alias = "gateway";
}
static void edit_ipv4(struct ag_exec_spec *s)
{
	edit_study_net(s);
	s->ipv4_address = "198.51.100.2";
}

static const struct ag_exec_file_bind evidence_files[] = {
    {"/srv/run/egress/events.jsonl", "/agentguard-workspace/events.jsonl", false},
};
static void edit_file_bind(struct ag_exec_spec *s)
{
	s->file_binds = evidence_files;
	s->n_file_binds = 1;
}
static void edit_fsize(struct ag_exec_spec *s)
{
	s->file_size_max = 16 * 1024 * 1024;
}

static void test_expect_follows_spec(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		void (*edit)(struct ag_exec_spec *);
		enum ag_inspect_role role;
		const char *connected;
		const char *reason;
	} cases[] = {
	    {"pids limit", edit_pids, AG_INSPECT_AGENT, NULL, "preflight.probe.pids"},
	    {"memory", edit_memory, AG_INSPECT_AGENT, NULL, "preflight.probe.memory"},
	    {"memory (swap)", edit_memory, AG_INSPECT_AGENT, NULL, "preflight.probe.memory_swap"},
	    {"cpu", edit_cpu, AG_INSPECT_AGENT, NULL, "preflight.probe.cpu"},
	    {"uid", edit_uid, AG_INSPECT_AGENT, NULL, "preflight.probe.user"},
	    {"uid (tmpfs owner)", edit_uid, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.tmpfs_options"},
	    {"gid", edit_gid, AG_INSPECT_AGENT, NULL, "preflight.probe.user"},
	    {"tmpfs size", edit_tmpfs_size, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.tmpfs_options"},
	    {"workspace tmpfs size", edit_ws_size, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.tmpfs_options"},
	    {"tmpfs path", edit_tmpfs_path, AG_INSPECT_AGENT, NULL, "preflight.probe.tmpfs"},
	    {"workspace path", edit_ws_path, AG_INSPECT_AGENT, NULL, "preflight.probe.tmpfs"},
	    {"workspace path (workdir)", edit_ws_path, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.workdir"},
	    {"workspace bind mount", edit_ws_bind, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.workspace_bind"},
	    {"probe mount", edit_probe_mount, AG_INSPECT_AGENT, NULL, "preflight.probe.mounts"},
	    {"init mount", edit_init, AG_INSPECT_AGENT, NULL, "preflight.probe.mounts"},
	    {"extra label", edit_extra_label, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.identity_labels"},
	    {"label value", edit_label_value, AG_INSPECT_AGENT, NULL,
	     "preflight.probe.identity_labels"},
	    {"name", edit_name, AG_INSPECT_AGENT, NULL, "preflight.probe.identity_name"},
	    {"entrypoint", edit_entrypoint, AG_INSPECT_AGENT, NULL, "preflight.probe.entrypoint"},
	    {"argv[0]", edit_command0, AG_INSPECT_AGENT, NULL, "preflight.probe.entrypoint"},
	    {"network mode", edit_network, AG_INSPECT_AGENT, NULL, "preflight.probe.network"},
	    {"network endpoints", edit_network, AG_INSPECT_AGENT, NULL, "preflight.probe.networks"},
	    {"connected network", NULL, AG_INSPECT_AGENT, "agentguard-out",
	     "preflight.probe.networks"},
	    {"study network", edit_study_net, AG_INSPECT_AGENT, NULL, "study.agent.networks"},
	    {"dns", edit_dns, AG_INSPECT_AGENT, NULL, "study.agent.dns"},
	    {"sysctl", edit_sysctl, AG_INSPECT_GATEWAY, NULL, "study.gateway.sysctl"},
	    {"group", edit_group, AG_INSPECT_GATEWAY, NULL, "preflight.probe.group_add"},
	    {"alias", edit_alias, AG_INSPECT_GATEWAY, NULL, "study.gateway.study_address"},
	    {"ipv4 address", edit_ipv4, AG_INSPECT_GATEWAY, NULL, "study.gateway.study_address"},
	    {"dns (study probe)", edit_dns, AG_INSPECT_STUDY_PROBE, NULL, "study.selftest.dns"},
	    {"file bind", edit_file_bind, AG_INSPECT_GATEWAY, NULL, "preflight.probe.mounts"},
	    {"file size limit", edit_fsize, AG_INSPECT_GATEWAY, NULL, "preflight.probe.ulimits"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		json_t *v = container_fixture("container.json");
		struct ag_exec_spec spec = fixture_spec();
		/* the unchanged spec: the old container passes */
		struct ag_probe_expect x = expect_of(&spec, cases[i].role, NULL);
		json_t *insp = json_object();
		_cleanup_findings_ struct ag_pf_findings ok = AG_PF_FINDINGS_INIT;
		ag_inspect_container(v, &x, insp, &ok);
		assert_int_equal(ok.n, 0);
		/* one field changed: it fails, by name */
		if (cases[i].edit)
			cases[i].edit(&spec);
		x = expect_of(&spec, cases[i].role, cases[i].connected);
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_container(v, &x, insp, &f);
		if (ag_pf_findings_find(&f, cases[i].reason) < 0)
			fail_msg("spec field %s: no %s", cases[i].what, cases[i].reason);
		assert_int_equal(ag_pf_findings_worst(&f), AG_PF_V_UNSAFE);
		json_decref(insp);
		json_decref(v);
	}
}

/* What cannot be turned into an expectation is refused, not guessed. */
static void test_expect_refusals(void **state)
{
	(void)state;
	struct ag_exec_spec spec = fixture_spec();
	struct ag_probe_expect x;
	struct ag_error *err = NULL;
	struct ag_inspect_created made = {AG_INSPECT_AGENT, "not-an-id", IMG_ID, NULL};
	assert_int_equal(ag_inspect_expect_from_spec(&spec, &made, &x, &err), -1);
	assert_string_equal(err->reason, "inspect.expect.id");
	ag_error_free(err);
	err = NULL;
	made.id = CID;
	made.connected = "none";
	assert_int_equal(ag_inspect_expect_from_spec(&spec, &made, &x, &err), -1);
	assert_string_equal(err->reason, "inspect.expect.networks");
	ag_error_free(err);
	err = NULL;
	made.connected = NULL;
	spec.pids_limit = 0; /* the renderer would refuse it: so does the expectation */
	assert_int_equal(ag_inspect_expect_from_spec(&spec, &made, &x, &err), -1);
	assert_string_equal(err->reason, "render.pids.invalid");
	ag_error_free(err);
}

static void test_container_cpu_quota(void **state)
{
	(void)state;
	/* CpuQuota/CpuPeriod alone is an accepted representation */
	json_t *v = container_fixture("container.json");
	json_t *h = json_object_get(v, "HostConfig");
	json_object_set_new(h, "NanoCpus", json_integer(0));
	json_object_set_new(h, "CpuQuota", json_integer(150000));
	json_object_set_new(h, "CpuPeriod", json_integer(100000));
	struct ag_exec_spec spec = fixture_spec();
	spec.cpu_limit = 1.5;
	struct ag_probe_expect x = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	json_t *insp = json_object();
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_container(v, &x, insp, &f);
	assert_int_equal(f.n, 0);
	spec.cpu_limit = 2.0;
	x = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	ag_inspect_container(v, &x, insp, &f);
	assert_true(ag_pf_findings_find(&f, "preflight.probe.cpu") >= 0);
	json_decref(insp);
	json_decref(v);
}

/* ---- probe output ---- */

#define PROBE_OK_HEAD "{\"probe\":\"agentguard-preflight\",\"uid\":2001,\"gid\":2001,"
#define PROBE_CAPS                                                                                 \
	"\"cap_inh\":\"0000000000000000\",\"cap_prm\":\"0000000000000000\","                       \
	"\"cap_eff\":\"0000000000000000\",\"cap_bnd\":\"0000000000000000\","                       \
	"\"cap_amb\":\"0000000000000000\","
#define PROBE_WRITES "\"workspace_write\":true,\"tmp_write\":true,\"root_read_only\":true,"
#define PROBE_REST                                                                                 \
	"\"no_new_privs\":1,\"seccomp\":2,\"net_ifaces\":[\"lo\"],\"docker_socket\":false,"        \
	"\"pids_max\":\"64\",\"memory_max\":\"134217728\"}\n"

/* The line the static probe prints (src/probe/agentguard-probe.c), with
 * one field replaced: FROM -> TO. */
static char *probe_line(const char *from, const char *to)
{
	static const char ok[] = PROBE_OK_HEAD PROBE_WRITES PROBE_CAPS PROBE_REST;
	const char *at = from ? strstr(ok, from) : NULL;
	if (!from)
		return ag_xstrdup(ok);
	assert_non_null(at);
	return ag_xasprintf("%.*s%s%s", (int)(at - ok), ok, to, at + strlen(from));
}

static void test_probe_output(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to;
		bool truncated;
		const char *reason; /* NULL = passes */
	} cases[] = {
	    {NULL, NULL, false, NULL},
	    {"\"uid\":2001", "\"uid\":0", false, "preflight.probe.identity"},
	    {"\"root_read_only\":true", "\"root_read_only\":false", false,
	     "preflight.probe.write_checks"},
	    {"\"tmp_write\":true", "\"tmp_write\":false", false, "preflight.probe.write_checks"},
	    {"\"cap_eff\":\"0000000000000000\"", "\"cap_eff\":\"0000000000000400\"", false,
	     "preflight.probe.capabilities"},
	    {"\"cap_bnd\":\"0000000000000000\"", "\"cap_bnd\":null", false,
	     "preflight.probe.capabilities"},
	    {"\"no_new_privs\":1", "\"no_new_privs\":0", false, "preflight.probe.no_new_privs"},
	    {"\"seccomp\":2", "\"seccomp\":0", false, "preflight.probe.seccomp"},
	    {"[\"lo\"]", "[\"lo\",\"eth0\"]", false, "preflight.probe.network"},
	    {"[\"lo\"]", "[]", false, "preflight.probe.network"},
	    {"\"docker_socket\":false", "\"docker_socket\":true", false,
	     "preflight.probe.docker_socket"},
	    {"\"pids_max\":\"64\"", "\"pids_max\":\"max\"", false, "preflight.probe.pids"},
	    {"\"memory_max\":\"134217728\"", "\"memory_max\":null", false,
	     "preflight.probe.memory"},
	    {NULL, NULL, true, "preflight.probe.output"},
	};
	struct ag_exec_spec spec = fixture_spec();
	spec.memory_limit = "128m";
	spec.pids_limit = 64;
	const struct ag_probe_expect x = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		_cleanup_free_ char *line = probe_line(cases[i].from, cases[i].to);
		ag_inspect_probe_output(line, strlen(line), cases[i].truncated, &x, &f);
		if (!cases[i].reason)
			assert_int_equal(f.n, 0);
		else if (ag_pf_findings_find(&f, cases[i].reason) < 0)
			fail_msg("case %zu: no %s", i, cases[i].reason);
	}
	static const char *const junk[] = {"", "hello\n"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(junk); i++) {
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_probe_output(junk[i], strlen(junk[i]), false, &x, &f);
		assert_true(ag_pf_findings_find(&f, "preflight.probe.output") >= 0);
	}
	/* bridge: an eth0 beside lo is expected */
	spec.network = AG_NET_BRIDGE;
	const struct ag_probe_expect xb = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	_cleanup_free_ char *line = probe_line("[\"lo\"]", "[\"lo\",\"eth0\"]");
	ag_inspect_probe_output(line, strlen(line), false, &xb, &f);
	assert_int_equal(f.n, 0);
}

/* The line a gVisor probe prints (measured: runsc 20221219, ptrace
 * platform, --oci-seccomp), with one field replaced. */
#define PROBE_GVISOR                                                                               \
	PROBE_OK_HEAD                                                                              \
	"\"workspace_write\":true,\"tmp_write\":true,\"root_read_only\":false,"                    \
	"\"cap_inh\":\"0000000000000000\",\"cap_prm\":\"0000000000000000\","                       \
	"\"cap_eff\":\"0000000000000000\",\"cap_bnd\":\"0000000000000000\",\"cap_amb\":null,"      \
	"\"no_new_privs\":null,\"seccomp\":2,\"net_ifaces\":[\"lo\"],\"docker_socket\":false,"     \
	"\"pids_max\":null,\"memory_max\":null,\"kernel_release\":\"4.4.0\","                      \
	"\"kernel_version\":\"#1 SMP Sun Jan 10 15:06:54 PST 2016\",\"root_fs\":\"9p\","           \
	"\"root_fs_trans_fd\":true,\"root_ro_mount\":true,\"nnp_prctl\":1,"                        \
	"\"cap_amb_prctl\":\"0000000000000000\"}\n"

static char *gvisor_line(const char *from, const char *to)
{
	static const char ok[] = PROBE_GVISOR;
	if (!from)
		return ag_xstrdup(ok);
	const char *at = strstr(ok, from);
	assert_non_null(at);
	return ag_xasprintf("%.*s%s%s", (int)(at - ok), ok, to, at + strlen(from));
}

/* runtime: gvisor. The probe must show gVisor's kernel (uname and a 9p
 * root over a descriptor); the second readings (mounts, prctl) stand in
 * for what gVisor shows differently and are never weaker; without the
 * runtime asked, a gVisor-looking line is judged as before (and fails). */
static void test_probe_output_gvisor(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to;
		const char *reason; /* NULL = passes */
	} cases[] = {
	    {NULL, NULL, NULL},
	    {"\"kernel_release\":\"4.4.0\"", "\"kernel_release\":\"6.1.0-13-amd64\"",
	     "preflight.probe.runtime_unproven"},
	    {"PST 2016", "PST 2017", "preflight.probe.runtime_unproven"},
	    {"\"root_fs\":\"9p\"", "\"root_fs\":\"overlay\"", "preflight.probe.runtime_unproven"},
	    {"\"root_fs_trans_fd\":true", "\"root_fs_trans_fd\":false",
	     "preflight.probe.runtime_unproven"},
	    {"\"root_ro_mount\":true", "\"root_ro_mount\":false", "preflight.probe.write_checks"},
	    {"\"nnp_prctl\":1", "\"nnp_prctl\":0", "preflight.probe.no_new_privs"},
	    {"\"cap_amb_prctl\":\"0000000000000000\"", "\"cap_amb_prctl\":\"0000000000000001\"",
	     "preflight.probe.capabilities"},
	    /* gVisor answers neither: derived from permitted and inheritable */
	    {"\"cap_amb_prctl\":\"0000000000000000\"", "\"cap_amb_prctl\":null", NULL},
	    {"\"cap_prm\":\"0000000000000000\",", "\"cap_prm\":\"0000000000000400\",",
	     "preflight.probe.capabilities"},
	    {"\"seccomp\":2", "\"seccomp\":0", "preflight.probe.seccomp"},
	    /* one limit shown and wrong: not "hidden" */
	    {"\"pids_max\":null", "\"pids_max\":\"max\"", "preflight.probe.pids"},
	};
	struct ag_exec_spec spec = fixture_spec();
	spec.memory_limit = "128m";
	spec.pids_limit = 256;
	spec.runtime = "runsc";
	const struct ag_probe_expect x = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		_cleanup_free_ char *line = gvisor_line(cases[i].from, cases[i].to);
		ag_inspect_probe_output(line, strlen(line), false, &x, &f);
		if (!cases[i].reason) {
			if (f.n != 0)
				fail_msg("case %zu: unexpected %s", i, f.v[0].reason);
		} else if (ag_pf_findings_find(&f, cases[i].reason) < 0) {
			fail_msg("case %zu: no %s", i, cases[i].reason);
		}
	}
	/* a runc probe's line with gVisor asked: unproven */
	{
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		_cleanup_free_ char *line = probe_line(NULL, NULL);
		ag_inspect_probe_output(line, strlen(line), false, &x, &f);
		assert_true(ag_pf_findings_find(&f, "preflight.probe.runtime_unproven") >= 0);
	}
	/* the gVisor line without gVisor asked: the runc rules, which it fails */
	spec.runtime = NULL;
	const struct ag_probe_expect xr = expect_of(&spec, AG_INSPECT_PREFLIGHT_PROBE, NULL);
	_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	_cleanup_free_ char *line = gvisor_line(NULL, NULL);
	ag_inspect_probe_output(line, strlen(line), false, &xr, &f);
	assert_true(ag_pf_findings_find(&f, "preflight.probe.write_checks") >= 0);
	assert_true(ag_pf_findings_find(&f, "preflight.probe.pids") >= 0);
	assert_true(ag_pf_findings_find(&f, "preflight.probe.runtime_unproven") < 0);
	/* the proof the evidence keeps */
	json_t *proof = ag_inspect_probe_runtime_proof(line, strlen(line), false);
	assert_true(json_is_true(json_object_get(proof, "gvisor")));
	assert_string_equal(json_string_value(json_object_get(proof, "root_fs")), "9p");
	json_decref(proof);
}

/* The engine must list the gVisor runtime, registered with accepted
 * arguments only; a runc config asks nothing of the runtimes. */
static void test_runtime_claim(void **state)
{
	(void)state;
	struct ag_contained ce = {
	    .present = true, .runtime = AG_RUNTIME_GVISOR, .runtime_name = (char *)"runsc"};
	static const struct {
		const char *runtimes;
		const char *reason; /* NULL: no finding */
	} cases[] = {
	    {"{\"runc\":{\"path\":\"runc\"},\"runsc\":{\"path\":\"/usr/bin/runsc\","
	     "\"runtimeArgs\":[\"--platform=ptrace\",\"--network=none\",\"--oci-seccomp\"]}}",
	     NULL},
	    {"{\"runsc\":{\"path\":\"/usr/bin/runsc\"}}", NULL},
	    {"{\"runc\":{\"path\":\"runc\"}}", "preflight.runtime.absent"},
	    {"{\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":[\"--ignore-cgroups\"]}}",
	     "preflight.runtime.args"},
	    {"{\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":[\"--oci-seccomp-x\"]}}",
	     "preflight.runtime.args"},
	    {"{\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":[7]}}",
	     "preflight.runtime.args"},
	    /* another runtime's arguments are not judged */
	    {"{\"runsc\":{\"path\":\"/usr/bin/runsc\"},\"runsc2\":{\"path\":\"x\","
	     "\"runtimeArgs\":[\"--ignore-cgroups\"]}}",
	     NULL},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *doc = ag_xasprintf(
		    "{\"OperatingSystem\":\"Debian\",\"OSType\":\"linux\",\"Runtimes\":%s}",
		    cases[i].runtimes);
		json_error_t je;
		json_t *v = json_loads(doc, 0, &je);
		assert_non_null(v);
		struct ag_engine_facts e = {0};
		e.ncpu = -1;
		_cleanup_findings_ struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_info(v, &e, &f);
		assert_int_equal(f.n, 0);
		ag_inspect_runtime_claim(&e, &ce, &f);
		if (!cases[i].reason) {
			if (f.n)
				fail_msg("case %zu: unexpected %s", i, f.v[0].reason);
		} else if (ag_pf_findings_find(&f, cases[i].reason) < 0) {
			fail_msg("case %zu: no %s", i, cases[i].reason);
		}
		/* runc: nothing asked */
		struct ag_contained rc = {.present = true};
		_cleanup_findings_ struct ag_pf_findings g = AG_PF_FINDINGS_INIT;
		ag_inspect_runtime_claim(&e, &rc, &g);
		assert_int_equal(g.n, 0);
		ag_engine_facts_release(&e);
		json_decref(v);
	}
}

static int64_t dsize(const char *s, enum ag_size_syntax syn)
{
	int64_t v = -1;
	int rc = ag_size_parse(s, syn, &v);
	return rc < 0 ? rc : v;
}

static void test_parse_size(void **state)
{
	(void)state;
	/* what Docker reports back */
	assert_int_equal(dsize("256m", AG_SIZE_DOCKER), 256LL * 1024 * 1024);
	assert_int_equal(dsize("64k", AG_SIZE_DOCKER), 65536);
	assert_int_equal(dsize("1g", AG_SIZE_DOCKER), 1LL << 30);
	assert_int_equal(dsize("1G", AG_SIZE_DOCKER), 1LL << 30);
	assert_int_equal(dsize("1gb", AG_SIZE_DOCKER), 1LL << 30);
	assert_int_equal(dsize("100b", AG_SIZE_DOCKER), 100);
	assert_int_equal(dsize("65536", AG_SIZE_DOCKER), 65536);
	assert_int_equal(dsize("0", AG_SIZE_DOCKER), 0);
	assert_int_equal(dsize("", AG_SIZE_DOCKER), -1);
	assert_int_equal(dsize("m", AG_SIZE_DOCKER), -1);
	assert_int_equal(dsize("1x", AG_SIZE_DOCKER), -1);
	assert_int_equal(dsize("99999999999999999999g", AG_SIZE_DOCKER), -2);
	assert_int_equal(dsize("9999999999999g", AG_SIZE_DOCKER), -2);
	/* what a config holds: no leading zero, no b, bounded length */
	assert_int_equal(dsize("512m", AG_SIZE_CONFIG), 512LL * 1024 * 1024);
	assert_int_equal(dsize("0", AG_SIZE_CONFIG), -1);
	assert_int_equal(dsize("0512m", AG_SIZE_CONFIG), -1);
	assert_int_equal(dsize("1gb", AG_SIZE_CONFIG), -1);
	assert_int_equal(dsize("-1m", AG_SIZE_CONFIG), -1);
	assert_int_equal(dsize("1 m", AG_SIZE_CONFIG), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_bounds),
	    cmocka_unit_test(test_json_path),
	    cmocka_unit_test(test_engine_real),
	    cmocka_unit_test(test_engine_faults),
	    cmocka_unit_test(test_version_shapes),
	    cmocka_unit_test(test_network),
	    cmocka_unit_test(test_image),
	    cmocka_unit_test(test_container_real),
	    cmocka_unit_test(test_container_fixture_faults),
	    cmocka_unit_test(test_container_mutations),
	    cmocka_unit_test(test_container_cpu_quota),
	    cmocka_unit_test(test_expect_follows_spec),
	    cmocka_unit_test(test_expect_refusals),
	    cmocka_unit_test(test_probe_output),
	    cmocka_unit_test(test_probe_output_gvisor),
	    cmocka_unit_test(test_runtime_claim),
	    cmocka_unit_test(test_parse_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
