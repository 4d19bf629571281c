#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/config/config.h"
#include "lib/config/imageref.h"
#include "lib/egress/policy.h"
#include "lib/docker/engine.h"
#include "lib/images/images.h"

#include <inttypes.h>
#include <sys/stat.h>

static const char help[] =
    "Usage: agentguard init [DIR] [--preset untrusted-agent|codex|claude-code]\n"
    "                       [--image REF] [--gateway-image REF]\n"
    "                       [--docker-socket PATH] [--force] [--dry-run]\n"
    "\n"
    "Write a commented starter agentguard.yaml into DIR (default: the current\n"
    "directory) and add '.agentguard/' (where evidence is written) to\n"
    "DIR/.gitignore.\n"
    "\n"
    "Presets:\n"
    "  untrusted-agent  (default) any agent image, run with 'contained-run'\n"
    "  codex            the Codex CLI agent image, run as a study:\n"
    "                     agentguard study-egress run agentguard.yaml -- codex exec \"...\"\n"
    "  claude-code      the Claude Code agent image, run as a study:\n"
    "                     agentguard study-egress run agentguard.yaml -- claude -p \"...\"\n"
    "The two agent presets also write agentguard-egress-policy.json (the\n"
    "provider's API host on 443, the only approved destination), and the\n"
    "config's study_egress block names it; the API key comes from the host's\n"
    "environment (CODEX_API_KEY or ANTHROPIC_API_KEY), sensitive and redacted;\n"
    "the timeout is 30 minutes; memory and PID limits fit such an agent\n"
    "(docs/agents.md says why each value).\n"
    "\n"
    "The files validate as written; replace placeholder images with your images\n"
    "pinned by digest before a real run, or give --image / --gateway-image.\n"
    "required_uid and required_gid are set to the invoking user's ids (1000\n"
    "when run as root, since a container identity is never root).\n"
    "\n"
    "Options:\n"
    "  --preset NAME  the starter to write (above)\n"
    "  --image REF    the agent image: a reference pinned by digest is used as\n"
    "                 given; otherwise the local image's digest is read from\n"
    "                 the Docker engine (its RepoDigests, recorded when it was\n"
    "                 pushed or pulled) and pinned. Refused when the engine\n"
    "                 knows no digest for it; never pulls\n"
    "  --gateway-image REF  the same for the egress gateway image (agent\n"
    "                 presets only)\n"
    "  --docker-socket PATH  the engine socket for --image (default\n"
    "                 /var/run/docker.sock)\n"
    "  --force        replace existing files\n"
    "  --dry-run      print what would be written; write nothing\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit codes: 0 written, 1 a file exists (use --force), 2 usage or I/O\n"
    "error.\n";

#define PLACEHOLDER_IMAGE                                                                          \
	"registry.example.invalid/your-agent@sha256:"                                              \
	"0000000000000000000000000000000000000000000000000000000000000000"

static char *render_template(long long uid, long long gid, const char *image)
{
	return ag_xasprintf(
	    "# agentguard.yaml: starter for running an untrusted coding agent with\n"
	    "#   agentguard contained-run agentguard.yaml -- <agent argv...>\n"
	    "# Every key is documented in docs/config-reference.md; check edits with\n"
	    "#   agentguard validate agentguard.yaml\n"
	    "\n"
	    "task_id: untrusted-agent-task\n"
	    "description: Run an untrusted coding agent inside a verified container\n"
	    "# contained-run judges the agent's own exit status; test_command is kept\n"
	    "# for the other runners.\n"
	    "test_command: \"true\"\n"
	    "# ci mode: the repository is the one given with --repo (or the current\n"
	    "# directory), so no repo_template is needed.\n"
	    "mode: ci\n"
	    "expected_modified_files:\n"
	    "  min: 0\n"
	    "  max: 50\n"
	    "\n"
	    "# Paths the agent must not touch, and where tests live (glob patterns).\n"
	    "forbidden_paths:\n"
	    "  - \".github/**\"\n"
	    "  - \"secrets/**\"\n"
	    "test_paths:\n"
	    "  - \"tests/**\"\n"
	    "secret_patterns:\n"
	    "  - \"*.pem\"\n"
	    "  - \".env\"\n"
	    "secret_content_builtin_detectors:\n"
	    "  - private-key-header\n"
	    "  - github-token-shape\n"
	    "\n"
	    "sandbox:\n"
	    "  type: docker\n"
	    "%s"
	    "  # A tag alone is refused: it can change under you.\n"
	    "  image: \"%s\"\n"
	    "  network: none\n"
	    "\n"
	    "contained_execution:\n"
	    "  version: 1\n"
	    "  platform: linux-docker-engine   # docker-desktop-experimental = reduced claims\n"
	    "  network: none                   # bridge only as an explicit opt-in; never host\n"
	    "  image_provenance: digest-required\n"
	    "  # Must equal the host user that runs contained-run (the workspace is\n"
	    "  # bind-mounted). Never 0.\n"
	    "  required_uid: %lld\n"
	    "  required_gid: %lld\n"
	    "  cpu_limit: 1.0          # 0.1 .. 8.0\n"
	    "  memory_limit: 512m      # 64m .. 16g\n"
	    "  pids_limit: 256         # 16 .. 4096\n"
	    "  tmpfs_size: 256m        # /tmp inside the container, 64k .. 4g\n"
	    "  require_evidence_outside_agent_repo: true\n"
	    "  allow_privileged: false\n"
	    "  allow_host_network: false\n"
	    "  allow_docker_socket_mount: false\n"
	    "  allow_device_exposure: false\n"
	    "  allow_host_namespace_sharing: false\n"
	    "  # The only variables the agent sees besides PATH, HOME, LANG, LC_ALL.\n"
	    "  # Secret-like names need allow_sensitive: true and are redacted.\n"
	    "  environment:\n"
	    "    - name: AGENT_MODE\n"
	    "      value: batch\n"
	    "    # - name: AGENT_API_TOKEN\n"
	    "    #   source: host\n"
	    "    #   required: true\n"
	    "    #   allow_sensitive: true\n",
	    image ? "  # Your agent image, pinned by digest (agentguard init --image).\n"
		  : "  # REPLACE with your agent image, pinned by digest (name@sha256:...).\n",
	    image ? image : PLACEHOLDER_IMAGE, uid, gid);
}

/* The agent presets (docs/agents.md): one agent image each, run as a study
 * with the provider's API host as the only approved destination. */
struct agent_preset {
	const char *name, *title, *key_env, *host, *image_repo, *argv_example, *own_sandbox;
};
static const struct agent_preset agent_presets[] = {
    {"codex", "the Codex CLI (0.159.2)", "CODEX_API_KEY", "api.openai.com",
     "agentguard-runtime-agent", "codex exec \"Fix the failing test\"",
     "# Codex's own sandbox is off inside ours (its bubblewrap cannot start in\n"
     "# this container); the image's entrypoint sets that, no approval prompts,\n"
     "# and no analytics or plugin requests (each would be a denied destination).\n"},
    {"claude-code", "Claude Code (2.1.332)", "ANTHROPIC_API_KEY", "api.anthropic.com",
     "agentguard-runtime-claude-code", "claude -p \"Fix the failing test\"",
     "# Claude Code runs with --permission-mode bypassPermissions inside ours\n"
     "# (nobody is there to answer a prompt); the image's entrypoint sets that\n"
     "# and turns off its update checks, telemetry and error reports.\n"},
};

#define PLACEHOLDER_GATEWAY                                                                        \
	"registry.example.invalid/agentguard-gateway@sha256:"                                      \
	"0000000000000000000000000000000000000000000000000000000000000000"
#define EGRESS_POLICY_FILE "agentguard-egress-policy.json"

static const struct agent_preset *find_agent_preset(const char *name)
{
	for (size_t i = 0; i < AG_ARRAY_SIZE(agent_presets); i++)
		if (strcmp(agent_presets[i].name, name) == 0)
			return &agent_presets[i];
	return NULL;
}

static char *render_agent_template(const struct agent_preset *p, long long uid, long long gid,
				   const char *image, const char *gateway)
{
	_cleanup_free_ char *placeholder =
	    ag_xasprintf("registry.example.invalid/%s@sha256:"
			 "0000000000000000000000000000000000000000000000000000000000000000",
			 p->image_repo);
	return ag_xasprintf(
	    "# agentguard.yaml: %s as an untrusted agent, run as a study:\n"
	    "#   export %s=...\n"
	    "#   agentguard study-egress run agentguard.yaml -- %s\n"
	    "# Every key is documented in docs/config-reference.md, the agent images\n"
	    "# and these values in docs/agents.md; check edits with\n"
	    "#   agentguard validate agentguard.yaml\n"
	    "\n"
	    "task_id: %s-task\n"
	    "description: %s, contained, its provider reachable only through the gateway\n"
	    "test_command: \"true\"\n"
	    "mode: ci\n"
	    "expected_modified_files:\n"
	    "  min: 0\n"
	    "  max: 200\n"
	    "# A real task takes minutes: 30 of them before AgentGuard stops the agent.\n"
	    "command_timeout_seconds: 1800\n"
	    "max_output_bytes: 4194304\n"
	    "forbidden_paths:\n"
	    "  - \".github/**\"\n"
	    "secret_content_builtin_detectors:\n"
	    "  - private-key-header\n"
	    "  - github-token-shape\n"
	    "\n"
	    "sandbox:\n"
	    "  type: docker\n"
	    "%s"
	    "  image: \"%s\"\n"
	    "  network: none\n"
	    "\n"
	    "contained_execution:\n"
	    "  version: 1\n"
	    "  platform: linux-docker-engine\n"
	    "  network: none       # the study network replaces it; never host\n"
	    "  image_provenance: digest-required\n"
	    "  # Must equal the host user that runs AgentGuard (the workspace is\n"
	    "  # bind-mounted). Never 0.\n"
	    "  required_uid: %lld\n"
	    "  required_gid: %lld\n"
	    "  # The agent, its shell commands and the tests it runs share these.\n"
	    "  cpu_limit: 2.0\n"
	    "  memory_limit: 4g\n"
	    "  pids_limit: 1024\n"
	    "  tmpfs_size: 1g      # /tmp: HOME and the agent's own state live there\n"
	    "%s"
	    "  environment:\n"
	    "    # The API key, read from your environment when the run starts; it\n"
	    "    # reaches the container only and never any output or evidence.\n"
	    "    - name: %s\n"
	    "      source: host\n"
	    "      required: true\n"
	    "      allow_sensitive: true\n"
	    "\n"
	    "# The study's options (a command-line option wins over each).\n"
	    "study_egress:\n"
	    "  # The provider's API host on 443, the only approved destination.\n"
	    "  policy: " EGRESS_POLICY_FILE "\n"
	    "%s"
	    "  gateway_image: \"%s\"\n"
	    "  # The one DNS server the gateway asks: use your network's.\n"
	    "  resolver: 1.1.1.1\n"
	    "  # study_subnet: absent, a free /26 pair of 10.254.0.0/16 is chosen.\n",
	    p->title, p->key_env, p->argv_example, p->name, p->title,
	    image ? "  # The agent image, pinned by digest (agentguard init --image).\n"
		  : "  # REPLACE with the agent image scripts/runtime-images printed\n"
		    "  # (pinned by digest), or give agentguard init --image.\n",
	    image ? image : placeholder, uid, gid, p->own_sandbox, p->key_env,
	    gateway ? "  # The gateway image, pinned by digest.\n"
		    : "  # REPLACE with the gateway image scripts/runtime-images printed.\n",
	    gateway ? gateway : PLACEHOLDER_GATEWAY);
}

static char *render_policy(const struct agent_preset *p)
{
	return ag_xasprintf("{\n  \"schema\": \"agentguard.live-study-egress-policy\",\n"
			    "  \"schema_version\": 1,\n"
			    "  \"destinations\": [{\"host\": \"%s\", \"port\": 443}]\n}\n",
			    p->host);
}

static int write_gitignore(int dirfd, bool dry_run, bool *changed, struct ag_error **err)
{
	static const struct ag_read_reasons why = {
	    "init.gitignore.symlink", "init.gitignore.not_regular", "init.gitignore.open",
	    "init.gitignore.too_large"};
	_cleanup_free_ char *old = NULL;
	size_t len = 0;
	struct ag_error *re = NULL;
	if (ag_read_file_at(dirfd, ".gitignore", ".gitignore", AG_GITIGNORE_MAX_BYTES, &why, &old,
			    &len, &re) < 0) {
		if (re->sys_errno != ENOENT) {
			*err = re;
			return -1;
		}
		ag_error_free(re);
		old = ag_xstrdup("");
		len = 0;
	}
	/* Already ignored? Look for an exact line. */
	for (const char *p = old; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if ((l == 12 && memcmp(p, ".agentguard/", 12) == 0) ||
		    (l == 13 && memcmp(p, "/.agentguard/", 13) == 0) ||
		    (l == 11 && memcmp(p, ".agentguard", 11) == 0)) {
			*changed = false;
			return 0;
		}
		if (!e)
			break;
		p = e + 1;
	}
	*changed = true;
	if (dry_run)
		return 0;
	_cleanup_free_ char *next = ag_xasprintf("%s%s# AgentGuard evidence\n.agentguard/\n", old,
						 len && old[len - 1] != '\n' ? "\n" : "");
	return ag_write_file_atomic_at(dirfd, ".gitignore", ".gitignore", next, strlen(next), 0644,
				       false, err);
}

/* --image REF: pinned as given, or by the engine's RepoDigests (never pulled). */
static int resolve_image(const char *image, const char *docker, char **pinned,
			 struct ag_error **err)
{
	struct ag_image_ref r = {0};
	if (ag_image_ref_parse(image, &r, err) < 0)
		return -1;
	bool is_pinned = ag_image_ref_pinned(&r);
	ag_image_ref_release(&r);
	if (is_pinned) {
		*pinned = ag_xstrdup(image);
		return 0;
	}
	_cleanup_engine_ struct ag_engine eng = AG_ENGINE_INIT;
	if (ag_engine_open(docker, &eng, err) < 0)
		return -1;
	return ag_images_local_pinned_ref(&eng, image, pinned, err);
}

int ag_cmd_init(int argc, char **argv)
{
	const char *dir = NULL, *preset = "untrusted-agent", *image = NULL, *docker = NULL;
	const char *gateway = NULL;
	bool force = false, dry_run = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			return AG_EXIT_PASS;
		} else if (strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--dry-run") == 0) {
			dry_run = true;
		} else if (strcmp(a, "--preset") == 0) {
			if (i + 1 >= argc)
				return ag_cli_usage("init", "--preset needs a value");
			preset = argv[++i];
		} else if (strncmp(a, "--preset=", 9) == 0) {
			preset = a + 9;
		} else if (strcmp(a, "--image") == 0 || strcmp(a, "--docker-socket") == 0 ||
			   strcmp(a, "--gateway-image") == 0) {
			if (i + 1 >= argc)
				return ag_cli_usage("init", "%s needs a value", a);
			if (strcmp(a, "--image") == 0)
				image = argv[++i];
			else if (strcmp(a, "--gateway-image") == 0)
				gateway = argv[++i];
			else
				docker = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return ag_cli_usage("init", "unknown option '%s'", a);
		} else if (dir) {
			return ag_cli_usage("init", "only one DIR may be given");
		} else {
			dir = a;
		}
	}
	const struct agent_preset *ap = find_agent_preset(preset);
	if (strcmp(preset, "untrusted-agent") != 0 && !ap)
		return ag_cli_usage("init",
				    "unknown preset '%s' (available: untrusted-agent, codex, "
				    "claude-code)",
				    preset);
	if (gateway && !ap)
		return ag_cli_usage("init", "--gateway-image goes with an agent preset (codex, "
					    "claude-code)");
	if (!dir)
		dir = ".";
	if (docker && docker[0] != '/')
		return ag_cli_usage("init", "--docker-socket PATH must be absolute");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_free_ char *pinned = NULL, *gw_pinned = NULL;
	if ((image && resolve_image(image, docker, &pinned, &err) < 0) ||
	    (gateway && resolve_image(gateway, docker, &gw_pinned, &err) < 0)) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	uid_t uid = geteuid();
	gid_t gid = getegid();
	long long cuid = uid ? (long long)uid : 1000, cgid = gid && uid ? (long long)gid : 1000;
	_cleanup_free_ char *text = ap ? render_agent_template(ap, cuid, cgid, pinned, gw_pinned)
				       : render_template(cuid, cgid, pinned);
	_cleanup_free_ char *policy = ap ? render_policy(ap) : NULL;

	/* Self-check: what is written must validate exactly as written. */
	struct ag_config *check = NULL;
	if (ag_config_load_mem(text, strlen(text), "agentguard.yaml", &check, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	ag_config_free(check);
	if (policy) {
		struct ag_egress_policy *pc = NULL;
		if (ag_egress_policy_parse(policy, strlen(policy), &pc, &err) < 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		ag_egress_policy_free(pc);
	}

	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fputs("agentguard: error: cannot open directory '", stderr);
		ag_cli_put_sanitized(stderr, dir);
		fprintf(stderr, "': %s [init.dir]\n", strerror(errno));
		return AG_EXIT_CONFIG;
	}
	const char *files[2] = {"agentguard.yaml", policy ? EGRESS_POLICY_FILE : NULL};
	for (size_t i = 0; i < 2 && files[i]; i++) {
		struct stat st;
		bool exists = fstatat(dirfd, files[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (exists && !force) {
			fprintf(stderr, "agentguard: %s already exists in '", files[i]);
			ag_cli_put_sanitized(stderr, dir);
			fputs("'; use --force to replace it [init.exists]\n", stderr);
			return AG_EXIT_FAIL;
		}
		if (exists && !S_ISREG(st.st_mode)) {
			fprintf(stderr,
				"agentguard: error: %s exists and is not a regular file; "
				"refusing to replace it [init.not_regular]\n",
				files[i]);
			return AG_EXIT_CONFIG;
		}
	}
	bool gi_changed = false;
	if (dry_run) {
		if (write_gitignore(dirfd, true, &gi_changed, &err) < 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		printf("# dry run: would write agentguard.yaml%s%s\n",
		       policy ? " and " EGRESS_POLICY_FILE : "",
		       gi_changed ? " and add .agentguard/ to .gitignore" : "");
		fputs(text, stdout);
		if (policy)
			printf("# " EGRESS_POLICY_FILE ":\n%s", policy);
		return AG_EXIT_PASS;
	}
	/* The policy first: a config never names a policy that is not there. */
	if ((policy && ag_write_file_atomic_at(dirfd, EGRESS_POLICY_FILE, EGRESS_POLICY_FILE,
					       policy, strlen(policy), 0644, !force, &err) < 0) ||
	    ag_write_file_atomic_at(dirfd, "agentguard.yaml", "agentguard.yaml", text, strlen(text),
				    0644, !force, &err) < 0 ||
	    write_gitignore(dirfd, false, &gi_changed, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	printf("wrote agentguard.yaml%s (preset %s)%s\n", policy ? " and " EGRESS_POLICY_FILE : "",
	       preset, gi_changed ? "; added .agentguard/ to .gitignore" : "");
	if (ap) {
		if (!pinned)
			puts("next: set sandbox.image to the agent image (or init --image)");
		if (!gw_pinned)
			puts("next: set study_egress.gateway_image (or init --gateway-image)");
		printf("next: export %s=..., then\n"
		       "  agentguard study-egress run agentguard.yaml -- %s\n",
		       ap->key_env, ap->argv_example);
	} else if (pinned) {
		fputs("image: ", stdout);
		ag_cli_put_sanitized(stdout, pinned);
		puts("\nnext: agentguard validate agentguard.yaml");
	} else {
		puts("next: pin sandbox.image to your agent image by digest (agentguard init\n"
		     "  --image REF --force does it for a local image), then run\n"
		     "  agentguard validate agentguard.yaml");
	}
	return AG_EXIT_PASS;
}
