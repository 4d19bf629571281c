/*
 * config.h: the typed `agentguard.yaml` (v1) and its strict loader.
 *
 * ag_config_load() reads the file without following a final symlink,
 * parses it with yaml_load (strict YAML subset), walks the node tree
 * against the key table in config.c and returns a fully typed struct with
 * every default filled in. Nothing is left as a string to interpret later.
 *
 * Errors carry file, 1-based line and column, the key path
 * (e.g. "contained_execution.environment[2].name") and a reason token
 * from the list in docs/config-reference.md. No error message contains a
 * configured value: only key names (sanitized) and the allowed forms.
 */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/config/imageref.h"

struct ag_error;

enum ag_mode { AG_MODE_BENCHMARK = 0, AG_MODE_CI };
enum ag_workdir { AG_WORKDIR_REPO_ROOT = 0, AG_WORKDIR_CONFIG_DIR };
enum ag_cmd_policy { AG_CMD_POLICY_AUDIT = 0, AG_CMD_POLICY_ENFORCE };
enum ag_watcher { AG_WATCHER_AUTO = 0, AG_WATCHER_POLLING, AG_WATCHER_DISABLED };
enum ag_sandbox_type { AG_SANDBOX_LOCAL = 0, AG_SANDBOX_DOCKER };
enum ag_network { AG_NET_NONE = 0, AG_NET_BRIDGE, AG_NET__COUNT };
enum ag_platform {
	AG_PLATFORM_LINUX_ENGINE = 0,
	AG_PLATFORM_DESKTOP_EXPERIMENTAL,
	AG_PLATFORM__COUNT
};
enum ag_severity { AG_SEV_DEFAULT = 0, AG_SEV_INFO, AG_SEV_WARNING, AG_SEV_ERROR, AG_SEV_CRITICAL };
enum ag_difficulty {
	AG_DIFF_NONE = 0,
	AG_DIFF_EASY,
	AG_DIFF_MEDIUM,
	AG_DIFF_HARD,
	AG_DIFF_ADVANCED
};
enum ag_env_source { AG_ENV_LITERAL = 0, AG_ENV_HOST };

/* Policy checks whose severity can be overridden (policy.<key>.severity). */
enum ag_check {
	AG_CHECK_DIFF_SIZE = 0,
	AG_CHECK_FORBIDDEN_PATHS,
	AG_CHECK_SCOPE_ADHERENCE,
	AG_CHECK_SECRET_SCAN,
	AG_CHECK_TEST_TAMPERING,
	AG_CHECK_TESTS_PASS,
	AG_CHECK_UNSAFE_COMMANDS,
	AG_CHECK__COUNT
};

/* Built-in secret content detectors (bit flags). */
enum ag_detector {
	AG_DET_AWS_ACCESS_KEY_ID = 1u << 0,
	AG_DET_GENERIC_API_KEY = 1u << 1,
	AG_DET_GITHUB_TOKEN = 1u << 2,
	AG_DET_NPM_TOKEN = 1u << 3,
	AG_DET_PRIVATE_KEY_HEADER = 1u << 4,
};

/* Optional integer: `set` false means absent or null. */
struct ag_opt_int {
	bool set;
	int64_t v;
};

struct ag_kv {
	char *key;
	char *value; /* agent_environment values may be secrets: never print */
};

/* agent_metadata values are scalars kept with their YAML type. */
enum ag_scalar_kind {
	AG_SCALAR_NULL,
	AG_SCALAR_BOOL,
	AG_SCALAR_INT,
	AG_SCALAR_FLOAT,
	AG_SCALAR_STR
};
struct ag_meta {
	char *key;
	enum ag_scalar_kind kind;
	bool b;
	int64_t i;
	double f;
	char *s;
};

struct ag_env_entry {
	char *name;
	enum ag_env_source source;
	char *value; /* literal only; NULL for host; never print */
	bool required;
	bool sensitive;	     /* configured or forced by a secret-like name */
	bool name_sensitive; /* the name matched the secret-like pattern */
	bool allow_sensitive;
	unsigned line, column; /* where the entry starts, for later errors */
};

/* The engine runtime of every container of a contained run (issue 24). */
enum ag_runtime { AG_RUNTIME_RUNC = 0, AG_RUNTIME_GVISOR };

struct ag_contained {
	bool present;
	enum ag_runtime runtime;
	char *runtime_name; /* gvisor: the engine's name for runsc (default "runsc"); runc: NULL */
	int version;
	enum ag_platform platform;
	enum ag_network network;
	/* image_provenance has one allowed value: digest-required */
	int64_t required_uid, required_gid;
	double cpu_limit;
	char *memory_limit; /* Docker size string exactly as configured */
	int64_t memory_bytes;
	int64_t pids_limit;
	char *tmpfs_size;
	int64_t tmpfs_bytes;
	struct ag_env_entry *env;
	size_t n_env;
};

struct ag_sandbox {
	enum ag_sandbox_type type;
	char *image;		       /* NULL when absent */
	struct ag_image_ref image_ref; /* parsed when image is set */
	char *workdir;
	enum ag_network network; /* after docker.network override */
	bool read_only;
	bool read_only_set;
	int64_t timeout_seconds;
	bool has_docker;
	double docker_cpus;  /* 0 when not set */
	char *docker_memory; /* NULL when not set */
	bool docker_read_only_set;
	bool docker_read_only;
	bool docker_network_set;
};

struct ag_secret_pattern {
	char *id;
	char *contains; /* a secret-like literal: never print */
};

struct ag_benchmark {
	bool present;
	char *id, *category, *expected_behavior, *failure_mode;
	int64_t version; /* 0 when absent */
	enum ag_difficulty difficulty;
	struct ag_strv tags;
};

struct ag_config {
	char *file; /* as the user named it */
	char *task_id, *description, *test_command;
	int64_t expected_min, expected_max;
	enum ag_mode mode;
	char *repo_template;
	struct ag_strv agent_command; /* empty when absent */
	bool agent_command_is_list;
	struct ag_strv agent_version_command;
	bool agent_version_command_is_list;
	struct ag_kv *agent_environment;
	size_t n_agent_environment;
	struct ag_meta *agent_metadata;
	size_t n_agent_metadata;
	char *agent_model, *agent_name;
	enum ag_workdir agent_workdir;
	struct ag_strv allowed_paths, forbidden_paths, test_paths, secret_patterns, unsafe_commands,
	    guard_ignore_paths;
	struct ag_benchmark benchmark;
	enum ag_cmd_policy command_policy;
	int64_t command_timeout_seconds;
	int64_t max_output_bytes;
	struct ag_contained contained;
	struct ag_opt_int max_files_changed, max_lines_added, max_lines_deleted;
	enum ag_watcher filesystem_watcher;
	enum ag_severity severity[AG_CHECK__COUNT]; /* AG_SEV_DEFAULT when not overridden */
	struct ag_sandbox sandbox;
	unsigned builtin_detectors; /* enum ag_detector bits */
	struct ag_secret_pattern *secret_content_patterns;
	size_t n_secret_content_patterns;
	char *task_prompt;	/* exactly one of prompt / prompt_file */
	char *task_prompt_file; /* relative to the config directory */
	/* workspace: in a git source ignored files stay out of the copy unless
	 * include_ignored; exclude patterns leave more out (issue 14) */
	bool workspace_include_ignored;
	struct ag_strv workspace_exclude;
	/* workspace.git: baseline (default: AgentGuard writes a repository of
	 * one commit into the copy, gitbase.h) or none */
	bool workspace_git_none;
	/* study_egress: what `study-egress run` uses when its flags do not say
	 * (docs/study-egress.md); every field NULL/false when absent */
	struct ag_study_cfg {
		bool present;
		char *policy;		/* as written: relative to the config's directory */
		char *gateway_image;	/* pinned by digest (checked here) */
		char *resolver;		/* one IPv4 or IPv6 address (checked here) */
		char *study_subnet;	/* IPv4 CIDR, /16../28 (checked here) */
		char *subnet_pool;	/* IPv4 CIDR, /8../27: where a subnet is chosen */
		char *outbound_network; /* an existing network's name */
		bool outbound_internal;
	} study;
};

/*
 * Loads and validates `path` (display name = path as given). On success
 * *out is a new config owned by the caller (ag_config_free).
 */
int ag_config_load(const char *path, struct ag_config **out, struct ag_error **err);
/* Same, from memory (tests and the fuzzer); `display` names the document. */
int ag_config_load_mem(const char *data, size_t len, const char *display, struct ag_config **out,
		       struct ag_error **err);
void ag_config_free(struct ag_config *c);

/* PATH as the config means it: as given when absolute, else in the config
 * file's directory (as the loader opens it). A heap string. */
char *ag_config_path_beside(const struct ag_config *c, const char *path);
void ag_config_freep(struct ag_config **c);
#define _cleanup_config_ _cleanup_(ag_config_freep)

/*
 * Cross-field rules that `contained-run` needs before any work (upstream
 * section 2.4): contained_execution present, sandbox.type docker, a
 * digest-pinned sandbox.image, sandbox.network equal to
 * contained_execution.network, and required_uid/gid equal to euid/egid.
 */
int ag_config_check_contained_run(const struct ag_config *c, uid_t euid, gid_t egid,
				  struct ag_error **err);

const char *ag_network_name(enum ag_network n);
const char *ag_runtime_name(enum ag_runtime r);
/* An engine runtime name as daemon.json registers it: 1..64 of
 * [a-z0-9._-], a letter or digit first (config and renderer alike). */
bool ag_runtime_name_valid(const char *r);
const char *ag_platform_name(enum ag_platform p);
const char *ag_check_key(enum ag_check c);
const char *ag_severity_name(enum ag_severity s);

#endif
