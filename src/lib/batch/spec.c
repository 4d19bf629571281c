/*
 * spec.c: the batch file, read strictly (the config's YAML loader: no
 * aliases, no duplicate keys, bounded), into entries and the expanded,
 * ordered trial list. JSON is read by the same loader (it is YAML).
 */
#include "lib/batch/batch.h"
#include "lib/base/error.h"
#include "lib/base/bounds.h"
#include "lib/base/fsx.h"
#include "lib/base/sha256.h"
#include "lib/config/config.h"
#include "lib/config/yaml_load.h"

#include <jansson.h>

#include <libgen.h>
#include <limits.h>

#define BAD(node, key, reason, ...)                                                                \
	ag_err_at(err, AG_E_CONFIG, reason, display, (node) ? (node)->line : 0,                    \
		  (node) ? (node)->column : 0, key, __VA_ARGS__)

bool ag_batch_name_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n < 1 || n > max || strstr(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool an =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!an && (i == 0 || !strchr("._-", c)))
			return false;
	}
	return true;
}

bool ag_batch_in_shard(size_t i, unsigned k, unsigned n)
{
	return n == 0 || i % n == (size_t)(k - 1);
}

int ag_batch_shard_parse(const char *s, unsigned *k, unsigned *n, struct ag_error **err)
{
	unsigned a = 0, b = 0;
	int used = 0;
	if (!s || sscanf(s, "%5u/%5u%n", &a, &b, &used) != 2 || (size_t)used != strlen(s) ||
	    !strchr("123456789", s[0]) || a < 1 || b < 1 || a > b || b > AG_BATCH_TRIALS_MAX)
		return ag_err(err, AG_E_USAGE, 0, "batch.shard",
			      "--shard must be K/N with 1 <= K <= N <= %d", AG_BATCH_TRIALS_MAX);
	*k = a;
	*n = b;
	return 0;
}

static void entry_release(struct ag_batch_entry *e)
{
	free(e->name);
	free(e->config);
	free(e->repo);
	free(e->policy);
	free(e->gateway_image);
	free(e->subnet_pool);
	for (size_t i = 0; i < e->argc; i++)
		free(e->argv[i]);
	free(e->argv);
}

void ag_batch_free(struct ag_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_entries; i++)
		entry_release(&b->entries[i]);
	free(b->entries);
	for (size_t i = 0; i < b->n_trials; i++)
		free(b->trials[i].id);
	free(b->trials);
	free(b->file);
	free(b);
}

/* A string scalar (quoted or plain, but not null/bool/number when plain). */
static const char *str_of(const struct ag_ynode *n)
{
	if (!n || n->kind != AG_Y_SCALAR || strlen(n->str) != n->len)
		return NULL;
	struct ag_yvalue v;
	ag_ynode_resolve(n, &v);
	return v.type == AG_YT_STR ? n->str : NULL;
}

static int int_of(const struct ag_ynode *n, int64_t lo, int64_t hi, int64_t *out)
{
	if (!n || n->kind != AG_Y_SCALAR)
		return -1;
	struct ag_yvalue v;
	ag_ynode_resolve(n, &v);
	if (v.type != AG_YT_INT || v.int_overflow || v.i < lo || v.i > hi)
		return -1;
	*out = v.i;
	return 0;
}

/* PATH beside the batch file (dir "." keeps it as written); never one that
 * starts with '-' (it is passed to a child as an argument). */
static char *beside(const char *dir, const char *path)
{
	if (path[0] == '/')
		return ag_xstrdup(path);
	if (strcmp(dir, ".") == 0)
		return path[0] == '-' ? ag_xasprintf("./%s", path) : ag_xstrdup(path);
	return ag_xasprintf("%s/%s", dir, path);
}

static const char *const entry_keys[] = {"name", "mode",    "config", "argv",	      "repetitions",
					 "repo", "timeout", "policy", "gateway_image"};

static int parse_entry(const struct ag_ynode *m, size_t idx, const char *dir, const char *display,
		       struct ag_batch_entry *e, struct ag_error **err)
{
	char key[64];
	snprintf(key, sizeof(key), "trials[%zu]", idx);
	if (m->kind != AG_Y_MAP)
		return BAD(m, key, "batch.file.type", "a trial must be a mapping, not %s",
			   ag_ynode_type_name(m));
	e->line = m->line;
	for (size_t i = 0; i < m->n; i++) {
		bool known = false;
		for (size_t k = 0; k < AG_ARRAY_SIZE(entry_keys); k++)
			known |= strcmp(m->keys[i]->str, entry_keys[k]) == 0;
		if (!known) {
			char *kk = ag_xasprintf("%s.%.64s", key, m->keys[i]->str);
			int rc = BAD(m->keys[i], kk, "batch.file.unknown_key",
				     "unknown key (known: name, mode, config, argv, repetitions, "
				     "repo, timeout, policy, gateway_image)");
			free(kk);
			return rc;
		}
	}
	char k2[96];
#define FIELD(name) (snprintf(k2, sizeof(k2), "%s.%s", key, name), k2)
	const struct ag_ynode *n = ag_ynode_get(m, "name");
	const char *s = str_of(n);
	if (!s)
		return BAD(n ? n : m, FIELD("name"), "batch.file.name",
			   n ? "name must be a string" : "name is required");
	if (!ag_batch_name_ok(s, AG_BATCH_NAME_MAX) || strchr(s, '.'))
		return BAD(n, FIELD("name"), "batch.file.name",
			   "name must be 1..%d of A-Z a-z 0-9 _ - (starting with a letter or "
			   "digit; no '.', which separates the repetition)",
			   AG_BATCH_NAME_MAX);
	e->name = ag_xstrdup(s);
	n = ag_ynode_get(m, "mode");
	e->mode = AG_BATCH_CONTAINED;
	if (n) {
		s = str_of(n);
		if (s && strcmp(s, "study") == 0)
			e->mode = AG_BATCH_STUDY;
		else if (!s || strcmp(s, "contained") != 0)
			return BAD(n, FIELD("mode"), "batch.file.mode",
				   "mode must be contained or study");
	}
	n = ag_ynode_get(m, "config");
	s = str_of(n);
	if (!s || !*s || strlen(s) > PATH_MAX / 2)
		return BAD(n ? n : m, FIELD("config"), "batch.file.config",
			   n ? "config must be a non-empty path" : "config is required");
	e->config = beside(dir, s);
	n = ag_ynode_get(m, "argv");
	if (!n || n->kind != AG_Y_SEQ || n->n < 1 || n->n > AG_BATCH_ARGV_MAX)
		return BAD(n ? n : m, FIELD("argv"), "batch.file.argv",
			   "argv must be a list of 1..%d strings (the program first)",
			   AG_BATCH_ARGV_MAX);
	e->argv = ag_xcalloc(n->n + 1, sizeof(*e->argv));
	for (size_t i = 0; i < n->n; i++) {
		const struct ag_ynode *a = n->values[i];
		/* argv words are taken as written: a plain 1 is the string "1" */
		if (a->kind != AG_Y_SCALAR || strlen(a->str) != a->len ||
		    a->len > AG_BATCH_ARG_MAX_BYTES) {
			char *kk = ag_xasprintf("%s.argv[%zu]", key, i);
			int rc = BAD(a, kk, "batch.file.argv",
				     "each argv word must be a string of at most %d bytes",
				     AG_BATCH_ARG_MAX_BYTES);
			free(kk);
			return rc;
		}
		e->argv[e->argc++] = ag_xstrdup(a->str);
	}
	if (!e->argv[0][0])
		return BAD(n, FIELD("argv"), "batch.file.argv", "argv[0] must not be empty");
	int64_t v = 1;
	n = ag_ynode_get(m, "repetitions");
	if (n && int_of(n, 1, AG_BATCH_REPETITIONS_MAX, &v) < 0)
		return BAD(n, FIELD("repetitions"), "batch.file.repetitions",
			   "repetitions must be an integer 1..%d", AG_BATCH_REPETITIONS_MAX);
	e->repetitions = (unsigned)v;
	n = ag_ynode_get(m, "timeout");
	if (n && int_of(n, 1, 86400, &e->timeout) < 0)
		return BAD(n, FIELD("timeout"), "batch.file.timeout",
			   "timeout must be an integer number of seconds 1..86400");
	static const char *const paths[] = {"repo", "policy", "gateway_image"};
	char **dst[] = {&e->repo, &e->policy, &e->gateway_image};
	for (size_t i = 0; i < AG_ARRAY_SIZE(paths); i++) {
		n = ag_ynode_get(m, paths[i]);
		if (!n)
			continue;
		s = str_of(n);
		if (!s || !*s || strlen(s) > PATH_MAX / 2)
			return BAD(n, FIELD(paths[i]), "batch.file.type",
				   "%s must be a non-empty string", paths[i]);
		if (i > 0 && e->mode != AG_BATCH_STUDY)
			return BAD(n, FIELD(paths[i]), "batch.file.study_only",
				   "%s is for mode: study only", paths[i]);
		*dst[i] = i == 2 ? ag_xstrdup(s) : beside(dir, s);
	}
#undef FIELD
	return 0;
}

static int expand(struct ag_batch *b, const char *display, const struct ag_ynode *seq,
		  struct ag_error **err)
{
	size_t total = 0;
	for (size_t i = 0; i < b->n_entries; i++) {
		for (size_t j = 0; j < i; j++)
			if (strcmp(b->entries[i].name, b->entries[j].name) == 0) {
				char key[64];
				snprintf(key, sizeof(key), "trials[%zu].name", i);
				return BAD(seq->values[i], key, "batch.file.duplicate_name",
					   "name '%s' is used by trials[%zu] too",
					   b->entries[i].name, j);
			}
		total += b->entries[i].repetitions;
		if (total > AG_BATCH_TRIALS_MAX)
			return BAD(seq, "trials", "batch.file.too_many",
				   "the batch expands to more than %d trials", AG_BATCH_TRIALS_MAX);
	}
	b->trials = ag_xcalloc(total, sizeof(*b->trials));
	for (size_t i = 0; i < b->n_entries; i++) {
		const struct ag_batch_entry *e = &b->entries[i];
		for (unsigned r = 1; r <= e->repetitions; r++) {
			struct ag_batch_trial *t = &b->trials[b->n_trials];
			t->id = e->repetitions == 1 ? ag_xstrdup(e->name)
						    : ag_xasprintf("%s.%u", e->name, r);
			t->entry = i;
			t->rep = r;
			t->index = b->n_trials++;
		}
	}
	return 0;
}

static int load_doc(const char *data, size_t len, const char *display, const char *dir,
		    struct ag_batch **out, struct ag_error **err)
{
	struct ag_ynode *root = NULL;
	if (ag_yaml_load(data, len, display, &root, err) < 0)
		return -1;
	struct ag_batch *b = ag_xcalloc(1, sizeof(*b));
	b->file = ag_xstrdup(display);
	ag_sha256_hex(data, len, b->sha256);
	int rc = -1;
	if (root->kind != AG_Y_MAP) {
		BAD(root, "", "batch.file.type",
		    "a batch file is a mapping with version and trials");
		goto out;
	}
	for (size_t i = 0; i < root->n; i++)
		if (strcmp(root->keys[i]->str, "version") && strcmp(root->keys[i]->str, "trials")) {
			BAD(root->keys[i], root->keys[i]->str, "batch.file.unknown_key",
			    "unknown key (known: version, trials)");
			goto out;
		}
	const struct ag_ynode *v = ag_ynode_get(root, "version");
	int64_t ver = 0;
	if (!v || int_of(v, 1, 1, &ver) < 0) {
		BAD(v ? v : root, "version", "batch.file.version", "version: 1 is required");
		goto out;
	}
	const struct ag_ynode *seq = ag_ynode_get(root, "trials");
	if (!seq || seq->kind != AG_Y_SEQ || seq->n < 1 || seq->n > AG_BATCH_ENTRIES_MAX) {
		BAD(seq ? seq : root, "trials", "batch.file.trials",
		    "trials must be a list of 1..%d trial mappings", AG_BATCH_ENTRIES_MAX);
		goto out;
	}
	b->entries = ag_xcalloc(seq->n, sizeof(*b->entries));
	for (size_t i = 0; i < seq->n; i++) {
		b->n_entries++;
		if (parse_entry(seq->values[i], i, dir, display, &b->entries[i], err) < 0)
			goto out;
	}
	if (expand(b, display, seq, err) < 0)
		goto out;
	*out = b;
	b = NULL;
	rc = 0;
out:
	ag_batch_free(b);
	ag_ynode_free(root);
	return rc;
}

int ag_batch_load_mem(const char *data, size_t len, const char *display, struct ag_batch **out,
		      struct ag_error **err)
{
	return load_doc(data, len, display, ".", out, err);
}

int ag_batch_load(const char *path, struct ag_batch **out, struct ag_error **err)
{
	static const struct ag_read_reasons why = {"batch.file.symlink", "batch.file.not_regular",
						   "batch.file.read", "batch.file.too_large"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, path, path, AG_BATCH_FILE_MAX_BYTES, &why, &data, &len, err) <
	    0)
		return -1;
	_cleanup_free_ char *copy = ag_xstrdup(path);
	return load_doc(data, len, path, dirname(copy), out, err);
}

/* The entry's digest: every input of its runs, the config's bytes included. */
static int entry_digest(struct ag_batch_entry *e, struct ag_error **err)
{
	static const struct ag_read_reasons why = {"config.io.symlink", "config.io.not_regular",
						   "config.io.read", "config.io.too_large"};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (ag_read_file_at(AT_FDCWD, e->config, e->config, AG_CONFIG_MAX_BYTES, &why, &data, &len,
			    err) < 0)
		return -1;
	char csha[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(data, len, csha);
	json_t *argv = json_array();
	for (size_t i = 0; i < e->argc; i++)
		json_array_append_new(argv, json_stringn(e->argv[i], strlen(e->argv[i])));
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:s?, s:I, s:s?, s:s?}", "mode",
			      e->mode == AG_BATCH_STUDY ? "study" : "contained", "config",
			      e->config, "config_sha256", csha, "argv", argv, "repo", e->repo,
			      "timeout", (json_int_t)e->timeout, "policy", e->policy,
			      "gateway_image", e->gateway_image);
	char *dump = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(j);
	if (!dump)
		return ag_err(err, AG_E_INTERNAL, 0, "batch.digest", "an entry cannot be digested");
	ag_sha256_hex(dump, strlen(dump), e->digest);
	free(dump);
	return 0;
}

int ag_batch_load_configs(struct ag_batch *b, struct ag_error **err)
{
	for (size_t i = 0; i < b->n_entries; i++) {
		struct ag_batch_entry *e = &b->entries[i];
		struct ag_config *c = NULL;
		if (ag_config_load(e->config, &c, err) < 0)
			return ag_err_wrap(err, "batch trial '%s'", e->name);
		if (e->mode == AG_BATCH_STUDY && c->contained.runtime == AG_RUNTIME_GVISOR) {
			ag_config_free(c);
			return ag_err_at(err, AG_E_CONFIG, "batch.config.study_gvisor", e->config,
					 0, 0, "contained_execution.runtime",
					 "batch trial '%s': a study trial cannot run under gVisor "
					 "(study-egress run refuses it)",
					 e->name);
		}
		if (!c->contained.present) {
			ag_config_free(c);
			return ag_err_at(err, AG_E_CONFIG, "batch.config.not_contained", e->config,
					 0, 0, "contained_execution",
					 "batch trial '%s': the config has no contained_execution "
					 "block",
					 e->name);
		}
		e->memory_bytes = c->contained.memory_bytes;
		e->cpus = c->contained.cpu_limit;
		if (e->mode == AG_BATCH_STUDY) {
			e->subnet_pool =
			    c->study.subnet_pool ? ag_xstrdup(c->study.subnet_pool) : NULL;
			e->own_outbound = !c->study.outbound_network;
			e->fixed_subnet = c->study.study_subnet != NULL;
		}
		ag_config_free(c);
		if (entry_digest(e, err) < 0)
			return ag_err_wrap(err, "batch trial '%s'", e->name);
	}
	return 0;
}
