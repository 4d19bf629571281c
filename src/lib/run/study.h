/*
 * study.h: `agentguard study-egress run`, the contained run with a
 * different network (issue 12, docs/study-egress.md, contract "Live-Study
 * Egress Contract", shared notes egress-engine.md 10-12).
 *
 * It is not a second run: it is a provider of the contained run's network
 * hooks (contained_run.h). The contained run keeps its config rules,
 * preflight, workspace, agent controls, cleanup and evidence; the study
 * adds, around the agent:
 *
 *   setup   the plan (plan.h: both images pinned and different); the
 *           gateway image present locally (never pulled); the outbound
 *           network (the operator's, inspected: bridge, IPv6 off, a subnet
 *           not overlapping the study's; or AgentGuard's own); the study
 *           network (internal, IPv6 off, inhibit_ipv4, explicit subnet);
 *           the gateway (ledger create on the study network at its fixed
 *           address, connected to the outbound network, started); every
 *           inspection assertion of the gateway and both networks; then a
 *           throwaway self-test probe on the study network (the gateway
 *           answers on its port; the study bridge has no host IPv4
 *           address; the gateway's outbound address is unreachable
 *           directly; 127.0.0.11 answers nothing for a unique name)
 *   verify  the agent's own study controls (one network, DNS 127.0.0.1, no
 *           sysctls, extra hosts, ports or links), the study network's
 *           members exactly {gateway}, the gateway still running
 *   finish  SIGTERM to the gateway (its stream completes), its removal,
 *           the networks' removal by id (absence verified), the egress
 *           manifest from the gateway stream beside the artifact
 *   bind    what the study observes goes to the run record's study part
 *           (record.h): the artifact builder renders it (the manifest's
 *           SHA-256, completion, the topology facts), so the artifact's
 *           seal covers the manifest, and the CLI prints it
 *
 * Any setup or verify failure: the agent never starts (exit 3, a named
 * reason). A deny, an incomplete stream or a gateway that died: exit 1. A
 * study object that could not be removed: exit 8.
 *
 * Names (all carry agentguard.owner=study-egress and the run's label
 * agentguard.contained-run.id=<suffix>, which `agentguard cleanup` uses):
 *   agentguard-<suffix>-gateway, agentguard-<suffix>-probe (containers),
 *   agentguard-<suffix>-study, agentguard-<suffix>-outbound (networks).
 */
#ifndef AG_STUDY_H
#define AG_STUDY_H

#include "lib/base/ag.h"
#include "lib/egress/plan.h"
#include "lib/run/contained_run.h"

#include <jansson.h>

struct ag_config;
struct ag_egress_policy;
struct ag_study;

struct ag_study_opts {
	const struct ag_config *cfg;
	const struct ag_egress_policy *policy;
	const char *trial_id;
	const char *gateway_image;    /* digest-pinned, present locally */
	const char *resolver;	      /* the one DNS server the gateway asks; NULL: none usable */
	const char *outbound_network; /* the operator's network; NULL: AgentGuard's own */
	const char *study_subnet;     /* NULL: a free one of subnet_pool */
	const char *subnet_pool;      /* NULL: AG_STUDY_AUTO_POOL */
	bool outbound_internal;	      /* AgentGuard's own outbound network --internal (CI) */
	const char *probe_path;	      /* the static agentguard-probe (self-tests) */
	int64_t evidence_gid;	      /* the invoking user's group: the gateway writes as it */
	/* the run's secrets and roots: the gateway's records (agent-chosen
	 * hosts and URLs) are redacted with them before anything keeps them */
	const struct ag_redactor *redact;
	/* credential injection (inject.h), or NULL: the study takes it over */
	struct ag_study_inject *inject;
};

/* The study's evidence directory in the run directory, and its files. */
#define AG_STUDY_DIR "egress"
#define AG_STUDY_EVENTS_FILE AG_EGRESS_EVENTS_FILE
#define AG_STUDY_AGGREGATES_FILE AG_EGRESS_AGGREGATES_FILE
#define AG_STUDY_POLICY_FILE AG_EGRESS_POLICY_FILE
/* Labels every study object carries besides the run's. */
#define AG_STUDY_ROLE_LABEL "agentguard.study-egress.role"

struct ag_study *ag_study_new(const struct ag_study_opts *o);
void ag_study_free(struct ag_study *s);
/* The hooks to put in ag_run_opts.net (valid while s lives). */
const struct ag_run_net_hooks *ag_study_hooks(struct ag_study *s);

/*
 * The free space of a subnet pool (NULL: AG_STUDY_AUTO_POOL) as a study run
 * would choose from it now: `pairs` aligned /`prefix` pairs in all,
 * `free_pairs` of them overlapping no network of the engine and no host
 * route (own_outbound: the pair's second block must be free too, for
 * AgentGuard's own outbound network). What `agentguard batch` plans with.
 */
struct ag_study_pool_space {
	uint32_t pairs, free_pairs;
	int prefix;
};
struct ag_engine;
int ag_study_pool_space(struct ag_engine *eng, const char *pool, bool own_outbound,
			struct ag_study_pool_space *out, struct ag_error **err);

/* What the study observed goes to the run record's study part (record.h). */

/* A study object's cleanup word in the evidence: removed already_absent
 * not_created incomplete. */
const char *ag_study_cleanup_word(const struct ag_cleanup_result *r);
/* The cleanup word of the run's ledger entry with ROLE (record.h's
 * AG_RUN_ROLE_*); ABSENT when the ledger holds none. */
struct ag_ledger;
const char *ag_study_object_word(const struct ag_ledger *l, const char *role, const char *absent);

/*
 * The gateway's evidence stream (gateway.h), read back: the events of its
 * decision records (at most AG_STUDY_STREAM_MAX_RECORDS; more, or a record
 * without an event, marks it truncated), and whether it is complete: a first
 * line "start" naming this trial and policy digest, only "decision" lines,
 * then exactly one "end" line saying complete with the count of decisions
 * seen, every line whole JSON ending in a newline, nothing after the end.
 * Returns the events list (new reference).
 */
struct ag_study_stream {
	size_t events, denied;
	int64_t sampled_out; /* the end line's count of records left out */
	bool complete, truncated;
};
json_t *ag_study_stream_parse(const char *buf, size_t len, const char *trial_id,
			      const char *policy_digest, struct ag_study_stream *out);

/*
 * The gateway's aggregates file (src/gateway/aggregate.c), read back after
 * redaction: a header line, then one line per key. Returns the manifest's
 * "aggregates" value {"keys": [...], "overflow": {...}, "complete": B}
 * (new reference), with "complete" false when a line is not whole JSON of
 * the right shape or the header's key count differs from the lines; *out
 * gets the totals of requests and of denied requests.
 */
struct ag_study_aggs {
	int64_t requests, denied;
	bool complete;
};
json_t *ag_study_aggregates_parse(const char *buf, size_t len, struct ag_study_aggs *out);

/*
 * The stream with every string of every record redacted with r (a line
 * that is not one JSON object is redacted as text), line for line: what
 * the agent put into a host, a URL or a path never stays in the evidence
 * (each secret is matched as given and lower-cased: host names are).
 * A whole JSON line comes back as compact JSON with sorted keys, the form
 * the gateway writes. Returns a new buffer (*out_len bytes, NUL after).
 */
struct ag_redactor;
char *ag_study_stream_redact(const struct ag_redactor *r, const char *buf, size_t len,
			     size_t *out_len);

/*
 * `agentguard cleanup` for a crashed study run (recover.c): the study's
 * containers (gateway, probe) and then its networks, each found by the
 * run's label, acted on by id only while inspection shows its name and
 * every owner label. Counts what was removed; -1 when something could not
 * be listed or removed.
 */
struct ag_engine;
int ag_study_recover(struct ag_engine *eng, const char *suffix, size_t *containers_removed,
		     size_t *networks_removed);

#endif
