/*
 * libFuzzer harness over the live-study destination policy parser
 * (src/lib/egress/policy.c) and the decision it feeds. Built with gcc it
 * links tests/fuzz/replay.c and replays tests/fuzz/corpus/egress_policy in
 * `make check`.
 *
 * Invariants checked: a parsed policy has at most 64 rules, sorted and
 * unique, every host re-normalises to itself, no blocked name survives, an
 * IP literal rule is test-only, the digest is 64 hex digits and stable
 * across a re-parse of the normalised form; a refusal always names a
 * reason. Every rule, probed as a CONNECT event with a documentation or
 * global address, gets a verdict with a reason.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/egress/decision.h"
#include "lib/egress/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_policy(const struct ag_egress_policy *p)
{
	if (p->n_rules > AG_EGRESS_POLICY_MAX_RULES || strlen(p->digest) != 64)
		abort();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ag_egress_rule *r = &p->rules[i];
		struct ag_egress_target t;
		const char *why = NULL;
		bool suffix;
		if (ag_egress_host_normalize(r->dest.host, strlen(r->dest.host), &t, &why) < 0 ||
		    strcmp(t.host, r->dest.host) != 0)
			abort();
		if (!r->dest.ip_literal && ag_egress_host_blocked(r->dest.host, &suffix))
			abort();
		if (r->dest.ip_literal && !(r->test_only && r->test_only_ip_literal))
			abort();
		if (r->dest.port < 1 || r->dest.port > 65535 || !r->purpose)
			abort();
		if (i > 0) {
			int c = strcmp(p->rules[i - 1].dest.host, r->dest.host);
			if (c > 0 || (c == 0 && p->rules[i - 1].dest.port >= r->dest.port))
				abort();
		}
		char auth[AG_EGRESS_HOST_MAX + 16];
		bool v6 = r->dest.ip_literal && r->dest.addr.family == 6;
		snprintf(auth, sizeof(auth), "%s%s%s:%d", v6 ? "[" : "", r->dest.host,
			 v6 ? "]" : "", r->dest.port);
		const char *addrs[] = {"192.0.2.7"};
		struct ag_egress_event ev = {.protocol = "connect",
					     .authority = auth,
					     .resolved = addrs,
					     .n_resolved = 1,
					     .resolution_status = "stable"};
		struct ag_egress_decision d;
		bool allow = ag_egress_decide(p, &ev, &d);
		if (!d.reason || allow != d.allow)
			abort();
		if (allow && (d.rule != (int)i || (!r->test_only && !r->dest.ip_literal)))
			abort(); /* a documentation address is for test-only rules */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_egress_policy *p = NULL;
	struct ag_error *err = NULL;
	if (ag_egress_policy_parse((const char *)data, size, &p, &err) < 0) {
		if (!err || !err->reason || !err->msg)
			abort();
		char *s = ag_error_format(err);
		free(s);
		ag_error_free(err);
		return 0;
	}
	check_policy(p);
	/* The normalised form parses to the same digest. */
	json_t *j = ag_egress_policy_json(p);
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	struct ag_egress_policy *q = NULL;
	if (!text || ag_egress_policy_parse(text, strlen(text), &q, &err) < 0 ||
	    strcmp(p->digest, q->digest) != 0)
		abort();
	free(text);
	ag_egress_policy_free(q);
	ag_egress_policy_free(p);
	return 0;
}
