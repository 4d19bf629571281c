#include "lib/base/ag.h"
#include "lib/run/runs_audit.h"
#include "lib/egress/manifest.h"
#include "lib/run/study.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/verify.h"
#include "lib/run/contained_run.h"
#include "lib/run/recover.h"

#include <dirent.h>
#include <sys/stat.h>

#define R_FOREIGN "workspace.agentguard_foreign"

/* Names print escaped: they come from the repository. */
static int foreign(struct ag_error **err, const char *where, const char *name, const char *why)
{
	char safe[256];
	size_t j = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p && j + 5 < sizeof(safe);
	     p++) {
		if (*p < 0x20 || *p >= 0x7f)
			j += (size_t)snprintf(safe + j, sizeof(safe) - j, "\\x%02x", *p);
		else
			safe[j++] = (char)*p;
	}
	safe[j] = '\0';
	return ag_err(err, AG_E_UNSAFE_PATH, 0, R_FOREIGN,
		      "the repository's %s/%s was not written by AgentGuard (%s); AgentGuard "
		      "refuses a source whose .agentguard/ holds content it did not write: move it "
		      "out of the repository",
		      where, safe, why);
}

/* Calls fn for each entry of dirfd except . and .. (bounded). */
typedef int (*entry_fn)(int dirfd, const char *name, void *ctx, struct ag_error **err);

static int each_entry(int dirfd, size_t max, entry_fn fn, void *ctx, struct ag_error **err)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return ag_err(err, AG_E_IO, errno, R_FOREIGN, "cannot read .agentguard/");
	}
	rewinddir(d);
	size_t n = 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++n > max) {
			rc = ag_err(err, AG_E_LIMIT, 0, "workspace.agentguard_too_many",
				    "the runs root in the repository holds more than %zu entries; "
				    "move old runs out of the repository",
				    max);
			break;
		}
		rc = fn(dirfd, de->d_name, ctx, err);
	}
	closedir(d);
	return rc;
}

bool ag_runs_audit_run_file(const char *name, bool is_dir)
{
	/* A study run (study.h) adds the gateway's evidence directory and the
	 * egress manifest; `agentguard cleanup` the recovery record (recover.h). */
	if (is_dir)
		return strcmp(name, AG_RUN_LIFECYCLE_DIR) == 0 || strcmp(name, AG_STUDY_DIR) == 0;
	return strcmp(name, AG_RUN_MARKER_FILE) == 0 || strcmp(name, AG_RUN_ARTIFACT_FILE) == 0 ||
	       strcmp(name, AG_SEAL_FILE) == 0 || strcmp(name, AG_SIG_FILE) == 0 ||
	       strcmp(name, "changes.patch") == 0 || strcmp(name, AG_EGRESS_MANIFEST_FILE) == 0 ||
	       strcmp(name, AG_RUN_MARKER_SIG_FILE) == 0 ||
	       strcmp(name, AG_RUN_RECOVERED_FILE) == 0 ||
	       strcmp(name, AG_RUN_RECOVERED_SIG_FILE) == 0;
}

struct run_ctx {
	const char *run_id;
	const char *where;
};

static int check_run_entry(int dirfd, const char *name, void *vctx, struct ag_error **err)
{
	struct run_ctx *c = vctx;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !ag_runs_audit_run_file(name, S_ISDIR(st.st_mode)) ||
	    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return foreign(err, c->where, c->run_id,
			       "the run directory holds an entry AgentGuard does not write");
	return 0;
}

static int count_entry(int dirfd, const char *name, void *ctx, struct ag_error **err)
{
	(void)dirfd;
	(void)name;
	(void)err;
	++*(size_t *)ctx;
	return 0;
}

static bool dir_is_empty(int fd)
{
	size_t n = 0;
	struct ag_error *e = NULL;
	int rc = each_entry(fd, 1, count_entry, &n, &e);
	ag_error_free(e);
	return rc == 0 && n == 0;
}

struct root_ctx {
	const char *skip;
	const struct ag_trust *trust;
	const char *where;
};

static bool head_temp(const char *name)
{
	size_t n = strlen(name), hl = strlen(AG_CHAIN_HEAD_FILE);
	return n > hl + 6 && name[0] == '.' && strncmp(name + 1, AG_CHAIN_HEAD_FILE, hl) == 0 &&
	       name[hl + 1] == '.' && strcmp(name + n - 4, ".tmp") == 0;
}

static int check_root_entry(int dirfd, const char *name, void *vctx, struct ag_error **err)
{
	struct root_ctx *c = vctx;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return foreign(err, c->where, name, "cannot stat it");
	if (strcmp(name, AG_CHAIN_HEAD_FILE) == 0 || strcmp(name, AG_CHAIN_LOCK_FILE) == 0 ||
	    head_temp(name))
		return S_ISREG(st.st_mode) && st.st_nlink == 1
			   ? 0
			   : foreign(err, c->where, name, "not a regular single-link file");
	if (!S_ISDIR(st.st_mode))
		return foreign(err, c->where, name, "not a run directory");
	if (c->skip && strcmp(name, c->skip) == 0)
		return 0;
	_cleanup_close_ int fd =
	    openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return foreign(err, c->where, name, "cannot open it");
	if (dir_is_empty(fd))
		return 0; /* holds nothing to trust or distrust (a run being created) */
	struct ag_verify_report rep;
	struct ag_error *e = NULL;
	struct ag_verify_opts vo = {.trust = c->trust, .standalone = true};
	int rc = ag_evidence_verify_at(fd, &vo, &rep, &e);
	bool named = rc == 0 && rep.run_id && strcmp(rep.run_id, name) == 0;
	ag_verify_report_release(&rep);
	if (rc == 0 && !named)
		rc = -1;
	if (rc < 0 && ag_run_dir_owner_live(fd, name)) {
		ag_error_free(e);
		return 0; /* a run in progress (its owner process is running) */
	}
	if (rc < 0) {
		/* A crashed run that `agentguard cleanup` recovered and signed for. */
		struct ag_error *re = NULL;
		if (ag_run_recovered_check(fd, name, c->trust, &re) == 0) {
			ag_error_free(e);
			return 0;
		}
		struct stat rs;
		bool claims = fstatat(fd, AG_RUN_RECOVERED_FILE, &rs, AT_SYMLINK_NOFOLLOW) == 0;
		char why[200];
		if (claims)
			snprintf(why, sizeof(why),
				 "it claims to be a recovered run but its recovery record does not "
				 "verify: %s",
				 re ? re->reason : "unknown");
		else
			snprintf(why, sizeof(why),
				 "it does not verify as a run signed by a trusted key: %s",
				 e ? e->reason : "the run id differs from the directory name");
		ag_error_free(re);
		ag_error_free(e);
		return foreign(err, c->where, name, why);
	}
	struct run_ctx rc2 = {name, c->where};
	return each_entry(fd, AG_RUNS_AUDIT_MAX_RUN_ENTRIES, check_run_entry, &rc2, err);
}

struct only_ctx {
	const char *keep;
	const char *where;
};

static int only_next(int dirfd, const char *name, void *vctx, struct ag_error **err)
{
	(void)dirfd;
	struct only_ctx *c = vctx;
	if (strcmp(name, c->keep) != 0)
		return foreign(err, c->where, name, "only the runs root belongs there");
	return 0;
}

/* The next "/"-separated component of *p (empty components skipped), or NULL. */
static char *next_comp(char **p)
{
	while (**p == '/')
		(*p)++;
	if (!**p)
		return NULL;
	char *c = *p, *slash = strchr(c, '/');
	if (slash) {
		*slash = '\0';
		*p = slash + 1;
	} else {
		*p += strlen(c);
	}
	return c;
}

int ag_runs_audit(int repo_fd, const char *runs_rel, const char *skip_run,
		  const struct ag_trust *trust, struct ag_error **err)
{
	_cleanup_free_ char *rel = ag_xstrdup(runs_rel);
	char *p = rel;
	char *comp = next_comp(&p);
	if (!comp || strcmp(comp, ".agentguard") != 0)
		return ag_err(err, AG_E_INTERNAL, 0, R_FOREIGN,
			      "the runs root is not under the repository's .agentguard/");
	int cur = openat(repo_fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cur < 0)
		return errno == ENOENT ? 0 : foreign(err, ".", ".agentguard", "not a directory");
	_cleanup_free_ char *where = ag_xstrdup(".agentguard");
	int rc = 0;
	for (char *next = next_comp(&p); next; next = next_comp(&p)) {
		struct only_ctx oc = {next, where};
		rc = each_entry(cur, AG_RUNS_AUDIT_MAX_ENTRIES, only_next, &oc, err);
		if (rc < 0)
			break;
		int n = openat(cur, next, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(cur);
		cur = n;
		if (cur < 0)
			return e == ENOENT ? 0 : foreign(err, where, next, "not a directory");
		char *w = ag_xasprintf("%s/%s", where, next);
		free(where);
		where = w;
	}
	if (rc == 0) {
		struct root_ctx c = {skip_run, trust, where};
		rc = each_entry(cur, AG_RUNS_AUDIT_MAX_ENTRIES, check_root_entry, &c, err);
	}
	close(cur);
	return rc;
}
