/*
 * inject.h: a study run's credential injection (issue 21,
 * docs/study-egress.md "Credential injection"), AgentGuard's side.
 *
 * Before the run (ag_study_inject_prepare): each inject rule's credential
 * is read once (AgentGuard's environment, or a file beside the policy),
 * checked (printable ASCII, at most AG_EGRESS_CREDENTIAL_MAX bytes, not
 * also configured into the agent's environment), added to the run's
 * redaction set with a fresh per-trial placeholder, and the trial CA is
 * made (lib/egress/ca.h).
 *
 * During setup (ag_study_inject_write): the gateway's inject file (the CA
 * key and certificate, the credentials) is written to a new directory on
 * the host's tmpfs (/dev/shm, checked to be tmpfs), readable by the
 * gateway's group only, and bound read-only into the gateway; the agent's
 * CA file (the trial CA, then the host's CA bundle) goes into the run's
 * egress directory: it is public. Once the gateway has read the inject
 * file (its port answers), and in any case when the study ends,
 * ag_study_inject_unlink removes it: no credential and no CA key is on any
 * disk after the trial, and none is in any evidence. A run killed before
 * it could remove its file leaves it in memory (tmpfs); the next study run
 * with injection of the same user removes it once it is older than
 * AG_STUDY_INJECT_STALE_SECS.
 */
#ifndef AG_RUN_INJECT_H
#define AG_RUN_INJECT_H

#include "lib/base/ag.h"
#include "lib/base/bounds.h"
#include "lib/egress/ca.h"

struct ag_config;
struct ag_egress_policy;
struct ag_egress_rule;
struct ag_redactor;
struct ag_error;

#define AG_STUDY_INJECT_TMPFS "/dev/shm"
#define AG_STUDY_CA_FILE "trial-ca.pem"
/* The host's CA bundle appended to the agent's CA file, when readable. */
#define AG_STUDY_HOST_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

struct ag_study_inject {
	size_t n;
	struct {
		const struct ag_egress_rule *rule;
		char *value; /* prefix + credential (zeroed when freed) */
		char *env;   /* "PLACEHOLDER_ENV=placeholder" */
	} e[AG_EGRESS_INJECT_MAX];
	struct ag_egress_ca ca;
	const char *test_upstream_ca; /* a test-only destination CA bundle (host file), or NULL */
	char *dir, *file;	      /* the tmpfs directory and inject file while they exist */
	bool ca_file_written;
};

/*
 * POLICY_PATH locates from_file credentials (its directory). TEST_UPSTREAM_CA
 * (NULL: none) is allowed only when every inject rule is test_only.
 * Reasons: study.inject.credential_missing, study.inject.credential_invalid,
 * study.inject.credential_in_agent_env, study.inject.placeholder_configured,
 * study.inject.placeholder_reserved,
 * study.inject.test_upstream_ca (AG_E_CONFIG), egress.ca.generate.
 * *out NULL and 0 when the policy injects nothing.
 */
int ag_study_inject_prepare(const struct ag_config *c, const struct ag_egress_policy *policy,
			    const char *policy_path, const char *test_upstream_ca,
			    const char *trial_id, int64_t lifetime_secs, struct ag_redactor *red,
			    struct ag_study_inject **out, struct ag_error **err);

/* Writes the inject file (tmpfs; group GID, 0640) and, in EVIDENCE_FD,
 * the agent's CA file and the test destination bundle (0640, group GID).
 * Reasons: study.inject.tmpfs (AG_E_UNVERIFIED), study.inject.write. */
int ag_study_inject_write(struct ag_study_inject *in, int evidence_fd, int64_t gid,
			  struct ag_error **err);

/* Removes the inject file and its directory (idempotent). */
void ag_study_inject_unlink(struct ag_study_inject *in);
void ag_study_inject_free(struct ag_study_inject *in);

#endif
