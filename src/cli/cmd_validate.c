#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/base/json.h"
#include "lib/config/config.h"

#include <inttypes.h>
#include <jansson.h>

static const char help[] =
    "Usage: agentguard validate CONFIG [--json]\n"
    "\n"
    "Check CONFIG (an agentguard.yaml) against the v1 rules: YAML hazards,\n"
    "unknown keys, types, bounds, the contained_execution block and its\n"
    "environment allowlist. The file is read without following a final\n"
    "symbolic link and must be at most 1 MiB.\n"
    "\n"
    "On success prints the effective contained settings with every default\n"
    "filled in. Errors name the file, line, column, key path and a reason\n"
    "token. Values are never printed: environment values and secret literals\n"
    "stay out of every output.\n"
    "\n"
    "Options:\n"
    "  --json      print a machine-readable result on stdout\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0 valid, 2 invalid or usage error.\n";

static json_t *strv_json(const struct ag_strv *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

static json_t *effective_json(const struct ag_config *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "task_id", json_string(c->task_id));
	json_object_set_new(o, "mode", json_string(c->mode == AG_MODE_CI ? "ci" : "benchmark"));
	json_object_set_new(o, "command_timeout_seconds", json_integer(c->command_timeout_seconds));
	json_object_set_new(o, "max_output_bytes", json_integer(c->max_output_bytes));
	json_object_set_new(
	    o, "command_policy",
	    json_string(c->command_policy == AG_CMD_POLICY_ENFORCE ? "enforce" : "audit"));
	json_object_set_new(o, "forbidden_paths", strv_json(&c->forbidden_paths));
	json_object_set_new(o, "allowed_paths", strv_json(&c->allowed_paths));
	json_object_set_new(o, "test_paths", strv_json(&c->test_paths));
	json_t *sb = json_object();
	json_object_set_new(sb, "type",
			    json_string(c->sandbox.type == AG_SANDBOX_DOCKER ? "docker" : "local"));
	json_object_set_new(sb, "image",
			    c->sandbox.image ? json_string(c->sandbox.image) : json_null());
	json_object_set_new(
	    sb, "image_pinned",
	    json_boolean(c->sandbox.image && ag_image_ref_pinned(&c->sandbox.image_ref)));
	json_object_set_new(sb, "network", json_string(ag_network_name(c->sandbox.network)));
	json_object_set_new(sb, "workdir", json_string(c->sandbox.workdir));
	json_object_set_new(sb, "timeout_seconds", json_integer(c->sandbox.timeout_seconds));
	json_object_set_new(o, "sandbox", sb);
	const struct ag_contained *ce = &c->contained;
	if (!ce->present) {
		json_object_set_new(o, "contained_execution", json_null());
		return o;
	}
	json_t *j = json_object();
	json_object_set_new(j, "version", json_integer(ce->version));
	json_object_set_new(j, "platform", json_string(ag_platform_name(ce->platform)));
	json_object_set_new(j, "claim_level",
			    json_string(ce->platform == AG_PLATFORM_DESKTOP_EXPERIMENTAL
					    ? "docker-desktop-reduced"
					    : "linux-docker-engine"));
	json_object_set_new(j, "network", json_string(ag_network_name(ce->network)));
	json_object_set_new(j, "image_provenance", json_string("digest-required"));
	json_object_set_new(j, "required_uid", json_integer(ce->required_uid));
	json_object_set_new(j, "required_gid", json_integer(ce->required_gid));
	json_object_set_new(j, "cpu_limit", json_real(ce->cpu_limit));
	json_object_set_new(j, "memory_limit", json_string(ce->memory_limit));
	json_object_set_new(j, "memory_bytes", json_integer(ce->memory_bytes));
	json_object_set_new(j, "pids_limit", json_integer(ce->pids_limit));
	json_object_set_new(j, "tmpfs_size", json_string(ce->tmpfs_size));
	json_object_set_new(j, "tmpfs_bytes", json_integer(ce->tmpfs_bytes));
	json_object_set_new(j, "runtime", json_string(ag_runtime_name(ce->runtime)));
	json_object_set_new(j, "runtime_name", ag_json_str_or_null(ce->runtime_name));
	json_object_set_new(j, "require_evidence_outside_agent_repo", json_true());
	static const char *const flags[] = {"allow_privileged", "allow_host_network",
					    "allow_docker_socket_mount", "allow_device_exposure",
					    "allow_host_namespace_sharing"};
	for (size_t i = 0; i < AG_ARRAY_SIZE(flags); i++)
		json_object_set_new(j, flags[i], json_false());
	json_t *env = json_array();
	for (size_t i = 0; i < ce->n_env; i++) {
		const struct ag_env_entry *e = &ce->env[i];
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(e->name));
		json_object_set_new(x, "source",
				    json_string(e->source == AG_ENV_HOST ? "host" : "literal"));
		json_object_set_new(x, "required", json_boolean(e->required));
		json_object_set_new(x, "sensitive", json_boolean(e->sensitive));
		json_array_append_new(env, x);
	}
	json_object_set_new(j, "environment", env);
	json_t *defaults = json_array();
	json_array_append_new(defaults, json_string("HOME"));
	json_array_append_new(defaults, json_string("LANG"));
	json_array_append_new(defaults, json_string("LC_ALL"));
	json_array_append_new(defaults, json_string("PATH"));
	json_object_set_new(j, "environment_defaults", defaults);
	json_object_set_new(o, "contained_execution", j);
	return o;
}

static void print_text(const struct ag_config *c)
{
	fputs("valid: ", stdout);
	ag_cli_put_sanitized(stdout, c->file);
	fputs("\ntask_id: ", stdout);
	ag_cli_put_sanitized(stdout, c->task_id);
	putchar('\n');
	const struct ag_contained *ce = &c->contained;
	if (!ce->present) {
		puts("contained_execution: not configured (contained-run needs it)");
		return;
	}
	printf("contained_execution v%d:\n", ce->version);
	printf("  platform:  %s (claim: %s)\n", ag_platform_name(ce->platform),
	       ce->platform == AG_PLATFORM_DESKTOP_EXPERIMENTAL ? "docker-desktop-reduced"
								: "linux-docker-engine");
	printf("  image:     ");
	ag_cli_put_sanitized(stdout, c->sandbox.image);
	printf(" (digest-required)\n");
	printf("  network:   %s\n", ag_network_name(ce->network));
	printf("  identity:  uid %" PRId64 ", gid %" PRId64 " (non-root)\n", ce->required_uid,
	       ce->required_gid);
	printf("  limits:    cpu %g, memory %s, pids %" PRId64 ", tmpfs %s\n", ce->cpu_limit,
	       ce->memory_limit, ce->pids_limit, ce->tmpfs_size);
	if (ce->runtime == AG_RUNTIME_GVISOR)
		printf("  runtime:   gvisor (engine runtime %s; proven from inside by the "
		       "preflight)\n",
		       ce->runtime_name);
	else
		puts("  runtime:   runc (the engine's default)");
	puts("  forbidden: privileged, host network, Docker socket, devices, host namespaces");
	puts("  evidence:  kept outside the agent's workspace");
	printf("  environment: HOME, LANG, LC_ALL, PATH (fixed defaults)");
	for (size_t i = 0; i < ce->n_env; i++)
		printf(", %s (%s%s%s)", ce->env[i].name,
		       ce->env[i].source == AG_ENV_HOST ? "host" : "literal",
		       ce->env[i].required ? ", required" : "",
		       ce->env[i].sensitive ? ", sensitive" : "");
	putchar('\n');
	const struct ag_study_cfg *st = &c->study;
	if (!st->present)
		return;
	puts("study_egress (study-egress run; its own options win):");
	printf("  policy:    ");
	ag_cli_put_sanitized(stdout, st->policy ? st->policy : "(not set: --policy)");
	printf("\n  gateway:   ");
	ag_cli_put_sanitized(stdout,
			     st->gateway_image ? st->gateway_image : "(not set: --gateway-image)");
	printf("\n  resolver:  ");
	ag_cli_put_sanitized(stdout, st->resolver ? st->resolver : "(none: IP-literal rules only)");
	printf("\n  subnet:    ");
	ag_cli_put_sanitized(stdout, st->study_subnet ? st->study_subnet
						      : "(chosen per run, free in 10.254.0.0/16)");
	printf("\n  outbound:  ");
	if (st->outbound_network)
		ag_cli_put_sanitized(stdout, st->outbound_network);
	else
		fputs(st->outbound_internal ? "AgentGuard's own, internal" : "AgentGuard's own",
		      stdout);
	putchar('\n');
}

int ag_cmd_validate(int argc, char **argv)
{
	const char *path = NULL;
	bool as_json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
		if (strcmp(a, "--json") == 0)
			as_json = true;
		else if (strcmp(a, "--") == 0 && i + 1 < argc && !path)
			path = argv[++i];
		else if (a[0] == '-' && a[1])
			return ag_cli_usage("validate", "unknown option '%s'", a);
		else if (path)
			return ag_cli_usage("validate", "only one CONFIG may be given");
		else
			path = a;
	}
	if (!path)
		return ag_cli_usage("validate", "missing CONFIG argument");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_config_ struct ag_config *c = NULL;
	if (ag_config_load(path, &c, &err) < 0) {
		if (as_json) {
			json_t *o = json_object();
			json_object_set_new(o, "valid", json_false());
			json_t *f = json_string(path); /* NULL when not UTF-8 */
			json_object_set_new(o, "file", f ? f : json_string("<non-UTF-8 path>"));
			json_t *e = json_object();
			json_object_set_new(e, "reason", json_string(err->reason));
			json_object_set_new(e, "key",
					    err->key ? json_string(err->key) : json_null());
			/* as in the error envelope: unknown (an I/O error) is null, not 0 */
			json_object_set_new(e, "line",
					    err->line ? json_integer(err->line) : json_null());
			json_object_set_new(e, "column",
					    err->column ? json_integer(err->column) : json_null());
			json_object_set_new(e, "message", json_string(err->msg));
			json_object_set_new(o, "error", e);
			ag_cli_json_print(o, "agentguard.validate");
		} else {
			ag_cli_print_error(err);
		}
		return AG_EXIT_CONFIG;
	}
	if (as_json) {
		json_t *o = json_object();
		json_object_set_new(o, "valid", json_true());
		json_t *f = json_string(path);
		json_object_set_new(o, "file", f ? f : json_string("<non-UTF-8 path>"));
		json_object_set_new(o, "effective", effective_json(c));
		ag_cli_json_print(o, "agentguard.validate");
	} else {
		print_text(c);
	}
	return AG_EXIT_PASS;
}
