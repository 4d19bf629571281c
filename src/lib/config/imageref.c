#include "lib/base/ag.h"
#include "lib/config/imageref.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)* over s[0..n) */
static bool valid_path_component(const char *s, size_t n)
{
	size_t i = 0;
	if (n == 0 || !is_lower_alnum(s[0]))
		return false;
	while (i < n) {
		while (i < n && is_lower_alnum(s[i]))
			i++;
		if (i == n)
			return true;
		if (s[i] == '.')
			i++;
		else if (s[i] == '_')
			i += (i + 1 < n && s[i + 1] == '_') ? 2 : 1;
		else if (s[i] == '-')
			while (i < n && s[i] == '-')
				i++;
		else
			return false;
		if (i == n || !is_lower_alnum(s[i]))
			return false;
	}
	return true;
}

/* host[:port]; host = labels of [A-Za-z0-9-] (not starting/ending with '-') */
static bool valid_registry(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t hn = colon ? (size_t)(colon - s) : n;
	if (hn == 0 || hn > 253)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < hn; i++) {
		char c = s[i];
		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!(is_alnum(c) || c == '-'))
			return false;
		if (c == '-' && label == 0)
			return false;
		label++;
	}
	if (label == 0 || s[hn - 1] == '-')
		return false;
	if (colon) {
		size_t pn = n - hn - 1;
		if (pn == 0 || pn > 5)
			return false;
		unsigned port = 0;
		for (size_t i = hn + 1; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return false;
			port = port * 10 + (unsigned)(s[i] - '0');
		}
		if (port < 1 || port > 65535)
			return false;
	}
	return true;
}

static bool valid_tag(const char *s, size_t n)
{
	if (n == 0 || n > AG_IMAGE_TAG_MAX)
		return false;
	if (!(is_alnum(s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(is_alnum(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return false;
	return true;
}

static bool valid_digest(const char *s)
{
	if (strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return false;
	for (const char *p = s + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

void ag_image_ref_release(struct ag_image_ref *r)
{
	free(r->registry);
	free(r->repository);
	free(r->tag);
	free(r->digest);
	memset(r, 0, sizeof(*r));
}

static int invalid(struct ag_error **err, const char *why)
{
	return ag_err(err, AG_E_CONFIG, 0, "config.image.invalid",
		      "not a valid Docker image reference: %s", why);
}

int ag_image_ref_parse(const char *s, struct ag_image_ref *out, struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	size_t len = strlen(s);
	if (len == 0)
		return invalid(err, "empty");
	if (s[0] == '-')
		return ag_err(err, AG_E_CONFIG, 0, "config.image.option_like",
			      "an image reference must not start with '-'");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c == 0x7f)
			return ag_err(err, AG_E_CONFIG, 0, "config.image.control",
				      "an image reference must not contain whitespace or control "
				      "characters");
	}
	if (len > AG_IMAGE_REF_MAX)
		return invalid(err, "longer than 512 characters");

	const char *at = strchr(s, '@');
	size_t name_tag_len = at ? (size_t)(at - s) : len;
	if (at) {
		if (!valid_digest(at + 1))
			return invalid(err,
				       "the digest must be sha256: and 64 lowercase hex digits");
	}
	/* The tag separator is the last ':' after the last '/'. */
	const char *last_slash = memrchr(s, '/', name_tag_len);
	const char *search = last_slash ? last_slash + 1 : s;
	const char *colon = memchr(search, ':', name_tag_len - (size_t)(search - s));
	size_t name_len = colon ? (size_t)(colon - s) : name_tag_len;
	if (colon && !valid_tag(colon + 1, name_tag_len - name_len - 1))
		return invalid(err,
			       "the tag must be 1-128 of [A-Za-z0-9_.-], not starting with . or -");

	/* Split the name into an optional registry and path components. */
	const char *first_slash = memchr(s, '/', name_len);
	size_t path_start = 0;
	if (first_slash) {
		size_t fl = (size_t)(first_slash - s);
		bool is_registry = memchr(s, '.', fl) || memchr(s, ':', fl) ||
				   (fl == 9 && memcmp(s, "localhost", 9) == 0);
		if (is_registry) {
			if (!valid_registry(s, fl))
				return invalid(err, "the registry host or port is malformed");
			path_start = fl + 1;
		}
	}
	if (path_start >= name_len)
		return invalid(err, "the repository path is empty");
	size_t i = path_start;
	while (i <= name_len) {
		const char *end = memchr(s + i, '/', name_len - i);
		size_t cl = end ? (size_t)(end - (s + i)) : name_len - i;
		if (!valid_path_component(s + i, cl))
			return invalid(
			    err,
			    "path components must be lowercase [a-z0-9] joined by . _ __ or -");
		i += cl + 1;
		if (!end)
			break;
	}
	out->registry = path_start ? ag_xstrndup(s, path_start - 1) : NULL;
	out->repository = ag_xstrndup(s, name_len);
	out->tag = colon ? ag_xstrndup(colon + 1, name_tag_len - name_len - 1) : NULL;
	out->digest = at ? ag_xstrdup(at + 1) : NULL;
	return 0;
}
