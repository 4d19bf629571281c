/*
 * Unit tests for the config core: YAML 1.2 typing, YAML hazards, locations
 * and key paths, defaults, the image reference parser, the environment
 * name rules and the contained-run cross-field check. The big accept/reject
 * corpus lives in tests/config-corpus and is driven by tests/cli/t0100.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/config/imageref.h"
#include "lib/config/yaml_load.h"

#define BASE                                                                                       \
	"task_id: t\ndescription: d\ntest_command: c\nrepo_template: r\n"                          \
	"expected_modified_files: {min: 0, max: 1}\n"
#define DIGEST "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CONTAINED                                                                                  \
	BASE "sandbox: {type: docker, image: \"127.0.0.1:5000/x" DIGEST "\"}\n"                    \
	     "contained_execution:\n  version: 1\n  platform: linux-docker-engine\n"

static struct ag_config *load_ok(const char *doc)
{
	struct ag_config *c = NULL;
	struct ag_error *err = NULL;
	int r = ag_config_load_mem(doc, strlen(doc), "t.yaml", &c, &err);
	if (r < 0) {
		char *s = ag_error_format(err);
		print_error("unexpected error: %s\n", s);
		free(s);
		ag_error_free(err);
		fail();
	}
	return c;
}

static struct ag_error *load_err(const char *doc)
{
	struct ag_config *c = NULL;
	struct ag_error *err = NULL;
	int r = ag_config_load_mem(doc, strlen(doc), "t.yaml", &c, &err);
	if (r == 0) {
		ag_config_free(c);
		print_error("document was accepted:\n%s\n", doc);
		fail();
	}
	assert_non_null(err);
	return err;
}

static void expect(const char *doc, const char *reason, const char *key, unsigned line)
{
	struct ag_error *e = load_err(doc);
	assert_string_equal(e->reason, reason);
	if (key)
		assert_string_equal(e->key ? e->key : "(none)", key);
	if (line)
		assert_int_equal(e->line, line);
	assert_string_equal(e->file, "t.yaml");
	ag_error_free(e);
}

static void test_defaults(void **state)
{
	(void)state;
	struct ag_config *c = load_ok(CONTAINED);
	assert_int_equal(c->command_timeout_seconds, 60);
	assert_int_equal(c->max_output_bytes, 200000);
	assert_true(c->contained.present);
	assert_int_equal(c->contained.required_uid, 1000);
	assert_int_equal(c->contained.required_gid, 1000);
	assert_true(c->contained.cpu_limit == 1.0);
	assert_int_equal(c->contained.memory_bytes, 512LL << 20);
	assert_string_equal(c->contained.memory_limit, "512m");
	assert_int_equal(c->contained.pids_limit, 256);
	assert_int_equal(c->contained.tmpfs_bytes, 256LL << 20);
	assert_int_equal(c->contained.network, AG_NET_NONE);
	assert_int_equal(c->sandbox.network, AG_NET_NONE);
	assert_string_equal(c->sandbox.workdir, "/workspace");
	assert_string_equal(c->sandbox.image_ref.repository, "127.0.0.1:5000/x");
	assert_string_equal(c->sandbox.image_ref.registry, "127.0.0.1:5000");
	assert_non_null(c->sandbox.image_ref.digest);
	ag_config_free(c);
}

static void test_core_schema_typing(void **state)
{
	(void)state;
	/* "1000" is a string: a type error for an integer field. */
	expect(BASE "command_timeout_seconds: \"1000\"\n", "config.type", "command_timeout_seconds",
	       6);
	expect(BASE "command_timeout_seconds: 10.0\n", "config.type", "command_timeout_seconds", 6);
	/* yes/no/on/off are strings in YAML 1.2. */
	expect(CONTAINED "  allow_privileged: no\n", "config.type",
	       "contained_execution.allow_privileged", 10);
	expect(CONTAINED "  allow_privileged: \"false\"\n", "config.type",
	       "contained_execution.allow_privileged", 10);
	expect(CONTAINED "  version: true\n", "config.yaml.duplicate_key", NULL, 10);
	struct ag_config *c = load_ok(CONTAINED "  allow_privileged: FALSE\n  cpu_limit: 2\n"
						"  pids_limit: 0x20\n");
	assert_true(c->contained.cpu_limit == 2.0);
	assert_int_equal(c->contained.pids_limit, 32);
	ag_config_free(c);
	expect(BASE "max_output_bytes: 99999999999999999999999\n", "config.range",
	       "max_output_bytes", 6);
	expect(CONTAINED "  cpu_limit: .inf\n", "config.range", "contained_execution.cpu_limit",
	       10);
	expect(CONTAINED "  cpu_limit: .nan\n", "config.range", "contained_execution.cpu_limit",
	       10);
	expect(CONTAINED "  cpu_limit: \"1.0\"\n", "config.type", "contained_execution.cpu_limit",
	       10);
}

static void test_yaml_hazards(void **state)
{
	(void)state;
	expect("a: &x 1\n", "config.yaml.anchor", NULL, 1);
	expect(BASE "forbidden_paths: *nope\n", "config.yaml.alias", NULL, 6);
	expect(BASE "x: !!str 5\n", "config.yaml.tag", NULL, 6);
	expect(BASE "x: !custom 5\n", "config.yaml.tag", NULL, 6);
	expect("%TAG !e! tag:example.com,2000:\n---\na: 1\n", "config.yaml.tag", NULL, 0);
	expect(BASE "<<: {a: b}\n", "config.yaml.merge_key", NULL, 6);
	expect(BASE "task_id: again\n", "config.yaml.duplicate_key", NULL, 6);
	expect(BASE "---\n" BASE, "config.yaml.multiple_documents", NULL, 6);
	expect("# only a comment\n", "config.yaml.empty", NULL, 0);
	expect("~\n", "config.yaml.empty", NULL, 0);
	expect("", "config.yaml.empty", NULL, 0);
	expect("- a\n- b\n", "config.yaml.top_not_mapping", NULL, 1);
	expect("just text\n", "config.yaml.top_not_mapping", NULL, 1);
	expect(BASE "1: x\n", "config.yaml.non_string_key", NULL, 6);
	expect(BASE "true: x\n", "config.yaml.non_string_key", NULL, 6);
	expect(BASE "? [a]\n: b\n", "config.yaml.non_string_key", NULL, 6);
	expect("a:\tb\n\tc: d\n", "config.yaml.syntax", NULL, 0);
	expect("a: \"\xff\"\n", "config.yaml.syntax", NULL, 0);
	/* Billion laughs: refused at the first anchor, nothing expanded. */
	expect("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "config.yaml.anchor", NULL, 1);
	/* A quoted "1" key is a string key: unknown, not non-string. */
	expect(BASE "\"1\": x\n", "config.unknown_key", "1", 6);
}

static void test_depth_and_size(void **state)
{
	(void)state;
	char *deep = ag_xstrdup("");
	for (int i = 0; i < 70; i++) {
		char *n = ag_xasprintf("%s[", deep);
		free(deep);
		deep = n;
	}
	char *doc = ag_xasprintf("x: %s\n", deep);
	expect(doc, "config.yaml.depth", NULL, 0);
	free(doc);
	free(deep);
	size_t big = 65537;
	char *s = ag_xmalloc(big + 64);
	int n = snprintf(s, 64, "description: \"");
	memset(s + n, 'a', big);
	memcpy(s + n + big, "\"\n", 3);
	expect(s, "config.yaml.scalar_too_long", NULL, 1);
	free(s);
}

static void test_locations_and_paths(void **state)
{
	(void)state;
	expect(CONTAINED "  environment:\n    - name: OK\n      value: x\n    - name: HOME\n"
			 "      value: y\n",
	       "config.env.reserved", "contained_execution.environment[1].name", 13);
	expect(CONTAINED "  netwrok: none\n", "config.unknown_key", "contained_execution.netwrok",
	       10);
	struct ag_error *e = load_err(BASE "forbiden_paths: []\n");
	assert_string_equal(e->reason, "config.unknown_key");
	assert_non_null(strstr(e->msg, "did you mean 'forbidden_paths'"));
	assert_int_equal(e->column, 1);
	ag_error_free(e);
	/* Missing required key: located at the mapping, named by its path. */
	expect("description: d\ntest_command: c\nrepo_template: r\n"
	       "expected_modified_files: {min: 0, max: 1}\n",
	       "config.missing_required", "task_id", 1);
	expect(BASE "expected_modified_files_x: 1\n", "config.unknown_key", NULL, 6);
	expect("task_id: t\ndescription: d\ntest_command: c\nrepo_template: r\n"
	       "expected_modified_files: {min: 2, max: 1}\n",
	       "config.min_gt_max", "expected_modified_files.min", 5);
	/* Key names are escaped, never echoed raw. */
	e = load_err(BASE "\"bad\\x1bkey\": 1\n");
	assert_non_null(strstr(e->key, "\\x1b"));
	ag_error_free(e);
}

static void test_no_values_in_errors(void **state)
{
	(void)state;
	const char *docs[] = {
	    CONTAINED "  environment:\n    - name: API_TOKEN\n      value: CANARY-SECRET-v1\n",
	    CONTAINED "  environment:\n    - name: OK\n      value: \"CANARY-SECRET-v2\\t\"\n",
	    BASE "secret_content_patterns:\n  - {id: a, contains: \"CANARY-SECRET-v3\\n\"}\n",
	    BASE "agent_environment: {A: CANARY-SECRET-v4}\ncommand_timeout_seconds: x\n",
	    CONTAINED "  memory_limit: CANARY-SECRET-v5\n",
	    BASE "sandbox: {type: docker, image: \"CANARY-SECRET-v6 x\"}\n",
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(docs); i++) {
		struct ag_error *e = load_err(docs[i]);
		char *s = ag_error_format(e);
		assert_null(strstr(s, "CANARY-SECRET"));
		free(s);
		ag_error_free(e);
	}
}

static void test_contained_rules(void **state)
{
	(void)state;
	expect(CONTAINED "  version: 2\n", "config.yaml.duplicate_key", NULL, 10);
	expect(BASE "sandbox: {type: docker, image: \"a" DIGEST "\"}\n"
		    "contained_execution: {version: 2, platform: linux-docker-engine}\n",
	       "config.contained.version", "contained_execution.version", 7);
	expect(CONTAINED "  network: host\n", "config.contained.forbidden",
	       "contained_execution.network", 10);
	expect(CONTAINED "  allow_privileged: true\n", "config.contained.forbidden",
	       "contained_execution.allow_privileged", 10);
	expect(CONTAINED "  require_evidence_outside_agent_repo: false\n",
	       "config.contained.forbidden",
	       "contained_execution.require_evidence_outside_agent_repo", 10);
	expect(CONTAINED "  memory_limit: 63m\n", "config.range",
	       "contained_execution.memory_limit", 10);
	expect(CONTAINED "  memory_limit: 512mb\n", "config.pattern",
	       "contained_execution.memory_limit", 10);
	expect(CONTAINED "  tmpfs_size: 5g\n", "config.range", "contained_execution.tmpfs_size",
	       10);
	expect(CONTAINED "  required_uid: 0\n", "config.range", "contained_execution.required_uid",
	       10);
	expect(BASE "sandbox: {type: docker, image: \"a:1\"}\n"
		    "contained_execution: {version: 1, platform: linux-docker-engine}\n",
	       "config.contained.image_not_pinned", "sandbox.image", 6);
	expect(BASE "sandbox: {type: local}\n"
		    "contained_execution: {version: 1, platform: linux-docker-engine}\n",
	       "config.contained.sandbox_type", "sandbox.type", 6);
	expect(BASE "sandbox: {type: docker, image: \"a" DIGEST "\", network: bridge}\n"
		    "contained_execution: {version: 1, platform: linux-docker-engine}\n",
	       "config.contained.network_mismatch", "sandbox.network", 6);
	struct ag_config *c = load_ok(CONTAINED "  memory_limit: 16g\n  tmpfs_size: 64k\n");
	ag_config_free(c);
	c = load_ok(BASE "sandbox: {type: docker, image: \"a" DIGEST "\", network: bridge}\n"
			 "contained_execution: {version: 1, platform: docker-desktop-experimental,"
			 " network: bridge, memory_limit: 16g, tmpfs_size: 64k}\n");
	assert_int_equal(c->contained.platform, AG_PLATFORM_DESKTOP_EXPERIMENTAL);
	assert_int_equal(c->contained.memory_bytes, 16LL << 30);
	assert_int_equal(c->contained.tmpfs_bytes, 64LL << 10);
	ag_config_free(c);
}

static void test_environment(void **state)
{
	(void)state;
	struct ag_config *c =
	    load_ok(CONTAINED "  environment:\n"
			      "    - {name: AGENT_API_TOKEN, source: host, required: true,"
			      " allow_sensitive: true}\n"
			      "    - {name: AGENT_MODE, value: batch}\n");
	assert_int_equal(c->contained.n_env, 2);
	assert_true(c->contained.env[0].sensitive);
	assert_int_equal(c->contained.env[0].source, AG_ENV_HOST);
	assert_null(c->contained.env[0].value);
	assert_false(c->contained.env[1].sensitive);
	assert_string_equal(c->contained.env[1].value, "batch");
	ag_config_free(c);
	expect(CONTAINED "  environment:\n    - {name: A, value: x}\n    - {name: A, value: y}\n",
	       "config.env.duplicate", "contained_execution.environment[1].name", 12);
	expect(CONTAINED "  environment:\n    - {name: A, source: host, value: y}\n",
	       "config.env.source", "contained_execution.environment[0].value", 11);
	expect(CONTAINED "  environment:\n    - {name: A}\n", "config.env.source",
	       "contained_execution.environment[0].value", 11);
	expect(CONTAINED "  environment:\n    - {name: MY_KEY, value: x}\n", "config.env.sensitive",
	       "contained_execution.environment[0]", 11);
	expect(CONTAINED "  environment:\n    - {name: A, value: x, sensitive: true}\n",
	       "config.env.sensitive", "contained_execution.environment[0]", 11);
	expect(CONTAINED "  environment:\n    - {name: A, value: \"a\\x7fb\"}\n",
	       "config.env.value_control", "contained_execution.environment[0].value", 11);
	expect(CONTAINED "  environment:\n    - {name: A, value: \"a\\0b\"}\n",
	       "config.env.value_control", "contained_execution.environment[0].value", 11);
	assert_true(ag_env_name_reserved("PATH"));
	assert_true(ag_env_name_reserved("DOCKER_ANYTHING"));
	assert_true(ag_env_name_reserved("LD_PRELOAD"));
	assert_true(ag_env_name_reserved("MY_RUNTIME_DIR"));
	assert_true(ag_env_name_reserved("NPM_CONFIG"));
	assert_false(ag_env_name_reserved("HOMEPAGE"));
	assert_false(ag_env_name_reserved("DOCKERFILE"));
	assert_false(ag_env_name_reserved("MY_PATHS"));
	assert_true(ag_env_name_sensitive("GH_PAT_PASSWORD"));
	assert_true(ag_env_name_sensitive("MONKEY"));
	assert_false(ag_env_name_sensitive("AGENT_MODE"));
	assert_false(ag_env_name_valid("lower"));
	assert_false(ag_env_name_valid("1A"));
	assert_false(ag_env_name_valid(""));
	assert_true(ag_env_name_valid("_A1"));
}

struct refcase {
	const char *ref;
	const char *reason; /* NULL: valid */
	const char *repository;
};

static void test_image_refs(void **state)
{
	(void)state;
	static const struct refcase cases[] = {
	    {"busybox", NULL, "busybox"},
	    {"library/busybox:1.36", NULL, "library/busybox"},
	    {"127.0.0.1:5000/agentguard-test" DIGEST, NULL, "127.0.0.1:5000/agentguard-test"},
	    {"localhost/a/b/c:tag" DIGEST, NULL, "localhost/a/b/c"},
	    {"registry.example.com:443/a__b/c-d--e.f:v1.2_x", NULL,
	     "registry.example.com:443/a__b/c-d--e.f"},
	    {"-busybox", "config.image.option_like", NULL},
	    {"--privileged", "config.image.option_like", NULL},
	    {"busy box", "config.image.control", NULL},
	    {"busybox\n", "config.image.control", NULL},
	    {"BusyBox", "config.image.invalid", NULL},
	    {"a//b", "config.image.invalid", NULL},
	    {"a/", "config.image.invalid", NULL},
	    {"a:", "config.image.invalid", NULL},
	    {"a@sha256:abc", "config.image.invalid", NULL},
	    {"a@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
	     "config.image.invalid", NULL},
	    {"a@md5:0123456789abcdef0123456789abcdef", "config.image.invalid", NULL},
	    {"host:99999/a", "config.image.invalid", NULL},
	    {"host:0/a", "config.image.invalid", NULL},
	    {"-host.com/a", "config.image.option_like", NULL},
	    {"a:.tag", "config.image.invalid", NULL},
	    {"a_/b", "config.image.invalid", NULL},
	    {"", "config.image.invalid", NULL},
	};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		struct ag_image_ref r;
		struct ag_error *e = NULL;
		int rc = ag_image_ref_parse(cases[i].ref, &r, &e);
		if (!cases[i].reason) {
			if (rc != 0)
				print_error("rejected valid ref #%zu: %s\n", i, e->msg);
			assert_int_equal(rc, 0);
			assert_string_equal(r.repository, cases[i].repository);
			ag_image_ref_release(&r);
		} else {
			if (rc == 0)
				print_error("accepted invalid ref #%zu\n", i);
			assert_int_equal(rc, -1);
			assert_string_equal(e->reason, cases[i].reason);
			ag_error_free(e);
		}
	}
	char tag[200];
	memset(tag, 'a', sizeof(tag));
	tag[0] = 'x';
	tag[1] = ':';
	tag[2 + 128] = '\0';
	struct ag_image_ref r;
	struct ag_error *e = NULL;
	assert_int_equal(ag_image_ref_parse(tag, &r, &e), 0);
	ag_image_ref_release(&r);
	tag[2 + 128] = 'a';
	tag[2 + 129] = '\0';
	assert_int_equal(ag_image_ref_parse(tag, &r, &e), -1);
	ag_error_free(e);
}

static void test_cross_field_run(void **state)
{
	(void)state;
	struct ag_config *c = load_ok(CONTAINED "  required_uid: 2001\n  required_gid: 2002\n");
	struct ag_error *e = NULL;
	assert_int_equal(ag_config_check_contained_run(c, 2001, 2002, &e), 0);
	assert_int_equal(ag_config_check_contained_run(c, 0, 2002, &e), -1);
	assert_string_equal(e->reason, "config.cross.uid_mismatch");
	ag_error_free(e);
	e = NULL;
	assert_int_equal(ag_config_check_contained_run(c, 2001, 0, &e), -1);
	assert_string_equal(e->reason, "config.cross.gid_mismatch");
	ag_error_free(e);
	ag_config_free(c);
	c = load_ok(BASE);
	e = NULL;
	assert_int_equal(ag_config_check_contained_run(c, 1000, 1000, &e), -1);
	assert_string_equal(e->reason, "config.cross.no_contained");
	ag_error_free(e);
	ag_config_free(c);
}

static void test_full_document(void **state)
{
	(void)state;
	struct ag_config *c = load_ok(
	    "task_id: Full.task-1\ndescription: all keys\ntest_command: make test\nmode: ci\n"
	    "expected_modified_files: {min: 1, max: 5}\n"
	    "agent_command: [agent, --run]\nagent_version_command: agent --version\n"
	    "agent_environment: {A: b}\nagent_metadata: {k: 1, f: 1.5, b: true, n: ~, s: x}\n"
	    "agent_model: m\nagent_name: n\nagent_workdir: config_dir\n"
	    "allowed_paths: [src/**]\nforbidden_paths: [secrets/**]\ntest_paths: [tests/**]\n"
	    "secret_patterns: ['*.pem']\nunsafe_commands: [rm -rf]\nguard_ignore_paths: [x]\n"
	    "benchmark: {id: b, version: \"3\", category: c, difficulty: hard, tags: [a],"
	    " expected_behavior: e, failure_mode: f}\n"
	    "command_policy: {mode: enforce}\ncommand_timeout_seconds: 86400\n"
	    "max_output_bytes: 67108864\n"
	    "diff_limits: {max_files_changed: 3, max_lines_added: ~, max_lines_deleted: 0}\n"
	    "filesystem_watcher: {mode: polling}\n"
	    "policy: {secret_scan: {severity: warning}}\n"
	    "sandbox: {type: docker, image: \"a" DIGEST "\", workdir: /w, read_only: true,"
	    " timeout_seconds: 5, docker: {cpus: \"1.5e0\", memory: 1g, network: none,"
	    " read_only: true}}\n"
	    "secret_content_builtin_detectors: [private-key-header, npm-token-shape]\n"
	    "secret_content_patterns: [{id: acme.key, contains: ACME-0123456789}]\n"
	    "task: {prompt: do it}\n");
	assert_int_equal(c->mode, AG_MODE_CI);
	assert_int_equal(c->agent_command.n, 2);
	assert_true(c->agent_command_is_list);
	assert_int_equal(c->n_agent_metadata, 5);
	assert_int_equal(c->benchmark.version, 3);
	assert_int_equal(c->benchmark.difficulty, AG_DIFF_HARD);
	assert_int_equal(c->command_policy, AG_CMD_POLICY_ENFORCE);
	assert_true(c->max_files_changed.set);
	assert_false(c->max_lines_added.set);
	assert_int_equal(c->severity[AG_CHECK_SECRET_SCAN], AG_SEV_WARNING);
	assert_true(c->sandbox.docker_cpus == 1.5);
	assert_int_equal(c->builtin_detectors, AG_DET_PRIVATE_KEY_HEADER | AG_DET_NPM_TOKEN);
	assert_string_equal(c->task_prompt, "do it");
	assert_int_equal(c->filesystem_watcher, AG_WATCHER_POLLING);
	ag_config_free(c);
}

/* contained_execution.runtime and runtime_name (issue 24). */
static void test_runtime(void **state)
{
	(void)state;
	struct ag_config *c = load_ok(CONTAINED);
	assert_int_equal(c->contained.runtime, AG_RUNTIME_RUNC);
	assert_null(c->contained.runtime_name);
	ag_config_free(c);
	c = load_ok(CONTAINED "  runtime: gvisor\n");
	assert_int_equal(c->contained.runtime, AG_RUNTIME_GVISOR);
	assert_string_equal(c->contained.runtime_name, "runsc");
	assert_string_equal(ag_runtime_name(c->contained.runtime), "gvisor");
	ag_config_free(c);
	c = load_ok(CONTAINED
		    "  runtime: gvisor\n  runtime_name: runsc-ptrace.1\n  pids_limit: 300\n");
	assert_string_equal(c->contained.runtime_name, "runsc-ptrace.1");
	ag_config_free(c);
	expect(CONTAINED "  runtime: kata\n", "config.enum", "contained_execution.runtime", 10);
	expect(CONTAINED "  runtime_name: runsc\n", "config.contained.runtime_name",
	       "contained_execution.runtime_name", 10);
	expect(CONTAINED "  runtime: gvisor\n  runtime_name: Run_SC\n",
	       "config.contained.runtime_name", "contained_execution.runtime_name", 11);
	expect(CONTAINED "  runtime: gvisor\n  runtime_name: ''\n", "config.contained.runtime_name",
	       "contained_execution.runtime_name", 11);
	expect(CONTAINED "  runtime: gvisor\n  pids_limit: 255\n", "config.contained.runtime_pids",
	       "contained_execution.pids_limit", 11);
	/* runc keeps the v1 range */
	c = load_ok(CONTAINED "  pids_limit: 16\n");
	ag_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_core_schema_typing),
	    cmocka_unit_test(test_yaml_hazards),
	    cmocka_unit_test(test_depth_and_size),
	    cmocka_unit_test(test_locations_and_paths),
	    cmocka_unit_test(test_no_values_in_errors),
	    cmocka_unit_test(test_contained_rules),
	    cmocka_unit_test(test_environment),
	    cmocka_unit_test(test_image_refs),
	    cmocka_unit_test(test_cross_field_run),
	    cmocka_unit_test(test_full_document),
	    cmocka_unit_test(test_runtime),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
