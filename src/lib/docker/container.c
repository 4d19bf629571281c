#include "lib/base/ag.h"
#include "lib/docker/container.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/strv.h"
#include "lib/docker/docker_cli.h"
#include "lib/docker/docker_json.h"

#include <strings.h>

static bool stderr_says_absent(const struct ag_proc_result *r)
{
	return strcasestr(r->err.buf, "no such object") || strcasestr(r->err.buf, "no such container");
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \n\r\t", s[i]))
			return false;
	return true;
}

/*
 * Only the fields AgentGuard judges (Config.Healthcheck: the run requires
 * it disabled; read with `index`, since Docker omits the key when unset and
 * a plain field access is then a template error): not Config.Cmd/Args (an agent argv can
 * be megabytes and would break the output bound) nor Config.Env (values
 * never need to reach AgentGuard again).
 */
static const char inspect_format[] =
	"{\"Id\":{{json .Id}},\"Name\":{{json .Name}},\"Created\":{{json .Created}},"
	"\"Image\":{{json .Image}},\"Config\":{\"User\":{{json .Config.User}},"
	"\"Labels\":{{json .Config.Labels}},\"Healthcheck\":{{json (index .Config \"Healthcheck\")}}},"
	"\"HostConfig\":{{json .HostConfig}},"
	"\"Mounts\":{{json .Mounts}},\"State\":{{json .State}}}";

int ag_container_lookup(const struct ag_docker_cli *cli, const char *what, unsigned timeout_ms,
			json_t **obj)
{
	const char *args[] = {"container", "inspect", "--format", inspect_format, "--", what, NULL};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	int ret = -1;
	if (ag_docker_run(cli, args, AG_DOCKER_INSPECT_OUTPUT_MAX + 1, timeout_ms, &r, &e) < 0)
		goto out;
	if (r.status != AG_PROC_EXITED || r.stdout_truncated)
		goto out;
	if (r.exit_code != 0) {
		if (!blank(r.out.buf, r.out.len)) {
			json_t *v = NULL;
			if (ag_docker_json_parse(r.out.buf, r.out.len, false, NULL, 0, &v, &e) < 0)
				goto out;
			bool empty = json_is_array(v) && json_array_size(v) == 0;
			json_decref(v);
			if (!empty)
				goto out;
		}
		if (stderr_says_absent(&r))
			ret = 1;
		goto out;
	}
	json_t *v = NULL;
	if (ag_docker_json_parse(r.out.buf, r.out.len, false, NULL,
				 AG_DOCKER_JSON_OBJECT | AG_DOCKER_JSON_UNWRAP_SINGLE, &v, &e) < 0)
		goto out;
	if (obj)
		*obj = v;
	else
		json_decref(v);
	ret = 0;
out:
	ag_error_free(e);
	ag_proc_result_release(&r);
	return ret;
}

bool ag_container_owned(const json_t *v, const char *id, const struct ag_container_owner *o)
{
	const char *vid = ag_json_path_str(v, "Id");
	const char *name = ag_json_path_str(v, "Name");
	if (!vid || !id || strcmp(vid, id) != 0)
		return false;
	if (!name || name[0] != '/' || !o->name || strcmp(name + 1, o->name) != 0)
		return false;
	const json_t *labels = ag_json_path(v, "Config.Labels");
	if (!json_is_object(labels) || o->n_labels == 0)
		return false;
	for (size_t i = 0; i < o->n_labels; i++) {
		const char *lv = json_string_value(json_object_get(labels, o->labels[i].key));
		if (!lv || strcmp(lv, o->labels[i].value) != 0)
			return false;
	}
	return true;
}

int ag_container_volumes(const json_t *v, struct ag_strv *names)
{
	const json_t *mounts = json_object_get(v, "Mounts");
	if (!mounts || json_is_null(mounts))
		return 0;
	if (!json_is_array(mounts))
		return -1;
	size_t i;
	const json_t *mt;
	int other = 0;
	json_array_foreach(mounts, i, mt)
	{
		const char *type = ag_json_path_str(mt, "Type");
		if (!type || strcmp(type, "volume") != 0)
			continue;
		const char *name = ag_json_path_str(mt, "Name");
		/*
		 * Only Docker's anonymous volumes, named by 64 lowercase hex digits
		 * like a container id: AgentGuard names none of its own.
		 */
		if (!ag_is_container_id(name) || names->n >= AG_RUN_CONTAINER_VOLUMES_MAX) {
			other = -1;
			continue;
		}
		ag_strv_push(names, name);
	}
	return other;
}

int ag_volume_lookup(const struct ag_docker_cli *cli, const char *name, unsigned timeout_ms)
{
	const char *args[] = {"volume", "inspect", "--format", "{{.Name}}", "--", name, NULL};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	int ret = -1;
	if (ag_docker_run(cli, args, AG_DOCKER_CONTROL_OUTPUT_MAX, timeout_ms, &r, &e) == 0 &&
	    r.status == AG_PROC_EXITED && !r.stdout_truncated) {
		size_t n = strlen(name);
		if (r.exit_code == 0 && strncmp(r.out.buf, name, n) == 0 &&
		    blank(r.out.buf + n, r.out.len - n))
			ret = 0;
		else if (r.exit_code != 0 && blank(r.out.buf, r.out.len) &&
			 strcasestr(r.err.buf, "no such volume"))
			ret = 1;
	}
	ag_error_free(e);
	ag_proc_result_release(&r);
	return ret;
}

bool ag_volumes_gone(const struct ag_docker_cli *cli, const struct ag_strv *names,
		     unsigned timeout_ms)
{
	bool all = true;
	for (size_t i = 0; i < names->n; i++) {
		int a = ag_volume_lookup(cli, names->v[i], timeout_ms);
		if (a == 0) {
			/* `rm -v` left it: remove it by the name its container showed. */
			const char *args[] = {"volume", "rm", "--", names->v[i], NULL};
			struct ag_proc_result r;
			ag_proc_result_init(&r);
			struct ag_error *e = NULL;
			(void)ag_docker_run(cli, args, AG_DOCKER_CONTROL_OUTPUT_MAX, timeout_ms, &r, &e);
			ag_error_free(e);
			ag_proc_result_release(&r);
			a = ag_volume_lookup(cli, names->v[i], timeout_ms);
		}
		if (a != 1)
			all = false;
	}
	return all;
}

int ag_container_create(const struct ag_docker_cli *cli, const struct ag_strv *argv,
			unsigned timeout_ms, char **id, struct ag_error **err)
{
	if (argv->n == 0 || strcmp(argv->v[0], "create") != 0)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.create.argv",
			      "create argv must start with 'create'");
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	int rc = 0;
	if (ag_docker_run(cli, (const char *const *)ag_strv_argv(argv), AG_DOCKER_CONTROL_OUTPUT_MAX,
			  timeout_ms, &r, err) < 0) {
		rc = -1;
		goto out;
	}
	if (ag_docker_check(&r, "docker create", err) < 0) {
		(*err)->reason = "docker.create.failed";
		rc = -1;
		goto out;
	}
	/* Exactly one line: the 64-hex id. */
	size_t n = r.out.len;
	while (n && (r.out.buf[n - 1] == '\n' || r.out.buf[n - 1] == '\r'))
		n--;
	char *line = ag_xstrndup(r.out.buf, n);
	if (!ag_is_container_id(line)) {
		free(line);
		rc = ag_err(err, AG_E_DOCKER, 0, "docker.create.bad_id",
			    "docker create did not print exactly one container id");
		goto out;
	}
	*id = line;
out:
	ag_proc_result_release(&r);
	return rc;
}

const char *ag_cleanup_state_name(enum ag_cleanup_state s)
{
	switch (s) {
	case AG_CLEANUP_NOT_CREATED:
		return "not_created";
	case AG_CLEANUP_REMOVED:
		return "removed";
	case AG_CLEANUP_ALREADY_ABSENT:
		return "already_absent";
	case AG_CLEANUP_CLEANLY_TERMINATED:
		return "cleanly_terminated";
	case AG_CLEANUP_FORCE_KILLED:
		return "force_killed";
	case AG_CLEANUP_INCOMPLETE:
		return "cleanup_incomplete";
	case AG_CLEANUP_VERIFICATION_UNAVAILABLE:
	default:
		return "verification_unavailable";
	}
}

bool ag_cleanup_state_complete(enum ag_cleanup_state s)
{
	return s == AG_CLEANUP_NOT_CREATED || s == AG_CLEANUP_REMOVED ||
	       s == AG_CLEANUP_ALREADY_ABSENT || s == AG_CLEANUP_CLEANLY_TERMINATED ||
	       s == AG_CLEANUP_FORCE_KILLED;
}

/* A docker control call that succeeded, or whose target is already gone. */
static bool control(const struct ag_docker_cli *cli, const char *const *args, unsigned timeout_ms)
{
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	bool ok = ag_docker_run(cli, args, AG_DOCKER_CONTROL_OUTPUT_MAX, timeout_ms, &r, &e) == 0 &&
		  r.status == AG_PROC_EXITED && (r.exit_code == 0 || stderr_says_absent(&r));
	ag_error_free(e);
	ag_proc_result_release(&r);
	return ok;
}

/*
 * 1 absent, 0 present and ours (running set), -1 unavailable or not ours.
 * With vols, the container's anonymous volumes are added to it (a mount
 * that is not one makes the answer -1).
 */
static int observe(const struct ag_docker_cli *cli, const char *id,
		   const struct ag_container_owner *o, unsigned timeout_ms, bool *running,
		   struct ag_strv *vols)
{
	json_t *v = NULL;
	int r = ag_container_lookup(cli, id, timeout_ms, &v);
	if (r != 0)
		return r;
	int ret = -1;
	if (ag_container_owned(v, id, o) && (!vols || ag_container_volumes(v, vols) == 0)) {
		const json_t *run = ag_json_path(v, "State.Running");
		if (json_is_boolean(run)) {
			*running = json_is_true(run);
			ret = 0;
		}
	}
	json_decref(v);
	return ret;
}

void ag_container_cleanup(const struct ag_docker_cli *cli, const char *id,
			  const struct ag_container_owner *owner, unsigned timeout_ms,
			  struct ag_cleanup_result *out)
{
	memset(out, 0, sizeof(*out));
	if (!id) {
		out->state = AG_CLEANUP_NOT_CREATED;
		out->liveness_verified = true;
		out->message = "no container was created";
		return;
	}
	out->attempted = true;
	bool running = false, was_running = false, stopped = false, killed = false;
	/* Learned before removal: the names of the anonymous volumes (image VOLUME). */
	struct ag_strv vols = AG_STRV_INIT;
	int o = observe(cli, id, owner, timeout_ms, &running, &vols);
	if (o == 1) {
		out->state = AG_CLEANUP_ALREADY_ABSENT;
		out->liveness_verified = true;
		out->message = "container was already absent";
		goto done;
	}
	if (o < 0) {
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = "container identity could not be verified before cleanup";
		goto done;
	}
	was_running = running;
	if (running) {
		const char *stop[] = {"stop", "--time", "2", "--", id, NULL};
		stopped = control(cli, stop, timeout_ms + 2000);
		o = observe(cli, id, owner, timeout_ms, &running, NULL);
		if (o == 1) {
			out->state = AG_CLEANUP_ALREADY_ABSENT;
			out->liveness_verified = true;
			out->message = "container disappeared while stopping";
			goto done;
		}
		if (o < 0) {
			out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
			out->message = "container state could not be verified after stop";
			goto done;
		}
		if (running) {
			const char *kill[] = {"kill", "--", id, NULL};
			killed = control(cli, kill, timeout_ms);
			o = observe(cli, id, owner, timeout_ms, &running, NULL);
			if (o < 0) {
				out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
				out->message = "container state could not be verified after kill";
				goto done;
			}
			if (o == 0 && running) {
				out->state = AG_CLEANUP_INCOMPLETE;
				out->message = killed ? "container remained alive after kill"
						      : "force kill failed";
				goto done;
			}
		}
	}
	/* -v: the container's anonymous volumes go with it (verified below). */
	const char *rm[] = {"rm", "-v", "--", id, NULL};
	bool removed = control(cli, rm, timeout_ms);
	int a = ag_container_lookup(cli, id, timeout_ms, NULL);
	if (a == 1 && !ag_volumes_gone(cli, &vols, timeout_ms)) {
		out->state = AG_CLEANUP_INCOMPLETE;
		out->message = "an anonymous volume of the container remained after removal";
		goto done;
	}
	if (a == 1) {
		out->liveness_verified = true;
		if (killed) {
			out->state = AG_CLEANUP_FORCE_KILLED;
			out->message = "container was force-killed and removed";
		} else if (was_running && stopped) {
			out->state = AG_CLEANUP_CLEANLY_TERMINATED;
			out->message = "container was stopped and removed";
		} else {
			out->state = AG_CLEANUP_REMOVED;
			out->message = "container was removed";
		}
		goto done;
	}
	if (a < 0) {
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = "container absence could not be verified after removal";
		goto done;
	}
	out->state = AG_CLEANUP_INCOMPLETE;
	out->message = removed ? "removal could not be verified" : "removal failed";
done:
	ag_strv_release(&vols);
}

int ag_container_cleanup_labelled(const struct ag_docker_cli *cli, const char *key,
				  const char *value, const struct ag_container_owner *owner,
				  unsigned timeout_ms, ag_cleanup_each_fn each, void *data,
				  struct ag_cleanup_result *worst, size_t *removed)
{
	struct ag_strv ids = AG_STRV_INIT;
	*removed = 0;
	memset(worst, 0, sizeof(*worst));
	if (ag_container_list_labelled(cli, key, value, timeout_ms, &ids) < 0) {
		ag_strv_release(&ids);
		return -1;
	}
	worst->state = AG_CLEANUP_NOT_CREATED;
	worst->liveness_verified = true;
	worst->message = "no container carries the label";
	bool incomplete = false;
	for (size_t i = 0; i < ids.n; i++) {
		struct ag_cleanup_result cr;
		ag_container_cleanup(cli, ids.v[i], owner, timeout_ms, &cr);
		if (each)
			each(ids.v[i], &cr, data);
		if (ag_cleanup_state_complete(cr.state) && cr.state != AG_CLEANUP_ALREADY_ABSENT)
			(*removed)++;
		if (!incomplete)
			*worst = cr;
		if (!ag_cleanup_state_complete(cr.state))
			incomplete = true;
	}
	ag_strv_release(&ids);
	return 0;
}

int ag_container_list_labelled(const struct ag_docker_cli *cli, const char *key,
			       const char *value, unsigned timeout_ms, struct ag_strv *ids)
{
	char *filter = ag_xasprintf("label=%s=%s", key, value);
	const char *args[] = {"ps", "-a", "--no-trunc", "--filter", filter, "--format", "{{.ID}}",
			      NULL};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	int ret = -1;
	/* 65 bytes per id line, bounded number of ids. */
	if (ag_docker_run(cli, args, (size_t)AG_RUN_RESIDUE_MAX * 65 + 1, timeout_ms, &r, &e) < 0 ||
	    ag_docker_check(&r, "docker ps", &e) < 0)
		goto out;
	for (char *p = r.out.buf; *p;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n) {
			char *line = ag_xstrndup(p, n);
			if (!ag_is_container_id(line) || ids->n >= AG_RUN_RESIDUE_MAX) {
				free(line);
				goto out;
			}
			ag_strv_push_owned(ids, line);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	ret = 0;
out:
	free(filter);
	ag_error_free(e);
	ag_proc_result_release(&r);
	return ret;
}
