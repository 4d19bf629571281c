/*
 * keys.h: where the CLI finds evidence keys (the library never reads the
 * environment). The local signing key is
 * ${XDG_STATE_HOME:-$HOME/.local/state}/agentguard/signing-key.pem.
 */
#ifndef AG_CLI_KEYS_H
#define AG_CLI_KEYS_H

#include "lib/base/ag.h"
#include "lib/evidence/sign.h"

/* The default local key path (heap), or NULL without HOME/XDG_STATE_HOME. */
char *ag_cli_default_key_path(void);
/* Loads `given` (must exist) or the local key (created on first use);
 * prints any error and returns an exit code. *path_out (optional, heap)
 * gets the path used. */
int ag_cli_signing_key(const char *given, struct ag_sign_key **out, char **path_out);

/* The trusted keys: every --public-key, plus the local key's public half
 * when it exists. */
struct ag_cli_trust {
	struct ag_sign_key **owned;
	size_t n;
	struct ag_trust trust;
};
/*
 * If argv[*i] is --public-key FILE or --public-key=FILE, records FILE in
 * pubs (at most AG_VERIFY_PUBLIC_KEYS_MAX; *i moves past a separate value)
 * and returns 1; returns 0 for any other argument; -1 after printing a
 * usage error for `cmd` (exit AG_EXIT_CONFIG).
 */
int ag_cli_public_key_arg(const char *cmd, int argc, char **argv, int *i, const char **pubs,
			  size_t *npubs);
int ag_cli_trust_load(struct ag_cli_trust *t, const char *const *pubs, size_t npubs);
void ag_cli_trust_release(struct ag_cli_trust *t);

#endif
