/*
 * pathmatch.h: the upstream path pattern semantics (docs/checks.md).
 *
 * Both the pattern and the path are normalised first: every '\' becomes
 * '/', then leading and trailing '/' are stripped. Matching is then
 * Python fnmatch.fnmatchcase() over the whole path:
 *
 *   *        any sequence, including '/' (`src/` then `*` matches `src/a/b.c`)
 *   **       the same as `*` (`secrets/` then `**` matches `secrets/a/b.txt`)
 *   ?        exactly one character (one UTF-8 code point)
 *   [abc]    one character of the set; `a-z` ranges; `[!abc]` negates;
 *            a `]` first in the set is literal; a reversed range matches
 *            nothing; a `[` without a closing `]` is a literal `[`
 *   other    literal, case-sensitive (`Secrets/x` does not match `secrets/x`)
 *
 * There is no escape character (a '\' was already turned into '/').
 * The matcher is iterative with a single backtrack point (O(pattern x
 * path), never exponential) and counts its work: past max_steps it stops
 * and returns AG_PM_LIMIT, which callers treat as fail-closed.
 */
#ifndef AG_POLICY_PATHMATCH_H
#define AG_POLICY_PATHMATCH_H

#include "lib/base/ag.h"

enum ag_pm_result {
	AG_PM_LIMIT = -1, /* the work bound was hit: no answer, fail closed */
	AG_PM_NOMATCH = 0,
	AG_PM_MATCH = 1,
};

/* A new string: '\' -> '/', leading and trailing '/' stripped. */
char *ag_pm_normalise(const char *s);

/* Matches with AG_PATHMATCH_MAX_STEPS of work (bounds.h). */
enum ag_pm_result ag_pm_match(const char *pattern, const char *path);
/* Same, with an explicit work bound (tests). */
enum ag_pm_result ag_pm_match_bounded(const char *pattern, const char *path, uint64_t max_steps);

#endif
