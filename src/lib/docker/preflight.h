/*
 * preflight.h: the Docker capability preflight (contract: "Docker
 * Capability Preflight"; docs/preflight.md).
 *
 * An ordered list of named checks, each with a status and a sanitized
 * diagnostic, that stops at the first failure after which later checks
 * are meaningless:
 *
 *   contained_execution_config      the config asks for containment (no docker)
 *   contained_execution_contract    v1 boundary rules re-checked (no docker)
 *   docker_cli_available            verified absolute client (docker_cli)
 *   docker_daemon                   bounded `docker version` JSON
 *   engine_platform                 Server.Os linux, Arch, versions
 *   docker_info                     bounded `docker info` JSON, consistent with version
 *   platform_claim                  Docker Desktop classification vs config
 *   network_mode                    `docker network inspect none|bridge`
 *   resource_limits                 memory / pids / CPU CFS support, NCPU
 *   read_only_root_tmpfs            API >= 1.25
 *   image_identity                  pinned image present locally (never pulled)
 *   resource_control_probe          create + inspect by immutable id
 *   uid_gid_writable_path_probe     `docker start -a` of a fixed script
 *   probe_cleanup                   rm -f by id, absence verified
 *
 * The library never prints; the evidence is a jansson object that the CLI
 * (and contained-run) serialize canonically with ag_preflight_evidence_dump.
 */
#ifndef AG_PREFLIGHT_H
#define AG_PREFLIGHT_H

#include "lib/base/ag.h"
#include "lib/docker/inspect.h"

#include <jansson.h>

struct ag_config;
struct ag_docker_cli;
struct ag_error;

/* The probe's workspace (a tmpfs, as contained-run's workspace path). */
#define AG_PF_WORKSPACE "/agentguard-workspace"
/* Probe container names: this prefix + 16 random lowercase hex digits. */
#define AG_PF_NAME_PREFIX "agentguard-preflight-"
/* Owned labels of the probe container (all three must match for cleanup). */
#define AG_PF_LABEL_OWNER "agentguard.owner"
#define AG_PF_LABEL_OWNER_VALUE "preflight"
#define AG_PF_LABEL_KIND "agentguard.preflight"
#define AG_PF_LABEL_KIND_VALUE "resource-controls"
#define AG_PF_LABEL_NAME "agentguard.preflight.name"

struct ag_preflight_opts {
	/*
	 * Used only when ag_preflight_run gets cli == NULL: the client to
	 * resolve (absolute path), or NULL for the defaults (docker_cli.h).
	 */
	const char *docker_path;
	unsigned control_timeout_ms; /* 0 = AG_PF_DOCKER_TIMEOUT_MS */
	unsigned probe_timeout_ms;   /* 0 = AG_PF_PROBE_TIMEOUT_MS */
};

#define AG_PREFLIGHT_OPTS_INIT                                                                     \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

struct ag_preflight_result {
	enum ag_pf_status status;
	enum ag_pf_claim claim;
	const char *failed_check; /* static name of the first failed check, or NULL */
	const char *reason;	  /* static reason token of that failure, or NULL */
	char *diagnostic;	  /* sanitized, bounded, or NULL */
	char *local_image_id;	  /* "sha256:..." when the image check passed */
	char *registry_digest;	  /* "repo@sha256:..." when the image check passed */
	/* engine fingerprint (sanitized), NULL when unknown */
	char *client_version, *engine_version, *api_version, *os, *arch;
	char *cgroup_driver, *cgroup_version, *runtime;
	bool docker_desktop;
	const char *cleanup_status; /* static: not_created, removed, ... */
	/* The image check's facts, metadata included (entrypoint hash, ENV names). */
	struct ag_image_facts image;
	json_t *evidence;	    /* owned; see docs/preflight.md for fields */
};

void ag_preflight_result_init(struct ag_preflight_result *r);
void ag_preflight_result_release(struct ag_preflight_result *r);
void ag_preflight_result_releasep(struct ag_preflight_result *r);
#define _cleanup_preflight_result_ _cleanup_(ag_preflight_result_releasep)

/*
 * Runs the preflight for `cfg` with the verified client `cli` (NULL:
 * resolve opts->docker_path or the defaults, recorded as the
 * docker_cli_available check). `opts` may be NULL.
 *
 * Returns 0 whenever a verdict was reached, whatever it is (supported,
 * experimental, unavailable, unsafe): *res is filled, res->evidence is
 * set. Returns -1 with *err only when the preflight itself could not be
 * carried out (e.g. --docker not absolute: docker.cli.not_absolute,
 * AG_E_USAGE; an internal error). A probe container created by this call
 * is removed by its immutable id before return, in every outcome.
 */
int ag_preflight_run(const struct ag_config *cfg, const struct ag_docker_cli *cli,
		     const struct ag_preflight_opts *opts, struct ag_preflight_result *res,
		     struct ag_error **err);

/*
 * Serializes evidence canonically: sorted keys, compact, ASCII-only
 * escapes. Returns a heap string (caller frees).
 */
char *ag_preflight_evidence_dump(const json_t *evidence);

/* True for supported and experimental (the only passing outcomes). */
static inline bool ag_preflight_passed(const struct ag_preflight_result *r)
{
	return r->status == AG_PF_SUPPORTED || r->status == AG_PF_EXPERIMENTAL;
}

#endif
