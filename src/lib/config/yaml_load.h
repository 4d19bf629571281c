/*
 * yaml_load.h: a strict YAML subset parsed with libyaml's event API into a
 * small node tree that keeps 1-based line and column for every node.
 *
 * Rejected (each with its reason token, see docs/config-errors.md):
 * anchors, aliases, explicit tags and %TAG directives, merge keys,
 * duplicate keys, non-string keys, multiple documents, empty documents,
 * nesting deeper than AG_CONFIG_MAX_DEPTH, more than AG_CONFIG_MAX_NODES
 * nodes and scalars over AG_CONFIG_MAX_SCALAR_BYTES. No alias is ever
 * expanded, so "billion laughs" documents cost nothing.
 *
 * Scalars keep their text and whether they were plain (unquoted); typing
 * by the YAML 1.2 core schema happens on demand (ag_ynode_resolve).
 */
#ifndef AG_YAML_LOAD_H
#define AG_YAML_LOAD_H

#include "lib/base/ag.h"

struct ag_error;

enum ag_ynode_kind { AG_Y_SCALAR, AG_Y_MAP, AG_Y_SEQ };

struct ag_ynode {
	enum ag_ynode_kind kind;
	unsigned line, column; /* 1-based start mark */
	/* scalar */
	char *str; /* NUL-terminated; may contain NUL bytes before len */
	size_t len;
	bool plain; /* unquoted, unfolded: subject to core-schema typing */
	/* map: keys[i] -> values[i]; seq: values[i] */
	struct ag_ynode **keys;
	struct ag_ynode **values;
	size_t n, alloc;
};

/* Core-schema type of a scalar. Quoted scalars are always strings. */
enum ag_ytype { AG_YT_NULL, AG_YT_BOOL, AG_YT_INT, AG_YT_FLOAT, AG_YT_STR };

struct ag_yvalue {
	enum ag_ytype type;
	bool b;
	int64_t i;	   /* AG_YT_INT (int_overflow false) */
	bool int_overflow; /* an integer literal outside int64 */
	double f;	   /* AG_YT_FLOAT (and AG_YT_INT as a double) */
};

/*
 * Parses `len` bytes. `display` is the file name used in errors. On
 * success *root is the document's root node (a mapping, sequence or
 * non-null scalar); free it with ag_ynode_free.
 */
int ag_yaml_load(const char *data, size_t len, const char *display, struct ag_ynode **root,
		 struct ag_error **err);
void ag_ynode_free(struct ag_ynode *n);

void ag_ynode_resolve(const struct ag_ynode *n, struct ag_yvalue *out);
/* A short name for error messages: "a string", "an integer", "a mapping"... */
const char *ag_ynode_type_name(const struct ag_ynode *n);
/* Looks up a mapping key (exact, byte-wise); NULL when absent. */
struct ag_ynode *ag_ynode_get(const struct ag_ynode *map, const char *key);

#endif
