/*
 * libFuzzer harness over the bounded docker JSON parser and every preflight
 * interpreter (version, info, network, image, container inspect, probe
 * output, sanitizer). Built with gcc it links tests/fuzz/replay.c and
 * replays tests/fuzz/corpus/docker_json (real answers from the test engine
 * plus faulty variants) in `make check`.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/config/imageref.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/inspect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char *san = ag_sanitize(NULL, AG_SANITIZE_ENGINE, s, size, AG_PF_DIAGNOSTIC_MAX_BYTES);
	if (strlen(san) > AG_PF_DIAGNOSTIC_MAX_BYTES)
		abort();
	for (const char *p = san; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			abort();
	free(san);

	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	/* The expectation comes from a spec, as in every caller. */
	static const struct ag_label labels[] = {
	    {"agentguard.owner", "preflight"},
	    {"agentguard.preflight", "resource-controls"},
	    {"agentguard.preflight.name", "agentguard-preflight-0123456789abcdef"},
	};
	static const char *const cmd[] = {"/agentguard-workspace"};
	const struct ag_exec_spec spec = {
	    .image = "127.0.0.1:5000/agentguard-test@sha256:"
		     "544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47",
	    .network = AG_NET_NONE,
	    .uid = 2001,
	    .gid = 2001,
	    .cpu_limit = 1.0,
	    .memory_limit = "128m",
	    .pids_limit = 64,
	    .tmpfs_path = "/tmp",
	    .tmpfs_size = "256m",
	    .workspace_container_path = "/agentguard-workspace",
	    .container_name = "agentguard-preflight-0123456789abcdef",
	    .probe_host_path = "/usr/libexec/agentguard-probe",
	    .entrypoint = "/agentguard-probe",
	    .labels = labels,
	    .n_labels = 3,
	    .command = cmd,
	    .n_command = 1,
	};
	const struct ag_inspect_created made = {
	    AG_INSPECT_PREFLIGHT_PROBE,
	    "0d8a852c6d70735e685f00a877aafbcd62feafc75c979a9064c6100beb866306",
	    "sha256:5a6f72bf07494de44803a393e87fa18d81b1adb5d4b3962f3c6d190b9c6448c7", NULL};
	struct ag_probe_expect px;
	struct ag_error *xe = NULL;
	if (ag_inspect_expect_from_spec(&spec, &made, &px, &xe) < 0)
		abort();
	ag_inspect_probe_output(s, size, false, &px, &f);
	ag_pf_findings_release(&f);

	json_t *v = NULL;
	struct ag_error *err = NULL;
	if (ag_docker_json_parse(s, size, false, NULL,
				 AG_DOCKER_JSON_UNWRAP_SINGLE | AG_DOCKER_JSON_OBJECT, &v,
				 &err) < 0) {
		if (!err || !err->reason)
			abort();
		ag_error_free(err);
		return 0;
	}
	struct ag_engine_facts e = {.ncpu = -1};
	ag_inspect_version(v, &e, &f);
	ag_inspect_info(v, &e, &f);
	ag_inspect_platform_claim(&e, AG_PLATFORM_LINUX_ENGINE, &f);
	ag_inspect_resource_support(&e, &f);
	ag_inspect_api_support(&e, &f);
	ag_inspect_network(v, AG_NET_NONE, &f);
	ag_engine_facts_release(&e);

	struct ag_image_ref ref = {0};
	if (ag_image_ref_parse("127.0.0.1:5000/agentguard-test@sha256:"
			       "544b34f68a79d02183f4ffcc9a70bc8c09b0650b1449effa4efaaeb3c29c7c47",
			       &ref, &err) < 0)
		abort();
	struct ag_image_facts im = {0};
	ag_inspect_image(v, &ref, &im, &f);
	ag_image_facts_release(&im);
	ag_image_ref_release(&ref);

	json_t *insp = json_object();
	ag_inspect_container(v, &px, insp, &f);
	/* Every finding detail is sanitized and bounded. */
	for (size_t i = 0; i < f.n; i++)
		if (!f.v[i].reason || strlen(f.v[i].detail) > AG_PF_DIAGNOSTIC_MAX_BYTES)
			abort();
	json_decref(insp);
	ag_pf_findings_release(&f);
	json_decref(v);
	return 0;
}
