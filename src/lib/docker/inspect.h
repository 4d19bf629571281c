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
#include "lib/base/strv.h"
#include "lib/config/config.h"

#include <jansson.h>

/* Overall outcome (contract: supported | experimental | unavailable | unsafe). */
enum ag_pf_status {
	AG_PF_SUPPORTED = 0,
	AG_PF_EXPERIMENTAL,
	AG_PF_UNAVAILABLE,
	AG_PF_UNSAFE,
};

/* Claim level attached to an outcome. */
enum ag_pf_claim {
	AG_PF_CLAIM_NONE = 0,
	AG_PF_CLAIM_LINUX_ENGINE,    /* "linux-docker-engine" */
	AG_PF_CLAIM_DESKTOP_REDUCED, /* "docker-desktop-reduced" */
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

/* Appends a finding; detail is formatted, then sanitized and bounded. */
void ag_pf_findings_add(struct ag_pf_findings *f, const char *control, enum ag_pf_verdict verdict,
			const char *reason, const char *fmt, ...) AG_PRINTF(5, 6);
/* The worst verdict (unsafe beats unavailable); only when n > 0. */
enum ag_pf_verdict ag_pf_findings_worst(const struct ag_pf_findings *f);
/* Index of the first finding with `reason`, or -1 (tests). */
ssize_t ag_pf_findings_find(const struct ag_pf_findings *f, const char *reason);
void ag_pf_findings_release(struct ag_pf_findings *f);
void ag_pf_findings_releasep(struct ag_pf_findings *f);
#define _cleanup_findings_ _cleanup_(ag_pf_findings_releasep)

/*
 * Sanitizes untrusted text (docker stderr, fields) for diagnostics and
 * evidence: control characters become spaces and non-ASCII bytes '?';
 * Docker endpoints (unix://, tcp://, npipe://, ssh://, fd://, http(s)://)
 * become <docker-endpoint>; absolute paths with two or more components
 * become <path>; values of NAME=value assignments with an upper-case NAME
 * become <redacted>; whitespace is collapsed; the result is cut to
 * AG_PF_DIAGNOSTIC_MAX_BYTES. Returns a new heap string.
 */
char *ag_pf_sanitize(const char *s, size_t len);

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

/* One label a container must carry. */
struct ag_label_expect {
	const char *key, *value;
};

/* What the probe container must show on inspection. */
struct ag_probe_expect {
	const char *id;	      /* the 64-hex id docker create printed */
	const char *name;     /* agentguard-preflight-<16 hex> */
	const char *owner;    /* agentguard.owner label value ("preflight") */
	const char *kind;     /* agentguard.preflight label value */
	const char *image_id; /* local image id from image inspect */
	int64_t uid, gid;
	int64_t memory_bytes;
	int64_t pids_limit;
	double cpu;
	int64_t tmpfs_bytes;	 /* size of /tmp */
	int64_t workspace_bytes; /* size of the workspace tmpfs */
	const char *workspace;	 /* "/agentguard-workspace" */
	enum ag_network network;
	/*
	 * contained-run's agent container: when labels is set, exactly these
	 * labels are required instead of the preflight owner/kind/name triple;
	 * when bind_source is set, the workspace must be exactly one read-write
	 * bind mount of bind_source at `workspace` instead of a tmpfs.
	 */
	const struct ag_label_expect *labels;
	size_t n_labels;
	const char *bind_source;
	/* the preflight probe: its static binary, bind-mounted read-only at
	 * AG_EXEC_PROBE_PATH (exactly one such mount, nothing else) */
	const char *probe_source;
	/* the contained agent: its static init, bind-mounted read-only at
	 * AG_EXEC_INIT_PATH (exactly one such mount) */
	const char *init_source;
	/* a live study: the user-defined network NetworkMode must name instead
	 * of `network`, and the one supplementary group allowed (0: none) */
	const char *network_name;
	int64_t group_add;
};

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
void ag_inspect_probe_output(const char *out, size_t len, bool truncated,
			     const struct ag_probe_expect *x, struct ag_pf_findings *f);

#endif
