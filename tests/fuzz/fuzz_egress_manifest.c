/*
 * libFuzzer harness over the live-study egress manifest validator and
 * sanitizer (src/lib/egress/manifest.c). Built with gcc it links
 * tests/fuzz/replay.c and replays tests/fuzz/corpus/egress_manifest in
 * `make check`.
 *
 * Invariants: validation either refuses with a reason or accepts with a
 * recomputed completion whose success_eligible is true exactly for
 * "complete"; an accepted manifest re-dumped canonically validates again
 * with the same completion; the sanitizer's output never needs sanitizing
 * again (idempotent, bounded to 512 bytes).
 */
#include "lib/base/ag.h"
#include "lib/base/sanitize.h"
#include "lib/base/error.h"
#include "lib/egress/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_egress_completion c;
	struct ag_error *err = NULL;
	if (ag_egress_manifest_validate((const char *)data, size, NULL, &c, &err) < 0) {
		if (!err || !err->reason || !err->msg)
			abort();
		ag_error_free(err);
	} else {
		if (c.success_eligible != (strcmp(c.status, "complete") == 0))
			abort();
		json_t *m = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
		char *text = NULL;
		size_t len = 0;
		struct ag_egress_completion c2;
		if (!m || ag_egress_manifest_dump(m, &text, &len, &err) < 0 ||
		    ag_egress_manifest_validate(text, len, NULL, &c2, &err) < 0 ||
		    strcmp(c.status, c2.status) || strcmp(c.reason, c2.reason))
			abort();
		free(text);
		json_decref(m);
	}
	if (size <= 4096) {
		char *s = ag_xstrndup((const char *)data, size);
		char *once = ag_sanitize(NULL, AG_SANITIZE_EGRESS, s, strlen(s),
					 AG_EGRESS_MANIFEST_MAX_STRING);
		char *twice = ag_sanitize(NULL, AG_SANITIZE_EGRESS, once, strlen(once),
					  AG_EGRESS_MANIFEST_MAX_STRING);
		if (strlen(once) > AG_EGRESS_MANIFEST_MAX_STRING || strcmp(once, twice))
			abort();
		free(twice);
		free(once);
		free(s);
	}
	return 0;
}
