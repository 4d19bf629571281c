/*
 * recover.h: `agentguard cleanup`, after a crash (AgentGuard killed with
 * SIGKILL, the host rebooted mid-run): finds the run directories of a runs
 * root whose owner process is gone, removes their containers and
 * workspaces by verified identity, and reports what it did.
 *
 * Ownership proof, all of it required before anything is touched:
 *   - the run directory is a real directory directly in the runs root;
 *   - its marker is a regular single-link file of at most
 *     AG_RUN_MARKER_MAX_BYTES with our schema, owner and kind, and a run_id
 *     equal to the directory name;
 *   - the marker's owner process (pid + start time) is not running, so a
 *     live run elsewhere on the host is never disturbed;
 *   - a container is acted on only by the id Docker lists for the run's
 *     label, and only while inspection shows that id, the run's container
 *     name and both owner labels.
 * It also removes preflight probe containers orphaned by a crash: only
 * those with all three probe labels (the name label equal to the
 * container's own name) created more than AG_RUN_PROBE_ORPHAN_SECONDS ago,
 * far longer than any live preflight keeps its probe.
 */
#ifndef AG_RECOVER_H
#define AG_RECOVER_H

#include "lib/base/ag.h"

struct ag_engine;
struct ag_error;

struct ag_recover_report {
	size_t runs_examined;
	size_t runs_live;	/* owner still running: left alone */
	size_t runs_recovered;	/* containers and workspace cleaned */
	size_t runs_incomplete; /* something could not be verified */
	size_t runs_unowned;	/* entries without a valid marker: left alone */
	size_t containers_removed;
	size_t workspaces_removed;
};

/* Called once per run with a one-line, sanitized description. */
typedef void (*ag_recover_log_fn)(const char *line, void *data);

struct ag_recover_options {
	/* The orphan age for preflight probes (AG_RUN_PROBE_ORPHAN_SECONDS). */
	long long probe_age_s;
	/*
	 * Optional (both or neither): only probes that also carry this label
	 * are candidates. A test suite sharing an engine uses it to touch only
	 * the probes it created itself.
	 */
	const char *probe_label_key;
	const char *probe_label_value;
};

int ag_run_recover(int runs_root_fd, struct ag_engine *cli, const struct ag_recover_options *opt,
		   ag_recover_log_fn log, void *data, struct ag_recover_report *rep,
		   struct ag_error **err);

/*
 * True when run_fd holds a valid marker for run_id whose owner process
 * (pid + start time) is running: a run in progress, not yet sealed.
 */
bool ag_run_dir_owner_live(int run_fd, const char *run_id);

#endif
