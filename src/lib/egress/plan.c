/*
 * plan.c: the study-egress topology plan (plan.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/plan.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/config/imageref.h"
#include "lib/egress/authority.h"
#include "lib/egress/decision.h"
#include "lib/egress/policy.h"
#include "lib/evidence/canon.h"

#include <arpa/inet.h>
#include <inttypes.h>

#define FAIL(reason, ...) ag_err(err, AG_E_CONFIG, 0, reason, __VA_ARGS__)

/* The image's digest ("sha256:..."), or NULL when not pinned. */
static char *image_digest(const char *ref, bool *parsed)
{
	struct ag_image_ref r = {0};
	struct ag_error *e = NULL;
	*parsed = ag_image_ref_parse(ref, &r, &e) == 0;
	ag_error_free(e);
	char *d = *parsed && r.digest ? ag_xstrdup(r.digest) : NULL;
	ag_image_ref_release(&r);
	return d;
}

void ag_egress_plan_release(struct ag_egress_plan *p)
{
	ag_strv_release(&p->gateway_cmd);
	ag_strv_release(&p->agent_env);
	ag_strv_release(&p->owned);
}

static void set_labels(struct ag_label *l, const struct ag_egress_plan *p, const char *role,
		       const struct ag_egress_plan_inputs *in)
{
	l[0] = (struct ag_label){"agentguard.owner", AG_EGRESS_OWNER};
	l[1] = (struct ag_label){"agentguard.study-egress.role", role};
	l[2] = (struct ag_label){"agentguard.study-egress.token", p->token};
	l[3] = (struct ag_label){"agentguard.study-egress.trial", p->trial_id};
	if (in->run_label_key)
		l[4] = (struct ag_label){in->run_label_key, in->run_label_value};
}

int ag_egress_subnet_parse(const char *cidr, uint32_t *net, int *prefix)
{
	char buf[AG_EGRESS_ADDR_TEXT_MAX];
	const char *slash = cidr ? strchr(cidr, '/') : NULL;
	if (!slash || (size_t)(slash - cidr) >= sizeof(buf))
		return -1;
	memcpy(buf, cidr, (size_t)(slash - cidr));
	buf[slash - cidr] = '\0';
	struct in_addr a;
	int64_t pf;
	if (inet_pton(AF_INET, buf, &a) != 1 || ag_parse_i64(slash + 1, &pf) < 0 || pf < 1 ||
	    pf > 32)
		return -1;
	uint32_t v = ntohl(a.s_addr);
	uint32_t mask = pf == 32 ? 0xffffffffu : ~(0xffffffffu >> pf);
	if (v & ~mask)
		return -1; /* host bits set: not a network */
	*net = v;
	*prefix = (int)pf;
	return 0;
}

bool ag_egress_subnets_overlap(uint32_t a, int pa, uint32_t b, int pb)
{
	int p = pa < pb ? pa : pb;
	uint32_t mask = p == 0 ? 0 : p == 32 ? 0xffffffffu : ~(0xffffffffu >> p);
	return (a & mask) == (b & mask);
}

int ag_egress_plan_build(const struct ag_egress_plan_inputs *in, struct ag_egress_plan *p,
			 struct ag_error **err)
{
	memset(p, 0, sizeof(*p));
	const struct ag_config *c = in->config;
	if (!c || !c->contained.present || !c->sandbox.image)
		return FAIL("egress.plan.not_contained",
			    "the config needs a contained_execution block and a pinned "
			    "sandbox.image for the agent");
	if (!ag_egress_id_valid(in->trial_id))
		return FAIL("egress.plan.trial_id",
			    "trial id must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
	bool parsed = false;
	_cleanup_free_ char *gw_digest =
	    image_digest(in->gateway_image ? in->gateway_image : "", &parsed);
	if (!gw_digest)
		return FAIL("egress.plan.image_not_pinned",
			    "the gateway image must be pinned by digest (REPO@sha256:...); a tag "
			    "alone names no fixed image");
	_cleanup_free_ char *ag_digest = image_digest(c->sandbox.image, &parsed);
	if (!ag_digest)
		return FAIL("egress.plan.image_not_pinned",
			    "the agent image must be pinned by digest");
	if (strcmp(gw_digest, ag_digest) == 0)
		return FAIL("egress.plan.same_image",
			    "the gateway and the agent must be different images (same digest %s)",
			    gw_digest);
	struct ag_egress_addr addr;
	if (in->gateway_dns && ag_egress_addr_parse(in->gateway_dns, &addr) < 0)
		return FAIL("egress.plan.gateway_dns", "gateway DNS must be an IP address");
	if (in->resolver && ag_egress_addr_parse(in->resolver, &addr) < 0)
		return FAIL("egress.plan.resolver", "--resolver must be one IP address");
	uint32_t net = 0;
	int prefix = 0;
	const char *subnet = in->study_subnet ? in->study_subnet : AG_STUDY_DEFAULT_SUBNET;
	/* room for the study block and the outbound block after it, below
	 * 255.255.255.255 (no wrap to 0.0.0.0) */
	if (ag_egress_subnet_parse(subnet, &net, &prefix) < 0 ||
	    prefix < AG_STUDY_SUBNET_PREFIX_MIN || prefix > AG_STUDY_SUBNET_PREFIX_MAX ||
	    (uint64_t)net + 2 * ((uint64_t)1 << (32 - prefix)) > ((uint64_t)1 << 32))
		return FAIL("egress.plan.subnet",
			    "the study subnet must be an IPv4 network A.B.C.D/N with N in %d..%d",
			    AG_STUDY_SUBNET_PREFIX_MIN, AG_STUDY_SUBNET_PREFIX_MAX);
	if ((in->run_label_key == NULL) != (in->run_label_value == NULL))
		return FAIL("egress.plan.topology", "a run label needs a key and a value");

	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(in->trial_id, strlen(in->trial_id), hex);
	memcpy(p->token, hex, 12);
	snprintf(p->trial_id, sizeof(p->trial_id), "%s", in->trial_id);
	memcpy(p->policy_digest, in->policy->digest, sizeof(p->policy_digest));
	{
		struct in_addr gw = {.s_addr = htonl(net + 2)};
		inet_ntop(AF_INET, &gw, p->gateway_study_ip, sizeof(p->gateway_study_ip));
	}

	char base[48];
	if (in->names_base) {
		if (strlen(in->names_base) >= 44)
			return FAIL("egress.plan.topology", "the names' base is too long");
		snprintf(base, sizeof(base), "%s", in->names_base);
	} else {
		snprintf(base, sizeof(base), "agentguard-study-%s", p->token);
	}
	snprintf(p->internal.name, sizeof(p->internal.name), "%s-%s", base,
		 in->names_base ? "study" : "internal");
	if (in->outbound_network) {
		if (strlen(in->outbound_network) >= sizeof(p->outbound.name))
			return FAIL("egress.plan.topology",
				    "the outbound network name is too long");
		snprintf(p->outbound.name, sizeof(p->outbound.name), "%s", in->outbound_network);
		p->outbound.existing = true;
	} else {
		/* AgentGuard's own outbound network: the block right after the
		 * study subnet, of the same size (explicit, never the engine's pick). */
		snprintf(p->outbound.name, sizeof(p->outbound.name), "%s-outbound", base);
		char a[INET_ADDRSTRLEN];
		struct in_addr ia = {.s_addr = htonl(net + (1u << (32 - prefix)))};
		inet_ntop(AF_INET, &ia, a, sizeof(a));
		snprintf(p->outbound.subnet, sizeof(p->outbound.subnet), "%s/%d", a, prefix & 63);
		ia.s_addr = htonl(net + (1u << (32 - prefix)) + 2);
		inet_ntop(AF_INET, &ia, p->gateway_outbound_ip, sizeof(p->gateway_outbound_ip));
	}
	snprintf(p->internal.subnet, sizeof(p->internal.subnet), "%s", subnet);
	p->internal.internal = true;
	p->internal.inhibit_ipv4 = true;
	p->outbound.internal = in->outbound_internal;
	p->outbound.inhibit_ipv4 = false;
	for (int i = 0; i < 2; i++) {
		struct ag_egress_network_spec *n = i ? &p->outbound : &p->internal;
		n->labels[0] = (struct ag_label){"agentguard.owner", AG_EGRESS_OWNER};
		n->labels[1] = (struct ag_label){"agentguard.study-egress.token", p->token};
		n->n_labels = 2;
		if (in->run_label_key)
			n->labels[n->n_labels++] =
			    (struct ag_label){in->run_label_key, in->run_label_value};
	}
	snprintf(p->gateway_name, sizeof(p->gateway_name), "%s-gateway", base);
	snprintf(p->agent_name, sizeof(p->agent_name), "%s-agent", base);
	set_labels(p->gateway_labels, p, "gateway", in);
	set_labels(p->agent_labels, p, "agent", in);
	size_t n_labels = in->run_label_key ? 5 : 4;

	/* Gateway: a fixed, small hardened spec of its own. */
	ag_strv_push(&p->gateway_cmd, "--listen-address");
	ag_strv_push(&p->gateway_cmd, p->gateway_study_ip);
	ag_strv_push(&p->gateway_cmd, "--listen-port");
	ag_strv_pushf(&p->gateway_cmd, "%d", AG_EGRESS_GATEWAY_PORT);
	ag_strv_push(&p->gateway_cmd, "--resolver");
	ag_strv_push(&p->gateway_cmd, in->resolver ? in->resolver : "127.0.0.1");
	ag_strv_push(&p->gateway_cmd, "--policy");
	ag_strv_push(&p->gateway_cmd, AG_EGRESS_EVIDENCE_PATH "/" AG_EGRESS_POLICY_FILE);
	ag_strv_push(&p->gateway_cmd, "--policy-digest");
	ag_strv_push(&p->gateway_cmd, p->policy_digest);
	ag_strv_push(&p->gateway_cmd, "--events");
	ag_strv_push(&p->gateway_cmd, AG_EGRESS_EVIDENCE_PATH "/" AG_EGRESS_EVENTS_FILE);
	ag_strv_push(&p->gateway_cmd, "--aggregates");
	ag_strv_push(&p->gateway_cmd, AG_EGRESS_EVIDENCE_PATH "/" AG_EGRESS_AGGREGATES_FILE);
	ag_strv_push(&p->gateway_cmd, "--trial-id");
	ag_strv_push(&p->gateway_cmd, p->trial_id);
	/* The host side of each subnet the plan creates (Docker gives a
	 * bridge the first address), then the host's own addresses: a
	 * test_only rule may approve a documentation-range address that is in
	 * fact the host's, and only this list tells the gateway so. */
	uint32_t host_sides[2] = {net + 1,
				  p->outbound.existing ? 0 : net + (1u << (32 - prefix)) + 1};
	if (in->n_host_addresses + 2 > AG_GW_HOST_ADDRS_MAX)
		return FAIL("egress.plan.host_addresses",
			    "the host has more than %d addresses the gateway must refuse",
			    AG_GW_HOST_ADDRS_MAX - 2);
	for (size_t i = 0; i < 2; i++) {
		if (!host_sides[i])
			continue;
		char a[INET_ADDRSTRLEN];
		struct in_addr ia = {.s_addr = htonl(host_sides[i])};
		inet_ntop(AF_INET, &ia, a, sizeof(a));
		ag_strv_push(&p->gateway_cmd, "--host-address");
		ag_strv_push(&p->gateway_cmd, a);
	}
	for (size_t i = 0; i < in->n_host_addresses; i++) {
		if (ag_egress_addr_parse(in->host_addresses[i], &addr) < 0)
			return FAIL("egress.plan.host_addresses",
				    "a host address is not an IP address");
		ag_strv_push(&p->gateway_cmd, "--host-address");
		ag_strv_push(&p->gateway_cmd, in->host_addresses[i]);
	}
	ag_strv_push(&p->owned, in->gateway_image);
	size_t n_files = 0;
	bool inject = in->policy && in->policy->n_inject > 0;
	if (inject != (in->inject_host_path != NULL) ||
	    (inject && (!in->evidence_host_path || !in->agent_ca_host_path)))
		return FAIL("egress.plan.inject",
			    "a policy that injects needs the inject file and the agent's CA file");
	if (in->evidence_host_path) {
		static const char *const files[] = {AG_EGRESS_POLICY_FILE, AG_EGRESS_EVENTS_FILE,
						    AG_EGRESS_AGGREGATES_FILE};
		for (size_t i = 0; i < AG_ARRAY_SIZE(files); i++) {
			ag_strv_pushf(&p->owned, "%s/%s", in->evidence_host_path, files[i]);
			ag_strv_pushf(&p->owned, "%s/%s", AG_EGRESS_EVIDENCE_PATH, files[i]);
			p->gateway_files[n_files++] = (struct ag_exec_file_bind){
			    p->owned.v[p->owned.n - 2], p->owned.v[p->owned.n - 1], i == 0};
		}
		const char *extra[2][2] = {{in->inject_host_path, AG_EGRESS_INJECT_FILE},
					   {in->upstream_ca_host_path, AG_EGRESS_UPSTREAM_CA_FILE}};
		static const char *const flag[2] = {"--inject", "--upstream-ca"};
		for (size_t i = 0; i < 2; i++) {
			if (!extra[i][0])
				continue;
			ag_strv_push(&p->owned, extra[i][0]);
			ag_strv_pushf(&p->owned, "%s/%s", AG_EGRESS_EVIDENCE_PATH, extra[i][1]);
			p->gateway_files[n_files++] = (struct ag_exec_file_bind){
			    p->owned.v[p->owned.n - 2], p->owned.v[p->owned.n - 1], true};
			ag_strv_push(&p->gateway_cmd, flag[i]);
			ag_strv_push(&p->gateway_cmd, p->owned.v[p->owned.n - 1]);
		}
	}
	p->gateway_dns[0] = in->gateway_dns ? in->gateway_dns : AG_EGRESS_AGENT_DNS;
	p->gateway = (struct ag_egress_container_spec){
	    .role = AG_EGRESS_GATEWAY,
	    .exec =
		{
		    .image = p->owned.v[0],
		    .network = AG_NET_NONE, /* unused: network_name says */
		    .uid = AG_EGRESS_GATEWAY_UID,
		    .gid = AG_EGRESS_GATEWAY_UID,
		    .cpu_limit = AG_EGRESS_GATEWAY_CPUS,
		    .memory_limit = AG_EGRESS_GATEWAY_MEMORY,
		    .pids_limit = AG_EGRESS_GATEWAY_PIDS,
		    .tmpfs_path = AG_EXEC_TMPFS_PATH,
		    .tmpfs_size = AG_EGRESS_GATEWAY_TMPFS,
		    /* the evidence directory: a small tmpfs; the run's evidence
		     * files, when there is a run, are bound into it one by one */
		    .workspace_container_path = AG_EGRESS_EVIDENCE_PATH,
		    .workspace_tmpfs_size = AG_EGRESS_GATEWAY_EVIDENCE_TMPFS,
		    .file_binds = n_files ? p->gateway_files : NULL,
		    .n_file_binds = n_files,
		    .file_size_max = AG_EGRESS_GATEWAY_FSIZE,
		    .container_name = p->gateway_name,
		    .entrypoint = AG_EGRESS_GATEWAY_BIN,
		    .labels = p->gateway_labels,
		    .n_labels = n_labels,
		    .command = (const char *const *)p->gateway_cmd.v,
		    .n_command = p->gateway_cmd.n,
		    .network_name = p->internal.name,
		    .network_alias = AG_EGRESS_GATEWAY_ALIAS,
		    .ipv4_address = p->gateway_study_ip,
		    .dns = p->gateway_dns,
		    .n_dns = 1,
		    .ip_forward_off = true,
		    .group_add = in->evidence_group,
		},
	};
	if (ag_exec_spec_validate(&p->gateway.exec, err) < 0)
		return ag_err_wrap(err, "gateway container");

	/* Agent: the contained-run spec of the config, on the study network. */
	char proxy[128];
	snprintf(proxy, sizeof(proxy), "http://%s:%d", AG_EGRESS_GATEWAY_ALIAS,
		 AG_EGRESS_GATEWAY_PORT);
	ag_strv_pushf(&p->agent_env, "ALL_PROXY=%s", proxy);
	ag_strv_pushf(&p->agent_env, "HTTPS_PROXY=%s", proxy);
	ag_strv_pushf(&p->agent_env, "HTTP_PROXY=%s", proxy);
	ag_strv_push(&p->agent_env, "NO_PROXY=");
	if (inject) {
		/* the placeholders, and the trial CA for every client library */
		static const char *const ca_vars[] = {AG_EXEC_CA_VARS};
		for (size_t i = 0; i < in->n_placeholders; i++)
			ag_strv_push(&p->agent_env, in->placeholders[i]);
		for (size_t i = 0; i < AG_ARRAY_SIZE(ca_vars); i++)
			ag_strv_pushf(&p->agent_env, "%s=%s", ca_vars[i], AG_EXEC_CA_PATH);
	}
	const char *agent_ca = NULL;
	if (inject) {
		ag_strv_push(&p->owned, in->agent_ca_host_path);
		agent_ca = p->owned.v[p->owned.n - 1];
	}
	struct ag_exec_inputs ei = {
	    .workspace_host_path = in->workspace_host_path,
	    .container_name = p->agent_name,
	    .env = (const char *const *)p->agent_env.v,
	    .n_env = p->agent_env.n,
	    .labels = p->agent_labels,
	    .n_labels = n_labels,
	    .command = in->command,
	    .n_command = in->n_command,
	    .ca_host_path = agent_ca,
	};
	p->agent.role = AG_EGRESS_AGENT;
	if (ag_exec_spec_from_config(c, &ei, &p->agent.exec, err) < 0)
		return ag_err_wrap(err, "agent container");

	ag_egress_plan_agent_network(p, &p->agent.exec);
	return ag_egress_plan_validate(p, err);
}

void ag_egress_plan_agent_network(struct ag_egress_plan *p, struct ag_exec_spec *s)
{
	p->agent_dns[0] = AG_EGRESS_AGENT_DNS;
	s->network_name = p->internal.name;
	s->network_alias = NULL;
	s->ipv4_address = NULL;
	s->dns = p->agent_dns;
	s->n_dns = 1;
	s->ip_forward_off = false;
	s->group_add = 0;
}

int ag_egress_plan_validate(const struct ag_egress_plan *p, struct ag_error **err)
{
	const struct ag_exec_spec *g = &p->gateway.exec, *a = &p->agent.exec;
	if (!p->internal.internal || !p->internal.inhibit_ipv4 || !p->internal.subnet[0])
		return FAIL("egress.plan.topology",
			    "the study network must be --internal with inhibit_ipv4 and a subnet");
	if (p->gateway.role != AG_EGRESS_GATEWAY || p->agent.role != AG_EGRESS_AGENT ||
	    !g->network_name || !a->network_name || strcmp(g->network_name, p->internal.name) ||
	    strcmp(a->network_name, p->internal.name))
		return FAIL("egress.plan.topology",
			    "both containers must be created on the internal network");
	if (!strcmp(a->network_name, p->outbound.name) || a->network_alias || a->ipv4_address ||
	    a->ip_forward_off || a->group_add || a->n_dns != 1 || !a->dns ||
	    strcmp(a->dns[0], AG_EGRESS_AGENT_DNS))
		return FAIL("egress.plan.topology",
			    "the agent joins the internal network only, with DNS 127.0.0.1");
	if (!g->ip_forward_off || !g->network_alias ||
	    strcmp(g->network_alias, AG_EGRESS_GATEWAY_ALIAS) || !g->ipv4_address)
		return FAIL(
		    "egress.plan.topology",
		    "the gateway needs its alias, its fixed study address and ip_forward=0");
	if (a->n_file_binds || a->file_size_max || g->workspace_host_path ||
	    g->file_size_max != AG_EGRESS_GATEWAY_FSIZE)
		return FAIL("egress.plan.topology",
			    "only the gateway's evidence files are bound, and it writes no file "
			    "larger than its stream's bound");
	if (ag_exec_spec_validate(g, err) < 0)
		return ag_err_wrap(err, "gateway container");
	if (ag_exec_spec_validate(a, err) < 0)
		return ag_err_wrap(err, "agent container");
	bool parsed;
	_cleanup_free_ char *gd = image_digest(g->image, &parsed);
	_cleanup_free_ char *ad = image_digest(a->image, &parsed);
	if (!gd || !ad)
		return FAIL("egress.plan.image_not_pinned", "both images must be pinned by digest");
	if (!strcmp(gd, ad))
		return FAIL("egress.plan.same_image", "the gateway and the agent must differ");
	return 0;
}

/* ---- rendering ---- */

static int label_cmp(const void *x, const void *y)
{
	return strcmp(((const struct ag_label *)x)->key, ((const struct ag_label *)y)->key);
}

static void push_labels(struct ag_strv *v, const struct ag_label *l, size_t n)
{
	_cleanup_free_ struct ag_label *s = ag_xcalloc(n ? n : 1, sizeof(*s));
	memcpy(s, l, n * sizeof(*s));
	qsort(s, n, sizeof(*s), label_cmp);
	for (size_t i = 0; i < n; i++) {
		ag_strv_push(v, "--label");
		ag_strv_pushf(v, "%s=%s", s[i].key, s[i].value);
	}
}

/* THE container renderer (exec_spec's), plus --pull never after "create". */
static int container_argv(const struct ag_egress_container_spec *c, struct ag_strv *v,
			  struct ag_error **err)
{
	struct ag_strv a = AG_STRV_INIT;
	if (ag_render_argv(&c->exec, AG_RENDER_CREATE, &a, err) < 0)
		return -1;
	ag_strv_push(v, a.v[0]);
	ag_strv_push(v, "--pull");
	ag_strv_push(v, "never");
	for (size_t i = 1; i < a.n; i++)
		ag_strv_push(v, a.v[i]);
	ag_strv_release(&a);
	return 0;
}

static void network_argv(const struct ag_egress_network_spec *n, struct ag_strv *v)
{
	ag_strv_push(v, "network");
	ag_strv_push(v, "create");
	ag_strv_push(v, "--driver");
	ag_strv_push(v, "bridge");
	if (n->internal)
		ag_strv_push(v, "--internal");
	ag_strv_push(v, "--ipv6=false");
	if (n->subnet[0]) {
		ag_strv_push(v, "--subnet");
		ag_strv_push(v, n->subnet);
	}
	if (n->inhibit_ipv4) {
		ag_strv_push(v, "--opt");
		ag_strv_push(v, "com.docker.network.bridge.inhibit_ipv4=true");
	}
	push_labels(v, n->labels, n->n_labels);
	ag_strv_push(v, n->name);
}

/*
 * Belt and braces over the options part of a create argv (before "--"):
 * no forbidden option, and the options whose value matters carry only the
 * values the renderer writes. Labels and names are values, never matched
 * as text, so a trial id cannot trip this by accident.
 */
static int scan_forbidden(const struct ag_strv *v, struct ag_error **err)
{
	static const char *const bad[] = {
	    "--privileged",   "--pid",	    "--ipc",	 "--uts",     "--userns",
	    "--device",	      "--add-host", "--cap-add", "--publish", "-p",
	    "--publish-all",  "-P",	    "--link",	 "--volume",  "-v",
	    "--volumes-from", "--ip6",	    "--net",
	};
	for (size_t i = 1; i < v->n; i++) {
		const char *s = v->v[i], *next = i + 1 < v->n ? v->v[i + 1] : "";
		if (strcmp(s, "--") == 0)
			return 0;
		for (size_t k = 0; k < AG_ARRAY_SIZE(bad); k++)
			if (strcmp(s, bad[k]) == 0 ||
			    (strncmp(s, bad[k], strlen(bad[k])) == 0 && s[strlen(bad[k])] == '='))
				return FAIL("egress.plan.forbidden_flag",
					    "rendered argv carries forbidden option '%s'", bad[k]);
		bool wrong = (!strcmp(s, "--security-opt") && strcmp(next, "no-new-privileges")) ||
			     (!strcmp(s, "--cgroupns") && strcmp(next, "private")) ||
			     (!strcmp(s, "--network") &&
			      (!strcmp(next, "host") || !strncmp(next, "container:", 10))) ||
			     (!strcmp(s, "--mount") && strstr(next, "docker.sock")) ||
			     !strncmp(s, "--network=", 10) || !strncmp(s, "--security-opt=", 15);
		if (wrong)
			return FAIL("egress.plan.forbidden_flag",
				    "rendered argv gives '%s' a value the plan never writes", s);
		if (s[0] == '-' && next[0] != '-')
			i++; /* skip the option's value */
	}
	return 0;
}

void ag_egress_steps_free(struct ag_egress_step *steps, size_t n)
{
	for (size_t i = 0; steps && i < n; i++)
		ag_strv_release(&steps[i].argv);
	free(steps);
}

int ag_egress_plan_render(const struct ag_egress_plan *p, struct ag_egress_step **out, size_t *n,
			  struct ag_error **err)
{
	if (ag_egress_plan_validate(p, err) < 0)
		return -1;
	static const struct {
		const char *name;
		bool teardown;
	} order[] = {
	    {"create_internal_network", false},
	    {"create_outbound_network", false},
	    {"create_gateway", false},
	    {"connect_gateway_outbound", false},
	    {"create_agent", false},
	    {"start_gateway", false},
	    {"inspect_gateway", false},
	    {"start_agent", false},
	    {"remove_agent", true},
	    {"remove_gateway", true},
	    {"remove_internal_network", true},
	    {"remove_outbound_network", true},
	};
	size_t k = AG_ARRAY_SIZE(order);
	struct ag_egress_step *s = ag_xcalloc(k, sizeof(*s));
	for (size_t i = 0; i < k; i++) {
		s[i].name = order[i].name;
		s[i].teardown = order[i].teardown;
	}
	network_argv(&p->internal, &s[0].argv);
	if (p->outbound.existing) {
		/* The operator's network: inspected, never created (nor removed). */
		ag_strv_push(&s[1].argv, "network");
		ag_strv_push(&s[1].argv, "inspect");
		ag_strv_push(&s[1].argv, p->outbound.name);
	} else {
		network_argv(&p->outbound, &s[1].argv);
	}
	if (container_argv(&p->gateway, &s[2].argv, err) < 0 ||
	    container_argv(&p->agent, &s[4].argv, err) < 0) {
		ag_egress_steps_free(s, k);
		return -1;
	}
	struct ag_strv *v = &s[3].argv;
	ag_strv_push(v, "network");
	ag_strv_push(v, "connect");
	if (p->gateway_outbound_ip[0]) {
		ag_strv_push(v, "--ip");
		ag_strv_push(v, p->gateway_outbound_ip);
	}
	ag_strv_push(v, p->outbound.name);
	ag_strv_push(v, p->gateway_name);
	ag_strv_push(&s[5].argv, "start");
	ag_strv_push(&s[5].argv, p->gateway_name);
	v = &s[6].argv;
	ag_strv_push(v, "container");
	ag_strv_push(v, "inspect");
	ag_strv_push(v, "--format");
	ag_strv_push(v, "{{json .State.Running}}");
	ag_strv_push(v, p->gateway_name);
	v = &s[7].argv;
	ag_strv_push(v, "start");
	ag_strv_push(v, "--attach");
	ag_strv_push(v, p->agent_name);
	const char *rm[] = {p->agent_name, p->gateway_name};
	for (size_t i = 0; i < 2; i++) {
		ag_strv_push(&s[8 + i].argv, "rm");
		ag_strv_push(&s[8 + i].argv, "--force");
		ag_strv_push(&s[8 + i].argv, rm[i]);
	}
	const char *nets[] = {p->internal.name, p->outbound.name};
	for (size_t i = 0; i < 2; i++) {
		ag_strv_push(&s[10 + i].argv, "network");
		ag_strv_push(&s[10 + i].argv, i && p->outbound.existing ? "disconnect" : "rm");
		ag_strv_push(&s[10 + i].argv, nets[i]);
		if (i && p->outbound.existing)
			ag_strv_push(&s[10 + i].argv, p->gateway_name);
	}
	if (scan_forbidden(&s[2].argv, err) < 0 || scan_forbidden(&s[4].argv, err) < 0) {
		ag_egress_steps_free(s, k);
		return -1;
	}
	*out = s;
	*n = k;
	return 0;
}

/* ---- JSON ---- */

/* The host's own addresses (the gateway's --host-address values) never
 * leave through the plan's JSON or its digest: a digest over a handful of
 * IPv4 addresses could be reversed by trying them all. */
#define HOST_ADDRESS_MASK "[host-address]"

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_string(i > 0 && strcmp(v[i - 1], "--host-address") == 0
						      ? HOST_ADDRESS_MASK
						      : v[i]));
	return a;
}

static json_t *labels_json(const struct ag_label *l, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, l[i].key, json_string(l[i].value));
	return o;
}

static json_t *network_json(const struct ag_egress_network_spec *n)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(n->name));
	json_object_set_new(o, "driver", json_string("bridge"));
	json_object_set_new(o, "internal", json_boolean(n->internal));
	json_object_set_new(o, "ipv6", json_false());
	json_object_set_new(o, "inhibit_ipv4", json_boolean(n->inhibit_ipv4));
	json_object_set_new(o, "subnet", n->subnet[0] ? json_string(n->subnet) : json_null());
	json_object_set_new(o, "existing", json_boolean(n->existing));
	json_object_set_new(o, "labels", labels_json(n->labels, n->n_labels));
	return o;
}

static json_t *container_json(const struct ag_egress_container_spec *c, const char *outbound)
{
	const struct ag_exec_spec *s = &c->exec;
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(s->container_name));
	json_object_set_new(o, "image", json_string(s->image));
	json_t *nets = json_array();
	json_array_append_new(nets, json_string(s->network_name));
	if (c->role == AG_EGRESS_GATEWAY)
		json_array_append_new(nets, json_string(outbound));
	json_object_set_new(o, "networks", nets);
	json_object_set_new(o, "network_alias",
			    s->network_alias ? json_string(s->network_alias) : json_null());
	json_object_set_new(o, "ipv4_address",
			    s->ipv4_address ? json_string(s->ipv4_address) : json_null());
	json_object_set_new(o, "dns", s->n_dns ? json_string(s->dns[0]) : json_null());
	json_t *sysctls = json_object();
	if (s->ip_forward_off)
		json_object_set_new(sysctls, "net.ipv4.ip_forward", json_string("0"));
	json_object_set_new(o, "sysctls", sysctls);
	json_object_set_new(o, "user", json_sprintf("%" PRId64 ":%" PRId64, s->uid, s->gid));
	json_object_set_new(o, "cap_drop", json_string("ALL"));
	json_object_set_new(o, "cap_add", json_array());
	json_object_set_new(o, "no_new_privileges", json_true());
	json_object_set_new(o, "read_only_root", json_true());
	char *cpus = ag_render_cpus(s->cpu_limit);
	json_object_set_new(o, "cpus", json_string(cpus));
	free(cpus);
	json_object_set_new(o, "memory", json_string(s->memory_limit));
	json_object_set_new(o, "pids_limit", json_integer(s->pids_limit));
	json_object_set_new(o, "tmpfs_size", json_string(s->tmpfs_size));
	json_object_set_new(o, "mount_path", json_string(s->workspace_container_path));
	json_object_set_new(o, "mount", json_string(s->workspace_host_path ? "bind" : "tmpfs"));
	json_object_set_new(o, "log_driver", json_string("none"));
	if (s->file_size_max)
		json_object_set_new(o, "file_size_max", json_integer(s->file_size_max));
	if (s->n_file_binds) {
		json_t *fb = json_array();
		for (size_t i = 0; i < s->n_file_binds; i++)
			json_array_append_new(
			    fb, json_pack("{s:s,s:s}", "path", s->file_binds[i].container_path,
					  "access", s->file_binds[i].read_only ? "ro" : "rw"));
		json_object_set_new(o, "file_binds", fb);
	}
	json_object_set_new(o, "env_names", json_array());
	for (size_t i = 0; i < s->n_env; i++) {
		size_t nl = strcspn(s->env[i], "=");
		json_array_append_new(json_object_get(o, "env_names"), json_stringn(s->env[i], nl));
	}
	json_object_set_new(o, "labels", labels_json(s->labels, s->n_labels));
	json_object_set_new(o, "command", strv_json(s->command, s->n_command));
	return o;
}

int ag_egress_plan_json(const struct ag_egress_plan *p, json_t **out, struct ag_error **err)
{
	struct ag_egress_step *steps = NULL;
	size_t n = 0;
	if (ag_egress_plan_render(p, &steps, &n, err) < 0)
		return -1;
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string("agentguard.study-egress-plan"));
	json_object_set_new(o, "schema_version", json_integer(1));
	json_object_set_new(o, "trial_id", json_string(p->trial_id));
	json_object_set_new(o, "token", json_string(p->token));
	json_object_set_new(o, "egress_policy_digest", json_string(p->policy_digest));
	json_t *nets = json_object();
	json_object_set_new(nets, "internal", network_json(&p->internal));
	json_object_set_new(nets, "outbound", network_json(&p->outbound));
	json_object_set_new(o, "networks", nets);
	json_t *cs = json_object();
	json_object_set_new(cs, "gateway", container_json(&p->gateway, p->outbound.name));
	json_object_set_new(cs, "agent", container_json(&p->agent, p->outbound.name));
	json_object_set_new(o, "containers", cs);
	json_t *st = json_array(), *td = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "step", json_string(steps[i].name));
		json_object_set_new(
		    x, "argv", strv_json((const char *const *)steps[i].argv.v, steps[i].argv.n));
		json_array_append_new(steps[i].teardown ? td : st, x);
	}
	ag_egress_steps_free(steps, n);
	json_object_set_new(o, "start", st);
	json_object_set_new(o, "teardown", td);
	static const struct ag_canon_bounds b = {8, 4096, 1 << 20, 1LL << 40, 8u << 20};
	char *text = NULL;
	size_t len = 0;
	if (ag_canon_dump(o, &b, &text, &len, err) < 0) {
		json_decref(o);
		return ag_err_wrap(err, "plan");
	}
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(text, len, hex);
	free(text);
	json_object_set_new(o, "plan_digest", json_string(hex));
	*out = o;
	return 0;
}
