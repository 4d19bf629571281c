/*
 * ledger.c: every Docker object AgentGuard owns, created, found and
 * removed here (ledger.h), over the Engine API (engine.h).
 */
#include "lib/base/ag.h"
#include "lib/docker/ledger.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/json.h"
#include "lib/base/strv.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/engine.h"
#include "lib/docker/exec_spec.h"

#define CONTAINERS "/containers/json?all=1&"
#define NETWORKS "/networks?"

static void network_remove_one(struct ag_engine *eng, const char *id,
			       const struct ag_container_owner *owner, unsigned timeout_ms,
			       bool created_here, struct ag_cleanup_result *out, bool *foreign);
static int listed_by_exact_id(struct ag_engine *eng, const char *id, unsigned timeout_ms);

static const struct ag_docker_json_limits inspect_limits = {
    .max_bytes = AG_ENGINE_INSPECT_MAX_BYTES,
    .max_depth = AG_PF_JSON_MAX_DEPTH,
    .max_items = AG_ENGINE_INSPECT_MAX_ITEMS,
    .max_string = AG_ENGINE_INSPECT_MAX_STRING,
};

int ag_container_lookup(struct ag_engine *eng, const char *what, unsigned timeout_ms, json_t **obj)
{
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	struct ag_error *e = NULL;
	int ret = -1;
	_cleanup_free_ char *q = ag_engine_escape(what);
	_cleanup_free_ char *path = ag_xasprintf("/containers/%s/json", q);
	if (ag_engine_call(eng, "GET", path, NULL, timeout_ms, AG_ENGINE_INSPECT_MAX_BYTES, &r,
			   &e) < 0)
		goto out;
	if (r.status == 404) {
		ret = 1;
		goto out;
	}
	if (r.status != 200)
		goto out;
	json_t *v = NULL;
	if (ag_docker_json_parse(r.body.buf, r.body.len, false, &inspect_limits,
				 AG_DOCKER_JSON_OBJECT, &v, &e) < 0)
		goto out;
	/* The command and the environment go no further than this. */
	json_t *cfg = json_object_get(v, "Config");
	if (json_is_object(cfg)) {
		json_object_del(cfg, "Cmd");
		json_object_del(cfg, "Env");
	}
	json_object_del(v, "Args");
	json_object_del(v, "Path");
	if (obj)
		*obj = v;
	else
		json_decref(v);
	ret = 0;
out:
	ag_error_free(e);
	ag_engine_reply_release(&r);
	return ret;
}

/* Every owner label is present with its value. */
static bool labels_match(const json_t *labels, const struct ag_container_owner *o)
{
	if (!json_is_object(labels) || o->n_labels == 0)
		return false;
	for (size_t i = 0; i < o->n_labels; i++) {
		const char *lv = json_string_value(json_object_get(labels, o->labels[i].key));
		if (!lv || strcmp(lv, o->labels[i].value) != 0)
			return false;
	}
	return true;
}

bool ag_container_owned(const json_t *v, const char *id, const struct ag_container_owner *o)
{
	const char *vid = ag_json_path_str(v, "Id");
	const char *name = ag_json_path_str(v, "Name");
	if (!vid || !id || strcmp(vid, id) != 0)
		return false;
	if (!name || name[0] != '/' || !o->name || strcmp(name + 1, o->name) != 0)
		return false;
	return labels_match(ag_json_path(v, "Config.Labels"), o);
}

/* A create's answer: its "Id" must be one 64-hex id (*id, owned by the
 * caller). Consumes `v`. */
static int created_id(json_t *v, const char *reason, const char *kind, char **id,
		      struct ag_error **err)
{
	const char *got = json_string_value(json_object_get(v, "Id"));
	int rc = 0;
	if (ag_is_container_id(got))
		*id = ag_xstrdup(got);
	else
		rc = ag_err(err, AG_E_DOCKER, 0, reason,
			    "the daemon did not answer one 64-hex %s id", kind);
	json_decref(v);
	return rc;
}

/* POST /containers/create?name=NAME (ag_ledger_entry_create). */
static int container_create(struct ag_engine *eng, const struct ag_exec_spec *spec,
			    unsigned timeout_ms, char **id, struct ag_error **err)
{
	*id = NULL;
	if (!spec->container_name)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.create.no_name",
			      "an owned container needs a name");
	json_t *body = NULL;
	if (ag_render_create_request(spec, &body, err) < 0)
		return -1;
	_cleanup_free_ char *path =
	    ag_xasprintf("/containers/create?name=%s", spec->container_name);
	json_t *v = NULL;
	int rc =
	    ag_engine_json(eng, "POST", path, body, timeout_ms, "create the container", &v, err);
	json_decref(body);
	if (rc < 0)
		return -1;
	return created_id(v, "docker.create.bad_id", "container", id, err);
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
	case AG_CLEANUP_UNOWNED_NOT_REMOVED:
		return "unowned_not_removed";
	case AG_CLEANUP_VERIFICATION_UNAVAILABLE:
	case AG_CLEANUP__COUNT:
	default:
		return "verification_unavailable";
	}
}

bool ag_cleanup_state_complete(enum ag_cleanup_state s)
{
	return s == AG_CLEANUP_NOT_CREATED || s == AG_CLEANUP_REMOVED ||
	       s == AG_CLEANUP_ALREADY_ABSENT || s == AG_CLEANUP_CLEANLY_TERMINATED ||
	       s == AG_CLEANUP_FORCE_KILLED || s == AG_CLEANUP_UNOWNED_NOT_REMOVED;
}

const char *ag_cleanup_state_manifest_word(enum ag_cleanup_state s)
{
	switch (s) {
	case AG_CLEANUP_NOT_CREATED:
	case AG_CLEANUP_UNOWNED_NOT_REMOVED:
		return "not_created"; /* nothing of ours was there */
	case AG_CLEANUP_ALREADY_ABSENT:
		return "already_absent";
	case AG_CLEANUP_REMOVED:
	case AG_CLEANUP_CLEANLY_TERMINATED:
	case AG_CLEANUP_FORCE_KILLED:
		return "removed";
	case AG_CLEANUP_INCOMPLETE:
	case AG_CLEANUP_VERIFICATION_UNAVAILABLE:
	case AG_CLEANUP__COUNT:
	default:
		return "incomplete";
	}
}

/* A control request that succeeded, or whose target is already gone. */
static bool control(struct ag_engine *eng, const char *method, const char *path,
		    unsigned timeout_ms)
{
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	struct ag_error *e = NULL;
	bool ok = ag_engine_call(eng, method, path, NULL, timeout_ms, AG_DOCKER_CONTROL_OUTPUT_MAX,
				 &r, &e) == 0 &&
		  ((r.status >= 200 && r.status < 300) || r.status == 304 || r.status == 404);
	ag_error_free(e);
	ag_engine_reply_release(&r);
	return ok;
}

/* 1 absent, 0 present and ours (running set), 2 present and not ours,
 * -1 unavailable. */
static int observe(struct ag_engine *eng, const char *id, const struct ag_container_owner *o,
		   unsigned timeout_ms, bool *running, struct ag_strv *volumes)
{
	json_t *v = NULL;
	int r = ag_container_lookup(eng, id, timeout_ms, &v);
	if (r != 0)
		return r;
	/* The anonymous volumes it holds (an image's VOLUME lines): their
	 * absence is verified after the removal too. */
	const json_t *mounts = json_object_get(v, "Mounts");
	size_t i;
	const json_t *m;
	if (volumes && json_is_array(mounts))
		json_array_foreach(mounts, i, m)
		{
			const char *name = ag_json_path_str(m, "Name");
			if (strcmp(ag_json_str_or(json_object_get(m, "Type"), ""), "volume") == 0 &&
			    ag_is_container_id(name) && volumes->n < AG_LEDGER_VOLUMES_MAX &&
			    ag_strv_find(volumes, name) < 0)
				ag_strv_push(volumes, name);
		}
	/* 3: another object answered to this id (another's, named with it) */
	int ret = strcmp(ag_json_str_or(json_object_get(v, "Id"), ""), id) == 0 ? 2 : 3;
	if (ag_container_owned(v, id, o)) {
		const json_t *run = ag_json_path(v, "State.Running");
		ret = -1;
		if (json_is_boolean(run)) {
			*running = json_is_true(run);
			ret = 0;
		}
	}
	json_decref(v);
	return ret;
}

/* 1 every volume is gone (404), 0 one remains, -1 unknown. */
static int volumes_gone(struct ag_engine *eng, const struct ag_strv *volumes, unsigned timeout_ms)
{
	int ret = 1;
	for (size_t i = 0; i < volumes->n; i++) {
		_cleanup_free_ char *path = ag_xasprintf("/volumes/%s", volumes->v[i]);
		struct ag_engine_reply r;
		ag_engine_reply_init(&r);
		struct ag_error *e = NULL;
		if (ag_engine_call(eng, "GET", path, NULL, timeout_ms, AG_PF_JSON_MAX_BYTES, &r,
				   &e) < 0 ||
		    (r.status != 404 && r.status != 200))
			ret = ret == 0 ? 0 : -1;
		else if (r.status == 200)
			ret = 0;
		ag_error_free(e);
		ag_engine_reply_release(&r);
	}
	return ret;
}

/*
 * The start every remove-one step shares: a clean result, nothing foreign
 * yet, and for a NULL id (nothing was created) the final "not created"
 * state. Returns whether there is an id to act on (result: attempted).
 */
static bool cleanup_begin(const char *id, const char *none, struct ag_cleanup_result *out,
			  bool *foreign)
{
	memset(out, 0, sizeof(*out));
	if (foreign)
		*foreign = false;
	if (!id) {
		out->state = AG_CLEANUP_NOT_CREATED;
		out->liveness_verified = true;
		out->message = none;
		return false;
	}
	out->attempted = true;
	return true;
}

/*
 * `created_here`: the id is the one the daemon answered to this process's
 * own create, so it is ours whatever an inspection claims; a contradictory
 * inspection then skips the graceful stop and goes straight to the forced
 * removal by that id.
 */
static void cleanup_one(struct ag_engine *eng, const char *id,
			const struct ag_container_owner *owner, unsigned timeout_ms,
			bool created_here, struct ag_cleanup_result *out, bool *foreign)
{
	if (!cleanup_begin(id, "no container was created", out, foreign))
		return;
	bool running = false, was_running = false, stopped = false, killed = false;
	_cleanup_strv_ struct ag_strv volumes = AG_STRV_INIT;
	int o = observe(eng, id, owner, timeout_ms, &running, &volumes);
	if (o == 1) {
		out->state = AG_CLEANUP_ALREADY_ABSENT;
		out->liveness_verified = true;
		out->message = "container was already absent";
		return;
	}
	if ((o == 2 || o == 3) && foreign)
		*foreign = true;
	/* An inspection naming another Id: while the list still shows our
	 * create's exact id, the id addresses our container (a contradictory
	 * engine); when it does not, another object answers and is never touched. */
	if (o == 3 && created_here && listed_by_exact_id(eng, id, timeout_ms) == 1)
		o = 2;
	/* Our own create's id with another name or labels is still ours (2). */
	if (o == 2 && created_here)
		running = false;
	else if (o != 0) {
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = "container identity could not be verified before cleanup";
		return;
	}
	_cleanup_free_ char *stop =
	    ag_xasprintf("/containers/%s/stop?t=%d", id, AG_ENGINE_STOP_SECONDS);
	_cleanup_free_ char *kill = ag_xasprintf("/containers/%s/kill", id);
	_cleanup_free_ char *rm = ag_xasprintf("/containers/%s?force=1&v=1", id);
	was_running = running;
	if (running) {
		stopped = control(eng, "POST", stop, timeout_ms + AG_ENGINE_STOP_SECONDS * 1000);
		o = observe(eng, id, owner, timeout_ms, &running, NULL);
		if (o == 1) {
			out->state = AG_CLEANUP_ALREADY_ABSENT;
			out->liveness_verified = true;
			out->message = "container disappeared while stopping";
			return;
		}
		if (o != 0) {
			out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
			out->message = "container state could not be verified after stop";
			return;
		}
		if (running) {
			killed = control(eng, "POST", kill, timeout_ms);
			o = observe(eng, id, owner, timeout_ms, &running, NULL);
			if (o < 0 || o == 2) {
				out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
				out->message = "container state could not be verified after kill";
				return;
			}
			if (o == 0 && running) {
				out->state = AG_CLEANUP_INCOMPLETE;
				out->message = killed ? "container remained alive after kill"
						      : "force kill failed";
				return;
			}
		}
	}
	/* CONTRACT: cleanup.identity_bound; v=1: the image's VOLUME lines leave nothing. */
	bool removed = control(eng, "DELETE", rm, timeout_ms);
	int a = ag_container_lookup(eng, id, timeout_ms, NULL);
	if (a == 1) {
		int vg = volumes_gone(eng, &volumes, timeout_ms);
		if (vg != 1) {
			out->state =
			    vg == 0 ? AG_CLEANUP_INCOMPLETE : AG_CLEANUP_VERIFICATION_UNAVAILABLE;
			out->message = vg == 0
					   ? "an anonymous volume of the container remained"
					   : "the absence of the container's volumes could not be "
					     "verified";
			return;
		}
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
		return;
	}
	if (a < 0) {
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = "container absence could not be verified after removal";
		return;
	}
	out->state = AG_CLEANUP_INCOMPLETE;
	out->message = removed ? "removal could not be verified" : "removal failed";
}

void ag_container_cleanup(struct ag_engine *eng, const char *id,
			  const struct ag_container_owner *owner, unsigned timeout_ms,
			  struct ag_cleanup_result *out)
{
	cleanup_one(eng, id, owner, timeout_ms, false, out, NULL);
}

/* Ids of the objects WHAT ("/containers/json?all=1&" or "/networks?") that
 * match the engine filter FILTER (label or id), bounded to AG_RUN_RESIDUE_MAX;
 * takes FILTER. */
static int list_filtered(struct ag_engine *eng, const char *what, json_t *filter,
			 unsigned timeout_ms, struct ag_strv *ids)
{
	_cleanup_free_ char *fs = json_dumps(filter, JSON_COMPACT);
	json_decref(filter);
	if (!fs)
		return -1;
	_cleanup_free_ char *q = ag_engine_escape(fs);
	_cleanup_free_ char *path = ag_xasprintf("%sfilters=%s", what, q);
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	struct ag_error *e = NULL;
	json_t *v = NULL;
	int ret = -1;
	static const struct ag_docker_json_limits lim = {
	    .max_bytes = AG_ENGINE_LIST_MAX_BYTES,
	    .max_depth = AG_PF_JSON_MAX_DEPTH,
	    .max_items = AG_ENGINE_INSPECT_MAX_ITEMS,
	    .max_string = AG_ENGINE_LIST_MAX_STRING,
	};
	if (ag_engine_call(eng, "GET", path, NULL, timeout_ms, AG_ENGINE_LIST_MAX_BYTES, &r, &e) <
		0 ||
	    ag_engine_status_error(&r, "list objects", &e) < 0 ||
	    ag_docker_json_parse(r.body.buf, r.body.len, false, &lim, 0, &v, &e) < 0)
		goto out;
	if (!json_is_array(v) || json_array_size(v) > AG_RUN_RESIDUE_MAX)
		goto out;
	size_t i;
	json_t *c;
	json_array_foreach(v, i, c)
	{
		const char *id = json_string_value(json_object_get(c, "Id"));
		if (!ag_is_container_id(id))
			goto out;
		ag_strv_push(ids, id);
	}
	ret = 0;
out:
	json_decref(v);
	ag_error_free(e);
	ag_engine_reply_release(&r);
	return ret;
}

/* Ids of the objects WHAT with label KEY=VALUE. */
static int list_labelled(struct ag_engine *eng, const char *what, const char *key,
			 const char *value, unsigned timeout_ms, struct ag_strv *ids)
{
	return list_filtered(eng, what, json_pack("{s:[s++]}", "label", key, "=", value),
			     timeout_ms, ids);
}

/*
 * 1 when the engine's container list shows an object whose Id is exactly ID,
 * 0 when it shows none, -1 unknown. The engine resolves a full id before any
 * name, so while the list shows ID, /containers/ID addresses that object and
 * nothing else.
 */
static int listed_by_exact_id(struct ag_engine *eng, const char *id, unsigned timeout_ms)
{
	_cleanup_strv_ struct ag_strv ids = AG_STRV_INIT;
	if (list_filtered(eng, CONTAINERS, json_pack("{s:[s]}", "id", id), timeout_ms, &ids) < 0)
		return -1;
	return ag_strv_find(&ids, id) >= 0 ? 1 : 0;
}

typedef void (*remove_one_fn)(struct ag_engine *eng, const char *id,
			      const struct ag_container_owner *owner, unsigned timeout_ms,
			      bool created_here, struct ag_cleanup_result *out, bool *foreign);

/* Every object WHAT lists with label KEY=VALUE that is `owner`, each by its id. */
static int cleanup_labelled(struct ag_engine *eng, const char *what, remove_one_fn one,
			    const char *key, const char *value,
			    const struct ag_container_owner *owner, unsigned timeout_ms,
			    ag_cleanup_each_fn each, void *data, struct ag_cleanup_result *worst,
			    size_t *removed, size_t *skipped_foreign)
{
	struct ag_strv ids = AG_STRV_INIT;
	*removed = 0;
	if (skipped_foreign)
		*skipped_foreign = 0;
	memset(worst, 0, sizeof(*worst));
	if (list_labelled(eng, what, key, value, timeout_ms, &ids) < 0) {
		ag_strv_release(&ids);
		return -1;
	}
	worst->state = AG_CLEANUP_NOT_CREATED;
	worst->liveness_verified = true;
	worst->message = "nothing carries the label";
	bool incomplete = false;
	for (size_t i = 0; i < ids.n; i++) {
		struct ag_cleanup_result cr;
		bool foreign = false;
		one(eng, ids.v[i], owner, timeout_ms, false, &cr, &foreign);
		if (foreign) {
			/* Carries the label but is not ours: never touched, never counted. */
			if (skipped_foreign)
				(*skipped_foreign)++;
			continue;
		}
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

int ag_container_cleanup_labelled(struct ag_engine *eng, const char *key, const char *value,
				  const struct ag_container_owner *owner, unsigned timeout_ms,
				  ag_cleanup_each_fn each, void *data,
				  struct ag_cleanup_result *worst, size_t *removed,
				  size_t *skipped_foreign)
{
	return cleanup_labelled(eng, CONTAINERS, cleanup_one, key, value, owner, timeout_ms, each,
				data, worst, removed, skipped_foreign);
}

/*
 * Removes what one create made: by `id` when the daemon answered one;
 * otherwise (the answer was lost) every object WHAT lists with the unique
 * label KEY=VALUE that is ours, each by its id. `unlisted`: the message
 * when that list cannot be had; `none_found` (may be NULL): when it is empty.
 */
static void remove_created(struct ag_engine *eng, const char *what, remove_one_fn one,
			   const char *unlisted, const char *none_found, const char *id,
			   bool create_attempted, const char *key, const char *value,
			   const struct ag_container_owner *owner, unsigned timeout_ms,
			   struct ag_cleanup_result *out, size_t *skipped_foreign)
{
	if (skipped_foreign)
		*skipped_foreign = 0;
	if (id || !create_attempted) {
		one(eng, id, owner, timeout_ms, true, out, NULL);
		return;
	}
	size_t removed = 0;
	if (cleanup_labelled(eng, what, one, key, value, owner, timeout_ms, NULL, NULL, out,
			     &removed, skipped_foreign) < 0) {
		memset(out, 0, sizeof(*out));
		out->attempted = true;
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = unlisted;
	} else if (out->state == AG_CLEANUP_NOT_CREATED && none_found) {
		out->message = none_found;
	}
}

/*
 * Removes what container_create made: by `id` when the daemon answered one;
 * otherwise (id NULL after an attempted create) every container carrying
 * the unique label KEY=VALUE that is ours (owner checked), each by its id.
 * *skipped_foreign counts containers with the label that were not ours
 * (never touched).
 */
static void container_remove(struct ag_engine *eng, const char *id, bool create_attempted,
			     const char *key, const char *value,
			     const struct ag_container_owner *owner, unsigned timeout_ms,
			     struct ag_cleanup_result *out, size_t *skipped_foreign)
{
	remove_created(eng, CONTAINERS, cleanup_one,
		       "after a failed create, the containers carrying its label could not be "
		       "listed",
		       "create failed and no container carrying its label exists", id,
		       create_attempted, key, value, owner, timeout_ms, out, skipped_foreign);
}

int ag_container_list_labelled(struct ag_engine *eng, const char *key, const char *value,
			       unsigned timeout_ms, struct ag_strv *ids)
{
	return list_labelled(eng, CONTAINERS, key, value, timeout_ms, ids);
}

/* ---- networks ---- */

int ag_network_lookup(struct ag_engine *eng, const char *what, unsigned timeout_ms, json_t **obj)
{
	static const struct ag_docker_json_limits lim = {
	    .max_bytes = AG_STUDY_NETWORK_INSPECT_MAX,
	    .max_depth = AG_PF_JSON_MAX_DEPTH,
	    .max_items = AG_ENGINE_INSPECT_MAX_ITEMS,
	    .max_string = AG_ENGINE_INSPECT_MAX_STRING,
	};
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	struct ag_error *e = NULL;
	int ret = -1;
	_cleanup_free_ char *q = ag_engine_escape(what);
	_cleanup_free_ char *path = ag_xasprintf("/networks/%s", q);
	if (ag_engine_call(eng, "GET", path, NULL, timeout_ms, AG_STUDY_NETWORK_INSPECT_MAX, &r,
			   &e) < 0)
		goto out;
	if (r.status == 404) {
		ret = 1;
		goto out;
	}
	json_t *v = NULL;
	if (r.status != 200 || ag_docker_json_parse(r.body.buf, r.body.len, false, &lim,
						    AG_DOCKER_JSON_OBJECT, &v, &e) < 0)
		goto out;
	if (obj)
		*obj = v;
	else
		json_decref(v);
	ret = 0;
out:
	ag_error_free(e);
	ag_engine_reply_release(&r);
	return ret;
}

bool ag_network_owned(const json_t *v, const char *id, const struct ag_container_owner *o)
{
	const char *vid = ag_json_path_str(v, "Id");
	const char *name = ag_json_path_str(v, "Name");
	if (!vid || !id || strcmp(vid, id) != 0 || !name || !o->name || strcmp(name, o->name) != 0)
		return false;
	return labels_match(json_object_get(v, "Labels"), o);
}

/* POST /networks/create (ag_ledger_entry_create). */
static int network_create(struct ag_engine *eng, const struct ag_network_spec *s,
			  unsigned timeout_ms, char **id, struct ag_error **err)
{
	*id = NULL;
	if (!s->name || !s->subnet || !s->subnet[0] || s->n_labels == 0)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.network.spec",
			      "an owned network needs a name, a subnet and labels");
	json_t *labels = json_object();
	for (size_t i = 0; i < s->n_labels; i++)
		json_object_set_new(labels, s->labels[i].key, json_string(s->labels[i].value));
	json_t *opts = json_object();
	if (s->inhibit_ipv4)
		json_object_set_new(opts, "com.docker.network.bridge.inhibit_ipv4",
				    json_string("true"));
	json_t *body =
	    json_pack("{s:s, s:b, s:s, s:b, s:b, s:b, s:{s:s, s:[{s:s}]}, s:o, s:o}", "Name",
		      s->name, "CheckDuplicate", 1, "Driver", "bridge", "Internal", s->internal,
		      "EnableIPv6", 0, "Attachable", 0, "IPAM", "Driver", "default", "Config",
		      "Subnet", s->subnet, "Options", opts, "Labels", labels);
	json_t *v = NULL;
	int rc = ag_engine_json(eng, "POST", "/networks/create", body, timeout_ms,
				"create the network", &v, err);
	json_decref(body);
	if (rc < 0)
		return -1;
	return created_id(v, "docker.network.bad_id", "network", id, err);
}

int ag_network_connect(struct ag_engine *eng, const char *net_id, const char *container_id,
		       const char *ipv4, unsigned timeout_ms, struct ag_error **err)
{
	_cleanup_free_ char *path = ag_xasprintf("/networks/%s/connect", net_id);
	json_t *body = json_pack("{s:s}", "Container", container_id);
	if (ipv4)
		json_object_set_new(body, "EndpointConfig",
				    json_pack("{s:{s:s}}", "IPAMConfig", "IPv4Address", ipv4));
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	int rc = ag_engine_call(eng, "POST", path, body, timeout_ms, AG_DOCKER_CONTROL_OUTPUT_MAX,
				&r, err);
	json_decref(body);
	if (rc == 0)
		rc = ag_engine_status_error(&r, "connect the container to the network", err);
	ag_engine_reply_release(&r);
	return rc;
}

int ag_network_list_labelled(struct ag_engine *eng, const char *key, const char *value,
			     unsigned timeout_ms, struct ag_strv *ids)
{
	return list_labelled(eng, NETWORKS, key, value, timeout_ms, ids);
}

/* One network by id: acted on only while it is ours (or created here). */
static void network_remove_one(struct ag_engine *eng, const char *id,
			       const struct ag_container_owner *owner, unsigned timeout_ms,
			       bool created_here, struct ag_cleanup_result *out, bool *foreign)
{
	if (!cleanup_begin(id, "no network was created", out, foreign))
		return;
	json_t *v = NULL;
	int o = ag_network_lookup(eng, id, timeout_ms, &v);
	if (o == 1) {
		out->state = AG_CLEANUP_ALREADY_ABSENT;
		out->liveness_verified = true;
		out->message = "network was already absent";
		return;
	}
	bool ours = o == 0 && ag_network_owned(v, id, owner);
	json_decref(v);
	if (o == 0 && !ours && foreign)
		*foreign = true;
	if (o < 0 || (!ours && !created_here)) {
		out->state = AG_CLEANUP_VERIFICATION_UNAVAILABLE;
		out->message = "network identity could not be verified before removal";
		return;
	}
	/* CONTRACT: cleanup.identity_bound (by id; members leave with their containers) */
	_cleanup_free_ char *path = ag_xasprintf("/networks/%s", id);
	bool removed = control(eng, "DELETE", path, timeout_ms);
	int a = ag_network_lookup(eng, id, timeout_ms, NULL);
	if (a == 1) {
		out->state = AG_CLEANUP_REMOVED;
		out->liveness_verified = true;
		out->message = "network was removed";
		return;
	}
	out->state = a < 0 ? AG_CLEANUP_VERIFICATION_UNAVAILABLE : AG_CLEANUP_INCOMPLETE;
	out->message = a < 0	 ? "network absence could not be verified after removal"
		       : removed ? "network removal could not be verified"
				 : "network removal failed (members still attached?)";
}

/*
 * Removes a network AgentGuard created: by `id` (DELETE /networks/ID, then
 * 404 by id proves absence); with id NULL after an attempted create, every
 * network with label KEY=VALUE that is ours. A network never created gives
 * not_created. A network whose inspection does not show our name and every
 * owner label is never touched (verification_unavailable), unless `id` is
 * the one this process's own create answered.
 */
static void network_remove(struct ag_engine *eng, const char *id, bool create_attempted,
			   const char *key, const char *value,
			   const struct ag_container_owner *owner, unsigned timeout_ms,
			   struct ag_cleanup_result *out)
{
	remove_created(eng, NETWORKS, network_remove_one,
		       "after a failed create, the networks carrying its label could not be "
		       "listed",
		       NULL, id, create_attempted, key, value, owner, timeout_ms, out, NULL);
}

int ag_network_cleanup_labelled(struct ag_engine *eng, const char *key, const char *value,
				const struct ag_container_owner *owner, unsigned timeout_ms,
				struct ag_cleanup_result *worst, size_t *removed,
				size_t *skipped_foreign)
{
	return cleanup_labelled(eng, NETWORKS, network_remove_one, key, value, owner, timeout_ms,
				NULL, NULL, worst, removed, skipped_foreign);
}

/* ---- the run's ledger ---- */

void ag_ledger_init(struct ag_ledger *l, const char *key, const char *value, unsigned timeout_ms)
{
	memset(l, 0, sizeof(*l));
	l->key = key;
	l->value = value;
	l->timeout_ms = timeout_ms;
}

void ag_ledger_release(struct ag_ledger *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].id);
	}
	memset(l, 0, sizeof(*l));
}

struct ag_ledger_entry *ag_ledger_add(struct ag_ledger *l, enum ag_ledger_kind kind,
				      const char *role, const char *name,
				      const struct ag_label_expect *labels, size_t n_labels)
{
	if (l->n >= AG_LEDGER_MAX_ENTRIES || n_labels > AG_LEDGER_MAX_LABELS)
		return NULL;
	struct ag_ledger_entry *e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->role = role;
	e->name = ag_xstrdup(name);
	for (size_t i = 0; i < n_labels; i++)
		e->labels[i] = labels[i];
	e->owner = (struct ag_container_owner){e->name, e->labels, n_labels};
	e->cleanup = (struct ag_cleanup_result){
	    AG_CLEANUP_NOT_CREATED, false, true,
	    kind == AG_LEDGER_CONTAINER ? "no container was created" : "no network was created"};
	return e;
}

const struct ag_ledger_entry *ag_ledger_find(const struct ag_ledger *l, const char *role)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].role, role) == 0)
			return &l->v[i];
	return NULL;
}

int ag_ledger_entry_create(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e,
			   const struct ag_exec_spec *spec, const struct ag_network_spec *net,
			   struct ag_error **err)
{
	e->attempted = true;
	e->seq = ++l->created;
	free(e->id);
	e->id = NULL;
	return e->kind == AG_LEDGER_CONTAINER
		   ? container_create(eng, spec, l->timeout_ms, &e->id, err)
		   : network_create(eng, net, l->timeout_ms, &e->id, err);
}

int ag_ledger_entry_start(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e,
			  const char *what, struct ag_error **err)
{
	if (e->kind != AG_LEDGER_CONTAINER || !e->id)
		return ag_err(err, AG_E_INTERNAL, 0, "docker.start.no_id",
			      "only a created container can be started");
	_cleanup_free_ char *path = ag_xasprintf("/containers/%s/start", e->id);
	if (ag_engine_do(eng, "POST", path, l->timeout_ms, 304, what, err) < 0)
		return -1;
	e->started = true;
	return 0;
}

/*
 * The graceful stop, by the id this ledger's create answered: SIGTERM,
 * up to the grace for it to exit (its status kept), then SIGKILL. The
 * removal that follows verifies absence whatever happened here.
 */
static void entry_stop(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e)
{
	e->stop = (struct ag_ledger_stop){.exit_code = -1};
	json_t *v = NULL;
	/* signalled by id only while inspection shows it is this entry's */
	e->stop.was_running = ag_container_lookup(eng, e->id, l->timeout_ms, &v) == 0 &&
			      ag_container_owned(v, e->id, &e->owner) &&
			      json_is_true(ag_json_path(v, "State.Running"));
	json_decref(v);
	if (!e->stop.was_running)
		return;
	struct ag_error *err = NULL;
	_cleanup_free_ char *term = ag_xasprintf("/containers/%s/kill?signal=SIGTERM", e->id);
	_cleanup_free_ char *wait =
	    ag_xasprintf("/containers/%s/wait?condition=not-running", e->id);
	_cleanup_free_ char *kill = ag_xasprintf("/containers/%s/kill", e->id);
	json_t *w = NULL;
	e->stop.signalled = ag_engine_do(eng, "POST", term, l->timeout_ms, 0, "stop", &err) == 0;
	if (e->stop.signalled &&
	    ag_engine_json(eng, "POST", wait, NULL, e->stop_grace_ms, "wait", &w, &err) == 0) {
		const json_t *sc = json_object_get(w, "StatusCode");
		e->stop.exit_code = json_is_integer(sc) ? (int)json_integer_value(sc) : -1;
	} else {
		e->stop.killed = control(eng, "POST", kill, l->timeout_ms);
	}
	json_decref(w);
	ag_error_free(err);
}

void ag_ledger_entry_teardown(struct ag_ledger *l, struct ag_engine *eng, struct ag_ledger_entry *e)
{
	if (e->torn_down)
		return;
	e->torn_down = true;
	size_t foreign = 0;
	if (e->kind == AG_LEDGER_CONTAINER && e->id && e->stop_grace_ms)
		entry_stop(l, eng, e);
	if (e->kind == AG_LEDGER_CONTAINER)
		container_remove(eng, e->id, e->attempted, l->key, l->value, &e->owner,
				 l->timeout_ms, &e->cleanup, &foreign);
	else
		network_remove(eng, e->id, e->attempted, l->key, l->value, &e->owner, l->timeout_ms,
			       &e->cleanup);
	if (l->label_names_one && foreign && e->cleanup.state == AG_CLEANUP_NOT_CREATED)
		e->cleanup.state = AG_CLEANUP_UNOWNED_NOT_REMOVED;
}

void ag_ledger_teardown_order(const struct ag_ledger *l, size_t order[AG_LEDGER_MAX_ENTRIES])
{
	size_t k = 0;
	/* created ones, highest seq first (at most AG_LEDGER_MAX_ENTRIES: quadratic is fine) */
	for (unsigned want = l->created; want > 0; want--)
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].seq == want)
				order[k++] = i;
	for (size_t i = l->n; i > 0; i--)
		if (l->v[i - 1].seq == 0)
			order[k++] = i - 1;
}

void ag_ledger_teardown(struct ag_ledger *l, struct ag_engine *eng)
{
	size_t order[AG_LEDGER_MAX_ENTRIES];
	ag_ledger_teardown_order(l, order);
	for (size_t i = 0; i < l->n; i++)
		ag_ledger_entry_teardown(l, eng, &l->v[order[i]]);
}
