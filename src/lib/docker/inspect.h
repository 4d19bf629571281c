/*
 * inspect.h: pure interpretation of Docker's answers for the preflight.
 *
 * Nothing here runs a process: each function takes parsed JSON (from
 * docker_json) plus what AgentGuard asked for, records the facts it read
 * and appends named findings for everything that is missing, malformed,
 * zero, downgraded, contradictory or forbidden. An empty finding list
 * means the check passed. The orchestration (preflight.c) decides which
 * check a finding fails and in which order.
 */
#ifndef AG_INSPECT_H
#define AG_INSPECT_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"
#include "lib/docker/exec_spec.h"

#include <jansson.h>

/* Overall outcome (contract: supported | experimental | unavailable | unsafe). */
enum ag_pf_status {
	AG_PF_SUPPORTED = 0,
	AG_PF_EXPERIMENTAL,
	AG_PF_UNAVAILABLE,
	AG_PF_UNSAFE,
	AG_PF_STATUS__COUNT /* not a status: tests iterate to it */
};

/* Claim level attached to an outcome. */
enum ag_pf_claim {
	AG_PF_CLAIM_NONE = 0,
	AG_PF_CLAIM_LINUX_ENGINE,    /* "linux-docker-engine" */
	AG_PF_CLAIM_DESKTOP_REDUCED, /* "docker-desktop-reduced" */
	AG_PF_CLAIM__COUNT	     /* not a claim: tests iterate to it */
};

const char *ag_pf_status_name(enum ag_pf_status s);
const char *ag_pf_claim_name(enum ag_pf_claim c);

/* How one finding fails its check. */
enum ag_pf_verdict {
	AG_PF_V_UNAVAILABLE = 0, /* evidence could not be obtained */
	AG_PF_V_UNSAFE,		 /* evidence conflicts with the approved boundary */
};

struct ag_pf_finding {
	const char *control; /* static: what was examined, e.g. "memory" */
	const char *reason;  /* static token, e.g. "preflight.probe.memory" */
	enum ag_pf_verdict verdict;
	char *detail; /* sanitized, at most AG_PF_DIAGNOSTIC_MAX_BYTES */
};

struct ag_pf_findings {
	struct ag_pf_finding *v;
	size_t n, alloc;
};

#define AG_PF_FINDINGS_INIT                                                                        \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends a finding; detail is formatted, then sanitized and bounded
 * (ag_sanitize, AG_SANITIZE_ENGINE, AG_PF_DIAGNOSTIC_MAX_BYTES). */
void ag_pf_findings_add(struct ag_pf_findings *f, const char *control, enum ag_pf_verdict verdict,
			const char *reason, const char *fmt, ...) AG_PRINTF(5, 6);
/* The worst verdict (unsafe beats unavailable); only when n > 0. */
enum ag_pf_verdict ag_pf_findings_worst(const struct ag_pf_findings *f);
/* Index of the first finding with `reason`, or -1 (tests). */
ssize_t ag_pf_findings_find(const struct ag_pf_findings *f, const char *reason);
void ag_pf_findings_release(struct ag_pf_findings *f);
void ag_pf_findings_releasep(struct ag_pf_findings *f);
#define _cleanup_findings_ _cleanup_(ag_pf_findings_releasep)

/* Facts about the client and the engine read from version and info. */
struct ag_engine_facts {
	char *client_version;
	char *server_version;
	char *api_version; /* Server.ApiVersion, e.g. "1.41" */
	int api_major, api_minor;
	char *os;	     /* Server.Os */
	char *arch;	     /* Server.Arch */
	char *platform_name; /* Server.Platform.Name, may be "" */
	/* from info */
	bool have_info;
	char *operating_system; /* info.OperatingSystem */
	char *os_type;		/* info.OSType */
	char *cgroup_driver, *cgroup_version, *runtime;
	struct ag_strv runtimes; /* the names of info.Runtimes (at most 16) */
	/* their runtimeArgs, one "NAME ARG" per argument (at most 64) */
	struct ag_strv runtime_args;
	struct ag_strv security_options;
	bool desktop; /* "docker desktop" seen in either source */
	/* capability fields; *_known false when absent or not a boolean */
	bool memory_limit, memory_limit_known;
	bool pids_limit, pids_limit_known;
	bool cpu_cfs_quota, cpu_cfs_quota_known;
	bool cpu_cfs_period, cpu_cfs_period_known;
	int64_t ncpu; /* -1 when absent or not an integer */
};

void ag_engine_facts_release(struct ag_engine_facts *e);

/* `docker version --format {{json .}}`. */
void ag_inspect_version(const json_t *v, struct ag_engine_facts *e, struct ag_pf_findings *f);
/* `docker info --format {{json .}}`; cross-checks what version said. */
void ag_inspect_info(const json_t *v, struct ag_engine_facts *e, struct ag_pf_findings *f);
/* contained_execution.runtime gvisor: the engine lists runtime_name
 * (preflight.runtime.absent, unavailable), registered with no argument
 * outside the accepted ones (the platform, --network=none, --oci-seccomp;
 * preflight.runtime.args, unsafe: an argument
 * like --ignore-cgroups would drop the limits inspection shows); runc:
 * nothing to check. */
struct ag_contained;
void ag_inspect_runtime_claim(const struct ag_engine_facts *e, const struct ag_contained *ce,
			      struct ag_pf_findings *f);
/* Docker Desktop classification against the configured platform. */
void ag_inspect_platform_claim(const struct ag_engine_facts *e, enum ag_platform platform,
			       struct ag_pf_findings *f);
/* Resource-limit support reported by info (memory, pids, CPU CFS, NCPU). */
void ag_inspect_resource_support(const struct ag_engine_facts *e, struct ag_pf_findings *f);
/* Read-only root + tmpfs options need API >= 1.25. */
void ag_inspect_api_support(const struct ag_engine_facts *e, struct ag_pf_findings *f);
/* `docker network inspect <net>` (unwrapped). */
void ag_inspect_network(const json_t *v, enum ag_network net, struct ag_pf_findings *f);

/* Image identity read from `docker image inspect <pinned ref>`. */
struct ag_image_facts {
	char *local_image_id;  /* "sha256:<64 hex>" */
	char *registry_digest; /* the matching RepoDigests entry */
	char *platform;	       /* os/arch[/variant] */
	/*
	 * Image metadata the run overrides but records (issue 9, finding 10):
	 * whether Config.Entrypoint is set, and SHA-256 (hex) of its compact
	 * JSON (never its text: it may hold anything); Config.Env NAMES
	 * only, at most AG_RUN_IMAGE_ENV_NAMES_MAX, sorted, with the total.
	 */
	bool metadata_known;
	bool entrypoint_present;
	char *entrypoint_sha256; /* NULL when absent */
	struct ag_strv env_names;
	size_t env_total;
};
void ag_image_facts_release(struct ag_image_facts *i);
/*
 * Checks the inspected image against the pinned reference and reads its
 * metadata. An image whose Config.Env sets a reserved name
 * (ag_env_name_is_reserved) that AgentGuard does not itself override (the
 * four defaults) is unsafe: preflight.image.env_reserved. Env entries
 * that are not NAME=VALUE strings: preflight.image.env_malformed.
 */
void ag_inspect_image(const json_t *v, const struct ag_image_ref *ref, struct ag_image_facts *out,
		      struct ag_pf_findings *f);

/* One label a container must carry (the ledger's ownership check). */
struct ag_label_expect {
	const char *key, *value;
};

struct ag_error;

/*
 * Which container an inspection judges. It names nothing the container
 * must show (the spec says all of that); it only picks the reason
 * vocabulary of the network findings: a study container's are named by its
 * role in the study (study.gateway.*, study.agent.*, study.selftest.*),
 * every other container's preflight.probe.*.
 */
enum ag_inspect_role {
	AG_INSPECT_PREFLIGHT_PROBE = 0,
	AG_INSPECT_AGENT,
	AG_INSPECT_GATEWAY,
	AG_INSPECT_STUDY_PROBE,
};

/* What happened after the spec was rendered: facts the spec cannot know. */
struct ag_inspect_created {
	enum ag_inspect_role role;
	const char *id;	       /* the 64-hex id the create answered */
	const char *image_id;  /* the local image id the pinned reference resolved to */
	const char *connected; /* a network the container was connected to after
				  create (the gateway's outbound), or NULL */
};

/* One single-file bind mount a container must show, read-only unless rw. */
struct ag_bind_expect {
	const char *source, *target;
	bool rw;
};

/*
 * What a created container must show on inspection. Built ONLY by
 * ag_inspect_expect_from_spec() from the ag_exec_spec that rendered the
 * create request, so what was asked for and what is checked cannot drift.
 * Every pointer borrows from the spec (or the created facts): keep them
 * alive while the expectation is used.
 */
struct ag_probe_expect {
	enum ag_inspect_role role;
	const char *id;		       /* the 64-hex id the create answered */
	const char *name;	       /* spec.container_name (NULL: not checked) */
	const char *image_id;	       /* the local image id */
	const struct ag_label *labels; /* spec.labels: each present with its value */
	size_t n_labels;
	int64_t uid, gid;
	int64_t memory_bytes; /* spec.memory_limit in bytes (and MemorySwap) */
	int64_t pids_limit;
	double cpu;
	const char *entrypoint; /* spec.entrypoint, else spec.command[0] */
	const char *tmpfs_path; /* spec.tmpfs_path ("/tmp") */
	int64_t tmpfs_bytes;
	const char *workspace;	 /* spec.workspace_container_path (and WorkingDir) */
	int64_t workspace_bytes; /* size of the workspace tmpfs (no bind_source) */
	/* spec.workspace_host_path: exactly one read-write bind mount of it at
	 * `workspace` instead of a tmpfs */
	const char *bind_source;
	/* the single-file binds the spec renders (spec.probe_host_path at
	 * AG_EXEC_PROBE_PATH, the init, spec.file_binds), each exactly once and
	 * read-only unless the spec made it read-write */
	struct ag_bind_expect file_binds[AG_INSPECT_FILE_BINDS_MAX];
	size_t n_file_binds;
	/* spec.file_size_max: HostConfig.Ulimits exactly fsize soft = hard =
	 * this (0: Ulimits empty). LogConfig.Type is always "none". */
	int64_t file_size_max;
	/* network: NetworkMode, and NetworkSettings.Networks exactly these */
	enum ag_network network;
	const char *network_name; /* spec.network_name (a study network), or NULL */
	const char *networks[AG_INSPECT_NETWORKS_MAX];
	size_t n_networks;
	const char *network_alias; /* an alias the spec.network_name endpoint must carry */
	const char *ipv4_address;  /* the fixed address on that endpoint */
	const char *const *dns;	   /* HostConfig.Dns exactly these (none: empty) */
	size_t n_dns;
	bool ip_forward_off; /* Sysctls exactly net.ipv4.ip_forward=0 (else empty) */
	int64_t group_add;   /* the one supplementary group allowed (0: none) */
	/* spec.runtime: HostConfig.Runtime exactly this, and (the probe) a
	 * gVisor kernel shown from inside; NULL: the engine's default runtime */
	const char *runtime;
};

/*
 * Derives every expectation of `x` from the spec that rendered the create
 * request (validated again first, like the renderer does) plus the created
 * facts. The constants of the renderer (read-only root, no-new-privileges,
 * cap-drop ALL, no health check, private cgroupns, restart policy "no",
 * the tmpfs options) are checked by ag_inspect_container itself. Reasons:
 * every render.* reason of ag_exec_spec_validate; inspect.expect.id when
 * the id is not 64 hex; inspect.expect.networks when the connected
 * network is the one it was created on; inspect.expect.mounts when the spec
 * renders more than AG_INSPECT_FILE_BINDS_MAX file binds.
 */
int ag_inspect_expect_from_spec(const struct ag_exec_spec *spec,
				const struct ag_inspect_created *created, struct ag_probe_expect *x,
				struct ag_error **err);

/*
 * Validates `docker container inspect <id>` (unwrapped) against x. Fills
 * `inspected` (an object) with what Docker exposed, and appends one
 * finding per missing, zero, downgraded, mismatched or forbidden property
 * (all AG_PF_V_UNSAFE: a created container that cannot be shown to carry
 * the controls is outside the boundary).
 */
void ag_inspect_container(const json_t *v, const struct ag_probe_expect *x, json_t *inspected,
			  struct ag_pf_findings *f);

/* True when s is exactly 64 lowercase hex digits. */
bool ag_is_container_id(const char *s);
/* True when s is "sha256:" + 64 lowercase hex digits. */
bool ag_is_image_id(const char *s);

/*
 * Validates the static probe's stdout (src/probe/agentguard-probe.c): one
 * JSON line with the required uid/gid, workspace and /tmp writable, root
 * read-only, every capability set empty, NoNewPrivs 1, seccomp filter mode,
 * only `lo` on network none, no Docker socket, and the pids and memory
 * limits of x visible in the container's own cgroup.
 */
/*
 * Whether the probe's line (parsed) shows gVisor's kernel: uname's release
 * and version are gVisor's fixed ones (AG_GVISOR_KERNEL_*) and the root is
 * a 9p mount over a file descriptor (trans=fd), as gVisor's gofer serves
 * it. A runc container shows the host's kernel and an overlay root, and
 * cannot change either without privileges it does not have.
 */
#define AG_GVISOR_KERNEL_RELEASE "4.4.0"
#define AG_GVISOR_KERNEL_VERSION "#1 SMP Sun Jan 10 15:06:54 PST 2016"
bool ag_inspect_probe_gvisor(const json_t *v);
/* The probe's kernel facts for the evidence: {kernel_release,
 * kernel_version, root_fs, root_fs_trans_fd, gvisor}; NULL when the line
 * does not parse. */
json_t *ag_inspect_probe_runtime_proof(const char *out, size_t len, bool truncated);
void ag_inspect_probe_output(const char *out, size_t len, bool truncated,
			     const struct ag_probe_expect *x, struct ag_pf_findings *f);

#endif
