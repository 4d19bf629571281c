/*
 * inject.c: a study run's credential injection, AgentGuard's side (inject.h).
 */
#include "lib/base/ag.h"
#include "lib/run/inject.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/json.h"
#include "lib/base/redact.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/egress/policy.h"

#include <dirent.h>
#include <jansson.h>
#include <time.h>
#include <libgen.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#define CFG_FAIL(reason, key, ...) ag_err_at(err, AG_E_CONFIG, reason, NULL, 0, 0, key, __VA_ARGS__)

static void secret_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void ag_study_inject_free(struct ag_study_inject *in)
{
	if (!in)
		return;
	ag_study_inject_unlink(in);
	for (size_t i = 0; i < in->n; i++) {
		secret_free(in->e[i].value);
		free(in->e[i].env);
	}
	ag_egress_ca_release(&in->ca);
	free(in);
}

static void inject_freep(struct ag_study_inject **p)
{
	ag_study_inject_free(*p);
}

/* The credential of rule R: its bytes (one trailing newline dropped),
 * printable ASCII only. *out is a secret (caller zeroes it). */
static int read_credential(const struct ag_egress_rule *r, size_t idx, const char *policy_path,
			   char **out, struct ag_error **err)
{
	const struct ag_egress_inject *in = r->inject;
	char key[96];
	snprintf(key, sizeof(key), "destinations[%zu].inject.%s", idx,
		 in->from_env ? "from_env" : "from_file");
	char *v = NULL;
	size_t n = 0;
	if (in->from_env) {
		const char *e = getenv(in->from_env);
		if (!e || !e[0])
			return CFG_FAIL("study.inject.credential_missing", key,
					"the credential for %s is not in AgentGuard's environment "
					"(%s is unset or empty)",
					r->dest.host, in->from_env);
		n = strlen(e);
		if (n > AG_EGRESS_CREDENTIAL_MAX + 1)
			return CFG_FAIL("study.inject.credential_invalid", key,
					"the credential for %s is longer than %d bytes",
					r->dest.host, AG_EGRESS_CREDENTIAL_MAX);
		v = ag_xstrdup(e);
	} else {
		static const struct ag_read_reasons why = {
		    "study.inject.credential_missing", "study.inject.credential_missing",
		    "study.inject.credential_missing", "study.inject.credential_invalid"};
		_cleanup_free_ char *copy = ag_xstrdup(policy_path);
		int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct ag_error *e = NULL;
		int rc = dfd < 0 ? -1
				 : ag_read_file_at(dfd, in->from_file, "the credential file",
						   AG_EGRESS_CREDENTIAL_MAX + 2, &why, &v, &n, &e);
		if (dfd >= 0)
			close(dfd);
		if (rc < 0) {
			const char *reason = e ? e->reason : "study.inject.credential_missing";
			ag_error_free(e);
			return CFG_FAIL(
			    reason, key,
			    "the credential file for %s cannot be read (it must be a "
			    "regular file beside the policy, not a link, at most %d bytes)",
			    r->dest.host, AG_EGRESS_CREDENTIAL_MAX);
		}
	}
	if (n > 0 && v[n - 1] == '\n')
		v[--n] = '\0';
	if (n > 0 && v[n - 1] == '\r')
		v[--n] = '\0';
	bool ok = n >= 1 && n <= AG_EGRESS_CREDENTIAL_MAX && strlen(v) == n;
	for (size_t i = 0; ok && i < n; i++)
		ok = (unsigned char)v[i] >= 0x20 && (unsigned char)v[i] <= 0x7e;
	if (!ok) {
		secret_free(v);
		return CFG_FAIL("study.inject.credential_invalid", key,
				"the credential for %s must be 1..%d printable ASCII characters",
				r->dest.host, AG_EGRESS_CREDENTIAL_MAX);
	}
	*out = v;
	return 0;
}

/* The agent must never get the real credential, nor a variable of the
 * same name as a placeholder from its config. */
static int agent_env_check(const struct ag_config *c, const struct ag_egress_rule *r, size_t idx,
			   const char *cred, struct ag_error **err)
{
	char key[96];
	snprintf(key, sizeof(key), "destinations[%zu].inject", idx);
	const char *ph = r->inject->placeholder_env;
	if (ag_env_name_reserved(ph))
		return CFG_FAIL("study.inject.placeholder_reserved", key,
				"placeholder_env %s is a reserved name (host or engine control "
				"state, or the trial CA's variables)",
				ph);
	for (size_t i = 0; i < c->n_agent_environment; i++) {
		const struct ag_kv *kv = &c->agent_environment[i];
		if (kv->value && strcmp(kv->value, cred) == 0)
			return CFG_FAIL(
			    "study.inject.credential_in_agent_env", key,
			    "the credential injected for %s is also configured into the "
			    "agent's environment (agent_environment.%s): remove it there",
			    r->dest.host, kv->key);
		if (strcmp(kv->key, ph) == 0)
			return CFG_FAIL("study.inject.placeholder_configured", key,
					"placeholder_env %s is also set by agent_environment", ph);
	}
	for (size_t i = 0; i < c->contained.n_env; i++) {
		const struct ag_env_entry *e = &c->contained.env[i];
		bool same = (e->source == AG_ENV_HOST && r->inject->from_env &&
			     strcmp(e->name, r->inject->from_env) == 0) ||
			    (e->source == AG_ENV_HOST && getenv(e->name) &&
			     strcmp(getenv(e->name), cred) == 0) ||
			    (e->value && strcmp(e->value, cred) == 0);
		if (same)
			return CFG_FAIL(
			    "study.inject.credential_in_agent_env", key,
			    "the credential injected for %s is also configured into the "
			    "agent's environment (contained_execution.environment %s): "
			    "remove it there",
			    r->dest.host, e->name);
		if (strcmp(e->name, ph) == 0)
			return CFG_FAIL("study.inject.placeholder_configured", key,
					"placeholder_env %s is also set by "
					"contained_execution.environment",
					ph);
	}
	return 0;
}

int ag_study_inject_prepare(const struct ag_config *c, const struct ag_egress_policy *policy,
			    const char *policy_path, const char *test_upstream_ca,
			    const char *trial_id, int64_t lifetime_secs, struct ag_redactor *red,
			    struct ag_study_inject **out, struct ag_error **err)
{
	*out = NULL;
	if (!policy || policy->n_inject == 0) {
		if (test_upstream_ca)
			return CFG_FAIL("study.inject.test_upstream_ca", "",
					"a test destination CA bundle needs a policy that injects");
		return 0;
	}
	_cleanup_(inject_freep) struct ag_study_inject *in = ag_xcalloc(1, sizeof(*in));
	const char *names[AG_EGRESS_INJECT_MAX];
	for (size_t i = 0; i < policy->n_rules; i++) {
		const struct ag_egress_rule *r = &policy->rules[i];
		if (!r->inject || in->n >= AG_EGRESS_INJECT_MAX)
			continue;
		if (test_upstream_ca && !r->test_only)
			return CFG_FAIL("study.inject.test_upstream_ca", "",
					"a test destination CA bundle is only for a policy whose "
					"inject rules are all test_only");
		char *cred = NULL;
		if (read_credential(r, i, policy_path, &cred, err) < 0)
			return -1;
		if (agent_env_check(c, r, i, cred, err) < 0) {
			secret_free(cred);
			return -1;
		}
		unsigned char rnd[16];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			secret_free(cred);
			return ag_err(err, AG_E_INTERNAL, errno, "study.inject.random",
				      "no randomness for the placeholder");
		}
		char ph[64] = "agentguard-placeholder-";
		size_t o = strlen(ph);
		for (size_t k = 0; k < sizeof(rnd); k++)
			o += (size_t)snprintf(ph + o, sizeof(ph) - o, "%02x", rnd[k]);
		/* the credential and the placeholder never reach any output */
		ag_redactor_add_secret(red, cred);
		ag_redactor_add_secret(red, ph);
		in->e[in->n].rule = r;
		in->e[in->n].value = ag_xasprintf("%s%s", r->inject->prefix, cred);
		in->e[in->n].env = ag_xasprintf("%s=%s", r->inject->placeholder_env, ph);
		secret_free(cred);
		names[in->n] = r->dest.host;
		in->n++;
	}
	if (ag_egress_ca_new(trial_id, names, in->n, lifetime_secs, &in->ca, err) < 0)
		return -1;
	in->test_upstream_ca = test_upstream_ca;
	*out = ag_steal_ptr(&in);
	return 0;
}

/* A new file NAME in DFD, mode 0640, group GID, holding DATA. */
static int new_file(int dfd, const char *name, int64_t gid, const char *data, size_t n)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = (gid > 0 && fchown(fd, (uid_t)-1, (gid_t)gid) < 0) || fchmod(fd, 0640) < 0 ||
			 ag_write_full(fd, data, n) < 0 || fsync(fd) < 0
		     ? -1
		     : 0;
	close(fd);
	return rc;
}

/*
 * Leftovers of runs killed (SIGKILL) between writing their inject file and
 * removing it: /dev/shm/agentguard-inject-* directories of this user, older
 * than AG_STUDY_INJECT_STALE_SECS, holding at most their inject.json. Never
 * follows a link; bounded; best effort (a failure leaves them as they were).
 */
static void sweep_stale(void)
{
	int dfd = open(AG_STUDY_INJECT_TMPFS, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	time_t now = time(NULL);
	struct dirent *de;
	for (int seen = 0; seen < AG_STUDY_INJECT_SWEEP_MAX && (de = readdir(d)); seen++) {
		if (strncmp(de->d_name, "agentguard-inject-", 18) != 0)
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    now - st.st_mtime < AG_STUDY_INJECT_STALE_SECS)
			continue;
		int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		(void)unlinkat(sub, "inject.json", 0);
		close(sub);
		(void)unlinkat(dfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

int ag_study_inject_write(struct ag_study_inject *in, int evidence_fd, int64_t gid,
			  struct ag_error **err)
{
	struct statfs sf;
	if (statfs(AG_STUDY_INJECT_TMPFS, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
		return ag_err(err, AG_E_UNVERIFIED, errno, "study.inject.tmpfs",
			      "%s is not a tmpfs: the credentials are never written to a disk",
			      AG_STUDY_INJECT_TMPFS);
	sweep_stale();
	char tmpl[] = AG_STUDY_INJECT_TMPFS "/agentguard-inject-XXXXXX";
	if (!mkdtemp(tmpl))
		return ag_err(err, AG_E_IO, errno, "study.inject.write",
			      "cannot make the inject directory on the host's tmpfs");
	in->dir = ag_xstrdup(tmpl);
	in->file = ag_xasprintf("%s/inject.json", tmpl);
	json_t *creds = json_array();
	for (size_t i = 0; i < in->n; i++)
		json_array_append_new(
		    creds, json_pack("{s:s, s:i, s:s}", "host", in->e[i].rule->dest.host, "port",
				     in->e[i].rule->dest.port, "value", in->e[i].value));
	json_t *doc = json_pack("{s:s, s:s, s:o}", "ca_cert", in->ca.cert_pem, "ca_key",
				in->ca.key_pem, "credentials", creds);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	/* the tree's copies of the secrets, zeroed before it is freed */
	ag_json_wipe_strings(doc);
	json_decref(doc);
	int dfd = open(in->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = text && dfd >= 0 ? new_file(dfd, "inject.json", gid, text, strlen(text)) : -1;
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		return ag_err(err, AG_E_IO, errno, "study.inject.write",
			      "cannot write the inject file on the host's tmpfs");
	/* the agent's CA file: the trial CA, then the host's bundle (public) */
	static const struct ag_read_reasons why = {"study.inject.host_ca", "study.inject.host_ca",
						   "study.inject.host_ca", "study.inject.host_ca"};
	char *bundle = NULL;
	size_t blen = 0;
	struct ag_error *e = NULL;
	if (ag_read_file_at(AT_FDCWD, AG_STUDY_HOST_CA_BUNDLE, "the host's CA bundle",
			    AG_STUDY_HOST_CA_MAX, &why, &bundle, &blen, &e) < 0) {
		ag_error_free(e); /* none: the trial CA alone */
		bundle = NULL;
		blen = 0;
	}
	_cleanup_free_ char *ca =
	    ag_xasprintf("%s%.*s", in->ca.cert_pem, (int)blen, bundle ? bundle : "");
	free(bundle);
	if (new_file(evidence_fd, AG_STUDY_CA_FILE, gid, ca, strlen(ca)) < 0)
		return ag_err(err, AG_E_IO, errno, "study.inject.write",
			      "cannot write the agent's CA file");
	in->ca_file_written = true;
	if (in->test_upstream_ca) {
		static const struct ag_read_reasons twhy = {
		    "study.inject.test_upstream_ca", "study.inject.test_upstream_ca",
		    "study.inject.test_upstream_ca", "study.inject.test_upstream_ca"};
		char *t = NULL;
		size_t tl = 0;
		if (ag_read_file_at(AT_FDCWD, in->test_upstream_ca,
				    "the test destination CA bundle", AG_STUDY_HOST_CA_MAX, &twhy,
				    &t, &tl, err) < 0)
			return -1;
		rc = new_file(evidence_fd, "upstream-ca.pem", gid, t, tl);
		free(t);
		if (rc < 0)
			return ag_err(err, AG_E_IO, errno, "study.inject.write",
				      "cannot write the test destination CA bundle");
	}
	return 0;
}

void ag_study_inject_unlink(struct ag_study_inject *in)
{
	if (!in || !in->dir)
		return;
	(void)unlink(in->file);
	(void)rmdir(in->dir);
	free(in->file);
	free(in->dir);
	in->file = in->dir = NULL;
}
