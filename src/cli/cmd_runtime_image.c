/*
 * cmd_runtime_image.c: `agentguard runtime-image ...`, the stage-1 runtime
 * image tooling (docs/runtime-images.md). Parsing and printing only; the
 * work is in src/lib/images.
 */
#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/docker/engine.h"
#include "lib/images/images.h"

#include <fcntl.h>
#include <jansson.h>
#include <locale.h>
#include <time.h>

static const char help[] =
    "Usage: agentguard runtime-image COMMAND ...\n"
    "\n"
    "Stage-1 runtime images: the egress gateway and the agent images (Codex CLI,\n"
    "Claude Code), built by scripts/runtime-images from pinned inputs. Nothing\n"
    "here publishes an\n"
    "image or claims a live study ran.\n"
    "\n"
    "  identity IMAGE --role gateway|agent [--json] [--docker-socket PATH]\n"
    "      canonical rootfs digest (exported filesystem, members sorted, mtimes\n"
    "      excluded), canonical runtime config and canonical image identity\n"
    "  verify-inputs --lock FILE [--agent codex|claude-code]\n"
    "                [--codex TGZ --codex-linux-x64 TGZ |\n"
    "                 --claude-code TGZ --claude-code-linux-x64 TGZ]\n"
    "      the agent's lock (codex unless --agent or the tarball options say)\n"
    "      holds exactly its two pinned entries and both tarballs hash\n"
    "      (SHA-512) to the lock and to AgentGuard's pins\n"
    "  freeze --source-commit SHA --gateway IMAGE --agent IMAGE --output FILE\n"
    "         [--repository NAME] [--root DIR] [--docker-socket PATH]\n"
    "         [--exceptions FILE] [--scan-report ROLE:REPORT.json]...\n"
    "      write the freeze manifest, with FILE.sbom.cdx.json and\n"
    "      FILE.provenance.intoto.json next to it (gateway validated first)\n"
    "  validate FILE [--json]\n"
    "      check a freeze manifest against every rule; exit 2 with the reason\n"
    "  vuln-policy --exceptions FILE [--role gateway|agent REPORT.json...]...\n"
    "      the HIGH/CRITICAL policy over Trivy JSON reports; with no report\n"
    "      the answer is \"not_scanned\" (exit 1), never clean\n"
    "  rootfs-digest TAR\n"
    "      the canonical rootfs digest of a filesystem tar\n"
    "  context-digest DIR\n"
    "      the build context digest of a folder (regular files, .git skipped)\n"
    "\n"
    "Exit codes: 0 ok, 1 policy failed or not scanned, 2 invalid input or\n"
    "usage, 6 Docker failure.\n";

#define CMD "runtime-image"

static int exit_for(const struct ag_error *e)
{
	if (e && (e->code == AG_E_DOCKER))
		return AG_EXIT_DOCKER;
	return AG_EXIT_CONFIG;
}

static int fail(struct ag_error *e)
{
	ag_cli_print_error(e);
	return exit_for(e);
}

static bool is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* ---- identity ---- */
static int cmd_identity(int argc, char **argv)
{
	const char *image = NULL, *role_s = NULL, *docker = NULL;
	bool as_json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0)
			as_json = true;
		else if (strcmp(a, "--role") == 0 && i + 1 < argc)
			role_s = argv[++i];
		else if (strcmp(a, "--docker-socket") == 0 && i + 1 < argc)
			docker = argv[++i];
		else if (a[0] == '-')
			return ag_cli_usage(CMD, "unknown or incomplete option '%s'", a);
		else if (!image)
			image = a;
		else
			return ag_cli_usage(CMD, "unexpected argument '%s'", a);
	}
	enum ag_image_role role;
	if (!image || !role_s)
		return ag_cli_usage(CMD, "identity needs IMAGE and --role gateway|agent");
	if (ag_image_role_parse(role_s, &role) < 0)
		return ag_cli_usage(CMD, "--role must be gateway or agent");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_engine_ struct ag_engine cli = AG_ENGINE_INIT;
	if (ag_engine_open(docker, &cli, &err) < 0)
		return fail(err);
	struct ag_image_identity id;
	if (ag_image_identity_compute(&cli, image, role, &id, &err) < 0) {
		ag_image_identity_release(&id);
		return fail(err);
	}
	if (as_json) {
		json_t *o = json_pack(
		    "{s:s, s:s, s:O, s:s, s:O, s:s, s:I, s:s, s:s, s:o}", "image_role",
		    ag_image_role_name(role), "rootfs_digest", id.rootfs_digest, "runtime_config",
		    id.runtime_config, "runtime_config_digest", id.runtime_config_digest,
		    "identity", id.identity, "identity_digest", id.identity_digest,
		    "rootfs_entries", (json_int_t)id.rootfs_entries, "base_image", id.base_image,
		    "image_id_diagnostic", id.image_id, "pinned_ref",
		    id.pinned_ref ? json_string(id.pinned_ref) : json_null());
		ag_cli_json_print(o, "agentguard.runtime-image-identity");
	} else {
		printf("role: %s\n", ag_image_role_name(role));
		fputs("base_image: ", stdout);
		ag_cli_put_sanitized(stdout, id.base_image);
		printf("\nrootfs_digest: %s (%zu members)\n", id.rootfs_digest, id.rootfs_entries);
		printf("runtime_config_digest: %s\n", id.runtime_config_digest);
		printf("identity_digest: %s\n", id.identity_digest);
		printf("image_id (diagnostic only): %s\n", id.image_id);
	}
	ag_image_identity_release(&id);
	return AG_EXIT_PASS;
}

/* ---- verify-inputs ---- */
static int cmd_verify_inputs(int argc, char **argv)
{
	const char *lock = NULL, *agent = NULL, *pkg = NULL, *platform = NULL;
	const char *pkg_agent = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--lock") == 0 && i + 1 < argc)
			lock = argv[++i];
		else if (strcmp(a, "--agent") == 0 && i + 1 < argc)
			agent = argv[++i];
		else if ((strcmp(a, "--codex") == 0 || strcmp(a, "--claude-code") == 0) &&
			 i + 1 < argc) {
			pkg_agent = a + 2;
			pkg = argv[++i];
		} else if ((strcmp(a, "--codex-linux-x64") == 0 ||
			    strcmp(a, "--claude-code-linux-x64") == 0) &&
			   i + 1 < argc)
			platform = argv[++i];
		else
			return ag_cli_usage(CMD, "unexpected argument '%s'", a);
	}
	if (!lock || !pkg != !platform)
		return ag_cli_usage(CMD, "verify-inputs needs --lock, and the package tarball with "
					 "its linux-x64 tarball (or neither: the lock alone)");
	if (agent && pkg_agent && strcmp(agent, pkg_agent) != 0)
		return ag_cli_usage(CMD, "--agent %s with --%s tarballs", agent, pkg_agent);
	const struct ag_npm_pins *pins = ag_npm_pins_for(agent	     ? agent
							 : pkg_agent ? pkg_agent
								     : "codex");
	if (!pins)
		return ag_cli_usage(CMD, "--agent takes codex or claude-code");
	_cleanup_err_ struct ag_error *err = NULL;
	if (!pkg) {
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		if (ag_npm_lock_read(pins, lock, &data, &len, &err) < 0)
			return fail(err);
		printf("verified: the lock holds exactly the two pinned %s entries\n", pins->agent);
		return AG_EXIT_PASS;
	}
	if (ag_npm_inputs_verify(pins, lock, pkg, platform, &err) < 0)
		return fail(err);
	printf("verified: %s %s and %s, lock and tarballs match the pins\n", pins->package,
	       pins->version, pins->entries[1].version);
	return AG_EXIT_PASS;
}

/* ---- rootfs-digest ---- */
static int cmd_rootfs_digest(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return ag_cli_usage(CMD, "rootfs-digest needs exactly one TAR");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_free_ char *d = NULL;
	size_t n = 0;
	if (ag_rootfs_digest_file(argv[1], &d, &n, &err) < 0)
		return fail(err);
	printf("%s %zu\n", d, n);
	return AG_EXIT_PASS;
}

/* ---- context-digest ---- */
static int cmd_context_digest(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return ag_cli_usage(CMD, "context-digest needs exactly one DIR");
	_cleanup_err_ struct ag_error *err = NULL;
	char hex[65];
	if (ag_context_digest(argv[1], hex, NULL, &err) < 0)
		return fail(err);
	puts(hex);
	return AG_EXIT_PASS;
}

/* ---- validate ---- */
static int cmd_validate(int argc, char **argv)
{
	const char *path = NULL;
	bool as_json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return ag_cli_usage(CMD, "unknown option '%s'", argv[i]);
		else if (!path)
			path = argv[i];
		else
			return ag_cli_usage(CMD, "unexpected argument '%s'", argv[i]);
	}
	if (!path)
		return ag_cli_usage(CMD, "validate needs FILE");
	static const struct ag_read_reasons why = {"images.manifest.open", "images.manifest.open",
						   "images.manifest.open",
						   "images.manifest.bound.size"};
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int rc = ag_read_file_at(AT_FDCWD, path, "manifest", AG_IMAGES_MANIFEST_MAX_BYTES, &why,
				 &data, &len, &err);
	if (rc == 0)
		rc = ag_freeze_manifest_validate(data, len, &err);
	if (as_json) {
		json_t *o =
		    json_pack("{s:b, s:o, s:o, s:o}", "valid", rc == 0, "reason",
			      err ? json_string(err->reason) : json_null(), "key",
			      err && err->key ? json_string(err->key) : json_null(), "message",
			      err && err->msg ? json_string(err->msg) : json_null());
		ag_cli_json_print(o, "agentguard.runtime-image-validate");
	}
	if (rc < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	if (!as_json)
		puts("valid: stage-1 runtime-image freeze manifest (not published; no live study)");
	return AG_EXIT_PASS;
}

static void today(char out[11])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 11, "%Y-%m-%d", &tm);
}

/* ---- vuln-policy ---- */
static int cmd_vuln_policy(int argc, char **argv)
{
	const char *exceptions = NULL;
	struct ag_vuln_report_input reps[AG_IMAGES_VULN_MAX_REPORTS];
	size_t n = 0;
	bool have_role = false;
	enum ag_image_role role = AG_ROLE_GATEWAY;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--exceptions") == 0 && i + 1 < argc) {
			exceptions = argv[++i];
		} else if (strcmp(a, "--role") == 0 && i + 1 < argc) {
			if (ag_image_role_parse(argv[++i], &role) < 0)
				return ag_cli_usage(CMD, "--role must be gateway or agent");
			have_role = true;
		} else if (a[0] == '-') {
			return ag_cli_usage(CMD, "unknown or incomplete option '%s'", a);
		} else {
			if (!have_role)
				return ag_cli_usage(CMD,
						    "name the image with --role before a report");
			if (n == AG_ARRAY_SIZE(reps))
				return ag_cli_usage(CMD, "more than %d reports",
						    AG_IMAGES_VULN_MAX_REPORTS);
			reps[n].role = role;
			reps[n].path = a;
			n++;
		}
	}
	if (!exceptions)
		return ag_cli_usage(CMD, "vuln-policy needs --exceptions FILE");
	char day[11];
	today(day);
	_cleanup_err_ struct ag_error *err = NULL;
	json_t *res = NULL;
	if (ag_vuln_policy_run(exceptions, reps, n, day, &res, &err) < 0)
		return fail(err);
	const char *st = json_string_value(json_object_get(res, "status"));
	int rc = st && strcmp(st, "pass") == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
	ag_cli_json_print(res, "agentguard.runtime-image-vuln-policy");
	return rc;
}

/* ---- freeze ---- */
/* Atomically, in the output's own directory (the temporary name is made
 * from the last component: a path with '/' would not be a name there). */
static int write_doc(const char *path, const char *data, struct ag_error **err)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return ag_write_file_atomic_at(AT_FDCWD, path, "output", data, strlen(data), 0644,
					       false, err);
	if (!slash[1])
		return ag_err(err, AG_E_USAGE, 0, "images.freeze.output",
			      "--output must name a file, not a directory");
	_cleanup_free_ char *dir =
	    slash == path ? ag_xstrdup("/") : ag_xstrndup(path, (size_t)(slash - path));
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ag_err(err, AG_E_IO, errno, "io.create",
			      "cannot open the output's directory: %s", strerror(errno));
	return ag_write_file_atomic_at(dfd, slash + 1, "output", data, strlen(data), 0644, false,
				       err);
}

static int cmd_freeze(int argc, char **argv)
{
	const char *commit = NULL, *gw = NULL, *agent = NULL, *output = NULL, *docker = NULL;
	const char *repo = "agentguard", *root = ".", *exceptions = NULL;
	struct ag_vuln_report_input reps[AG_IMAGES_VULN_MAX_REPORTS];
	const char *rep_paths[AG_IMAGES_VULN_MAX_REPORTS + 1];
	size_t n = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v || a[0] != '-')
			return ag_cli_usage(CMD, "unexpected argument '%s'", a);
		i++;
		if (strcmp(a, "--source-commit") == 0)
			commit = v;
		else if (strcmp(a, "--gateway") == 0)
			gw = v;
		else if (strcmp(a, "--agent") == 0)
			agent = v;
		else if (strcmp(a, "--output") == 0)
			output = v;
		else if (strcmp(a, "--docker-socket") == 0)
			docker = v;
		else if (strcmp(a, "--repository") == 0)
			repo = v;
		else if (strcmp(a, "--root") == 0)
			root = v;
		else if (strcmp(a, "--exceptions") == 0)
			exceptions = v;
		else if (strcmp(a, "--scan-report") == 0) {
			const char *c = strchr(v, ':');
			_cleanup_free_ char *r = c ? ag_xstrndup(v, (size_t)(c - v)) : NULL;
			if (!c || ag_image_role_parse(r, &reps[n].role) < 0)
				return ag_cli_usage(CMD, "--scan-report takes ROLE:REPORT.json");
			if (n == AG_IMAGES_VULN_MAX_REPORTS)
				return ag_cli_usage(CMD, "too many --scan-report");
			reps[n].path = c + 1;
			rep_paths[n] = c + 1;
			n++;
		} else
			return ag_cli_usage(CMD, "unknown option '%s'", a);
	}
	rep_paths[n] = NULL;
	if (!commit || !output)
		return ag_cli_usage(CMD, "freeze needs --source-commit and --output");
	if (n && !exceptions)
		return ag_cli_usage(CMD, "--scan-report needs --exceptions FILE");
	_cleanup_err_ struct ag_error *err = NULL;
	/* The gateway comes first: without it there is no manifest at all. */
	if (!gw) {
		ag_err(&err, AG_E_UNVERIFIED, 0, "images.freeze.gateway_missing",
		       "no gateway image: the gateway input is validated before the agent, and "
		       "a manifest without it would claim what was not built");
		return fail(err);
	}
	if (!agent)
		return ag_cli_usage(CMD, "freeze needs --agent IMAGE");
	_cleanup_free_ char *gctx = ag_xasprintf("%s/runtime-images/gateway", root);
	_cleanup_free_ char *actx = ag_xasprintf("%s/runtime-images/agent", root);
	_cleanup_free_ char *deb = ag_xasprintf("%s/runtime-images/base/packages.lock", root);
	_cleanup_free_ char *gdeb = ag_xasprintf("%s/runtime-images/gateway/packages.lock", root);
	_cleanup_free_ char *adeb = ag_xasprintf("%s/runtime-images/agent/packages.lock", root);
	_cleanup_free_ char *npm = ag_xasprintf("%s/runtime-images/agent/package-lock.json", root);
	_cleanup_free_ char *sbom_p = ag_xasprintf("%s.sbom.cdx.json", output);
	_cleanup_free_ char *prov_p = ag_xasprintf("%s.provenance.intoto.json", output);
	_cleanup_engine_ struct ag_engine cli = AG_ENGINE_INIT;
	if (ag_engine_open(docker, &cli, &err) < 0)
		return fail(err);
	struct ag_image_identity gid, aid;
	memset(&aid, 0, sizeof(aid));
	if (ag_image_identity_compute(&cli, gw, AG_ROLE_GATEWAY, &gid, &err) < 0) {
		ag_image_identity_release(&gid);
		ag_err_wrap(&err, "gateway");
		return fail(err);
	}
	int rc = AG_EXIT_CONFIG;
	json_t *policy = NULL;
	struct ag_freeze_output out = {0};
	if (ag_image_identity_compute(&cli, agent, AG_ROLE_AGENT, &aid, &err) < 0) {
		ag_err_wrap(&err, "agent");
		rc = exit_for(err);
		ag_cli_print_error(err);
		goto done;
	}
	if (n || exceptions) {
		char day[11];
		today(day);
		if (ag_vuln_policy_run(exceptions, reps, n, day, &policy, &err) < 0) {
			rc = fail(err);
			goto done;
		}
	}
	struct ag_freeze_input in = {
	    .repository = repo,
	    .source_commit = commit,
	    .gateway = {&gid, "registry.invalid/agentguard/runtime-gateway", gctx},
	    .agent = {&aid, "registry.invalid/agentguard/runtime-agent", actx},
	    .deb_lock_path = deb,
	    .gateway_deb_lock_path = gdeb,
	    .agent_deb_lock_path = adeb,
	    .npm_lock_path = npm,
	    .vuln_policy = policy,
	    .scan_reports = rep_paths,
	    .sbom_name = strrchr(sbom_p, '/') ? strrchr(sbom_p, '/') + 1 : sbom_p,
	    .provenance_name = strrchr(prov_p, '/') ? strrchr(prov_p, '/') + 1 : prov_p,
	};
	if (ag_freeze_build(&in, &out, &err) < 0) {
		rc = fail(err);
		goto done;
	}
	if (write_doc(sbom_p, out.sbom, &err) < 0 || write_doc(prov_p, out.provenance, &err) < 0 ||
	    write_doc(output, out.manifest, &err) < 0) {
		rc = fail(err);
		goto done;
	}
	printf("frozen: gateway and agent identities recorded; not published (phase 1)\n");
	rc = AG_EXIT_PASS;
done:
	json_decref(policy);
	ag_freeze_output_release(&out);
	ag_image_identity_release(&gid);
	ag_image_identity_release(&aid);
	return rc;
}

int ag_cmd_runtime_image(int argc, char **argv)
{
	if (argc < 2 || is_help(argv[1])) {
		fputs(help, argc < 2 ? stderr : stdout);
		return argc < 2 ? AG_EXIT_CONFIG : AG_EXIT_PASS;
	}
	for (int i = 2; i < argc; i++)
		if (is_help(argv[i])) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		}
	const char *sub = argv[1];
	/* Exported filesystems hold UTF-8 names (pax headers); libarchive
	 * converts names through the locale, so use a UTF-8 one. */
	setlocale(LC_CTYPE, "C.UTF-8");
	if (strcmp(sub, "identity") == 0)
		return cmd_identity(argc - 1, argv + 1);
	if (strcmp(sub, "verify-inputs") == 0)
		return cmd_verify_inputs(argc - 1, argv + 1);
	if (strcmp(sub, "rootfs-digest") == 0)
		return cmd_rootfs_digest(argc - 1, argv + 1);
	if (strcmp(sub, "context-digest") == 0)
		return cmd_context_digest(argc - 1, argv + 1);
	if (strcmp(sub, "validate") == 0)
		return cmd_validate(argc - 1, argv + 1);
	if (strcmp(sub, "vuln-policy") == 0)
		return cmd_vuln_policy(argc - 1, argv + 1);
	if (strcmp(sub, "freeze") == 0)
		return cmd_freeze(argc - 1, argv + 1);
	return ag_cli_usage(CMD, "unknown subcommand '%s'", sub);
}
