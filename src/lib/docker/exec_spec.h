/*
 * exec_spec.h: the typed Docker execution spec of a contained agent and
 * its renderer into a deterministic docker argv.
 *
 * The spec has a field for every property the contract lets vary and no
 * field at all for privileged mode, devices, sockets, host namespaces,
 * extra mounts, capabilities or raw flag strings: the renderer cannot
 * emit what it cannot represent. Fixed properties (no-new-privileges,
 * cap-drop ALL, read-only root, the tmpfs options) are constants of the
 * renderer. ag_render_argv() re-validates every field it renders, so a
 * spec built by hand is held to the same rules as one built from config.
 *
 * Ownership: a spec BORROWS every string and array it points to (from the
 * config and the caller's inputs); keep them alive while the spec is used.
 *
 * The rendered argv (docs/docker-argv.md has the full grammar):
 *   run --rm | create
 *   [--name NAME] --network none|bridge|NET [--network-alias A] [--ip IP]
 *   (--dns IP)... [--sysctl net.ipv4.ip_forward=0]
 *   --security-opt no-new-privileges
 *   --cap-drop ALL --pids-limit N --memory SIZE --memory-swap SIZE --cpus X
 *   --read-only --no-healthcheck
 *   --tmpfs TMP:rw,noexec,nosuid,nodev,size=S,uid=U,gid=G,mode=700
 *   (--mount type=bind,source=HOST,target=WS | --tmpfs WS:rw,noexec,...)
 *   --workdir WS --user U:G [--group-add G] (--env NAME=VALUE)...
 *   [--mount type=bind,source=INIT,target=/agentguard-init,readonly]
 *   (--entrypoint PATH | --entrypoint=CHILD-ARGV[0])
 *   (--label KEY=VALUE)... -- IMAGE
 *   (CHILD-ARGV... | CHILD-ARGV[1]... | SECONDS -- CHILD-ARGV...)
 * (with an init, --entrypoint is /agentguard-init and the image is followed
 * by the deadline, "--" and the whole child argv)
 * It is the argument list AFTER the docker executable: element 0 is "run"
 * or "create", never "docker".
 */
#ifndef AG_EXEC_SPEC_H
#define AG_EXEC_SPEC_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"

#include <jansson.h>

struct ag_error;

enum ag_render_mode {
	AG_RENDER_RUN = 0, /* "run --rm ..." */
	AG_RENDER_CREATE,  /* "create ..." (no --rm: the caller removes by id) */
};

struct ag_label {
	const char *key;   /* ^agentguard\.[a-z0-9.-]+$, <= AG_LABEL_KEY_MAX */
	const char *value; /* ^[A-Za-z0-9._:-]{1,128}$ */
};

/* The container paths contained-run uses. */
#define AG_EXEC_WORKSPACE_PATH "/agentguard-workspace"
#define AG_EXEC_TMPFS_PATH "/tmp"
/* Where the preflight's static probe is bind-mounted (read-only). */
#define AG_EXEC_PROBE_PATH "/agentguard-probe"
/* Where the agent's static init is bind-mounted (read-only): with an init,
 * the entrypoint is `AG_EXEC_INIT_PATH SECONDS -- ARGV...` (src/init/). */
#define AG_EXEC_INIT_PATH "/agentguard-init"
/* A study agent whose policy injects a credential: the trial CA (and the
 * host's bundle) bound read-only here, named by SSL_CERT_FILE and the
 * other CA variables (docs/study-egress.md "Credential injection"). */
#define AG_EXEC_CA_PATH "/agentguard-trial-ca.pem"
/* The agent's variables that name it: reserved names a config can never
 * set; the renderer accepts them only with ca_host_path, and only with
 * exactly AG_EXEC_CA_PATH as their value. */
#define AG_EXEC_CA_VARS                                                                            \
	"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",            \
	    "CODEX_CA_CERTIFICATE"
/* The init's own deadline bound (src/init/agentguard-init.c, same value). */
#define AG_EXEC_INIT_DEADLINE_MAX 90000

/* One host file bind-mounted on its own (exec_spec.file_binds). */
struct ag_exec_file_bind {
	const char *host_path;	    /* an existing regular file of AgentGuard's */
	const char *container_path; /* strictly inside workspace_container_path */
	bool read_only;
};

struct ag_exec_spec {
	const char *image; /* digest-pinned reference */
	enum ag_network network;
	int64_t uid, gid; /* >= 1 */
	double cpu_limit;
	const char *memory_limit; /* Docker size string; --memory-swap gets the same */
	int64_t pids_limit;
	const char *tmpfs_path; /* container path of the scratch tmpfs ("/tmp") */
	const char *tmpfs_size; /* Docker size string */
	/* Workspace: a bind mount of workspace_host_path, or (NULL) a tmpfs. */
	const char *workspace_host_path;
	const char *workspace_container_path;
	const char *workspace_tmpfs_size; /* NULL: tmpfs_size */
	const char *container_name;	  /* NULL: no --name */
	/* The preflight probe only: a host file bind-mounted read-only at
	 * AG_EXEC_PROBE_PATH (its entrypoint). NULL for every other container. */
	const char *probe_host_path;
	/* The contained agent only: a host file bind-mounted read-only at
	 * AG_EXEC_INIT_PATH, the entrypoint, which runs the command as its child
	 * and kills everything at init_deadline_seconds (1..AG_EXEC_INIT_DEADLINE_MAX).
	 * NULL for every other container; excludes probe_host_path and entrypoint. */
	const char *init_host_path;
	int64_t init_deadline_seconds;
	/* A study agent with credential injection only: a host file bound
	 * read-only at AG_EXEC_CA_PATH. NULL for every other container. */
	const char *ca_host_path;
	/* NULL: command[0] is the entrypoint (the argv runs exactly, never the image's) */
	const char *entrypoint;
	/*
	 * Configured environment, "NAME=VALUE", any order (the renderer sorts
	 * by name). The four fixed defaults (ag_env_defaults) are always
	 * added by the renderer and cannot be overridden: a configured
	 * reserved name is refused.
	 */
	const char *const *env;
	size_t n_env;
	const struct ag_label *labels;
	size_t n_labels;
	/* The child argv, verbatim: non-empty, argv[0] non-empty. */
	const char *const *command;
	size_t n_command;
	/*
	 * The live-study topology only (all unset for contained-run): a
	 * user-defined network AgentGuard owns instead of `network`, with an
	 * optional alias and fixed IPv4 address on it, the DNS servers the
	 * container gets (IP addresses, at least one: never the engine's
	 * forwarding default), the one sysctl a study gateway carries
	 * (net.ipv4.ip_forward=0), and one supplementary group (the gateway
	 * writes its evidence into a directory of the invoking user's group).
	 * Nothing else can be said: no capabilities, extra hosts, ports,
	 * links or other sysctls.
	 */
	const char *network_name;  /* ^agentguard-[a-z0-9][a-z0-9_.-]{0,62}$ */
	const char *network_alias; /* ^[a-z0-9][a-z0-9-]{0,62}$ */
	const char *ipv4_address;
	const char *const *dns;
	size_t n_dns;
	bool ip_forward_off;
	int64_t group_add; /* 0: none */
	/*
	 * The study gateway only: host files bind-mounted one by one inside a
	 * tmpfs workspace (workspace_host_path NULL), so the read-write ones
	 * are the only places the container can write on the host's disk, and
	 * the size every file it writes can reach (RLIMIT_FSIZE as the
	 * engine's fsize ulimit, soft = hard: it cannot raise it without
	 * CAP_SYS_RESOURCE). At most AG_EXEC_FILE_BINDS_MAX binds; 0: none.
	 * Every container's output reaches AgentGuard over its attach stream
	 * only: the renderer always sets the log driver "none", so nothing a
	 * container prints is kept on the host's disk by the engine.
	 */
	const struct ag_exec_file_bind *file_binds;
	size_t n_file_binds;
	int64_t file_size_max; /* bytes, AG_EXEC_FSIZE_MIN..AG_EXEC_FSIZE_MAX; 0: unlimited */
	/* contained_execution.runtime gvisor: the engine runtime that runs
	 * gVisor (HostConfig.Runtime, --runtime); NULL: the engine's default
	 * (runc). ^[a-z0-9][a-z0-9._-]{0,63}$ */
	const char *runtime;
};

/* What contained-run (or render) adds to the validated config. */
struct ag_exec_inputs {
	const char *workspace_host_path; /* NULL: tmpfs workspace */
	const char *container_name;	 /* NULL: none */
	const char *probe_host_path;	 /* NULL: none (the preflight probe only) */
	const char *init_host_path;	 /* NULL: none (the contained agent only) */
	int64_t init_deadline_seconds;	 /* with init_host_path */
	const char *ca_host_path;	 /* NULL: none (a study agent with injection only) */
	const char *entrypoint;		 /* NULL: none */
	const char *const *env;		 /* resolved "NAME=VALUE" entries */
	size_t n_env;
	const struct ag_label *labels;
	size_t n_labels;
	const char *const *command;
	size_t n_command;
};

/*
 * Builds the spec from a loaded config (contained_execution present and
 * sandbox.image pinned, which ag_config_load already enforces) and the
 * inputs, then validates it (same checks as ag_render_argv). Workspace
 * and tmpfs container paths are AG_EXEC_WORKSPACE_PATH and
 * AG_EXEC_TMPFS_PATH. Reasons: render.config.not_contained plus every
 * render.* reason of ag_exec_spec_validate.
 */
int ag_exec_spec_from_config(const struct ag_config *c, const struct ag_exec_inputs *in,
			     struct ag_exec_spec *out, struct ag_error **err);

/*
 * Checks every field. AG_E_CONFIG with one of these reasons:
 *   render.image.option_like render.image.invalid render.image.not_pinned
 *   render.network.invalid render.uid.invalid render.gid.invalid
 *   render.cpu.invalid render.memory.invalid render.pids.invalid
 *   render.tmpfs.size_invalid
 *   render.host_path.not_absolute render.host_path.invalid_char
 *   render.host_path.not_normalized render.host_path.root
 *   render.path.invalid render.path.forbidden render.path.overlap
 *   render.name.invalid
 *   render.label.key_invalid render.label.value_invalid
 *   render.label.duplicate render.label.too_many
 *   render.env.malformed render.env.name_invalid render.env.reserved
 *   render.env.duplicate render.env.value_invalid render.env.too_many
 *   render.env.total
 *   render.argv.empty render.argv.first_empty render.argv.too_long
 *   render.network.name_invalid render.network.alias_invalid
 *   render.network.ip_invalid render.network.dns_invalid
 *   render.network.study_only (a study field without network_name)
 *   render.init.invalid (an init with a probe or an entrypoint, or a
 *   deadline outside 1..AG_EXEC_INIT_DEADLINE_MAX)
 */
int ag_exec_spec_validate(const struct ag_exec_spec *s, struct ag_error **err);

/*
 * Validates s and appends the argv (see the header comment) to *out,
 * which should be empty. On failure *out is left as it was.
 */
int ag_render_argv(const struct ag_exec_spec *s, enum ag_render_mode mode, struct ag_strv *out,
		   struct ag_error **err);

/*
 * The same spec as an Engine API create request (Config with HostConfig;
 * the name goes in the query). Validates s first. *out is a new object.
 */
int ag_render_create_request(const struct ag_exec_spec *s, json_t **out, struct ag_error **err);

/* "--cpus" value: integer-valued -> "2"; else up to 6 decimals, trailing
 * zeros trimmed ("1.5", "0.333333"). Returns a heap string. */
char *ag_render_cpus(double cpus);

#endif
