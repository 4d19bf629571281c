#include "lib/base/ag.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/config/config.h"
#include "lib/config/imageref.h"
#include "lib/docker/engine.h"
#include "lib/images/images.h"

#include <inttypes.h>
#include <sys/stat.h>

static const char help[] =
    "Usage: agentguard init [DIR] [--preset untrusted-agent] [--image REF]\n"
    "                       [--docker-socket PATH] [--force] [--dry-run]\n"
    "\n"
    "Write a commented starter agentguard.yaml into DIR (default: the current\n"
    "directory) for running an untrusted agent with 'contained-run', and add\n"
    "'.agentguard/' (where evidence is written) to DIR/.gitignore.\n"
    "\n"
    "The starter file validates as written; replace its placeholder image with\n"
    "your agent's image pinned by digest before a real run, or give --image.\n"
    "required_uid and\n"
    "required_gid are set to the invoking user's ids (1000 when run as root,\n"
    "since a container identity is never root).\n"
    "\n"
    "Options:\n"
    "  --preset NAME  the starter to write; only 'untrusted-agent' exists\n"
    "  --image REF    the agent image: a reference pinned by digest is used as\n"
    "                 given; otherwise the local image's digest is read from\n"
    "                 the Docker engine (its RepoDigests, recorded when it was\n"
    "                 pushed or pulled) and pinned. Refused when the engine\n"
    "                 knows no digest for it; never pulls\n"
    "  --docker-socket PATH  the engine socket for --image (default\n"
    "                 /var/run/docker.sock)\n"
    "  --force        replace an existing agentguard.yaml\n"
    "  --dry-run      print what would be written; write nothing\n"
    "  -h, --help     show this help\n"
    "\n"
    "Exit codes: 0 written, 1 agentguard.yaml exists (use --force), 2 usage or\n"
    "I/O error.\n";

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
		} else if (strcmp(a, "--image") == 0 || strcmp(a, "--docker-socket") == 0) {
			if (i + 1 >= argc)
				return ag_cli_usage("init", "%s needs a value", a);
			if (strcmp(a, "--image") == 0)
				image = argv[++i];
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
	if (strcmp(preset, "untrusted-agent") != 0)
		return ag_cli_usage("init", "unknown preset '%s' (available: untrusted-agent)",
				    preset);
	if (!dir)
		dir = ".";
	if (docker && docker[0] != '/')
		return ag_cli_usage("init", "--docker-socket PATH must be absolute");
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_free_ char *pinned = NULL;
	if (image && resolve_image(image, docker, &pinned, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	uid_t uid = geteuid();
	gid_t gid = getegid();
	_cleanup_free_ char *text = render_template(uid ? (long long)uid : 1000,
						    gid && uid ? (long long)gid : 1000, pinned);

	/* Self-check: the starter must validate exactly as written. */
	struct ag_config *check = NULL;
	if (ag_config_load_mem(text, strlen(text), "agentguard.yaml", &check, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	ag_config_free(check);

	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fputs("agentguard: error: cannot open directory '", stderr);
		ag_cli_put_sanitized(stderr, dir);
		fprintf(stderr, "': %s [init.dir]\n", strerror(errno));
		return AG_EXIT_CONFIG;
	}
	struct stat st;
	bool exists = fstatat(dirfd, "agentguard.yaml", &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && !force) {
		fputs("agentguard: agentguard.yaml already exists in '", stderr);
		ag_cli_put_sanitized(stderr, dir);
		fputs("'; use --force to replace it [init.exists]\n", stderr);
		return AG_EXIT_FAIL;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		fputs("agentguard: error: agentguard.yaml exists and is not a regular file; "
		      "refusing to replace it [init.not_regular]\n",
		      stderr);
		return AG_EXIT_CONFIG;
	}
	bool gi_changed = false;
	if (dry_run) {
		if (write_gitignore(dirfd, true, &gi_changed, &err) < 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		printf("# dry run: would write agentguard.yaml%s\n",
		       gi_changed ? " and add .agentguard/ to .gitignore" : "");
		fputs(text, stdout);
		return AG_EXIT_PASS;
	}
	if (ag_write_file_atomic_at(dirfd, "agentguard.yaml", "agentguard.yaml", text, strlen(text),
				    0644, !force, &err) < 0 ||
	    write_gitignore(dirfd, false, &gi_changed, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	printf("wrote agentguard.yaml (preset %s)%s\n", preset,
	       gi_changed ? "; added .agentguard/ to .gitignore" : "");
	if (pinned) {
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
