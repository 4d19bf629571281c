/*
 * ledger.h: the ledger of AgentGuard-owned Docker objects (containers,
 * and the networks of a live study). The only module that creates or
 * deletes anything in Docker. Every object a run creates is an entry of a
 * `struct ag_ledger` (below): the agent container, the study's gateway,
 * self-test probe and networks (the run's ledger), the preflight probe and
 * the image-export container (each their module's own); `agentguard
 * cleanup` recovers by label what a crashed run left.
 *
 * An object is created with owner labels; its id is recorded the moment
 * the daemon answers; when the answer is lost (timeout, dropped
 * connection, an answer without a valid id) the object is looked for by
 * its unique label and handled by the id found. Removal is by id, with
 * the container's anonymous volumes (`DELETE ?force=1&v=1`), and absence
 * is verified by id (404).
 *
 * Cleanup never selects a container by name alone: every step acts on the
 * 64-hex id, and the id is acted on only while inspection shows our name
 * and every owner label (CONTRACT: cleanup.identity_bound).
 */
#ifndef AG_LEDGER_H
#define AG_LEDGER_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/proc.h"
#include "lib/docker/inspect.h"

#include <jansson.h>

struct ag_engine;
struct ag_exec_spec;
struct ag_cleanup_result;
struct ag_error;

/* Who a container must be to be ours. */
struct ag_container_owner {
	const char *name; /* container name without the leading '/' */
	const struct ag_label_expect *labels;
	size_t n_labels;
};

/*
 * GET /containers/WHAT/json: 1 absent (404), 0 present (*obj set when obj
 * != NULL, owned by the caller), -1 ambiguous (transport failure, malformed
 * or contradictory answer). Config.Cmd, Config.Env, Args and Path are
 * dropped from the object as soon as it is parsed: the command and the
 * environment never travel further.
 */
int ag_container_lookup(struct ag_engine *eng, const char *what, unsigned timeout_ms, json_t **obj);

/* True when the inspected object has this id, our name and every label. */
bool ag_container_owned(const json_t *v, const char *id, const struct ag_container_owner *o);

/*
 * Cleanup outcomes (contract: Containment Evidence, cleanup states), one
 * enum for every object a run removes (probe, agent, gateway, networks).
 * ag_cleanup_state_name is the one translation into evidence words; every
 * word is in the schemas' cleanup enums (tests/unit/test_evidence_words.c
 * renders each value up to AG_CLEANUP__COUNT into an artifact).
 */
enum ag_cleanup_state {
	AG_CLEANUP_NOT_CREATED = 0,
	AG_CLEANUP_REMOVED,
	AG_CLEANUP_ALREADY_ABSENT,
	AG_CLEANUP_CLEANLY_TERMINATED,
	AG_CLEANUP_FORCE_KILLED,
	AG_CLEANUP_INCOMPLETE, /* "cleanup_incomplete": removal failed or did not take */
	AG_CLEANUP_VERIFICATION_UNAVAILABLE,
	/* No usable id from create; a container with the object's unique label
	 * exists but is not ours (name or labels differ): left alone. */
	AG_CLEANUP_UNOWNED_NOT_REMOVED,
	AG_CLEANUP__COUNT
};

const char *ag_cleanup_state_name(enum ag_cleanup_state s);
/* removed, already_absent, cleanly_terminated, force_killed, not_created,
 * unowned_not_removed (nothing of ours is left) */
bool ag_cleanup_state_complete(enum ag_cleanup_state s);
/*
 * The live-study manifest's coarser vocabulary for the same states
 * (live-study-egress-manifest-v1: removed, already_absent, not_created,
 * incomplete): a projection of the enum, kept beside its translation.
 */
const char *ag_cleanup_state_manifest_word(enum ag_cleanup_state s);

struct ag_cleanup_result {
	enum ag_cleanup_state state;
	bool attempted;
	bool liveness_verified; /* absence confirmed by inspection */
	const char *message;	/* static, sanitized */
};

/*
 * The cleanup state machine, always by id: inspect; if running, POST
 * stop?t=2; inspect; if still running, POST kill; inspect; DELETE
 * ?force=1&v=1 (anonymous volumes too); inspect must say absent (404). A container that stops being
 * ours (name or labels differ) is never touched: verification_unavailable.
 */
void ag_container_cleanup(struct ag_engine *eng, const char *id,
			  const struct ag_container_owner *owner, unsigned timeout_ms,
			  struct ag_cleanup_result *out);

/* Told about each container ag_container_cleanup_labelled acted on. */
typedef void (*ag_cleanup_each_fn)(const char *id, const struct ag_cleanup_result *r, void *data);

/*
 * Cleans, each by its own id, every container that carries label KEY=VALUE,
 * with `owner` checked before any action (ag_container_cleanup). Returns -1
 * when the containers cannot be listed; otherwise 0 with *worst the first
 * incomplete result (or the last one; not_created when there were none) and
 * *removed the count actually removed. `each` may be NULL.
 */
int ag_container_cleanup_labelled(struct ag_engine *eng, const char *key, const char *value,
				  const struct ag_container_owner *owner, unsigned timeout_ms,
				  ag_cleanup_each_fn each, void *data,
				  struct ag_cleanup_result *worst, size_t *removed,
				  size_t *skipped_foreign);

/*
 * Lists the ids of containers carrying label KEY=VALUE (GET
 * /containers/json?all=1&filters={"label":["KEY=VALUE"]}), bounded to
 * AG_RUN_RESIDUE_MAX ids. -1 when the answer is unavailable or malformed.
 */
int ag_container_list_labelled(struct ag_engine *eng, const char *key, const char *value,
			       unsigned timeout_ms, struct ag_strv *ids);

/* ---- networks (the live-study topology) ---- */

/* What AgentGuard creates: a bridge network with an explicit subnet, IPv6
 * off, labelled (one label unique to the run). */
struct ag_network_spec {
	const char *name;
	bool internal;	    /* no route off the bridge */
	bool inhibit_ipv4;  /* no host IPv4 address on the bridge */
	const char *subnet; /* IPv4 CIDR (required: never the engine's pick) */
	const struct ag_label *labels;
	size_t n_labels;
};

/* GET /networks/WHAT: 1 absent (404), 0 present (*obj owned by the caller), -1 unknown. */
int ag_network_lookup(struct ag_engine *eng, const char *what, unsigned timeout_ms, json_t **obj);

/* True when the inspected network has this id, exactly o->name and every label. */
bool ag_network_owned(const json_t *v, const char *id, const struct ag_container_owner *o);

/* POST /networks/NET/connect {"Container": id}, with its IPv4 address on
 * NET when IPV4 is not NULL. */
int ag_network_connect(struct ag_engine *eng, const char *net_id, const char *container_id,
		       const char *ipv4, unsigned timeout_ms, struct ag_error **err);

/* Ids of the networks carrying label KEY=VALUE (bounded); -1 when unknown. */
int ag_network_list_labelled(struct ag_engine *eng, const char *key, const char *value,
			     unsigned timeout_ms, struct ag_strv *ids);

/* Removes every network with label KEY=VALUE that is `owner` (recovery). */
int ag_network_cleanup_labelled(struct ag_engine *eng, const char *key, const char *value,
				const struct ag_container_owner *owner, unsigned timeout_ms,
				struct ag_cleanup_result *worst, size_t *removed,
				size_t *skipped_foreign);

/* ---- the run's ledger: one entry per object the run creates ---- */

enum ag_ledger_kind { AG_LEDGER_CONTAINER = 0, AG_LEDGER_NETWORK };

/* What a graceful stop (ag_ledger_entry's stop_grace_ms) saw. */
struct ag_ledger_stop {
	bool was_running; /* inspection by id showed it running when the stop began */
	bool signalled;	  /* SIGTERM was sent */
	bool killed;	  /* it did not exit within the grace: SIGKILL was sent */
	int exit_code;	  /* its exit status after SIGTERM; -1: none known */
};

/*
 * What the ledger remembers about one object: who it must be (name and
 * owner labels, checked before any action by id), whether a create was
 * sent (the object may then exist without an answered id: found by the
 * ledger's unique label), the id the daemon answered, and how its teardown
 * ended. The entry lives inside its ledger: its pointers stay valid while
 * the ledger does.
 */
struct ag_ledger_entry {
	enum ag_ledger_kind kind;
	const char *role; /* static: agent, probe, gateway, study_network, ... */
	char *name;
	char *id; /* the 64-hex id the daemon answered, NULL until then */
	struct ag_label_expect labels[AG_LEDGER_MAX_LABELS]; /* borrowed strings */
	struct ag_container_owner owner;		     /* name + labels */
	bool attempted;					     /* a create was sent */
	unsigned seq; /* creation order in its ledger (1, 2, ...); 0: never created */
	bool started; /* ag_ledger_entry_start succeeded */
	bool torn_down;
	/* > 0 (containers): the teardown first stops it gracefully, SIGTERM and
	 * this long to exit, then SIGKILL (its exit status kept in `stop`) */
	unsigned stop_grace_ms;
	struct ag_ledger_stop stop;
	struct ag_cleanup_result cleanup; /* not_created until torn down */
};

struct ag_ledger {
	const char *key, *value; /* the run's unique label (borrowed): a lost answer */
	unsigned timeout_ms;
	/*
	 * The label names one object only (the preflight probe's and the image
	 * export's name label): after a lost answer, a container carrying it
	 * that is not the entry's is someone else's, and the entry's cleanup
	 * says unowned_not_removed rather than not_created.
	 */
	bool label_names_one;
	unsigned created; /* creates sent so far: the next entry's seq */
	struct ag_ledger_entry v[AG_LEDGER_MAX_ENTRIES];
	size_t n;
};

void ag_ledger_init(struct ag_ledger *l, const char *key, const char *value, unsigned timeout_ms);
void ag_ledger_release(struct ag_ledger *l);

/*
 * Remembers an object before it is created (name and labels borrowed,
 * labels at most AG_LEDGER_MAX_LABELS). NULL when the ledger is full or
 * the labels are too many: the caller fails closed.
 */
struct ag_ledger_entry *ag_ledger_add(struct ag_ledger *l, enum ag_ledger_kind kind,
				      const char *role, const char *name,
				      const struct ag_label_expect *labels, size_t n_labels);
/* The entry with this role, or NULL. */
const struct ag_ledger_entry *ag_ledger_find(const struct ag_ledger *l, const char *role);

/*
 * Creates the entry's object: a container from spec (POST
 * /containers/create?name=NAME, the request rendered from the spec, whose
 * name must be the entry's), or a network from net (POST /networks/create:
 * CheckDuplicate, driver bridge, EnableIPv6 false, IPAM subnet, options,
 * labels). Marks it attempted and numbers it in creation order first; its
 * id recorded the moment the daemon answers. Failures: the transport's and
 * status errors, docker.create.bad_id, docker.network.spec,
 * docker.network.bad_id. After a failure the object may exist anyway: its
 * teardown finds it by the ledger's unique label.
 */
int ag_ledger_entry_create(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e,
			   const struct ag_exec_spec *spec, const struct ag_network_spec *net,
			   struct ag_error **err);

/* POST /containers/ID/start (304, already started, is fine); WHAT names it
 * in the error. */
int ag_ledger_entry_start(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e,
			  const char *what, struct ag_error **err);

/*
 * Removes the entry's object by its id (absence verified), or, created
 * without an answered id, whatever carries the ledger's unique label and
 * is this entry's by name and labels. A container with stop_grace_ms is
 * stopped first: SIGTERM, the grace to exit, then SIGKILL. Once per entry;
 * e->cleanup says how.
 */
void ag_ledger_entry_teardown(struct ag_ledger *l, struct ag_engine *eng,
			      struct ag_ledger_entry *e);

/*
 * The teardown order: indexes into l->v, newest created first (by seq),
 * then the entries never created. Fills order[0..l->n).
 */
void ag_ledger_teardown_order(const struct ag_ledger *l, size_t order[AG_LEDGER_MAX_ENTRIES]);

/* Every entry not yet torn down, in ag_ledger_teardown_order: a network
 * goes only after the containers created on it. */
void ag_ledger_teardown(struct ag_ledger *l, struct ag_engine *eng);

#endif
