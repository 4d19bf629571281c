/*
 * plan.h: the study-egress topology plan (contract "Live-Study Egress
 * Contract", upstream-reference 9.4, shared/notes/egress-engine.md 10-12,
 * docs/study-egress.md). Pure: it builds typed specs and renders them; it
 * never calls Docker or touches the network.
 *
 * Topology per trial (token = first 12 hex of SHA-256(trial id)):
 *   network agentguard-study-<token>-internal   --internal, IPv6 off,
 *           com.docker.network.bridge.inhibit_ipv4=true (no host IPv4
 *           address on the study bridge)
 *   network agentguard-study-<token>-outbound   IPv6 off; --internal only
 *           when asked (CI), a plain bridge for a live study
 *   container agentguard-study-<token>-gateway  created on the internal
 *           network with alias agentguard-study-egress-gateway, then
 *           connected to the outbound network; --sysctl
 *           net.ipv4.ip_forward=0 so it can never route
 *   container agentguard-study-<token>-agent    the internal network ONLY,
 *           --dns 127.0.0.1, proxy variables naming the gateway
 * Both containers carry the contained-run hardening through a typed
 * struct ag_exec_spec (validated by ag_exec_spec_validate): non-root,
 * cap-drop ALL, no-new-privileges, read-only root, private cgroup
 * namespace, CPU/memory(=swap)/PID limits, a bounded noexec tmpfs,
 * --pull never. Nothing else can be said: the specs have no field for
 * capabilities to add, sysctls (other than the gateway's fixed
 * ip_forward=0), extra hosts, ports, links, devices, sockets, host
 * namespaces or raw flags.
 * Start order: networks, gateway (create, connect outbound), agent
 * (create), start gateway, check it runs, start agent attached.
 * Teardown (always): agent, gateway, internal network, outbound network,
 * each bound to its name and the agentguard.owner=study-egress label.
 */
#ifndef AG_EGRESS_PLAN_H
#define AG_EGRESS_PLAN_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/sha256.h"
#include "lib/base/strv.h"
#include "lib/docker/exec_spec.h"

#include <jansson.h>

struct ag_error;
struct ag_config;
struct ag_egress_policy;

#define AG_EGRESS_OWNER "study-egress"
#define AG_EGRESS_GATEWAY_ALIAS "agentguard-study-egress-gateway"
#define AG_EGRESS_EVIDENCE_PATH "/agentguard-egress"
/* The gateway's evidence files, by name (in that directory, and in the
 * run directory's egress/ they are bound from). */
#define AG_EGRESS_POLICY_FILE "policy.json"
#define AG_EGRESS_EVENTS_FILE "events.jsonl"
#define AG_EGRESS_AGGREGATES_FILE "aggregates.jsonl"
#define AG_EGRESS_AGENT_DNS "127.0.0.1"
#define AG_EGRESS_GATEWAY_BIN "/usr/local/bin/agentguard-gateway"
/* Credential injection: the gateway's inject file and test-only
 * destination CA bundle, bound read-only into its evidence directory. */
#define AG_EGRESS_INJECT_FILE "inject.json"
#define AG_EGRESS_UPSTREAM_CA_FILE "upstream-ca.pem"

enum ag_egress_role { AG_EGRESS_GATEWAY = 0, AG_EGRESS_AGENT };

struct ag_egress_network_spec {
	char name[64];
	bool internal;	   /* --internal */
	bool inhibit_ipv4; /* -o com.docker.network.bridge.inhibit_ipv4=true */
	bool existing;	   /* outbound only: the operator's network, never created or removed */
	char subnet[AG_EGRESS_ADDR_TEXT_MAX]; /* CIDR; "" = the engine's pick */
	struct ag_label labels[3];	      /* owner, token, [run label] */
	size_t n_labels;
};

/* The network fields (name, alias, fixed address, DNS, sysctl) live in the
 * exec spec: one renderer for every container AgentGuard creates. */
struct ag_egress_container_spec {
	enum ag_egress_role role;
	struct ag_exec_spec exec; /* hardening, identity, mounts, env, labels, command, network */
};

struct ag_egress_plan_inputs {
	const struct ag_config *config; /* the agent's image and limits */
	const struct ag_egress_policy *policy;
	const char *trial_id;		 /* ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$ */
	const char *gateway_image;	 /* digest-pinned, not the agent's */
	const char *gateway_dns;	 /* the gateway container's DNS; NULL: 127.0.0.1 */
	const char *resolver;		 /* the one server the gateway asks; NULL: 127.0.0.1 */
	const char *study_subnet;	 /* IPv4 CIDR; NULL: AG_STUDY_DEFAULT_SUBNET */
	const char *outbound_network;	 /* an existing network; NULL: the plan creates one */
	const char *workspace_host_path; /* NULL: tmpfs workspace */
	const char *evidence_host_path;	 /* NULL: tmpfs evidence dir in the gateway */
	int64_t evidence_group;		 /* the gateway's supplementary group (0: none) */
	bool outbound_internal;		 /* CI: outbound network --internal too */
	/* A run's names and unique label instead of the token's (study-egress run):
	 * objects are <names_base>-gateway, -study, -outbound; NULL: agentguard-study-<token>. */
	const char *names_base;
	const char *run_label_key, *run_label_value; /* both or neither */
	const char *const *command;		     /* the agent argv */
	size_t n_command;
	/* The host's own addresses the gateway must never connect to (its
	 * --host-address); the plan adds the host side of both study subnets. */
	const char *const *host_addresses;
	size_t n_host_addresses;
	/* Credential injection (the policy has inject rules; with
	 * evidence_host_path): the gateway's inject file (a host tmpfs file),
	 * a test-only CA bundle for the destinations (NULL: the image's), the
	 * agent's CA file, and the placeholders ("NAME=VALUE") the agent gets. */
	const char *inject_host_path;
	const char *upstream_ca_host_path;
	const char *agent_ca_host_path;
	const char *const *placeholders;
	size_t n_placeholders;
};

/* The specs borrow from the plan's own storage: never copy a built plan. */
struct ag_egress_plan {
	char token[13];
	char trial_id[AG_EGRESS_ID_MAX + 1];
	char policy_digest[AG_SHA256_HEX_LEN + 1];
	struct ag_egress_network_spec internal, outbound;
	struct ag_egress_container_spec gateway, agent;
	char gateway_study_ip[AG_EGRESS_ADDR_TEXT_MAX]; /* the study subnet's .2 */
	/* AgentGuard's own outbound network: the gateway's address on it, its
	 * subnet's .2 (known before the gateway starts); "" on the operator's. */
	char gateway_outbound_ip[AG_EGRESS_ADDR_TEXT_MAX];
	/* storage the specs borrow from */
	char gateway_name[64], agent_name[64];
	struct ag_label gateway_labels[5], agent_labels[5];
	const char *gateway_dns[1], *agent_dns[1];
	struct ag_strv gateway_cmd, agent_env, owned;
	/* policy (ro), events, aggregates; inject file, destination CA (ro) */
	struct ag_exec_file_bind gateway_files[5];
};

/*
 * Builds and validates the plan. AG_E_CONFIG with one of:
 *   egress.plan.not_contained egress.plan.trial_id egress.plan.image_not_pinned
 *   egress.plan.same_image egress.plan.gateway_dns egress.plan.resolver
 *   egress.plan.subnet egress.plan.topology
 *   egress.plan.forbidden_flag and every render.* reason of
 *   ag_exec_spec_validate (prefixed context says which container).
 * Release with ag_egress_plan_release, also after a failure.
 */
int ag_egress_plan_build(const struct ag_egress_plan_inputs *in, struct ag_egress_plan *p,
			 struct ag_error **err);
void ag_egress_plan_release(struct ag_egress_plan *p);

/* Puts a spec (the run's own agent spec) on the plan's study network, with
 * DNS 127.0.0.1 and nothing else of the network kind. */
void ag_egress_plan_agent_network(struct ag_egress_plan *p, struct ag_exec_spec *s);

/* "A.B.C.D/N" with no host bits set: 0, else -1. */
int ag_egress_subnet_parse(const char *cidr, uint32_t *net, int *prefix);
bool ag_egress_subnets_overlap(uint32_t a, int pa, uint32_t b, int pb);

/* Re-checks the topology invariants of a (possibly hand-edited) plan. */
int ag_egress_plan_validate(const struct ag_egress_plan *p, struct ag_error **err);

/*
 * THE renderer: one docker argv (after the "docker" executable) per step,
 * in order. Step names: create_internal_network create_outbound_network
 * create_gateway connect_gateway_outbound create_agent start_gateway
 * inspect_gateway start_agent, then teardown: remove_agent remove_gateway
 * remove_internal_network remove_outbound_network.
 */
struct ag_egress_step {
	const char *name;
	bool teardown;
	struct ag_strv argv;
};
int ag_egress_plan_render(const struct ag_egress_plan *p, struct ag_egress_step **steps, size_t *n,
			  struct ag_error **err);
void ag_egress_steps_free(struct ag_egress_step *steps, size_t n);

/* The plan for machines: typed specs, steps, and "plan_digest" (SHA-256
 * of the canonical JSON of everything else). */
int ag_egress_plan_json(const struct ag_egress_plan *p, json_t **out, struct ag_error **err);

#endif
