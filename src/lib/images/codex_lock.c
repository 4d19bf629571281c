/*
 * codex_lock.c: the agent input checks (Codex, Claude Code). A lock must
 * hold exactly the agent's two reviewed entries (its package and its
 * linux-x64 platform package), and the tarballs npm installed from must hash
 * to the lock and to the constants compiled into AgentGuard; anything else
 * stops the build before a file reaches the image.
 */
#include "lib/base/ag.h"
#include "lib/images/images.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/fsx.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#define REGISTRY_PREFIX "https://registry.npmjs.org/@openai/codex/-/"
#define CLAUDE_REGISTRY "https://registry.npmjs.org/@anthropic-ai/"

const char *ag_image_role_name(enum ag_image_role r)
{
	return r == AG_ROLE_GATEWAY ? "gateway" : "agent";
}

int ag_image_role_parse(const char *s, enum ag_image_role *out)
{
	if (strcmp(s, "gateway") == 0)
		*out = AG_ROLE_GATEWAY;
	else if (strcmp(s, "agent") == 0)
		*out = AG_ROLE_AGENT;
	else
		return -1;
	return 0;
}

const struct ag_npm_pins ag_codex_pins = {
    .agent = "codex",
    .package = AG_CODEX_PACKAGE,
    .version = AG_CODEX_VERSION,
    .entries = {{AG_CODEX_LOCK_KEY, AG_CODEX_VERSION, AG_CODEX_INTEGRITY,
		 REGISTRY_PREFIX "codex-" AG_CODEX_VERSION ".tgz"},
		{AG_CODEX_LINUX_X64_LOCK_KEY, AG_CODEX_LINUX_X64_VERSION,
		 AG_CODEX_LINUX_X64_INTEGRITY,
		 REGISTRY_PREFIX "codex-" AG_CODEX_LINUX_X64_VERSION ".tgz"}},
};

const struct ag_npm_pins ag_claude_code_pins = {
    .agent = "claude-code",
    .package = AG_CLAUDE_CODE_PACKAGE,
    .version = AG_CLAUDE_CODE_VERSION,
    .entries = {{AG_CLAUDE_CODE_LOCK_KEY, AG_CLAUDE_CODE_VERSION, AG_CLAUDE_CODE_INTEGRITY,
		 CLAUDE_REGISTRY "claude-code/-/claude-code-" AG_CLAUDE_CODE_VERSION ".tgz"},
		{AG_CLAUDE_CODE_LINUX_X64_LOCK_KEY, AG_CLAUDE_CODE_VERSION,
		 AG_CLAUDE_CODE_LINUX_X64_INTEGRITY,
		 CLAUDE_REGISTRY
		 "claude-code-linux-x64/-/claude-code-linux-x64-" AG_CLAUDE_CODE_VERSION ".tgz"}},
    /* Its install script would only link the platform binary into bin/;
     * npm runs with --ignore-scripts and the image links it itself. */
    .install_script_ignored = true,
};

const struct ag_npm_pins *ag_npm_pins_for(const char *agent)
{
	if (strcmp(agent, ag_codex_pins.agent) == 0)
		return &ag_codex_pins;
	if (strcmp(agent, ag_claude_code_pins.agent) == 0)
		return &ag_claude_code_pins;
	return NULL;
}

static int lock_err(struct ag_error **err, const char *reason, const char *key, const char *fmt,
		    const char *what)
{
	return ag_err_at(err, AG_E_UNVERIFIED, reason, NULL, 0, 0, key, fmt, what);
}

static const char *str_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ag_npm_lock_check(const struct ag_npm_pins *pins, const char *lock, size_t len,
		      struct ag_error **err)
{
	json_error_t je;
	json_t *root = json_loadb(lock, len, JSON_REJECT_DUPLICATES, &je);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return lock_err(err, "images.lock.json", NULL, "%s",
				"package-lock.json is not one JSON object");
	}
	int rc = -1;
	json_t *lv = json_object_get(root, "lockfileVersion");
	json_t *pk = json_object_get(root, "packages");
	if (!json_is_integer(lv) || json_integer_value(lv) != 3 || !json_is_object(pk)) {
		lock_err(err, "images.lock.shape", NULL, "%s",
			 "package-lock.json must be lockfileVersion 3 with a packages map");
		goto out;
	}
	if (json_object_get(root, "dependencies")) {
		lock_err(err, "images.lock.shape", "dependencies", "%s",
			 "package-lock.json must not carry a v1 dependencies tree");
		goto out;
	}
	json_t *rootpkg = json_object_get(pk, "");
	json_t *deps = rootpkg ? json_object_get(rootpkg, "dependencies") : NULL;
	if (!json_is_object(rootpkg) || !json_is_object(deps) || json_object_size(deps) != 1 ||
	    !json_is_string(json_object_get(deps, pins->package)) ||
	    strcmp(json_string_value(json_object_get(deps, pins->package)), pins->version) != 0 ||
	    json_object_get(rootpkg, "devDependencies") ||
	    json_object_get(rootpkg, "optionalDependencies")) {
		_cleanup_free_ char *want = ag_xasprintf("%s %s", pins->package, pins->version);
		lock_err(err, "images.lock.shape", "packages[\"\"].dependencies",
			 "the root package must depend on exactly %s", want);
		goto out;
	}
	const char *k;
	json_t *v;
	json_object_foreach(pk, k, v)
	{
		if (!*k)
			continue;
		bool known = false;
		for (size_t i = 0; i < AG_ARRAY_SIZE(pins->entries); i++)
			known |= strcmp(k, pins->entries[i].key) == 0;
		if (!known) {
			lock_err(err, "images.lock.extra_entry", k,
				 "package-lock.json has an entry that is not pinned: %s", k);
			goto out;
		}
	}
	for (size_t i = 0; i < AG_ARRAY_SIZE(pins->entries); i++) {
		const struct ag_npm_pin *p = &pins->entries[i];
		json_t *e = json_object_get(pk, p->key);
		if (!json_is_object(e)) {
			lock_err(err, "images.lock.missing_entry", p->key,
				 "package-lock.json lacks the pinned entry %s", p->key);
			goto out;
		}
		const char *ver = str_field(e, "version");
		if (!ver || strcmp(ver, p->version) != 0) {
			lock_err(err, "images.lock.version", p->key,
				 "%s: version is not the pinned one", p->key);
			goto out;
		}
		const char *integ = str_field(e, "integrity");
		if (!integ || strcmp(integ, p->integrity) != 0) {
			lock_err(err, "images.lock.integrity", p->key,
				 "%s: integrity is not the pinned one", p->key);
			goto out;
		}
		const char *res = str_field(e, "resolved");
		if (!res || strcmp(res, p->resolved) != 0) {
			lock_err(err, "images.lock.resolved", p->key,
				 "%s: resolved URL is not the registry tarball", p->key);
			goto out;
		}
		bool script = json_object_get(e, "hasInstallScript") != NULL;
		if (json_object_get(e, "dependencies") || json_object_get(e, "link") ||
		    (script && !(i == 0 && pins->install_script_ignored))) {
			lock_err(err, "images.lock.shape", p->key,
				 "%s: dependencies, links or install scripts are not allowed",
				 p->key);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int ag_codex_lock_check(const char *lock, size_t len, struct ag_error **err)
{
	return ag_npm_lock_check(&ag_codex_pins, lock, len, err);
}

int ag_sri_sha512_file(const char *path, char **out, struct ag_error **err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ag_err(err, AG_E_IO, errno, "images.tarball.open",
			      "cannot open a package tarball: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ag_err(err, AG_E_UNSAFE_PATH, 0, "images.tarball.open",
			      "a package tarball is not a regular file");
	if ((unsigned long long)st.st_size > AG_IMAGES_TARBALL_MAX_BYTES)
		return ag_err(err, AG_E_LIMIT, 0, "images.tarball.size",
			      "a package tarball is larger than %llu bytes",
			      (unsigned long long)AG_IMAGES_TARBALL_MAX_BYTES);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha512(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return ag_err(err, AG_E_INTERNAL, 0, "images.tarball.hash", "SHA-512 unavailable");
	}
	static unsigned char chunk[1 << 16];
	unsigned long long total = 0;
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			EVP_MD_CTX_free(ctx);
			return ag_err(err, AG_E_IO, errno, "images.tarball.read",
				      "cannot read a package tarball");
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
		if (total > AG_IMAGES_TARBALL_MAX_BYTES) {
			EVP_MD_CTX_free(ctx);
			return ag_err(err, AG_E_LIMIT, 0, "images.tarball.size",
				      "a package tarball grew past its bound while read");
		}
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
	int bl = EVP_EncodeBlock(b64, md, (int)mdlen);
	*out = ag_xasprintf("sha512-%.*s", bl, (const char *)b64);
	return 0;
}

int ag_npm_lock_read(const struct ag_npm_pins *pins, const char *lock_path, char **lock,
		     size_t *len, struct ag_error **err)
{
	static const struct ag_read_reasons why = {"images.lock.open", "images.lock.open",
						   "images.lock.open", "images.lock.size"};
	*lock = NULL;
	if (ag_read_file_at(AT_FDCWD, lock_path, "package-lock.json", AG_IMAGES_LOCK_MAX_BYTES,
			    &why, lock, len, err) < 0)
		return -1;
	if (ag_npm_lock_check(pins, *lock, *len, err) < 0) {
		free(*lock);
		*lock = NULL;
		return -1;
	}
	return 0;
}

int ag_npm_inputs_verify(const struct ag_npm_pins *pins, const char *lock_path,
			 const char *package_tgz, const char *platform_tgz, struct ag_error **err)
{
	_cleanup_free_ char *lock = NULL;
	size_t len = 0;
	if (ag_npm_lock_read(pins, lock_path, &lock, &len, err) < 0)
		return -1;
	/* Each tarball against the lock's integrity AND the compiled-in pin
	 * (equal once the lock check passed; compared both ways anyway). */
	json_t *root = json_loadb(lock, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *pk = json_object_get(root, "packages");
	const char *paths[2] = {package_tgz, platform_tgz};
	for (size_t i = 0; i < 2; i++) {
		const struct ag_npm_pin *p = &pins->entries[i];
		const char *locked = str_field(json_object_get(pk, p->key), "integrity");
		_cleanup_free_ char *sri = NULL;
		if (ag_sri_sha512_file(paths[i], &sri, err) < 0) {
			json_decref(root);
			return ag_err_wrap(err, "%s", p->key);
		}
		if (!locked || strcmp(sri, locked) != 0 || strcmp(sri, p->integrity) != 0) {
			json_decref(root);
			return ag_err_at(err, AG_E_UNVERIFIED, "images.tarball.mismatch", NULL, 0,
					 0, p->key,
					 "the tarball used for %s does not hash to the integrity "
					 "in the lock and pinned in AgentGuard",
					 p->key);
		}
	}
	json_decref(root);
	return 0;
}
