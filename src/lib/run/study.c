/*
 * study.c: the live-study topology around a contained run's agent
 * (study.h). Every Docker object goes through the ledger; every assertion
 * that fails names its reason and stops the run before the agent starts.
 */
#include "lib/base/ag.h"

#include "lib/run/study.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/json.h"
#include "lib/base/redact.h"
#include "lib/run/inject.h"
#include "lib/base/sha256.h"
#include "lib/base/size.h"
#include "lib/config/config.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/engine.h"
#include "lib/docker/exec_spec.h"
#include "lib/docker/inspect.h"
#include "lib/docker/ledger.h"
#include "lib/egress/authority.h"
#include "lib/egress/manifest.h"
#include "lib/egress/plan.h"
#include "lib/egress/policy.h"
#include "lib/evidence/canon.h"
#include "lib/run/record.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#define CTL AG_DOCKER_CONTROL_TIMEOUT_MS

struct ag_study {
	struct ag_study_opts o;
	struct ag_run_net_hooks hooks;
	struct ag_egress_plan plan;
	bool plan_built;
	char *suffix, *run_id;
	char names_base[64];
	char *evidence_dir; /* host path of <run>/egress (the gateway's bind source) */
	char *probe_bin;    /* verified canonical path of the static probe */
	struct ag_strv agent_env;
	/* the owner labels every study object carries (entries borrow them) */
	struct ag_label_expect expect[2];

	/* the objects: entries of the run's ledger (bound), by role */
	struct ag_ledger *l;
	char *out_existing_id; /* the operator's outbound network (never ours) */
	char gw_out_ip[AG_EGRESS_ADDR_TEXT_MAX];
	char *gw_image_id, *gw_bound_image_id, *agent_image_id, *gw_platform;
	uint32_t study_net;
	int study_prefix;
	char subnet[32]; /* the study subnet used: given and checked, or chosen */
	int subnet_lock; /* the subnet lock's fd while held, else -1 */

	char plan_digest[AG_SHA256_HEX_LEN + 1];
	/* what was observed: the run record's study part (record.h), bound by the run */
	struct ag_run_study *f;
};

#define UNVERIFIED(reason, ...) ag_err(err, AG_E_UNVERIFIED, 0, reason, __VA_ARGS__)

/* ---- small helpers ---- */

/* Local image id and the platform of REF (never pulled): 0, or -1 absent/unknown. */
static int image_facts(struct ag_engine *eng, const char *ref, char **id, char **platform,
		       bool want_repo_digest, struct ag_error **err)
{
	_cleanup_free_ char *q = ag_engine_escape(ref);
	_cleanup_free_ char *path = ag_xasprintf("/images/%s/json", q);
	json_t *v = NULL;
	if (ag_engine_json(eng, "GET", path, NULL, CTL, "inspect the image", &v, err) < 0) {
		if (strcmp((*err)->reason, "docker.api.not_found") == 0) {
			ag_error_free(*err);
			*err = NULL;
			return UNVERIFIED("study.gateway_image.absent",
					  "the gateway image is not present locally (AgentGuard "
					  "never pulls it: load or build it first)");
		}
		return -1;
	}
	const char *got = ag_json_path_str(v, "Id");
	bool ok = ag_is_image_id(got);
	if (ok && want_repo_digest) {
		/* The pinned reference must be one of the image's own RepoDigests. */
		ok = false;
		const json_t *rd = json_object_get(v, "RepoDigests");
		size_t i;
		const json_t *d;
		json_array_foreach(rd, i, d) if (json_is_string(d) &&
						 strcmp(json_string_value(d), ref) == 0) ok = true;
	}
	if (!ok) {
		json_decref(v);
		return UNVERIFIED("study.gateway_image.identity",
				  "the local image does not carry the pinned reference as a "
				  "RepoDigest");
	}
	*id = ag_xstrdup(got);
	if (platform) {
		const char *os = ag_json_path_str(v, "Os"),
			   *arch = ag_json_path_str(v, "Architecture");
		*platform = os && arch ? ag_xasprintf("%s/%s", os, arch) : NULL;
	}
	json_decref(v);
	return 0;
}

const char *ag_study_cleanup_word(const struct ag_cleanup_result *r)
{
	return ag_cleanup_state_manifest_word(r->state);
}

const char *ag_study_object_word(const struct ag_ledger *l, const char *role, const char *absent)
{
	const struct ag_ledger_entry *e = ag_ledger_find(l, role);
	return e ? ag_study_cleanup_word(&e->cleanup) : absent;
}

/* The id the daemon answered for the study object with ROLE, or NULL. */
static const char *object_id(const struct ag_study *s, const char *role)
{
	const struct ag_ledger_entry *e = ag_ledger_find(s->l, role);
	return e ? e->id : NULL;
}

static const char *gateway_id(const struct ag_study *s)
{
	return object_id(s, AG_RUN_ROLE_GATEWAY);
}

/* The outbound network: AgentGuard's own (an entry) or the operator's. */
static bool out_ours(const struct ag_study *s)
{
	return ag_ledger_find(s->l, AG_RUN_ROLE_OUTBOUND_NETWORK) != NULL;
}

static const char *out_net_id(const struct ag_study *s)
{
	return out_ours(s) ? object_id(s, AG_RUN_ROLE_OUTBOUND_NETWORK) : s->out_existing_id;
}

/*
 * A study object becomes an entry of the run's ledger (*e, NULL only when
 * the ledger is full), then is created: its id recorded the moment the
 * daemon answers; after a lost answer the ledger finds it by the run's
 * label and its name. The entry, once made, is torn down with the rest
 * whatever the create said.
 */
static int study_object(struct ag_study *s, struct ag_engine *eng, const char *role,
			const char *name, const struct ag_exec_spec *spec,
			const struct ag_network_spec *net, struct ag_ledger_entry **e,
			struct ag_error **err)
{
	*e = ag_ledger_add(s->l, spec ? AG_LEDGER_CONTAINER : AG_LEDGER_NETWORK, role, name,
			   s->expect, AG_ARRAY_SIZE(s->expect));
	if (!*e)
		return ag_err(err, AG_E_INTERNAL, 0, "study.ledger.full",
			      "the run's ledger has no room for the study's objects");
	return ag_ledger_entry_create(s->l, eng, *e, spec, net, err);
}

/* ---- the networks ---- */

/* Subnets of a network's IPAM config: every IPv4 one must not overlap ours. */
static int outbound_check(struct ag_study *s, const json_t *v, struct ag_error **err)
{
	if (strcmp(ag_json_str_or(json_object_get(v, "Driver"), ""), "bridge") != 0)
		return UNVERIFIED("study.outbound.driver",
				  "the outbound network must use the bridge driver");
	if (!json_is_false(json_object_get(v, "EnableIPv6")))
		return UNVERIFIED("study.outbound.ipv6", "the outbound network must have IPv6 off");
	const json_t *cfg = ag_json_path(v, "IPAM.Config");
	size_t i, n4 = 0;
	const json_t *c;
	json_array_foreach(cfg, i, c)
	{
		const char *sub = ag_json_str_or(json_object_get(c, "Subnet"), "");
		uint32_t net;
		int pf;
		if (strchr(sub, ':'))
			return UNVERIFIED("study.outbound.ipv6",
					  "the outbound network has an IPv6 subnet");
		if (ag_egress_subnet_parse(sub, &net, &pf) < 0)
			return UNVERIFIED("study.outbound.subnet",
					  "the outbound network's subnet cannot be read");
		if (ag_egress_subnets_overlap(net, pf, s->study_net, s->study_prefix))
			return UNVERIFIED(
			    "study.outbound.overlap",
			    "the outbound network's subnet overlaps the study subnet");
		n4++;
	}
	if (n4 == 0)
		return UNVERIFIED("study.outbound.subnet",
				  "the outbound network shows no IPv4 subnet to compare");
	return 0;
}

/* The study network by id; WANT_GATEWAY: its members exactly the gateway
 * (and the self-test probe PROBE_ID while it runs beside it, when given). */
static int study_network_check(struct ag_study *s, struct ag_engine *eng, bool want_gateway,
			       const char *probe_id, struct ag_error **err)
{
	json_t *v = NULL;
	const struct ag_ledger_entry *net = ag_ledger_find(s->l, AG_RUN_ROLE_STUDY_NETWORK);
	if (!net || !net->id || ag_network_lookup(eng, net->id, CTL, &v) != 0)
		return UNVERIFIED("study.network.inspect",
				  "the study network could not be inspected by its id");
	int rc = -1;
	const json_t *cfg = ag_json_path(v, "IPAM.Config");
	const json_t *members = json_object_get(v, "Containers");
	if (!ag_network_owned(v, net->id, &net->owner))
		UNVERIFIED("study.network.identity",
			   "the study network is not ours by id, name and labels");
	else if (strcmp(ag_json_str_or(json_object_get(v, "Driver"), ""), "bridge") != 0 ||
		 !json_is_true(json_object_get(v, "Internal")))
		UNVERIFIED("study.network.internal", "the study network is not an internal bridge");
	else if (!json_is_false(json_object_get(v, "EnableIPv6")))
		UNVERIFIED("study.network.ipv6", "the study network has IPv6 on");
	else if (strcmp(ag_json_str_or(json_object_get(json_object_get(v, "Options"),
						       "com.docker.network.bridge.inhibit_ipv4"),
				       ""),
			"true") != 0)
		UNVERIFIED("study.network.inhibit_ipv4",
			   "the study network does not inhibit the host's IPv4 address");
	else if (!json_is_array(cfg) || json_array_size(cfg) != 1 ||
		 strcmp(ag_json_str_or(json_object_get(json_array_get(cfg, 0), "Subnet"), ""),
			s->plan.internal.subnet) != 0)
		UNVERIFIED("study.network.subnet",
			   "the study network's subnet is not the planned one");
	else if (want_gateway &&
		 (!json_is_object(members) || !gateway_id(s) ||
		  !json_object_get(members, gateway_id(s)) ||
		  json_object_size(members) !=
		      1 + (size_t)(probe_id && json_object_get(members, probe_id) != NULL)))
		UNVERIFIED("study.network.members",
			   "the study network's members are not exactly the gateway");
	else
		rc = 0;
	json_decref(v);
	return rc;
}

/* ---- the gateway ---- */

static int gateway_check(struct ag_study *s, struct ag_engine *eng, struct ag_error **err)
{
	json_t *v = NULL;
	if (!gateway_id(s) || ag_container_lookup(eng, gateway_id(s), CTL, &v) != 0)
		return UNVERIFIED("study.gateway.inspect",
				  "the gateway could not be inspected by id");
	int rc = -1;
	const struct ag_egress_plan *p = &s->plan;
	/* Every control, from the spec that rendered its create; plus the
	 * outbound network it was connected to after create. */
	struct ag_probe_expect x;
	const struct ag_inspect_created made = {AG_INSPECT_GATEWAY, gateway_id(s), s->gw_image_id,
						p->outbound.name};
	if (ag_inspect_expect_from_spec(&p->gateway.exec, &made, &x, err) < 0) {
		json_decref(v);
		return -1;
	}
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	json_t *insp = json_object();
	ag_inspect_container(v, &x, insp, &f);
	json_decref(insp);
	const json_t *eo =
	    json_object_get(ag_json_path(v, "NetworkSettings.Networks"), p->outbound.name);
	const char *img = ag_json_path_str(v, "Image");
	if (f.n)
		UNVERIFIED(f.v[0].reason, "the gateway does not show a required control: %s: %s",
			   f.v[0].control, f.v[0].detail ? f.v[0].detail : "");
	else if (!json_is_true(ag_json_path(v, "State.Running")))
		UNVERIFIED("study.gateway.not_running", "the gateway is not running");
	else if (!img || !s->agent_image_id || strcmp(img, s->agent_image_id) == 0)
		UNVERIFIED("study.gateway_image.same_as_agent",
			   "the gateway runs the agent's image");
	else {
		const char *shown = ag_json_str_or(json_object_get(eo, "IPAddress"), "");
		struct in_addr ia;
		if (inet_pton(AF_INET, shown, &ia) != 1)
			UNVERIFIED("study.gateway.outbound_address",
				   "the gateway has no IPv4 address on the outbound network");
		else if (p->gateway_outbound_ip[0] && strcmp(shown, p->gateway_outbound_ip) != 0)
			UNVERIFIED("study.gateway.outbound_address",
				   "the gateway's address on the outbound network is not the "
				   "planned one");
		else {
			snprintf(s->gw_out_ip, sizeof(s->gw_out_ip), "%s", shown);
			free(s->gw_bound_image_id);
			s->gw_bound_image_id = ag_xstrdup(img);
			rc = 0;
		}
	}
	ag_pf_findings_release(&f);
	json_decref(v);
	return rc;
}

static int outbound_members_check(struct ag_study *s, struct ag_engine *eng, const char *agent_id,
				  struct ag_error **err)
{
	json_t *v = NULL;
	if (!out_net_id(s) || ag_network_lookup(eng, out_net_id(s), CTL, &v) != 0)
		return UNVERIFIED("study.outbound.inspect",
				  "the outbound network could not be inspected by its id");
	const json_t *m = json_object_get(v, "Containers");
	int rc = outbound_check(s, v, err);
	if (rc == 0 && (!json_is_object(m) || !json_object_get(m, gateway_id(s)) ||
			(out_ours(s) && json_object_size(m) != 1) ||
			(agent_id && json_object_get(m, agent_id))))
		rc = UNVERIFIED("study.outbound.members",
				"the outbound network's members are not what the study allows");
	json_decref(v);
	return rc;
}

/* ---- the self-test probe ---- */

/* The self-test probe, inspected by id before it runs: every control of
 * the spec that rendered it (inspect.c), like the preflight's probe. */
static int created_check(struct ag_engine *eng, const struct ag_exec_spec *spec, const char *id,
			 const char *image_id, struct ag_error **err)
{
	struct ag_probe_expect x;
	const struct ag_inspect_created made = {AG_INSPECT_STUDY_PROBE, id, image_id, NULL};
	if (ag_inspect_expect_from_spec(spec, &made, &x, err) < 0)
		return -1;
	json_t *v = NULL;
	if (ag_container_lookup(eng, id, CTL, &v) != 0)
		return UNVERIFIED("study.selftest.inspect",
				  "the self-test probe could not be inspected by id");
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	json_t *insp = json_object();
	ag_inspect_container(v, &x, insp, &f);
	json_decref(insp);
	json_decref(v);
	int rc = f.n ? UNVERIFIED(f.v[0].reason,
				  "the self-test probe does not show a required control: %s: %s",
				  f.v[0].control, f.v[0].detail ? f.v[0].detail : "")
		     : 0;
	ag_pf_findings_release(&f);
	return rc;
}

/*
 * The live self-tests: a throwaway container on the study network running
 * agentguard-probe's study mode; its one JSON line is judged here. When the
 * gateway's outbound address is planned (AgentGuard's own outbound
 * network), the probe runs on its own thread and engine connection while
 * the gateway starts and is inspected (it waits, bounded, for the gateway's
 * port); otherwise after that, on the run's connection. Either way it is
 * judged, and removed, before the agent's container exists.
 */
struct selftest {
	struct ag_ledger_entry *pe; /* the probe's entry (NULL: none made) */
	struct ag_engine eng;	    /* the thread's own connection */
	bool eng_ok, threaded;
	pthread_t th;
	struct ag_engine_stream st;
	int rc;
	struct ag_error *err;
};

/* Creates the probe through the ledger and inspects it by id. */
static int selftest_create(struct ag_study *s, struct ag_engine *eng, struct selftest *t,
			   struct ag_error **err)
{
	const struct ag_config *c = s->o.cfg;
	char bridge_ip[AG_EGRESS_ADDR_TEXT_MAX], port[8], name[80], unique[48];
	struct in_addr b = {.s_addr = htonl(s->study_net + 1)};
	inet_ntop(AF_INET, &b, bridge_ip, sizeof(bridge_ip));
	snprintf(port, sizeof(port), "%d", AG_EGRESS_GATEWAY_PORT);
	snprintf(name, sizeof(name), "%s-probe", s->names_base);
	unsigned char rnd[8] = {0};
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		abort();
	snprintf(unique, sizeof(unique), "ag%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	const char *const argv[] = {
	    "study", s->plan.gateway_study_ip, port, bridge_ip, s->gw_out_ip, unique};
	const struct ag_label labels[] = {{"agentguard.owner", AG_EGRESS_OWNER},
					  {AG_STUDY_ROLE_LABEL, "probe"},
					  {AG_RUN_ID_LABEL, s->suffix}};
	const struct ag_exec_inputs in = {
	    .container_name = name,
	    .probe_host_path = s->probe_bin,
	    .entrypoint = AG_EXEC_PROBE_PATH,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = argv,
	    .n_command = AG_ARRAY_SIZE(argv),
	};
	struct ag_exec_spec spec;
	if (ag_exec_spec_from_config(c, &in, &spec, err) < 0)
		return -1;
	ag_egress_plan_agent_network(&s->plan, &spec);
	/* A fixed address, the subnet's last usable one: started before the
	 * gateway, the engine's pick would be the gateway's own .2, not yet
	 * reserved. */
	char probe_ip[AG_EGRESS_ADDR_TEXT_MAX];
	struct in_addr pa = {.s_addr = htonl(s->study_net + (1u << (32 - s->study_prefix)) - 2)};
	inet_ntop(AF_INET, &pa, probe_ip, sizeof(probe_ip));
	spec.ipv4_address = probe_ip;
	if (study_object(s, eng, AG_RUN_ROLE_STUDY_PROBE, name, &spec, NULL, &t->pe, err) < 0)
		return -1;
	return created_check(eng, &spec, t->pe->id, s->agent_image_id, err);
}

/* Starts the probe, attached, and reads its stream to the end (bounded). */
static int selftest_run(struct ag_engine *eng, struct selftest *t, struct ag_error **err)
{
	const struct ag_engine_stream_opts so = {
	    .stdout_max = AG_STUDY_PROBE_OUTPUT_MAX,
	    .stderr_max = AG_STUDY_PROBE_OUTPUT_MAX,
	    .timeout_ms = AG_STUDY_PROBE_TIMEOUT_MS,
	};
	if (ag_engine_attach_run(eng, t->pe->id, &so, &t->st, err) < 0)
		return -1;
	if (t->st.end == AG_STREAM_NOT_STARTED) /* the engine's own reason, when it gave one */
		return *err ? -1
			    : UNVERIFIED("study.selftest.incomplete",
					 "the self-test probe did not start");
	return 0;
}

static void *selftest_main(void *data)
{
	struct selftest *t = data;
	t->rc = selftest_run(&t->eng, t, &t->err);
	return NULL;
}

/* Its run on a thread of its own, beside the gateway's start. */
static int selftest_spawn(struct ag_engine *eng, struct selftest *t, struct ag_error **err)
{
	if (ag_engine_open(eng->socket, &t->eng, err) < 0)
		return -1;
	t->eng_ok = true;
	if (pthread_create(&t->th, NULL, selftest_main, t) != 0)
		abort(); /* no thread: nothing safe to do */
	t->threaded = true;
	return 0;
}

/* Its one line, judged: every self-test and both controls. */
static int selftest_judge(struct ag_study *s, const struct ag_engine_stream *st,
			  struct ag_error **err)
{
	if (st->end != AG_STREAM_ENDED || st->stdout_truncated)
		return UNVERIFIED("study.selftest.incomplete",
				  "the self-test probe did not finish");
	json_t *v = json_loadb(st->out.buf, st->out.len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(v)) {
		json_decref(v);
		return UNVERIFIED("study.selftest.output", "the self-test probe printed no result");
	}
	json_decref(s->f->selftest);
	s->f->selftest = v;
	const char *gp = ag_json_str_or(json_object_get(v, "gateway_port"), "");
	const char *br = ag_json_str_or(json_object_get(v, "bridge"), "");
	const char *go = ag_json_str_or(json_object_get(v, "gateway_outbound"), "");
	const char *dn = ag_json_str_or(json_object_get(v, "dns"), "");
	bool br_ok = !strcmp(br, "unreachable") || !strcmp(br, "timeout");
	bool go_ok = !strcmp(go, "unreachable") || !strcmp(go, "timeout");
	const char *df = ag_json_str_or(json_object_get(v, "dns_forward"), "");
	/* No answer from anywhere, or the probe's own marker back from the
	 * only forward target it may have: the container's loopback, where
	 * the probe caught the unique name (agentguard-probe.c). */
	bool dn_ok = !strcmp(dn, "no_answer") || !strcmp(dn, "servfail") ||
		     !strcmp(dn, "refused") || (!strcmp(dn, "loopback") && !strcmp(df, "caught"));
	/* Each "no answer" waited 20x a control measured in the same probe:
	 * without the controls it proves nothing (agentguard-probe.c). */
	bool ctl_ok = !strcmp(ag_json_str_or(json_object_get(v, "dns_control"), ""), "answered");
	if (strcmp(gp, "open") != 0)
		return UNVERIFIED("study.selftest.gateway_port",
				  "the gateway does not answer on its port from the study network");
	if (!ctl_ok)
		return UNVERIFIED(
		    "study.selftest.control",
		    "the embedded resolver did not answer the self-test's control lookup");
	if (!br_ok)
		return UNVERIFIED(
		    "study.selftest.bridge_reachable",
		    "the host answers on the study bridge (it has an IPv4 address there)");
	if (!go_ok)
		return UNVERIFIED("study.selftest.outbound_reachable",
				  "the gateway's outbound address is reachable directly from the "
				  "study network");
	if (!dn_ok)
		return UNVERIFIED(
		    "study.selftest.dns_answered",
		    "the embedded resolver answered a unique name from the study network");
	return 0;
}

/*
 * Ends the self-test whatever happened (RC: the run's verdict so far): the
 * probe's entry torn down (by id, or after a lost create answer by the
 * run's label and its name; a probe still running is killed, which ends
 * its stream), its thread joined, then, when RC is 0, its line judged.
 */
static int selftest_end(struct ag_study *s, struct ag_engine *eng, struct selftest *t, int rc,
			struct ag_error **err)
{
	if (t->threaded) {
		if (rc < 0 && t->pe)
			ag_ledger_entry_teardown(s->l, eng, t->pe);
		pthread_join(t->th, NULL);
		t->threaded = false;
		if (rc == 0 && t->rc < 0) {
			*err = t->err;
			t->err = NULL;
			rc = -1;
		}
	}
	if (rc == 0)
		rc = selftest_judge(s, &t->st, err);
	if (t->pe)
		ag_ledger_entry_teardown(s->l, eng, t->pe);
	if (rc == 0 && (!t->pe || !ag_cleanup_state_complete(t->pe->cleanup.state)))
		rc = UNVERIFIED("study.selftest.cleanup", "the self-test probe was not removed");
	ag_error_free(t->err);
	ag_engine_stream_release(&t->st);
	if (t->eng_ok)
		ag_engine_close(&t->eng);
	return rc;
}

/* ---- hooks ---- */

/* IPv4 blocks in use: the host's routes, the engine's networks. */
struct blocks {
	struct {
		uint32_t net;
		int prefix;
	} b[AG_STUDY_HOST_ROUTES_MAX + AG_STUDY_ENGINE_NETWORKS_MAX];
	size_t n;
};

static bool blocks_overlap(const struct blocks *u, uint32_t net, int prefix)
{
	for (size_t i = 0; i < u->n; i++)
		if (ag_egress_subnets_overlap(u->b[i].net, u->b[i].prefix, net, prefix))
			return true;
	return false;
}

/* Every non-default IPv4 route of /proc/net/route, at most
 * AG_STUDY_HOST_ROUTES_MAX of them (more: study.host.routes). */
static int host_routes(struct blocks *u, struct ag_error **err)
{
	FILE *f = fopen("/proc/net/route", "re");
	if (!f)
		return UNVERIFIED("study.host.routes", "the host's IPv4 routes cannot be read");
	char line[256];
	int n = 0;
	while (fgets(line, sizeof(line), f) && n++ < AG_STUDY_HOST_ROUTES_MAX) {
		char ifn[32];
		unsigned dst, gw, flags, mask;
		if (sscanf(line, "%31s %x %x %x %*s %*s %*s %x", ifn, &dst, &gw, &flags, &mask) !=
			5 ||
		    mask == 0)
			continue; /* the header, or the default route */
		/* little-endian hex as the kernel prints it */
		uint32_t m = ntohl(mask);
		int pf = 0;
		while (pf < 32 && (m & (0x80000000u >> pf)))
			pf++;
		u->b[u->n].net = ntohl(dst);
		u->b[u->n++].prefix = pf;
	}
	fclose(f);
	if (n > AG_STUDY_HOST_ROUTES_MAX)
		return UNVERIFIED("study.host.routes",
				  "the host has more routes than AgentGuard reads");
	return 0;
}

/* Every IPv4 subnet of the engine's networks (GET /networks), at most
 * AG_STUDY_ENGINE_NETWORKS_MAX of them (more: study.subnet.networks). */
static int engine_subnets(struct ag_engine *eng, struct blocks *u, struct ag_error **err)
{
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	json_t *v = NULL;
	int rc = -1;
	size_t from_engine = 0;
	if (ag_engine_call(eng, "GET", "/networks", NULL, CTL, AG_PF_JSON_MAX_BYTES, &r, err) < 0 ||
	    ag_engine_status_error(&r, "list the networks", err) < 0 ||
	    ag_docker_json_parse(r.body.buf, r.body.len, false, NULL, 0, &v, err) < 0)
		goto out;
	if (!json_is_array(v)) {
		rc = UNVERIFIED("study.subnet.networks", "the engine's network list is not a list");
		goto out;
	}
	size_t i;
	json_t *net;
	json_array_foreach(v, i, net)
	{
		const json_t *cfg = ag_json_path(net, "IPAM.Config");
		for (size_t k = 0; k < json_array_size(cfg); k++) {
			const json_t *c = json_array_get(cfg, k);
			uint32_t a;
			int pf;
			const char *sub = ag_json_str_or(json_object_get(c, "Subnet"), "");
			if (!strchr(sub, '.') || ag_egress_subnet_parse(sub, &a, &pf) < 0)
				continue; /* IPv6, or none */
			if (u->n >= AG_ARRAY_SIZE(u->b) ||
			    ++from_engine > AG_STUDY_ENGINE_NETWORKS_MAX) {
				rc = UNVERIFIED(
				    "study.subnet.networks",
				    "the engine has more networks than AgentGuard reads");
				goto out;
			}
			u->b[u->n].net = a;
			u->b[u->n++].prefix = pf;
		}
	}
	rc = 0;
out:
	json_decref(v);
	ag_engine_reply_release(&r);
	return rc;
}

/* s->subnet: NET/PF in its normalised form (what the plan and the summary use). */
static void set_subnet(struct ag_study *s, uint32_t net, int pf)
{
	struct in_addr a = {.s_addr = htonl(net)};
	char txt[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &a, txt, sizeof(txt));
	snprintf(s->subnet, sizeof(s->subnet), "%s/%d", txt, pf);
}

/*
 * The study subnet, before anything is created. Given (--study-subnet,
 * study_egress.study_subnet): it, and the block after it when AgentGuard
 * creates the outbound network, must overlap no network of the engine and
 * no non-default host route (study.subnet.in_use, with the fix). G2: a
 * study network has no host address, so the host keeps whatever route it
 * had for that block, and a study subnet (or AgentGuard's own outbound
 * block) inside a block the host routes would shadow real destinations for
 * the gateway. Not given: the first free /26 pair
 * (an aligned /25: the study /26, then the outbound /26) of
 * AG_STUDY_AUTO_POOL, scanned from a point the run's suffix picks, so
 * concurrent runs rarely try the same one (two that do: the engine refuses
 * the second network's create, exit 6).
 */
/*
 * The machine-wide subnet lock (AG_STUDY_SUBNET_LOCK_PATH): taken before
 * the engine's networks are read, released once the study's networks exist
 * (or the setup failed), so a second run's choice sees the first's
 * networks. Only flock(2) is used on it, never its content; it is opened
 * without following a link and must be a regular file. A machine without
 * the directory runs unlocked (two runs may then pick the same subnet, and
 * the engine refuses the second's network). Waiting is bounded.
 */
static int subnet_lock(struct ag_study *s, struct ag_error **err)
{
	/* O_NONBLOCK: a FIFO planted there cannot hold the open. */
	const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = -1, e = 0;
	for (int i = 0; i < 3 && fd < 0; i++) {
		fd = open(AG_STUDY_SUBNET_LOCK_PATH, flags);
		if (fd < 0 && errno == ENOENT) {
			fd = open(AG_STUDY_SUBNET_LOCK_PATH, flags | O_CREAT | O_EXCL, 0644);
			if (fd >= 0)
				(void)fchmod(fd,
					     0644); /* readable by every user, whatever the umask */
		}
		e = fd < 0 ? errno : 0;
		if (fd < 0 && e != EEXIST && e != ENOENT)
			break;
	}
	struct stat st;
	if (fd < 0 && e == ENOENT)
		return 0; /* no lock directory on this machine: unlocked */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return ag_err(err, AG_E_UNVERIFIED, 0, "study.subnet.lock",
			      "the study subnet lock %s cannot be opened as a regular file (%s)",
			      AG_STUDY_SUBNET_LOCK_PATH,
			      fd < 0 ? strerror(e) : "not a regular file");
	}
	for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 50) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= AG_STUDY_SUBNET_LOCK_WAIT_MS) {
			close(fd);
			return ag_err(err, AG_E_DOCKER, 0, "study.subnet.lock_busy",
				      "another study held the subnet lock for over %d s",
				      AG_STUDY_SUBNET_LOCK_WAIT_MS / 1000);
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	s->subnet_lock = fd;
	return 0;
}

static void subnet_unlock(struct ag_study *s)
{
	if (s->subnet_lock >= 0)
		close(s->subnet_lock); /* releases the flock */
	s->subnet_lock = -1;
}

/* A pool cut into blocks of bpf bits, taken in aligned pairs (study, then
 * outbound): `pairs` of them from `base`. */
struct pool_geometry {
	uint32_t base, bsize, pairs;
	int bpf;
};

static int pool_geometry(const char *pool_txt, struct pool_geometry *g, struct ag_error **err)
{
	uint32_t pool;
	int pool_pf;
	if (ag_egress_subnet_parse(pool_txt, &pool, &pool_pf) < 0 ||
	    pool_pf < AG_STUDY_POOL_PREFIX_MIN || pool_pf > AG_STUDY_POOL_PREFIX_MAX)
		return ag_err(err, AG_E_CONFIG, 0, "study.subnet.pool",
			      "the subnet pool must be an IPv4 network A.B.C.D/N with N in %d..%d",
			      AG_STUDY_POOL_PREFIX_MIN, AG_STUDY_POOL_PREFIX_MAX);
	int bpf = pool_pf + 2 > AG_STUDY_AUTO_PREFIX ? pool_pf + 2 : AG_STUDY_AUTO_PREFIX;
	if (bpf > AG_STUDY_SUBNET_PREFIX_MAX)
		bpf = AG_STUDY_SUBNET_PREFIX_MAX;
	g->bpf = bpf;
	g->bsize = 1u << (32 - bpf);
	g->pairs = 1u << (bpf - 1 - pool_pf);
	g->base = pool & ~(0xffffffffu >> pool_pf);
	return 0;
}

static uint32_t pool_pair(const struct pool_geometry *g, uint32_t i)
{
	return g->base + i * 2u * g->bsize;
}

static bool pair_free(const struct blocks *u, const struct pool_geometry *g, uint32_t net,
		      bool own_out)
{
	return !blocks_overlap(u, net, g->bpf) &&
	       (!own_out || !blocks_overlap(u, net + g->bsize, g->bpf));
}

static int choose_subnet(struct ag_study *s, struct ag_engine *eng, struct ag_error **err)
{
	if (subnet_lock(s, err) < 0)
		return -1;
	_cleanup_free_ struct blocks *u = ag_xcalloc(1, sizeof(*u));
	if (host_routes(u, err) < 0 || engine_subnets(eng, u, err) < 0)
		return -1;
	bool own_out = !s->o.outbound_network;
	uint32_t net;
	int pf;
	if (s->o.study_subnet) {
		if (ag_egress_subnet_parse(s->o.study_subnet, &net, &pf) < 0 ||
		    pf < AG_STUDY_SUBNET_PREFIX_MIN || pf > AG_STUDY_SUBNET_PREFIX_MAX ||
		    (uint64_t)net + 2 * ((uint64_t)1 << (32 - pf)) > ((uint64_t)1 << 32))
			return 0; /* the plan names the malformed subnet */
		uint32_t size = 1u << (32 - pf);
		if (blocks_overlap(u, net, pf) || (own_out && blocks_overlap(u, net + size, pf)))
			return ag_err(
			    err, AG_E_UNVERIFIED, 0, "study.subnet.in_use",
			    "the study subnet %s%s is used by a network of the engine or a route "
			    "of the host; give a free one with --study-subnet (or "
			    "study_egress.study_subnet), or leave it out to have one chosen",
			    s->o.study_subnet,
			    own_out ? " (or the block after it, for the outbound)" : "");
		set_subnet(s, net, pf);
		return 0;
	}
	const char *pool_txt = s->o.subnet_pool ? s->o.subnet_pool : AG_STUDY_AUTO_POOL;
	struct pool_geometry g;
	if (pool_geometry(pool_txt, &g, err) < 0)
		return -1;
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(s->suffix, strlen(s->suffix), hex);
	unsigned start = 0;
	(void)sscanf(hex, "%8x", &start);
	start %= g.pairs;
	for (uint32_t i = 0; i < g.pairs; i++) {
		net = pool_pair(&g, (start + i) % g.pairs);
		if (pair_free(u, &g, net, own_out)) {
			set_subnet(s, net, g.bpf);
			return 0;
		}
	}
	return ag_err(err, AG_E_UNVERIFIED, 0, "study.subnet.exhausted",
		      "no free /%d pair is left in %s (the engine's networks and the host's "
		      "routes use them); remove unused networks, widen "
		      "study_egress.subnet_pool, or give a free subnet with --study-subnet "
		      "(or study_egress.study_subnet)",
		      g.bpf, pool_txt);
}

int ag_study_pool_space(struct ag_engine *eng, const char *pool, bool own_outbound,
			struct ag_study_pool_space *out, struct ag_error **err)
{
	struct pool_geometry g;
	*out = (struct ag_study_pool_space){0};
	if (pool_geometry(pool ? pool : AG_STUDY_AUTO_POOL, &g, err) < 0)
		return -1;
	_cleanup_free_ struct blocks *u = ag_xcalloc(1, sizeof(*u));
	if (host_routes(u, err) < 0 || engine_subnets(eng, u, err) < 0)
		return -1;
	out->pairs = g.pairs;
	out->prefix = g.bpf;
	for (uint32_t i = 0; i < g.pairs; i++)
		if (pair_free(u, &g, pool_pair(&g, i), own_outbound))
			out->free_pairs++;
	return 0;
}

/* G8: with br_netfilter off, bridged traffic skips the FORWARD isolation a
 * gateway's ip_forward=0 leans on. The host must say 1. */
static int host_bridge_nf(struct ag_error **err)
{
	char b[8] = {0};
	int fd =
	    open("/proc/sys/net/bridge/bridge-nf-call-iptables", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 1 || b[0] != '1' || (n > 1 && b[1] != '\n'))
		return UNVERIFIED("study.host.bridge_nf_call_iptables",
				  "the host does not show net.bridge.bridge-nf-call-iptables=1");
	return 0;
}

static int write_policy(struct ag_study *s, int dirfd, struct ag_error **err)
{
	json_t *pj = ag_egress_policy_json(s->o.policy);
	char *txt = NULL;
	size_t n = 0;
	int rc = ag_canon_dump(pj, &ag_canon_artifact_bounds, &txt, &n, err);
	json_decref(pj);
	if (rc == 0)
		rc = ag_write_file_atomic_at(dirfd, AG_STUDY_POLICY_FILE, AG_STUDY_POLICY_FILE, txt,
					     n, 0640, true, err);
	free(txt);
	return rc;
}

/*
 * The host's own addresses that some policy rule could ever approve
 * (global or documentation range: every other class is refused by the
 * decision table anyway), for the gateway's --host-address. Read from the
 * host's interfaces at trial start; never recorded anywhere but the
 * gateway's argv. More than the bound fails closed.
 */
static int host_addresses(struct ag_strv *out, struct ag_error **err)
{
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs) < 0)
		return ag_err(err, AG_E_IO, errno, "study.host_addresses",
			      "cannot read the host's own addresses");
	int rc = 0;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr ||
		    (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		struct ag_egress_addr a = {0};
		if (i->ifa_addr->sa_family == AF_INET) {
			a.family = 4;
			memcpy(a.b, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
		} else {
			a.family = 6;
			memcpy(a.b, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
		}
		a = ag_egress_addr_unmap(&a);
		enum ag_addr_class c = ag_egress_classify(&a);
		if (c != AG_ADDR_GLOBAL && c != AG_ADDR_DOCUMENTATION)
			continue;
		char text[AG_EGRESS_ADDR_TEXT_MAX];
		ag_egress_addr_format(&a, text);
		bool seen = false;
		for (size_t k = 0; k < out->n && !seen; k++)
			seen = strcmp(out->v[k], text) == 0;
		if (seen)
			continue;
		if (out->n + 2 >= AG_GW_HOST_ADDRS_MAX) {
			rc = ag_err(err, AG_E_CONFIG, 0, "study.host_addresses",
				    "the host has more than %d addresses the gateway must refuse",
				    AG_GW_HOST_ADDRS_MAX - 2);
			break;
		}
		ag_strv_push(out, text);
	}
	freeifaddrs(ifs);
	return rc;
}

/* A new empty file the gateway (in the invoking user's group) may write. */
static int empty_evidence_file(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0660);
	if (fd < 0)
		return -1;
	int rc = fchmod(fd, 0660);
	close(fd);
	return rc;
}

static int setup(struct ag_study *s, struct ag_engine *eng, int run_fd, const char *run_dir_abs,
		 const char *suffix, struct ag_error **err);

/* The topology; the subnet lock, if still held (a failure before both
 * networks existed), is released on the way out. */
static int h_setup(void *data, struct ag_engine *eng, int run_fd, const char *run_dir_abs,
		   const char *suffix, struct ag_error **err)
{
	struct ag_study *s = data;
	int rc = setup(s, eng, run_fd, run_dir_abs, suffix, err);
	subnet_unlock(s);
	return rc;
}

static int setup(struct ag_study *s, struct ag_engine *eng, int run_fd, const char *run_dir_abs,
		 const char *suffix, struct ag_error **err)
{
	s->suffix = ag_xstrdup(suffix);
	const char *slash = strrchr(run_dir_abs, '/');
	s->run_id = ag_xstrdup(slash ? slash + 1 : run_dir_abs);
	snprintf(s->names_base, sizeof(s->names_base), "agentguard-%s", suffix);
	/* The gateway writes its stream and aggregates into the two empty
	 * files made here, bound one by one into its container, as its own
	 * user through the invoking user's group; it cannot create a file,
	 * nor grow one past its stream's bound (the plan's fsize limit). */
	if (mkdirat(run_fd, AG_STUDY_DIR, 0750) < 0)
		return ag_err(err, AG_E_IO, errno, "study.evidence_dir",
			      "cannot create the study's evidence directory");
	int dfd = openat(run_fd, AG_STUDY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fchmod(dfd, 0750) < 0 || write_policy(s, dfd, err) < 0 ||
	    empty_evidence_file(dfd, AG_STUDY_EVENTS_FILE) < 0 ||
	    empty_evidence_file(dfd, AG_STUDY_AGGREGATES_FILE) < 0 ||
	    (s->o.inject && ag_study_inject_write(s->o.inject, dfd, s->o.evidence_gid, err) < 0)) {
		if (dfd >= 0)
			close(dfd);
		return *err ? -1
			    : ag_err(err, AG_E_IO, errno, "study.evidence_dir",
				     "cannot prepare the study's evidence directory");
	}
	close(dfd);
	s->evidence_dir = ag_xasprintf("%s/%s", run_dir_abs, AG_STUDY_DIR);

	if (choose_subnet(s, eng, err) < 0)
		return -1;
	if (s->subnet[0])
		s->f->study_subnet = s->subnet;
	/* the host's own addresses: the gateway never connects to them */
	struct ag_strv host = {0};
	if (host_addresses(&host, err) < 0) {
		ag_strv_release(&host);
		return -1;
	}
	/* the plan: both images pinned and different, the topology's invariants */
	const struct ag_egress_plan_inputs in = {
	    .config = s->o.cfg,
	    .policy = s->o.policy,
	    .trial_id = s->o.trial_id,
	    .gateway_image = s->o.gateway_image,
	    .resolver = s->o.resolver,
	    .study_subnet = s->subnet[0] ? s->subnet : s->o.study_subnet,
	    .outbound_network = s->o.outbound_network,
	    .evidence_host_path = s->evidence_dir,
	    .evidence_group = s->o.evidence_gid,
	    .outbound_internal = s->o.outbound_internal,
	    .names_base = s->names_base,
	    .run_label_key = AG_RUN_ID_LABEL,
	    .run_label_value = s->suffix,
	    .command = (const char *const[]){"true"},
	    .n_command = 1,
	    .host_addresses = (const char *const *)host.v,
	    .n_host_addresses = host.n,
	};
	_cleanup_free_ char *agent_ca = NULL, *up_ca = NULL;
	const char *placeholders[AG_EGRESS_INJECT_MAX];
	struct ag_egress_plan_inputs inj = in;
	if (s->o.inject) {
		agent_ca = ag_xasprintf("%s/%s", s->evidence_dir, AG_STUDY_CA_FILE);
		if (s->o.inject->test_upstream_ca)
			up_ca = ag_xasprintf("%s/upstream-ca.pem", s->evidence_dir);
		for (size_t i = 0; i < s->o.inject->n; i++)
			placeholders[i] = s->o.inject->e[i].env;
		inj.inject_host_path = s->o.inject->file;
		inj.upstream_ca_host_path = up_ca;
		inj.agent_ca_host_path = agent_ca;
		inj.placeholders = placeholders;
		inj.n_placeholders = s->o.inject->n;
	}
	s->plan_built = true;
	int built = ag_egress_plan_build(&inj, &s->plan, err);
	ag_strv_release(&host);
	if (built < 0)
		return -1;
	/* what the study adds to the agent's environment, by name (never a
	 * value), and where the gateway terminates TLS */
	json_t *names = json_array();
	for (size_t i = 0; i < s->plan.agent_env.n; i++) {
		const char *e = s->plan.agent_env.v[i];
		json_array_append_new(names, json_stringn(e, strcspn(e, "=")));
	}
	json_decref(s->f->env_additions);
	s->f->env_additions = names;
	if (s->o.inject) {
		json_t *ph = json_array();
		for (size_t i = 0; i < s->o.inject->n; i++)
			json_array_append_new(
			    ph, json_string(s->o.inject->e[i].rule->inject->placeholder_env));
		json_decref(s->f->injection);
		s->f->injection =
		    json_pack("{s:o, s:s, s:o}", "tls_terminated",
			      ag_egress_policy_terminated_json(s->o.policy), "trial_ca_sha256",
			      s->o.inject->ca.cert_sha256, "placeholder_names", ph);
	}
	json_t *pj = NULL;
	if (ag_egress_plan_json(&s->plan, &pj, err) < 0)
		return -1;
	snprintf(s->plan_digest, sizeof(s->plan_digest), "%s",
		 ag_json_str_or(json_object_get(pj, "plan_digest"), ""));
	json_decref(pj);
	(void)ag_egress_subnet_parse(s->plan.internal.subnet, &s->study_net, &s->study_prefix);
	const struct ag_egress_plan *p = &s->plan;
	struct ag_ledger_entry *e = NULL;
	/* every study object: our owner label and the run's (the ledger's own) */
	s->expect[0] = (struct ag_label_expect){"agentguard.owner", AG_EGRESS_OWNER};
	s->expect[1] = (struct ag_label_expect){s->l->key, s->l->value};

	/* the host fact the topology rests on, then the images: local, never
	 * pulled, different */
	if (host_bridge_nf(err) < 0)
		return -1;
	if (ag_verify_root_file(s->o.probe_path, &s->probe_bin, err) < 0 ||
	    image_facts(eng, s->o.gateway_image, &s->gw_image_id, &s->gw_platform, true, err) < 0 ||
	    image_facts(eng, s->o.cfg->sandbox.image, &s->agent_image_id, NULL, false, err) < 0)
		return -1;
	if (strcmp(s->gw_image_id, s->agent_image_id) == 0)
		return UNVERIFIED("study.gateway_image.same_as_agent",
				  "the gateway image is the agent's image (same image id)");

	/* the outbound network: the operator's (inspected only) or our own */
	if (p->outbound.existing) {
		json_t *v = NULL;
		int lr = ag_network_lookup(eng, p->outbound.name, CTL, &v);
		if (lr != 0)
			return UNVERIFIED(lr == 1 ? "study.outbound.absent"
						  : "study.outbound.inspect",
					  "the outbound network %s",
					  lr == 1 ? "does not exist" : "could not be inspected");
		int rc = outbound_check(s, v, err);
		const char *id = ag_json_path_str(v, "Id");
		if (rc == 0 && !ag_is_container_id(id))
			rc = UNVERIFIED("study.outbound.inspect", "the outbound network has no id");
		if (rc == 0)
			s->out_existing_id = ag_xstrdup(id);
		json_decref(v);
		if (rc < 0)
			return -1;
	}
	if (!p->outbound.existing) {
		const struct ag_network_spec ns = {
		    p->outbound.name,	p->outbound.internal, false,
		    p->outbound.subnet, p->outbound.labels,   p->outbound.n_labels};
		if (study_object(s, eng, AG_RUN_ROLE_OUTBOUND_NETWORK, p->outbound.name, NULL, &ns,
				 &e, err) < 0)
			return -1;
	}
	const struct ag_network_spec ss = {
	    p->internal.name,	 true, true, p->internal.subnet, p->internal.labels,
	    p->internal.n_labels};
	int made =
	    study_object(s, eng, AG_RUN_ROLE_STUDY_NETWORK, p->internal.name, NULL, &ss, &e, err);
	subnet_unlock(s); /* both networks exist now: others see them */
	if (made < 0)
		return -1;

	/* the gateway: created at its fixed study address, connected, started;
	 * its teardown stops it gracefully first (SIGTERM: its stream completes) */
	if (study_object(s, eng, AG_RUN_ROLE_GATEWAY, p->gateway_name, &p->gateway.exec, NULL, &e,
			 err) < 0)
		return -1;
	e->stop_grace_ms = AG_STUDY_GATEWAY_STOP_SECS * 1000;
	const char *out_ip = p->gateway_outbound_ip[0] ? p->gateway_outbound_ip : NULL;
	if (ag_network_connect(eng, out_net_id(s), e->id, out_ip, CTL, err) < 0)
		return -1;

	/* The self-tests: beside the gateway's start when its outbound address
	 * is already known, else after it (selftest_create). */
	struct selftest t = {.rc = 0};
	ag_engine_stream_init(&t.st);
	int rc = 0;
	if (out_ip) {
		snprintf(s->gw_out_ip, sizeof(s->gw_out_ip), "%s", out_ip);
		rc = selftest_create(s, eng, &t, err) < 0 || selftest_spawn(eng, &t, err) < 0 ? -1
											      : 0;
	}
	if (rc == 0 && ag_ledger_entry_start(s->l, eng, e, "start the gateway", err) < 0)
		rc = -1;
	if (rc == 0)
		s->f->gateway_state = "running";
	/* every inspection assertion */
	if (rc == 0 && (gateway_check(s, eng, err) < 0 ||
			study_network_check(s, eng, true, t.pe ? t.pe->id : NULL, err) < 0 ||
			outbound_members_check(s, eng, NULL, err) < 0))
		rc = -1;
	if (rc == 0 && !out_ip &&
	    (selftest_create(s, eng, &t, err) < 0 || selftest_run(eng, &t, err) < 0))
		rc = -1;
	if (selftest_end(s, eng, &t, rc, err) < 0)
		return -1;
	/* the gateway answers on its port: it has read its inject file, which
	 * leaves the host's tmpfs now (the CA key and the credentials then live
	 * in the gateway's memory only) */
	ag_study_inject_unlink(s->o.inject);
	s->f->setup_done = true;
	return 0;
}

static int h_agent_spec(void *data, struct ag_exec_spec *spec, struct ag_error **err)
{
	struct ag_study *s = data;
	(void)err;
	ag_strv_release(&s->agent_env);
	for (size_t i = 0; i < spec->n_env; i++)
		ag_strv_push(&s->agent_env, spec->env[i]);
	for (size_t i = 0; i < s->plan.agent_env.n; i++)
		ag_strv_push(&s->agent_env, s->plan.agent_env.v[i]);
	spec->env = (const char *const *)ag_strv_argv(&s->agent_env);
	spec->n_env = s->agent_env.n;
	spec->ca_host_path = s->plan.agent.exec.ca_host_path;
	ag_egress_plan_agent_network(&s->plan, spec);
	return ag_exec_spec_validate(spec, err);
}

static const char *h_agent_network(void *data)
{
	struct ag_study *s = data;
	return s->plan.internal.name;
}

static int h_verify(void *data, struct ag_engine *eng, const char *agent_id, struct ag_error **err)
{
	struct ag_study *s = data;
	/* The agent's own controls (its networks, DNS, sysctls included) were
	 * judged against its spec right after create; here: the networks. */
	if (study_network_check(s, eng, true, NULL, err) < 0 ||
	    outbound_members_check(s, eng, agent_id, err) < 0)
		return -1;
	json_t *g = NULL;
	bool running = gateway_id(s) && ag_container_lookup(eng, gateway_id(s), CTL, &g) == 0 &&
		       json_is_true(ag_json_path(g, "State.Running"));
	json_decref(g);
	if (!running)
		return UNVERIFIED("study.gateway.not_running",
				  "the gateway stopped before the agent started");
	s->f->verified = true;
	return 0;
}

/*
 * What became of the gateway, from its ledger entry after the teardown
 * (which stopped it with SIGTERM first): never created or never started,
 * running until we stopped it, or gone before we asked (died mid-trial).
 */
static void gateway_outcome(struct ag_study *s)
{
	const struct ag_ledger_entry *gw = ag_ledger_find(s->l, AG_RUN_ROLE_GATEWAY);
	if (!gw || !gw->id)
		s->f->gateway_state = "not_started";
	else if (!gw->stop.was_running)
		s->f->gateway_state = s->f->gateway_state ? "crashed" : "not_started";
}

/* Every study object the ledger holds was removed (or never made). */
static bool objects_gone(const struct ag_study *s)
{
	static const char *const roles[] = {AG_RUN_ROLE_GATEWAY, AG_RUN_ROLE_STUDY_PROBE,
					    AG_RUN_ROLE_STUDY_NETWORK,
					    AG_RUN_ROLE_OUTBOUND_NETWORK};
	for (size_t i = 0; i < AG_ARRAY_SIZE(roles); i++) {
		const struct ag_ledger_entry *e = ag_ledger_find(s->l, roles[i]);
		if (e && !ag_cleanup_state_complete(e->cleanup.state))
			return false;
	}
	return true;
}

/* Absence verified for the object with ROLE (true when never made). */
static bool object_live_verified(const struct ag_study *s, const char *role)
{
	const struct ag_ledger_entry *e = ag_ledger_find(s->l, role);
	return !e || e->cleanup.liveness_verified;
}

json_t *ag_study_stream_parse(const char *buf, size_t len, const char *trial_id,
			      const char *policy_digest, struct ag_study_stream *out)
{
	*out = (struct ag_study_stream){0};
	json_t *events = json_array();
	bool started = false, ended = false, complete = false, bad = false;
	int64_t decisions = 0, said = -1;
	for (const char *line = buf, *nl; line < buf + len && !bad; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl) {
			bad = true; /* a last line cut short */
			break;
		}
		json_t *r = json_loadb(line, (size_t)(nl - line), JSON_REJECT_DUPLICATES, NULL);
		const char *kind = ag_json_str_or(json_object_get(r, "record"), "");
		if (ended || !json_is_object(r)) {
			bad = true; /* nothing may follow the end line */
		} else if (!started) {
			started =
			    !strcmp(kind, "start") &&
			    !strcmp(ag_json_str_or(json_object_get(r, "trial_id"), ""), trial_id) &&
			    !strcmp(ag_json_str_or(json_object_get(r, "policy_digest"), ""),
				    policy_digest);
			bad = !started;
		} else if (!strcmp(kind, "decision")) {
			decisions++;
			json_t *ev = json_object_get(r, "event");
			const char *dec = ag_json_str_or(ag_json_path(r, "decision.decision"), "");
			if (!strcmp(dec, "deny"))
				out->denied++;
			if (json_is_object(ev) &&
			    json_array_size(events) < AG_STUDY_STREAM_MAX_RECORDS)
				json_array_append(events, ev);
			else
				out->truncated = true;
		} else if (!strcmp(kind, "end")) {
			ended = true;
			complete = json_is_true(json_object_get(r, "complete"));
			const json_t *so = json_object_get(r, "sampled_out");
			out->sampled_out = json_is_integer(so) && json_integer_value(so) >= 0
					       ? json_integer_value(so)
					       : 0;
			const json_t *n = json_object_get(r, "records");
			said = json_is_integer(n) ? json_integer_value(n) : -1;
		} else {
			bad = true;
		}
		json_decref(r);
	}
	out->events = (size_t)decisions;
	out->complete = started && ended && complete && !bad && said == decisions;
	return events;
}

/* An integer member of O within 0..AG_EGRESS_EVENT_BYTES_MAX (any sum of
 * the file's 129 lines stays far from overflow), or -1. */
static int64_t count_of(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
		       json_integer_value(v) <= AG_EGRESS_EVENT_BYTES_MAX
		   ? json_integer_value(v)
		   : -1;
}

/* One key line of the aggregates as the manifest's key, or NULL. */
static json_t *aggregate_key(const json_t *r)
{
	const char *dec = ag_json_str_or(json_object_get(r, "decision"), "");
	const json_t *host = json_object_get(r, "host"), *reason = json_object_get(r, "reason");
	int64_t port = count_of(r, "port"), n = count_of(r, "requests");
	int64_t in = count_of(r, "bytes_in"), out = count_of(r, "bytes_out");
	if (strcmp(ag_json_str_or(json_object_get(r, "record"), ""), "aggregate") ||
	    (strcmp(dec, "allow") && strcmp(dec, "deny")) || !json_is_string(host) ||
	    !json_is_string(reason) || port < 0 || port > 65535 || n < 1 || in < 0 || out < 0 ||
	    json_object_size(r) != 8)
		return NULL;
	return json_pack("{s:s, s:O, s:I, s:O, s:I, s:I, s:I}", "decision", dec, "host", host,
			 "port", (json_int_t)port, "reason", reason, "requests", (json_int_t)n,
			 "bytes_in", (json_int_t)in, "bytes_out", (json_int_t)out);
}

json_t *ag_study_aggregates_parse(const char *buf, size_t len, struct ag_study_aggs *out)
{
	*out = (struct ag_study_aggs){0};
	json_t *keys = json_array(), *ov = NULL;
	bool bad = false;
	int64_t said = -1, lines = 0;
	for (const char *line = buf, *nl; line < buf + len && !bad; line = nl + 1, lines++) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl || lines > AG_GW_AGG_KEYS_MAX) {
			bad = true;
			break;
		}
		json_t *r = json_loadb(line, (size_t)(nl - line), JSON_REJECT_DUPLICATES, NULL);
		if (lines == 0) {
			const json_t *o = json_object_get(r, "overflow");
			said = count_of(r, "keys");
			int64_t v[4] = {count_of(o, "requests_allowed"),
					count_of(o, "requests_denied"), count_of(o, "bytes_in"),
					count_of(o, "bytes_out")};
			bad = strcmp(ag_json_str_or(json_object_get(r, "record"), ""),
				     "aggregates") ||
			      said < 0 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 ||
			      !json_is_true(json_object_get(r, "complete"));
			if (!bad) {
				ov = json_pack("{s:I, s:I, s:I, s:I}", "requests_allowed",
					       (json_int_t)v[0], "requests_denied",
					       (json_int_t)v[1], "bytes_in", (json_int_t)v[2],
					       "bytes_out", (json_int_t)v[3]);
				out->requests += v[0] + v[1];
				out->denied += v[1];
			}
		} else {
			json_t *k = aggregate_key(r);
			bad = !k;
			if (k) {
				out->requests += json_integer_value(json_object_get(k, "requests"));
				if (!strcmp(json_string_value(json_object_get(k, "decision")),
					    "deny"))
					out->denied +=
					    json_integer_value(json_object_get(k, "requests"));
				json_array_append_new(keys, k);
			}
		}
		json_decref(r);
	}
	out->complete = !bad && ov && said == lines - 1;
	return json_pack("{s:o, s:o, s:b}", "keys", keys, "overflow",
			 ov ? ov
			    : json_pack("{s:i, s:i, s:i, s:i}", "requests_allowed", 0,
					"requests_denied", 0, "bytes_in", 0, "bytes_out", 0),
			 "complete", out->complete);
}

/* One string redacted: a new string when that changed it, else NULL. */
static json_t *redacted_string(const struct ag_redactor *r, const json_t *c)
{
	char *t = ag_redact(r, json_string_value(c), json_string_length(c), SIZE_MAX / 4, 0, NULL);
	json_t *n = strcmp(t, json_string_value(c)) != 0 ? json_string(t) : NULL;
	free(t);
	return n;
}

/* Every string under v (object values, array items) redacted in place;
 * true when one changed. */
static bool redact_strings(const struct ag_redactor *r, json_t *v, unsigned depth)
{
	bool changed = false;
	if (depth > AG_EGRESS_MANIFEST_MAX_DEPTH + 2)
		return false; /* deeper than any record: the manifest refuses it anyway */
	if (json_is_object(v)) {
		const char *k;
		json_t *c, *n;
		json_object_foreach(v, k, c)
		{
			if (!json_is_string(c))
				changed |= redact_strings(r, c, depth + 1);
			else if ((n = redacted_string(r, c)) != NULL) {
				json_object_set_new(v, k, n);
				changed = true;
			}
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *c = json_array_get(v, i), *n;
			if (!json_is_string(c))
				changed |= redact_strings(r, c, depth + 1);
			else if ((n = redacted_string(r, c)) != NULL) {
				json_array_set_new(v, i, n);
				changed = true;
			}
		}
	}
	return changed;
}

char *ag_study_stream_redact(const struct ag_redactor *red, const char *buf, size_t len,
			     size_t *out_len)
{
	/* The run's set, plus each secret lower-cased: the gateway records a
	 * host name the way DNS compares it, in lower case. */
	struct ag_redactor lr = AG_REDACTOR_INIT;
	const struct ag_redactor *r = &lr;
	for (size_t i = 0; red && i < red->secrets.n; i++) {
		ag_redactor_add_secret(&lr, red->secrets.v[i]);
		char *low = ag_xstrdup(red->secrets.v[i]);
		for (char *c = low; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		ag_redactor_add_secret(&lr, low);
		free(low);
	}
	for (size_t i = 0; red && i < red->roots.n; i++)
		ag_redactor_add_root(&lr, red->roots.v[i], red->roles.v[i]);
	struct ag_buf b = AG_BUF_INIT(SIZE_MAX / 2, NULL);
	struct ag_error *e = NULL;
	for (const char *line = buf; line < buf + len;) {
		const char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(buf + len - line);
		json_t *v = json_loadb(line, n, JSON_REJECT_DUPLICATES, NULL);
		char *t = NULL;
		if (json_is_object(v))
			t = redact_strings(r, v, 0)
				? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
				: ag_xstrndup(line, n); /* unchanged: the gateway's own bytes */
		if (!t)
			t = ag_redact(r, line, n, SIZE_MAX / 4, 0, NULL);
		json_decref(v);
		if (ag_buf_add(&b, t, strlen(t), &e) < 0 || (nl && ag_buf_add(&b, "\n", 1, &e) < 0))
			abort(); /* unreachable: the bound is the address space */
		free(t);
		line = nl ? nl + 1 : buf + len;
	}
	if (ag_buf_add(&b, "", 0, &e) < 0)
		abort();
	ag_redactor_release(&lr);
	return ag_buf_detach(&b, out_len);
}

/*
 * Reads one of the gateway's evidence files back (bounded, no link
 * followed), redacted; the file itself is replaced by its redacted form
 * when that differs. RAW_OK checks the bytes as the gateway wrote them.
 * Returns the redacted bytes (NULL: absent, unreadable or refused), and
 * records the SHA-256 and length of what stays on disk.
 */
static char *read_evidence(struct ag_study *s, int run_fd, const char *name,
			   const struct ag_read_reasons *why, size_t max,
			   bool (*raw_ok)(const char *, size_t), size_t *out_len,
			   struct ag_run_study_file *f)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct ag_error *e = NULL;
	_cleanup_free_ char *path = ag_xasprintf("%s/%s", AG_STUDY_DIR, name);
	if (ag_read_file_at(run_fd, path, name, max, why, &buf, &len, &e) < 0) {
		ag_error_free(e);
		return NULL;
	}
	if (len == 0) {
		/* made empty for the gateway, never written: no evidence to keep */
		(void)unlinkat(run_fd, path, 0);
		return NULL;
	}
	bool whole = !raw_ok || raw_ok(buf, len);
	size_t rlen = 0;
	char *red = whole ? ag_study_stream_redact(s->o.redact, buf, len, &rlen) : NULL;
	if (!whole || rlen != len || memcmp(red, buf, len) != 0) {
		/* the gateway is gone: nothing writes its directory any more */
		int dfd =
		    openat(run_fd, AG_STUDY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bool replaced =
		    whole && dfd >= 0 &&
		    ag_write_file_atomic_at(dfd, name, name, red, rlen, 0640, false, &e) == 0;
		if (!replaced) {
			/* not whole, or its redacted form cannot replace it: not evidence
			 * to trust or keep (it may hold agent-chosen hosts) */
			ag_error_free(e);
			if (dfd >= 0)
				(void)unlinkat(dfd, name, 0);
			free(red);
			red = NULL;
		}
		if (dfd >= 0)
			close(dfd);
		if (!red)
			return NULL;
	}
	f->present = true;
	f->bytes = (int64_t)rlen;
	ag_sha256_hex(red, rlen, f->sha256);
	*out_len = rlen;
	return red;
}

/* The aggregates file as written: whole slots, at most the bound. */
static bool aggregates_raw_ok(const char *buf, size_t len)
{
	return len >= AG_GW_AGG_SLOT && len % AG_GW_AGG_SLOT == 0 &&
	       len <= (size_t)(AG_GW_AGG_KEYS_MAX + 1) * AG_GW_AGG_SLOT && buf[len - 1] == '\n';
}

/* The gateway's stream and aggregates, read back: the stream's events (a
 * sample), the aggregates (*aggs, NULL when absent or not whole). */
static json_t *read_stream(struct ag_study *s, int run_fd, json_t **aggs)
{
	static const struct ag_read_reasons why = {
	    "study.stream.symlink", "study.stream.not_regular", "study.stream.missing",
	    "study.stream.too_large"};
	static const struct ag_read_reasons why_agg = {
	    "study.aggregates.symlink", "study.aggregates.not_regular", "study.aggregates.missing",
	    "study.aggregates.too_large"};
	*aggs = NULL;
	size_t alen = 0, rlen = 0;
	_cleanup_free_ char *abuf = read_evidence(s, run_fd, AG_STUDY_AGGREGATES_FILE, &why_agg,
						  (size_t)(AG_GW_AGG_KEYS_MAX + 1) * AG_GW_AGG_SLOT,
						  aggregates_raw_ok, &alen, &s->f->aggregates_file);
	struct ag_study_aggs sa = {0};
	/* A study gateway always writes them: none read means counts were
	 * lost, and the manifest must say so (complete: false). */
	*aggs = ag_study_aggregates_parse(abuf ? abuf : "", abuf ? alen : 0, &sa);
	s->f->events = (size_t)sa.requests;
	s->f->denied = (size_t)sa.denied;
	_cleanup_free_ char *red =
	    read_evidence(s, run_fd, AG_STUDY_EVENTS_FILE, &why, AG_STUDY_STREAM_MAX_BYTES, NULL,
			  &rlen, &s->f->stream_file);
	if (!red)
		return json_array();
	s->f->stream_read = true;
	struct ag_study_stream st;
	json_t *events = ag_study_stream_parse(red, rlen, s->o.trial_id, s->o.policy->digest, &st);
	s->f->sampled_out = st.sampled_out;
	s->f->stream_complete = st.complete;
	s->f->stream_truncated = st.truncated;
	return events;
}

static int write_manifest(struct ag_study *s, int run_fd, json_t *events, const json_t *aggs,
			  const char *fixture, const struct ag_cleanup_result *agent_cl,
			  struct ag_error **err)
{
	char profile[AG_SHA256_HEX_LEN + 1], fixture_hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(s->o.cfg->sandbox.image, strlen(s->o.cfg->sandbox.image), profile);
	if (fixture)
		snprintf(fixture_hex, sizeof(fixture_hex), "%s", fixture);
	else
		ag_sha256_hex("", 0, fixture_hex);
	json_t *id =
	    json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s}", "configured_reference",
		      s->o.gateway_image, "registry_digest",
		      s->gw_image_id ? s->o.gateway_image : NULL, "local_image_id", s->gw_image_id,
		      "container_bound_image_id", s->gw_bound_image_id, "platform", s->gw_platform,
		      "pull_policy", "never", "cache_status", s->gw_image_id ? "local" : "absent");
	bool live = agent_cl->liveness_verified && object_live_verified(s, AG_RUN_ROLE_GATEWAY) &&
		    object_live_verified(s, AG_RUN_ROLE_STUDY_NETWORK) &&
		    object_live_verified(s, AG_RUN_ROLE_OUTBOUND_NETWORK);
	const struct ag_egress_manifest_inputs in = {
	    .plan_digest = s->plan_digest[0] ? s->plan_digest : profile,
	    .profile_hash = profile,
	    .fixture_hash = fixture_hex,
	    .trial_id = s->o.trial_id,
	    .authorization_id = ag_egress_id_valid(s->run_id) ? s->run_id : s->o.trial_id,
	    .policy = s->o.policy,
	    .gateway_image_identity = id,
	    .events = events,
	    .aggregates = aggs,
	    .sampled_out = s->f->sampled_out,
	    .gateway_state = s->f->gateway_state ? s->f->gateway_state : "unknown",
	    .gateway_evidence_complete = s->f->stream_complete,
	    .gateway_evidence_truncated = s->f->stream_truncated,
	    .cleanup_agent = ag_study_cleanup_word(agent_cl),
	    .cleanup_gateway = ag_study_object_word(s->l, AG_RUN_ROLE_GATEWAY, "not_created"),
	    .cleanup_internal_network =
		ag_study_object_word(s->l, AG_RUN_ROLE_STUDY_NETWORK, "not_created"),
	    .cleanup_outbound_network =
		ag_study_object_word(s->l, AG_RUN_ROLE_OUTBOUND_NETWORK, "not_created"),
	    .liveness_verified = live,
	};
	json_t *m = NULL;
	char *txt = NULL;
	size_t n = 0;
	int rc = ag_egress_manifest_build(&in, &m, err);
	json_decref(id);
	if (rc == 0)
		rc = ag_egress_manifest_dump(m, &txt, &n, err);
	if (rc == 0) {
		struct ag_egress_completion c;
		ag_egress_manifest_completion(m, s->o.policy, &c);
		s->f->completion = c.status;
		s->f->completion_reason = c.reason;
		char *nl = ag_xasprintf("%s\n", txt);
		rc = ag_write_file_atomic_at(run_fd, AG_EGRESS_MANIFEST_FILE,
					     AG_EGRESS_MANIFEST_FILE, nl, n + 1, 0644, true, err);
		if (rc == 0) {
			ag_sha256_hex(nl, n + 1, s->f->manifest_sha);
			s->f->manifest_written = true;
		}
		free(nl);
	}
	free(txt);
	json_decref(m);
	return rc;
}

static int h_finish(void *data, int run_fd, const char *fixture,
		    const struct ag_cleanup_result *agent_cl, struct ag_error **err)
{
	struct ag_study *s = data;
	/* The run's ledger tore down the agent, then the gateway (SIGTERM
	 * first), then the networks, newest created first; here: what that
	 * showed. */
	gateway_outcome(s);
	s->f->cleanup_complete = objects_gone(s);

	/* The manifest is the record of a trial the agent could run in: only
	 * after the topology was proven (the artifact says why otherwise). */
	json_t *aggs = NULL;
	json_t *events = read_stream(s, run_fd, &aggs);
	int rc =
	    s->f->setup_done ? write_manifest(s, run_fd, events, aggs, fixture, agent_cl, err) : 0;
	json_decref(events);
	json_decref(aggs);
	if (rc < 0)
		return -1;
	/* CONTRACT: egress.failure_is_not_pass */
	if (!s->f->cleanup_complete)
		return ag_err(
		    err, AG_E_CLEANUP, 0, "study.cleanup_incomplete",
		    "a study object was not removed or its absence not verified "
		    "(gateway %s, study network %s, outbound network %s)",
		    ag_study_object_word(s->l, AG_RUN_ROLE_GATEWAY, "not_created"),
		    ag_study_object_word(s->l, AG_RUN_ROLE_STUDY_NETWORK, "not_created"),
		    ag_study_object_word(s->l, AG_RUN_ROLE_OUTBOUND_NETWORK, "not_created"));
	if (s->f->setup_done && s->f->completion && strcmp(s->f->completion, "complete") != 0)
		return ag_err(err, AG_E_UNVERIFIED, 0,
			      strcmp(s->f->completion, "failed") == 0 ? "study.egress_failed"
								      : "study.egress_incomplete",
			      "the egress manifest is %s (%s): the study does not pass",
			      s->f->completion, s->f->completion_reason);
	return 0;
}

/* The run record's study part: the requested facts, and where the observed go. */
static void h_bind(void *data, struct ag_run_study *st, struct ag_ledger *objects)
{
	struct ag_study *s = data;
	s->f = st;
	s->l = objects;
	st->present = true;
	st->trial_id = s->o.trial_id;
	st->policy_digest = s->o.policy->digest;
	st->gateway_image = s->o.gateway_image;
}

struct ag_study *ag_study_new(const struct ag_study_opts *o)
{
	struct ag_study *s = ag_xcalloc(1, sizeof(*s));
	s->subnet_lock = -1;
	s->o = *o;
	s->hooks = (struct ag_run_net_hooks){
	    .data = s,
	    .setup = h_setup,
	    .agent_spec = h_agent_spec,
	    .agent_network = h_agent_network,
	    .verify = h_verify,
	    .finish = h_finish,
	    .bind = h_bind,
	};
	return s;
}

const struct ag_run_net_hooks *ag_study_hooks(struct ag_study *s)
{
	return &s->hooks;
}

void ag_study_free(struct ag_study *s)
{
	if (!s)
		return;
	if (s->plan_built)
		ag_egress_plan_release(&s->plan);
	ag_study_inject_free(s->o.inject);
	ag_strv_release(&s->agent_env);
	free(s->suffix);
	free(s->run_id);
	free(s->evidence_dir);
	free(s->probe_bin);
	free(s->out_existing_id);
	free(s->gw_image_id);
	free(s->gw_bound_image_id);
	free(s->agent_image_id);
	free(s->gw_platform);
	subnet_unlock(s);
	free(s);
}

int ag_study_recover(struct ag_engine *eng, const char *suffix, size_t *containers_removed,
		     size_t *networks_removed)
{
	char base[64], gw[80], probe[80], study[80], out[80];
	snprintf(base, sizeof(base), "agentguard-%s", suffix);
	snprintf(gw, sizeof(gw), "%s-gateway", base);
	snprintf(probe, sizeof(probe), "%s-probe", base);
	snprintf(study, sizeof(study), "%s-study", base);
	snprintf(out, sizeof(out), "%s-outbound", base);
	const struct ag_label_expect lab[] = {{"agentguard.owner", AG_EGRESS_OWNER},
					      {AG_RUN_ID_LABEL, suffix}};
	int ret = 0;
	*containers_removed = *networks_removed = 0;
	/* containers first (a network with members cannot go) */
	const char *cn[] = {gw, probe};
	for (size_t i = 0; i < 2; i++) {
		const struct ag_container_owner o = {cn[i], lab, 2};
		struct ag_cleanup_result worst;
		size_t removed = 0, foreign = 0;
		if (ag_container_cleanup_labelled(eng, AG_RUN_ID_LABEL, suffix, &o, CTL, NULL, NULL,
						  &worst, &removed, &foreign) < 0 ||
		    !ag_cleanup_state_complete(worst.state))
			ret = -1;
		*containers_removed += removed;
	}
	const char *nn[] = {study, out};
	for (size_t i = 0; i < 2; i++) {
		const struct ag_container_owner o = {nn[i], lab, 2};
		struct ag_cleanup_result worst;
		size_t removed = 0, foreign = 0;
		if (ag_network_cleanup_labelled(eng, AG_RUN_ID_LABEL, suffix, &o, CTL, &worst,
						&removed, &foreign) < 0 ||
		    !ag_cleanup_state_complete(worst.state))
			ret = -1;
		*networks_removed += removed;
	}
	return ret;
}
