/*
 * ws_bench.c: times one workspace prepare or capture and reports peak RSS.
 *   ws_bench prepare SRC ROOT ID [threads]
 *   ws_bench capture ROOT ID [threads]
 *   ws_bench cleanup ROOT ID
 *   ws_bench gitread SRC [n]    (the git facts a default prepare reads; n
 *                               reads in a row, the wall time is their sum)
 * Prints one line: "<op> wall_s=<s> maxrss_kib=<k> entries=<n> ..." .
 * BENCH_PROGRESS=1: prepare and capture report progress to a counter (what
 * a terminal run of contained-run pays), and progress_calls=<n> is printed.
 * Built by bench/workspace/run.sh against the library.
 */
#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/workspace.h"

#include <inttypes.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long maxrss(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static uint64_t progress_calls;
static void count_progress(void *ctx, const struct ag_ws_progress *p)
{
	(void)ctx;
	(void)p;
	progress_calls++;
}

int main(int argc, char **argv)
{
#ifdef AG_WS_GIT_READER_ARG
	/* the git reader is this program re-executed (gitinfo.h); the guard
	 * lets run.sh build older revisions, whose reader was a fork */
	if (argc > 1 && !strcmp(argv[1], AG_WS_GIT_READER_ARG))
		return ag_ws_git_reader_main(argc, argv);
	if (ag_ws_git_reader_enable() < 0)
		return 1;
#endif
	struct ag_error *e = NULL;
	const char *bp = getenv("BENCH_PROGRESS");
	ag_ws_progress_fn prog = bp && *bp ? count_progress : NULL;
	if (argc >= 5 && !strcmp(argv[1], "prepare")) {
		int src = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int root = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct ag_ws_prepare_opts o = {
		    .threads = argc > 5 ? (unsigned)strtoul(argv[5], NULL, 10) : 0,
		    .progress = prog};
		struct ag_ws_prepared p;
		double t0 = now();
		int rc = ag_ws_prepare(src, root, argv[4], &o, &p, &e);
		double t1 = now();
		if (rc < 0) {
			fprintf(stderr, "prepare failed: %s [%s]\n", e->msg, e->reason);
			return 1;
		}
		printf("prepare wall_s=%.3f maxrss_kib=%ld entries=%" PRIu64 " files=%" PRIu64
		       " bytes=%" PRIu64 " text_bytes=%" PRIu64 " kind=%s progress_calls=%" PRIu64 "\n",
		       t1 - t0, maxrss(), p.entries, p.files, p.total_bytes, p.text_bytes,
		       ag_ws_source_kind_name(p.source_kind), progress_calls);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "capture")) {
		int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct ag_ws_capture_opts o = {
		    .threads = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0,
		    .progress = prog};
		struct ag_ws_mutations m;
		double t0 = now();
		int rc = ag_ws_capture(root, argv[3], &o, &m, &e);
		double t1 = now();
		if (rc < 0) {
			fprintf(stderr, "capture failed: %s [%s]\n", e->msg, e->reason);
			return 1;
		}
		printf("capture wall_s=%.3f maxrss_kib=%ld entries=%" PRIu64
		       " changes=%zu progress_calls=%" PRIu64 "\n",
		       t1 - t0, maxrss(), m.entries, m.n, progress_calls);
		ag_ws_mutations_release(&m);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "cleanup")) {
		int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct ag_ws_cleanup_report r;
		double t0 = now();
		int rc = ag_ws_cleanup(root, argv[3], &r, &e);
		printf("cleanup wall_s=%.3f complete=%d removed=%" PRIu64 "\n", now() - t0, rc == 0,
		       r.removed);
		return rc < 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "gitread")) {
		int src = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct ag_ws_git_opts o = {.what = AG_WS_GIT_STATUS_COLLAPSED | AG_WS_GIT_PATHS};
		struct ag_ws_gitinfo g;
		int n = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 1;
		double t0 = now();
		for (int i = 0; i < n - 1; i++) {
			if (ag_ws_gitinfo_collect(src, &o, &g, &e) < 0) {
				fprintf(stderr, "gitread: %s [%s]\n", e->msg, e->reason);
				return 1;
			}
			ag_ws_gitinfo_release(&g);
		}
		int rc = ag_ws_gitinfo_collect(src, &o, &g, &e);
		if (rc < 0) {
			fprintf(stderr, "gitread: %s [%s]\n", e->msg, e->reason);
			return 1;
		}
		printf("gitread wall_s=%.3f status=%zu tracked=%zu untracked=%zu\n", now() - t0,
		       g.nstatus, g.ntracked, g.nuntracked);
		ag_ws_gitinfo_release(&g);
		return 0;
	}
	fprintf(stderr, "usage: ws_bench prepare SRC ROOT ID [threads] | capture ROOT ID [threads] "
			"| cleanup ROOT ID | gitread SRC [n]\n");
	return 2;
}
