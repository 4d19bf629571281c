#include "lib/base/ag.h"
#include "cli/keys.h"
#include "cli/cli.h"
#include "lib/base/error.h"
#include "lib/base/bounds.h"
#include "lib/evidence/sign.h"
#include "lib/run/setup.h"

char *ag_cli_default_key_path(void)
{
	/* the rule is the library's (lib/run/setup.h); the environment is read here */
	return ag_run_key_default_path(getenv("XDG_STATE_HOME"), getenv("HOME"));
}

int ag_cli_signing_key(const char *given, struct ag_sign_key **out, char **path_out)
{
	_cleanup_free_ char *def = given ? NULL : ag_cli_default_key_path();
	if (path_out)
		*path_out = NULL;
	if (!given && !def) {
		fputs("agentguard: error: no signing key: set HOME or XDG_STATE_HOME, or give "
		      "--signing-key FILE [evidence.key.path]\n",
		      stderr);
		return AG_EXIT_CONFIG;
	}
	_cleanup_err_ struct ag_error *err = NULL;
	bool created = false;
	if (ag_sign_key_load(given ? given : def, given ? 0 : AG_SIGN_CREATE, out, &created, &err) <
	    0) {
		ag_err_wrap(&err, "%s", given ? "--signing-key" : "the local signing key");
		ag_cli_print_error(err);
		return AG_EXIT_CONFIG;
	}
	if (path_out)
		*path_out = ag_xstrdup(given ? given : def);
	if (created)
		fprintf(stderr,
			"agentguard: created the local evidence signing key (%s); agentguard "
			"evidence public-key prints its public half\n",
			ag_sign_key_fingerprint(*out));
	return AG_EXIT_PASS;
}

void ag_cli_trust_release(struct ag_cli_trust *t)
{
	for (size_t i = 0; i < t->n; i++)
		ag_sign_key_free(t->owned[i]);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

int ag_cli_trust_load(struct ag_cli_trust *t, const char *const *pubs, size_t npubs)
{
	memset(t, 0, sizeof(*t));
	t->owned = ag_xcalloc(npubs + 1, sizeof(*t->owned));
	_cleanup_err_ struct ag_error *err = NULL;
	for (size_t i = 0; i < npubs; i++) {
		if (ag_sign_pubkey_load(pubs[i], &t->owned[t->n], &err) < 0) {
			ag_err_wrap(&err, "--public-key");
			ag_cli_print_error(err);
			ag_cli_trust_release(t);
			return AG_EXIT_CONFIG;
		}
		t->n++;
	}
	/* The local key's public half, when this user has one (never created here). */
	_cleanup_free_ char *def = ag_cli_default_key_path();
	if (def) {
		struct ag_sign_key *k = NULL;
		if (ag_sign_key_load(def, 0, &k, NULL, &err) == 0) {
			t->owned[t->n++] = k;
		} else if (strcmp(err->reason, "evidence.key.missing") != 0) {
			/* Trusting fewer keys is the safe direction: say so and go on. */
			fprintf(stderr,
				"agentguard: warning: the local signing key is not trusted here: "
				"%s [%s]\n",
				err->msg ? err->msg : "unusable", err->reason);
		}
	}
	t->trust.keys = (const struct ag_sign_key *const *)t->owned;
	t->trust.n = t->n;
	return AG_EXIT_PASS;
}

int ag_cli_public_key_arg(const char *cmd, int argc, char **argv, int *i, const char **pubs,
			  size_t *npubs)
{
	const char *a = argv[*i];
	const char *pk = NULL;
	if (strcmp(a, "--public-key") == 0) {
		if (*i + 1 >= argc) {
			ag_cli_usage(cmd, "--public-key needs a FILE");
			return -1;
		}
		pk = argv[++*i];
	} else if (strncmp(a, "--public-key=", 13) == 0) {
		pk = a + 13;
	} else {
		return 0;
	}
	if (*npubs >= AG_VERIFY_PUBLIC_KEYS_MAX) {
		ag_cli_usage(cmd, "at most %d --public-key", AG_VERIFY_PUBLIC_KEYS_MAX);
		return -1;
	}
	pubs[(*npubs)++] = pk;
	return 1;
}
