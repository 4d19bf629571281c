/*
 * Stage-1 runtime images, the parts that need no engine: the freeze
 * builder (with synthetic identities, never a stand-in image) produces a
 * manifest the validator accepts and an SBOM and provenance whose digests
 * it records; gateway comes first; canonical JSON matches Python's form;
 * the Codex lock check; the runtime config from a captured inspection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/sha256.h"
#include "lib/images/images.h"

#include <jansson.h>
#include <sys/stat.h>

#define b_64 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define c_64 "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define d_64 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define BASE_REF "127.0.0.1:5000/agentguard-runtime-base@sha256:" b_64

static char *root_path(const char *rel)
{
	const char *root = getenv("AG_ROOT");
	return ag_xasprintf("%s/%s", root ? root : ".", rel);
}

static void fill_identity(struct ag_image_identity *id, enum ag_image_role role)
{
	memset(id, 0, sizeof(*id));
	id->role = role;
	bool agent = role == AG_ROLE_AGENT;
	id->pinned_ref =
	    ag_xstrdup(agent ? "127.0.0.1:5000/agentguard-runtime-agent@sha256:" c_64
			     : "127.0.0.1:5000/agentguard-runtime-gateway@sha256:" d_64);
	id->base_image = ag_xstrdup(BASE_REF);
	id->builder_base = agent ? ag_xstrdup(BASE_REF) : NULL;
	id->entrypoint =
	    ag_xstrdup(agent ? AG_IMAGES_AGENT_ENTRYPOINT : AG_IMAGES_GATEWAY_ENTRYPOINT);
	id->rootfs_digest = ag_xstrdup("sha256:" b_64);
	id->runtime_config_digest = ag_xstrdup("sha256:" c_64);
	id->identity = ag_image_identity_object(role, id->base_image, id->rootfs_digest,
						id->runtime_config_digest);
	char hex[65];
	assert_int_equal(ag_canon_sha256(id->identity, hex, NULL), 0);
	id->identity_digest = ag_xasprintf("sha256:%s", hex);
}

static void test_freeze_roundtrip(void **state)
{
	(void)state;
	struct ag_image_identity gw, ag;
	fill_identity(&gw, AG_ROLE_GATEWAY);
	fill_identity(&ag, AG_ROLE_AGENT);
	char *gctx = root_path("runtime-images/gateway");
	char *actx = root_path("runtime-images/agent");
	char *deb = root_path("runtime-images/base/packages.lock");
	char *npm = root_path("runtime-images/agent/package-lock.json");
	const char *const none[] = {NULL};
	struct ag_freeze_input in = {
	    .repository = "agentguard",
	    .source_commit = "0123456789abcdef0123456789abcdef01234567",
	    .gateway = {&gw, "registry.invalid/agentguard/runtime-gateway", gctx},
	    .agent = {&ag, "registry.invalid/agentguard/runtime-agent", actx},
	    .deb_lock_path = deb,
	    .npm_lock_path = npm,
	    .vuln_policy = NULL,
	    .scan_reports = none,
	    .sbom_name = "m.json.sbom.cdx.json",
	    .provenance_name = "m.json.provenance.intoto.json",
	};
	struct ag_freeze_output out = {0};
	struct ag_error *e = NULL;
	int r = ag_freeze_build(&in, &out, &e);
	if (r < 0)
		print_error("%s [%s]\n", e->msg, e->reason);
	assert_int_equal(r, 0);
	assert_int_equal(ag_freeze_manifest_validate(out.manifest, strlen(out.manifest), &e), 0);

	json_t *m = json_loads(out.manifest, 0, NULL);
	assert_non_null(m);
	char hex[65];
	ag_sha256_hex(out.sbom, strlen(out.sbom), hex);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(m, "artifacts"), "sbom"), "m.json.sbom.cdx.json")),
	    hex);
	ag_sha256_hex(out.provenance, strlen(out.provenance), hex);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(m, "artifacts"), "provenance"),
				"m.json.provenance.intoto.json")),
			    hex);
	/* Nothing scanned: recorded as such, never as clean. */
	json_t *vp = json_object_get(json_object_get(json_object_get(m, "artifacts"), "scans"),
				     "vulnerability_policy");
	assert_string_equal(json_string_value(json_object_get(vp, "status")), "not_scanned");
	assert_true(json_is_false(json_object_get(vp, "scanner_failures_suppressed")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(m, "publication"), "status")),
	    "not_published_phase_1");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(m, "usage_evidence"), "status")),
	    "USAGE_EVIDENCE_BLOCKED");
	json_decref(m);

	/* SBOM: CycloneDX with the three Debian packages and both npm packages, hashed. */
	json_t *s = json_loads(out.sbom, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(s, "bomFormat")), "CycloneDX");
	json_t *comps = json_object_get(s, "components");
	assert_int_equal(json_array_size(comps), 5);
	assert_string_equal(json_string_value(json_object_get(json_array_get(comps, 4), "purl")),
			    "pkg:npm/%40openai/codex@0.159.2-linux-x64");
	json_t *h = json_array_get(json_object_get(json_array_get(comps, 3), "hashes"), 0);
	assert_string_equal(json_string_value(json_object_get(h, "alg")), "SHA-512");
	assert_int_equal(json_string_length(json_object_get(h, "content")), 128);
	json_decref(s);

	/* Provenance: in-toto Statement, subjects gateway then agent, source commit. */
	json_t *p = json_loads(out.provenance, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(p, "_type")),
			    "https://in-toto.io/Statement/v1");
	json_t *subj = json_object_get(p, "subject");
	assert_int_equal(json_array_size(subj), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(subj, 0), "name")),
			    "127.0.0.1:5000/agentguard-runtime-gateway");
	assert_non_null(strstr(out.provenance, "0123456789abcdef0123456789abcdef01234567"));
	assert_non_null(strstr(out.provenance, "runtime-images/agent build context"));
	json_decref(p);

	/* The same inputs give the same bytes. */
	struct ag_freeze_output again = {0};
	assert_int_equal(ag_freeze_build(&in, &again, &e), 0);
	assert_string_equal(again.manifest, out.manifest);
	assert_string_equal(again.sbom, out.sbom);
	ag_freeze_output_release(&again);
	ag_freeze_output_release(&out);

	/* Gateway first: a gateway that was never pushed stops the freeze. */
	free(gw.pinned_ref);
	gw.pinned_ref = NULL;
	assert_int_equal(ag_freeze_build(&in, &out, &e), -1);
	assert_string_equal(e->reason, "images.freeze.unpushed");
	assert_non_null(strstr(e->msg, "gateway"));
	ag_error_free(e);
	e = NULL;
	/* A failing vulnerability policy freezes nothing. */
	gw.pinned_ref = ag_xstrdup("127.0.0.1:5000/agentguard-runtime-gateway@sha256:" d_64);
	json_t *failing = json_pack("{s:s}", "status", "fail");
	in.vuln_policy = failing;
	assert_int_equal(ag_freeze_build(&in, &out, &e), -1);
	assert_string_equal(e->reason, "images.freeze.vuln_policy");
	ag_error_free(e);
	json_decref(failing);

	ag_image_identity_release(&gw);
	ag_image_identity_release(&ag);
	free(gctx);
	free(actx);
	free(deb);
	free(npm);
}

static void test_canon_python_form(void **state)
{
	(void)state;
	json_t *v = json_pack("{s:s, s:i, s:[s]}", "b", "\xc3\xa4\\u00C4", "a", 1, "c", "/x");
	char *s = NULL;
	assert_int_equal(ag_images_canon_dump(v, &s, NULL, NULL), 0);
	/* Lower-case hex for the real escape; the literal backslash-u text keeps its case. */
	assert_string_equal(s, "{\"a\":1,\"b\":\"\\u00e4\\\\u00C4\",\"c\":[\"/x\"]}");
	free(s);
	json_decref(v);
}

static void test_lock_check(void **state)
{
	(void)state;
	char *p = root_path("runtime-images/agent/package-lock.json");
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	struct ag_error *e = NULL;
	assert_int_equal(ag_codex_lock_check(buf, n, &e), 0);
	char *bad = strstr(buf, "\"0.159.2-linux-x64\"");
	assert_non_null(bad);
	memcpy(bad + 1, "0.159.3", 7);
	assert_int_equal(ag_codex_lock_check(buf, n, &e), -1);
	assert_string_equal(e->reason, "images.lock.version");
	ag_error_free(e);
	free(p);
}

static void test_runtime_config(void **state)
{
	(void)state;
	static const char inspect[] =
	    "[{\"Id\":\"sha256:" c_64 "\",\"Architecture\":\"amd64\",\"Os\":\"linux\","
	    "\"Config\":{\"User\":\"10001:10001\",\"Env\":[\"PATH=/bin\",\"HOME=/tmp/h\"],"
	    "\"Entrypoint\":[\"/e\"],\"Cmd\":null,\"WorkingDir\":\"\","
	    "\"ExposedPorts\":{\"8080/tcp\":{},\"53/udp\":{}},\"Volumes\":{\"/data//x/./\":{}}},"
	    "\"RootFS\":{\"Type\":\"layers\",\"Layers\":[]}}]";
	json_t *c = NULL;
	char *d = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_runtime_config_from_inspect(inspect, strlen(inspect), &c, &d, &e), 0);
	char *s = NULL;
	assert_int_equal(ag_images_canon_dump(c, &s, NULL, NULL), 0);
	assert_string_equal(s,
			    "{\"architecture\":\"amd64\",\"cmd\":null,\"entrypoint\":[\"/e\"],"
			    "\"env\":[\"HOME=/tmp/h\",\"PATH=/bin\"],\"exposed_ports\":[\"53/udp\","
			    "\"8080/tcp\"],\"os\":\"linux\",\"rootfs_type\":\"layers\",\"user\":"
			    "\"10001:10001\",\"volumes\":[\"/data/x\"],\"working_dir\":\"\"}");
	free(s);
	free(d);
	json_decref(c);
	static const char two[] = "[{},{}]";
	assert_int_equal(ag_runtime_config_from_inspect(two, strlen(two), &c, &d, &e), -1);
	assert_string_equal(e->reason, "images.inspect.count");
	ag_error_free(e);
	e = NULL;
	static const char vol[] =
	    "[{\"Architecture\":\"amd64\",\"Os\":\"linux\",\"Config\":{"
	    "\"Volumes\":{\"/a/../b\":{}}},\"RootFS\":{\"Type\":\"layers\"}}]";
	assert_int_equal(ag_runtime_config_from_inspect(vol, strlen(vol), &c, &d, &e), -1);
	assert_string_equal(e->reason, "images.inspect.volume");
	ag_error_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_freeze_roundtrip),
	    cmocka_unit_test(test_canon_python_form),
	    cmocka_unit_test(test_lock_check),
	    cmocka_unit_test(test_runtime_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
