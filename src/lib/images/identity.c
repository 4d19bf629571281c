/*
 * identity.c: canonical identities of a runtime image. Docker's image id
 * changes with every build (it hashes creation times); these do not.
 *
 *  rootfs digest   sha256 of canonical {"entries":[...]} over the exported
 *                  filesystem tar, members sorted by name, mtimes excluded
 *  runtime config  the fields of the image inspection that decide how the
 *                  image runs, canonicalised (sorted env, ports, volumes)
 *  identity        {schema, schema_version, image_role, base_image,
 *                  rootfs_digest, runtime_config_digest}, hashed canonically
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/sha256.h"
#include "lib/config/imageref.h"
#include "lib/evidence/canon.h"
#include "lib/workspace/snapshot.h"

#include <archive.h>
#include <archive_entry.h>
#include "lib/base/lazylib.h"
#include <sys/stat.h>

/* Canonical bounds for image documents: wide lists (rootfs entries), short
 * strings, a large total (a rootfs listing is ~200 bytes per member). */
static const struct ag_canon_bounds images_bounds = {
    AG_IMAGES_MANIFEST_DEPTH_MAX, AG_IMAGES_ROOTFS_MAX_ENTRIES, AG_IMAGES_ROOTFS_NAME_MAX + 64,
    1000000000000000LL, 256u << 20};

/* jansson writes \u escapes with upper-case hex, Python's json (the earlier
 * implementation, whose manifests we read) with lower-case: use Python's. */
static void lower_escapes(char *s)
{
	for (char *p = s; *p; p++) {
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u')
			for (int i = 1; i <= 4 && p[i]; i++)
				if (p[i] >= 'A' && p[i] <= 'F')
					p[i] = (char)(p[i] - 'A' + 'a');
		if (!*p)
			break;
	}
}

int ag_images_canon_dump(const json_t *v, char **out, size_t *len, struct ag_error **err)
{
	if (ag_canon_dump(v, &images_bounds, out, len, err) < 0)
		return -1;
	lower_escapes(*out);
	return 0;
}

int ag_canon_sha256(const json_t *v, char hex[65], struct ag_error **err)
{
	_cleanup_free_ char *s = NULL;
	size_t n = 0;
	if (ag_images_canon_dump(v, &s, &n, err) < 0)
		return -1;
	ag_sha256_hex(s, n, hex);
	return 0;
}

/* ---- rootfs digest ---- */

struct member {
	char *name;
	const char *type;
	unsigned mode;
	long long uid, gid;
	char *linkname;
	long long size;
	char sha[AG_SHA256_HEX_LEN + 1];
};

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->name, ((const struct member *)b)->name);
}

static const char *type_name(struct archive_entry *e)
{
	if (archive_entry_hardlink_utf8(e))
		return "hardlink";
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return "file";
	case AE_IFDIR:
		return "directory";
	case AE_IFLNK:
		return "symlink";
	case AE_IFCHR:
		return "char";
	case AE_IFBLK:
		return "block";
	case AE_IFIFO:
		return "fifo";
	default:
		return "other";
	}
}

/* "./a/b/" -> "a/b"; NULL when nothing is left (the root itself). */
static char *norm_name(const char *s)
{
	while (s[0] == '.' && s[1] == '/')
		s += 2;
	while (*s == '/')
		s++;
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		n--;
	if (!n || (n == 1 && s[0] == '.'))
		return NULL;
	return ag_xstrndup(s, n);
}

static bool name_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return strlen(s) <= AG_IMAGES_ROOTFS_NAME_MAX;
}

static void members_free(struct member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].linkname);
	}
	free(m);
}

static int read_members(struct archive *a, struct member **out, size_t *count,
			struct ag_error **err)
{
	struct member *m = NULL;
	size_t n = 0, cap = 0;
	unsigned long long hashed = 0;
	struct archive_entry *e;
	int r;
	/* ARCHIVE_WARN: a name libarchive cannot convert to the C locale; the
	 * UTF-8 spelling below is what the digest uses anyway. */
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *raw = archive_entry_pathname_utf8(e);
		if (!raw || !name_ok(raw)) {
			members_free(m, n);
			return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.name",
				      "an exported member has no name, a control character or "
				      "an overlong name");
		}
		char *name = norm_name(raw);
		if (!name)
			continue; /* the root directory itself */
		if (n == AG_IMAGES_ROOTFS_MAX_ENTRIES) {
			free(name);
			members_free(m, n);
			return ag_err(err, AG_E_LIMIT, 0, "images.rootfs.entries",
				      "the exported filesystem has more than %d members",
				      AG_IMAGES_ROOTFS_MAX_ENTRIES);
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			m = ag_xrealloc(m, cap * sizeof(*m));
		}
		struct member *x = &m[n++];
		memset(x, 0, sizeof(*x));
		x->name = name;
		x->type = type_name(e);
		x->mode = (unsigned)(archive_entry_perm(e) & 07777);
		x->uid = (long long)archive_entry_uid(e);
		x->gid = (long long)archive_entry_gid(e);
		const char *ln = archive_entry_hardlink_utf8(e);
		if (!ln)
			ln = archive_entry_symlink_utf8(e);
		x->linkname = ag_xstrdup(ln ? ln : "");
		if (!name_ok(x->linkname)) {
			members_free(m, n);
			return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.name",
				      "an exported link target has a control character or is "
				      "overlong");
		}
		if (strcmp(x->type, "file") != 0)
			continue;
		struct ag_sha256 *h = ag_sha256_new();
		const void *buf;
		size_t sz;
		la_int64_t off;
		long long size = 0;
		int dr;
		while ((dr = archive_read_data_block(a, &buf, &sz, &off)) == ARCHIVE_OK) {
			size += (long long)sz;
			hashed += sz;
			if (hashed > AG_IMAGES_ROOTFS_MAX_BYTES)
				break;
			ag_sha256_update(h, buf, sz);
		}
		ag_sha256_final_hex(h, x->sha);
		if (hashed > AG_IMAGES_ROOTFS_MAX_BYTES) {
			members_free(m, n);
			return ag_err(err, AG_E_LIMIT, 0, "images.rootfs.bytes",
				      "the exported filesystem holds more than %llu bytes",
				      (unsigned long long)AG_IMAGES_ROOTFS_MAX_BYTES);
		}
		if (dr != ARCHIVE_EOF) {
			members_free(m, n);
			return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.read",
				      "an exported member could not be read whole");
		}
		x->size = size;
	}
	if (r != ARCHIVE_EOF) {
		members_free(m, n);
		return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.read",
			      "the exported filesystem is not a readable tar archive");
	}
	*out = m;
	*count = n;
	return 0;
}

int ag_rootfs_digest_file(const char *tar_path, char **digest, size_t *entries,
			  struct ag_error **err)
{
	_cleanup_close_ int fd = open(tar_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ag_err(err, AG_E_IO, fd < 0 ? errno : 0, "images.rootfs.open",
			      "cannot open the filesystem tar as a regular file");
	return ag_rootfs_digest_fd(fd, digest, entries, err);
}

int ag_rootfs_digest_fd(int fd, char **digest, size_t *entries, struct ag_error **err)
{
	if (ag_lazy_archive_load(err) < 0)
		return -1;
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	archive_read_support_filter_none(a);
	if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		archive_read_free(a);
		return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.read",
			      "the filesystem tar is not a readable tar archive");
	}
	struct member *m = NULL;
	size_t n = 0;
	int r = read_members(a, &m, &n, err);
	archive_read_free(a);
	if (r < 0)
		return -1;
	if (n == 0) {
		free(m);
		return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.empty",
			      "the exported filesystem is empty");
	}
	qsort(m, n, sizeof(*m), member_cmp);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(m[i].name, m[i - 1].name) == 0) {
			json_decref(arr);
			members_free(m, n);
			return ag_err(err, AG_E_UNVERIFIED, 0, "images.rootfs.duplicate",
				      "the exported filesystem names one member twice");
		}
		bool file = strcmp(m[i].type, "file") == 0;
		json_array_append_new(
		    arr,
		    json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:I, s:s}", "name", m[i].name, "type",
			      m[i].type, "mode", (json_int_t)m[i].mode, "uid", (json_int_t)m[i].uid,
			      "gid", (json_int_t)m[i].gid, "linkname", m[i].linkname, "size",
			      (json_int_t)(file ? m[i].size : 0), "sha256", file ? m[i].sha : ""));
	}
	members_free(m, n);
	json_t *doc = json_pack("{s:o}", "entries", arr);
	char hex[65];
	r = ag_canon_sha256(doc, hex, err);
	json_decref(doc);
	if (r < 0)
		return -1;
	*digest = ag_xasprintf("sha256:%s", hex);
	if (entries)
		*entries = n;
	return 0;
}

/* ---- runtime config ---- */

static int cfg_err(struct ag_error **err, const char *reason, const char *key, const char *msg)
{
	return ag_err_at(err, AG_E_UNVERIFIED, reason, NULL, 0, 0, key, "%s", msg);
}

static bool clean_string(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* An array of strings (or null, kept null); bounded. */
static int string_list(json_t *v, const char *key, json_t **out, struct ag_error **err)
{
	if (!v || json_is_null(v)) {
		*out = json_null();
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) > AG_IMAGES_CONFIG_LIST_MAX)
		return cfg_err(err, "images.inspect.field", key, "not a bounded list of strings");
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x) if (!json_is_string(x)) return cfg_err(
	    err, "images.inspect.field", key, "not a list of strings");
	*out = json_deep_copy(v);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *sorted_strings(const char **v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_str);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* "/a//b/./c/" -> "/a/b/c"; NULL for relative, "..", or control chars. */
static char *norm_volume(const char *s)
{
	if (s[0] != '/' || !clean_string(s))
		return NULL;
	char *out = ag_xmalloc(strlen(s) + 2);
	size_t o = 0;
	const char *p = s;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *q = strchr(p, '/');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			free(out);
			return NULL;
		}
		if (!(n == 1 && p[0] == '.')) {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static json_t *one_image(const char *json, size_t len, struct ag_error **err)
{
	json_error_t je;
	json_t *arr = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(arr)) {
		json_decref(arr);
		cfg_err(err, "images.inspect.json", NULL, "image inspection is not a JSON list");
		return NULL;
	}
	if (json_array_size(arr) != 1 || !json_is_object(json_array_get(arr, 0))) {
		json_decref(arr);
		cfg_err(err, "images.inspect.count", NULL,
			"image inspection does not describe exactly one image");
		return NULL;
	}
	json_t *img = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return img;
}

static int keys_sorted(json_t *obj, const char *key, bool volumes, json_t **out,
		       struct ag_error **err)
{
	if (!obj || json_is_null(obj)) {
		*out = json_array();
		return 0;
	}
	if (!json_is_object(obj) || json_object_size(obj) > AG_IMAGES_CONFIG_LIST_MAX)
		return cfg_err(err, "images.inspect.field", key, "not a bounded map");
	size_t n = json_object_size(obj), i = 0;
	const char **v = ag_xcalloc(n ? n : 1, sizeof(*v));
	char **owned = ag_xcalloc(n ? n : 1, sizeof(*owned));
	const char *k;
	json_t *x;
	int rc = 0;
	json_object_foreach(obj, k, x)
	{
		if (volumes) {
			owned[i] = norm_volume(k);
			if (!owned[i]) {
				rc = cfg_err(err, "images.inspect.volume", key,
					     "a volume is not an absolute clean path");
				break;
			}
			v[i] = owned[i];
		} else {
			if (!clean_string(k)) {
				rc = cfg_err(err, "images.inspect.field", key,
					     "a key holds a control character");
				break;
			}
			v[i] = k;
		}
		i++;
	}
	if (rc == 0)
		*out = sorted_strings(v, n);
	for (size_t j = 0; j < n; j++)
		free(owned[j]);
	free(owned);
	free(v);
	return rc;
}

static int config_object(json_t *img, json_t **config, struct ag_error **err)
{
	json_t *c = json_object_get(img, "Config");
	json_t *rootfs = json_object_get(img, "RootFS");
	const char *arch = json_string_value(json_object_get(img, "Architecture"));
	const char *os = json_string_value(json_object_get(img, "Os"));
	if (!json_is_object(c) || !json_is_object(rootfs) || !arch || !os)
		return cfg_err(err, "images.inspect.field", NULL,
			       "image inspection lacks Config, RootFS, Architecture or Os");
	const char *rtype = json_string_value(json_object_get(rootfs, "Type"));
	json_t *user = json_object_get(c, "User");
	json_t *wd = json_object_get(c, "WorkingDir");
	if (!rtype || (user && !json_is_string(user)) || (wd && !json_is_string(wd)))
		return cfg_err(err, "images.inspect.field", "Config",
			       "User, WorkingDir or RootFS.Type is not a string");
	json_t *ep = NULL, *cmd = NULL, *env = NULL, *ports = NULL, *vols = NULL;
	if (string_list(json_object_get(c, "Entrypoint"), "Config.Entrypoint", &ep, err) < 0)
		goto fail;
	if (string_list(json_object_get(c, "Cmd"), "Config.Cmd", &cmd, err) < 0)
		goto fail;
	json_t *rawenv = NULL;
	if (string_list(json_object_get(c, "Env"), "Config.Env", &rawenv, err) < 0)
		goto fail;
	{
		size_t n = json_is_array(rawenv) ? json_array_size(rawenv) : 0;
		const char **v = ag_xcalloc(n ? n : 1, sizeof(*v));
		for (size_t i = 0; i < n; i++)
			v[i] = json_string_value(json_array_get(rawenv, i));
		env = sorted_strings(v, n);
		free(v);
		json_decref(rawenv);
	}
	if (keys_sorted(json_object_get(c, "ExposedPorts"), "Config.ExposedPorts", false, &ports,
			err) < 0)
		goto fail;
	if (keys_sorted(json_object_get(c, "Volumes"), "Config.Volumes", true, &vols, err) < 0)
		goto fail;
	*config =
	    json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:o, s:o, s:s}", "architecture", arch,
		      "os", os, "user", user ? json_string_value(user) : "", "entrypoint", ep,
		      "cmd", cmd, "env", env, "working_dir", wd ? json_string_value(wd) : "",
		      "exposed_ports", ports, "volumes", vols, "rootfs_type", rtype);
	return 0;
fail:
	json_decref(ep);
	json_decref(cmd);
	json_decref(env);
	json_decref(ports);
	json_decref(vols);
	return -1;
}

int ag_runtime_config_from_inspect(const char *json, size_t len, json_t **config, char **digest,
				   struct ag_error **err)
{
	json_t *img = one_image(json, len, err);
	if (!img)
		return -1;
	json_t *c = NULL;
	int r = config_object(img, &c, err);
	json_decref(img);
	if (r < 0)
		return -1;
	char hex[65];
	if (ag_canon_sha256(c, hex, err) < 0) {
		json_decref(c);
		return -1;
	}
	*config = c;
	*digest = ag_xasprintf("sha256:%s", hex);
	return 0;
}

json_t *ag_image_identity_object(enum ag_image_role role, const char *base_image,
				 const char *rootfs_digest, const char *config_digest)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "schema", AG_IMAGES_IDENTITY_SCHEMA,
			 "schema_version", 1, "image_role", ag_image_role_name(role), "base_image",
			 base_image, "rootfs_digest", rootfs_digest, "runtime_config_digest",
			 config_digest);
}

void ag_image_identity_release(struct ag_image_identity *id)
{
	free(id->image_id);
	free(id->pinned_ref);
	free(id->base_image);
	free(id->builder_base);
	free(id->rootfs_digest);
	json_decref(id->runtime_config);
	free(id->runtime_config_digest);
	json_decref(id->identity);
	free(id->identity_digest);
	free(id->user);
	free(id->entrypoint);
	memset(id, 0, sizeof(*id));
}

static const char *label(json_t *img, const char *name)
{
	json_t *l = json_object_get(json_object_get(img, "Config"), "Labels");
	return json_is_object(l) ? json_string_value(json_object_get(l, name)) : NULL;
}

static int pinned_ref_ok(const char *s)
{
	if (!s)
		return -1;
	struct ag_image_ref r = {0};
	struct ag_error *e = NULL;
	int ok = ag_image_ref_parse(s, &r, &e) == 0 && ag_image_ref_pinned(&r) ? 0 : -1;
	ag_image_ref_release(&r);
	ag_error_free(e);
	return ok;
}

/* The base's layers must be the first layers of the image: it was built FROM it. */
static int check_base_prefix(struct ag_engine *cli, json_t *img, const char *base,
			     struct ag_error **err)
{
	_cleanup_free_ char *bj = NULL;
	size_t bl = 0;
	if (ag_images_engine_inspect(cli, base, &bj, &bl, err) < 0)
		return ag_err_wrap(err, "base image");
	json_t *b = one_image(bj, bl, err);
	if (!b)
		return -1;
	json_t *bl_layers = json_object_get(json_object_get(b, "RootFS"), "Layers");
	json_t *il = json_object_get(json_object_get(img, "RootFS"), "Layers");
	int rc = 0;
	if (!json_is_array(bl_layers) || !json_is_array(il) || !json_array_size(bl_layers) ||
	    json_array_size(bl_layers) > json_array_size(il))
		rc = -1;
	for (size_t i = 0; rc == 0 && i < json_array_size(bl_layers); i++)
		if (!json_equal(json_array_get(bl_layers, i), json_array_get(il, i)))
			rc = -1;
	json_decref(b);
	if (rc < 0)
		return cfg_err(err, "images.base.not_parent", AG_IMAGES_BASE_LABEL,
			       "the image was not built FROM its pinned base (layers differ)");
	return 0;
}

/* The export streams straight into the digest: nothing of the filesystem
 * is kept in memory or written to disk. The export container needs a
 * digest-pinned reference: the one given, else the image's RepoDigest. */
static int export_digest(struct ag_engine *cli, const char *image, struct ag_image_identity *out,
			 struct ag_error **err)
{
	const char *ref = pinned_ref_ok(image) == 0 ? image : out->pinned_ref;
	if (!ref)
		return ag_err(err, AG_E_UNVERIFIED, 0, "images.export.unpinned",
			      "the image has no registry digest to create its export container "
			      "from (push it, or name it as name@sha256:...)");
	unsigned uid = out->role == AG_ROLE_GATEWAY ? AG_IMAGES_GATEWAY_UID : AG_IMAGES_AGENT_UID;
	return ag_images_engine_export_digest(cli, ref, uid, &out->rootfs_digest,
					      &out->rootfs_entries, err);
}

int ag_image_identity_compute(struct ag_engine *cli, const char *image, enum ag_image_role role,
			      struct ag_image_identity *out, struct ag_error **err)
{
	memset(out, 0, sizeof(*out));
	out->role = role;
	_cleanup_free_ char *js = NULL;
	size_t jl = 0;
	if (ag_images_engine_inspect(cli, image, &js, &jl, err) < 0)
		return -1;
	json_t *img = one_image(js, jl, err);
	if (!img)
		return -1;
	int rc = -1;
	const char *id = json_string_value(json_object_get(img, "Id"));
	out->image_id = ag_xstrdup(id ? id : "");
	json_t *rd = json_object_get(img, "RepoDigests");
	if (json_is_array(rd) && json_array_size(rd) > 0 && json_is_string(json_array_get(rd, 0)))
		out->pinned_ref = ag_xstrdup(json_string_value(json_array_get(rd, 0)));
	if (ag_runtime_config_from_inspect(js, jl, &out->runtime_config,
					   &out->runtime_config_digest, err) < 0)
		goto out;
	json_t *rc_obj = out->runtime_config;
	const char *arch = json_string_value(json_object_get(rc_obj, "architecture"));
	const char *os = json_string_value(json_object_get(rc_obj, "os"));
	if (strcmp(arch, "amd64") != 0 || strcmp(os, "linux") != 0) {
		cfg_err(err, "images.role.platform", "Architecture",
			"the image is not linux/amd64");
		goto out;
	}
	unsigned want = role == AG_ROLE_GATEWAY ? AG_IMAGES_GATEWAY_UID : AG_IMAGES_AGENT_UID;
	char wuser[32];
	snprintf(wuser, sizeof(wuser), "%u:%u", want, want);
	out->user = ag_xstrdup(json_string_value(json_object_get(rc_obj, "user")));
	if (strcmp(out->user, wuser) != 0) {
		ag_err_at(err, AG_E_UNVERIFIED, "images.role.user", NULL, 0, 0, "Config.User",
			  "the %s image must run as %s", ag_image_role_name(role), wuser);
		goto out;
	}
	json_t *ep = json_object_get(rc_obj, "entrypoint");
	const char *want_ep =
	    role == AG_ROLE_GATEWAY ? AG_IMAGES_GATEWAY_ENTRYPOINT : AG_IMAGES_AGENT_ENTRYPOINT;
	const char *got_ep = json_is_array(ep) && json_array_size(ep) == 1
				 ? json_string_value(json_array_get(ep, 0))
				 : NULL;
	/* An agent image is Codex's or Claude Code's (the freeze manifest's
	 * agent section is Codex's: manifest.c checks that entrypoint). */
	if (role == AG_ROLE_AGENT && got_ep && strcmp(got_ep, AG_IMAGES_CLAUDE_ENTRYPOINT) == 0)
		want_ep = AG_IMAGES_CLAUDE_ENTRYPOINT;
	if (!got_ep || strcmp(got_ep, want_ep) != 0) {
		ag_err_at(err, AG_E_UNVERIFIED, "images.role.entrypoint", NULL, 0, 0,
			  "Config.Entrypoint", "the %s image's entrypoint must be exactly %s%s",
			  ag_image_role_name(role), want_ep,
			  role == AG_ROLE_AGENT ? " (or " AG_IMAGES_CLAUDE_ENTRYPOINT ")" : "");
		goto out;
	}
	out->entrypoint = ag_xstrdup(want_ep);
	const char *base = label(img, AG_IMAGES_BASE_LABEL);
	if (pinned_ref_ok(base) < 0) {
		cfg_err(err, "images.base.unpinned", AG_IMAGES_BASE_LABEL,
			"the image does not name a digest-pinned base (name@sha256:...)");
		goto out;
	}
	out->base_image = ag_xstrdup(base);
	const char *builder = label(img, AG_IMAGES_BUILDER_LABEL);
	if (builder) {
		if (pinned_ref_ok(builder) < 0) {
			cfg_err(err, "images.base.unpinned", AG_IMAGES_BUILDER_LABEL,
				"the builder base is not digest-pinned");
			goto out;
		}
		out->builder_base = ag_xstrdup(builder);
	}
	if (check_base_prefix(cli, img, base, err) < 0)
		goto out;

	if (export_digest(cli, image, out, err) < 0)
		goto out;
	out->identity = ag_image_identity_object(role, out->base_image, out->rootfs_digest,
						 out->runtime_config_digest);
	char hex[65];
	if (ag_canon_sha256(out->identity, hex, err) < 0)
		goto out;
	out->identity_digest = ag_xasprintf("sha256:%s", hex);
	rc = 0;
out:
	json_decref(img);
	return rc;
}

/* ---- build context digest ---- */

/* The workspace snapshot does the bounded, fd-relative, sorted walk (and
 * skips .git at the root in prepare mode); here only regular files count,
 * and a symlink in a build context is refused. */
int ag_context_digest(const char *dir, char hex[65], json_t **files, struct ag_error **err)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ag_err(err, AG_E_IO, errno, "images.context.open",
			      "cannot open a build context directory");
	struct ag_ws_snapshot_opts o = {.mode = AG_WS_PREPARE, .dest_rootfd = -1, .text_fd = -1};
	_cleanup_snapshot_ struct ag_ws_snapshot snap = {0};
	if (ag_ws_snapshot_take(dfd, &o, &snap, err) < 0)
		return ag_err_wrap(err, "build context");
	json_t *arr = json_array();
	for (size_t i = 0; i < snap.n; i++) {
		const struct ag_ws_entry *e = &snap.v[i];
		if (e->kind == AG_WS_DIR)
			continue;
		if (e->kind != AG_WS_FILE) {
			json_decref(arr);
			return ag_err(err, AG_E_UNSAFE_PATH, 0, "images.context.special",
				      "the build context holds a symbolic link");
		}
		char h[AG_SHA256_HEX_LEN + 1];
		ag_ws_sha_hex(e->sha, h);
		json_array_append_new(arr, json_pack("[s,s]", e->path, h));
	}
	int rc = ag_canon_sha256(arr, hex, err);
	if (rc == 0 && files)
		*files = json_incref(arr);
	json_decref(arr);
	return rc;
}
