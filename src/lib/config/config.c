#include "lib/base/ag.h"
#include "lib/config/config.h"
#include "lib/egress/decision.h"
#include "lib/egress/plan.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/size.h"
#include "lib/base/fsx.h"
#include "lib/config/env_allowlist.h"
#include "lib/config/walk.h"
#include "lib/config/yaml_load.h"

#include <inttypes.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <math.h>
#include <sys/syscall.h>

static const char *const top_keys[] = {
    "agent_command",
    "agent_environment",
    "agent_metadata",
    "agent_model",
    "agent_name",
    "agent_version_command",
    "agent_workdir",
    "allowed_paths",
    "benchmark",
    "command_policy",
    "command_timeout_seconds",
    "contained_execution",
    "description",
    "diff_limits",
    "expected_modified_files",
    "filesystem_watcher",
    "forbidden_paths",
    "guard_ignore_paths",
    "max_output_bytes",
    "mode",
    "policy",
    "repo_template",
    "sandbox",
    "secret_content_builtin_detectors",
    "secret_content_patterns",
    "secret_patterns",
    "study_egress",
    "task",
    "task_id",
    "test_command",
    "test_paths",
    "unsafe_commands",
    "workspace",
    NULL,
};
_Static_assert(AG_ARRAY_SIZE(top_keys) == 34,
	       "31 top-level keys (upstream section 2.1), `workspace` (issue 14) and "
	       "`study_egress` (issue 20)");

static const char *const check_keys[] = {
    "diff_size",      "forbidden_paths", "scope_adherence", "secret_scan",
    "test_tampering", "tests_pass",	 "unsafe_commands", NULL,
};
_Static_assert(AG_ARRAY_SIZE(check_keys) == AG_CHECK__COUNT + 1, "one key per check");
static const char *const severity_names[] = {"info", "warning", "error", "critical", NULL};
static const char *const network_names[] = {"none", "bridge", NULL};
static const char *const platform_names[] = {"linux-docker-engine", "docker-desktop-experimental",
					     NULL};
static const char *const detector_names[] = {
    "aws-access-key-id-shape", "generic-api-key-assignment", "github-token-shape",
    "npm-token-shape",	       "private-key-header",	     NULL,
};

const char *ag_network_name(enum ag_network n)
{
	return n == AG_NET_BRIDGE ? "bridge" : "none";
}

const char *ag_runtime_name(enum ag_runtime r)
{
	return r == AG_RUNTIME_GVISOR ? "gvisor" : "runc";
}

bool ag_runtime_name_valid(const char *r)
{
	size_t n = r ? strlen(r) : 0;
	if (n < 1 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool an = (r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9');
		if (!an && (i == 0 || !strchr("._-", r[i])))
			return false;
	}
	return true;
}

const char *ag_platform_name(enum ag_platform p)
{
	return p == AG_PLATFORM_DESKTOP_EXPERIMENTAL ? "docker-desktop-experimental"
						     : "linux-docker-engine";
}

const char *ag_check_key(enum ag_check c)
{
	return (unsigned)c < AG_CHECK__COUNT ? check_keys[c] : "unknown";
}

const char *ag_severity_name(enum ag_severity s)
{
	return s == AG_SEV_DEFAULT ? "default" : severity_names[s - 1];
}

/* ---- small helpers that run a sub-walk under one key ---- */

struct ctx {
	struct ag_walk w;
	struct ag_config *c;
	int dirfd; /* config directory, or -1 when loading from memory */
};

#define WITH_KEY(X, key, body)                                                                     \
	do {                                                                                       \
		size_t _saved = ag_walk_push_key(&(X)->w, (key), strlen(key));                     \
		if ((body) < 0)                                                                    \
			return -1;                                                                 \
		ag_walk_pop(&(X)->w, _saved);                                                      \
	} while (0)

static int opt_str(struct ctx *x, const struct ag_ynode *map, const char *key, char **out)
{
	const struct ag_ynode *n = ag_ynode_get(map, key);
	if (ag_ynode_is_null(n))
		return 0;
	WITH_KEY(x, key, ag_walk_str(&x->w, n, true, out));
	return 0;
}

static int opt_int(struct ctx *x, const struct ag_ynode *map, const char *key, int64_t min,
		   int64_t max, int64_t *out)
{
	const struct ag_ynode *n = ag_ynode_get(map, key);
	if (ag_ynode_is_null(n))
		return 0;
	WITH_KEY(x, key, ag_walk_int(&x->w, n, min, max, out));
	return 0;
}

static int opt_bool(struct ctx *x, const struct ag_ynode *map, const char *key, bool *out,
		    bool *set)
{
	const struct ag_ynode *n = ag_ynode_get(map, key);
	if (ag_ynode_is_null(n))
		return 0;
	WITH_KEY(x, key, ag_walk_bool(&x->w, n, out));
	if (set)
		*set = true;
	return 0;
}

static int opt_enum(struct ctx *x, const struct ag_ynode *map, const char *key,
		    const char *const *names, int *out)
{
	const struct ag_ynode *n = ag_ynode_get(map, key);
	if (ag_ynode_is_null(n))
		return 0;
	WITH_KEY(x, key, ag_walk_enum(&x->w, n, names, out));
	return 0;
}

static int opt_strlist(struct ctx *x, const struct ag_ynode *map, const char *key,
		       struct ag_strv *out)
{
	const struct ag_ynode *n = ag_ynode_get(map, key);
	WITH_KEY(x, key, ag_walk_strlist(&x->w, n, AG_CONFIG_MAX_LIST_ITEMS, out));
	return 0;
}

static int req_str(struct ctx *x, const struct ag_ynode *map, const char *key, char **out)
{
	struct ag_ynode *n = NULL;
	if (ag_walk_require(&x->w, map, key, &n) < 0)
		return -1;
	WITH_KEY(x, key, ag_walk_str(&x->w, n, true, out));
	return 0;
}

/* Docker size strings: ^[1-9][0-9]*[kKmMgG]?$ with k = 1024. */
static int parse_size(struct ag_walk *w, const struct ag_ynode *n, int64_t min, int64_t max,
		      char **text, int64_t *bytes)
{
	char *s = NULL;
	if (ag_walk_str(w, n, false, &s) < 0)
		return -1;
	int64_t v = 0;
	int rc = ag_size_parse(s, AG_SIZE_CONFIG, &v);
	if (rc == -1) {
		free(s);
		return ag_walk_fail(w, n, "config.pattern",
				    "must be a Docker size such as 512m (^[1-9][0-9]*[kKmMgG]?$)");
	}
	if (rc < 0 || v < min || v > max) {
		free(s);
		return ag_walk_fail(w, n, "config.range",
				    "must be from %" PRId64 " KiB to %" PRId64 " MiB", min / 1024,
				    max / (1024 * 1024));
	}
	*bytes = v;
	free(*text);
	*text = s;
	return 0;
}

/* ---- sections ---- */

static int load_expected(struct ctx *x, const struct ag_ynode *root)
{
	struct ag_ynode *n = NULL;
	if (ag_walk_require(&x->w, root, "expected_modified_files", &n) < 0)
		return -1;
	static const char *const keys[] = {"min", "max", NULL};
	size_t saved = ag_walk_push_key(&x->w, "expected_modified_files", 23);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	struct ag_ynode *mn = NULL, *mx = NULL;
	if (ag_walk_require(&x->w, n, "min", &mn) < 0 || ag_walk_require(&x->w, n, "max", &mx) < 0)
		return -1;
	WITH_KEY(x, "min", ag_walk_int(&x->w, mn, 0, 1000000, &x->c->expected_min));
	WITH_KEY(x, "max", ag_walk_int(&x->w, mx, 0, 1000000, &x->c->expected_max));
	if (x->c->expected_min > x->c->expected_max) {
		size_t s2 = ag_walk_push_key(&x->w, "min", 3);
		int r =
		    ag_walk_fail(&x->w, mn, "config.min_gt_max", "must not be greater than max");
		ag_walk_pop(&x->w, s2);
		return r;
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_command(struct ctx *x, const struct ag_ynode *root, const char *key,
			struct ag_strv *out, bool *is_list)
{
	const struct ag_ynode *n = ag_ynode_get(root, key);
	if (ag_ynode_is_null(n))
		return 0;
	size_t saved = ag_walk_push_key(&x->w, key, strlen(key));
	if (n->kind == AG_Y_SEQ) {
		*is_list = true;
		if (n->n == 0)
			return ag_walk_fail(&x->w, n, "config.empty_string",
					    "must be a non-empty string or a non-empty list");
		if (n->n > AG_CONFIG_MAX_LIST_ITEMS)
			return ag_walk_fail(&x->w, n, "config.too_many",
					    "must have at most %d items", AG_CONFIG_MAX_LIST_ITEMS);
		for (size_t i = 0; i < n->n; i++) {
			size_t s2 = ag_walk_push_index(&x->w, i);
			char *s = NULL;
			if (ag_walk_str(&x->w, n->values[i], true, &s) < 0)
				return -1;
			ag_strv_push_owned(out, s);
			ag_walk_pop(&x->w, s2);
		}
	} else {
		char *s = NULL;
		if (ag_walk_str(&x->w, n, true, &s) < 0)
			return -1;
		ag_strv_push_owned(out, s);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_agent_environment(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "agent_environment");
	if (ag_ynode_is_null(n))
		return 0;
	size_t saved = ag_walk_push_key(&x->w, "agent_environment", 17);
	if (ag_walk_map(&x->w, n) < 0)
		return -1;
	if (n->n > AG_CONFIG_MAX_MAP_ENTRIES)
		return ag_walk_fail(&x->w, n, "config.too_many", "must have at most %d entries",
				    AG_CONFIG_MAX_MAP_ENTRIES);
	x->c->agent_environment = ag_xcalloc(n->n, sizeof(struct ag_kv));
	for (size_t i = 0; i < n->n; i++) {
		const struct ag_ynode *k = n->keys[i];
		size_t s2 = ag_walk_push_key(&x->w, k->str, k->len);
		char *key = NULL, *val = NULL;
		if (ag_walk_str(&x->w, k, true, &key) < 0)
			return -1;
		if (ag_walk_str(&x->w, n->values[i], false, &val) < 0) {
			free(key);
			return -1;
		}
		x->c->agent_environment[i] = (struct ag_kv){key, val};
		x->c->n_agent_environment++;
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_agent_metadata(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "agent_metadata");
	if (ag_ynode_is_null(n))
		return 0;
	size_t saved = ag_walk_push_key(&x->w, "agent_metadata", 14);
	if (ag_walk_map(&x->w, n) < 0)
		return -1;
	if (n->n > AG_CONFIG_MAX_MAP_ENTRIES)
		return ag_walk_fail(&x->w, n, "config.too_many", "must have at most %d entries",
				    AG_CONFIG_MAX_MAP_ENTRIES);
	x->c->agent_metadata = ag_xcalloc(n->n, sizeof(struct ag_meta));
	for (size_t i = 0; i < n->n; i++) {
		const struct ag_ynode *k = n->keys[i], *v = n->values[i];
		size_t s2 = ag_walk_push_key(&x->w, k->str, k->len);
		struct ag_meta *m = &x->c->agent_metadata[i];
		if (ag_walk_str(&x->w, k, true, &m->key) < 0)
			return -1;
		x->c->n_agent_metadata++;
		if (v->kind != AG_Y_SCALAR)
			return ag_walk_fail(&x->w, v, "config.type",
					    "must be a scalar (string, number, boolean or null), "
					    "not %s",
					    ag_ynode_type_name(v));
		struct ag_yvalue yv;
		ag_ynode_resolve(v, &yv);
		switch (yv.type) {
		case AG_YT_NULL:
			m->kind = AG_SCALAR_NULL;
			break;
		case AG_YT_BOOL:
			m->kind = AG_SCALAR_BOOL;
			m->b = yv.b;
			break;
		case AG_YT_INT:
			if (yv.int_overflow)
				return ag_walk_fail(&x->w, v, "config.range",
						    "integer is out of range");
			m->kind = AG_SCALAR_INT;
			m->i = yv.i;
			break;
		case AG_YT_FLOAT:
			if (!isfinite(yv.f))
				return ag_walk_fail(&x->w, v, "config.range", "must be finite");
			m->kind = AG_SCALAR_FLOAT;
			m->f = yv.f;
			break;
		case AG_YT_STR:
		default:
			m->kind = AG_SCALAR_STR;
			if (ag_walk_str(&x->w, v, false, &m->s) < 0)
				return -1;
			break;
		}
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_benchmark(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "benchmark");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"id",	   "version", "category",
					   "difficulty",   "tags",    "expected_behavior",
					   "failure_mode", NULL};
	static const char *const difficulties[] = {"easy", "medium", "hard", "advanced", NULL};
	struct ag_benchmark *b = &x->c->benchmark;
	size_t saved = ag_walk_push_key(&x->w, "benchmark", 9);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	b->present = true;
	if (opt_str(x, n, "id", &b->id) < 0 || opt_str(x, n, "category", &b->category) < 0 ||
	    opt_str(x, n, "expected_behavior", &b->expected_behavior) < 0 ||
	    opt_str(x, n, "failure_mode", &b->failure_mode) < 0 ||
	    opt_strlist(x, n, "tags", &b->tags) < 0)
		return -1;
	int d = -1;
	if (opt_enum(x, n, "difficulty", difficulties, &d) < 0)
		return -1;
	b->difficulty = d < 0 ? AG_DIFF_NONE : (enum ag_difficulty)(d + 1);
	const struct ag_ynode *v = ag_ynode_get(n, "version");
	if (!ag_ynode_is_null(v)) {
		size_t s2 = ag_walk_push_key(&x->w, "version", 7);
		struct ag_yvalue yv;
		ag_ynode_resolve(v, &yv);
		if (v->kind == AG_Y_SCALAR && yv.type == AG_YT_STR) {
			/* A canonical integer string: no sign, no leading zero. */
			bool ok =
			    v->len > 0 && v->len <= 10 && v->str[0] >= '1' && v->str[0] <= '9';
			for (size_t i = 0; ok && i < v->len; i++)
				ok = v->str[i] >= '0' && v->str[i] <= '9';
			int64_t iv = 0;
			if (!ok || ag_parse_i64(v->str, &iv) < 0 || iv > AG_SMALL_INT_MAX)
				return ag_walk_fail(&x->w, v, "config.pattern",
						    "must be a positive integer or a canonical "
						    "integer string");
			b->version = iv;
		} else if (ag_walk_int(&x->w, v, 1, AG_SMALL_INT_MAX, &b->version) < 0) {
			return -1;
		}
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_command_policy(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "command_policy");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"mode", NULL};
	static const char *const modes[] = {"audit", "enforce", NULL};
	size_t saved = ag_walk_push_key(&x->w, "command_policy", 14);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	int m = 0;
	if (opt_enum(x, n, "mode", modes, &m) < 0)
		return -1;
	x->c->command_policy = (enum ag_cmd_policy)m;
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_diff_limits(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "diff_limits");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"max_files_changed", "max_lines_added",
					   "max_lines_deleted", NULL};
	struct ag_opt_int *dest[] = {&x->c->max_files_changed, &x->c->max_lines_added,
				     &x->c->max_lines_deleted};
	size_t saved = ag_walk_push_key(&x->w, "diff_limits", 11);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		const struct ag_ynode *v = ag_ynode_get(n, keys[i]);
		if (ag_ynode_is_null(v))
			continue;
		WITH_KEY(x, keys[i], ag_walk_int(&x->w, v, 0, AG_SMALL_INT_MAX, &dest[i]->v));
		dest[i]->set = true;
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

/* workspace: what the contained workspace copies (docs/workspace.md). */
static int load_workspace(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "workspace");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"exclude", "include_ignored", "git", NULL};
	static const char *const git_modes[] = {"baseline", "none", NULL};
	int git = 0;
	size_t saved = ag_walk_push_key(&x->w, "workspace", 9);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0 ||
	    opt_bool(x, n, "include_ignored", &x->c->workspace_include_ignored, NULL) < 0 ||
	    opt_strlist(x, n, "exclude", &x->c->workspace_exclude) < 0 ||
	    opt_enum(x, n, "git", git_modes, &git) < 0)
		return -1;
	x->c->workspace_git_none = git == 1;
	ag_walk_pop(&x->w, saved);
	return 0;
}

/* study_egress.KEY, when set, is an IPv4 network with a prefix in min..max
 * (REASON: a static string, the error keeps it). */
static int study_cidr(struct ctx *x, const struct ag_ynode *map, const char *key,
		      const char *reason, const char *v, int min, int max)
{
	uint32_t net;
	int pf;
	if (!v || (ag_egress_subnet_parse(v, &net, &pf) == 0 && pf >= min && pf <= max))
		return 0;
	WITH_KEY(x, key,
		 ag_walk_fail(&x->w, ag_ynode_get(map, key), reason,
			      "must be an IPv4 network A.B.C.D/N with N in %d..%d", min, max));
	return 0;
}

/* study_egress: the study's options in the config (docs/study-egress.md).
 * Each value is checked here, so a bad one names its line and key. */
static int load_study(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "study_egress");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {
	    "policy",	   "gateway_image",    "resolver",	    "study_subnet",
	    "subnet_pool", "outbound_network", "outbound_internal", NULL};
	struct ag_study_cfg *st = &x->c->study;
	size_t saved = ag_walk_push_key(&x->w, "study_egress", 12);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0 ||
	    opt_str(x, n, "policy", &st->policy) < 0 ||
	    opt_str(x, n, "gateway_image", &st->gateway_image) < 0 ||
	    opt_str(x, n, "resolver", &st->resolver) < 0 ||
	    opt_str(x, n, "study_subnet", &st->study_subnet) < 0 ||
	    opt_str(x, n, "subnet_pool", &st->subnet_pool) < 0 ||
	    opt_str(x, n, "outbound_network", &st->outbound_network) < 0 ||
	    opt_bool(x, n, "outbound_internal", &st->outbound_internal, NULL) < 0)
		return -1;
	st->present = true;
	if (st->gateway_image) {
		struct ag_image_ref ref = {0};
		struct ag_error *ie = NULL;
		bool pinned = ag_image_ref_parse(st->gateway_image, &ref, &ie) == 0 &&
			      ag_image_ref_pinned(&ref);
		ag_image_ref_release(&ref);
		ag_error_free(ie);
		if (!pinned)
			WITH_KEY(x, "gateway_image",
				 ag_walk_fail(&x->w, ag_ynode_get(n, "gateway_image"),
					      "config.study_egress.gateway_image",
					      "the gateway image must be a reference pinned by "
					      "digest (NAME@sha256:...)"));
	}
	struct ag_egress_addr a;
	if (st->resolver && ag_egress_addr_parse(st->resolver, &a) < 0)
		WITH_KEY(x, "resolver",
			 ag_walk_fail(&x->w, ag_ynode_get(n, "resolver"),
				      "config.study_egress.resolver", "must be one IP address"));
	if (study_cidr(x, n, "study_subnet", "config.study_egress.study_subnet", st->study_subnet,
		       AG_STUDY_SUBNET_PREFIX_MIN, AG_STUDY_SUBNET_PREFIX_MAX) < 0 ||
	    study_cidr(x, n, "subnet_pool", "config.study_egress.subnet_pool", st->subnet_pool,
		       AG_STUDY_POOL_PREFIX_MIN, AG_STUDY_POOL_PREFIX_MAX) < 0)
		return -1;
	if (st->outbound_network && st->outbound_internal)
		WITH_KEY(
		    x, "outbound_internal",
		    ag_walk_fail(&x->w, ag_ynode_get(n, "outbound_internal"),
				 "config.study_egress.outbound_internal",
				 "applies to AgentGuard's own outbound network only; it cannot "
				 "go with outbound_network"));
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_watcher(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "filesystem_watcher");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const modes[] = {"auto", "polling", "disabled", NULL};
	static const char *const keys[] = {"mode", NULL};
	size_t saved = ag_walk_push_key(&x->w, "filesystem_watcher", 18);
	int m = 0;
	if (n->kind == AG_Y_MAP) {
		if (ag_walk_known_keys(&x->w, n, keys) < 0 || opt_enum(x, n, "mode", modes, &m) < 0)
			return -1;
	} else if (ag_walk_enum(&x->w, n, modes, &m) < 0) {
		return -1;
	}
	x->c->filesystem_watcher = (enum ag_watcher)m;
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_policy(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "policy");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"severity", NULL};
	size_t saved = ag_walk_push_key(&x->w, "policy", 6);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, check_keys) < 0)
		return -1;
	for (int c = 0; c < AG_CHECK__COUNT; c++) {
		const struct ag_ynode *p = ag_ynode_get(n, check_keys[c]);
		if (ag_ynode_is_null(p))
			continue;
		size_t s2 = ag_walk_push_key(&x->w, check_keys[c], strlen(check_keys[c]));
		struct ag_ynode *sev = NULL;
		int s = 0;
		if (ag_walk_map(&x->w, p) < 0 || ag_walk_known_keys(&x->w, p, keys) < 0 ||
		    ag_walk_require(&x->w, p, "severity", &sev) < 0)
			return -1;
		WITH_KEY(x, "severity", ag_walk_enum(&x->w, sev, severity_names, &s));
		x->c->severity[c] = (enum ag_severity)(s + 1);
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_image(struct ctx *x, const struct ag_ynode *n, struct ag_sandbox *s)
{
	if (n->kind == AG_Y_SCALAR && memchr(n->str, '\0', n->len))
		return ag_walk_fail(&x->w, n, "config.image.control",
				    "an image reference must not contain control characters");
	if (ag_walk_str(&x->w, n, true, &s->image) < 0)
		return -1;
	struct ag_error *ie = NULL;
	if (ag_image_ref_parse(s->image, &s->image_ref, &ie) < 0) {
		const char *reason = ie->reason;
		int r = ag_walk_fail(&x->w, n, reason, "%s", ie->msg);
		ag_error_free(ie);
		return r;
	}
	return 0;
}

static int load_sandbox(struct ctx *x, const struct ag_ynode *root)
{
	struct ag_sandbox *s = &x->c->sandbox;
	s->timeout_seconds = 60;
	s->workdir = ag_xstrdup("/workspace");
	const struct ag_ynode *n = ag_ynode_get(root, "sandbox");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"type",	"image",	   "workdir", "network",
					   "read_only", "timeout_seconds", "docker",  NULL};
	static const char *const types[] = {"local", "docker", NULL};
	size_t saved = ag_walk_push_key(&x->w, "sandbox", 7);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	int t = 0, net = 0;
	if (opt_enum(x, n, "type", types, &t) < 0 ||
	    opt_enum(x, n, "network", network_names, &net) < 0)
		return -1;
	s->type = (enum ag_sandbox_type)t;
	s->network = (enum ag_network)net;
	const struct ag_ynode *img = ag_ynode_get(n, "image");
	if (!ag_ynode_is_null(img))
		WITH_KEY(x, "image", load_image(x, img, s));
	else if (s->type == AG_SANDBOX_DOCKER) {
		size_t s2 = ag_walk_push_key(&x->w, "image", 5);
		int r = ag_walk_fail(&x->w, img ? img : n, "config.missing_required",
				     "required when sandbox.type is docker");
		ag_walk_pop(&x->w, s2);
		return r;
	}
	const struct ag_ynode *wd = ag_ynode_get(n, "workdir");
	if (!ag_ynode_is_null(wd)) {
		char *w = NULL;
		WITH_KEY(x, "workdir", ag_walk_str(&x->w, wd, true, &w));
		free(s->workdir);
		s->workdir = w;
		if (w[0] != '/') {
			size_t s2 = ag_walk_push_key(&x->w, "workdir", 7);
			int r = ag_walk_fail(&x->w, wd, "config.pattern",
					     "must be an absolute container path");
			ag_walk_pop(&x->w, s2);
			return r;
		}
	}
	if (opt_bool(x, n, "read_only", &s->read_only, &s->read_only_set) < 0 ||
	    opt_int(x, n, "timeout_seconds", 1, AG_TIMEOUT_MAX_SECONDS, &s->timeout_seconds) < 0)
		return -1;
	const struct ag_ynode *d = ag_ynode_get(n, "docker");
	if (!ag_ynode_is_null(d)) {
		static const char *const dkeys[] = {"cpus", "memory", "network", "read_only", NULL};
		size_t s2 = ag_walk_push_key(&x->w, "docker", 6);
		if (ag_walk_map(&x->w, d) < 0 || ag_walk_known_keys(&x->w, d, dkeys) < 0)
			return -1;
		s->has_docker = true;
		const struct ag_ynode *cpus = ag_ynode_get(d, "cpus");
		if (!ag_ynode_is_null(cpus)) {
			size_t s3 = ag_walk_push_key(&x->w, "cpus", 4);
			struct ag_yvalue yv;
			ag_ynode_resolve(cpus, &yv);
			if (cpus->kind == AG_Y_SCALAR && yv.type == AG_YT_STR) {
				/* decimal or scientific notation, bounded */
				struct ag_ynode tmp = *cpus;
				tmp.plain = true;
				struct ag_yvalue tv;
				ag_ynode_resolve(&tmp, &tv);
				/* decimal or scientific only: no sign, no 0x/0o, no .inf */
				bool ok = cpus->len <= 32 &&
					  (tv.type == AG_YT_INT || tv.type == AG_YT_FLOAT) &&
					  cpus->len == strspn(cpus->str, "0123456789.eE+-") &&
					  cpus->str[0] >= '0' && cpus->str[0] <= '9';
				if (!ok)
					return ag_walk_fail(&x->w, cpus, "config.pattern",
							    "must be a number or a decimal string");
				yv = tv;
				if (!isfinite(yv.f) || yv.f <= 0 || yv.f > 1024)
					return ag_walk_fail(
					    &x->w, cpus, "config.range",
					    "must be a finite number above 0 and at most 1024");
				s->docker_cpus = yv.f;
			} else {
				if (ag_walk_number(&x->w, cpus, 0, 1024, &s->docker_cpus) < 0)
					return -1;
				if (s->docker_cpus <= 0)
					return ag_walk_fail(
					    &x->w, cpus, "config.range",
					    "must be a finite number above 0 and at most 1024");
			}
			ag_walk_pop(&x->w, s3);
		}
		const struct ag_ynode *mem = ag_ynode_get(d, "memory");
		if (!ag_ynode_is_null(mem)) {
			int64_t bytes = 0;
			WITH_KEY(x, "memory",
				 parse_size(&x->w, mem, 1, INT64_MAX, &s->docker_memory, &bytes));
		}
		const struct ag_ynode *dn = ag_ynode_get(d, "network");
		if (!ag_ynode_is_null(dn)) {
			WITH_KEY(x, "network", ag_walk_enum(&x->w, dn, network_names, &net));
			s->network = (enum ag_network)net;
			s->docker_network_set = true;
		}
		if (opt_bool(x, d, "read_only", &s->docker_read_only, &s->docker_read_only_set) < 0)
			return -1;
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int load_secret_patterns(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *det = ag_ynode_get(root, "secret_content_builtin_detectors");
	size_t n_det = 0;
	if (!ag_ynode_is_null(det)) {
		size_t saved = ag_walk_push_key(&x->w, "secret_content_builtin_detectors", 32);
		if (ag_walk_seq(&x->w, det) < 0)
			return -1;
		for (size_t i = 0; i < det->n; i++) {
			size_t s2 = ag_walk_push_index(&x->w, i);
			int d = 0;
			if (ag_walk_enum(&x->w, det->values[i], detector_names, &d) < 0)
				return -1;
			if (x->c->builtin_detectors & (1u << d))
				return ag_walk_fail(&x->w, det->values[i], "config.duplicate",
						    "detector is listed twice");
			x->c->builtin_detectors |= 1u << d;
			n_det++;
			ag_walk_pop(&x->w, s2);
		}
		ag_walk_pop(&x->w, saved);
	}
	const struct ag_ynode *pats = ag_ynode_get(root, "secret_content_patterns");
	if (ag_ynode_is_null(pats))
		return 0;
	static const char *const keys[] = {"id", "contains", NULL};
	size_t saved = ag_walk_push_key(&x->w, "secret_content_patterns", 23);
	if (ag_walk_seq(&x->w, pats) < 0)
		return -1;
	if (n_det + pats->n > AG_SECRET_DETECTORS_MAX)
		return ag_walk_fail(&x->w, pats, "config.secret_pattern.too_many",
				    "built-in detectors and patterns must total at most %d",
				    AG_SECRET_DETECTORS_MAX);
	x->c->secret_content_patterns = ag_xcalloc(pats->n, sizeof(struct ag_secret_pattern));
	size_t total = 0;
	for (size_t i = 0; i < pats->n; i++) {
		const struct ag_ynode *p = pats->values[i];
		size_t s2 = ag_walk_push_index(&x->w, i);
		struct ag_ynode *idn = NULL, *lit = NULL;
		if (ag_walk_map(&x->w, p) < 0 || ag_walk_known_keys(&x->w, p, keys) < 0 ||
		    ag_walk_require(&x->w, p, "id", &idn) < 0 ||
		    ag_walk_require(&x->w, p, "contains", &lit) < 0)
			return -1;
		struct ag_secret_pattern *sp = &x->c->secret_content_patterns[i];
		x->c->n_secret_content_patterns++;
		size_t s3 = ag_walk_push_key(&x->w, "id", 2);
		if (ag_walk_str(&x->w, idn, false, &sp->id) < 0)
			return -1;
		bool ok = idn->len >= 1 && idn->len <= AG_SECRET_PATTERN_ID_MAX &&
			  ((sp->id[0] >= 'a' && sp->id[0] <= 'z') ||
			   (sp->id[0] >= '0' && sp->id[0] <= '9'));
		for (size_t k = 0; ok && k < idn->len; k++) {
			char ch = sp->id[k];
			ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
			     ch == '.' || ch == '-';
		}
		if (!ok)
			return ag_walk_fail(&x->w, idn, "config.secret_pattern.id",
					    "must match ^[a-z0-9][a-z0-9_.-]*$ and be at most %d "
					    "characters",
					    AG_SECRET_PATTERN_ID_MAX);
		for (size_t k = 0; k < i; k++)
			if (strcmp(x->c->secret_content_patterns[k].id, sp->id) == 0)
				return ag_walk_fail(&x->w, idn, "config.duplicate",
						    "pattern id is used twice");
		ag_walk_pop(&x->w, s3);
		s3 = ag_walk_push_key(&x->w, "contains", 8);
		struct ag_yvalue yv;
		ag_ynode_resolve(lit, &yv);
		if (lit->kind != AG_Y_SCALAR || yv.type != AG_YT_STR)
			return ag_walk_fail(&x->w, lit, "config.type", "must be a string, not %s",
					    ag_ynode_type_name(lit));
		size_t chars = ag_utf8_chars(lit->str, lit->len);
		bool blank = true;
		for (size_t k = 0; k < lit->len; k++)
			if (!strchr(" \t", lit->str[k]))
				blank = false;
		/* The literal is secret-like: describe the rule, never the text. */
		if (chars < AG_SECRET_PATTERN_MIN_CHARS || chars > AG_SECRET_PATTERN_MAX_CHARS ||
		    lit->len > AG_SECRET_PATTERN_MAX_BYTES || blank ||
		    memchr(lit->str, '\n', lit->len) || memchr(lit->str, '\r', lit->len) ||
		    memchr(lit->str, '\0', lit->len))
			return ag_walk_fail(&x->w, lit, "config.secret_pattern.literal",
					    "must be one non-blank line of %d to %d characters "
					    "(at most %d bytes) without NUL",
					    AG_SECRET_PATTERN_MIN_CHARS,
					    AG_SECRET_PATTERN_MAX_CHARS,
					    AG_SECRET_PATTERN_MAX_BYTES);
		sp->contains = ag_xstrndup(lit->str, lit->len);
		for (size_t k = 0; k < i; k++)
			if (strcmp(x->c->secret_content_patterns[k].contains, sp->contains) == 0)
				return ag_walk_fail(&x->w, lit, "config.duplicate",
						    "the same literal is configured twice");
		total += lit->len;
		if (total > AG_SECRET_PATTERN_TOTAL_BYTES)
			return ag_walk_fail(&x->w, lit, "config.secret_pattern.total_bytes",
					    "literals exceed %d bytes in all",
					    AG_SECRET_PATTERN_TOTAL_BYTES);
		ag_walk_pop(&x->w, s3);
		ag_walk_pop(&x->w, s2);
	}
	ag_walk_pop(&x->w, saved);
	return 0;
}

/* Opens dirfd/rel beneath dirfd without following any symlink. */
static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Fallback: walk component by component, never following a link. */
	_cleanup_free_ char *copy = ag_xstrdup(rel);
	int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -1;
	char *save = copy;
	for (;;) {
		char *slash = strchr(save, '/');
		if (slash)
			*slash = '\0';
		int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			    (slash ? O_DIRECTORY : 0);
		int next = openat(cur, save, flags);
		int e = errno;
		close(cur);
		if (next < 0) {
			errno = e;
			return -1;
		}
		cur = next;
		if (!slash)
			return cur;
		save = slash + 1;
		while (*save == '/')
			save++;
	}
}

static int load_task(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_ynode *n = ag_ynode_get(root, "task");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {"prompt", "prompt_file", NULL};
	size_t saved = ag_walk_push_key(&x->w, "task", 4);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	const struct ag_ynode *p = ag_ynode_get(n, "prompt"), *pf = ag_ynode_get(n, "prompt_file");
	if (ag_ynode_is_null(p) == ag_ynode_is_null(pf))
		return ag_walk_fail(&x->w, n, "config.task.exactly_one",
				    "needs exactly one of prompt and prompt_file");
	if (!ag_ynode_is_null(p)) {
		WITH_KEY(x, "prompt", ag_walk_str(&x->w, p, true, &x->c->task_prompt));
		ag_walk_pop(&x->w, saved);
		return 0;
	}
	size_t s2 = ag_walk_push_key(&x->w, "prompt_file", 11);
	char *rel = NULL;
	if (ag_walk_str(&x->w, pf, true, &rel) < 0)
		return -1;
	x->c->task_prompt_file = rel;
	bool outside = rel[0] == '/';
	for (const char *q = rel; *q && !outside;) {
		const char *e = strchr(q, '/');
		size_t l = e ? (size_t)(e - q) : strlen(q);
		if (l == 2 && q[0] == '.' && q[1] == '.')
			outside = true;
		q += l + (e ? 1 : 0);
		if (!e)
			break;
	}
	if (outside)
		return ag_walk_fail(&x->w, pf, "config.prompt_file.outside",
				    "must be a relative path inside the config directory");
	if (x->dirfd >= 0) {
		_cleanup_close_ int fd = open_beneath(x->dirfd, rel);
		if (fd < 0) {
			if (errno == ELOOP || errno == EXDEV)
				return ag_walk_fail(&x->w, pf, "config.prompt_file.outside",
						    "must not pass through a symbolic link");
			return ag_walk_fail(&x->w, pf, "config.prompt_file.missing",
					    "cannot be opened: %s", strerror(errno));
		}
		static const struct ag_read_reasons why = {
		    "config.prompt_file.outside", "config.prompt_file.missing",
		    "config.prompt_file.missing", "config.prompt_file.too_large"};
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		struct ag_error *re = NULL;
		if (ag_read_fd(fd, "task.prompt_file", AG_PROMPT_FILE_MAX_BYTES, &why, &data, &len,
			       &re) < 0) {
			const char *reason = re->reason;
			int r = ag_walk_fail(&x->w, pf, reason, "%s", re->msg);
			ag_error_free(re);
			return r;
		}
	}
	ag_walk_pop(&x->w, s2);
	ag_walk_pop(&x->w, saved);
	return 0;
}

static int forbidden_flag(struct ctx *x, const struct ag_ynode *m, const char *key, bool must)
{
	const struct ag_ynode *n = ag_ynode_get(m, key);
	if (ag_ynode_is_null(n))
		return 0;
	bool v = must;
	WITH_KEY(x, key, ag_walk_bool(&x->w, n, &v));
	if (v != must) {
		size_t s = ag_walk_push_key(&x->w, key, strlen(key));
		int r = ag_walk_fail(&x->w, n, "config.contained.forbidden",
				     "must be %s: contained execution never allows this",
				     must ? "true" : "false");
		ag_walk_pop(&x->w, s);
		return r;
	}
	return 0;
}

static int load_contained(struct ctx *x, const struct ag_ynode *root)
{
	struct ag_contained *c = &x->c->contained;
	const struct ag_ynode *n = ag_ynode_get(root, "contained_execution");
	if (ag_ynode_is_null(n))
		return 0;
	static const char *const keys[] = {
	    "version",
	    "platform",
	    "network",
	    "image_provenance",
	    "required_uid",
	    "required_gid",
	    "cpu_limit",
	    "memory_limit",
	    "pids_limit",
	    "tmpfs_size",
	    "require_evidence_outside_agent_repo",
	    "allow_privileged",
	    "allow_host_network",
	    "allow_docker_socket_mount",
	    "allow_device_exposure",
	    "allow_host_namespace_sharing",
	    "environment",
	    "runtime",
	    "runtime_name",
	    NULL,
	};
	size_t saved = ag_walk_push_key(&x->w, "contained_execution", 19);
	if (ag_walk_map(&x->w, n) < 0 || ag_walk_known_keys(&x->w, n, keys) < 0)
		return -1;
	c->present = true;
	/* conservative v1 defaults (contract: Configuration Contract) */
	c->required_uid = c->required_gid = 1000;
	c->cpu_limit = 1.0;
	c->memory_bytes = 512LL * 1024 * 1024;
	c->pids_limit = 256;
	c->tmpfs_bytes = 256LL * 1024 * 1024;

	struct ag_ynode *v = NULL, *p = NULL;
	if (ag_walk_require(&x->w, n, "version", &v) < 0)
		return -1;
	int64_t ver = 0;
	WITH_KEY(x, "version", ag_walk_int(&x->w, v, INT64_MIN, INT64_MAX, &ver));
	if (ver != 1) {
		size_t s = ag_walk_push_key(&x->w, "version", 7);
		return ag_walk_fail(&x->w, v, "config.contained.version",
				    "must be 1 (the only contract version)");
		(void)s;
	}
	c->version = 1;
	if (ag_walk_require(&x->w, n, "platform", &p) < 0)
		return -1;
	int plat = 0;
	WITH_KEY(x, "platform", ag_walk_enum(&x->w, p, platform_names, &plat));
	c->platform = (enum ag_platform)plat;

	const struct ag_ynode *net = ag_ynode_get(n, "network");
	if (!ag_ynode_is_null(net)) {
		size_t s = ag_walk_push_key(&x->w, "network", 7);
		if (net->kind == AG_Y_SCALAR && net->len == 4 && memcmp(net->str, "host", 4) == 0)
			/* CONTRACT: properties.no_host_network */
			return ag_walk_fail(
			    &x->w, net, "config.contained.forbidden",
			    "host networking is never allowed (use none or bridge)");
		int nv = 0;
		if (ag_walk_enum(&x->w, net, network_names, &nv) < 0)
			return -1;
		c->network = (enum ag_network)nv;
		ag_walk_pop(&x->w, s);
	}
	static const char *const provenance[] = {"digest-required", NULL};
	int prov = 0;
	if (opt_enum(x, n, "image_provenance", provenance, &prov) < 0 ||
	    opt_int(x, n, "required_uid", AG_CE_UID_MIN, AG_CE_UID_MAX, &c->required_uid) < 0 ||
	    opt_int(x, n, "required_gid", AG_CE_UID_MIN, AG_CE_UID_MAX, &c->required_gid) < 0 ||
	    opt_int(x, n, "pids_limit", AG_CE_PIDS_MIN, AG_CE_PIDS_MAX, &c->pids_limit) < 0)
		return -1;
	const struct ag_ynode *cpu = ag_ynode_get(n, "cpu_limit");
	if (!ag_ynode_is_null(cpu))
		WITH_KEY(x, "cpu_limit",
			 ag_walk_number(&x->w, cpu, AG_CE_CPU_MIN, AG_CE_CPU_MAX, &c->cpu_limit));
	const struct ag_ynode *mem = ag_ynode_get(n, "memory_limit");
	if (!ag_ynode_is_null(mem))
		WITH_KEY(x, "memory_limit",
			 parse_size(&x->w, mem, AG_CE_MEMORY_MIN, AG_CE_MEMORY_MAX,
				    &c->memory_limit, &c->memory_bytes));
	const struct ag_ynode *tmpfs = ag_ynode_get(n, "tmpfs_size");
	if (!ag_ynode_is_null(tmpfs))
		WITH_KEY(x, "tmpfs_size",
			 parse_size(&x->w, tmpfs, AG_CE_TMPFS_MIN, AG_CE_TMPFS_MAX, &c->tmpfs_size,
				    &c->tmpfs_bytes));
	if (!c->memory_limit)
		c->memory_limit = ag_xstrdup("512m");
	if (!c->tmpfs_size)
		c->tmpfs_size = ag_xstrdup("256m");
	/* CONTRACT: properties.forbidden (privileged, host net, socket, devices, namespaces) */
	if (forbidden_flag(x, n, "require_evidence_outside_agent_repo", true) < 0 ||
	    forbidden_flag(x, n, "allow_privileged", false) < 0 ||
	    forbidden_flag(x, n, "allow_host_network", false) < 0 ||
	    forbidden_flag(x, n, "allow_docker_socket_mount", false) < 0 ||
	    forbidden_flag(x, n, "allow_device_exposure", false) < 0 ||
	    forbidden_flag(x, n, "allow_host_namespace_sharing", false) < 0)
		return -1;
	static const char *const runtimes[] = {"runc", "gvisor", NULL};
	int rt = 0;
	if (opt_enum(x, n, "runtime", runtimes, &rt) < 0)
		return -1;
	c->runtime = (enum ag_runtime)rt;
	const struct ag_ynode *rn = ag_ynode_get(n, "runtime_name");
	if (!ag_ynode_is_null(rn)) {
		size_t s = ag_walk_push_key(&x->w, "runtime_name", 12);
		if (c->runtime != AG_RUNTIME_GVISOR)
			return ag_walk_fail(
			    &x->w, rn, "config.contained.runtime_name",
			    "runtime_name names the engine's gVisor runtime: it needs "
			    "runtime: gvisor");
		if (rn->kind != AG_Y_SCALAR || strlen(rn->str) != rn->len ||
		    !ag_runtime_name_valid(rn->str))
			return ag_walk_fail(
			    &x->w, rn, "config.contained.runtime_name",
			    "must be an engine runtime name: 1..64 of a-z 0-9 . _ -");
		c->runtime_name = ag_xstrdup(rn->str);
		ag_walk_pop(&x->w, s);
	}
	if (c->runtime == AG_RUNTIME_GVISOR && !c->runtime_name)
		c->runtime_name = ag_xstrdup("runsc");
	/* gVisor's sandbox lives in the container's pids cgroup: about 40 host
	 * tasks idle, and several per guest process on the ptrace platform
	 * (8 background processes failed at 128). docs/contained-run.md. */
	if (c->runtime == AG_RUNTIME_GVISOR && c->pids_limit < AG_CE_GVISOR_PIDS_MIN) {
		const struct ag_ynode *pn = ag_ynode_get(n, "pids_limit");
		size_t s = ag_walk_push_key(&x->w, pn ? "pids_limit" : "runtime", pn ? 10 : 7);
		return ag_walk_fail(
		    &x->w, pn ? pn : ag_ynode_get(n, "runtime"), "config.contained.runtime_pids",
		    "with runtime: gvisor, pids_limit must be at least %d: gVisor's own "
		    "sandbox counts against it",
		    AG_CE_GVISOR_PIDS_MIN);
		(void)s;
	}
	const struct ag_ynode *env = ag_ynode_get(n, "environment");
	WITH_KEY(x, "environment", ag_env_parse(&x->w, env, c));
	ag_walk_pop(&x->w, saved);
	return 0;
}

/*
 * The static half of the contained-run rules: a config that asks for
 * containment must be runnable in it. CONTRACT: config.contained_requires
 * (sandbox.type docker, digest-pinned image, one network).
 */
static int check_contained_static(struct ctx *x, const struct ag_ynode *root)
{
	const struct ag_config *c = x->c;
	if (!c->contained.present)
		return 0;
	const struct ag_ynode *sb = ag_ynode_get(root, "sandbox");
	const struct ag_ynode *ce = ag_ynode_get(root, "contained_execution");
	const struct ag_ynode *at = ag_ynode_get(sb, "type");
	if (c->sandbox.type != AG_SANDBOX_DOCKER) {
		size_t s = ag_walk_push_key(&x->w, "sandbox.type", 12);
		return ag_walk_fail(&x->w, at ? at : (sb ? sb : ce),
				    "config.contained.sandbox_type",
				    "contained_execution requires sandbox.type: docker");
		(void)s;
	}
	/* sandbox.type docker already required sandbox.image (load_sandbox). */
	if (!ag_image_ref_pinned(&c->sandbox.image_ref)) {
		ag_walk_push_key(&x->w, "sandbox.image", 13);
		/* CONTRACT: image.digest_required */
		return ag_walk_fail(
		    &x->w, ag_ynode_get(sb, "image"), "config.contained.image_not_pinned",
		    "must be pinned by digest (name@sha256:<64 hex>): a mutable tag "
		    "is not enough for contained execution");
	}
	if (c->sandbox.network != c->contained.network) {
		const struct ag_ynode *dk = ag_ynode_get(sb, "docker");
		const struct ag_ynode *dn = ag_ynode_get(dk, "network");
		const struct ag_ynode *sn = ag_ynode_get(sb, "network");
		const char *key =
		    c->sandbox.docker_network_set ? "sandbox.docker.network" : "sandbox.network";
		ag_walk_push_key(&x->w, key, strlen(key));
		return ag_walk_fail(&x->w, c->sandbox.docker_network_set ? dn : (sn ? sn : sb),
				    "config.contained.network_mismatch",
				    "must equal contained_execution.network (%s)",
				    ag_network_name(c->contained.network));
	}
	return 0;
}

static int load_root(struct ctx *x, const struct ag_ynode *root)
{
	struct ag_config *c = x->c;
	if (root->kind != AG_Y_MAP)
		return ag_walk_fail(&x->w, root, "config.yaml.top_not_mapping",
				    "the config must be a mapping of keys, not %s",
				    ag_ynode_type_name(root));
	if (ag_walk_known_keys(&x->w, root, top_keys) < 0)
		return -1;
	c->command_timeout_seconds = 60;
	c->max_output_bytes = 200000;
	if (req_str(x, root, "task_id", &c->task_id) < 0)
		return -1;
	{
		const char *t = c->task_id;
		size_t n = strlen(t);
		bool ok = n >= 1 && n <= AG_TASK_ID_MAX &&
			  ((t[0] >= 'A' && t[0] <= 'Z') || (t[0] >= 'a' && t[0] <= 'z') ||
			   (t[0] >= '0' && t[0] <= '9'));
		for (size_t i = 1; ok && i < n; i++)
			ok = (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z') ||
			     (t[i] >= '0' && t[i] <= '9') || t[i] == '.' || t[i] == '_' ||
			     t[i] == '-';
		if (!ok) {
			ag_walk_push_key(&x->w, "task_id", 7);
			return ag_walk_fail(&x->w, ag_ynode_get(root, "task_id"), "config.pattern",
					    "must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$");
		}
	}
	if (req_str(x, root, "description", &c->description) < 0 ||
	    req_str(x, root, "test_command", &c->test_command) < 0 || load_expected(x, root) < 0)
		return -1;
	static const char *const modes[] = {"benchmark", "ci", NULL};
	static const char *const workdirs[] = {"repo_root", "config_dir", NULL};
	int mode = 0, wd = 0;
	if (opt_enum(x, root, "mode", modes, &mode) < 0)
		return -1;
	c->mode = (enum ag_mode)mode;
	const struct ag_ynode *rt = ag_ynode_get(root, "repo_template");
	if (rt) {
		if (ag_ynode_is_null(rt) && c->mode == AG_MODE_BENCHMARK) {
			ag_walk_push_key(&x->w, "repo_template", 13);
			return ag_walk_fail(&x->w, rt, "config.missing_required",
					    "required when mode is benchmark");
		}
		if (!ag_ynode_is_null(rt))
			WITH_KEY(x, "repo_template",
				 ag_walk_str(&x->w, rt, true, &c->repo_template));
	} else if (c->mode == AG_MODE_BENCHMARK) {
		ag_walk_push_key(&x->w, "repo_template", 13);
		return ag_walk_fail(&x->w, root, "config.missing_required",
				    "required when mode is benchmark (the default)");
	}
	if (load_command(x, root, "agent_command", &c->agent_command, &c->agent_command_is_list) <
		0 ||
	    load_command(x, root, "agent_version_command", &c->agent_version_command,
			 &c->agent_version_command_is_list) < 0 ||
	    load_agent_environment(x, root) < 0 || load_agent_metadata(x, root) < 0 ||
	    opt_str(x, root, "agent_model", &c->agent_model) < 0 ||
	    opt_str(x, root, "agent_name", &c->agent_name) < 0 ||
	    opt_enum(x, root, "agent_workdir", workdirs, &wd) < 0)
		return -1;
	c->agent_workdir = (enum ag_workdir)wd;
	if (opt_strlist(x, root, "allowed_paths", &c->allowed_paths) < 0 ||
	    opt_strlist(x, root, "forbidden_paths", &c->forbidden_paths) < 0 ||
	    opt_strlist(x, root, "test_paths", &c->test_paths) < 0 ||
	    opt_strlist(x, root, "secret_patterns", &c->secret_patterns) < 0 ||
	    opt_strlist(x, root, "unsafe_commands", &c->unsafe_commands) < 0 ||
	    opt_strlist(x, root, "guard_ignore_paths", &c->guard_ignore_paths) < 0)
		return -1;
	if (load_benchmark(x, root) < 0 || load_command_policy(x, root) < 0 ||
	    opt_int(x, root, "command_timeout_seconds", 1, AG_TIMEOUT_MAX_SECONDS,
		    &c->command_timeout_seconds) < 0 ||
	    opt_int(x, root, "max_output_bytes", 1, AG_OUTPUT_MAX_BYTES, &c->max_output_bytes) <
		0 ||
	    load_diff_limits(x, root) < 0 || load_watcher(x, root) < 0 ||
	    load_policy(x, root) < 0 || load_sandbox(x, root) < 0 ||
	    load_secret_patterns(x, root) < 0 || load_task(x, root) < 0 ||
	    load_contained(x, root) < 0 || load_workspace(x, root) < 0 || load_study(x, root) < 0)
		return -1;
	return check_contained_static(x, root);
}

static void ynode_freep2(struct ag_ynode **n)
{
	ag_ynode_free(*n);
}

static int load_common(const char *data, size_t len, const char *display, int dirfd,
		       struct ag_config **out, struct ag_error **err)
{
	_cleanup_(ynode_freep2) struct ag_ynode *root = NULL;
	if (ag_yaml_load(data, len, display, &root, err) < 0)
		return -1;
	_cleanup_config_ struct ag_config *c = ag_xcalloc(1, sizeof(*c));
	c->file = ag_xstrdup(display);
	struct ctx x = {.w = {.file = display, .err = err}, .c = c, .dirfd = dirfd};
	if (load_root(&x, root) < 0)
		return -1;
	*out = ag_steal_ptr(&c);
	return 0;
}

int ag_config_load_mem(const char *data, size_t len, const char *display, struct ag_config **out,
		       struct ag_error **err)
{
	return load_common(data, len, display, -1, out, err);
}

int ag_config_load(const char *path, struct ag_config **out, struct ag_error **err)
{
	static const struct ag_read_reasons why = {"config.io.symlink", "config.io.not_regular",
						   "config.io.open", "config.io.too_large"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	struct ag_error *re = NULL;
	if (ag_read_file_at(AT_FDCWD, path, path, AG_CONFIG_MAX_BYTES, &why, &data, &len, &re) <
	    0) {
		/* Keep the reason; name the file the way the user did. */
		ag_err_at(err, AG_E_CONFIG, re->reason, path, 0, 0, NULL, "%s", re->msg);
		ag_error_free(re);
		return -1;
	}
	_cleanup_free_ char *dircopy = ag_xstrdup(path);
	_cleanup_close_ int dirfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return ag_err_at(err, AG_E_CONFIG, "config.io.open", path, 0, 0, NULL,
				 "cannot open the config directory: %s", strerror(errno));
	return load_common(data, len, path, dirfd, out, err);
}

char *ag_config_path_beside(const struct ag_config *c, const char *path)
{
	if (path[0] == '/')
		return ag_xstrdup(path);
	/* the directory the loader resolves the config's own relative paths in */
	_cleanup_free_ char *dircopy = ag_xstrdup(c->file);
	return ag_xasprintf("%s/%s", dirname(dircopy), path);
}

static void strv_rel(struct ag_strv *s)
{
	ag_strv_release(s);
}

void ag_config_free(struct ag_config *c)
{
	if (!c)
		return;
	free(c->study.policy);
	free(c->study.gateway_image);
	free(c->study.resolver);
	free(c->study.study_subnet);
	free(c->study.subnet_pool);
	free(c->study.outbound_network);
	free(c->file);
	free(c->task_id);
	free(c->description);
	free(c->test_command);
	free(c->repo_template);
	strv_rel(&c->agent_command);
	strv_rel(&c->agent_version_command);
	for (size_t i = 0; i < c->n_agent_environment; i++) {
		free(c->agent_environment[i].key);
		if (c->agent_environment[i].value) {
			explicit_bzero(c->agent_environment[i].value,
				       strlen(c->agent_environment[i].value));
			free(c->agent_environment[i].value);
		}
	}
	free(c->agent_environment);
	for (size_t i = 0; i < c->n_agent_metadata; i++) {
		free(c->agent_metadata[i].key);
		free(c->agent_metadata[i].s);
	}
	free(c->agent_metadata);
	free(c->agent_model);
	free(c->agent_name);
	strv_rel(&c->allowed_paths);
	strv_rel(&c->forbidden_paths);
	strv_rel(&c->test_paths);
	strv_rel(&c->secret_patterns);
	strv_rel(&c->unsafe_commands);
	strv_rel(&c->guard_ignore_paths);
	strv_rel(&c->workspace_exclude);
	free(c->benchmark.id);
	free(c->benchmark.category);
	free(c->benchmark.expected_behavior);
	free(c->benchmark.failure_mode);
	strv_rel(&c->benchmark.tags);
	free(c->contained.memory_limit);
	free(c->contained.tmpfs_size);
	free(c->contained.runtime_name);
	for (size_t i = 0; i < c->contained.n_env; i++) {
		free(c->contained.env[i].name);
		if (c->contained.env[i].value) {
			explicit_bzero(c->contained.env[i].value,
				       strlen(c->contained.env[i].value));
			free(c->contained.env[i].value);
		}
	}
	free(c->contained.env);
	free(c->sandbox.image);
	ag_image_ref_release(&c->sandbox.image_ref);
	free(c->sandbox.workdir);
	free(c->sandbox.docker_memory);
	for (size_t i = 0; i < c->n_secret_content_patterns; i++) {
		free(c->secret_content_patterns[i].id);
		free(c->secret_content_patterns[i].contains);
	}
	free(c->secret_content_patterns);
	free(c->task_prompt);
	free(c->task_prompt_file);
	free(c);
}

void ag_config_freep(struct ag_config **c)
{
	ag_config_free(*c);
	*c = NULL;
}

int ag_config_check_contained_run(const struct ag_config *c, uid_t euid, gid_t egid,
				  struct ag_error **err)
{
	if (!c->contained.present)
		return ag_err_at(err, AG_E_CONFIG, "config.cross.no_contained", c->file, 0, 0,
				 "contained_execution",
				 "contained-run needs a contained_execution v1 block");
	/* The static rules already held at load time; re-assert them cheaply. */
	if (c->sandbox.type != AG_SANDBOX_DOCKER || !c->sandbox.image ||
	    !ag_image_ref_pinned(&c->sandbox.image_ref) ||
	    c->sandbox.network != c->contained.network)
		return ag_err_at(err, AG_E_INTERNAL, "internal.config_invariant", c->file, 0, 0,
				 "sandbox", "config invariants do not hold");
	/* CONTRACT: run.uid_gid_match (bind-mounted workspace identity) */
	if ((int64_t)euid != c->contained.required_uid)
		return ag_err_at(err, AG_E_CONFIG, "config.cross.uid_mismatch", c->file, 0, 0,
				 "contained_execution.required_uid",
				 "host bind mounts require required_uid (%" PRId64
				 ") to equal the invoking user's uid (%u)",
				 c->contained.required_uid, (unsigned)euid);
	if ((int64_t)egid != c->contained.required_gid)
		return ag_err_at(err, AG_E_CONFIG, "config.cross.gid_mismatch", c->file, 0, 0,
				 "contained_execution.required_gid",
				 "host bind mounts require required_gid (%" PRId64
				 ") to equal the invoking user's gid (%u)",
				 c->contained.required_gid, (unsigned)egid);
	return 0;
}
