/*
 * policy.h: the live-study destination policy
 * `agentguard.live-study-egress-policy` v1 (upstream-reference 9.2,
 * data/schemas/live-study-egress-policy-v1.schema.json,
 * docs/study-egress.md).
 *
 *   {"schema": "agentguard.live-study-egress-policy", "schema_version": 1,
 *    "destinations": [{"host": H, "port": P, "purpose"?: S,
 *                      "test_only"?: B, "test_only_ip_literal"?: B}, ...]}
 *
 * Exact host:port rules only, at most AG_EGRESS_POLICY_MAX_RULES. Hosts
 * are normalised by ag_egress_host_normalize (authority.h). Refused: the
 * blocked names and suffixes, IP literals unless the rule has both
 * test_only and test_only_ip_literal and the address is global or in a
 * documentation range, ports outside 1..65535, a rule equal to another
 * after normalisation, unknown keys, duplicate JSON keys.
 *
 * The digest is SHA-256 over the canonical JSON (sorted keys, compact,
 * ASCII) of the normalised policy: defaults filled in, rules sorted by
 * (host, port). Hosts that differ only in case or surrounding blanks give
 * one digest.
 */
#ifndef AG_EGRESS_POLICY_H
#define AG_EGRESS_POLICY_H

#include "lib/base/ag.h"
#include "lib/base/sha256.h"
#include "lib/egress/authority.h"

#include <jansson.h>

struct ag_error;

#define AG_EGRESS_POLICY_SCHEMA "agentguard.live-study-egress-policy"
#define AG_EGRESS_DEFAULT_PURPOSE "approved-destination"

/*
 * A rule's "inject" (issue 21, docs/study-egress.md "Credential
 * injection"): the gateway terminates the agent's TLS to this destination
 * only, and adds HEADER: PREFIX + the credential to every request, after
 * removing any credential header the agent sent. The credential comes from
 * AgentGuard's own environment (from_env) or a file relative to the
 * policy's directory (from_file), read once per trial; the agent gets a
 * per-trial placeholder in placeholder_env instead. Only on DNS-name rules
 * for port 443, at most AG_EGRESS_INJECT_MAX per policy.
 *   {"header": "Authorization", "prefix"?: "Bearer ",
 *    "from_env"|"from_file": S, "placeholder_env": "OPENAI_API_KEY"}
 */
struct ag_egress_inject {
	char *header;	       /* a token, as written (compared without case) */
	char *prefix;	       /* printable ASCII, may be "" */
	char *from_env;	       /* an environment variable name, or NULL */
	char *from_file;       /* a relative path without "..", or NULL */
	char *placeholder_env; /* the agent's variable that holds the placeholder */
};

struct ag_egress_rule {
	struct ag_egress_target dest; /* normalised host, port, literal address */
	char *purpose;		      /* owned */
	bool test_only;
	bool test_only_ip_literal;
	struct ag_egress_inject *inject; /* owned; NULL: spliced, never terminated */
};

struct ag_egress_policy {
	struct ag_egress_rule *rules; /* sorted by (host, port) */
	size_t n_rules;
	size_t n_inject; /* rules with an inject */
	char digest[AG_SHA256_HEX_LEN + 1];
};

/*
 * Parses and validates a policy document from memory (at most
 * AG_EGRESS_POLICY_MAX_BYTES). On failure: AG_E_CONFIG (AG_E_LIMIT for
 * egress.policy.size / egress.policy.too_many) with err->key the JSON path
 * ("destinations[2].host") and one of these reasons:
 *   egress.policy.size egress.policy.json egress.policy.type
 *   egress.policy.unknown_key egress.policy.missing egress.policy.schema
 *   egress.policy.version egress.policy.too_many egress.policy.port
 *   egress.policy.purpose egress.policy.host_blocked
 *   egress.policy.host_blocked_suffix egress.policy.ip_literal_not_test_only
 *   egress.policy.ip_literal_unsafe egress.policy.duplicate
 *   egress.policy.inject.type egress.policy.inject.unknown_key
 *   egress.policy.inject.header egress.policy.inject.prefix
 *   egress.policy.inject.source egress.policy.inject.placeholder_env
 *   egress.policy.inject.port egress.policy.inject.host
 *   egress.policy.inject.too_many egress.policy.inject.duplicate_placeholder
 *   and every egress.host.* token of authority.h.
 */
int ag_egress_policy_parse(const char *data, size_t len, struct ag_egress_policy **out,
			   struct ag_error **err);

/* Reads `path` (no final symlink, regular file, bounded) and parses it;
 * `display` names it in errors. Adds egress.policy.read / .not_regular /
 * .symlink for the file itself. */
int ag_egress_policy_load(const char *path, const char *display, struct ag_egress_policy **out,
			  struct ag_error **err);

void ag_egress_policy_free(struct ag_egress_policy *p);

/* The normalised policy as a JSON value (the digest's input). */
json_t *ag_egress_policy_json(const struct ag_egress_policy *p);

/* True when NAME (any case) is a header an inject may not name: the
 * framing, the connection's own and the hop-by-hop ones. */
bool ag_egress_inject_header_forbidden(const char *name, size_t len);

/* The policy's inject rules as the evidence lists them (the manifest's
 * and the artifact's "tls_terminated"): [{"host", "port", "header"}],
 * the header name in lower case, in rule order. */
json_t *ag_egress_policy_terminated_json(const struct ag_egress_policy *p);

/* The rule for exactly (normalised host, port), or NULL. */
const struct ag_egress_rule *ag_egress_policy_find(const struct ag_egress_policy *p,
						   const char *host, int port);

#endif
