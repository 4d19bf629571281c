/*
 * libFuzzer harness over the config loader: YAML events -> node tree ->
 * typed config, plus the image reference parser. Built with gcc it links
 * tests/fuzz/replay.c instead and replays the corpus in `make check`.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/config/imageref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_config *c = NULL;
	struct ag_error *err = NULL;
	if (ag_config_load_mem((const char *)data, size, "fuzz.yaml", &c, &err) == 0) {
		/* A loaded config must satisfy its own invariants. */
		if (!c->task_id || !c->description || !c->test_command)
			abort();
		if (c->contained.present &&
		    (!c->sandbox.image || !ag_image_ref_pinned(&c->sandbox.image_ref)))
			abort();
		if (c->contained.n_env > 32)
			abort();
		ag_config_free(c);
	} else {
		if (!err || !err->reason || !err->msg)
			abort();
		char *s = ag_error_format(err);
		free(s);
		ag_error_free(err);
	}
	if (size <= 1024) {
		char *s = ag_xstrndup((const char *)data, size);
		struct ag_image_ref r;
		struct ag_error *ie = NULL;
		if (ag_image_ref_parse(s, &r, &ie) == 0)
			ag_image_ref_release(&r);
		else
			ag_error_free(ie);
		free(s);
	}
	return 0;
}
