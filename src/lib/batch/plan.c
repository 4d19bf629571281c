/*
 * plan.c: how many trials run at once, decided before the first starts.
 *
 * Three bounds, each from a fact read now:
 *   cores         a container's CPU limit caps it, it does not reserve it,
 *                 so too many only slows: the default is one trial per core,
 *                 --jobs may ask up to 4 per core (AG_BATCH_JOBS_PER_CORE)
 *   memory        a trial's memory limit is a promise to the kernel; the
 *                 trials at once must fit in 80 % of MemAvailable, or the
 *                 host starts killing: a batch whose one trial does not fit
 *                 is refused (batch.plan.memory)
 *   address_pool  a study trial holds one /26 pair of its pool for its
 *                 whole life; no more study trials run at once than the
 *                 pool has free pairs now (the engine's networks and the
 *                 host's routes read as the study run reads them), none
 *                 free: refused (batch.plan.address_pool); a configured
 *                 study_subnet is one subnet: one such trial at a time
 * The plan is the smallest; `cut_by` names the bound that decided it.
 */
#include "lib/batch/batch.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/docker/engine.h"
#include "lib/run/study.h"

#include <sched.h>

#define AG_BATCH_JOBS_PER_CORE 4

static unsigned count_cores(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static uint64_t mem_available(void)
{
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[AG_BATCH_MEMINFO_MAX];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "MemAvailable:");
	unsigned long long kb = 0;
	if (!p || sscanf(p, "MemAvailable: %llu kB", &kb) != 1 || kb > (UINT64_MAX >> 11))
		return 0;
	return (uint64_t)kb * 1024;
}

void ag_batch_facts_release(struct ag_batch_facts *f)
{
	for (size_t i = 0; i < f->n_pools; i++)
		free(f->pool[i].pool);
	*f = (struct ag_batch_facts){0};
}

static bool same_pool(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int ag_batch_facts_read(const struct ag_batch *b, const char *socket, struct ag_batch_facts *f,
			struct ag_error **err)
{
	*f = (struct ag_batch_facts){0};
	f->cores = count_cores();
	f->mem_available = mem_available();
	/* the distinct pools the study entries draw from */
	for (size_t i = 0; i < b->n_entries; i++) {
		const struct ag_batch_entry *e = &b->entries[i];
		if (e->mode != AG_BATCH_STUDY || e->fixed_subnet)
			continue;
		bool seen = false;
		for (size_t k = 0; k < f->n_pools; k++)
			seen |= same_pool(f->pool[k].pool, e->subnet_pool);
		if (seen)
			continue;
		if (f->n_pools >= AG_ARRAY_SIZE(f->pool))
			return ag_err(
			    err, AG_E_CONFIG, 0, "batch.plan.pools",
			    "the batch's study trials draw from more than %zu subnet pools",
			    AG_ARRAY_SIZE(f->pool));
		f->pool[f->n_pools++].pool = e->subnet_pool ? ag_xstrdup(e->subnet_pool) : NULL;
	}
	if (!f->n_pools)
		return 0;
	_cleanup_engine_ struct ag_engine eng = AG_ENGINE_INIT;
	if (ag_engine_open(socket, &eng, err) < 0)
		return ag_err_wrap(err, "reading the study subnet pools");
	for (size_t k = 0; k < f->n_pools; k++) {
		bool own = false;
		for (size_t i = 0; i < b->n_entries; i++)
			own |= b->entries[i].mode == AG_BATCH_STUDY &&
			       !b->entries[i].fixed_subnet &&
			       same_pool(b->entries[i].subnet_pool, f->pool[k].pool) &&
			       b->entries[i].own_outbound;
		struct ag_study_pool_space sp;
		if (ag_study_pool_space(&eng, f->pool[k].pool, own, &sp, err) < 0)
			return ag_err_wrap(err, "reading the study subnet pool %s",
					   f->pool[k].pool ? f->pool[k].pool : AG_STUDY_AUTO_POOL);
		f->pool[k].pairs = sp.pairs;
		f->pool[k].free_pairs = sp.free_pairs;
		f->pool[k].prefix = sp.prefix;
	}
	f->pools_read = true;
	return 0;
}

static const char *pool_name(const struct ag_batch_facts *f, size_t k)
{
	return f->pool[k].pool ? f->pool[k].pool : AG_STUDY_AUTO_POOL;
}

int ag_batch_plan_make(const struct ag_batch *b, const struct ag_batch_facts *f, unsigned asked,
		       unsigned shard_k, unsigned shard_n, struct ag_batch_plan *p,
		       struct ag_error **err)
{
	*p = (struct ag_batch_plan){0};
	unsigned cores = f->cores ? f->cores : 1;
	p->asked = asked ? asked : cores;
	for (size_t i = 0; i < b->n_trials; i++) {
		if (!ag_batch_in_shard(i, shard_k, shard_n))
			continue;
		const struct ag_batch_entry *e = &b->entries[b->trials[i].entry];
		p->trials++;
		if (e->mode == AG_BATCH_STUDY)
			p->study_trials++;
		if (e->mode == AG_BATCH_STUDY && e->fixed_subnet)
			p->fixed_subnet = true;
		if ((uint64_t)e->memory_bytes > p->memory_per_trial)
			p->memory_per_trial = (uint64_t)e->memory_bytes;
	}
	unsigned jobs = p->asked;
	p->by_cores = cores * AG_BATCH_JOBS_PER_CORE;
	if (p->by_cores > AG_BATCH_JOBS_MAX)
		p->by_cores = AG_BATCH_JOBS_MAX;
	if (jobs > p->by_cores) {
		jobs = p->by_cores;
		p->cut_by = "cores";
	}
	if (f->mem_available && p->memory_per_trial) {
		uint64_t fit = f->mem_available / 10 * 8 / p->memory_per_trial;
		if (fit < 1)
			return ag_err(err, AG_E_UNVERIFIED, 0, "batch.plan.memory",
				      "one trial's memory limit (%" PRIu64
				      " MiB) does not fit in 80%% of the memory available now "
				      "(%" PRIu64
				      " MiB); lower contained_execution.memory_limit or "
				      "free memory",
				      p->memory_per_trial >> 20, f->mem_available >> 20);
		p->by_memory = fit > AG_BATCH_JOBS_MAX ? AG_BATCH_JOBS_MAX : (unsigned)fit;
		if (jobs > p->by_memory) {
			jobs = p->by_memory;
			p->cut_by = "memory";
		}
	}
	if (p->study_trials && f->pools_read) {
		uint32_t least = UINT32_MAX;
		size_t which = 0;
		for (size_t k = 0; k < f->n_pools; k++)
			if (f->pool[k].free_pairs < least) {
				least = f->pool[k].free_pairs;
				which = k;
			}
		if (least == 0)
			return ag_err(err, AG_E_UNVERIFIED, 0, "batch.plan.address_pool",
				      "the study subnet pool %s has no free /%d pair (the engine's "
				      "networks and the host's routes use all %u); remove unused "
				      "networks or widen study_egress.subnet_pool",
				      pool_name(f, which), f->pool[which].prefix,
				      f->pool[which].pairs);
		p->by_pool = least > AG_BATCH_JOBS_MAX ? AG_BATCH_JOBS_MAX : least;
		/* only study trials hold a pair; a batch of only them is bound by it */
		if (p->study_trials == p->trials && jobs > p->by_pool) {
			jobs = p->by_pool;
			p->cut_by = "address_pool";
		}
	}
	/* a configured study_subnet is one subnet: its trials run one at a time */
	if (p->fixed_subnet) {
		p->by_pool = 1;
		if (p->study_trials == p->trials && jobs > 1) {
			jobs = 1;
			p->cut_by = "fixed_subnet";
		}
	}
	if (jobs > p->trials && p->trials > 0) {
		jobs = p->trials;
		if (!p->cut_by)
			p->cut_by = "trials";
	}
	p->jobs = jobs ? jobs : 1;
	return 0;
}

json_t *ag_batch_plan_json(const struct ag_batch_plan *p, const struct ag_batch_facts *f)
{
	json_t *pools = json_array();
	for (size_t k = 0; k < f->n_pools && f->pools_read; k++)
		json_array_append_new(
		    pools, json_pack("{s:s, s:i, s:I, s:I}", "pool", pool_name(f, k), "prefix",
				     f->pool[k].prefix, "pairs", (json_int_t)f->pool[k].pairs,
				     "free_pairs", (json_int_t)f->pool[k].free_pairs));
	json_t *o =
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "jobs", (json_int_t)p->jobs,
		      "asked", (json_int_t)p->asked, "trials", (json_int_t)p->trials,
		      "study_trials", (json_int_t)p->study_trials, "cores", (json_int_t)f->cores,
		      "memory_available_mib", (json_int_t)(f->mem_available >> 20),
		      "memory_per_trial_mib", (json_int_t)(p->memory_per_trial >> 20),
		      "max_study_at_once", (json_int_t)p->by_pool, "pools", pools);
	json_object_set_new(o, "cut_by", p->cut_by ? json_string(p->cut_by) : json_null());
	return o;
}

char *ag_batch_plan_text(const struct ag_batch_plan *p, const struct ag_batch_facts *f)
{
	char why[256] = "";
	if (p->cut_by && strcmp(p->cut_by, "cores") == 0)
		snprintf(why, sizeof(why), "; cut by cores: at most %u per core on %u",
			 AG_BATCH_JOBS_PER_CORE, f->cores);
	else if (p->cut_by && strcmp(p->cut_by, "memory") == 0)
		snprintf(why, sizeof(why),
			 "; cut by memory: %" PRIu64 " MiB per trial, %" PRIu64 " MiB available",
			 p->memory_per_trial >> 20, f->mem_available >> 20);
	else if (p->cut_by && strcmp(p->cut_by, "address_pool") == 0)
		snprintf(why, sizeof(why), "; cut by the address pool: %u free study subnet pair%s",
			 p->by_pool, p->by_pool == 1 ? "" : "s");
	else if (p->cut_by && strcmp(p->cut_by, "fixed_subnet") == 0)
		snprintf(why, sizeof(why),
			 "; cut by a fixed study_subnet: one study trial at a time");
	else if (p->cut_by && strcmp(p->cut_by, "trials") == 0)
		snprintf(why, sizeof(why), "; no more than the trials");
	char extra[96] = "";
	if (p->study_trials && p->study_trials < p->trials && p->by_pool)
		snprintf(extra, sizeof(extra), "; at most %u study trials at once", p->by_pool);
	return ag_xasprintf("concurrency %u for %u trial%s (asked %u%s%s)", p->jobs, p->trials,
			    p->trials == 1 ? "" : "s", p->asked, why, extra);
}
