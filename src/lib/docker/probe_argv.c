#include "lib/base/ag.h"
#include "lib/docker/probe_argv.h"
#include "lib/base/error.h"
#include "lib/config/config.h"
#include "lib/docker/exec_spec.h"
#include "lib/docker/preflight.h"

int ag_pf_probe_create_argv(const struct ag_config *cfg, const char *name, const char *script,
			    struct ag_strv *out, struct ag_error **err)
{
	const struct ag_label labels[] = {
	    {AG_PF_LABEL_OWNER, AG_PF_LABEL_OWNER_VALUE},
	    {AG_PF_LABEL_KIND, AG_PF_LABEL_KIND_VALUE},
	    {AG_PF_LABEL_NAME, name},
	};
	const char *const command[] = {"-c", script};
	const struct ag_exec_inputs in = {
	    .workspace_host_path = NULL, /* tmpfs workspace */
	    .container_name = name,
	    .entrypoint = "/bin/sh",
	    .env = NULL,
	    .n_env = 0,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = command,
	    .n_command = AG_ARRAY_SIZE(command),
	};
	struct ag_exec_spec spec;
	if (ag_exec_spec_from_config(cfg, &in, &spec, err) < 0)
		return -1;
	/* The renderer emits --cgroupns private itself (exec_spec.c). */
	return ag_render_argv(&spec, AG_RENDER_CREATE, out, err);
}
