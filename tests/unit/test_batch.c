/*
 * test_batch.c: the batch file (what it accepts, what it refuses and where),
 * the shard arithmetic (disjoint, covering), the planner on facts no real
 * machine here offers (little memory, many cores, a small pool, a mixed
 * batch), trial records without evidence, and the summary's rendering of
 * hostile values.
 */
#include "lib/base/ag.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/json.h"
#include "lib/batch/batch.h"

#include <setjmp.h>
#include <cmocka.h>

static struct ag_batch *load(const char *doc)
{
	struct ag_batch *b = NULL;
	struct ag_error *err = NULL;
	int rc = ag_batch_load_mem(doc, strlen(doc), "b.yaml", &b, &err);
	if (rc < 0)
		fprintf(stderr, "unexpected: %s\n", err->msg);
	assert_int_equal(rc, 0);
	return b;
}

/* The error reason (and line, key) a document is refused with. */
static void refused(const char *doc, const char *reason, unsigned line, const char *key)
{
	struct ag_batch *b = NULL;
	struct ag_error *err = NULL;
	assert_int_equal(ag_batch_load_mem(doc, strlen(doc), "b.yaml", &b, &err), -1);
	assert_null(b);
	assert_string_equal(err->reason, reason);
	if (line)
		assert_int_equal(err->line, line);
	if (key)
		assert_string_equal(err->key, key);
	ag_error_free(err);
}

static void test_file_expands(void **state)
{
	(void)state;
	struct ag_batch *b =
	    load("version: 1\n"
		 "trials:\n"
		 "  - {name: a, config: c.yaml, argv: [/bin/sleep, 1], repetitions: 3}\n"
		 "  - name: b\n"
		 "    mode: study\n"
		 "    config: /abs/s.yaml\n"
		 "    argv: [/bin/true]\n"
		 "    gateway_image: gw\n"
		 "    timeout: 5\n");
	assert_int_equal(b->n_entries, 2);
	assert_int_equal(b->n_trials, 4);
	assert_string_equal(b->trials[0].id, "a.1");
	assert_string_equal(b->trials[2].id, "a.3");
	assert_string_equal(b->trials[3].id, "b");
	assert_int_equal(b->trials[3].index, 3);
	/* a plain 1 in argv is the word "1" */
	assert_string_equal(b->entries[0].argv[1], "1");
	assert_int_equal(b->entries[1].mode, AG_BATCH_STUDY);
	assert_string_equal(b->entries[1].config, "/abs/s.yaml");
	assert_int_equal(b->entries[1].timeout, 5);
	assert_int_equal(strlen(b->sha256), 64);
	ag_batch_free(b);
	/* JSON is read by the same loader */
	b = load("{\"version\": 1, \"trials\": [{\"name\": \"j\", \"config\": \"c.yaml\", "
		 "\"argv\": [\"/bin/true\"]}]}");
	assert_string_equal(b->trials[0].id, "j");
	ag_batch_free(b);
}

static void test_file_refused(void **state)
{
	(void)state;
	refused("version: 2\ntrials: []\n", "batch.file.version", 1, "version");
	refused("version: 1\ntrials: []\n", "batch.file.trials", 2, "trials");
	refused("version: 1\nextra: 1\ntrials: [{name: a, config: c, argv: [x]}]\n",
		"batch.file.unknown_key", 2, "extra");
	refused("version: 1\ntrials:\n  - name: a\n    config: c\n    argv: [x]\n    repeat: 2\n",
		"batch.file.unknown_key", 6, "trials[0].repeat");
	refused("version: 1\ntrials:\n  - {name: a.b, config: c, argv: [x]}\n", "batch.file.name",
		3, "trials[0].name");
	refused("version: 1\ntrials:\n  - {name: ../x, config: c, argv: [x]}\n", "batch.file.name",
		3, NULL);
	refused("version: 1\ntrials:\n  - {config: c, argv: [x]}\n", "batch.file.name", 3,
		"trials[0].name");
	refused("version: 1\ntrials:\n  - {name: a, argv: [x]}\n", "batch.file.config", 3,
		"trials[0].config");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: []}\n", "batch.file.argv", 3,
		"trials[0].argv");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [[x]]}\n", "batch.file.argv",
		3, "trials[0].argv[0]");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x], mode: remote}\n",
		"batch.file.mode", 3, "trials[0].mode");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x], repetitions: 0}\n",
		"batch.file.repetitions", 3, "trials[0].repetitions");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x], timeout: 86401}\n",
		"batch.file.timeout", 3, "trials[0].timeout");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x], policy: p.yaml}\n",
		"batch.file.study_only", 3, "trials[0].policy");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x]}\n"
		"  - {name: a, config: c, argv: [y]}\n",
		"batch.file.duplicate_name", 4, "trials[1].name");
	refused("version: 1\ntrials:\n  - {name: a, config: c, argv: [x], repetitions: 600}\n"
		"  - {name: b, config: c, argv: [y], repetitions: 600}\n",
		"batch.file.too_many", 0, "trials");
	/* the loader's own rules hold: no aliases */
	refused("version: 1\ntrials:\n  - &t {name: a, config: c, argv: [x]}\n  - *t\n",
		"config.yaml.anchor", 0, NULL);
}

static void test_shards(void **state)
{
	(void)state;
	unsigned k, n;
	struct ag_error *err = NULL;
	assert_int_equal(ag_batch_shard_parse("2/3", &k, &n, &err), 0);
	assert_int_equal(k, 2);
	assert_int_equal(n, 3);
	static const char *const bad[] = {"0/3",  "4/3",  "3",	  "1/0",    "a/b",
					  "1/3x", "01/3", "-1/3", "1/1001", ""};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++) {
		assert_int_equal(ag_batch_shard_parse(bad[i], &k, &n, &err), -1);
		assert_string_equal(err->reason, "batch.shard");
		ag_error_free(err);
		err = NULL;
	}
	/* every index in exactly one shard, for every N */
	for (unsigned nn = 1; nn <= 7; nn++)
		for (size_t i = 0; i < 50; i++) {
			unsigned hits = 0;
			for (unsigned kk = 1; kk <= nn; kk++)
				hits += ag_batch_in_shard(i, kk, nn);
			assert_int_equal(hits, 1);
		}
	assert_true(ag_batch_in_shard(5, 0, 0)); /* no sharding: all */
}

static struct ag_batch *plan_batch(int study_reps, int contained_reps, int64_t mem)
{
	char doc[512];
	int n = snprintf(doc, sizeof(doc), "version: 1\ntrials:\n");
	if (study_reps)
		n += snprintf(doc + n, sizeof(doc) - (size_t)n,
			      "  - {name: s, mode: study, config: c, argv: [x], repetitions: %d}\n",
			      study_reps);
	if (contained_reps)
		snprintf(doc + n, sizeof(doc) - (size_t)n,
			 "  - {name: c, config: c, argv: [x], repetitions: %d}\n", contained_reps);
	struct ag_batch *b = load(doc);
	for (size_t i = 0; i < b->n_entries; i++)
		b->entries[i].memory_bytes = mem;
	return b;
}

static void test_plan(void **state)
{
	(void)state;
	struct ag_batch_facts f = {.cores = 2, .mem_available = 4ull << 30};
	struct ag_batch_plan p;
	struct ag_error *err = NULL;
	struct ag_batch *b = plan_batch(0, 8, 128 << 20);
	/* default: one per core */
	assert_int_equal(ag_batch_plan_make(b, &f, 0, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 2);
	assert_null(p.cut_by);
	/* cores: at most 4 per core */
	assert_int_equal(ag_batch_plan_make(b, &f, 64, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 8);
	assert_string_equal(p.cut_by, "cores");
	assert_int_equal(ag_batch_plan_make(b, &f, 8, 0, 0, &p, &err), 0);
	assert_null(p.cut_by); /* exactly the trials: nothing cut */
	f.cores = 1;
	assert_int_equal(ag_batch_plan_make(b, &f, 64, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 4);
	assert_string_equal(p.cut_by, "cores");
	/* memory: 80 % of 1 GiB holds 6 trials of 128 MiB */
	f.cores = 16;
	f.mem_available = 1ull << 30;
	assert_int_equal(ag_batch_plan_make(b, &f, 8, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 6);
	assert_string_equal(p.cut_by, "memory");
	char *t = ag_batch_plan_text(&p, &f);
	assert_non_null(strstr(t, "cut by memory: 128 MiB per trial, 1024 MiB available"));
	free(t);
	/* one trial that cannot fit: refused */
	f.mem_available = 100ull << 20;
	assert_int_equal(ag_batch_plan_make(b, &f, 8, 0, 0, &p, &err), -1);
	assert_string_equal(err->reason, "batch.plan.memory");
	ag_error_free(err);
	err = NULL;
	/* unknown memory: no memory bound */
	f.mem_available = 0;
	assert_int_equal(ag_batch_plan_make(b, &f, 8, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 8);
	/* a shard plans its own trials */
	assert_int_equal(ag_batch_plan_make(b, &f, 8, 1, 3, &p, &err), 0);
	assert_int_equal(p.trials, 3);
	assert_int_equal(p.jobs, 3);
	ag_batch_free(b);
}

static void test_plan_pool(void **state)
{
	(void)state;
	struct ag_batch_facts f = {
	    .cores = 8, .mem_available = 8ull << 30, .pools_read = true, .n_pools = 1};
	f.pool[0].pairs = 512;
	f.pool[0].free_pairs = 2;
	f.pool[0].prefix = 26;
	struct ag_batch_plan p;
	struct ag_error *err = NULL;
	struct ag_batch *b = plan_batch(4, 0, 128 << 20);
	assert_int_equal(ag_batch_plan_make(b, &f, 4, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 2);
	assert_string_equal(p.cut_by, "address_pool");
	assert_int_equal(p.by_pool, 2);
	json_t *j = ag_batch_plan_json(&p, &f);
	assert_string_equal(ag_json_path_str(j, "cut_by"), "address_pool");
	json_decref(j);
	/* a mixed batch keeps its concurrency; only its study trials are bound */
	ag_batch_free(b);
	b = plan_batch(4, 0, 128 << 20);
	b->entries[0].fixed_subnet = true;
	assert_int_equal(ag_batch_plan_make(b, &f, 4, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 1);
	assert_string_equal(p.cut_by, "fixed_subnet");
	ag_batch_free(b);
	b = plan_batch(4, 4, 128 << 20);
	assert_int_equal(ag_batch_plan_make(b, &f, 4, 0, 0, &p, &err), 0);
	assert_int_equal(p.jobs, 4);
	assert_int_equal(p.by_pool, 2);
	char *t = ag_batch_plan_text(&p, &f);
	assert_non_null(strstr(t, "at most 2 study trials at once"));
	free(t);
	/* a fixed study_subnet: one study trial at a time */
	b->entries[0].fixed_subnet = true;
	assert_int_equal(ag_batch_plan_make(b, &f, 4, 0, 0, &p, &err), 0);
	assert_int_equal(p.by_pool, 1);
	assert_int_equal(p.jobs, 4); /* the contained trials still run beside it */
	b->entries[0].fixed_subnet = false;
	/* no free pair: refused, with the fix */
	f.pool[0].free_pairs = 0;
	assert_int_equal(ag_batch_plan_make(b, &f, 4, 0, 0, &p, &err), -1);
	assert_string_equal(err->reason, "batch.plan.address_pool");
	assert_non_null(strstr(err->msg, "widen study_egress.subnet_pool"));
	ag_error_free(err);
	ag_batch_free(b);
}

static void test_records_and_render(void **state)
{
	(void)state;
	json_t *base = json_pack("{s:s, s:s, s:i, s:i, s:s}", "id", "a", "entry", "a", "repetition",
				 1, "index", 0, "mode", "contained");
	/* no evidence: the exit code, a safe reason only */
	struct ag_batch_outcome o = {.exit_code = 3, .reason = "preflight.engine", .wall_ms = 1500};
	json_t *r1 = ag_batch_trial_record(base, -1, NULL, NULL, &o);
	assert_string_equal(ag_json_path_str(r1, "exit_name"), "preflight");
	assert_string_equal(ag_json_path_str(r1, "reason"), "preflight.engine");
	assert_false(json_is_true(ag_json_path(r1, "evidence.verified")));
	assert_false(ag_batch_record_final(r1));
	o = (struct ag_batch_outcome){.exit_code = 2, .reason = "<script>"};
	json_t *r2 = ag_batch_trial_record(base, -1, "../escape", NULL, &o);
	assert_true(json_is_null(json_object_get(r2, "reason")));
	assert_string_equal(ag_json_path_str(r2, "evidence.problem"), "batch.evidence.run_id");
	o = (struct ag_batch_outcome){.exit_code = 130};
	json_t *r3 = ag_batch_trial_record(base, -1, NULL, NULL, &o);
	assert_string_equal(ag_json_path_str(r3, "exit_name"), "cancelled");
	json_decref(base);
	/* a hostile id in a record (a merged summary is read back) is escaped */
	json_object_set_new(r3, "id", json_string("<b>x|y</b>\x1b[31m"));
	json_t *recs = json_array();
	json_array_append_new(recs, r1);
	json_array_append_new(recs, r2);
	json_array_append_new(recs, r3);
	json_t *s = ag_batch_summary_of("ab", 3, recs, 0, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(s, "not_run")), 3);
	assert_false(json_is_true(json_object_get(s, "complete")));
	struct ag_buf b = AG_BUF_INIT(1 << 20, "t");
	struct ag_error *err = NULL;
	assert_int_equal(ag_batch_render(s, "html", &b, &err), 0);
	assert_null(strstr(b.buf, "<b>x"));
	assert_non_null(strstr(b.buf, "&#60;b&#62;x|y&#60;/b&#62;\\x1b[31m"));
	ag_buf_reset(&b);
	assert_int_equal(ag_batch_render(s, "md", &b, &err), 0);
	assert_non_null(strstr(b.buf, "\\<b\\>x\\|y"));
	ag_buf_reset(&b);
	assert_int_equal(ag_batch_render(s, "text", &b, &err), 0);
	assert_null(strchr(b.buf, '\x1b'));
	assert_int_equal(ag_batch_render(s, "pdf", &b, &err), -1);
	ag_error_free(err);
	ag_buf_release(&b);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_expands), cmocka_unit_test(test_file_refused),
	    cmocka_unit_test(test_shards),	 cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_plan_pool),	 cmocka_unit_test(test_records_and_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
