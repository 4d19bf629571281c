/*
 * test_render.c: the typed exec spec and its docker argv, pinned exactly,
 * and one rejection per validation rule (asserting the reason token).
 */
#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"
#include "lib/docker/exec_spec.h"
#include "lib/run/deadline.h"

#include <setjmp.h>
#include <cmocka.h>

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define IMG "127.0.0.1:5000/agentguard-test@" DIGEST
#define DEFAULT_ENV                                                                                \
	"--env", "HOME=/tmp/agentguard-home", "--env", "LANG=C.UTF-8", "--env", "LC_ALL=C.UTF-8",  \
	    "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void assert_argv(const struct ag_strv *got, const char *const *want)
{
	size_t n = 0;
	while (want[n])
		n++;
	for (size_t i = 0; i < n && i < got->n; i++)
		if (strcmp(got->v[i], want[i]) != 0)
			fail_msg("argv[%zu]: got '%s', want '%s'", i, got->v[i], want[i]);
	if (got->n != n)
		fail_msg("argv has %zu items, want %zu", got->n, n);
	assert_null(got->v[got->n]);
}

static struct ag_config *load(const char *yaml)
{
	struct ag_config *c = NULL;
	struct ag_error *e = NULL;
	if (ag_config_load_mem(yaml, strlen(yaml), "test.yaml", &c, &e) < 0)
		fail_msg("config: %s [%s]", e->msg, e->reason);
	return c;
}

static const char cfg_bind[] = "task_id: task-1\n"
			       "description: d\n"
			       "test_command: 'true'\n"
			       "repo_template: repo\n"
			       "expected_modified_files: {min: 0, max: 3}\n"
			       "sandbox:\n"
			       "  type: docker\n"
			       "  image: '" IMG "'\n"
			       "contained_execution:\n"
			       "  version: 1\n"
			       "  platform: linux-docker-engine\n"
			       "  required_uid: 1000\n"
			       "  required_gid: 1000\n"
			       "  cpu_limit: 1.5\n"
			       "  memory_limit: 512m\n"
			       "  pids_limit: 256\n"
			       "  tmpfs_size: 128m\n";

static void test_bind_workspace_from_config(void **state)
{
	(void)state;
	struct ag_config *c = load(cfg_bind);
	const char *env[] = {"TERM=dumb", "AGENT_MODE=batch"};
	const char *cmd[] = {"python", "-m", "pytest"};
	struct ag_exec_inputs in = {
	    .workspace_host_path = "/srv/runs/r1/workspace",
	    .container_name = "agentguard-task-1",
	    .env = env,
	    .n_env = 2,
	    .command = cmd,
	    .n_command = 3,
	};
	struct ag_exec_spec s;
	struct ag_error *e = NULL;
	assert_int_equal(ag_exec_spec_from_config(c, &in, &s, &e), 0);
	struct ag_strv out = AG_STRV_INIT;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), 0);
	const char *want[] = {
	    "run",
	    "--rm",
	    "--name",
	    "agentguard-task-1",
	    "--network",
	    "none",
	    "--security-opt",
	    "no-new-privileges",
	    "--cap-drop",
	    "ALL",
	    "--cgroupns",
	    "private",
	    "--pids-limit",
	    "256",
	    "--memory",
	    "512m",
	    "--memory-swap",
	    "512m",
	    "--cpus",
	    "1.5",
	    "--read-only",
	    "--no-healthcheck",
	    "--log-driver",
	    "none",
	    "--tmpfs",
	    "/tmp:rw,noexec,nosuid,nodev,size=128m,uid=1000,gid=1000,mode=700",
	    "--mount",
	    "type=bind,source=/srv/runs/r1/workspace,target=/agentguard-workspace",
	    "--workdir",
	    "/agentguard-workspace",
	    "--user",
	    "1000:1000",
	    "--env",
	    "AGENT_MODE=batch",
	    DEFAULT_ENV,
	    "--env",
	    "TERM=dumb",
	    "--entrypoint=python",
	    "--",
	    IMG,
	    "-m",
	    "pytest",
	    NULL};
	assert_argv(&out, want);
	ag_strv_release(&out);
	ag_config_free(c);
}

static void test_tmpfs_workspace_bridge_create(void **state)
{
	(void)state;
	struct ag_config *c = load("task_id: t\n"
				   "description: d\n"
				   "test_command: 'true'\n"
				   "repo_template: repo\n"
				   "expected_modified_files: {min: 0, max: 3}\n"
				   "sandbox:\n"
				   "  type: docker\n"
				   "  image: '" IMG "'\n"
				   "  network: bridge\n"
				   "contained_execution:\n"
				   "  version: 1\n"
				   "  platform: linux-docker-engine\n"
				   "  network: bridge\n"
				   "  required_uid: 2001\n"
				   "  required_gid: 2002\n"
				   "  cpu_limit: 2\n");
	const struct ag_label labels[] = {
	    {"agentguard.owner", "contained-run"},
	    {"agentguard.contained-run.id", "run-20261129T221400Z-ab12"},
	};
	const char *cmd[] = {"/bin/id", "-u"};
	struct ag_exec_inputs in = {
	    .entrypoint = "/usr/local/bin/agent-entry",
	    .labels = labels,
	    .n_labels = 2,
	    .command = cmd,
	    .n_command = 2,
	};
	struct ag_exec_spec s;
	struct ag_error *e = NULL;
	assert_int_equal(ag_exec_spec_from_config(c, &in, &s, &e), 0);
	struct ag_strv out = AG_STRV_INIT;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_CREATE, &out, &e), 0);
	const char *want[] = {
	    "create",
	    "--network",
	    "bridge",
	    "--security-opt",
	    "no-new-privileges",
	    "--cap-drop",
	    "ALL",
	    "--cgroupns",
	    "private",
	    "--pids-limit",
	    "256",
	    "--memory",
	    "512m",
	    "--memory-swap",
	    "512m",
	    "--cpus",
	    "2",
	    "--read-only",
	    "--no-healthcheck",
	    "--log-driver",
	    "none",
	    "--tmpfs",
	    "/tmp:rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2002,mode=700",
	    "--tmpfs",
	    "/agentguard-workspace:rw,noexec,nosuid,nodev,size=256m,uid=2001,gid=2002,mode=700",
	    "--workdir",
	    "/agentguard-workspace",
	    "--user",
	    "2001:2002",
	    DEFAULT_ENV,
	    "--entrypoint",
	    "/usr/local/bin/agent-entry",
	    "--label",
	    "agentguard.contained-run.id=run-20261129T221400Z-ab12",
	    "--label",
	    "agentguard.owner=contained-run",
	    "--",
	    IMG,
	    "/bin/id",
	    "-u",
	    NULL};
	assert_argv(&out, want);
	ag_strv_release(&out);
	ag_config_free(c);
}

/* A valid hand-built spec; rejection tests mutate one field of a copy. */
static const char *const base_cmd[] = {"/bin/true"};
static const struct ag_exec_spec base = {
    .image = IMG,
    .network = AG_NET_NONE,
    .uid = 1000,
    .gid = 1000,
    .cpu_limit = 1.0,
    .memory_limit = "512m",
    .pids_limit = 256,
    .tmpfs_path = "/tmp",
    .tmpfs_size = "256m",
    .workspace_container_path = "/workspace",
    .command = base_cmd,
    .n_command = 1,
};

static void test_env_sorted_with_defaults(void **state)
{
	(void)state;
	const char *env[] = {"ZED=1", "A1=x", "A=y", "LC_CTYPE=C", "B_=", "AB=z"};
	struct ag_exec_spec s = base;
	s.env = env;
	s.n_env = AG_ARRAY_SIZE(env);
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), 0);
	const char *want[] = {
	    "run", "--rm", "--network", "none", "--security-opt", "no-new-privileges", "--cap-drop",
	    "ALL", "--cgroupns", "private", "--pids-limit", "256", "--memory", "512m",
	    "--memory-swap", "512m", "--cpus", "1", "--read-only", "--no-healthcheck",
	    "--log-driver", "none", "--tmpfs",
	    "/tmp:rw,noexec,nosuid,nodev,size=256m,uid=1000,gid=1000,mode=700", "--tmpfs",
	    "/workspace:rw,noexec,nosuid,nodev,size=256m,uid=1000,gid=1000,mode=700", "--workdir",
	    "/workspace", "--user", "1000:1000",
	    /* by name: A < A1 < AB < B_ < HOME < LANG < LC_ALL < LC_CTYPE < PATH < ZED */
	    "--env", "A=y", "--env", "A1=x", "--env", "AB=z", "--env", "B_=", "--env",
	    "HOME=/tmp/agentguard-home", "--env", "LANG=C.UTF-8", "--env", "LC_ALL=C.UTF-8",
	    "--env", "LC_CTYPE=C", "--env",
	    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--env", "ZED=1",
	    "--entrypoint=/bin/true", "--", IMG, NULL};
	assert_argv(&out, want);
	ag_strv_release(&out);
}

static void test_child_argv_verbatim(void **state)
{
	(void)state;
	const char *cmd[] = {"/usr/bin/tool", "--help",	 "--",	  "-h",	 "--empty=", ";|&$()", "",
			     "a b",	      "héllo ✓", "$(id)", "'\"", "-",	     "\t\n"};
	struct ag_exec_spec s = base;
	s.command = cmd;
	s.n_command = AG_ARRAY_SIZE(cmd);
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), 0);
	ssize_t img = ag_strv_find(&out, IMG);
	assert_true(img > 0);
	assert_string_equal(out.v[img - 1], "--");
	/* argv[0] is the entrypoint, one token; the rest follows the image. */
	assert_string_equal(out.v[img - 2], "--entrypoint=/usr/bin/tool");
	assert_int_equal(out.n - (size_t)img - 1, AG_ARRAY_SIZE(cmd) - 1);
	for (size_t i = 1; i < AG_ARRAY_SIZE(cmd); i++)
		assert_string_equal(out.v[(size_t)img + i], cmd[i]);
	/* The first "--" is the one before the image: nothing of the command leaks left. */
	assert_int_equal(ag_strv_find(&out, "--"), img - 1);
	ag_strv_release(&out);
}

/* An option-like argv[0] is a value of --entrypoint=, never a Docker flag. */
static void test_argv0_option_like(void **state)
{
	(void)state;
	const char *cmd[] = {"--privileged", "x"};
	struct ag_exec_spec s = base;
	s.command = cmd;
	s.n_command = AG_ARRAY_SIZE(cmd);
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), 0);
	assert_int_equal(ag_strv_find(&out, "--privileged"), -1);
	ssize_t img = ag_strv_find(&out, IMG);
	assert_string_equal(out.v[img - 2], "--entrypoint=--privileged");
	assert_string_equal(out.v[img + 1], "x");
	assert_true(ag_strv_find(&out, "--no-healthcheck") > 0);
	ag_strv_release(&out);
}

/* The study gateway's evidence files: bound one by one inside the tmpfs
 * workspace (ro or rw as given), every written file bounded by the fsize
 * ulimit, the log driver "none" in the argv and the create request alike;
 * a bind outside the workspace, beside a workspace bind, or a limit out of
 * range is refused. */
static void test_file_binds_and_fsize(void **state)
{
	(void)state;
	static const struct ag_exec_file_bind files[] = {
	    {"/srv/run/egress/policy.json", "/workspace/policy.json", true},
	    {"/srv/run/egress/events.jsonl", "/workspace/events.jsonl", false},
	};
	struct ag_exec_spec s = base;
	s.file_binds = files;
	s.n_file_binds = AG_ARRAY_SIZE(files);
	s.file_size_max = 16777216;
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_CREATE, &out, &e), 0);
	ssize_t u = ag_strv_find(&out, "--ulimit");
	assert_true(u > 0);
	assert_string_equal(out.v[u + 1], "fsize=16777216");
	ssize_t l = ag_strv_find(&out, "--log-driver");
	assert_true(l > 0);
	assert_string_equal(out.v[l + 1], "none");
	assert_true(ag_strv_find(&out, "type=bind,source=/srv/run/egress/policy.json,target=/"
				       "workspace/policy.json,readonly") > 0);
	assert_true(ag_strv_find(&out, "type=bind,source=/srv/run/egress/events.jsonl,target=/"
				       "workspace/events.jsonl") > 0);
	ag_strv_release(&out);

	json_t *req = NULL;
	assert_int_equal(ag_render_create_request(&s, &req, &e), 0);
	json_t *h = json_object_get(req, "HostConfig");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(h, "LogConfig"), "Type")), "none");
	json_t *ul = json_array_get(json_object_get(h, "Ulimits"), 0);
	assert_string_equal(json_string_value(json_object_get(ul, "Name")), "fsize");
	assert_int_equal(json_integer_value(json_object_get(ul, "Soft")), 16777216);
	assert_int_equal(json_integer_value(json_object_get(ul, "Hard")), 16777216);
	json_t *mounts = json_object_get(h, "Mounts");
	assert_int_equal(json_array_size(mounts), 2);
	assert_true(json_is_true(json_object_get(json_array_get(mounts, 0), "ReadOnly")));
	assert_true(json_is_false(json_object_get(json_array_get(mounts, 1), "ReadOnly")));
	json_decref(req);

	static const struct ag_exec_file_bind outside[] = {
	    {"/srv/run/egress/events.jsonl", "/agentguard-egress/events.jsonl", false}};
	struct ag_exec_spec bad = s;
	bad.file_binds = outside;
	bad.n_file_binds = 1;
	assert_int_equal(ag_exec_spec_validate(&bad, &e), -1);
	assert_string_equal(e->reason, "render.file_bind.invalid");
	ag_error_free(e);
	e = NULL;
	bad = s;
	bad.workspace_host_path = "/srv/run/workspace";
	assert_int_equal(ag_exec_spec_validate(&bad, &e), -1);
	assert_string_equal(e->reason, "render.file_bind.invalid");
	ag_error_free(e);
	e = NULL;
	bad = s;
	bad.file_size_max = 100;
	assert_int_equal(ag_exec_spec_validate(&bad, &e), -1);
	assert_string_equal(e->reason, "render.fsize.invalid");
	ag_error_free(e);
}

/* With the agent's init: the init is the entrypoint, its deadline and "--"
 * follow the image, then the WHOLE argv verbatim (argv[0] included), in the
 * argv and in the create request alike; one read-only bind of the init. */
static void test_init_wraps_argv_verbatim(void **state)
{
	(void)state;
	const char *cmd[] = {"--help", "", "two words", "-x", "--", "--deadline", "5"};
	struct ag_exec_spec s = base;
	s.command = cmd;
	s.n_command = AG_ARRAY_SIZE(cmd);
	s.init_host_path = "/usr/local/bin/agentguard-init";
	s.init_deadline_seconds = 9;
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), 0);
	ssize_t img = ag_strv_find(&out, IMG);
	assert_true(img > 0);
	assert_string_equal(out.v[img - 2], AG_EXEC_INIT_PATH);
	assert_string_equal(out.v[img - 3], "--entrypoint");
	assert_string_equal(out.v[img + 1], "9");
	assert_string_equal(out.v[img + 2], "--");
	assert_int_equal(out.n - (size_t)img - 3, AG_ARRAY_SIZE(cmd));
	for (size_t i = 0; i < AG_ARRAY_SIZE(cmd); i++)
		assert_string_equal(out.v[(size_t)img + 3 + i], cmd[i]);
	assert_true(ag_strv_find(&out, "type=bind,source=/usr/local/bin/agentguard-init,target=/"
				       "agentguard-init,readonly") > 0);
	ag_strv_release(&out);

	json_t *req = NULL;
	assert_int_equal(ag_render_create_request(&s, &req, &e), 0);
	json_t *ep = json_object_get(req, "Entrypoint");
	assert_int_equal(json_array_size(ep), 1);
	assert_string_equal(json_string_value(json_array_get(ep, 0)), AG_EXEC_INIT_PATH);
	json_t *c = json_object_get(req, "Cmd");
	assert_int_equal(json_array_size(c), AG_ARRAY_SIZE(cmd) + 2);
	assert_string_equal(json_string_value(json_array_get(c, 0)), "9");
	assert_string_equal(json_string_value(json_array_get(c, 1)), "--");
	for (size_t i = 0; i < AG_ARRAY_SIZE(cmd); i++)
		assert_string_equal(json_string_value(json_array_get(c, i + 2)), cmd[i]);
	json_t *m = json_object_get(json_object_get(req, "HostConfig"), "Mounts");
	size_t ro_init = 0;
	for (size_t i = 0; i < json_array_size(m); i++) {
		json_t *x = json_array_get(m, i);
		if (strcmp(json_string_value(json_object_get(x, "Target")), AG_EXEC_INIT_PATH) ==
			0 &&
		    json_is_true(json_object_get(x, "ReadOnly")))
			ro_init++;
	}
	assert_int_equal(ro_init, 1);
	/* the environment is the same with or without the init */
	struct ag_exec_spec plain = s;
	plain.init_host_path = NULL;
	plain.init_deadline_seconds = 0;
	json_t *req2 = NULL;
	assert_int_equal(ag_render_create_request(&plain, &req2, &e), 0);
	assert_true(json_equal(json_object_get(req, "Env"), json_object_get(req2, "Env")));
	json_decref(req);
	json_decref(req2);

	/* an init with a probe, another entrypoint or a bad deadline is refused */
	const char *const bad[] = {"probe", "entrypoint", "zero", "huge", "no-init"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad); i++) {
		struct ag_exec_spec b = s;
		if (i == 0)
			b.probe_host_path = "/usr/local/bin/agentguard-probe";
		else if (i == 1)
			b.entrypoint = "/bin/sh";
		else if (i == 2)
			b.init_deadline_seconds = 0;
		else if (i == 3)
			b.init_deadline_seconds = AG_EXEC_INIT_DEADLINE_MAX + 1;
		else
			b.init_host_path = NULL;
		e = NULL;
		if (ag_exec_spec_validate(&b, &e) != -1 || !e)
			fail_msg("init case %s: accepted", bad[i]);
		assert_string_equal(e->reason, "render.init.invalid");
		ag_error_free(e);
	}
}

/* The init's statuses read back (run/deadline.h). */
static void test_init_statuses(void **state)
{
	(void)state;
	assert_int_equal(ag_run_init_deadline(8), 8 + AG_RUN_INIT_GRACE_SECONDS);
	assert_string_equal(ag_deadline_by_name(AG_DEADLINE_AGENTGUARD), "agentguard");
	assert_string_equal(ag_deadline_by_name(AG_DEADLINE_INIT), "agentguard_init");
	assert_null(ag_deadline_by_name(AG_DEADLINE_NONE));
	/* 124 after the timeout is the init's deadline; sooner, the agent's own 124 */
	assert_true(ag_run_init_deadline_held(124, 9000, 8));
	assert_true(ag_run_init_deadline_held(124, 8000, 8));
	assert_false(ag_run_init_deadline_held(124, 7999, 8));
	assert_false(ag_run_init_deadline_held(137, 9000, 8));
	bool nf = false;
	const char line[] = "agentguard-init: exec failed: not found\n";
	assert_true(ag_run_init_exec_failed(127, "", 0, line, strlen(line), &nf));
	assert_true(nf);
	const char nx[] = "agentguard-init: exec failed: not executable\n";
	assert_true(ag_run_init_exec_failed(126, "", 0, nx, strlen(nx), &nf));
	assert_false(nf);
	/* anything else written, another status, or stdout: the agent ran */
	assert_false(ag_run_init_exec_failed(1, "", 0, line, strlen(line), &nf));
	assert_false(ag_run_init_exec_failed(126, "", 0, line, strlen(line), &nf));
	assert_false(ag_run_init_exec_failed(127, "x", 1, line, strlen(line), &nf));
	assert_false(ag_run_init_exec_failed(127, "", 0, "sh: x: not found\n", 17, &nf));
	assert_false(ag_run_init_exec_failed(127, "", 0, NULL, 0, &nf));
}

static void test_cpus_format(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *want;
	} t[] = {{1.0, "1"},	   {8.0, "8"},
		 {1.5, "1.5"},	   {0.1, "0.1"},
		 {2.25, "2.25"},   {1.0 / 3, "0.333333"},
		 {0.125, "0.125"}, {7.1234567, "7.123457"}};
	for (size_t i = 0; i < AG_ARRAY_SIZE(t); i++) {
		char *s = ag_render_cpus(t[i].v);
		assert_string_equal(s, t[i].want);
		free(s);
	}
}

static void test_render_failure_leaves_output(void **state)
{
	(void)state;
	struct ag_strv out = AG_STRV_INIT;
	ag_strv_push(&out, "keep");
	struct ag_exec_spec s = base;
	s.uid = 0;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_RUN, &out, &e), -1);
	assert_string_equal(e->reason, "render.uid.invalid");
	assert_int_equal(out.n, 1);
	ag_error_free(e);
	ag_strv_release(&out);
}

static void test_not_contained_config(void **state)
{
	(void)state;
	struct ag_config *c = load("task_id: t\n"
				   "description: d\n"
				   "test_command: 'true'\n"
				   "repo_template: repo\n"
				   "expected_modified_files: {min: 0, max: 3}\n");
	const char *cmd[] = {"/bin/true"};
	struct ag_exec_inputs in = {.command = cmd, .n_command = 1};
	struct ag_exec_spec s;
	struct ag_error *e = NULL;
	assert_int_equal(ag_exec_spec_from_config(c, &in, &s, &e), -1);
	assert_string_equal(e->reason, "render.config.not_contained");
	ag_error_free(e);
	ag_config_free(c);
}

/* ---- one rejection per rule ---- */

static char long_value[5000];
static char long_label[200];
static const char *many_env[40];
static char many_env_buf[40][16];
static const char *big_env[8];
static char big_env_buf[8][4200];
static struct ag_label many_labels[20];
static char many_labels_buf[20][32];

struct reject {
	const char *reason;
	void (*mutate)(struct ag_exec_spec *s);
};

#define M(name, body)                                                                              \
	static void name(struct ag_exec_spec *s)                                                   \
	{                                                                                          \
		body;                                                                              \
	}

M(m_image_option, s->image = "-" IMG)
M(m_image_invalid, s->image = "Not A Ref@@")
M(m_image_empty, s->image = "")
M(m_image_tag, s->image = "127.0.0.1:5000/agentguard-test:latest")
M(m_network, s->network = (enum ag_network)7)
M(m_uid0, s->uid = 0)
M(m_uid_big, s->uid = 2147483648LL)
M(m_gid0, s->gid = 0)
M(m_gid_neg, s->gid = -5)
M(m_cpu_low, s->cpu_limit = 0.05)
M(m_cpu_high, s->cpu_limit = 8.5)
M(m_cpu_nan, s->cpu_limit = __builtin_nan(""))
M(m_mem_bad, s->memory_limit = "512mb")
M(m_mem_small, s->memory_limit = "1m")
M(m_mem_big, s->memory_limit = "17g")
M(m_mem_option, s->memory_limit = "-1")
M(m_pids_low, s->pids_limit = 15)
M(m_pids_high, s->pids_limit = 4097)
M(m_tmpfs_size, s->tmpfs_size = "1k")
M(m_tmpfs_size_inject, s->tmpfs_size = "64m,exec")
M(m_ws_tmpfs_size, s->workspace_tmpfs_size = "5g")
M(m_host_relative, s->workspace_host_path = "srv/ws")
M(m_host_comma, s->workspace_host_path = "/srv/ws,readonly=false")
M(m_host_equals, s->workspace_host_path = "/srv/a=b")
M(m_host_quote, s->workspace_host_path = "/srv/\"ws")
M(m_host_control, s->workspace_host_path = "/srv/w\ns")
M(m_host_dotdot, s->workspace_host_path = "/srv/../etc")
M(m_host_dot, s->workspace_host_path = "/srv/./ws")
M(m_host_double, s->workspace_host_path = "/srv//ws")
M(m_host_trailing, s->workspace_host_path = "/srv/ws/")
M(m_host_root, s->workspace_host_path = "/")
M(m_ws_relative, s->workspace_container_path = "workspace")
M(m_ws_root, s->workspace_container_path = "/")
M(m_ws_colon, s->workspace_container_path = "/ws:ro")
M(m_ws_comma, s->workspace_container_path = "/ws,x")
M(m_ws_space, s->workspace_container_path = "/w s")
M(m_ws_dotdot, s->workspace_container_path = "/ws/../etc")
M(m_ws_trailing, s->workspace_container_path = "/ws/")
M(m_ws_double, s->workspace_container_path = "//ws")
M(m_ws_proc, s->workspace_container_path = "/proc/self")
M(m_ws_sys, s->workspace_container_path = "/sys")
M(m_ws_dev, s->workspace_container_path = "/dev/shm")
M(m_ws_varrun, s->workspace_container_path = "/var/run/docker.sock")
M(m_ws_run, s->workspace_container_path = "/run/x")
M(m_tmp_null, s->tmpfs_path = NULL)
M(m_tmp_dev, s->tmpfs_path = "/dev")
M(m_overlap_equal, s->workspace_container_path = "/tmp")
M(m_overlap_nested, s->workspace_container_path = "/tmp/ws")
M(m_overlap_parent, s->tmpfs_path = "/workspace/tmp")
M(m_entry_relative, s->entrypoint = "sh")
M(m_entry_option, s->entrypoint = "--privileged")
M(m_entry_proc, s->entrypoint = "/proc/self/exe")
M(m_name_prefix, s->container_name = "other-1")
M(m_name_upper, s->container_name = "agentguard-ABC")
M(m_name_option, s->container_name = "--privileged")
M(m_name_first, s->container_name = "agentguard-_x")
M(m_name_long,
  s->container_name = "agentguard-0123456789012345678901234567890123456789012345678901234567890123")
M(m_name_empty_rest, s->container_name = "agentguard-")

static const struct ag_label bad_key_label[] = {{"com.example", "x"}};
static const struct ag_label bad_key2_label[] = {{"agentguard.Owner", "x"}};
static const struct ag_label bad_val_label[] = {{"agentguard.owner", "a=b"}};
static const struct ag_label bad_val2_label[] = {{"agentguard.owner", ""}};
static const struct ag_label bad_val3_label[] = {{"agentguard.owner", "a b"}};
static const struct ag_label dup_label[] = {{"agentguard.owner", "a"}, {"agentguard.owner", "b"}};
M(m_label_key, (s->labels = bad_key_label, s->n_labels = 1))
M(m_label_key2, (s->labels = bad_key2_label, s->n_labels = 1))
M(m_label_val, (s->labels = bad_val_label, s->n_labels = 1))
M(m_label_val2, (s->labels = bad_val2_label, s->n_labels = 1))
M(m_label_val3, (s->labels = bad_val3_label, s->n_labels = 1))
M(m_label_long, (many_labels[0] = (struct ag_label){"agentguard.owner", long_label},
		 s->labels = many_labels, s->n_labels = 1))
M(m_label_dup, (s->labels = dup_label, s->n_labels = 2))
M(m_label_many, (s->labels = many_labels, s->n_labels = 20))

static const char *env_noeq[] = {"NOEQ"};
static const char *env_lower[] = {"lower=x"};
static const char *env_digit[] = {"1A=x"};
static const char *env_empty_name[] = {"=x"};
static const char *env_long_name[] = {
    "A2345678901234567890123456789012345678901234567890123456789012345=x"};
static const char *env_home[] = {"HOME=/root"};
static const char *env_path[] = {"PATH=/evil"};
static const char *env_docker[] = {"DOCKER_HOST=tcp://x"};
static const char *env_ld[] = {"LD_PRELOAD=/x.so"};
static const char *env_dup[] = {"A=1", "B=2", "A=3"};
static const char *env_ctrl[] = {"A=x\ty"};
static const char *env_del[] = {"A=x\x7f"};
static const char *env_long[] = {long_value};
M(m_env_noeq, (s->env = env_noeq, s->n_env = 1))
M(m_env_lower, (s->env = env_lower, s->n_env = 1))
M(m_env_digit, (s->env = env_digit, s->n_env = 1))
M(m_env_empty_name, (s->env = env_empty_name, s->n_env = 1))
M(m_env_long_name, (s->env = env_long_name, s->n_env = 1))
M(m_env_home, (s->env = env_home, s->n_env = 1))
M(m_env_path, (s->env = env_path, s->n_env = 1))
M(m_env_docker, (s->env = env_docker, s->n_env = 1))
M(m_env_ld, (s->env = env_ld, s->n_env = 1))
M(m_env_dup, (s->env = env_dup, s->n_env = 3))
M(m_env_ctrl, (s->env = env_ctrl, s->n_env = 1))
M(m_env_del, (s->env = env_del, s->n_env = 1))
M(m_env_long, (s->env = env_long, s->n_env = 1))
M(m_env_many, (s->env = many_env, s->n_env = 33))
M(m_env_total, (s->env = big_env, s->n_env = 4))

static const char *cmd_first_empty[] = {"", "x"};
static const char *cmd_null_item[] = {"/bin/x", NULL};
static char huge_arg[AG_CHILD_ARG_MAX_BYTES + 2];
static const char *cmd_huge[] = {huge_arg};
M(m_cmd_none, (s->command = NULL, s->n_command = 0))
M(m_cmd_zero, s->n_command = 0)
M(m_cmd_first_empty, (s->command = cmd_first_empty, s->n_command = 2))
M(m_cmd_null_item, (s->command = cmd_null_item, s->n_command = 2))
M(m_cmd_many, s->n_command = 5000)
M(m_cmd_huge, (s->command = cmd_huge, s->n_command = 1))

static const struct reject rejects[] = {
    {"render.image.option_like", m_image_option},
    {"render.image.invalid", m_image_invalid},
    {"render.image.invalid", m_image_empty},
    {"render.image.not_pinned", m_image_tag},
    {"render.network.invalid", m_network},
    {"render.uid.invalid", m_uid0},
    {"render.uid.invalid", m_uid_big},
    {"render.gid.invalid", m_gid0},
    {"render.gid.invalid", m_gid_neg},
    {"render.cpu.invalid", m_cpu_low},
    {"render.cpu.invalid", m_cpu_high},
    {"render.cpu.invalid", m_cpu_nan},
    {"render.memory.invalid", m_mem_bad},
    {"render.memory.invalid", m_mem_small},
    {"render.memory.invalid", m_mem_big},
    {"render.memory.invalid", m_mem_option},
    {"render.pids.invalid", m_pids_low},
    {"render.pids.invalid", m_pids_high},
    {"render.tmpfs.size_invalid", m_tmpfs_size},
    {"render.tmpfs.size_invalid", m_tmpfs_size_inject},
    {"render.tmpfs.size_invalid", m_ws_tmpfs_size},
    {"render.host_path.not_absolute", m_host_relative},
    {"render.host_path.invalid_char", m_host_comma},
    {"render.host_path.invalid_char", m_host_equals},
    {"render.host_path.invalid_char", m_host_quote},
    {"render.host_path.invalid_char", m_host_control},
    {"render.host_path.not_normalized", m_host_dotdot},
    {"render.host_path.not_normalized", m_host_dot},
    {"render.host_path.not_normalized", m_host_double},
    {"render.host_path.not_normalized", m_host_trailing},
    {"render.host_path.root", m_host_root},
    {"render.path.invalid", m_ws_relative},
    {"render.path.invalid", m_ws_root},
    {"render.path.invalid", m_ws_colon},
    {"render.path.invalid", m_ws_comma},
    {"render.path.invalid", m_ws_space},
    {"render.path.invalid", m_ws_dotdot},
    {"render.path.invalid", m_ws_trailing},
    {"render.path.invalid", m_ws_double},
    {"render.path.forbidden", m_ws_proc},
    {"render.path.forbidden", m_ws_sys},
    {"render.path.forbidden", m_ws_dev},
    {"render.path.forbidden", m_ws_varrun},
    {"render.path.forbidden", m_ws_run},
    {"render.path.invalid", m_tmp_null},
    {"render.path.forbidden", m_tmp_dev},
    {"render.path.overlap", m_overlap_equal},
    {"render.path.overlap", m_overlap_nested},
    {"render.path.overlap", m_overlap_parent},
    {"render.path.invalid", m_entry_relative},
    {"render.path.invalid", m_entry_option},
    {"render.path.forbidden", m_entry_proc},
    {"render.name.invalid", m_name_prefix},
    {"render.name.invalid", m_name_upper},
    {"render.name.invalid", m_name_option},
    {"render.name.invalid", m_name_first},
    {"render.name.invalid", m_name_long},
    {"render.name.invalid", m_name_empty_rest},
    {"render.label.key_invalid", m_label_key},
    {"render.label.key_invalid", m_label_key2},
    {"render.label.value_invalid", m_label_val},
    {"render.label.value_invalid", m_label_val2},
    {"render.label.value_invalid", m_label_val3},
    {"render.label.value_invalid", m_label_long},
    {"render.label.duplicate", m_label_dup},
    {"render.label.too_many", m_label_many},
    {"render.env.malformed", m_env_noeq},
    {"render.env.name_invalid", m_env_lower},
    {"render.env.name_invalid", m_env_digit},
    {"render.env.name_invalid", m_env_empty_name},
    {"render.env.name_invalid", m_env_long_name},
    {"render.env.reserved", m_env_home},
    {"render.env.reserved", m_env_path},
    {"render.env.reserved", m_env_docker},
    {"render.env.reserved", m_env_ld},
    {"render.env.duplicate", m_env_dup},
    {"render.env.value_invalid", m_env_ctrl},
    {"render.env.value_invalid", m_env_del},
    {"render.env.value_invalid", m_env_long},
    {"render.env.too_many", m_env_many},
    {"render.env.total", m_env_total},
    {"render.argv.empty", m_cmd_none},
    {"render.argv.empty", m_cmd_zero},
    {"render.argv.first_empty", m_cmd_first_empty},
    {"render.argv.empty", m_cmd_null_item},
    {"render.argv.too_long", m_cmd_many},
    {"render.argv.too_long", m_cmd_huge},
};

static void init_fixtures(void)
{
	memset(long_value, 'v', sizeof(long_value) - 1);
	memcpy(long_value, "LONG=", 5);
	memset(huge_arg, 'h', sizeof(huge_arg) - 1);
	memset(long_label, 'x', sizeof(long_label) - 1);
	for (size_t i = 0; i < AG_ARRAY_SIZE(many_env); i++) {
		snprintf(many_env_buf[i], sizeof(many_env_buf[i]), "V%zu=1", i);
		many_env[i] = many_env_buf[i];
	}
	for (size_t i = 0; i < AG_ARRAY_SIZE(big_env); i++) {
		/* "BIGn=" + 4096 bytes (4101 counted): three fit, four pass 16384 */
		snprintf(big_env_buf[i], 6, "BIG%zu=", i);
		memset(big_env_buf[i] + 5, 'b', 4096);
		big_env_buf[i][5 + 4096] = '\0';
		big_env[i] = big_env_buf[i];
	}
	for (size_t i = 0; i < AG_ARRAY_SIZE(many_labels); i++) {
		snprintf(many_labels_buf[i], sizeof(many_labels_buf[i]), "agentguard.l%zu", i);
		many_labels[i] = (struct ag_label){many_labels_buf[i], "v"};
	}
}

static void test_rejections(void **state)
{
	(void)state;
	/* The base itself renders. */
	struct ag_strv out = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&base, AG_RENDER_RUN, &out, &e), 0);
	ag_strv_release(&out);
	/* Big env under the total passes: 3 x 4101 bytes. */
	struct ag_exec_spec ok = base;
	ok.env = big_env;
	ok.n_env = 3;
	assert_int_equal(ag_exec_spec_validate(&ok, &e), 0);
	ok.env = many_env;
	ok.n_env = 32;
	assert_int_equal(ag_exec_spec_validate(&ok, &e), 0);

	for (size_t i = 0; i < AG_ARRAY_SIZE(rejects); i++) {
		struct ag_exec_spec s = base;
		rejects[i].mutate(&s);
		e = NULL;
		int rc = ag_render_argv(&s, AG_RENDER_RUN, &out, &e);
		if (rc != -1 || !e)
			fail_msg("case %zu (%s): accepted", i, rejects[i].reason);
		if (strcmp(e->reason, rejects[i].reason) != 0)
			fail_msg("case %zu: got %s, want %s", i, e->reason, rejects[i].reason);
		assert_int_equal(e->code, AG_E_CONFIG);
		assert_int_equal(out.n, 0);
		ag_error_free(e);
	}
}

int main(void)
{
	init_fixtures();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bind_workspace_from_config),
	    cmocka_unit_test(test_tmpfs_workspace_bridge_create),
	    cmocka_unit_test(test_env_sorted_with_defaults),
	    cmocka_unit_test(test_child_argv_verbatim),
	    cmocka_unit_test(test_argv0_option_like),
	    cmocka_unit_test(test_init_wraps_argv_verbatim),
	    cmocka_unit_test(test_file_binds_and_fsize),
	    cmocka_unit_test(test_init_statuses),
	    cmocka_unit_test(test_cpus_format),
	    cmocka_unit_test(test_render_failure_leaves_output),
	    cmocka_unit_test(test_not_contained_config),
	    cmocka_unit_test(test_rejections),
	};
	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
