/*
 * libFuzzer harness over the egress authority / URL / host / address
 * parsers (src/lib/egress/authority.c, decision.c). Built with gcc it
 * links tests/fuzz/replay.c and replays tests/fuzz/corpus/egress_authority
 * in `make check`.
 *
 * Invariants: a parsed host re-normalises to itself and is never longer
 * than 253 bytes; ports are 1..65535; a sanitized URL has no '?' or '#'
 * and parses again to the same host and port; a CONNECT authority
 * rebuilt from the parse parses to the same target; every classified
 * address has a class name; an IPv4-mapped address is classified as the
 * IPv4 inside.
 */
#include "lib/base/ag.h"
#include "lib/egress/authority.h"
#include "lib/egress/decision.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_host(const struct ag_egress_target *t)
{
	struct ag_egress_target u;
	const char *why = NULL;
	if (strlen(t->host) > AG_EGRESS_HOST_MAX ||
	    ag_egress_host_normalize(t->host, strlen(t->host), &u, &why) < 0 ||
	    strcmp(u.host, t->host) != 0 || u.ip_literal != t->ip_literal)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ag_egress_target t;
	const char *why = NULL;
	if (ag_egress_authority_parse(s, size, &t, &why) == 0) {
		if (t.port < 1 || t.port > 65535)
			abort();
		same_host(&t);
		char again[AG_EGRESS_HOST_MAX + 16];
		bool v6 = t.ip_literal && t.addr.family == 6;
		int n = snprintf(again, sizeof(again), "%s%s%s:%d", v6 ? "[" : "", t.host,
				 v6 ? "]" : "", t.port);
		struct ag_egress_target u;
		if (ag_egress_authority_parse(again, (size_t)n, &u, &why) < 0 ||
		    strcmp(u.host, t.host) || u.port != t.port)
			abort();
	} else if (!why) {
		abort();
	}
	bool https = false;
	char *clean = NULL;
	why = NULL;
	if (ag_egress_url_parse(s, size, &t, &https, &clean, &why) == 0) {
		if (!clean || strchr(clean, '?') || strchr(clean, '#') || t.port < 1)
			abort();
		same_host(&t);
		struct ag_egress_target u;
		bool h2;
		if (ag_egress_url_parse(clean, strlen(clean), &u, &h2, NULL, &why) < 0 ||
		    strcmp(u.host, t.host) || u.port != t.port || h2 != https)
			abort();
	} else if (!why || clean) {
		abort();
	}
	free(clean);
	if (size < AG_EGRESS_ADDR_TEXT_MAX) {
		char buf[AG_EGRESS_ADDR_TEXT_MAX];
		memcpy(buf, s, size);
		buf[size] = '\0';
		struct ag_egress_addr a;
		if (ag_egress_addr_parse(buf, &a) == 0) {
			enum ag_addr_class c = ag_egress_classify(&a);
			if (!ag_addr_class_name(c))
				abort();
			struct ag_egress_addr in = ag_egress_addr_unmap(&a);
			if (in.family == 4 && a.family == 6 && ag_egress_classify(&in) != c)
				abort();
			char text[AG_EGRESS_ADDR_TEXT_MAX];
			ag_egress_addr_format(&a, text);
			struct ag_egress_addr b;
			if (ag_egress_addr_parse(text, &b) < 0 || memcmp(a.b, b.b, 16))
				abort();
		}
	}
	return 0;
}
