#include "lib/base/ag.h"
#include "lib/base/sanitize.h"
#include "cli/cli.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"
#include "lib/docker/exec_spec.h"

#include <jansson.h>
#include <limits.h>
#include <sys/stat.h>

static const char help[] =
    "Usage: agentguard render CONFIG [--workspace DIR] [--name NAME] [--json]\n"
    "                         [--label KEY=VALUE]... [--format argv|request]\n"
    "                         [--mode run|create] -- ARGV...\n"
    "\n"
    "Dry run: print what contained execution would ask Docker for, for CONFIG\n"
    "and the child command ARGV. Docker is not called. By default (--format\n"
    "argv) that is the docker command line, as a JSON array of strings: the\n"
    "argument list after the docker executable (it starts with \"run\",\n"
    "\"--rm\" or with \"create\"), for reproducing a run by hand. With\n"
    "--format request it is the Engine API create request AgentGuard itself\n"
    "sends, one JSON object {\"method\", \"path\", \"body\"}; both come from\n"
    "the same typed spec.\n"
    "\n"
    "Everything after the first literal '--' is the child argv, verbatim\n"
    "(--help, -h, '--', empty strings and shell metacharacters included);\n"
    "the '--' is required and ARGV must not be empty.\n"
    "\n"
    "Environment values are never printed: every configured entry appears as\n"
    "NAME=[REDACTED]; the four fixed defaults (HOME, LANG, LC_ALL, PATH) are\n"
    "public constants and appear with their values.\n"
    "\n"
    "Options:\n"
    "  --workspace DIR    bind-mount DIR as the workspace (absolute, or relative\n"
    "                     to the current directory; every component must be a\n"
    "                     real directory, not a symbolic link). Without it the\n"
    "                     workspace is a tmpfs.\n"
    "  --name NAME        container name, agentguard-[a-z0-9][a-z0-9_.-]{0,62}\n"
    "  --label KEY=VALUE  an AgentGuard label (KEY agentguard.[a-z0-9.-]+)\n"
    "  --mode run|create  \"run --rm\" (default) or \"create\" (--format argv)\n"
    "  --format argv|request  the docker argv (default) or the Engine API create\n"
    "                     request AgentGuard sends, {\"method\", \"path\", \"body\"}\n"
    "  --json             print {schema, schema_version, argv} instead of the bare\n"
    "                     array (errors become a JSON error object too)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit codes: 0 rendered, 2 config, render or usage error.\n";

/*
 * DIR made absolute without realpath: a relative DIR is joined to the
 * current directory; "." segments, repeated and trailing slashes are
 * dropped; ".." is kept (the renderer refuses it). Then every component is
 * checked with lstat-like fstatat(AT_SYMLINK_NOFOLLOW) below a directory fd,
 * so no symbolic link anywhere on the path is followed.
 */
static int workspace_path(const char *dir, char **out, struct ag_error **err)
{
	_cleanup_free_ char *joined = NULL;
	if (dir[0] == '/') {
		joined = ag_xstrdup(dir);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return ag_err(err, AG_E_IO, errno, "render.workspace.cwd",
				      "cannot read the current directory: %s", strerror(errno));
		joined = ag_xasprintf("%s/%s", cwd, dir);
	}
	struct ag_buf b = AG_BUF_INIT(AG_HOST_PATH_MAX, "render.workspace.too_long");
	const char *p = joined;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if (!(n == 1 && p[0] == '.')) {
			if (ag_buf_adds(&b, "/", err) < 0 || ag_buf_add(&b, p, n, err) < 0) {
				ag_buf_release(&b);
				return -1;
			}
		}
		p += n;
	}
	if (b.len == 0 && ag_buf_adds(&b, "/", err) < 0) {
		ag_buf_release(&b);
		return -1;
	}
	*out = ag_buf_detach(&b, NULL);
	return 0;
}

static int check_no_symlink(const char *abs, struct ag_error **err)
{
	_cleanup_close_ int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ag_err(err, AG_E_IO, errno, "render.workspace.missing", "cannot open '/'");
	_cleanup_free_ char *copy = ag_xstrdup(abs);
	char *save = copy + 1;
	while (*save) {
		char *slash = strchr(save, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (fstatat(dfd, save, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return ag_err(err, AG_E_CONFIG, errno, "render.workspace.missing",
				      "workspace directory does not exist or cannot be read");
		if (S_ISLNK(st.st_mode))
			return ag_err(err, AG_E_UNSAFE_PATH, 0, "render.workspace.symlink",
				      "workspace path contains a symbolic link");
		if (!S_ISDIR(st.st_mode))
			return ag_err(err, AG_E_CONFIG, 0, "render.workspace.not_directory",
				      "workspace path is not a directory");
		int nfd = openat(dfd, save, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return ag_err(err, AG_E_CONFIG, errno, "render.workspace.missing",
				      "workspace directory cannot be opened");
		close(dfd);
		dfd = nfd;
		if (!slash)
			break;
		save = slash + 1;
	}
	return 0;
}

struct render_args {
	const char *path, *workspace, *name;
	enum ag_render_mode mode;
	bool as_argv;
	struct ag_strv *label_kv;
	char **child;
	size_t n_child;
};

static int render(const struct render_args *ra)
{
	const struct ag_strv *lkv = ra->label_kv;
	_cleanup_err_ struct ag_error *err = NULL;
	_cleanup_config_ struct ag_config *c = NULL;
	if (ag_config_load(ra->path, &c, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	_cleanup_free_ char *ws = NULL;
	if (ra->workspace) {
		if (workspace_path(ra->workspace, &ws, &err) < 0 ||
		    check_no_symlink(ws, &err) < 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
	}
	/* Values are never printed: every configured entry is a placeholder. */
	_cleanup_strv_ struct ag_strv env = AG_STRV_INIT;
	for (size_t i = 0; i < c->contained.n_env; i++)
		ag_strv_pushf(&env, "%s=" AG_PH_SECRET, c->contained.env[i].name);
	_cleanup_free_ struct ag_label *labels =
	    lkv->n ? ag_xcalloc(lkv->n, sizeof(*labels)) : NULL;
	for (size_t i = 0; i < lkv->n; i++) {
		char *eq = strchr(lkv->v[i], '=');
		if (!eq)
			return ag_cli_usage("render", "--label needs KEY=VALUE");
		*eq = '\0';
		labels[i] = (struct ag_label){lkv->v[i], eq + 1};
	}
	struct ag_exec_inputs in = {
	    .workspace_host_path = ws,
	    .container_name = ra->name,
	    .env = (const char *const *)env.v,
	    .n_env = env.n,
	    .labels = labels,
	    .n_labels = lkv->n,
	    .command = (const char *const *)ra->child,
	    .n_command = ra->n_child,
	};
	struct ag_exec_spec spec;
	_cleanup_strv_ struct ag_strv out = AG_STRV_INIT;
	if (ag_exec_spec_from_config(c, &in, &spec, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	if (!ra->as_argv && ag_cli_json_mode)
		return ag_cli_usage("render", "--json prints the argv document; --format request "
					      "is JSON already");
	if (!ra->as_argv) {
		json_t *body = NULL;
		if (ag_render_create_request(&spec, &body, &err) < 0) {
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		char *path = ag_xasprintf("/v1.41/containers/create%s%s", ra->name ? "?name=" : "",
					  ra->name ? ra->name : "");
		json_t *req =
		    json_pack("{s:s,s:s,s:o}", "method", "POST", "path", path, "body", body);
		free(path);
		char *txt = req ? json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		json_decref(req);
		if (!txt) {
			ag_err(&err, AG_E_CONFIG, 0, "render.output.not_utf8",
			       "the request is not valid UTF-8 and cannot be shown as JSON");
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		puts(txt);
		free(txt);
		return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
	}
	if (ag_render_argv(&spec, ra->mode, &out, &err) < 0) {
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < out.n; i++) {
		json_t *s = json_string(out.v[i]); /* NULL when not UTF-8 */
		if (!s) {
			json_decref(arr);
			ag_err(&err, AG_E_CONFIG, 0, "render.output.not_utf8",
			       "argument %zu is not valid UTF-8 and cannot be shown as JSON",
			       i + 1);
			ag_cli_print_error(err);
			return AG_EXIT_CONFIG;
		}
		json_array_append_new(arr, s);
	}
	if (ag_cli_json_mode) {
		/* --json: the versioned object {schema, schema_version, argv} */
		json_t *o = json_object();
		json_object_set_new(o, "argv", arr);
		return ag_cli_json_print(o, "agentguard.render") == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
	}
	char *txt = json_dumps(arr, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(arr);
	if (!txt)
		abort();
	puts(txt);
	free(txt);
	return fflush(stdout) == 0 ? AG_EXIT_PASS : AG_EXIT_FAIL;
}

int ag_cmd_render(int argc, char **argv)
{
	int boundary = -1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			boundary = i;
			break;
		}
	int end = boundary < 0 ? argc : boundary;
	const char *path = NULL, *workspace = NULL, *name = NULL;
	enum ag_render_mode mode = AG_RENDER_RUN;
	bool as_argv = true;
	struct ag_strv label_kv = AG_STRV_INIT;
	int rc = AG_EXIT_CONFIG;
	for (int i = 1; i < end; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(help, stdout);
			rc = AG_EXIT_PASS;
			goto out;
		}
		bool takes = strcmp(a, "--workspace") == 0 || strcmp(a, "--name") == 0 ||
			     strcmp(a, "--label") == 0 || strcmp(a, "--mode") == 0 ||
			     strcmp(a, "--format") == 0;
		if (takes && i + 1 >= end) {
			rc = ag_cli_usage("render", "option '%s' needs a value", a);
			goto out;
		}
		if (strcmp(a, "--workspace") == 0) {
			workspace = argv[++i];
			if (!workspace[0]) {
				rc = ag_cli_usage("render", "--workspace needs a directory");
				goto out;
			}
		} else if (strcmp(a, "--name") == 0) {
			name = argv[++i];
		} else if (strcmp(a, "--label") == 0) {
			ag_strv_push(&label_kv, argv[++i]);
		} else if (strcmp(a, "--format") == 0) {
			const char *m = argv[++i];
			if (strcmp(m, "request") == 0) {
				as_argv = false;
			} else if (strcmp(m, "argv") == 0) {
				as_argv = true;
			} else {
				rc = ag_cli_usage("render", "--format must be argv or request");
				goto out;
			}
		} else if (strcmp(a, "--json") == 0) {
			/* JSON mode was set by ag_cli_json_scan */
		} else if (strcmp(a, "--mode") == 0) {
			const char *m = argv[++i];
			if (strcmp(m, "run") == 0) {
				mode = AG_RENDER_RUN;
			} else if (strcmp(m, "create") == 0) {
				mode = AG_RENDER_CREATE;
			} else {
				rc = ag_cli_usage("render", "--mode must be run or create");
				goto out;
			}
		} else if (a[0] == '-' && a[1]) {
			rc = ag_cli_usage("render", "unknown option '%s'", a);
			goto out;
		} else if (path) {
			rc = boundary < 0 ? ag_cli_usage("render", "missing '--' before the child "
								   "command")
					  : ag_cli_usage("render", "only one CONFIG may be given");
			goto out;
		} else {
			path = a;
		}
	}
	if (!path) {
		rc = ag_cli_usage("render", "missing CONFIG argument");
		goto out;
	}
	/* CONTRACT: cli.boundary (a literal "--" is required) */
	if (boundary < 0) {
		rc = ag_cli_usage("render", "missing '--' before the child command");
		goto out;
	}
	if (boundary + 1 >= argc) {
		rc = ag_cli_usage("render", "no child command after '--'");
		goto out;
	}

	{
		struct render_args ra = {path,
					 workspace,
					 name,
					 mode,
					 as_argv,
					 &label_kv,
					 argv + boundary + 1,
					 (size_t)(argc - boundary - 1)};
		rc = render(&ra);
	}
out:
	ag_strv_release(&label_kv);
	return rc;
}
