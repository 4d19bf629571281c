/*
 * batch.h: `agentguard batch`: many trials, each one ordinary AgentGuard run
 * with its own evidence, at a concurrency planned before the first starts.
 *
 * The pieces, one job each:
 *   spec.c     the batch file (YAML or JSON) -> entries -> the expanded,
 *              ordered trial list; shards (trial i is in shard i mod N + 1)
 *   plan.c     the facts (cores, available memory, the study pools' free
 *              /26 pairs) and the concurrency they allow, or a refusal
 *   runner.c   the trials of one shard: resume (a trial whose newest run
 *              verifies and was not cancelled is not run again), the
 *              worker threads, each trial an `agentguard contained-run` or
 *              `study-egress run` child, cancellation
 *   summary.c  a trial's record from its verified evidence; the batch
 *              summary (JSON, text, Markdown, HTML); merging shards
 *
 * Layout of an output directory:
 *   OUT/batch.lock                    flock: one batch at a time here
 *   OUT/trials/<trial-id>/<run-id>/   each trial's runs root (its chain)
 *   OUT/batch-summary.{json,txt,md,html}
 * docs/batch.md is the user's reference.
 */
#ifndef AG_BATCH_H
#define AG_BATCH_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"

#include "lib/base/exit.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <sys/stat.h>

struct ag_error;
struct ag_trust;
struct ag_buf;

/* Bounds: lib/base/bounds.h ("batch"). */
#define AG_BATCH_SUMMARY_FILE "batch-summary.json"
#define AG_BATCH_TRIALS_DIR "trials"

enum ag_batch_mode { AG_BATCH_CONTAINED, AG_BATCH_STUDY };

struct ag_batch_entry {
	char *name;
	enum ag_batch_mode mode;
	char *config; /* as the child is given it: beside the batch file unless absolute */
	char *repo;   /* NULL: the config's own rule */
	char *policy, *gateway_image; /* study only; NULL: the config's study_egress */
	char **argv;		      /* NULL-terminated */
	size_t argc;
	unsigned repetitions;
	int64_t timeout; /* 0: the config's */
	unsigned line;
	/* from the config (ag_batch_load_configs) */
	int64_t memory_bytes;
	double cpus;
	char *subnet_pool; /* study: NULL = AG_STUDY_AUTO_POOL */
	bool own_outbound; /* study: AgentGuard creates the outbound network */
	bool fixed_subnet; /* study: a study_subnet is configured (no pool use) */
	/* what a run of this entry is bound to on resume: SHA-256 of its mode,
	 * config path and bytes, argv, repo, timeout, policy and gateway image */
	char digest[65];
};

struct ag_batch_trial {
	char *id;     /* NAME when it has one repetition, else NAME.K */
	size_t entry; /* index into entries */
	unsigned rep; /* 1-based */
	size_t index; /* 0-based position in the whole list */
};

struct ag_batch {
	char *file; /* as the user named it */
	char sha256[65];
	struct ag_batch_entry *entries;
	size_t n_entries;
	struct ag_batch_trial *trials;
	size_t n_trials;
};

/* ---- spec.c ---- */

/*
 * Reads and validates a batch file (docs/batch.md). Errors carry the file,
 * line, column and key (AG_E_CONFIG, reasons batch.file.*).
 */
int ag_batch_load(const char *path, struct ag_batch **out, struct ag_error **err);
int ag_batch_load_mem(const char *data, size_t len, const char *display, struct ag_batch **out,
		      struct ag_error **err);
void ag_batch_free(struct ag_batch *b);
/* Loads every entry's config and takes what the plan needs from it, and
 * computes each entry's digest; a config that does not load fails the
 * batch (its error, wrapped with the entry), and so does a study entry
 * whose config asks for gVisor (batch.config.study_gvisor). */
int ag_batch_load_configs(struct ag_batch *b, struct ag_error **err);
/* "K/N", 1 <= K <= N <= AG_BATCH_TRIALS_MAX (batch.shard). */
int ag_batch_shard_parse(const char *s, unsigned *k, unsigned *n, struct ag_error **err);
/* Whether trial index i belongs to shard K of N (N 0: no sharding). */
bool ag_batch_in_shard(size_t i, unsigned k, unsigned n);
/* A trial id or run id is a plain name: [A-Za-z0-9][A-Za-z0-9._-]*, no "..". */
bool ag_batch_name_ok(const char *s, size_t max);

/* ---- plan.c ---- */

struct ag_batch_facts {
	unsigned cores;
	uint64_t mem_available; /* bytes; 0 = unknown */
	bool pools_read;	/* the study pools were read from the engine */
	struct {
		char *pool; /* NULL = AG_STUDY_AUTO_POOL */
		uint32_t pairs, free_pairs;
		int prefix;
	} pool[8];
	size_t n_pools;
};

struct ag_batch_plan {
	unsigned jobs;			       /* what runs at once */
	unsigned asked;			       /* --jobs, or the default (the cores) */
	unsigned by_cores, by_memory, by_pool; /* each bound; 0 = none */
	const char
	    *cut_by;	 /* "cores", "memory", "address_pool", "fixed_subnet", "trials" or NULL */
	unsigned trials; /* trials in this shard */
	unsigned study_trials;
	bool fixed_subnet; /* a study trial has a configured study_subnet */
	uint64_t memory_per_trial;
};

/*
 * Reads the facts: cores (sched affinity), MemAvailable, and, when a study
 * trial draws from a pool, each pool's free pairs from the engine at
 * `socket` (NULL: the default). Study entries with a fixed subnet use no pool.
 */
void ag_batch_facts_release(struct ag_batch_facts *f);
int ag_batch_facts_read(const struct ag_batch *b, const char *socket, struct ag_batch_facts *f,
			struct ag_error **err);
/*
 * The plan for the trials of shard K/N (N 0: all), asked jobs (0: the
 * cores). A batch that cannot run one trial is refused (AG_E_UNVERIFIED,
 * batch.plan.memory, batch.plan.address_pool, each with its fix). Pure.
 */
int ag_batch_plan_make(const struct ag_batch *b, const struct ag_batch_facts *f, unsigned asked,
		       unsigned shard_k, unsigned shard_n, struct ag_batch_plan *p,
		       struct ag_error **err);
/* The plan as JSON (for the summary and --plan --json). */
json_t *ag_batch_plan_json(const struct ag_batch_plan *p, const struct ag_batch_facts *f);
/* One line a person reads: "concurrency 2 (asked 4; cut by ...)". */
char *ag_batch_plan_text(const struct ag_batch_plan *p, const struct ag_batch_facts *f);

/* ---- summary.c ---- */

/* One trial's record (a JSON object, docs/batch.md): `base` (its identity)
 * completed from its run directory trials_fd/<id>/<run_id> when that
 * verifies (run_id NULL: none), else from the child's exit code (-1: not
 * run) and error reason. */
struct ag_batch_outcome {
	int exit_code;	    /* AgentGuard's, -1 when the trial did not run */
	const char *reason; /* the child's error reason token when it printed one */
	bool resumed;	    /* its evidence came from an earlier batch run */
	uint64_t wall_ms;   /* the child's wall clock (0: resumed or not run) */
};
json_t *ag_batch_trial_record(const json_t *base, int trials_fd, const char *run_id,
			      const struct ag_trust *trust, const struct ag_batch_outcome *o);
/* A trial's identity in a record: id, entry, repetition, index, mode. */
json_t *ag_batch_trial_base(const struct ag_batch *b, const struct ag_batch_trial *t);
/* Whether a record says the trial has a final, verified result. */
bool ag_batch_record_final(const json_t *rec);
/* The summary of records (sorted by index): counts, pass rate, outcomes. */
json_t *ag_batch_summary(const struct ag_batch *b, json_t *records, unsigned shard_k,
			 unsigned shard_n, json_t *plan);
/* The same for a batch known by its digest and size (merge). Steals
 * records and plan. */
json_t *ag_batch_summary_of(const char *sha256, size_t total, json_t *records, unsigned shard_k,
			    unsigned shard_n, json_t *plan);
/* Renders a summary: "text", "md", "html" (bounded, escaped). */
int ag_batch_render(const json_t *summary, const char *fmt, struct ag_buf *out,
		    struct ag_error **err);
/* Writes OUT/batch-summary.{json,txt,md,html} atomically. */
int ag_batch_write_summary(int out_fd, const json_t *summary, struct ag_error **err);

/*
 * Merges shard directories: each must hold a batch summary of the same
 * batch (batch_sha256, trials_total, shard count), the shards 1..N once
 * each; every trial record with evidence is recomputed from that evidence,
 * which must verify (batch.merge.evidence names the shard and trial). The
 * union must be the whole list. Returns the merged summary.
 */
int ag_batch_merge(const char *const *dirs, size_t n, const struct ag_trust *trust, json_t **out,
		   struct ag_error **err);

/* ---- runner.c ---- */

struct ag_batch_run_opts {
	const char *out_dir;
	unsigned shard_k, shard_n;
	const struct ag_batch_plan *plan;
	json_t *plan_json;	   /* borrowed; copied into the summary */
	const char *self_exe;	   /* agentguard's own executable (absolute) */
	const char *docker_socket; /* NULL: the default */
	const char *signing_key;   /* NULL: the local key */
	const char *const *envp;   /* the children's environment */
	const struct ag_trust *trust;
	volatile sig_atomic_t *cancel; /* non-zero: start no trial, cancel the running */
	/* called (serialised) as each trial ends; may be NULL */
	void (*on_trial)(const json_t *rec, size_t done, size_t total, void *data);
	void *data;
};

/*
 * Runs the shard's trials (skipping those already final) and writes the
 * summary. *summary_out gets it (caller decrefs). Returns 0 when it ran to
 * the end (whatever the trials' results), 1 when cancelled, -1 with *err
 * when the batch itself failed (the output directory, the lock).
 */
int ag_batch_run(const struct ag_batch *b, const struct ag_batch_run_opts *o, json_t **summary_out,
		 struct ag_error **err);

#endif
