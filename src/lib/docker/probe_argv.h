/*
 * probe_argv.h: the preflight probe's `docker create` argv, rendered by
 * exec_spec from the same validated config as contained-run's container.
 */
#ifndef AG_PROBE_ARGV_H
#define AG_PROBE_ARGV_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"

struct ag_config;
struct ag_error;

/*
 * Appends to *out (empty) the arguments after the docker executable:
 *   create <exec_spec controls, including --cgroupns private>
 *   --label agentguard.owner=preflight
 *   --label agentguard.preflight=resource-controls
 *   --label agentguard.preflight.name=NAME -- IMAGE -c SCRIPT
 * with a tmpfs workspace at /agentguard-workspace (size tmpfs_size),
 * `--entrypoint /bin/sh` (the image's own entrypoint never runs) and the
 * name NAME: the same controls contained-run's agent container gets.
 * Errors: every render.* reason of ag_render_argv (AG_E_CONFIG).
 */
int ag_pf_probe_create_argv(const struct ag_config *cfg, const char *name, const char *script,
			    struct ag_strv *out, struct ag_error **err);

#endif
