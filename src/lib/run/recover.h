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
 *   - the marker is signed (attest.h) by the signing key cleanup was given:
 *     a run signs its marker when it creates its directory, so a directory
 *     planted to look like a crashed run (a forged marker) is left alone.
 * A run whose containers, study objects and workspace are all verified gone
 * gets a recovery record, signed with that key:
 *
 *   <run-dir>/recovered.json  {"containers_removed":N,"files":[{"name":...,
 *     "sha256":...}],"marker_sha256":...,"outcome":"unknown",
 *     "recovered_at":"...Z","run_id":...,"schema":"agentguard.recovered-run",
 *     "schema_version":1,"signer":"ed25519:...","workspace_removed":B}
 *   <run-dir>/recovered.sig   its signature (attest.h)
 *
 * The record claims no result (outcome "unknown": the run's process ended
 * before it wrote evidence); it binds the signed marker by hash and every
 * other file left in the directory (an unsealed artifact, say) by name and
 * hash, so nothing can be added or changed afterwards without breaking it.
 * The repository audit (runs_audit.h) and `report --list` accept such a run
 * as "recovered" (ag_run_recovered_check), never as a verified run.
 *
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
struct ag_sign_key;
struct ag_trust;

/* The marker's signature, and the recovery record with its signature. */
#define AG_RUN_MARKER_SIG_FILE "agentguard-contained-run-artifact.sig"
#define AG_RUN_RECOVERED_FILE "recovered.json"
#define AG_RUN_RECOVERED_SIG_FILE "recovered.sig"

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
	/*
	 * The local signing key: a run is recovered only when its marker is
	 * signed by it, and it signs the recovery record. NULL: no run is
	 * touched (each is reported incomplete); probes are still removed.
	 */
	const struct ag_sign_key *key;
};

int ag_run_recover(int runs_root_fd, struct ag_engine *cli, const struct ag_recover_options *opt,
		   ag_recover_log_fn log, void *data, struct ag_recover_report *rep,
		   struct ag_error **err);

/*
 * True when run_fd holds a valid marker for run_id whose owner process
 * (pid + start time) is running: a run in progress, not yet sealed.
 */
bool ag_run_dir_owner_live(int run_fd, const char *run_id);

/*
 * Writes run_fd's marker (lifecycle_state `state`, this process as owner)
 * and signs it with key (required).
 */
int ag_run_marker_write(int run_fd, const char *run_id, const char *state,
			const struct ag_sign_key *key, struct ag_error **err);

/*
 * 0 when run_fd (named run_id) is a recovered run: its recovery record is
 * signed by a trusted key and well formed, its marker is signed by a trusted
 * key and hashes to the record's marker_sha256, and the directory holds
 * nothing but the marker, the record, their signatures and the files the
 * record lists, each with its recorded SHA-256. Reasons run.recovered.*
 * (and evidence.attest.* from the signatures).
 */
int ag_run_recovered_check(int run_fd, const char *run_id, const struct ag_trust *trust,
			   struct ag_error **err);

#endif
