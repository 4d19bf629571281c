/*
 * cmd_study_egress.c: `agentguard study-egress` — the deterministic half of
 * the live-study egress contract (docs/study-egress.md): destination
 * policy, per-event decisions, manifests and the topology plan. Nothing
 * here calls Docker or opens a socket.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/config/config.h"
#include "lib/egress/decision.h"
#include "lib/egress/manifest.h"
#include "lib/egress/plan.h"
#include "lib/egress/policy.h"

#include <jansson.h>

static const char help[] =
    "Usage: agentguard study-egress policy validate POLICY [--json]\n"
    "       agentguard study-egress policy digest POLICY\n"
    "       agentguard study-egress decide POLICY EVENT [--json]\n"
    "       agentguard study-egress manifest validate FILE [--policy POLICY] [--json]\n"
    "       agentguard study-egress plan CONFIG --policy POLICY --trial-id ID\n"
    "                     --gateway-image REF [--gateway-dns IP] [--resolver IP]\n"
    "                     [--study-subnet CIDR] [--outbound-network NAME]\n"
    "                     [--outbound-internal] [--json] -- ARGV...\n"
    "       agentguard study-egress schema policy|manifest\n"
    "       agentguard study-egress run CONFIG --policy POLICY --trial-id ID\n"
    "                     --gateway-image REF [...] -- ARGV...   (see run --help)\n"
    "\n"
    "Live-study egress (experimental). run is a contained run behind an\n"
    "allowlisting gateway; the other subcommands decide and record: they\n"
    "never call Docker and never touch the network.\n"
    "\n"
    "  policy validate  check a destination policy (exact host:port rules) and\n"
    "                   print its normalised form and digest\n"
    "  policy digest    print only the policy digest (SHA-256, 64 hex digits)\n"
    "  decide           judge one egress event (a JSON object) against a policy:\n"
    "                   allow or deny with a named reason\n"
    "  manifest validate\n"
    "                   check an egress manifest: bounds, sanitization, fields,\n"
    "                   and that its stated completion follows from its contents;\n"
    "                   with --policy, that it was made under that policy\n"
    "  plan             print the ordered topology plan (networks, gateway, agent,\n"
    "                   start and teardown order) as docker argv, or --json\n"
    "  schema           print the JSON Schema (Draft 2020-12) of a policy or manifest\n"
    "\n"
    "Exit codes: 0 valid / allow, 1 deny (decide only), 2 invalid input or\n"
    "usage error (the reason token is printed).\n";

static json_t *error_json(const struct ag_error *err)
{
	json_t *e = json_object();
	json_object_set_new(e, "reason", json_string(err->reason));
	json_object_set_new(e, "key", err->key ? json_string(err->key) : json_null());
	json_object_set_new(e, "line", err->line ? json_integer(err->line) : json_null());
	json_object_set_new(e, "column", err->column ? json_integer(err->column) : json_null());
	json_object_set_new(e, "message", json_string(err->msg ? err->msg : ""));
	return e;
}

static json_t *file_json(const char *path)
{
	json_t *f = json_string(path); /* NULL when not UTF-8 */
	return f ? f : json_string("<non-UTF-8 path>");
}

/*
 * Prints a refusal and returns 2. The two validators answer with their own
 * document ({valid: false, file, error}) under `schema`; every other
 * command (schema NULL) prints the error line, which under --json is also
 * the agentguard.error document (docs/json-output.md).
 */
static int refuse(const char *path, const struct ag_error *err, bool as_json, const char *schema)
{
	if (as_json && schema) {
		json_t *o = json_object();
		json_object_set_new(o, "valid", json_false());
		json_object_set_new(o, "file", file_json(path));
		json_object_set_new(o, "error", error_json(err));
		ag_cli_json_print(o, schema);
	} else {
		ag_cli_print_error(err);
	}
	return AG_EXIT_CONFIG;
}

#define SCHEMA_POLICY "agentguard.study-egress-policy"
#define SCHEMA_DECISION "agentguard.study-egress-decision"
#define SCHEMA_MANIFEST "agentguard.study-egress-manifest-validate"
#define SCHEMA_PLAN "agentguard.study-egress-plan"

/* Positional args and --json / --policy; anything else is a usage error. */
struct opts {
	const char *pos[2];
	int npos;
	bool as_json;
	const char *policy;
};

static int parse_opts(const char *cmd, int argc, char **argv, int want, bool allow_policy,
		      struct opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			o->as_json = true;
		} else if (allow_policy && !strcmp(a, "--policy")) {
			if (++i >= argc)
				return ag_cli_usage(cmd, "--policy needs a file");
			o->policy = argv[i];
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage(cmd, "unknown option '%s'", a);
		} else if (o->npos >= want) {
			return ag_cli_usage(cmd, "too many arguments");
		} else {
			o->pos[o->npos++] = a;
		}
	}
	if (o->npos != want)
		return ag_cli_usage(cmd, "missing argument");
	return 0;
}

static int cmd_policy(int argc, char **argv)
{
	if (argc < 1)
		return ag_cli_usage("study-egress", "policy needs validate or digest");
	bool digest_only = !strcmp(argv[0], "digest");
	if (!digest_only && strcmp(argv[0], "validate"))
		return ag_cli_usage("study-egress", "unknown policy command");
	struct opts o;
	int rc = parse_opts("study-egress", argc - 1, argv + 1, 1, false, &o);
	if (rc)
		return rc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_egress_policy *p = NULL;
	if (ag_egress_policy_load(o.pos[0], o.pos[0], &p, &err) < 0)
		return refuse(o.pos[0], err, o.as_json && !digest_only, SCHEMA_POLICY);
	if (digest_only) {
		puts(p->digest);
	} else if (o.as_json) {
		json_t *j = json_object();
		json_object_set_new(j, "valid", json_true());
		json_object_set_new(j, "file", file_json(o.pos[0]));
		json_object_set_new(j, "digest", json_string(p->digest));
		json_object_set_new(j, "normalized", ag_egress_policy_json(p));
		ag_cli_json_print(j, SCHEMA_POLICY);
	} else {
		printf("policy valid: %zu destination rule%s, digest %s\n", p->n_rules,
		       p->n_rules == 1 ? "" : "s", p->digest);
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct ag_egress_rule *r = &p->rules[i];
			bool v6 = r->dest.ip_literal && r->dest.addr.family == 6;
			printf("  %s%s%s:%d%s\n", v6 ? "[" : "", r->dest.host, v6 ? "]" : "",
			       r->dest.port, r->test_only ? " (test only)" : "");
		}
	}
	ag_egress_policy_free(p);
	return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

static int cmd_decide(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts("study-egress", argc, argv, 2, false, &o);
	if (rc)
		return rc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_egress_policy *p = NULL;
	if (ag_egress_policy_load(o.pos[0], o.pos[0], &p, &err) < 0)
		return refuse(o.pos[0], err, o.as_json, NULL);
	static const struct ag_read_reasons why = {"egress.event.symlink",
						   "egress.event.not_regular", "egress.event.read",
						   "egress.event.size"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	json_t *j = NULL;
	if (ag_read_file_at(AT_FDCWD, o.pos[1], o.pos[1], AG_EGRESS_AUTHORITY_MAX * 4, &why, &data,
			    &len, &err) == 0) {
		json_error_t je;
		j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			ag_err(&err, AG_E_CONFIG, 0, "egress.event.json",
			       "event is not valid JSON");
	}
	struct ag_egress_event ev;
	if (!j || ag_egress_event_from_json(j, &ev, &err) < 0) {
		json_decref(j);
		ag_egress_policy_free(p);
		return refuse(o.pos[1], err, o.as_json, NULL);
	}
	struct ag_egress_decision d;
	bool allow = ag_egress_decide(p, &ev, &d);
	if (o.as_json) {
		ag_cli_json_print(ag_egress_decision_json(&d), SCHEMA_DECISION);
	} else {
		printf("%s %s\n", allow ? "allow" : "deny", d.reason);
	}
	ag_egress_event_release(&ev);
	json_decref(j);
	ag_egress_policy_free(p);
	if (fflush(stdout) != 0)
		return AG_EXIT_FAIL;
	return allow ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

static int cmd_manifest(int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "validate"))
		return ag_cli_usage("study-egress", "manifest needs validate");
	struct opts o;
	int rc = parse_opts("study-egress", argc - 1, argv + 1, 1, true, &o);
	if (rc)
		return rc;
	_cleanup_err_ struct ag_error *err = NULL;
	struct ag_egress_policy *p = NULL;
	if (o.policy && ag_egress_policy_load(o.policy, o.policy, &p, &err) < 0)
		return refuse(o.policy, err, o.as_json, NULL);
	static const struct ag_read_reasons why = {"egress.manifest.symlink",
						   "egress.manifest.not_regular",
						   "egress.manifest.read", "egress.manifest.size"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	struct ag_egress_completion c;
	if (ag_read_file_at(AT_FDCWD, o.pos[0], o.pos[0], AG_EGRESS_MANIFEST_MAX_BYTES, &why, &data,
			    &len, &err) < 0 ||
	    ag_egress_manifest_validate(data, len, p, &c, &err) < 0) {
		ag_egress_policy_free(p);
		return refuse(o.pos[0], err, o.as_json, SCHEMA_MANIFEST);
	}
	ag_egress_policy_free(p);
	if (o.as_json) {
		json_t *j = json_object();
		json_object_set_new(j, "valid", json_true());
		json_object_set_new(j, "file", file_json(o.pos[0]));
		json_t *cj = json_object();
		json_object_set_new(cj, "status", json_string(c.status));
		json_object_set_new(cj, "reason", json_string(c.reason));
		json_object_set_new(cj, "success_eligible", json_boolean(c.success_eligible));
		json_object_set_new(j, "completion", cj);
		ag_cli_json_print(j, SCHEMA_MANIFEST);
	} else {
		printf("manifest valid: completion %s (%s)\n", c.status, c.reason);
	}
	return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

/* One argv for people: words without specials printed bare, others quoted. */
static void put_word(const char *s)
{
	bool plain = *s != '\0';
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./:=,@+%",
			    *c))
			plain = false;
	if (plain) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (const char *c = s; *c; c++) {
		if (*c == '\'')
			fputs("'\\''", stdout);
		else if ((unsigned char)*c < 0x20 || *c == 0x7f)
			printf("\\x%02x", (unsigned char)*c);
		else
			putchar(*c);
	}
	putchar('\'');
}

static int cmd_plan(int argc, char **argv)
{
	const char *config = NULL, *policy = NULL, *trial = NULL, *gw = NULL, *dns = NULL;
	const char *resolver = NULL, *subnet = NULL, *outbound = NULL;
	bool as_json = false, out_internal = false;
	int boundary = -1;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			boundary = i;
			break;
		}
	if (boundary < 0)
		return ag_cli_usage("study-egress", "plan needs '--' before the agent ARGV");
	for (int i = 0; i < boundary; i++) {
		const char *a = argv[i];
		const char **slot = !strcmp(a, "--policy")	       ? &policy
				    : !strcmp(a, "--trial-id")	       ? &trial
				    : !strcmp(a, "--gateway-image")    ? &gw
				    : !strcmp(a, "--gateway-dns")      ? &dns
				    : !strcmp(a, "--resolver")	       ? &resolver
				    : !strcmp(a, "--study-subnet")     ? &subnet
				    : !strcmp(a, "--outbound-network") ? &outbound
								       : NULL;
		if (slot) {
			if (i + 1 >= boundary)
				return ag_cli_usage("study-egress", "%s needs a value", a);
			*slot = argv[++i];
		} else if (!strcmp(a, "--json")) {
			as_json = true;
		} else if (!strcmp(a, "--outbound-internal")) {
			out_internal = true;
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage("study-egress", "unknown option '%s'", a);
		} else if (config) {
			return ag_cli_usage("study-egress", "only one CONFIG may be given");
		} else {
			config = a;
		}
	}
	if (!config || !policy || !trial || !gw)
		return ag_cli_usage("study-egress",
				    "plan needs CONFIG, --policy, --trial-id and --gateway-image");
	if (boundary + 1 >= argc)
		return ag_cli_usage("study-egress", "the agent ARGV after '--' is empty");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_config_ struct ag_config *c = NULL;
	if (ag_config_load(config, &c, &err) < 0)
		return refuse(config, err, as_json, NULL);
	struct ag_egress_policy *p = NULL;
	if (ag_egress_policy_load(policy, policy, &p, &err) < 0)
		return refuse(policy, err, as_json, NULL);
	struct ag_egress_plan_inputs in = {
	    .config = c,
	    .policy = p,
	    .trial_id = trial,
	    .gateway_image = gw,
	    .gateway_dns = dns,
	    .resolver = resolver,
	    .study_subnet = subnet,
	    .outbound_network = outbound,
	    .outbound_internal = out_internal,
	    .command = (const char *const *)argv + boundary + 1,
	    .n_command = (size_t)(argc - boundary - 1),
	};
	struct ag_egress_plan plan;
	json_t *j = NULL;
	int rc = ag_egress_plan_build(&in, &plan, &err);
	if (rc == 0)
		rc = ag_egress_plan_json(&plan, &j, &err);
	ag_egress_plan_release(&plan);
	ag_egress_policy_free(p);
	if (rc < 0)
		return refuse(config, err, as_json, NULL);
	if (as_json) {
		ag_cli_json_print(j, SCHEMA_PLAN);
		return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
	} else {
		printf("# study-egress plan for trial %s (token %s)\n",
		       json_string_value(json_object_get(j, "trial_id")),
		       json_string_value(json_object_get(j, "token")));
		printf("# policy digest %s\n# plan digest %s\n",
		       json_string_value(json_object_get(j, "egress_policy_digest")),
		       json_string_value(json_object_get(j, "plan_digest")));
		static const char *const parts[] = {"start", "teardown"};
		for (size_t k = 0; k < 2; k++) {
			printf("# %s order%s\n", parts[k],
			       k ? " (always, on every exit path)" : "");
			size_t i;
			json_t *s;
			json_array_foreach(json_object_get(j, parts[k]), i, s)
			{
				printf("%s: docker", json_string_value(json_object_get(s, "step")));
				size_t a;
				json_t *w;
				json_array_foreach(json_object_get(s, "argv"), a, w)
				{
					putchar(' ');
					put_word(json_string_value(w));
				}
				putchar('\n');
			}
		}
	}
	json_decref(j);
	return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

int ag_cmd_study_egress(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(help, argc < 2 ? stderr : stdout);
		return argc < 2 ? AG_EXIT_CONFIG : AG_EXIT_PASS;
	}
	if (!strcmp(argv[1], "run"))
		return ag_cmd_study_run(argc - 1, argv + 1);
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
	const char *sub = argv[1];
	if (!strcmp(sub, "policy"))
		return cmd_policy(argc - 2, argv + 2);
	if (!strcmp(sub, "decide"))
		return cmd_decide(argc - 2, argv + 2);
	if (!strcmp(sub, "manifest"))
		return cmd_manifest(argc - 2, argv + 2);
	if (!strcmp(sub, "plan"))
		return cmd_plan(argc - 2, argv + 2);
	if (!strcmp(sub, "schema") && argc == 3 &&
	    (!strcmp(argv[2], "policy") || !strcmp(argv[2], "manifest"))) {
		bool pol = !strcmp(argv[2], "policy");
		const char *b = pol ? ag_egress_policy_schema_json : ag_egress_manifest_schema_json;
		const char *e =
		    pol ? ag_egress_policy_schema_json_end : ag_egress_manifest_schema_json_end;
		if (fwrite(b, 1, (size_t)(e - b), stdout) != (size_t)(e - b) || fflush(stdout) != 0)
			return AG_EXIT_FAIL;
		return AG_EXIT_PASS;
	}
	return ag_cli_usage("study-egress", "unknown study-egress command");
}
