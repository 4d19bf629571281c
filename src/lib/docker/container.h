/*
 * container.h: one AgentGuard-owned container, bound to the immutable id
 * Docker returned and to owner labels, from create to verified absence.
 *
 * Cleanup never selects a container by name alone: every step acts on the
 * 64-hex id, and the id is acted on only while inspection shows our name
 * and every owner label (CONTRACT: cleanup.identity_bound).
 */
#ifndef AG_CONTAINER_H
#define AG_CONTAINER_H

#include "lib/base/ag.h"
#include "lib/base/proc.h"
#include "lib/base/strv.h"
#include "lib/docker/inspect.h"

#include <jansson.h>

struct ag_docker_cli;
struct ag_error;

/* Who a container must be to be ours. */
struct ag_container_owner {
	const char *name; /* container name without the leading '/' */
	const struct ag_label_expect *labels;
	size_t n_labels;
};

/*
 * `docker container inspect --format <fields> -- WHAT`: 1 absent ("no such
 * container" and no object), 0 present (*obj set when obj != NULL, owned by
 * the caller), -1 ambiguous (timeout, malformed or contradictory answer).
 * The object holds Id, Name, Created, Image, Config.User, Config.Labels,
 * Config.Healthcheck, HostConfig, Mounts and State only: never the command or environment.
 */
int ag_container_lookup(const struct ag_docker_cli *cli, const char *what, unsigned timeout_ms,
			json_t **obj);

/*
 * Adds to *names the anonymous volumes (Mounts of type volume, named by 64
 * hex digits) of an inspected container. -1 when Mounts is malformed, a
 * volume mount is not anonymous, or there are more than
 * AG_RUN_CONTAINER_VOLUMES_MAX.
 */
int ag_container_volumes(const json_t *v, struct ag_strv *names);
/* `docker volume inspect`: 1 absent, 0 present, -1 ambiguous. */
int ag_volume_lookup(const struct ag_docker_cli *cli, const char *name, unsigned timeout_ms);
/*
 * True when every named volume is verified absent; one still present (a
 * `rm -v` that left it) is removed by that name once, then checked again.
 */
bool ag_volumes_gone(const struct ag_docker_cli *cli, const struct ag_strv *names,
		     unsigned timeout_ms);

/* True when the inspected object has this id, our name and every label. */
bool ag_container_owned(const json_t *v, const char *id, const struct ag_container_owner *o);

/*
 * `docker create ARGV...` (argv from ag_render_argv in CREATE mode, which
 * starts with "create"). On success *id is the 64-hex id Docker printed
 * (exactly one line on stdout). Failures: AG_E_DOCKER with
 * docker.create.failed or docker.create.bad_id; a diagnostic is never
 * copied from Docker's output.
 */
int ag_container_create(const struct ag_docker_cli *cli, const struct ag_strv *argv,
			unsigned timeout_ms, char **id, struct ag_error **err);

/* Cleanup outcomes (contract: Containment Evidence, cleanup states). */
enum ag_cleanup_state {
	AG_CLEANUP_NOT_CREATED = 0,
	AG_CLEANUP_REMOVED,
	AG_CLEANUP_ALREADY_ABSENT,
	AG_CLEANUP_CLEANLY_TERMINATED,
	AG_CLEANUP_FORCE_KILLED,
	AG_CLEANUP_INCOMPLETE,		   /* "cleanup_incomplete" */
	AG_CLEANUP_VERIFICATION_UNAVAILABLE,
};

const char *ag_cleanup_state_name(enum ag_cleanup_state s);
/* removed, already_absent, cleanly_terminated, force_killed, not_created */
bool ag_cleanup_state_complete(enum ag_cleanup_state s);

struct ag_cleanup_result {
	enum ag_cleanup_state state;
	bool attempted;
	bool liveness_verified; /* absence confirmed by inspection */
	const char *message;	/* static, sanitized */
};

/*
 * The cleanup state machine, always by id: inspect (learning the
 * container's anonymous volumes); if running, `docker stop --time 2`;
 * inspect; if still running, `docker kill`; inspect; `docker rm -v`;
 * inspect must say absent, and so must `docker volume inspect` of each
 * anonymous volume (else cleanup_incomplete). A container that stops being ours (name or
 * labels differ) is never touched: verification_unavailable.
 */
void ag_container_cleanup(const struct ag_docker_cli *cli, const char *id,
			  const struct ag_container_owner *owner, unsigned timeout_ms,
			  struct ag_cleanup_result *out);

/* Told about each container ag_container_cleanup_labelled acted on. */
typedef void (*ag_cleanup_each_fn)(const char *id, const struct ag_cleanup_result *r,
				   void *data);

/*
 * Cleans, each by its own id, every container that carries label KEY=VALUE,
 * with `owner` checked before any action (ag_container_cleanup). Returns -1
 * when the containers cannot be listed; otherwise 0 with *worst the first
 * incomplete result (or the last one; not_created when there were none) and
 * *removed the count actually removed. `each` may be NULL.
 */
int ag_container_cleanup_labelled(const struct ag_docker_cli *cli, const char *key,
				  const char *value, const struct ag_container_owner *owner,
				  unsigned timeout_ms, ag_cleanup_each_fn each, void *data,
				  struct ag_cleanup_result *worst, size_t *removed);

/*
 * Lists the ids of containers carrying label KEY=VALUE (`docker ps -a
 * --filter label=KEY=VALUE --no-trunc --format {{.ID}}`), bounded to
 * AG_RUN_RESIDUE_MAX ids. -1 when the answer is unavailable or malformed.
 */
int ag_container_list_labelled(const struct ag_docker_cli *cli, const char *key,
			       const char *value, unsigned timeout_ms, struct ag_strv *ids);

#endif
