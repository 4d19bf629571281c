/*
 * test_sanitize.c: the one sanitizer (lib/base/sanitize.h), engine profile:
 * the engine's real texts (a create's 409 naming another container and its
 * id, a missing object, endpoints, paths), the run's redaction set, control
 * characters and the bound. The egress profile's cases are in test_egress.c.
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/redact.h"
#include "lib/base/sanitize.h"

#include <setjmp.h>
#include <cmocka.h>

#define OTHER_ID "3f2c5b1e9a7d4c6b8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f"

static char *eng(const struct ag_redactor *r, const char *s)
{
	return ag_sanitize(r, AG_SANITIZE_ENGINE, s, strlen(s), AG_PF_DIAGNOSTIC_MAX_BYTES);
}

static void test_engine_cases(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"plain text", "plain text"},
	    {"a\x01\tb\n\nc", "a b c"},
	    {"Cannot connect to unix:///var/run/docker.sock. Is it running?",
	     "Cannot connect to [REDACTED] Is it running?"},
	    {"dial tcp://10.0.0.1:2376 refused", "dial [REDACTED] refused"},
	    {"open /home/alice/.docker/config.json: denied", "open [REDACTED_PATH]: denied"},
	    {"stat /srv/ag-x/wrapper failed", "stat [REDACTED_PATH] failed"},
	    {"tmpfs /tmp ok", "tmpfs /tmp ok"},
	    {"API_TOKEN=hunter2 leaked", "API_TOKEN=[REDACTED] leaked"},
	    {"MODE=fast set", "MODE=[REDACTED] set"},
	    {"rc=1 fine", "rc=1 fine"},
	    {"caf\xc3\xa9", "caf??"},
	    /* the engine's 409 for a create whose name another container holds */
	    {"Conflict. The container name \"/agentguard-other-1\" is already in use by container "
	     "\"" OTHER_ID "\". You have to remove (or rename) that container to be able to reuse "
	     "that name.",
	     "Conflict. The container name \"[REDACTED]\" is already in use by container "
	     "\"[REDACTED_ID]\". You have to remove (or rename) that container to be able to "
	     "reuse that name."},
	    {"No such container: agentguard-0a1b2c.", "No such container: [REDACTED]."},
	    {"network with name agentguard-x-int already exists",
	     "network with name [REDACTED] already exists"},
	    {"You cannot remove a running container " OTHER_ID ". Stop the container",
	     "You cannot remove a running container [REDACTED_ID]. Stop the container"},
	    {"container 3f2c5b1e9a7d is not running", "container [REDACTED_ID] is not running"},
	    {"/containers/" OTHER_ID "/start", "/containers/[REDACTED_ID]/start"},
	    {"image sha256:" OTHER_ID " in use", "image sha256:[REDACTED_ID] in use"},
	    /* plain words and numbers stay */
	    {"the container name is taken", "the container name is taken"},
	    {"invalid mount config for type \"bind\"", "invalid mount config for type \"bind\""},
	    {"port 1234567890123 closed", "port 1234567890123 closed"},
	    /* a short id may be all decimal digits (about 1 in 280 are) */
	    {"container 123456789012 is not running", "container [REDACTED_ID] is not running"},
	    {"two " OTHER_ID OTHER_ID " ids", "two [REDACTED_ID] ids"},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		char *o = eng(NULL, cases[i].in);
		assert_string_equal(o, cases[i].out);
		/* once is enough: what it wrote passes unchanged */
		assert_null(ag_sanitize_finds(AG_SANITIZE_ENGINE, o, strlen(o),
					      AG_PF_DIAGNOSTIC_MAX_BYTES));
		free(o);
	}
	assert_string_equal(ag_sanitize_finds(AG_SANITIZE_ENGINE, "a /srv/x/y", 10, 512),
			    AG_PH_SECRET);
}

/* The run's redaction set goes first: its roots by role, its secrets. */
static void test_engine_redactor(void **state)
{
	(void)state;
	struct ag_redactor r = AG_REDACTOR_INIT;
	ag_redactor_add_secret(&r, "s3cr3t-value");
	ag_redactor_add_root(&r, "/srv/repo", "${REPOSITORY_ROOT}");
	char *o = eng(&r, "bind source /srv/repo/src holds s3cr3t-value");
	assert_string_equal(o, "bind source ${REPOSITORY_ROOT}/src holds [REDACTED]");
	free(o);
	ag_redactor_release(&r);
}

/* Bounded: the output never passes max, the cut says so; a flood of ids
 * or controls stays linear (the input is cut first). */
static void test_engine_bound(void **state)
{
	(void)state;
	size_t n = 1 << 20;
	char *big = ag_xmalloc(n + 1);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 65 == 64 ? ' ' : "0123456789abcdef"[i % 16];
	big[n] = '\0';
	char *o = ag_sanitize(NULL, AG_SANITIZE_ENGINE, big, n, AG_PF_DIAGNOSTIC_MAX_BYTES);
	assert_true(strlen(o) <= AG_PF_DIAGNOSTIC_MAX_BYTES);
	assert_non_null(strstr(o, AG_PH_CUT));
	assert_null(strstr(o, "0123456789abcdef"));
	free(o);
	memset(big, '\x1b', n);
	o = ag_sanitize(NULL, AG_SANITIZE_ENGINE, big, n, 64);
	assert_string_equal(o, "");
	free(o);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_engine_cases),
	    cmocka_unit_test(test_engine_redactor),
	    cmocka_unit_test(test_engine_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
