/*
 * test_study_spec.c: the live-study fields of the exec spec (network,
 * alias, fixed address, DNS, the gateway's sysctl, one supplementary group)
 * in both renderings, their all-or-nothing validation, and the study
 * subnet arithmetic the run relies on (parse, overlap, the plan's fixed
 * gateway address and run-scoped names and labels).
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/base/json.h"
#include "lib/base/strv.h"
#include "lib/docker/exec_spec.h"
#include "lib/config/config.h"
#include "lib/egress/plan.h"
#include "lib/egress/policy.h"

#include <setjmp.h>
#include <cmocka.h>

#define IMG                                                                                        \
	"127.0.0.1:5000/"                                                                          \
	"agentguard-test@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *const cmd[] = {"/bin/true"};
static const char *const dns1[] = {"127.0.0.1"};

static struct ag_exec_spec base(void)
{
	return (struct ag_exec_spec){
	    .image = IMG,
	    .uid = 1000,
	    .gid = 1000,
	    .cpu_limit = 1,
	    .memory_limit = "128m",
	    .pids_limit = 64,
	    .tmpfs_path = "/tmp",
	    .tmpfs_size = "16m",
	    .workspace_container_path = "/agentguard-workspace",
	    .container_name = "agentguard-x-gateway",
	    .command = cmd,
	    .n_command = 1,
	};
}

static struct ag_exec_spec study(void)
{
	struct ag_exec_spec s = base();
	s.network_name = "agentguard-x-study";
	s.network_alias = "agentguard-study-egress-gateway";
	s.ipv4_address = "198.51.100.2";
	s.dns = dns1;
	s.n_dns = 1;
	s.ip_forward_off = true;
	s.group_add = 2001;
	return s;
}

static void test_create_request(void **state)
{
	(void)state;
	struct ag_exec_spec s = study();
	json_t *r = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_create_request(&s, &r, &e), 0);
	assert_string_equal(ag_json_path_str(r, "HostConfig.NetworkMode"), "agentguard-x-study");
	const json_t *ep = json_object_get(ag_json_path(r, "NetworkingConfig.EndpointsConfig"),
					   "agentguard-x-study");
	assert_non_null(ep);
	assert_string_equal(json_string_value(json_array_get(json_object_get(ep, "Aliases"), 0)),
			    "agentguard-study-egress-gateway");
	assert_string_equal(ag_json_path_str(ep, "IPAMConfig.IPv4Address"), "198.51.100.2");
	const json_t *d = ag_json_path(r, "HostConfig.Dns");
	assert_int_equal(json_array_size(d), 1);
	assert_string_equal(json_string_value(json_array_get(d, 0)), "127.0.0.1");
	const json_t *sys = ag_json_path(r, "HostConfig.Sysctls");
	assert_int_equal(json_object_size(sys), 1);
	assert_string_equal(json_string_value(json_object_get(sys, "net.ipv4.ip_forward")), "0");
	assert_string_equal(
	    json_string_value(json_array_get(ag_json_path(r, "HostConfig.GroupAdd"), 0)), "2001");
	json_decref(r);

	/* contained-run's specs carry none of it */
	s = base();
	assert_int_equal(ag_render_create_request(&s, &r, &e), 0);
	assert_string_equal(ag_json_path_str(r, "HostConfig.NetworkMode"), "none");
	assert_null(json_object_get(r, "NetworkingConfig"));
	assert_null(ag_json_path(r, "HostConfig.Dns"));
	assert_null(ag_json_path(r, "HostConfig.Sysctls"));
	assert_null(ag_json_path(r, "HostConfig.GroupAdd"));
	json_decref(r);
}

static void test_argv(void **state)
{
	(void)state;
	struct ag_exec_spec s = study();
	struct ag_strv a = AG_STRV_INIT;
	struct ag_error *e = NULL;
	assert_int_equal(ag_render_argv(&s, AG_RENDER_CREATE, &a, &e), 0);
	static const char *const want[] = {"--network",
					   "agentguard-x-study",
					   "--network-alias",
					   "agentguard-study-egress-gateway",
					   "--ip",
					   "198.51.100.2",
					   "--dns",
					   "127.0.0.1",
					   "--sysctl",
					   "net.ipv4.ip_forward=0"};
	assert_true(a.n > 3 + AG_ARRAY_SIZE(want));
	for (size_t i = 0; i < AG_ARRAY_SIZE(want); i++)
		assert_string_equal(a.v[3 + i], want[i]);
	assert_true(ag_strv_find(&a, "--group-add") > 0);
	assert_string_equal(a.v[ag_strv_find(&a, "--group-add") + 1], "2001");
	ag_strv_release(&a);
}

static void test_rejections(void **state)
{
	(void)state;
	static const struct {
		int which;
		const char *reason;
	} cases[] = {
	    {0, "render.network.study_only"},	{1, "render.network.study_only"},
	    {2, "render.network.dns_invalid"},	{3, "render.network.dns_invalid"},
	    {4, "render.network.ip_invalid"},	{5, "render.network.alias_invalid"},
	    {6, "render.network.name_invalid"}, {7, "render.network.ip_invalid"},
	};
	static const char *const bad_dns[] = {"resolver.example"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(cases); i++) {
		struct ag_exec_spec s = study();
		switch (cases[i].which) {
		case 0:
			s.network_name = NULL;
			break; /* alias without a network */
		case 1:
			s = base();
			s.ip_forward_off = true;
			break; /* sysctl without a network */
		case 2:
			s.n_dns = 0;
			s.dns = NULL;
			break; /* never the engine's default */
		case 3:
			s.dns = bad_dns;
			break;
		case 4:
			s.ipv4_address = "2001:db8::1";
			break;
		case 5:
			s.network_alias = "-x";
			break;
		case 6:
			s.network_name = "host";
			break;
		default:
			s.ipv4_address = "198.51.100.256";
			break;
		}
		struct ag_error *e = NULL;
		assert_int_equal(ag_exec_spec_validate(&s, &e), -1);
		if (strcmp(e->reason, cases[i].reason) != 0)
			fail_msg("case %zu: got %s, want %s", i, e->reason, cases[i].reason);
		ag_error_free(e);
	}
}

static void test_subnets(void **state)
{
	(void)state;
	uint32_t a, b;
	int pa, pb;
	assert_int_equal(ag_egress_subnet_parse("198.51.100.224/28", &a, &pa), 0);
	assert_int_equal(pa, 28);
	assert_int_equal(ag_egress_subnet_parse("203.0.113.224/28", &b, &pb), 0);
	assert_false(ag_egress_subnets_overlap(a, pa, b, pb));
	assert_int_equal(ag_egress_subnet_parse("198.51.100.0/24", &b, &pb), 0);
	assert_true(ag_egress_subnets_overlap(a, pa, b, pb));
	assert_true(ag_egress_subnets_overlap(b, pb, a, pa));
	assert_int_equal(ag_egress_subnet_parse("198.51.100.240/28", &b, &pb), 0);
	assert_false(ag_egress_subnets_overlap(a, pa, b, pb)); /* the next block */
	/* host bits, no prefix, bad prefix, IPv6: refused */
	assert_int_equal(ag_egress_subnet_parse("198.51.100.1/28", &a, &pa), -1);
	assert_int_equal(ag_egress_subnet_parse("198.51.100.0", &a, &pa), -1);
	assert_int_equal(ag_egress_subnet_parse("198.51.100.0/33", &a, &pa), -1);
	assert_int_equal(ag_egress_subnet_parse("2001:db8::/64", &a, &pa), -1);
}

static void test_plan_run_names(void **state)
{
	(void)state;
	static const char yaml[] =
	    "task_id: t\ndescription: d\ntest_command: 'true'\n"
	    "repo_template: repo\nexpected_modified_files: {min: 0, max: 3}\n"
	    "sandbox:\n  type: docker\n  image: '" IMG "'\n"
	    "contained_execution:\n  version: 1\n"
	    "  platform: linux-docker-engine\n  required_uid: 1000\n"
	    "  required_gid: 1000\n";
	static const char pol[] = "{\"schema\":\"agentguard.live-study-egress-policy\","
				  "\"schema_version\":1,\"destinations\":[]}";
	struct ag_config *c = NULL;
	struct ag_egress_policy *p = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_config_load_mem(yaml, strlen(yaml), "t.yaml", &c, &e), 0);
	assert_int_equal(ag_egress_policy_parse(pol, strlen(pol), &p, &e), 0);
	struct ag_egress_plan_inputs in = {
	    .config = c,
	    .policy = p,
	    .trial_id = "trial-1",
	    .gateway_image = "127.0.0.1:5000/gw@sha256:"
			     "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
	    .resolver = "203.0.113.53",
	    .study_subnet = "198.51.100.0/26",
	    .names_base = "agentguard-abc",
	    .run_label_key = "agentguard.contained-run.id",
	    .run_label_value = "abc",
	    .evidence_group = 1000,
	    .command = cmd,
	    .n_command = 1,
	};
	struct ag_egress_plan plan;
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), 0);
	assert_string_equal(plan.internal.name, "agentguard-abc-study");
	assert_string_equal(plan.outbound.name, "agentguard-abc-outbound");
	assert_string_equal(plan.gateway_name, "agentguard-abc-gateway");
	assert_string_equal(plan.internal.subnet, "198.51.100.0/26");
	assert_string_equal(plan.outbound.subnet, "198.51.100.64/26"); /* the next block */
	assert_string_equal(plan.gateway_study_ip, "198.51.100.2");
	assert_string_equal(plan.gateway.exec.ipv4_address, "198.51.100.2");
	assert_int_equal(plan.gateway.exec.group_add, 1000);
	assert_int_equal(plan.internal.n_labels, 3);
	assert_string_equal(plan.internal.labels[2].value, "abc");
	assert_int_equal(plan.gateway.exec.n_labels, 5);
	struct ag_strv *g = &plan.gateway_cmd;
	assert_string_equal(g->v[ag_strv_find(g, "--listen-address") + 1], "198.51.100.2");
	assert_string_equal(g->v[ag_strv_find(g, "--resolver") + 1], "203.0.113.53");
	/* the host side of both subnets, then the host's own addresses */
	static const char *const hosts[] = {"203.0.113.1", "2001:db8::7"};
	in.host_addresses = hosts;
	in.n_host_addresses = 2;
	ag_egress_plan_release(&plan);
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), 0);
	size_t n_host = 0;
	const char *seen[4] = {0};
	for (size_t i = 0; i + 1 < plan.gateway_cmd.n; i++)
		if (strcmp(plan.gateway_cmd.v[i], "--host-address") == 0 && n_host < 4)
			seen[n_host++] = plan.gateway_cmd.v[i + 1];
	assert_int_equal(n_host, 4);
	assert_string_equal(seen[0], "198.51.100.1");
	assert_string_equal(seen[1], "198.51.100.65");
	assert_string_equal(seen[2], "203.0.113.1");
	assert_string_equal(seen[3], "2001:db8::7");
	/* the plan's JSON (and so its digest) names none of them */
	json_t *pj = NULL;
	assert_int_equal(ag_egress_plan_json(&plan, &pj, &e), 0);
	char *dump = json_dumps(pj, JSON_COMPACT);
	assert_non_null(dump);
	assert_null(strstr(dump, "203.0.113.1\""));
	assert_null(strstr(dump, "2001:db8::7"));
	assert_null(strstr(dump, "198.51.100.65"));
	assert_non_null(strstr(dump, "[host-address]"));
	free(dump);
	json_decref(pj);
	ag_egress_plan_release(&plan);
	static const char *const bad_host[] = {"host.example"};
	in.host_addresses = bad_host;
	in.n_host_addresses = 1;
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), -1);
	assert_string_equal(e->reason, "egress.plan.host_addresses");
	ag_error_free(e);
	e = NULL;
	ag_egress_plan_release(&plan);
	in.host_addresses = NULL;
	in.n_host_addresses = 0;

	/* the operator's outbound network: named, not created, no subnet of ours */
	in.outbound_network = "operator-net";
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), 0);
	assert_true(plan.outbound.existing);
	assert_string_equal(plan.outbound.name, "operator-net");
	assert_string_equal(plan.outbound.subnet, "");
	ag_egress_plan_release(&plan);

	/* refusals: a subnet out of range or with host bits, one whose outbound
	 * block would wrap past 255.255.255.255, a resolver that is a name */
	static const char *const bad_subnets[] = {"198.51.100.0/29", "10.0.0.0/8",
						  "198.51.100.1/26", "255.255.255.240/28",
						  "255.255.0.0/16"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(bad_subnets); i++) {
		in.study_subnet = bad_subnets[i];
		assert_int_equal(ag_egress_plan_build(&in, &plan, &e), -1);
		assert_string_equal(e->reason, "egress.plan.subnet");
		ag_error_free(e);
		e = NULL;
		ag_egress_plan_release(&plan);
	}
	in.study_subnet = NULL;
	in.resolver = "resolver.example";
	assert_int_equal(ag_egress_plan_build(&in, &plan, &e), -1);
	assert_string_equal(e->reason, "egress.plan.resolver");
	ag_error_free(e);
	ag_egress_plan_release(&plan);
	ag_egress_policy_free(p);
	ag_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_request), cmocka_unit_test(test_argv),
	    cmocka_unit_test(test_rejections),	   cmocka_unit_test(test_subnets),
	    cmocka_unit_test(test_plan_run_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
