/*
 * engine.c: the only place the runtime-image module reaches Docker. Today
 * it drives the verified CLI (docker_cli.h); when the Engine API client
 * lands, these two functions are what switch over (docs/runtime-images.md).
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/docker_cli.h"

/* The one call path: bounded output, a timeout, docker's text never copied. */
static int engine_call(const struct ag_docker_cli *cli, const char *const *args, size_t out_max,
		       unsigned timeout_ms, const char *what, struct ag_proc_result *res,
		       struct ag_error **err)
{
	ag_proc_result_init(res);
	if (ag_docker_run(cli, args, out_max, timeout_ms, res, err) < 0)
		return -1;
	if (ag_docker_check(res, what, err) < 0)
		return -1;
	return 0;
}

int ag_images_engine_inspect(const struct ag_docker_cli *cli, const char *ref, char **json,
			     size_t *len, struct ag_error **err)
{
	if (!ref || !*ref || ref[0] == '-')
		return ag_err(err, AG_E_USAGE, 0, "images.image.ref", "not an image reference");
	const char *args[] = {"image", "inspect", "--", ref, NULL};
	struct ag_proc_result r;
	int rc =
	    engine_call(cli, args, AG_IMAGES_INSPECT_MAX_BYTES, 0, "docker image inspect", &r, err);
	if (rc == 0)
		*json = ag_buf_detach(&r.out, len);
	ag_proc_result_release(&r);
	return rc;
}

#define EXPORT_LABEL "org.agentguard.runtime-image.export"

int ag_images_engine_export(const struct ag_docker_cli *cli, const char *image,
			    const char *tar_path, struct ag_error **err)
{
	if (!image || !*image || image[0] == '-')
		return ag_err(err, AG_E_USAGE, 0, "images.image.ref", "not an image reference");
	/* Created, never started: nothing of the image runs on this host. */
	const char *cargs[] = {"create",  "--pull",	     "never", "--network", "none",
			       "--label", EXPORT_LABEL "=1", "--",    image,	   NULL};
	struct ag_proc_result r;
	if (engine_call(cli, cargs, 256, 0, "docker create", &r, err) < 0) {
		ag_proc_result_release(&r);
		return -1;
	}
	char id[65];
	size_t n = r.out.len;
	while (n && (r.out.buf[n - 1] == '\n' || r.out.buf[n - 1] == '\r'))
		n--;
	bool ok = n == 64;
	for (size_t i = 0; ok && i < n; i++)
		ok = strchr("0123456789abcdef", r.out.buf[i]) != NULL;
	if (ok) {
		memcpy(id, r.out.buf, 64);
		id[64] = '\0';
	}
	ag_proc_result_release(&r);
	if (!ok)
		return ag_err(err, AG_E_DOCKER, 0, "images.export.create",
			      "docker create did not print one container id");
	const char *eargs[] = {"export", "-o", tar_path, id, NULL};
	int rc =
	    engine_call(cli, eargs, 4096, AG_IMAGES_EXPORT_TIMEOUT_MS, "docker export", &r, err);
	ag_proc_result_release(&r);
	const char *rargs[] = {"rm", "-f", "-v", id, NULL};
	struct ag_error *rerr = NULL;
	int rr = engine_call(cli, rargs, 256, 0, "docker rm", &r, &rerr);
	ag_proc_result_release(&r);
	if (rc < 0) {
		ag_error_free(rerr);
		return -1;
	}
	if (rr < 0) {
		*err = rerr;
		return ag_err_wrap(err, "removing the export container");
	}
	return 0;
}
