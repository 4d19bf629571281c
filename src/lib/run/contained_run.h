/*
 * contained_run.h: the contained workflow, in order, failing closed
 * (contract: "Contained Run Entrypoint", "Preconditions And Failure",
 * "Containment Evidence"; docs/contained-run.md).
 *
 *   policy (unsafe commands, enforce) -> preflight -> residue inventory ->
 *   workspace prepare -> render -> create -> bind identity + verify
 *   controls -> daemon fingerprint re-check -> start -a (bounded, timeout,
 *   cancellable) -> state -> cleanup by id (always, after create) ->
 *   residue re-check -> capture mutations -> source integrity ->
 *   checks -> artifact (canonical, redacted) -> workspace cleanup (only
 *   after the container is verified gone).
 *
 * Config loading, the uid/gid rule and environment resolution happen
 * before (the CLI does them: they need the host), so a config error never
 * creates a run directory.
 */
#ifndef AG_CONTAINED_RUN_H
#define AG_CONTAINED_RUN_H

#include "lib/base/ag.h"
#include "lib/base/strv.h"
#include "lib/docker/ledger.h"
#include "lib/run/record.h"

#include <jansson.h>
#include <signal.h>

struct ag_config;
struct ag_env_resolved;
struct ag_redactor;
struct ag_error;
struct ag_sign_key;
struct ag_trust;
struct ag_run_observer;

/*
 * A different network around the agent (study-egress run: study.h). The
 * contained run calls these at fixed points and stays the same otherwise;
 * NULL for contained-run. Every hook fails closed: a -1 stops the run.
 */
struct ag_engine;
struct ag_exec_spec;
struct ag_run_net_hooks {
	void *data;
	/* After the workspace, before the agent is created: builds and checks the
	 * topology (exit 3 on failure, 6 when err's code is AG_E_DOCKER). */
	int (*setup)(void *data, struct ag_engine *eng, int run_fd, const char *run_dir_abs,
		     const char *suffix, struct ag_error **err);
	/* Puts the agent's spec on that network (exit 6 on failure). */
	int (*agent_spec)(void *data, struct ag_exec_spec *spec, struct ag_error **err);
	/* The network the agent's inspection must name. */
	const char *(*agent_network)(void *data);
	/* Agent created and verified, before it starts: the last assertions (exit 3). */
	int (*verify)(void *data, struct ag_engine *eng, const char *agent_id,
		      struct ag_error **err);
	/* After the ledger's teardown (the agent and the hooks' own entries),
	 * always: judges that teardown and writes the evidence beside the
	 * artifact. -1: exit 8 when err's code is AG_E_CLEANUP, else 1. */
	int (*finish)(void *data, int run_fd, const char *fixture_digest,
		      const struct ag_cleanup_result *agent_cleanup, struct ag_error **err);
	/* Before any stage: where the hooks write what they observe (the run
	 * record's study part, which the artifact builder renders) and the
	 * run's ledger, where their objects become entries (torn down with the
	 * agent's, newest created first, before finish). */
	void (*bind)(void *data, struct ag_run_study *st, struct ag_ledger *objects);
};

struct ag_run_opts {
	const struct ag_config *cfg;
	int repo_fd;		   /* the source repository (a directory) */
	const char *repo_abs;	   /* its absolute path: redaction only, never recorded */
	int runs_root_fd;	   /* where <run-id>/ is created */
	const char *runs_root_abs; /* its absolute path: the bind source prefix */
	bool runs_root_in_repo;	   /* the runs root lies inside the repository */
	const char *runs_root_rel; /* then: its path relative to the repository */
	const struct ag_sign_key *signing_key; /* signs the seal (required) */
	const struct ag_trust *trust;	       /* keys whose runs may sit in the repository's
						* runs root (runs_audit.h); NULL: signing_key */
	const char *const *argv;	       /* the agent argv, verbatim */
	size_t argc;
	int64_t timeout_seconds; /* effective agent timeout */
	const struct ag_env_resolved *env;
	struct ag_redactor *redact;    /* secrets + path roots; extended by the run */
	const char *docker_socket;     /* NULL: the default Docker socket */
	const char *probe_path;	       /* the static preflight probe (preflight.h) */
	const char *init_path;	       /* the agent's static init (run/deadline.h) */
	volatile sig_atomic_t *cancel; /* the signal number that asked to stop, or 0 */
	/* may be NULL: progress of the workspace stages and the agent's output,
	 * live and redacted (lib/run/live.h) */
	const struct ag_run_observer *observer;
	const struct ag_run_net_hooks *net; /* NULL: the config's network */
};

/*
 * Runs the workflow (the stage table in pipeline.c) into *rec, which the
 * caller releases with ag_run_record_release. Returns 0 whenever a run
 * directory was created and a verdict reached (success or any failure: see
 * rec->result.exit_code); -1 with *err when not even the run directory could
 * be made (exit 4).
 */
int ag_contained_run(const struct ag_run_opts *o, struct ag_run_record *rec, struct ag_error **err);

/* The run id: <task_id>-contained-<UTC yyyymmddHHMMSSffffff>-<8 hex>. */
char *ag_run_id_new(const char *task_id);
/*
 * The run's container suffix: the run id's last 32 characters, lowercased,
 * without leading separators. The container is "agentguard-" + suffix and
 * carries the label AG_RUN_ID_LABEL=suffix.
 */
char *ag_run_suffix(const char *run_id);
/* /proc/PID/stat starttime (clock ticks since boot), 0 when unknown. */
unsigned long long ag_process_start_ticks(pid_t pid);
/*
 * True only while PID is a live process started at START_TICKS: a zombie
 * (state Z or X, e.g. killed under a PID 1 that does not reap) or a pid
 * reused by a process with another start time is dead.
 */
bool ag_process_alive(pid_t pid, unsigned long long start_ticks);

/* Names shared by a run and by `agentguard cleanup`. */
#define AG_RUN_MARKER_FILE "agentguard-contained-run-artifact.json"
#define AG_RUN_ARTIFACT_FILE "contained-run.json"
#define AG_RUN_LIFECYCLE_DIR "workspace-lifecycle"
#define AG_RUN_WORKSPACE_ID "agent-workspace"
#define AG_RUN_OWNER_LABEL "agentguard.owner"
#define AG_RUN_OWNER_VALUE "contained-run"
#define AG_RUN_ID_LABEL "agentguard.contained-run.id"

/* Borrows name and suffix; they must outlive o. */
void ag_run_owner_init(struct ag_run_owner *o, const char *name, const char *suffix);

#endif
