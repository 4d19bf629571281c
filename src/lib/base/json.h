/*
 * json.h: small generic helpers over jansson values, for every module.
 */
#ifndef AG_JSON_H
#define AG_JSON_H

#include "lib/base/ag.h"

#include <jansson.h>

/* The value at a dotted object path ("HostConfig.Memory"), or NULL. */
const json_t *ag_json_path(const json_t *root, const char *dotted);
/* The same when it is a string, else NULL. */
const char *ag_json_path_str(const json_t *root, const char *dotted);
/* The string value of j, or dflt when j is not a string. */
const char *ag_json_str_or(const json_t *j, const char *dflt);
/* A new JSON string of s, or JSON null when s is NULL. */
json_t *ag_json_str_or_null(const char *s);
/* Zeroes the text of every string in v, its objects and arrays included
 * (at most AG_JSON_WIPE_DEPTH deep), before a tree that held secrets is
 * freed. Keys stay. NULL is fine. */
void ag_json_wipe_strings(json_t *v);

#endif
