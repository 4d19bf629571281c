/*
 * imageref.h: a strict Docker image reference parser.
 *
 *   [registry[:port]/]path[/path...][:tag][@sha256:<64 lowercase hex>]
 *
 * The first component is a registry when it contains '.' or ':' or is
 * "localhost". Path components are lowercase alphanumerics joined by '.',
 * '_', '__' or runs of '-'. Anything that could be read as a command-line
 * option (leading '-') or carries whitespace/control bytes is rejected
 * before parsing.
 */
#ifndef AG_IMAGEREF_H
#define AG_IMAGEREF_H

#include "lib/base/ag.h"

struct ag_error;

struct ag_image_ref {
	char *registry;	  /* "127.0.0.1:5000", or NULL */
	char *repository; /* registry + path, as Docker prints it in RepoDigests */
	char *tag;	  /* NULL when absent */
	char *digest;	  /* "sha256:<64 hex>", or NULL */
};

/*
 * Parses `s`. Errors: config.image.option_like, config.image.control,
 * config.image.invalid (all AG_E_CONFIG, no location: the caller adds it).
 */
int ag_image_ref_parse(const char *s, struct ag_image_ref *out, struct ag_error **err);
void ag_image_ref_release(struct ag_image_ref *r);
static inline bool ag_image_ref_pinned(const struct ag_image_ref *r)
{
	return r->digest != NULL;
}

#endif
