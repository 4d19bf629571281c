/*
 * engine.c: the only place the runtime-image module reaches Docker, over
 * the Engine API (lib/docker/engine.h) like every other Docker call:
 * bounded answers, a timeout per request, the daemon's text never copied.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"
#include "lib/docker/ledger.h"

#include <fcntl.h>
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

#define EXPORT_LABEL "org.agentguard.runtime-image.export"

/* DELETE ?force=1&v=1, then a 404 on the same id proves absence. */
static int remove_export_container(struct ag_engine *eng, const char *id, struct ag_error **err)
{
	_cleanup_free_ char *path = ag_xasprintf("/containers/%s?force=1&v=1", id);
	if (ag_engine_do(eng, "DELETE", path, 0, 404, "removing the export container", err) < 0)
		return -1;
	if (ag_container_lookup(eng, id, 0, NULL) != 1)
		return ag_err(err, AG_E_DOCKER, 0, "images.export.cleanup",
			      "the export container's absence could not be verified");
	return 0;
}

int ag_images_engine_export(struct ag_engine *eng, const char *image, const char *tar_path,
			    struct ag_error **err)
{
	if (check_ref(image, err) < 0)
		return -1;
	/*
	 * Created, never started: nothing of the image runs on this host. The
	 * entrypoint is a name that exists nowhere, so even a start by mistake
	 * would run nothing.
	 */
	json_t *body = json_pack("{s:s, s:[s], s:[], s:b, s:{s:s}, s:{s:s}}", "Image", image,
				 "Entrypoint", "/agentguard-export-never-started", "Cmd",
				 "NetworkDisabled", 1, "Labels", EXPORT_LABEL, "1", "HostConfig",
				 "NetworkMode", "none");
	json_t *created = NULL;
	int rc = ag_engine_json(eng, "POST", "/containers/create", body, 0, "export container create",
				&created, err);
	json_decref(body);
	if (rc < 0)
		return -1;
	const char *cid = json_string_value(json_object_get(created, "Id"));
	bool ok = cid && strlen(cid) == 64 && strspn(cid, "0123456789abcdef") == 64;
	char id[65] = {0};
	if (ok)
		memcpy(id, cid, 64);
	json_decref(created);
	if (!ok)
		return ag_err(err, AG_E_DOCKER, 0, "images.export.create",
			      "the daemon did not answer one container id");

	_cleanup_free_ char *path = ag_xasprintf("/containers/%s/export", id);
	struct ag_engine_reply r;
	ag_engine_reply_init(&r);
	rc = ag_engine_call(eng, "GET", path, NULL, AG_IMAGES_EXPORT_TIMEOUT_MS,
			    AG_IMAGES_EXPORT_MAX_BYTES, &r, err);
	if (rc == 0)
		rc = ag_engine_status_error(&r, "container export", err);
	if (rc == 0) {
		int fd = open(tar_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		size_t off = 0;
		while (fd >= 0 && off < r.body.len) {
			ssize_t w = write(fd, r.body.buf + off, r.body.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (fd < 0 || off != r.body.len || close(fd) != 0)
			rc = ag_err(err, AG_E_IO, errno, "images.export.write",
				    "cannot write the exported filesystem");
	}
	ag_engine_reply_release(&r);
	struct ag_error *rerr = NULL;
	int rr = remove_export_container(eng, id, &rerr);
	if (rc < 0) {
		ag_error_free(rerr);
		return -1;
	}
	if (rr < 0) {
		*err = rerr;
		return -1;
	}
	return 0;
}
