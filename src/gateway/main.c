/*
 * main.c: agentguard-gateway's command line, start-up and shutdown
 * (gateway.h, docs/study-egress.md "The gateway").
 *
 * Exit codes: 0 stopped by SIGTERM/SIGINT with a complete evidence stream;
 * 1 stopped with an incomplete stream; 2 usage or policy error; 3 cannot
 * start (bind, resolver, event loop).
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/egress/authority.h"
#include "lib/egress/policy.h"
#include "gateway/gateway.h"

#include <event2/dns.h>
#include <event2/listener.h>
#include <getopt.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>

static const char usage[] =
    "Usage: agentguard-gateway --listen-address IP --listen-port PORT --resolver IP[:PORT]\n"
    "                          --policy FILE --events FILE [--aggregates FILE]\n"
    "                          [--policy-digest HEX]\n"
    "                          [--trial-id ID] [--idle-timeout SECS] [--total-timeout SECS]\n"
    "                          [--max-connections N] [--host-address IP]...\n"
    "                          [--inject FILE [--upstream-ca FILE]]\n"
    "                          [--test-allow-loopback]\n"
    "       agentguard-gateway --self-check | --help | --version\n"
    "\n"
    "The live-study egress gateway: an HTTP proxy that accepts CONNECT host:port\n"
    "and absolute-form http:// requests, judges each against the destination\n"
    "policy before any DNS lookup, resolves approved names only through the one\n"
    "--resolver, connects only to the address it checked, never follows\n"
    "redirects and never intercepts TLS, except to a destination whose rule\n"
    "injects a credential (--inject). One JSON record per decision goes to\n"
    "--events (a new file): the first ones, the first of each destination and\n"
    "reason, and the last ones; SIGTERM ends the stream with a completion record.\n"
    "--aggregates (a new file) counts every request and its bytes per decision,\n"
    "destination and reason, each count written the moment it changes.\n"
    "\n"
    "  --host-address IP      an address of the host's own (a bridge's host side,\n"
    "                         an uplink): never connected to, even when a\n"
    "                         test_only rule approves it; repeatable\n"
    "  --inject FILE          the trial CA's certificate and key and one credential\n"
    "                         per inject rule of the policy (JSON, read once): to\n"
    "                         those destinations only, the agent's TLS ends here,\n"
    "                         its credential headers are replaced by the real one\n"
    "  --upstream-ca FILE     the CA bundle those destinations' certificates are\n"
    "                         checked against (default " GW_UPSTREAM_CA_DEFAULT ")\n"
    "  --test-allow-loopback  tests only: with a policy whose every rule is\n"
    "                         test_only, answers 127.0.0.1 and ::1 count as safe\n"
    "  --self-check           start nothing; check the binary runs; exit 0\n";

static void die_usage(const char *what)
{
	fprintf(stderr, "agentguard-gateway: %s [gateway.usage]\n%s", what, usage);
	exit(2);
}

static int parse_int_opt(const char *s, int lo, int hi, const char *what)
{
	int64_t v;
	if (ag_parse_i64(s, &v) < 0 || v < lo || v > hi)
		die_usage(what);
	return (int)v;
}

void gw_conn_gone(struct gw *gw)
{
	if (gw->stopping && gw->n_conns == 0 && gw->n_zombies == 0)
		event_base_loopexit(gw->base, NULL);
}

static void hard_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopexit(((struct gw *)arg)->base, NULL);
}

static void drain_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct gw *gw = arg;
	gw_close_all(gw, "shutdown");
	gw_conn_gone(gw);
	/* Cancelled lookups report back on the next turn of the loop; should
	 * one not, the loop still ends (evdns_base_free fails it after). */
	struct timeval tv = {.tv_sec = 1};
	evtimer_assign(gw->drain_timer, gw->base, hard_stop, gw);
	evtimer_add(gw->drain_timer, &tv);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct gw *gw = arg;
	if (gw->stopping)
		return;
	gw->stopping = true;
	gw->stop_reason = sig == SIGTERM ? "sigterm" : "sigint";
	/* Stop accepting; let open connections finish, for a bounded time. */
	evconnlistener_disable(gw->listener);
	gw->drain_timer = evtimer_new(gw->base, drain_over, gw);
	struct timeval tv = {.tv_sec = AG_GW_DRAIN_SECS};
	evtimer_add(gw->drain_timer, &tv);
	gw_conn_gone(gw);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	(void)l;
	gw_accept(arg, fd, sa, salen);
}

static void harden_self(void)
{
	/* Never gains privileges, never dumps core (a core could hold
	 * request bytes), reads nothing from stdin. */
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	struct rlimit no_core = {0, 0};
	(void)setrlimit(RLIMIT_CORE, &no_core);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (fd != 0) {
			(void)dup2(fd, 0);
			close(fd);
		}
	} else {
		close(0);
	}
	signal(SIGPIPE, SIG_IGN);
	/* A file-size limit makes write(2) fail (EFBIG) rather than kill us:
	 * the stream is then marked incomplete and nothing more passes. */
	signal(SIGXFSZ, SIG_IGN);
}

static int self_check(void)
{
	struct event_base *b = event_base_new();
	struct evdns_base *d = b ? evdns_base_new(b, 0) : NULL;
	int ok = b && d;
	printf("agentguard-gateway %s self-check %s uid=%u libevent=%s\n", AG_VERSION,
	       ok ? "ok" : "failed", (unsigned)getuid(), event_get_version());
	if (d)
		evdns_base_free(d, 0);
	if (b)
		event_base_free(b);
	return ok ? 0 : 3;
}

static void parse_args(int argc, char **argv, struct gw_opts *o)
{
	enum {
		O_LADDR = 256,
		O_LPORT,
		O_RESOLVER,
		O_POLICY,
		O_DIGEST,
		O_EVENTS,
		O_AGGS,
		O_TRIAL,
		O_IDLE,
		O_TOTAL,
		O_MAXC,
		O_LOOP,
		O_HOSTADDR,
		O_INJECT,
		O_UPCA,
		O_SELF,
		O_HELP,
		O_VERSION
	};
	static const struct option lo[] = {
	    {"listen-address", required_argument, NULL, O_LADDR},
	    {"listen-port", required_argument, NULL, O_LPORT},
	    {"resolver", required_argument, NULL, O_RESOLVER},
	    {"policy", required_argument, NULL, O_POLICY},
	    {"policy-digest", required_argument, NULL, O_DIGEST},
	    {"events", required_argument, NULL, O_EVENTS},
	    {"aggregates", required_argument, NULL, O_AGGS},
	    {"trial-id", required_argument, NULL, O_TRIAL},
	    {"idle-timeout", required_argument, NULL, O_IDLE},
	    {"total-timeout", required_argument, NULL, O_TOTAL},
	    {"max-connections", required_argument, NULL, O_MAXC},
	    {"test-allow-loopback", no_argument, NULL, O_LOOP},
	    {"host-address", required_argument, NULL, O_HOSTADDR},
	    {"inject", required_argument, NULL, O_INJECT},
	    {"upstream-ca", required_argument, NULL, O_UPCA},
	    {"self-check", no_argument, NULL, O_SELF},
	    {"help", no_argument, NULL, O_HELP},
	    {"version", no_argument, NULL, O_VERSION},
	    {0},
	};
	*o = (struct gw_opts){.idle_secs = AG_GW_IDLE_SECS,
			      .total_secs = AG_GW_TOTAL_SECS,
			      .max_connections = AG_GW_MAX_CONNECTIONS};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (ch) {
		case O_LADDR:
			o->listen_address = optarg;
			break;
		case O_LPORT:
			o->listen_port = parse_int_opt(optarg, 1, 65535, "bad --listen-port");
			break;
		case O_RESOLVER:
			o->resolver = optarg;
			break;
		case O_POLICY:
			o->policy_path = optarg;
			break;
		case O_DIGEST:
			o->policy_digest = optarg;
			break;
		case O_EVENTS:
			o->events_path = optarg;
			break;
		case O_AGGS:
			o->aggregates_path = optarg;
			break;
		case O_TRIAL:
			o->trial_id = optarg;
			break;
		case O_IDLE:
			o->idle_secs =
			    parse_int_opt(optarg, 1, AG_GW_IDLE_SECS_MAX, "bad --idle-timeout");
			break;
		case O_TOTAL:
			o->total_secs =
			    parse_int_opt(optarg, 1, AG_GW_TOTAL_SECS_MAX, "bad --total-timeout");
			break;
		case O_MAXC:
			o->max_connections = parse_int_opt(optarg, 1, AG_GW_MAX_CONNECTIONS,
							   "bad --max-connections");
			break;
		case O_LOOP:
			o->test_allow_loopback = true;
			break;
		case O_HOSTADDR:
			if (o->n_host_addr_args >= AG_GW_HOST_ADDRS_MAX)
				die_usage("too many --host-address");
			o->host_addr_args[o->n_host_addr_args++] = optarg;
			break;
		case O_INJECT:
			o->inject_path = optarg;
			break;
		case O_UPCA:
			o->upstream_ca = optarg;
			break;
		case O_SELF:
			exit(self_check());
		case O_HELP:
			fputs(usage, stdout);
			exit(0);
		case O_VERSION:
			printf("agentguard-gateway %s\n", AG_VERSION);
			exit(0);
		default:
			die_usage("unknown option or missing value");
		}
	}
	if (optind != argc)
		die_usage("unexpected argument");
	if (!o->listen_address || !o->listen_port || !o->resolver || !o->policy_path ||
	    !o->events_path)
		die_usage("--listen-address, --listen-port, --resolver, --policy and --events are "
			  "required");
	if (o->trial_id && !ag_egress_id_valid(o->trial_id))
		die_usage("bad --trial-id");
	if (o->upstream_ca && !o->inject_path)
		die_usage("--upstream-ca needs --inject");
}

static int fail(int code, const char *reason, const char *what)
{
	fprintf(stderr, "agentguard-gateway: %s [%s]\n", what, reason);
	return code;
}

static json_t *start_record(const struct gw *gw)
{
	char ts[32];
	gw_now(ts);
	json_t *r = json_object();
	json_object_set_new(r, "record", json_string("start"));
	json_object_set_new(r, "schema", json_string(GW_STREAM_SCHEMA));
	json_object_set_new(r, "schema_version", json_integer(1));
	json_object_set_new(r, "trial_id",
			    gw->opts.trial_id ? json_string(gw->opts.trial_id) : json_null());
	json_object_set_new(r, "policy_digest", json_string(gw->policy->digest));
	json_object_set_new(r, "listen",
			    json_pack("{s:s, s:i}", "address", gw->opts.listen_address, "port",
				      gw->opts.listen_port));
	json_object_set_new(r, "resolver", json_string(gw->opts.resolver));
	json_object_set_new(r, "tls_interception", json_boolean(gw->inject != NULL));
	if (gw->inject) {
		/* which destinations are terminated, and with which header name */
		json_t *hosts = json_array();
		for (size_t i = 0; i < gw->inject->n; i++) {
			const struct ag_egress_rule *rule = gw->inject->hosts[i].rule;
			json_array_append_new(
			    hosts, json_pack("{s:s, s:i, s:s}", "host", rule->dest.host, "port",
					     rule->dest.port, "header", rule->inject->header));
		}
		json_object_set_new(r, "tls_terminated", hosts);
		json_object_set_new(r, "trial_ca_sha256", json_string(gw->inject->ca_sha256));
	}
	json_object_set_new(r, "follows_redirects", json_false());
	json_object_set_new(r, "test_allow_loopback", json_boolean(gw->opts.test_allow_loopback));
	/* how many, never which: the host's addresses stay out of the evidence */
	json_object_set_new(r, "host_addresses", json_integer((json_int_t)gw->n_host_addrs));
	json_object_set_new(r, "uid", json_integer((json_int_t)getuid()));
	json_object_set_new(r, "libevent", json_string(event_get_version()));
	json_object_set_new(r, "version", json_string(AG_VERSION));
	json_object_set_new(r, "started", json_string(ts));
	return r;
}

int gw_dns_set_nameserver(struct gw *gw)
{
	return evdns_base_nameserver_sockaddr_add(gw->dns, (const struct sockaddr *)&gw->resolver,
						  gw->resolver_len, 0);
}

static int setup_dns(struct gw *gw)
{
	/* Flags 0: no resolv.conf, no hosts file, no search list. */
	gw->dns = evdns_base_new(gw->base, 0);
	if (!gw->dns)
		return -1;
	char t[16], a[16];
	snprintf(t, sizeof(t), "%d", AG_GW_DNS_TIMEOUT_SECS);
	snprintf(a, sizeof(a), "%d", AG_GW_DNS_ATTEMPTS);
	if (evdns_base_set_option(gw->dns, "timeout:", t) < 0 ||
	    evdns_base_set_option(gw->dns, "attempts:", a) < 0 ||
	    evdns_base_set_option(gw->dns, "ndots:", "0") < 0 ||
	    evdns_base_set_option(gw->dns, "max-timeouts:", "255") < 0 ||
	    evdns_base_set_option(gw->dns, "initial-probe-timeout:", "3600") < 0 ||
	    gw_dns_set_nameserver(gw) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	harden_self();
	struct gw gw = {0};
	parse_args(argc, argv, &gw.opts);

	_cleanup_err_ struct ag_error *err = NULL;
	if (ag_egress_policy_load(gw.opts.policy_path, "policy", &gw.policy, &err) < 0) {
		fprintf(stderr, "agentguard-gateway: the policy is not valid [%s]\n", err->reason);
		return 2;
	}
	int rc = 0;
	if (gw.opts.policy_digest && strcmp(gw.opts.policy_digest, gw.policy->digest) != 0) {
		rc = fail(2, "gateway.policy_digest", "the policy's digest is not --policy-digest");
		goto out_policy;
	}
	if (gw.opts.test_allow_loopback) {
		bool all_test = true;
		for (size_t i = 0; i < gw.policy->n_rules; i++)
			all_test = all_test && gw.policy->rules[i].test_only;
		if (!all_test || gw.policy->n_rules == 0) {
			rc = fail(
			    2, "gateway.test_flag_needs_test_policy",
			    "--test-allow-loopback needs a policy whose every rule is test_only");
			goto out_policy;
		}
	}
	if ((gw.policy->n_inject > 0) != (gw.opts.inject_path != NULL)) {
		rc = fail(2, "gateway.inject",
			  gw.opts.inject_path
			      ? "--inject needs a policy with an inject rule"
			      : "the policy injects a credential: --inject is required");
		goto out_policy;
	}
	if (gw.opts.inject_path &&
	    gw_inject_load(&gw, gw.opts.inject_path,
			   gw.opts.upstream_ca ? gw.opts.upstream_ca : GW_UPSTREAM_CA_DEFAULT) <
		0) {
		rc = 2;
		goto out_policy;
	}
	struct sockaddr_storage lss;
	socklen_t llen;
	char lspec[AG_EGRESS_ADDR_TEXT_MAX + 16];
	snprintf(lspec, sizeof(lspec), "%s%s%s", strchr(gw.opts.listen_address, ':') ? "[" : "",
		 gw.opts.listen_address, strchr(gw.opts.listen_address, ':') ? "]" : "");
	if (gw_parse_hostport(lspec, gw.opts.listen_port, &lss, &llen) < 0) {
		rc = fail(2, "gateway.listen_address", "--listen-address must be one IP address");
		goto out_policy;
	}
	for (size_t i = 0; i < gw.opts.n_host_addr_args; i++) {
		struct ag_egress_addr a;
		if (ag_egress_addr_parse(gw.opts.host_addr_args[i], &a) < 0) {
			rc = fail(2, "gateway.host_address",
				  "--host-address must be one IP address");
			goto out_policy;
		}
		gw.host_addrs[gw.n_host_addrs++] = ag_egress_addr_unmap(&a);
	}
	if (gw_parse_hostport(gw.opts.resolver, 53, &gw.resolver, &gw.resolver_len) < 0) {
		rc = fail(2, "gateway.resolver", "--resolver must be IP, IP:PORT or [IPv6]:PORT");
		goto out_policy;
	}

	gw.base = event_base_new();
	if (!gw.base || setup_dns(&gw) < 0) {
		rc = fail(3, "gateway.start", "cannot set up the event loop or the resolver");
		goto out_base;
	}
	if (gw_stream_open(&gw.stream, gw.opts.events_path, &err) < 0) {
		rc = fail(3, err->reason,
			  "cannot open the evidence stream (it must be new or empty)");
		goto out_base;
	}
	if (gw_aggs_open(&gw.aggs, gw.opts.aggregates_path, &err) < 0) {
		rc = fail(3, err->reason,
			  "cannot open the aggregates file (it must be new or empty)");
		gw_stream_finish(&gw.stream, "aggregates_failed");
		goto out_base;
	}
	gw.listener = evconnlistener_new_bind(gw.base, on_accept, &gw,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
						  LEV_OPT_REUSEABLE,
					      128, (struct sockaddr *)&lss, (int)llen);
	if (!gw.listener) {
		rc = fail(3, "gateway.listen", "cannot listen on the given address and port");
		gw_stream_finish(&gw.stream, "listen_failed");
		goto out_base;
	}
	if (gw_stream_write(&gw.stream, start_record(&gw)) < 0) {
		rc = fail(3, "gateway.events.write", "cannot write the evidence stream");
		gw_stream_finish(&gw.stream, "write_failed");
		goto out_listener;
	}
	gw.sig_term = evsignal_new(gw.base, SIGTERM, on_signal, &gw);
	gw.sig_int = evsignal_new(gw.base, SIGINT, on_signal, &gw);
	evsignal_add(gw.sig_term, NULL);
	evsignal_add(gw.sig_int, NULL);
	fprintf(stderr, "agentguard-gateway: listening on %s port %d\n", gw.opts.listen_address,
		gw.opts.listen_port);

	event_base_dispatch(gw.base);

	gw_close_all(&gw, "shutdown");
	bool aggs_ok = gw_aggs_close(&gw.aggs);
	bool complete =
	    gw_stream_finish(&gw.stream, gw.stop_reason ? gw.stop_reason : "loop_ended") && aggs_ok;
	rc = complete ? 0 : 1;
	if (!complete)
		fprintf(stderr, "agentguard-gateway: the evidence stream is incomplete "
				"[gateway.evidence_incomplete]\n");
	event_free(gw.sig_term);
	event_free(gw.sig_int);
	if (gw.drain_timer)
		event_free(gw.drain_timer);
out_listener:
	evconnlistener_free(gw.listener);
out_base:
	if (gw.dns)
		evdns_base_free(gw.dns, 1);
	if (gw.base)
		event_base_free(gw.base);
out_policy:
	gw_inject_free(gw.inject);
	ag_egress_policy_free(gw.policy);
	return rc;
}
