/*
 * cmd_study_run.c: `agentguard study-egress run` — the contained run with
 * the live-study network (src/lib/run/study.h, docs/study-egress.md). The
 * whole command line, config rules and summary are contained-run's
 * (cmd_contained_run.c); this adds the study's options and lines.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/base/exit.h"
#include "lib/config/config.h"
#include "lib/egress/policy.h"
#include "lib/run/contained_run.h"
#include "lib/run/study.h"
#include "lib/run/inject.h"

#include <jansson.h>
#include <sys/random.h>
#include <time.h>

static const char help[] =
    "Usage: agentguard study-egress run CONFIG [--policy POLICY] [--trial-id ID]\n"
    "         [--gateway-image REF] [--resolver IP] [--outbound-network NAME]\n"
    "         [--study-subnet CIDR] [--outbound-internal] [--test-upstream-ca FILE]\n"
    "         [--json]\n"
    "         [contained-run options] -- ARGV...\n"
    "\n"
    "A contained run (same config rules, preflight, workspace, agent controls,\n"
    "cleanup and evidence) whose agent sits alone on an internal study network\n"
    "whose only way out is agentguard-gateway, an allowlisting proxy judging\n"
    "every request against POLICY. Experimental.\n"
    "\n"
    "Each option may instead live in CONFIG's study_egress block (policy,\n"
    "gateway_image, resolver, study_subnet, outbound_network,\n"
    "outbound_internal); an option given here wins. A policy and a gateway\n"
    "image are required, from either place.\n"
    "\n"
    "  --policy POLICY         the destination policy (study-egress policy validate);\n"
    "                          in the config, relative to the config's directory\n"
    "  --trial-id ID           the trial this run is evidence for (default:\n"
    "                          trial-<UTC time>-<8 random hex digits>)\n"
    "  --gateway-image REF     the gateway image, pinned by digest, present locally\n"
    "                          (scripts/gateway-image builds it); never the agent's\n"
    "  --resolver IP           the one DNS server the gateway asks (default: none\n"
    "                          usable, so only IP-literal rules can connect)\n"
    "  --outbound-network NAME an existing bridge network the gateway also joins\n"
    "                          (IPv6 off, a subnet not overlapping the study's);\n"
    "                          never created or removed. Default: AgentGuard's own,\n"
    "                          on the block right after the study subnet\n"
    "  --study-subnet CIDR     the study network's IPv4 subnet, /16../28; the\n"
    "                          gateway takes its .2. It (and the block after it,\n"
    "                          for AgentGuard's own outbound network) must overlap\n"
    "                          no network of the engine and no host route\n"
    "                          (study.subnet.in_use). Default: a free /26 pair of\n"
    "                          study_egress.subnet_pool (10.254.0.0/16 if unset),\n"
    "                          chosen from the engine's networks and the host's\n"
    "                          routes (study.subnet.exhausted if none)\n"
    "  --outbound-internal     AgentGuard's own outbound network is --internal too (CI)\n"
    "  --test-upstream-ca FILE tests only: the CA bundle the gateway checks the\n"
    "                          destinations of inject rules against (every inject\n"
    "                          rule must be test_only); default: the gateway image's\n"
    "\n"
    "Before the agent starts: every inspection assertion on both networks and\n"
    "both containers, and live self-tests from a throwaway probe on the study\n"
    "network. Any failure: the agent never starts, exit 3. After: agent,\n"
    "gateway (SIGTERM first), networks, removed by id; the egress manifest\n"
    "beside the artifact, its hash sealed in it.\n"
    "\n"
    "Exit codes: 0 pass, 1 agent/check failure or an egress manifest that is not\n"
    "complete (a deny, a lost or incomplete gateway stream, a dead gateway),\n"
    "2 config or usage, 3 preflight or topology, 4 workspace, 5 policy,\n"
    "6 Docker, 7 timeout, 8 cleanup, 128+N cancelled by signal N (SIGHUP,\n"
    "SIGINT, SIGQUIT, SIGPIPE, SIGTERM: everything is removed, the artifact\n"
    "says cancelled).\n";

struct study_cli {
	const char *policy_path, *trial, *gateway, *resolver, *outbound, *subnet, *test_ca;
	bool outbound_internal;
	struct ag_egress_policy *policy;
	struct ag_study *study;
	char *probe;
	char *policy_owned, *trial_owned;
};

static int opt(void *data, const char *a, const char *val)
{
	struct study_cli *s = data;
	const char **slot = !strcmp(a, "--policy")	       ? &s->policy_path
			    : !strcmp(a, "--trial-id")	       ? &s->trial
			    : !strcmp(a, "--gateway-image")    ? &s->gateway
			    : !strcmp(a, "--resolver")	       ? &s->resolver
			    : !strcmp(a, "--outbound-network") ? &s->outbound
			    : !strcmp(a, "--study-subnet")     ? &s->subnet
			    : !strcmp(a, "--test-upstream-ca") ? &s->test_ca
							       : NULL;
	if (!strcmp(a, "--outbound-internal")) {
		s->outbound_internal = true;
		return 1;
	}
	if (!slot)
		return 0;
	if (!val || !strcmp(val, "--")) {
		ag_cli_usage("study-egress run", "%s needs a value", a);
		return -1;
	}
	*slot = val;
	return 2;
}

/* A trial id when none is given: the time and 8 random hex digits. */
static char *auto_trial_id(void)
{
	unsigned char r[4] = {0};
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		memset(r, 0, sizeof(r));
	time_t now = time(NULL);
	struct tm tm;
	char when[24] = "00000000T000000Z";
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	return ag_xasprintf("trial-%s-%02x%02x%02x%02x", when, r[0], r[1], r[2], r[3]);
}

static int prepare(void *data, const struct ag_config *c, struct ag_run_opts *o)
{
	struct study_cli *s = data;
	/* gVisor's own sandbox networking is what a study's gateway and probe
	 * would rely on, and it does not run on this engine (docs/study-egress.md). */
	if (c->contained.runtime == AG_RUNTIME_GVISOR) {
		_cleanup_err_ struct ag_error *e = NULL;
		ag_err_at(&e, AG_E_CONFIG, "study.runtime.gvisor", c->file, 0, 0,
			  "contained_execution.runtime",
			  "study-egress run does not support runtime: gvisor (the study topology "
			  "is proven on runc only; docs/study-egress.md)");
		ag_cli_json_error("config", e->reason, e->msg, e);
		ag_cli_print_error(e);
		return AG_EXIT_CONFIG;
	}
	/* The flags win; the config's study_egress block fills the rest. A
	 * policy path in the config is relative to the config's directory. */
	const struct ag_study_cfg *st = &c->study;
	if (!s->policy_path && st->policy) {
		s->policy_owned = ag_config_path_beside(c, st->policy);
		s->policy_path = s->policy_owned;
	}
	if (!s->gateway)
		s->gateway = st->gateway_image;
	if (!s->resolver)
		s->resolver = st->resolver;
	if (!s->subnet)
		s->subnet = st->study_subnet;
	if (!s->outbound)
		s->outbound = st->outbound_network;
	if (s->outbound_internal && s->outbound)
		return ag_cli_usage(
		    "study-egress run",
		    "--outbound-internal applies to AgentGuard's own outbound "
		    "network; it cannot go with an outbound network (--outbound-network "
		    "or study_egress.outbound_network)");
	if (!s->outbound_internal && !s->outbound)
		s->outbound_internal = st->outbound_internal;
	if (!s->policy_path || !s->gateway)
		return ag_cli_usage("study-egress run",
				    "run needs a policy and a gateway image: --policy and "
				    "--gateway-image, or study_egress.policy and "
				    "study_egress.gateway_image in the config");
	if (!s->trial) {
		s->trial_owned = auto_trial_id();
		s->trial = s->trial_owned;
	}
	_cleanup_err_ struct ag_error *err = NULL;
	if (ag_egress_policy_load(s->policy_path, "the policy", &s->policy, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	/* credential injection: read once, checked, redacted, the trial CA made */
	struct ag_study_inject *inject = NULL;
	if (ag_study_inject_prepare(c, s->policy, s->policy_path, s->test_ca, s->trial,
				    o->timeout_seconds + 3600, o->redact, &inject, &err) < 0) {
		ag_cli_json_error("config", err->reason, err->msg, err);
		ag_cli_print_error(err);
		return err->code == AG_E_CONFIG ? AG_EXIT_CONFIG : AG_EXIT_PREFLIGHT;
	}
	s->probe = ag_cli_probe_path();
	const struct ag_study_opts so = {
	    .cfg = c,
	    .policy = s->policy,
	    .trial_id = s->trial,
	    .gateway_image = s->gateway,
	    .resolver = s->resolver,
	    .outbound_network = s->outbound,
	    .study_subnet = s->subnet,
	    .subnet_pool = c->study.subnet_pool,
	    .outbound_internal = s->outbound_internal,
	    .probe_path = s->probe,
	    .evidence_gid = c->contained.required_gid,
	    .redact = o->redact,
	    .inject = inject,
	};
	s->study = ag_study_new(&so);
	o->net = ag_study_hooks(s->study);
	return AG_EXIT_PASS;
}

static void report(void *data, const struct ag_run_record *rec, json_t *j)
{
	struct study_cli *s = data;
	const struct ag_run_study *m = &rec->study;
	if (!s->study || !m->present)
		return;
	const char *gw = m->gateway_state ? m->gateway_state : "not_started";
	if (j) {
		json_object_set_new(
		    j, "study_egress",
		    json_pack("{s:s, s:s?, s:b, s:s?, s:s?, s:b, s:s, s:I, s:I, s:s?}", "trial_id",
			      s->trial, "study_subnet", m->study_subnet, "topology_verified",
			      m->setup_done, "completion", m->completion, "completion_reason",
			      m->completion_reason, "cleanup_complete", m->cleanup_complete,
			      "gateway_state", gw, "events", (json_int_t)m->events, "denied",
			      (json_int_t)m->denied, "manifest",
			      m->manifest_written ? "live-study-egress-manifest.json" : NULL));
		if (s->policy->n_inject > 0) {
			/* where the gateway terminated TLS to inject a credential */
			json_t *t = json_array();
			for (size_t i = 0; i < s->policy->n_rules; i++)
				if (s->policy->rules[i].inject)
					json_array_append_new(
					    t, json_sprintf("%s:%d", s->policy->rules[i].dest.host,
							    s->policy->rules[i].dest.port));
			json_object_set_new(json_object_get(j, "study_egress"), "tls_terminated",
					    t);
		}
		return;
	}
	fputs("Study egress: trial ", stdout);
	ag_cli_put_sanitized(stdout, s->trial);
	printf("; subnet %s; topology %s; gateway %s; %zu request(s), %zu denied\n",
	       m->study_subnet ? m->study_subnet : "none",
	       m->setup_done ? "verified" : "NOT verified", gw, m->events, m->denied);
	for (size_t i = 0; i < s->policy->n_rules; i++) {
		const struct ag_egress_rule *r = &s->policy->rules[i];
		if (!r->inject)
			continue;
		fputs("TLS terminated to inject a credential: ", stdout);
		ag_cli_put_sanitized(stdout, r->dest.host);
		printf(":%d (header ", r->dest.port);
		ag_cli_put_sanitized(stdout, r->inject->header);
		fputs("; the agent held a placeholder)\n", stdout);
	}
	if (m->completion)
		printf("Egress manifest: %s (%s)\n", m->completion, m->completion_reason);
	else
		puts("Egress manifest: not written");
}

int ag_cmd_study_run(int argc, char **argv)
{
	struct study_cli s = {0};
	const struct ag_cli_run_ext ext = {
	    .command = "study-egress run",
	    .help = help,
	    .summary_schema = "agentguard.study-egress-run-summary",
	    .option = opt,
	    .prepare = prepare,
	    .report = report,
	    .data = &s,
	};
	int rc = ag_cli_contained_run(argc, argv, &ext);
	ag_study_free(s.study);
	ag_egress_policy_free(s.policy);
	free(s.probe);
	free(s.policy_owned);
	free(s.trial_owned);
	return rc;
}
