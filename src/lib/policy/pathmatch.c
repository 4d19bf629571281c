/*
 * pathmatch.c: bounded fnmatchcase() after upstream normalisation.
 */
#include "lib/base/ag.h"
#include "lib/policy/pathmatch.h"
#include "lib/base/bounds.h"

char *ag_pm_normalise(const char *s)
{
	size_t n = strlen(s);
	char *t = ag_xstrdup(s);
	for (size_t i = 0; i < n; i++)
		if (t[i] == '\\')
			t[i] = '/';
	size_t a = 0;
	while (a < n && t[a] == '/')
		a++;
	while (n > a && t[n - 1] == '/')
		n--;
	memmove(t, t + a, n - a);
	t[n - a] = '\0';
	return t;
}

/* One code point at s (n bytes left): its value and length; an invalid
 * sequence is one byte whose value is the byte (0x80..0xff). */
static size_t cp_at(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len = c < 0x80		  ? 1
		     : (c & 0xe0) == 0xc0 ? 2
		     : (c & 0xf0) == 0xe0 ? 3
		     : (c & 0xf8) == 0xf0 ? 4
					  : 0;
	if (len == 1) {
		*cp = c;
		return 1;
	}
	if (len == 0 || len > n)
		goto invalid;
	uint32_t v = c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto invalid;
		v = (v << 6) | (s[i] & 0x3f);
	}
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		goto invalid;
	*cp = v;
	return len;
invalid:
	*cp = c;
	return 1;
}

/*
 * A bracket expression at p[0] == '['. Returns its length in the pattern,
 * or 0 when there is no closing ']' (then '[' is a literal). *hit says
 * whether code point cp is in it.
 */
static size_t bracket(const unsigned char *p, size_t np, uint32_t cp, bool *hit, uint64_t *steps)
{
	size_t j = 1;
	bool neg = false;
	if (j < np && p[j] == '!') {
		neg = true;
		j++;
	}
	size_t first = j;
	if (j < np && p[j] == ']')
		j++;
	while (j < np && p[j] != ']')
		j++;
	if (j >= np)
		return 0;
	size_t end = j; /* p[end] == ']' */
	bool in = false;
	size_t i = first;
	while (i < end) {
		(*steps)++;
		uint32_t lo, hi;
		size_t l = cp_at(p + i, end - i, &lo);
		i += l;
		hi = lo;
		if (i + 1 < end && p[i] == '-') {
			size_t l2 = cp_at(p + i + 1, end - i - 1, &hi);
			i += 1 + l2;
		}
		if (lo <= hi && cp >= lo && cp <= hi)
			in = true;
	}
	*hit = neg ? !in : in;
	/* Python: "[!]" is a bracket that matches any character. */
	if (neg && first == end)
		*hit = true;
	return end + 1;
}

enum ag_pm_result ag_pm_match_bounded(const char *pattern, const char *path, uint64_t max_steps)
{
	char *pn = ag_pm_normalise(pattern);
	char *sn = ag_pm_normalise(path);
	const unsigned char *p = (const unsigned char *)pn, *s = (const unsigned char *)sn;
	size_t np = strlen(pn), ns = strlen(sn);
	size_t pi = 0, si = 0, star_p = 0, star_s = 0;
	bool have_star = false;
	uint64_t steps = 0;
	enum ag_pm_result res = AG_PM_NOMATCH;
	while (si < ns) {
		if (++steps > max_steps) {
			res = AG_PM_LIMIT;
			goto out;
		}
		if (pi < np && p[pi] == '*') {
			while (pi < np && p[pi] == '*')
				pi++;
			have_star = true;
			star_p = pi;
			star_s = si;
			continue;
		}
		if (pi < np) {
			uint32_t cp;
			size_t sl = cp_at(s + si, ns - si, &cp);
			if (p[pi] == '?') {
				pi++;
				si += sl;
				continue;
			}
			if (p[pi] == '[') {
				bool hit = false;
				size_t bl = bracket(p + pi, np - pi, cp, &hit, &steps);
				if (bl) {
					if (hit) {
						pi += bl;
						si += sl;
						continue;
					}
					goto backtrack;
				}
				/* no closing ']': a literal '[' */
			}
			if (p[pi] == s[si]) {
				pi++;
				si++;
				continue;
			}
		}
	backtrack:
		if (!have_star)
			goto out;
		uint32_t cp;
		star_s += cp_at(s + star_s, ns - star_s, &cp);
		si = star_s;
		pi = star_p;
	}
	while (pi < np && p[pi] == '*')
		pi++;
	res = pi == np ? AG_PM_MATCH : AG_PM_NOMATCH;
out:
	free(pn);
	free(sn);
	return res;
}

enum ag_pm_result ag_pm_match(const char *pattern, const char *path)
{
	return ag_pm_match_bounded(pattern, path, AG_PATHMATCH_MAX_STEPS);
}
