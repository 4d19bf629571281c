/*
 * The run's structural pieces (issue 18): the ledger remembers each object
 * a run creates (role, name, owner labels, create attempted, cleanup) and
 * refuses more than its bound; the run record starts with the agent never
 * created; the failure table gives each failure its name and exit code;
 * the signing key's default location follows the XDG rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/exit.h"
#include "lib/docker/ledger.h"
#include "lib/run/pipeline.h"
#include "lib/run/record.h"
#include "lib/run/setup.h"

static void ledger_remembers(void **state)
{
	(void)state;
	struct ag_ledger l;
	ag_ledger_init(&l, "agentguard.contained-run.id", "abc", 1000);
	const struct ag_label_expect labels[] = {{"agentguard.owner", "contained-run"},
						 {"agentguard.contained-run.id", "abc"}};
	struct ag_ledger_entry *a =
	    ag_ledger_add(&l, AG_LEDGER_CONTAINER, "agent", "agentguard-abc", labels, 2);
	struct ag_ledger_entry *n = ag_ledger_add(&l, AG_LEDGER_NETWORK, "study_network",
						  "agentguard-abc-study", labels, 2);
	assert_non_null(a);
	assert_non_null(n);
	assert_ptr_equal(ag_ledger_find(&l, "agent"), a);
	assert_ptr_equal(ag_ledger_find(&l, "study_network"), n);
	assert_null(ag_ledger_find(&l, "gateway"));
	/* who it must be: its own copy of the name, the labels it was given */
	assert_string_equal(a->owner.name, "agentguard-abc");
	assert_int_equal(a->owner.n_labels, 2);
	assert_string_equal(a->owner.labels[1].value, "abc");
	/* before any create: not attempted, no id, not_created (and verified so) */
	assert_false(a->attempted);
	assert_null(a->id);
	assert_int_equal(a->cleanup.state, AG_CLEANUP_NOT_CREATED);
	assert_true(a->cleanup.liveness_verified);
	assert_string_equal(a->cleanup.message, "no container was created");
	assert_string_equal(n->cleanup.message, "no network was created");
	ag_ledger_release(&l);
}

static void ledger_bounded(void **state)
{
	(void)state;
	struct ag_ledger l;
	ag_ledger_init(&l, "k", "v", 1000);
	const struct ag_label_expect labels[AG_LEDGER_MAX_LABELS + 1] = {{"k", "v"}};
	assert_null(
	    ag_ledger_add(&l, AG_LEDGER_CONTAINER, "x", "x", labels, AG_LEDGER_MAX_LABELS + 1));
	for (size_t i = 0; i < AG_LEDGER_MAX_ENTRIES; i++)
		assert_non_null(ag_ledger_add(&l, AG_LEDGER_CONTAINER, "x", "x", labels, 1));
	assert_null(ag_ledger_add(&l, AG_LEDGER_CONTAINER, "y", "y", labels, 1));
	assert_int_equal(l.n, AG_LEDGER_MAX_ENTRIES);
	ag_ledger_release(&l);
}

/*
 * The teardown order is the creation order reversed, not the order entries
 * were added: the agent's entry is added first (when the run directory is
 * made) but created last (after the study's networks and gateway), so it
 * goes first, then the gateway, then the networks it sat on; an entry never
 * created comes last. The numbers are what ag_ledger_entry_create assigns.
 */
static void ledger_teardown_newest_created_first(void **state)
{
	(void)state;
	struct ag_ledger l;
	ag_ledger_init(&l, "agentguard.contained-run.id", "abc", 1000);
	const struct ag_label_expect labels[] = {{"agentguard.contained-run.id", "abc"}};
	const char *roles[] = {"agent", "outbound_network", "study_network", "gateway",
			       "study_probe"};
	struct ag_ledger_entry *e[5];
	for (size_t i = 0; i < 5; i++) {
		e[i] = ag_ledger_add(&l, i == 1 || i == 2 ? AG_LEDGER_NETWORK : AG_LEDGER_CONTAINER,
				     roles[i], roles[i], labels, 1);
		assert_non_null(e[i]);
	}
	/* created: outbound, study, gateway, then the agent; the probe never */
	const size_t created[] = {1, 2, 3, 0};
	for (size_t i = 0; i < 4; i++) {
		e[created[i]]->attempted = true;
		e[created[i]]->seq = ++l.created;
	}
	size_t order[AG_LEDGER_MAX_ENTRIES];
	ag_ledger_teardown_order(&l, order);
	const char *want[] = {"agent", "gateway", "study_network", "outbound_network",
			      "study_probe"};
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(l.v[order[i]].role, want[i]);
	ag_ledger_release(&l);
}

static void record_starts_empty(void **state)
{
	(void)state;
	struct ag_run_record r;
	ag_run_record_init(&r, NULL);
	assert_int_equal(r.workspace.status, AG_RUN_WS_NOT_PREPARED);
	assert_string_equal(ag_run_ws_status_name(r.workspace.status), "not_prepared");
	assert_null(ag_run_outcome_name(r.exec.outcome)); /* did not run: null */
	assert_string_equal(ag_run_patch_status_name(r.patch.status), "not_captured");
	assert_string_equal(ag_run_exec_status_name(ag_run_exec_status(&r)), "skipped");
	const struct ag_ledger_entry *a = ag_run_agent(&r);
	assert_non_null(a);
	assert_int_equal(a->cleanup.state, AG_CLEANUP_NOT_CREATED);
	assert_false(ag_run_record_score_known(&r));
	assert_false(r.study.present);
	ag_run_record_release(&r);
}

static void failure_table(void **state)
{
	(void)state;
	static const struct {
		enum ag_run_fail_kind k;
		const char *name;
		int exit_code;
	} want[] = {
	    {AG_FAIL_POLICY, "policy", AG_EXIT_POLICY},
	    {AG_FAIL_PREFLIGHT, "preflight", AG_EXIT_PREFLIGHT},
	    {AG_FAIL_WORKSPACE, "workspace_prep", AG_EXIT_WORKSPACE},
	    {AG_FAIL_DOCKER, "docker", AG_EXIT_DOCKER},
	    {AG_FAIL_TIMEOUT, "timeout", AG_EXIT_TIMEOUT},
	    {AG_FAIL_CANCELLED, "cancelled", AG_EXIT_SIGNAL_BASE},
	    {AG_FAIL_CLEANUP, "cleanup", AG_EXIT_CLEANUP},
	    {AG_FAIL_EVIDENCE, "evidence", AG_EXIT_WORKSPACE},
	    {AG_FAIL_EGRESS, "egress", AG_EXIT_FAIL},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(want); i++) {
		assert_string_equal(ag_run_fail_name(want[i].k), want[i].name);
		assert_int_equal(ag_run_fail_exit(want[i].k), want[i].exit_code);
	}
}

static void key_default_path(void **state)
{
	(void)state;
	char *p = ag_run_key_default_path("/x/state", "/home/u");
	assert_string_equal(p, "/x/state/agentguard/signing-key.pem");
	free(p);
	/* a relative XDG_STATE_HOME is ignored */
	p = ag_run_key_default_path("rel", "/home/u");
	assert_string_equal(p, "/home/u/.local/state/agentguard/signing-key.pem");
	free(p);
	assert_null(ag_run_key_default_path(NULL, "relative-home"));
	assert_null(ag_run_key_default_path(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ledger_remembers),
	    cmocka_unit_test(ledger_bounded),
	    cmocka_unit_test(ledger_teardown_newest_created_first),
	    cmocka_unit_test(record_starts_empty),
	    cmocka_unit_test(failure_table),
	    cmocka_unit_test(key_default_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
