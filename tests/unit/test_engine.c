/*
 * test_engine.c: the Engine API layer's pure parts: socket verification
 * refusals (before anything is sent), query escaping, the create request
 * rendered from the typed spec, and the probe binary verification.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"
#include "lib/docker/exec_spec.h"

#include <setjmp.h>
#include <cmocka.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define IMG "127.0.0.1:5000/agentguard-test@" DIGEST

static void expect_reason_(int rc, struct ag_error **e, const char *reason)
{
	assert_int_equal(rc, -1);
	assert_non_null(*e);
	if (strcmp((*e)->reason, reason) != 0)
		fail_msg("reason %s, want %s (%s)", (*e)->reason, reason, (*e)->msg);
	ag_error_free(*e);
	*e = NULL;
}
/* The call runs first: its error is read only after it returned. */
#define expect_reason(call, e, reason)                                                             \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		expect_reason_(rc_, &(e), reason);                                                 \
	} while (0)

static void test_socket_refusals(void **state)
{
	(void)state;
	struct ag_engine eng;
	struct ag_error *e = NULL;
	expect_reason(ag_engine_open("docker.sock", &eng, &e), e, "docker.socket.not_absolute");
	e = NULL;
	expect_reason(ag_engine_open("/nonexistent/agentguard/docker.sock", &eng, &e), e,
		      "docker.socket.missing");
	if (geteuid() != 0) {
		skip(); /* the rest needs root-owned directories */
		return;
	}
	char dir[] = "/tmp/ag-engine-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	char file[64], sock[64];
	snprintf(file, sizeof(file), "%s/file.sock", dir);
	snprintf(sock, sizeof(sock), "%s/docker.sock", dir);
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	e = NULL;
	expect_reason(ag_engine_open(file, &eng, &e), e, "docker.socket.unsafe");
	/* A socket writable by others is refused; with no listener, unavailable. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s);
	assert_int_equal(chmod(sock, 0666), 0);
	e = NULL;
	expect_reason(ag_engine_open(sock, &eng, &e), e, "docker.socket.unsafe");
	assert_int_equal(chmod(sock, 0660), 0);
	e = NULL;
	expect_reason(ag_engine_open(sock, &eng, &e), e, "docker.engine.unavailable");
	/* a directory writable by others on the path */
	assert_int_equal(chmod(dir, 0777), 0);
	e = NULL;
	expect_reason(ag_engine_open(sock, &eng, &e), e, "docker.socket.unsafe");
	unlink(sock);
	unlink(file);
	rmdir(dir);
}

static void test_escape(void **state)
{
	(void)state;
	char *q = ag_engine_escape("127.0.0.1:5000/a@sha256:ab {\"x\"}");
	assert_string_equal(q, "127.0.0.1%3A5000%2Fa%40sha256%3Aab%20%7B%22x%22%7D");
	free(q);
}

static void test_create_request(void **state)
{
	(void)state;
	const char *cmd[] = {"/bin/tool", "--flag", "a b"};
	const char *env[] = {"ZED=1", "A=x"};
	const struct ag_label labels[] = {{"agentguard.owner", "t"}};
	struct ag_exec_spec s = {
	    .image = IMG,
	    .network = AG_NET_NONE,
	    .uid = 2001,
	    .gid = 2002,
	    .cpu_limit = 1.5,
	    .memory_limit = "512m",
	    .pids_limit = 64,
	    .tmpfs_path = "/tmp",
	    .tmpfs_size = "16m",
	    .workspace_host_path = "/srv/ws",
	    .workspace_container_path = "/agentguard-workspace",
	    .container_name = "agentguard-x",
	    .env = env,
	    .n_env = AG_ARRAY_SIZE(env),
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = cmd,
	    .n_command = AG_ARRAY_SIZE(cmd),
	};
	json_t *b = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_create_request(&s, &b, &e), 0);
	char *txt = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	/* argv[0] is the entrypoint, the rest the command; no health check */
	assert_non_null(strstr(txt, "\"Entrypoint\":[\"/bin/tool\"]"));
	assert_non_null(strstr(txt, "\"Cmd\":[\"--flag\",\"a b\"]"));
	assert_non_null(strstr(txt, "\"Healthcheck\":{\"Test\":[\"NONE\"]}"));
	/* the controls */
	assert_non_null(strstr(txt, "\"NanoCpus\":1500000000"));
	assert_non_null(strstr(txt, "\"Memory\":536870912,\"MemorySwap\":536870912"));
	assert_non_null(strstr(txt, "\"CapDrop\":[\"ALL\"]"));
	assert_non_null(strstr(txt, "\"ReadonlyRootfs\":true"));
	assert_non_null(strstr(txt, "\"SecurityOpt\":[\"no-new-privileges\"]"));
	assert_non_null(strstr(txt, "\"CgroupnsMode\":\"private\""));
	assert_non_null(strstr(txt, "\"User\":\"2001:2002\""));
	assert_non_null(
	    strstr(txt, "\"Mounts\":[{\"Source\":\"/srv/ws\",\"Target\":\"/agentguard-workspace\","
			"\"Type\":\"bind\"}]"));
	/* the environment sorted by name, with the four defaults */
	assert_non_null(strstr(txt, "\"Env\":[\"A=x\",\"HOME=/tmp/agentguard-home\""));
	assert_non_null(strstr(txt, "\"ZED=1\"]"));
	free(txt);
	json_decref(b);

	/* the probe: its binary read-only at AG_EXEC_PROBE_PATH, as the entrypoint */
	const char *pcmd[] = {"/agentguard-workspace"};
	s.workspace_host_path = NULL;
	s.probe_host_path = "/usr/local/bin/agentguard-probe";
	s.entrypoint = AG_EXEC_PROBE_PATH;
	s.command = pcmd;
	s.n_command = 1;
	assert_int_equal(ag_render_create_request(&s, &b, &e), 0);
	txt = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(strstr(txt, "\"Entrypoint\":[\"/agentguard-probe\"]"));
	assert_non_null(strstr(txt, "\"Cmd\":[\"/agentguard-workspace\"]"));
	assert_non_null(strstr(txt,
			       "{\"ReadOnly\":true,\"Source\":\"/usr/local/bin/agentguard-probe\","
			       "\"Target\":\"/agentguard-probe\",\"Type\":\"bind\"}"));
	free(txt);
	json_decref(b);

	/* an invalid spec is refused before anything is rendered */
	s.memory_limit = "1x";
	b = NULL;
	expect_reason(ag_render_create_request(&s, &b, &e), e, "render.memory.invalid");
	assert_null(b);
}

static void test_probe_binary(void **state)
{
	(void)state;
	char *canon = NULL;
	struct ag_error *e = NULL;
	expect_reason(ag_verify_root_file("agentguard-probe", &canon, &e), e,
		      "preflight.probe_binary.not_absolute");
	e = NULL;
	expect_reason(ag_verify_root_file("/nonexistent/agentguard-probe", &canon, &e), e,
		      "preflight.probe_binary.missing");
	if (geteuid() != 0) {
		skip();
		return;
	}
	char dir[] = "/tmp/ag-probe-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	char f[64];
	snprintf(f, sizeof(f), "%s/agentguard-probe", dir);
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0755);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(f, 0755), 0);
	assert_int_equal(ag_verify_root_file(f, &canon, &e), 0);
	assert_string_equal(canon, f);
	free(canon);
	assert_int_equal(chmod(f, 0775), 0); /* group-writable */
	e = NULL;
	expect_reason(ag_verify_root_file(f, &canon, &e), e, "preflight.probe_binary.unsafe");
	unlink(f);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_socket_refusals),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_create_request),
	    cmocka_unit_test(test_probe_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
