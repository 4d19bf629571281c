/*
 * engine.c: the only place the runtime-image module reaches Docker, over
 * the Engine API (lib/docker/engine.h) like every other Docker call:
 * bounded answers, a timeout per request, the daemon's text never copied.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/config/imageref.h"
#include "lib/docker/engine.h"
#include "lib/docker/ledger.h"

#include "lib/docker/exec_spec.h"

#include <jansson.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

static int check_ref(const char *ref, struct ag_error **err)
{
	if (!ref || !*ref || ref[0] == '-')
		return ag_err(err, AG_E_USAGE, 0, "images.image.ref", "not an image reference");
	return 0;
}

int ag_images_engine_inspect(struct ag_engine *eng, const char *ref, char **json, size_t *len,
			     struct ag_error **err)
{
	if (check_ref(ref, err) < 0)
		return -1;
	_cleanup_free_ char *esc = ag_engine_escape(ref);
	_cleanup_free_ char *path = ag_xasprintf("/images/%s/json", esc);
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	int rc = ag_engine_call(eng, "GET", path, NULL, 0, AG_IMAGES_INSPECT_MAX_BYTES, &r, err);
	if (rc == 0)
		rc = ag_engine_status_error(&r, "image inspect", err);
	if (rc == 0) {
		/* The callers read `docker image inspect`'s shape: an array of one. */
		*json = ag_xasprintf("[%.*s]", (int)r.body.len, r.body.buf ? r.body.buf : "");
		*len = strlen(*json);
	}
	ag_engine_reply_release(&r);
	return rc;
}

int ag_images_local_pinned_ref(struct ag_engine *eng, const char *ref, char **pinned,
			       struct ag_error **err)
{
	*pinned = NULL;
	struct ag_image_ref r = {0};
	_cleanup_free_ char *js = NULL;
	size_t jl = 0;
	if (ag_image_ref_parse(ref, &r, err) < 0)
		return -1;
	int rc = -1;
	if (ag_image_ref_pinned(&r)) {
		*pinned = ag_xstrdup(ref);
		rc = 0;
		goto out;
	}
	struct ag_error *ie = NULL;
	if (ag_images_engine_inspect(eng, ref, &js, &jl, &ie) < 0) {
		if (strcmp(ie->reason, "docker.api.not_found") == 0) {
			ag_error_free(ie);
			ag_err(err, AG_E_CONFIG, 0, "images.image.absent",
			       "the image is not present locally (AgentGuard never pulls)");
		} else {
			*err = ie;
		}
		goto out;
	}
	json_error_t je;
	json_t *arr = json_loadb(js, jl, 0, &je);
	const json_t *rd = json_object_get(json_array_get(arr, 0), "RepoDigests");
	size_t rl = strlen(r.repository), i;
	const json_t *d;
	json_array_foreach(rd, i, d)
	{
		const char *v = json_string_value(d);
		struct ag_image_ref dr = {0};
		struct ag_error *pe = NULL;
		/* the entry for REF's repository, itself a valid pinned reference */
		if (v && strncmp(v, r.repository, rl) == 0 && v[rl] == '@' &&
		    ag_image_ref_parse(v, &dr, &pe) == 0 && ag_image_ref_pinned(&dr) && !dr.tag)
			*pinned = ag_xstrdup(v);
		ag_image_ref_release(&dr);
		ag_error_free(pe);
		if (*pinned)
			break;
	}
	json_decref(arr);
	if (*pinned)
		rc = 0;
	else
		ag_err(
		    err, AG_E_CONFIG, 0, "images.image.no_digest",
		    "the engine knows no digest for this image's repository (an image built "
		    "locally has one only after it is pushed to a registry or pulled by digest)");
out:
	ag_image_ref_release(&r);
	return rc;
}

/* ---- export: a created container, streamed into the digest ---- */

/* The digest runs on its own thread, reading one end of a socket pair;
 * the daemon's answer is written into the other end as it arrives. */
struct digest_job {
	int fd;
	char *digest;
	size_t entries;
	struct ag_error *err;
	int rc;
};

static void *digest_thread(void *p)
{
	struct digest_job *j = p;
	j->rc = ag_rootfs_digest_fd(j->fd, &j->digest, &j->entries, &j->err);
	if (j->rc == 0) {
		/* The tar's end is read; what follows (padding) is drained so the
		 * writer never blocks on a full socket. */
		char buf[1 << 14];
		while (read(j->fd, buf, sizeof(buf)) > 0)
			;
	}
	close(j->fd); /* the writer's next send fails: the transfer stops */
	return NULL;
}

static int feed(const char *p, size_t n, void *data)
{
	int fd = *(int *)data;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1; /* the digest stopped (its own error says why) */
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int export_stream(struct ag_engine *eng, const char *id, char **digest, size_t *entries,
			 struct ag_error **err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ag_err(err, AG_E_IO, errno, "images.export.pipe",
			      "cannot make the export's socket pair");
	struct digest_job job = {.fd = sv[0]};
	pthread_t t;
	if (pthread_create(&t, NULL, digest_thread, &job) != 0) {
		close(sv[0]);
		close(sv[1]);
		return ag_err(err, AG_E_INTERNAL, 0, "images.export.thread",
			      "cannot start the digest thread");
	}
	_cleanup_free_ char *path = ag_xasprintf("/containers/%s/export", id);
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	struct ag_error *terr = NULL;
	int rc = ag_engine_get_stream(eng, path, AG_IMAGES_EXPORT_TIMEOUT_MS,
				      AG_IMAGES_EXPORT_MAX_BYTES, feed, &sv[1], &r, &terr);
	if (rc == 0)
		rc = ag_engine_status_error(&r, "container export", &terr);
	ag_engine_reply_release(&r);
	close(sv[1]); /* end of stream for the digest */
	pthread_join(t, NULL);
	/* A transfer that failed by itself (a status, a timeout, a dropped
	 * connection, the size bound) names the failure: the digest then only
	 * saw a cut stream. When the digest stopped first (a malformed tar, a
	 * bound of its own), the transfer's failure is its consequence. */
	bool digest_first = rc < 0 && strcmp(terr->reason, "docker.response.sink_stopped") == 0;
	if (rc < 0 && !digest_first) {
		free(job.digest);
		ag_error_free(job.err);
		if (strcmp(terr->reason, "docker.response.too_large") == 0) {
			ag_error_free(terr);
			return ag_err(err, AG_E_LIMIT, 0, "images.export.too_large",
				      "the exported filesystem is larger than %llu bytes",
				      (unsigned long long)AG_IMAGES_EXPORT_MAX_BYTES);
		}
		*err = terr;
		return -1;
	}
	ag_error_free(terr);
	if (job.rc < 0 || rc < 0) {
		free(job.digest);
		if (job.err) {
			*err = job.err;
			return -1;
		}
		return ag_err(err, AG_E_INTERNAL, 0, "images.export.stopped",
			      "the export stopped without a reason");
	}
	*digest = job.digest;
	*entries = job.entries;
	return 0;
}

int ag_images_engine_export_digest(struct ag_engine *eng, const char *image, unsigned uid,
				   char **digest, size_t *entries, struct ag_error **err)
{
	if (check_ref(image, err) < 0)
		return -1;
	char name[sizeof(AG_IMAGES_EXPORT_NAME_PREFIX) + 16];
	ag_random_name(name, sizeof(name), AG_IMAGES_EXPORT_NAME_PREFIX);
	const struct ag_label labels[] = {
	    {AG_IMAGES_EXPORT_OWNER_LABEL, AG_IMAGES_EXPORT_OWNER},
	    {AG_IMAGES_EXPORT_NAME_LABEL, name},
	};
	/*
	 * Created through the ledger, never started: nothing of the image runs
	 * on this host. Its command names a path that exists nowhere, so even
	 * a start by mistake would run nothing. The working directory is /tmp,
	 * which both role images hold, so creating the container adds nothing
	 * to the exported tree (tmpfs mount points are not in an export).
	 */
	const char *const command[] = {"/agentguard-export-never-started"};
	const struct ag_exec_spec spec = {
	    .image = image,
	    .network = AG_NET_NONE,
	    .uid = uid,
	    .gid = uid,
	    .cpu_limit = AG_IMAGES_EXPORT_CPU,
	    .memory_limit = AG_IMAGES_EXPORT_MEMORY,
	    .pids_limit = AG_IMAGES_EXPORT_PIDS,
	    .tmpfs_path = "/agentguard-export-tmp",
	    .tmpfs_size = AG_IMAGES_EXPORT_TMPFS,
	    .workspace_container_path = "/tmp",
	    .container_name = name,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = command,
	    .n_command = AG_ARRAY_SIZE(command),
	};
	/*
	 * Its own ledger: removed by the id answered, or (answer lost) by the
	 * unique name label, every owner label checked before any action.
	 */
	const struct ag_label_expect le[] = {
	    {AG_IMAGES_EXPORT_OWNER_LABEL, AG_IMAGES_EXPORT_OWNER},
	    {AG_IMAGES_EXPORT_NAME_LABEL, name},
	};
	struct ag_ledger l;
	ag_ledger_init(&l, AG_IMAGES_EXPORT_NAME_LABEL, name, 0);
	struct ag_ledger_entry *c =
	    ag_ledger_add(&l, AG_LEDGER_CONTAINER, "image_export", name, le, AG_ARRAY_SIZE(le));
	int rc = c ? ag_ledger_entry_create(&l, eng, c, &spec, NULL, err)
		   : ag_err(err, AG_E_INTERNAL, 0, "images.export.ledger",
			    "the export container could not be entered in the ledger");
	if (rc == 0)
		rc = export_stream(eng, c->id, digest, entries, err);
	ag_ledger_teardown(&l, eng);
	enum ag_cleanup_state st = c ? c->cleanup.state : AG_CLEANUP_NOT_CREATED;
	ag_ledger_release(&l);
	if (rc < 0)
		return -1;
	if (!ag_cleanup_state_complete(st) || st == AG_CLEANUP_NOT_CREATED) {
		free(*digest);
		*digest = NULL;
		return ag_err(err, AG_E_DOCKER, 0, "images.export.cleanup",
			      "the export container's removal could not be verified (%s)",
			      ag_cleanup_state_name(st));
	}
	return 0;
}
