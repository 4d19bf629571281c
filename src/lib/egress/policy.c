/*
 * policy.c: the live-study destination policy (policy.h).
 */
#include "lib/base/ag.h"
#include "lib/egress/policy.h"
#include "lib/egress/inject.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"
#include "lib/base/buf.h"

#include <strings.h>

#define FAIL(code, reason, key, ...) ag_err_at(err, code, reason, NULL, 0, 0, key, __VA_ARGS__)

static void inject_free(struct ag_egress_inject *in)
{
	if (!in)
		return;
	free(in->header);
	free(in->prefix);
	free(in->from_env);
	free(in->from_file);
	free(in->placeholder_env);
	free(in);
}

void ag_egress_policy_free(struct ag_egress_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		free(p->rules[i].purpose);
		inject_free(p->rules[i].inject);
	}
	free(p->rules);
	free(p);
}

static void policy_freep(struct ag_egress_policy **p)
{
	ag_egress_policy_free(*p);
}

static int rule_cmp(const void *a, const void *b)
{
	const struct ag_egress_rule *x = a, *y = b;
	int c = strcmp(x->dest.host, y->dest.host);
	return c ? c : (x->dest.port > y->dest.port) - (x->dest.port < y->dest.port);
}

/* 1..AG_EGRESS_PURPOSE_MAX characters (code points, as JSON Schema's
 * maxLength counts them), no control characters. */
static int purpose_ok(const char *s)
{
	size_t chars = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return 0;
		chars += (*p & 0xc0) != 0x80;
	}
	return chars >= 1 && chars <= AG_EGRESS_PURPOSE_MAX;
}

/* RFC 9110 tchar. */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool ag_egress_inject_header_forbidden(const char *name, size_t len)
{
	static const char *const no[] = {"host",
					 "content-length",
					 "transfer-encoding",
					 "connection",
					 "keep-alive",
					 "proxy-connection",
					 "te",
					 "trailer",
					 "upgrade",
					 "expect",
					 "proxy-authorization"};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (strlen(no[i]) == len && strncasecmp(no[i], name, len) == 0)
			return true;
	return false;
}

/* [A-Za-z_][A-Za-z0-9_]*, 1..AG_EGRESS_INJECT_ENV_MAX bytes. */
static bool env_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > AG_EGRESS_INJECT_ENV_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* A relative path of printable ASCII, no "." or ".." component, no empty
 * one, at most AG_EGRESS_INJECT_SOURCE_MAX bytes. */
static bool rel_path_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > AG_EGRESS_INJECT_SOURCE_MAX || s[0] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e || s[i] == '\\')
			return false;
	const char *p = s;
	while (*p) {
		size_t c = strcspn(p, "/");
		if (c == 0 || (c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += c;
		if (*p == '/')
			p++;
		if (*p == '\0' && p[-1] == '/')
			return false;
	}
	return true;
}

static int parse_inject(const json_t *o, const char *rkey, struct ag_egress_rule *r,
			struct ag_error **err)
{
	char key[96];
	snprintf(key, sizeof(key), "%s.inject", rkey);
	if (!json_is_object(o))
		return FAIL(AG_E_CONFIG, "egress.policy.inject.type", key,
			    "inject must be an object");
	struct ag_egress_inject *in = ag_xcalloc(1, sizeof(*in));
	r->inject = in;
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		char sub[160];
		snprintf(sub, sizeof(sub), "%s.%.40s", key, k);
		char **slot = strcmp(k, "header") == 0		  ? &in->header
			      : strcmp(k, "prefix") == 0	  ? &in->prefix
			      : strcmp(k, "from_env") == 0	  ? &in->from_env
			      : strcmp(k, "from_file") == 0	  ? &in->from_file
			      : strcmp(k, "placeholder_env") == 0 ? &in->placeholder_env
								  : NULL;
		if (!slot)
			return FAIL(AG_E_CONFIG, "egress.policy.inject.unknown_key", key,
				    "unknown key in an inject");
		if (!json_is_string(v))
			return FAIL(AG_E_CONFIG, "egress.policy.inject.type", sub,
				    "%s must be a string", k);
		*slot = ag_xstrdup(json_string_value(v));
	}
	char sub[160];
	if (!in->header) {
		snprintf(sub, sizeof(sub), "%s.header", key);
		return FAIL(AG_E_CONFIG, "egress.policy.missing", sub, "header is required");
	}
	size_t hl = strlen(in->header);
	bool token = hl >= 1 && hl <= AG_EGRESS_INJECT_HEADER_MAX;
	for (size_t i = 0; token && i < hl; i++)
		token = tchar((unsigned char)in->header[i]);
	if (!token || ag_egress_inject_header_forbidden(in->header, hl)) {
		snprintf(sub, sizeof(sub), "%s.header", key);
		return FAIL(AG_E_CONFIG, "egress.policy.inject.header", sub,
			    "header must be an HTTP header name of 1..%d token characters, not "
			    "Host, the framing or a hop-by-hop header",
			    AG_EGRESS_INJECT_HEADER_MAX);
	}
	if (!in->prefix)
		in->prefix = ag_xstrdup("");
	bool prefix_ok = strlen(in->prefix) <= AG_EGRESS_INJECT_PREFIX_MAX;
	for (const char *c = in->prefix; prefix_ok && *c; c++)
		prefix_ok = (unsigned char)*c >= 0x20 && (unsigned char)*c <= 0x7e;
	if (!prefix_ok) {
		snprintf(sub, sizeof(sub), "%s.prefix", key);
		return FAIL(AG_E_CONFIG, "egress.policy.inject.prefix", sub,
			    "prefix must be at most %d printable ASCII characters",
			    AG_EGRESS_INJECT_PREFIX_MAX);
	}
	if ((in->from_env != NULL) == (in->from_file != NULL)) {
		snprintf(sub, sizeof(sub), "%s.from_env", key);
		return FAIL(AG_E_CONFIG, "egress.policy.inject.source", sub,
			    "exactly one of from_env and from_file names the credential");
	}
	if (in->from_env && !env_name_ok(in->from_env)) {
		snprintf(sub, sizeof(sub), "%s.from_env", key);
		return FAIL(
		    AG_E_CONFIG, "egress.policy.inject.source", sub,
		    "from_env must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*, "
		    "at most %d characters)",
		    AG_EGRESS_INJECT_ENV_MAX);
	}
	if (in->from_file && !rel_path_ok(in->from_file)) {
		snprintf(sub, sizeof(sub), "%s.from_file", key);
		return FAIL(AG_E_CONFIG, "egress.policy.inject.source", sub,
			    "from_file must be a path relative to the policy's directory, without "
			    "'.' or '..' components, at most %d characters",
			    AG_EGRESS_INJECT_SOURCE_MAX);
	}
	snprintf(sub, sizeof(sub), "%s.placeholder_env", key);
	if (!in->placeholder_env)
		return FAIL(AG_E_CONFIG, "egress.policy.missing", sub,
			    "placeholder_env is required");
	bool upper = env_name_ok(in->placeholder_env);
	for (const char *c = in->placeholder_env; upper && *c; c++)
		upper = !(*c >= 'a' && *c <= 'z');
	static const char *const study_vars[] = {"ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY",
						 "NO_PROXY", NULL};
	for (const char *const *sv = study_vars; upper && *sv; sv++)
		upper = strcmp(in->placeholder_env, *sv) != 0;
	if (!upper)
		return FAIL(AG_E_CONFIG, "egress.policy.inject.placeholder_env", sub,
			    "placeholder_env must be an environment variable name the agent may "
			    "get ([A-Z_][A-Z0-9_]*, at most %d characters, not a proxy variable)",
			    AG_EGRESS_INJECT_ENV_MAX);
	char hkey[128];
	snprintf(hkey, sizeof(hkey), "%s.port", rkey);
	if (r->dest.port != 443)
		return FAIL(AG_E_CONFIG, "egress.policy.inject.port", hkey,
			    "an inject rule must be for port 443 (HTTPS)");
	snprintf(hkey, sizeof(hkey), "%s.host", rkey);
	if (r->dest.ip_literal)
		return FAIL(AG_E_CONFIG, "egress.policy.inject.host", hkey,
			    "an inject rule must name its host by DNS name (its certificate is "
			    "issued for that name)");
	return 0;
}

static int parse_rule(const json_t *o, size_t idx, struct ag_egress_rule *r, struct ag_error **err)
{
	char key[64];
	snprintf(key, sizeof(key), "destinations[%zu]", idx);
	if (!json_is_object(o))
		return FAIL(AG_E_CONFIG, "egress.policy.type", key,
			    "a destination must be an object");
	const char *k;
	const json_t *v;
	const json_t *host = NULL, *port = NULL, *inject = NULL;
	json_object_foreach((json_t *)o, k, v)
	{
		char sub[128];
		snprintf(sub, sizeof(sub), "%s.%.40s", key, k);
		if (strcmp(k, "host") == 0) {
			if (!json_is_string(v))
				return FAIL(AG_E_CONFIG, "egress.policy.type", sub,
					    "host must be a string");
			host = v;
		} else if (strcmp(k, "port") == 0) {
			if (!json_is_integer(v))
				return FAIL(AG_E_CONFIG, "egress.policy.port", sub,
					    "port must be an integer in 1..65535");
			port = v;
		} else if (strcmp(k, "purpose") == 0) {
			if (!json_is_string(v) || !purpose_ok(json_string_value(v)))
				return FAIL(AG_E_CONFIG, "egress.policy.purpose", sub,
					    "purpose must be a string of 1..%d characters without "
					    "control characters",
					    AG_EGRESS_PURPOSE_MAX);
			free(r->purpose);
			r->purpose = ag_xstrdup(json_string_value(v));
		} else if (strcmp(k, "inject") == 0) {
			inject = v;
		} else if (strcmp(k, "test_only") == 0 || strcmp(k, "test_only_ip_literal") == 0) {
			if (!json_is_boolean(v))
				return FAIL(AG_E_CONFIG, "egress.policy.type", sub,
					    "%s must be true or false", k);
			if (k[9] == '\0')
				r->test_only = json_is_true(v);
			else
				r->test_only_ip_literal = json_is_true(v);
		} else {
			snprintf(sub, sizeof(sub), "%s", key);
			return FAIL(AG_E_CONFIG, "egress.policy.unknown_key", sub,
				    "unknown key in a destination");
		}
	}
	char hkey[80], pkey[80];
	snprintf(hkey, sizeof(hkey), "%s.host", key);
	snprintf(pkey, sizeof(pkey), "%s.port", key);
	if (!host)
		return FAIL(AG_E_CONFIG, "egress.policy.missing", hkey, "host is required");
	if (!port)
		return FAIL(AG_E_CONFIG, "egress.policy.missing", pkey, "port is required");
	json_int_t pv = json_integer_value(port);
	if (pv < 1 || pv > 65535)
		return FAIL(AG_E_CONFIG, "egress.policy.port", pkey, "port must be in 1..65535");
	r->dest.port = (int)pv;
	const char *why = NULL;
	if (ag_egress_host_normalize(json_string_value(host), json_string_length(host), &r->dest,
				     &why) < 0)
		return FAIL(AG_E_CONFIG, why, hkey,
			    "host must be an exact DNS name (no wildcard, no trailing dot, at "
			    "least two labels) or an approved test IP literal");
	bool suffix = false;
	if (!r->dest.ip_literal && ag_egress_host_blocked(r->dest.host, &suffix))
		return FAIL(AG_E_CONFIG,
			    suffix ? "egress.policy.host_blocked_suffix"
				   : "egress.policy.host_blocked",
			    hkey, "host '%s' names the local host, Docker or a metadata service",
			    r->dest.host);
	if (r->dest.ip_literal) {
		if (!r->test_only || !r->test_only_ip_literal)
			return FAIL(AG_E_CONFIG, "egress.policy.ip_literal_not_test_only", hkey,
				    "an IP literal needs test_only and test_only_ip_literal");
		enum ag_addr_class c = ag_egress_classify(&r->dest.addr);
		if (!ag_addr_class_safe(c, true))
			return FAIL(AG_E_CONFIG, "egress.policy.ip_literal_unsafe", hkey,
				    "IP literal '%s' is %s, not a global or documentation address",
				    r->dest.host, ag_addr_class_name(c));
	}
	if (!r->purpose)
		r->purpose = ag_xstrdup(AG_EGRESS_DEFAULT_PURPOSE);
	if (inject && parse_inject(inject, key, r, err) < 0)
		return -1;
	return 0;
}

json_t *ag_egress_policy_json(const struct ag_egress_policy *p)
{
	json_t *d = json_array();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ag_egress_rule *r = &p->rules[i];
		json_t *o = json_object();
		json_object_set_new(o, "host", json_string(r->dest.host));
		json_object_set_new(o, "port", json_integer(r->dest.port));
		json_object_set_new(o, "purpose", json_string(r->purpose));
		json_object_set_new(o, "test_only", json_boolean(r->test_only));
		json_object_set_new(o, "test_only_ip_literal",
				    json_boolean(r->test_only_ip_literal));
		if (r->inject) {
			const struct ag_egress_inject *in = r->inject;
			json_t *j = json_object();
			json_object_set_new(j, "header", json_string(in->header));
			json_object_set_new(j, "prefix", json_string(in->prefix));
			if (in->from_env)
				json_object_set_new(j, "from_env", json_string(in->from_env));
			else
				json_object_set_new(j, "from_file", json_string(in->from_file));
			json_object_set_new(j, "placeholder_env", json_string(in->placeholder_env));
			json_object_set_new(o, "inject", j);
		}
		json_array_append_new(d, o);
	}
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string(AG_EGRESS_POLICY_SCHEMA));
	json_object_set_new(o, "schema_version", json_integer(1));
	json_object_set_new(o, "destinations", d);
	return o;
}

/*
 * The digest's input, written byte for byte as Python's
 * json.dumps(policy, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
 * writes it, so a digest the earlier implementation recorded reads the same
 * here: lowercase \uXXXX escapes (surrogate pairs above U+FFFF), DEL raw.
 */
static void py_string(struct ag_buf *b, const char *s)
{
	struct ag_error *e = NULL;
	int r = ag_buf_adds(b, "\"", &e);
	const unsigned char *p = (const unsigned char *)s;
	while (*p && r == 0) {
		uint32_t cp = *p;
		int extra = cp < 0x80 ? 0 : cp < 0xe0 ? 1 : cp < 0xf0 ? 2 : 3;
		if (extra)
			cp &= 0x3f >> extra;
		for (int i = 1; i <= extra && p[i]; i++)
			cp = (cp << 6) | (p[i] & 0x3f);
		p += 1 + extra; /* jansson strings are valid UTF-8 */
		if (cp == '"' || cp == '\\')
			r = ag_buf_addf(b, &e, "\\%c", (char)cp);
		else if (cp == '\n')
			r = ag_buf_adds(b, "\\n", &e);
		else if (cp == '\r')
			r = ag_buf_adds(b, "\\r", &e);
		else if (cp == '\t')
			r = ag_buf_adds(b, "\\t", &e);
		else if (cp == '\b')
			r = ag_buf_adds(b, "\\b", &e);
		else if (cp == '\f')
			r = ag_buf_adds(b, "\\f", &e);
		else if (cp < 0x20 || (cp > 0x7f && cp < 0x10000))
			r = ag_buf_addf(b, &e, "\\u%04x", cp);
		else if (cp >= 0x10000)
			r = ag_buf_addf(b, &e, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
					0xdc00 + ((cp - 0x10000) & 0x3ff));
		else
			r = ag_buf_add(b, p - 1, 1, &e);
	}
	if (r == 0)
		r = ag_buf_adds(b, "\"", &e);
	ag_error_free(e); /* the buffer's bound is far above any valid policy */
}

static void policy_digest(struct ag_egress_policy *p)
{
	struct ag_buf b = AG_BUF_INIT(AG_EGRESS_POLICY_MAX_BYTES * 16, "egress.policy.size");
	struct ag_error *e = NULL;
	int r = ag_buf_adds(&b, "{\"destinations\":[", &e);
	for (size_t i = 0; i < p->n_rules && r == 0; i++) {
		const struct ag_egress_rule *x = &p->rules[i];
		r = ag_buf_adds(&b, i ? ",{\"host\":" : "{\"host\":", &e);
		py_string(&b, x->dest.host);
		if (x->inject && r == 0) {
			/* sorted keys: from_env|from_file, header, placeholder_env, prefix */
			const struct ag_egress_inject *in = x->inject;
			r = ag_buf_adds(&b,
					in->from_env ? ",\"inject\":{\"from_env\":"
						     : ",\"inject\":{\"from_file\":",
					&e);
			py_string(&b, in->from_env ? in->from_env : in->from_file);
			r = r ? r : ag_buf_adds(&b, ",\"header\":", &e);
			py_string(&b, in->header);
			r = r ? r : ag_buf_adds(&b, ",\"placeholder_env\":", &e);
			py_string(&b, in->placeholder_env);
			r = r ? r : ag_buf_adds(&b, ",\"prefix\":", &e);
			py_string(&b, in->prefix);
			r = r ? r : ag_buf_adds(&b, "}", &e);
		}
		r = r ? r : ag_buf_addf(&b, &e, ",\"port\":%d,\"purpose\":", x->dest.port);
		py_string(&b, x->purpose);
		r = r ? r
		      : ag_buf_addf(&b, &e, ",\"test_only\":%s,\"test_only_ip_literal\":%s}",
				    x->test_only ? "true" : "false",
				    x->test_only_ip_literal ? "true" : "false");
	}
	r = r ? r
	      : ag_buf_adds(
		    &b, "],\"schema\":\"" AG_EGRESS_POLICY_SCHEMA "\",\"schema_version\":1}", &e);
	ag_error_free(e);
	ag_sha256_hex(b.buf, b.len, p->digest);
	ag_buf_release(&b);
}

int ag_egress_policy_parse(const char *data, size_t len, struct ag_egress_policy **out,
			   struct ag_error **err)
{
	if (len > AG_EGRESS_POLICY_MAX_BYTES)
		return FAIL(AG_E_LIMIT, "egress.policy.size", "", "policy is larger than %d bytes",
			    AG_EGRESS_POLICY_MAX_BYTES);
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return ag_err_at(err, AG_E_CONFIG, "egress.policy.json", NULL, (unsigned)je.line,
				 (unsigned)je.column, "",
				 "policy is not valid JSON (or repeats a key)");
	_cleanup_(policy_freep) struct ag_egress_policy *p = ag_xcalloc(1, sizeof(*p));
	int rc = -1;
	const char *k;
	json_t *v;
	const json_t *schema = NULL, *version = NULL, *dests = NULL;
	if (!json_is_object(root)) {
		FAIL(AG_E_CONFIG, "egress.policy.type", "", "a policy must be a JSON object");
		goto out;
	}
	json_object_foreach(root, k, v)
	{
		if (strcmp(k, "schema") == 0)
			schema = v;
		else if (strcmp(k, "schema_version") == 0)
			version = v;
		else if (strcmp(k, "destinations") == 0)
			dests = v;
		else {
			FAIL(AG_E_CONFIG, "egress.policy.unknown_key", "", "unknown top-level key");
			goto out;
		}
	}
	if (!schema || !version || !dests) {
		FAIL(AG_E_CONFIG, "egress.policy.missing",
		     !schema	? "schema"
		     : !version ? "schema_version"
				: "destinations",
		     "a required key is missing");
		goto out;
	}
	if (!json_is_string(schema) || strcmp(json_string_value(schema), AG_EGRESS_POLICY_SCHEMA)) {
		FAIL(AG_E_CONFIG, "egress.policy.schema", "schema",
		     "schema must be \"" AG_EGRESS_POLICY_SCHEMA "\"");
		goto out;
	}
	if (!json_is_integer(version) || json_integer_value(version) != 1) {
		FAIL(AG_E_CONFIG, "egress.policy.version", "schema_version",
		     "schema_version must be the integer 1");
		goto out;
	}
	if (!json_is_array(dests)) {
		FAIL(AG_E_CONFIG, "egress.policy.type", "destinations",
		     "destinations must be a list");
		goto out;
	}
	size_t n = json_array_size(dests);
	if (n > AG_EGRESS_POLICY_MAX_RULES) {
		FAIL(AG_E_LIMIT, "egress.policy.too_many", "destinations",
		     "more than %d destination rules", AG_EGRESS_POLICY_MAX_RULES);
		goto out;
	}
	p->rules = ag_xcalloc(n ? n : 1, sizeof(*p->rules));
	for (size_t i = 0; i < n; i++) {
		p->n_rules = i + 1;
		if (parse_rule(json_array_get(dests, i), i, &p->rules[i], err) < 0)
			goto out;
		for (size_t j = 0; j < i; j++)
			if (rule_cmp(&p->rules[j], &p->rules[i]) == 0) {
				char key[64];
				snprintf(key, sizeof(key), "destinations[%zu]", i);
				FAIL(AG_E_CONFIG, "egress.policy.duplicate", key,
				     "destination '%s' port %d repeats destinations[%zu]",
				     p->rules[i].dest.host, p->rules[i].dest.port, j);
				goto out;
			}
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		if (!p->rules[i].inject)
			continue;
		char key[64];
		snprintf(key, sizeof(key), "destinations[%zu].inject", i);
		if (++p->n_inject > AG_EGRESS_INJECT_MAX) {
			FAIL(AG_E_LIMIT, "egress.policy.inject.too_many", key,
			     "more than %d rules inject a credential", AG_EGRESS_INJECT_MAX);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (p->rules[j].inject &&
			    strcmp(p->rules[j].inject->placeholder_env,
				   p->rules[i].inject->placeholder_env) == 0) {
				FAIL(AG_E_CONFIG, "egress.policy.inject.duplicate_placeholder", key,
				     "placeholder_env '%s' is also destinations[%zu]'s",
				     p->rules[i].inject->placeholder_env, j);
				goto out;
			}
	}
	qsort(p->rules, p->n_rules, sizeof(*p->rules), rule_cmp);
	policy_digest(p);
	*out = ag_steal_ptr(&p);
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int ag_egress_policy_load(const char *path, const char *display, struct ag_egress_policy **out,
			  struct ag_error **err)
{
	static const struct ag_read_reasons why = {"egress.policy.symlink",
						   "egress.policy.not_regular",
						   "egress.policy.read", "egress.policy.size"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, path, display, AG_EGRESS_POLICY_MAX_BYTES, &why, &data, &len,
			    err) < 0)
		return -1;
	return ag_egress_policy_parse(data, len, out, err);
}

json_t *ag_egress_policy_terminated_json(const struct ag_egress_policy *p)
{
	json_t *t = json_array();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ag_egress_rule *r = &p->rules[i];
		if (!r->inject)
			continue;
		char h[AG_EGRESS_INJECT_HEADER_MAX + 1];
		ag_egress_header_lower(r->inject->header, h);
		json_array_append_new(t, json_pack("{s:s, s:i, s:s}", "host", r->dest.host, "port",
						   r->dest.port, "header", h));
	}
	return t;
}

const struct ag_egress_rule *ag_egress_policy_find(const struct ag_egress_policy *p,
						   const char *host, int port)
{
	for (size_t i = 0; p && i < p->n_rules; i++)
		if (p->rules[i].dest.port == port && strcmp(p->rules[i].dest.host, host) == 0)
			return &p->rules[i];
	return NULL;
}
