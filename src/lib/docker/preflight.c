#include "lib/base/ag.h"
#include "lib/docker/preflight.h"
#include "lib/docker/container.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/proc.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"
#include "lib/docker/docker_cli.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/inspect.h"
#include "lib/docker/probe_argv.h"
#include "lib/evidence/canon.h"

#include <inttypes.h>
#include <sys/random.h>

/* ---- result ---- */

void ag_preflight_result_init(struct ag_preflight_result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = AG_PF_UNAVAILABLE;
	r->claim = AG_PF_CLAIM_NONE;
	r->cleanup_status = "not_created";
}

void ag_preflight_result_release(struct ag_preflight_result *r)
{
	free(r->diagnostic);
	free(r->local_image_id);
	free(r->registry_digest);
	free(r->client_version);
	free(r->engine_version);
	free(r->api_version);
	free(r->os);
	free(r->arch);
	free(r->cgroup_driver);
	free(r->cgroup_version);
	free(r->runtime);
	ag_image_facts_release(&r->image);
	json_decref(r->evidence);
	ag_preflight_result_init(r);
}

void ag_preflight_result_releasep(struct ag_preflight_result *r)
{
	ag_preflight_result_release(r);
}

/*
 * Shape bounds of the preflight evidence (the canonical writer enforces
 * them): depth 8, 64 items per list/object, 512-byte strings (every
 * diagnostic is cut to AG_PF_DIAGNOSTIC_MAX_BYTES), |int| <= 10^12 (16 GiB
 * of memory is 1.7e10), AG_PF_EVIDENCE_MAX_BYTES serialized.
 */
static const struct ag_canon_bounds pf_bounds = {
    .max_depth = 8,
    .max_items = 64,
    .max_string = AG_PF_DIAGNOSTIC_MAX_BYTES,
    .max_abs_int = 1000000000000LL,
    .max_total = AG_PF_EVIDENCE_MAX_BYTES,
};

_Static_assert(AG_IMAGE_REF_MAX <= AG_PF_DIAGNOSTIC_MAX_BYTES,
	       "a configured image reference fits an evidence string");

char *ag_preflight_evidence_dump(const json_t *evidence)
{
	char *s = NULL;
	size_t len;
	struct ag_error *e = NULL;
	if (ag_canon_dump(evidence, &pf_bounds, &s, &len, &e) == 0)
		return s;
	ag_error_free(e);
	/* finish() checked the bounds already; this is the same serialization. */
	s = json_dumps(evidence,
		       JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
	if (!s)
		abort();
	return s;
}

/* ---- run state ---- */

struct pf {
	const struct ag_config *cfg;
	const struct ag_docker_cli *cli;
	unsigned control_ms, probe_ms;
	struct ag_preflight_result *res;
	json_t *ev, *checks, *unavail, *inspected;
	bool failed; /* a check failed: the verdict is final */
	struct ag_engine_facts engine;
	struct ag_image_facts image;
	/* probe */
	char name[sizeof(AG_PF_NAME_PREFIX) + 16];
	char *container_id; /* the 64-hex id docker create printed, when valid */
	bool created, started;
	const char *cleanup_status;
};

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void add_check(struct pf *p, const char *name, bool passed, const char *status,
		      const char *reason, const char *diag)
{
	json_t *c = json_object();
	json_object_set_new(c, "name", json_string(name));
	json_object_set_new(c, "passed", json_boolean(passed));
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", jstr_or_null(reason));
	json_object_set_new(c, "diagnostic", jstr_or_null(diag));
	json_array_append_new(p->checks, c);
}

static void pass(struct pf *p, const char *name, const char *diag)
{
	add_check(p, name, true, "passed", NULL, diag);
}

/* Records the first failure as the verdict; later failures add checks only. */
static void fail(struct pf *p, const char *name, enum ag_pf_verdict v, const char *reason,
		 const char *raw_diag)
{
	char *d = ag_pf_sanitize(raw_diag, strlen(raw_diag));
	add_check(p, name, false, v == AG_PF_V_UNSAFE ? "unsafe" : "unavailable", reason, d);
	if (!p->failed) {
		p->failed = true;
		p->res->status = v == AG_PF_V_UNSAFE ? AG_PF_UNSAFE : AG_PF_UNAVAILABLE;
		p->res->claim = AG_PF_CLAIM_NONE;
		p->res->failed_check = name;
		p->res->reason = reason;
		p->res->diagnostic = d;
	} else {
		free(d);
	}
}

static void fail_err(struct pf *p, const char *name, enum ag_pf_verdict v, struct ag_error *e)
{
	fail(p, name, v, e->reason, e->msg);
}

/* Every finding is evidence; the first decides the check. */
static bool findings_gate(struct pf *p, const char *name, const struct ag_pf_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		if (json_array_size(p->unavail) >= 64)
			break;
		json_t *u = json_object();
		json_object_set_new(u, "check", json_string(name));
		json_object_set_new(u, "control", json_string(f->v[i].control));
		json_object_set_new(u, "reason", json_string(f->v[i].reason));
		json_object_set_new(
		    u, "status",
		    json_string(f->v[i].verdict == AG_PF_V_UNSAFE ? "unsafe" : "unavailable"));
		json_object_set_new(u, "diagnostic", json_string(f->v[i].detail));
		json_array_append_new(p->unavail, u);
	}
	if (f->n == 0) {
		pass(p, name, NULL);
		return true;
	}
	/* The worst verdict decides; report the first finding with it. */
	enum ag_pf_verdict worst = ag_pf_findings_worst(f);
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].verdict == worst) {
			fail(p, name, worst, f->v[i].reason, f->v[i].detail);
			break;
		}
	return false;
}

/* One bounded docker call whose stdout is JSON. */
static int docker_json(struct pf *p, const char *what, const char *const *args, unsigned flags,
		       json_t **out, struct ag_error **err)
{
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	int ret = -1;
	if (ag_docker_run(p->cli, args, AG_PF_JSON_MAX_BYTES + 1, p->control_ms, &r, err) < 0)
		goto out;
	if (r.stdout_truncated) {
		ag_err(err, AG_E_LIMIT, 0, "docker.json.too_large",
		       "docker output exceeded %d bytes", AG_PF_JSON_MAX_BYTES);
		goto out;
	}
	if (ag_docker_check(&r, what, err) < 0) {
		/* Docker's stderr says why (e.g. no daemon); only sanitized. */
		if (r.err.len > 0) {
			char *san = ag_pf_sanitize(r.err.buf, r.err.len);
			char *m = ag_xasprintf("%s: %s", (*err)->msg, san);
			free((*err)->msg);
			(*err)->msg = m;
			free(san);
		}
		goto out;
	}
	ret = ag_docker_json_parse(r.out.buf, r.out.len, r.stdout_truncated, NULL, flags, out, err);
out:
	ag_proc_result_release(&r);
	return ret;
}

/* ---- checks without docker ---- */

static bool check_config(struct pf *p)
{
	const struct ag_config *c = p->cfg;
	if (!c->contained.present) {
		fail(p, "contained_execution_config", AG_PF_V_UNAVAILABLE,
		     "preflight.config.no_contained_execution",
		     "the config has no contained_execution block: nothing to verify");
		return false;
	}
	pass(p, "contained_execution_config", NULL);
	/*
	 * CONTRACT: preflight.contract. The loader already refuses every
	 * forbidden option; these re-checks keep the preflight fail-closed for
	 * a config built some other way (and document what it relies on).
	 */
	const struct ag_contained *ce = &c->contained;
	const char *why = NULL;
	const char *reason = NULL;
	if (ce->version != 1)
		why = "contained_execution.version is not 1", reason = "preflight.contract.version";
	else if (ce->required_uid < AG_CE_UID_MIN || ce->required_uid > AG_CE_UID_MAX ||
		 ce->required_gid < AG_CE_UID_MIN || ce->required_gid > AG_CE_UID_MAX)
		why = "required_uid/gid must be non-root (1..2147483647)",
		reason = "preflight.contract.identity";
	else if (ce->cpu_limit < AG_CE_CPU_MIN || ce->cpu_limit > AG_CE_CPU_MAX ||
		 ce->memory_bytes < AG_CE_MEMORY_MIN || ce->memory_bytes > AG_CE_MEMORY_MAX ||
		 ce->pids_limit < AG_CE_PIDS_MIN || ce->pids_limit > AG_CE_PIDS_MAX ||
		 ce->tmpfs_bytes < AG_CE_TMPFS_MIN || ce->tmpfs_bytes > AG_CE_TMPFS_MAX)
		why = "a resource limit is outside the v1 bounds",
		reason = "preflight.contract.limits";
	else if (c->sandbox.type != AG_SANDBOX_DOCKER)
		why = "sandbox.type is not docker", reason = "preflight.contract.sandbox_type";
	else if (c->sandbox.network != ce->network)
		why = "sandbox.network differs from contained_execution.network",
		reason = "preflight.contract.network";
	else if (!c->sandbox.image || !ag_image_ref_pinned(&c->sandbox.image_ref) ||
		 !c->sandbox.image_ref.repository)
		why = "sandbox.image is not pinned by digest", reason = "preflight.contract.image";
	if (why) {
		fail(p, "contained_execution_contract", AG_PF_V_UNSAFE, reason, why);
		return false;
	}
	pass(p, "contained_execution_contract", NULL);
	return true;
}

/* ---- engine ---- */

static bool check_engine(struct pf *p)
{
	struct ag_error *e = NULL;
	json_t *v = NULL;
	static const char *const version_args[] = {"version", "--format", "{{json .}}", NULL};
	if (docker_json(p, "docker version", version_args, AG_DOCKER_JSON_OBJECT, &v, &e) < 0) {
		fail_err(p, "docker_daemon", AG_PF_V_UNAVAILABLE, e);
		ag_error_free(e);
		return false;
	}
	pass(p, "docker_daemon", NULL);
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_version(v, &p->engine, &f);
	json_decref(v);
	bool ok = findings_gate(p, "engine_platform", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	static const char *const info_args[] = {"info", "--format", "{{json .}}", NULL};
	if (docker_json(p, "docker info", info_args, AG_DOCKER_JSON_OBJECT, &v, &e) < 0) {
		fail_err(p, "docker_info", AG_PF_V_UNAVAILABLE, e);
		ag_error_free(e);
		return false;
	}
	ag_inspect_info(v, &p->engine, &f);
	json_decref(v);
	ok = findings_gate(p, "docker_info", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	ag_inspect_platform_claim(&p->engine, p->cfg->contained.platform, &f);
	ok = findings_gate(p, "platform_claim", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	const char *net = ag_network_name(p->cfg->contained.network);
	const char *net_args[] = {"network", "inspect", "--format", "{{json .}}", net, NULL};
	if (docker_json(p, "docker network inspect", net_args,
			AG_DOCKER_JSON_OBJECT | AG_DOCKER_JSON_UNWRAP_SINGLE, &v, &e) < 0) {
		fail_err(p, "network_mode", AG_PF_V_UNAVAILABLE, e);
		ag_error_free(e);
		return false;
	}
	ag_inspect_network(v, p->cfg->contained.network, &f);
	json_decref(v);
	ok = findings_gate(p, "network_mode", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	ag_inspect_resource_support(&p->engine, &f);
	ok = findings_gate(p, "resource_limits", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	ag_inspect_api_support(&p->engine, &f);
	ok = findings_gate(p, "read_only_root_tmpfs", &f);
	ag_pf_findings_release(&f);
	return ok;
}

/* ---- image ---- */

static bool stderr_says_absent(const struct ag_proc_result *r)
{
	return strcasestr(r->err.buf, "no such image") ||
	       strcasestr(r->err.buf, "no such object") ||
	       strcasestr(r->err.buf, "no such container");
}

static bool check_image(struct pf *p)
{
	const char *ref = p->cfg->sandbox.image;
	/* `--` ends options: the reference can never be read as a flag. */
	const char *args[] = {"image", "inspect", "--format", "{{json .}}", "--", ref, NULL};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	json_t *v = NULL;
	bool ok = false;
	if (ag_docker_run(p->cli, args, AG_PF_JSON_MAX_BYTES + 1, p->control_ms, &r, &e) < 0) {
		fail_err(p, "image_identity", AG_PF_V_UNAVAILABLE, e);
		goto out;
	}
	if (r.status == AG_PROC_EXITED && r.exit_code != 0 && stderr_says_absent(&r)) {
		/* Never pulled: a missing pinned image is outside the boundary. */
		fail(p, "image_identity", AG_PF_V_UNSAFE, "preflight.image.missing",
		     "the pinned image is not present locally (the preflight never pulls)");
		goto out;
	}
	if (r.stdout_truncated) {
		ag_err(&e, AG_E_LIMIT, 0, "docker.json.too_large",
		       "docker output exceeded %d bytes", AG_PF_JSON_MAX_BYTES);
		fail_err(p, "image_identity", AG_PF_V_UNAVAILABLE, e);
		goto out;
	}
	if (ag_docker_check(&r, "docker image inspect", &e) < 0 ||
	    ag_docker_json_parse(r.out.buf, r.out.len, false, NULL,
				 AG_DOCKER_JSON_OBJECT | AG_DOCKER_JSON_UNWRAP_SINGLE, &v,
				 &e) < 0) {
		fail_err(p, "image_identity", AG_PF_V_UNAVAILABLE, e);
		goto out;
	}
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_image(v, &p->cfg->sandbox.image_ref, &p->image, &f);
	ok = findings_gate(p, "image_identity", &f);
	ag_pf_findings_release(&f);
out:
	ag_error_free(e);
	json_decref(v);
	ag_proc_result_release(&r);
	return ok;
}

/* ---- probe ---- */

static void random_name(char out[static sizeof(AG_PF_NAME_PREFIX) + 16])
{
	unsigned char b[8];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			abort(); /* no entropy source at all: cannot name safely */
		}
		got += (size_t)n;
	}
	static const char hex[] = "0123456789abcdef";
	memcpy(out, AG_PF_NAME_PREFIX, sizeof(AG_PF_NAME_PREFIX) - 1);
	char *h = out + sizeof(AG_PF_NAME_PREFIX) - 1;
	for (size_t i = 0; i < sizeof(b); i++) {
		h[2 * i] = hex[b[i] >> 4];
		h[2 * i + 1] = hex[b[i] & 15];
	}
	h[16] = '\0';
}

/* Absence check by id or name (container.h): 1 absent, 0 present, -1 ambiguous. */
static int container_lookup(struct pf *p, const char *what, json_t **obj)
{
	return ag_container_lookup(p->cli, what, p->control_ms, obj);
}

static bool owned_labels(const json_t *v, const char *name)
{
	const json_t *l = ag_json_path(v, "Config.Labels");
	const char *o = json_string_value(json_object_get(l, AG_PF_LABEL_OWNER));
	const char *k = json_string_value(json_object_get(l, AG_PF_LABEL_KIND));
	const char *n = json_string_value(json_object_get(l, AG_PF_LABEL_NAME));
	const char *cname = ag_json_path_str(v, "Name");
	return o && k && n && cname && strcmp(o, AG_PF_LABEL_OWNER_VALUE) == 0 &&
	       strcmp(k, AG_PF_LABEL_KIND_VALUE) == 0 && strcmp(n, name) == 0 && cname[0] == '/' &&
	       strcmp(cname + 1, name) == 0;
}

/*
 * rm -f -v by immutable id, then verify absence by the same id, and of
 * every anonymous volume (an image VOLUME) the container showed before.
 */
static const char *remove_by_id(struct pf *p, const char *id)
{
	struct ag_strv vols = AG_STRV_INIT;
	json_t *v = NULL;
	bool vols_known = container_lookup(p, id, &v) == 0 && ag_container_volumes(v, &vols) == 0;
	json_decref(v);
	const char *args[] = {"rm", "-f", "-v", "--", id, NULL};
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	struct ag_error *e = NULL;
	bool rm_ok =
	    ag_docker_run(p->cli, args, AG_DOCKER_CONTROL_OUTPUT_MAX, p->control_ms, &r, &e) == 0 &&
	    r.status == AG_PROC_EXITED && (r.exit_code == 0 || stderr_says_absent(&r));
	ag_error_free(e);
	ag_proc_result_release(&r);
	int absent = container_lookup(p, id, NULL);
	const char *status;
	if (absent == 1)
		status = !vols_known ? "volumes_unverified"
			 : ag_volumes_gone(p->cli, &vols, p->control_ms) ? "removed"
									 : "volume_remained";
	else if (absent == 0)
		status = rm_ok ? "remained_after_remove" : "remove_failed";
	else
		status = "verification_unavailable";
	ag_strv_release(&vols);
	return status;
}

/*
 * No trustworthy id from create: look the name up, and remove it only when
 * the container carries all three owned labels (and that name). A
 * look-alike with any other owner is never touched.
 */
static const char *cleanup_by_name(struct pf *p)
{
	json_t *v = NULL;
	int r = container_lookup(p, p->name, &v);
	if (r == 1)
		return "not_created";
	if (r < 0)
		return "verification_unavailable";
	const char *status;
	const char *id = ag_json_path_str(v, "Id");
	if (!owned_labels(v, p->name) || !ag_is_container_id(id))
		status = "unowned_not_removed";
	else
		status = remove_by_id(p, id);
	json_decref(v);
	return status;
}

static bool cleanup_complete(const char *s)
{
	return strcmp(s, "removed") == 0 || strcmp(s, "not_created") == 0 ||
	       strcmp(s, "unowned_not_removed") == 0;
}

static void record_docker_failure(struct pf *p, const char *check, const char *what,
				  const struct ag_proc_result *r)
{
	struct ag_error *e = NULL;
	if (ag_docker_check(r, what, &e) == 0)
		ag_err(&e, AG_E_DOCKER, 0, "docker.call.output", "%s printed unexpected output",
		       what);
	/* A sanitized prefix of docker's stderr helps the user; it is bounded. */
	char *s = ag_pf_sanitize(r->err.buf, r->err.len);
	char *d = ag_xasprintf("%s: %s", e->msg, s);
	/*
	 * Docker answering "no" (a refused option, a failing probe) means the
	 * boundary cannot be constructed: unsafe. No answer at all (timeout,
	 * client not started, killed) means the evidence is missing: unavailable.
	 */
	bool answered = r->status == AG_PROC_EXITED;
	fail(p, check, answered ? AG_PF_V_UNSAFE : AG_PF_V_UNAVAILABLE, e->reason, d);
	free(d);
	free(s);
	ag_error_free(e);
}

static void run_probe(struct pf *p)
{
	const struct ag_contained *ce = &p->cfg->contained;
	random_name(p->name);
	struct ag_strv argv = AG_STRV_INIT;
	struct ag_error *e = NULL;
	if (ag_pf_probe_create_argv(p->cfg, p->name, ag_probe_script, &argv, &e) < 0) {
		fail_err(p, "resource_control_probe", AG_PF_V_UNSAFE, e);
		ag_error_free(e);
		ag_strv_release(&argv);
		return;
	}
	struct ag_proc_result r;
	ag_proc_result_init(&r);
	if (ag_docker_run(p->cli, (const char *const *)ag_strv_argv(&argv),
			  AG_DOCKER_CONTROL_OUTPUT_MAX, p->control_ms, &r, &e) < 0) {
		fail_err(p, "resource_control_probe", AG_PF_V_UNAVAILABLE, e);
		ag_error_free(e);
		e = NULL;
		p->cleanup_status = cleanup_by_name(p);
		goto out;
	}
	/* create prints exactly one line: the full 64-hex id. */
	char *line = ag_xstrndup(r.out.buf, r.out.len);
	size_t n = strlen(line);
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	bool id_ok = r.status == AG_PROC_EXITED && r.exit_code == 0 && !r.stdout_truncated &&
		     ag_is_container_id(line);
	if (!id_ok) {
		if (r.status == AG_PROC_EXITED && r.exit_code == 0)
			fail(p, "resource_control_probe", AG_PF_V_UNSAFE,
			     "preflight.probe.create_id",
			     "docker create did not print one 64-hex container id");
		else
			record_docker_failure(p, "resource_control_probe", "docker create", &r);
		free(line);
		p->cleanup_status = cleanup_by_name(p);
		goto out;
	}
	p->created = true;
	p->container_id = line;

	/* Inspect by the immutable id and validate every control. */
	json_t *v = NULL;
	int look = container_lookup(p, p->container_id, &v);
	if (look != 0) {
		fail(p, "resource_control_probe", AG_PF_V_UNSAFE, "preflight.probe.inspect",
		     "the created probe container could not be inspected by its id");
	} else {
		struct ag_probe_expect x = {
		    .id = p->container_id,
		    .name = p->name,
		    .owner = AG_PF_LABEL_OWNER_VALUE,
		    .kind = AG_PF_LABEL_KIND_VALUE,
		    .image_id = p->image.local_image_id,
		    .uid = ce->required_uid,
		    .gid = ce->required_gid,
		    .memory_bytes = ce->memory_bytes,
		    .pids_limit = ce->pids_limit,
		    .cpu = ce->cpu_limit,
		    .tmpfs_bytes = ce->tmpfs_bytes,
		    .workspace_bytes = ce->tmpfs_bytes,
		    .workspace = AG_PF_WORKSPACE,
		    .network = ce->network,
		};
		struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
		ag_inspect_container(v, &x, p->inspected, &f);
		json_decref(v);
		bool ok = findings_gate(p, "resource_control_probe", &f);
		ag_pf_findings_release(&f);
		if (ok) {
			/* The one controlled run: the fixed probe script. */
			const char *sargs[] = {"start", "-a", "--", p->container_id, NULL};
			struct ag_proc_result s;
			ag_proc_result_init(&s);
			if (ag_docker_run(p->cli, sargs, AG_PF_PROBE_OUTPUT_MAX_BYTES, p->probe_ms,
					  &s, &e) < 0) {
				fail_err(p, "uid_gid_writable_path_probe", AG_PF_V_UNAVAILABLE, e);
				ag_error_free(e);
				e = NULL;
			} else if (s.status != AG_PROC_EXITED || s.exit_code != 0) {
				p->started = s.status == AG_PROC_EXITED && s.exit_code < 125;
				record_docker_failure(p, "uid_gid_writable_path_probe",
						      "docker start", &s);
			} else {
				p->started = true;
				ag_inspect_probe_output(s.out.buf, s.out.len, s.stdout_truncated,
							ce->required_uid, ce->required_gid, &f);
				findings_gate(p, "uid_gid_writable_path_probe", &f);
				ag_pf_findings_release(&f);
			}
			ag_proc_result_release(&s);
		}
	}
	p->cleanup_status = remove_by_id(p, p->container_id);
out:
	ag_proc_result_release(&r);
	ag_strv_release(&argv);
	if (cleanup_complete(p->cleanup_status))
		pass(p, "probe_cleanup", p->cleanup_status);
	else
		fail(p, "probe_cleanup", AG_PF_V_UNSAFE, "preflight.cleanup.failed",
		     p->cleanup_status);
}

/* ---- evidence ---- */

static json_t *requested_json(const struct ag_config *c)
{
	json_t *o = json_object();
	if (!c->contained.present)
		return o;
	const struct ag_contained *ce = &c->contained;
	json_object_set_new(o, "platform", json_string(ag_platform_name(ce->platform)));
	json_object_set_new(o, "network", json_string(ag_network_name(ce->network)));
	json_object_set_new(o, "uid", json_integer(ce->required_uid));
	json_object_set_new(o, "gid", json_integer(ce->required_gid));
	json_object_set_new(o, "cpu_limit", json_real(ce->cpu_limit));
	json_object_set_new(o, "memory_limit", json_string(ce->memory_limit));
	json_object_set_new(o, "memory_bytes", json_integer(ce->memory_bytes));
	json_object_set_new(o, "pids_limit", json_integer(ce->pids_limit));
	json_object_set_new(o, "tmpfs_size", json_string(ce->tmpfs_size));
	json_object_set_new(o, "tmpfs_bytes", json_integer(ce->tmpfs_bytes));
	json_object_set_new(o, "tmpfs_paths", json_pack("[ss]", "/tmp", AG_PF_WORKSPACE));
	json_object_set_new(o, "read_only_rootfs", json_true());
	json_object_set_new(o, "no_new_privileges", json_true());
	json_object_set_new(o, "cap_drop_all", json_true());
	return o;
}

static json_t *engine_json(const struct ag_engine_facts *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "version", jstr_or_null(e->server_version));
	json_object_set_new(o, "api_version", jstr_or_null(e->api_version));
	json_object_set_new(o, "os", jstr_or_null(e->os));
	json_object_set_new(o, "arch", jstr_or_null(e->arch));
	json_object_set_new(o, "operating_system", jstr_or_null(e->operating_system));
	json_object_set_new(o, "cgroup_driver", jstr_or_null(e->cgroup_driver));
	json_object_set_new(o, "cgroup_version", jstr_or_null(e->cgroup_version));
	json_object_set_new(o, "runtime", jstr_or_null(e->runtime));
	json_object_set_new(o, "docker_desktop", json_boolean(e->desktop));
	json_t *so = json_array();
	for (size_t i = 0; i < e->security_options.n && i < 16; i++)
		json_array_append_new(so, json_string(e->security_options.v[i]));
	json_object_set_new(o, "security_options", so);
	return o;
}

static char *dup_opt(const char *s)
{
	return s ? ag_xstrdup(s) : NULL;
}

static void finish(struct pf *p, bool cli_explicit)
{
	struct ag_preflight_result *res = p->res;
	if (!p->failed) {
		bool desktop = p->cfg->contained.platform == AG_PLATFORM_DESKTOP_EXPERIMENTAL;
		res->status = desktop ? AG_PF_EXPERIMENTAL : AG_PF_SUPPORTED;
		res->claim = desktop ? AG_PF_CLAIM_DESKTOP_REDUCED : AG_PF_CLAIM_LINUX_ENGINE;
	}
	res->cleanup_status = p->cleanup_status;
	res->local_image_id = dup_opt(p->image.local_image_id);
	res->registry_digest = dup_opt(p->image.registry_digest);
	res->client_version = dup_opt(p->cli ? p->cli->version : NULL);
	res->engine_version = dup_opt(p->engine.server_version);
	res->api_version = dup_opt(p->engine.api_version);
	res->os = dup_opt(p->engine.os);
	res->arch = dup_opt(p->engine.arch);
	res->cgroup_driver = dup_opt(p->engine.cgroup_driver);
	res->cgroup_version = dup_opt(p->engine.cgroup_version);
	res->runtime = dup_opt(p->engine.runtime);
	res->docker_desktop = p->engine.desktop;

	json_t *ev = p->ev;
	json_object_set_new(ev, "schema", json_string("agentguard.docker-preflight"));
	json_object_set_new(ev, "preflight_version", json_integer(1));
	json_object_set_new(ev, "status", json_string(ag_pf_status_name(res->status)));
	json_object_set_new(ev, "claim_level", json_string(ag_pf_claim_name(res->claim)));
	json_object_set_new(ev, "supported", json_boolean(res->status == AG_PF_SUPPORTED));
	json_object_set_new(ev, "approved_boundary_constructible", json_boolean(!p->failed));
	json_object_set_new(ev, "failed_check", jstr_or_null(res->failed_check));
	json_object_set_new(ev, "reason", jstr_or_null(res->reason));
	json_object_set_new(ev, "checks", json_incref(p->checks));
	json_object_set_new(ev, "requested", requested_json(p->cfg));
	json_object_set_new(
	    ev, "docker_accepted",
	    json_pack("{sbsb}", "container_created", p->created, "container_started", p->started));
	json_object_set_new(ev, "inspected", json_incref(p->inspected));
	json_object_set_new(ev, "unavailable_or_ambiguous", json_incref(p->unavail));
	json_object_set_new(ev, "cleanup",
			    json_pack("{sssb}", "status", p->cleanup_status, "complete",
				      cleanup_complete(p->cleanup_status)));
	json_t *dc = json_object();
	json_object_set_new(dc, "path_role", json_string(cli_explicit ? "explicit" : "default"));
	/* Default client paths are public facts; an explicit one may be private. */
	json_object_set_new(dc, "path",
			    !cli_explicit && p->cli ? json_string(p->cli->path) : json_null());
	json_object_set_new(dc, "version", jstr_or_null(res->client_version));
	json_object_set_new(ev, "docker_client", dc);
	json_object_set_new(ev, "engine", engine_json(&p->engine));
	json_t *im = json_object();
	json_object_set_new(im, "configured_reference", jstr_or_null(p->cfg->sandbox.image));
	json_object_set_new(im, "registry_digest", jstr_or_null(p->image.registry_digest));
	json_object_set_new(im, "local_image_id", jstr_or_null(p->image.local_image_id));
	json_object_set_new(im, "platform", jstr_or_null(p->image.platform));
	json_object_set_new(im, "pull_policy", json_string("never"));
	json_object_set_new(ev, "image", im);
	/*
	 * Bound the serialized evidence: every string is already sanitized
	 * and capped, arrays are capped; if it still does not fit, the
	 * per-finding list is dropped (the checks keep the verdict) and the
	 * evidence says so.
	 */
	json_object_set_new(ev, "evidence_truncated", json_false());
	struct ag_error *e = NULL;
	if (ag_canon_check(ev, &pf_bounds, &e) < 0) {
		ag_error_free(e);
		json_object_set_new(ev, "evidence_truncated", json_true());
		json_object_set_new(ev, "unavailable_or_ambiguous", json_array());
	}
	res->evidence = json_incref(ev);
	res->image = p->image;
	memset(&p->image, 0, sizeof(p->image));
}

int ag_preflight_run(const struct ag_config *cfg, const struct ag_docker_cli *cli,
		     const struct ag_preflight_opts *opts, struct ag_preflight_result *res,
		     struct ag_error **err)
{
	static const struct ag_preflight_opts dflt = AG_PREFLIGHT_OPTS_INIT;
	if (!opts)
		opts = &dflt;
	ag_preflight_result_init(res);
	struct pf p = {
	    .cfg = cfg,
	    .cli = cli,
	    .control_ms =
		opts->control_timeout_ms ? opts->control_timeout_ms : AG_PF_DOCKER_TIMEOUT_MS,
	    .probe_ms = opts->probe_timeout_ms ? opts->probe_timeout_ms : AG_PF_PROBE_TIMEOUT_MS,
	    .res = res,
	    .ev = json_object(),
	    .checks = json_array(),
	    .unavail = json_array(),
	    .inspected = json_object(),
	    .cleanup_status = "not_created",
	};
	p.engine.ncpu = -1;
	struct ag_docker_cli own = AG_DOCKER_CLI_INIT;
	bool explicit_cli = cli == NULL && opts->docker_path != NULL;
	int ret = 0;

	if (!check_config(&p))
		goto done;
	if (!cli) {
		struct ag_error *e = NULL;
		if (ag_docker_cli_resolve(opts->docker_path, &own, &e) < 0) {
			if (e->code == AG_E_USAGE) {
				*err = e;
				ret = -1;
				goto done;
			}
			fail_err(&p, "docker_cli_available", AG_PF_V_UNAVAILABLE, e);
			ag_error_free(e);
			goto done;
		}
		p.cli = &own;
	}
	pass(&p, "docker_cli_available", NULL);
	if (!check_engine(&p))
		goto done;
	if (!check_image(&p))
		goto done;
	run_probe(&p);
done:
	if (ret == 0)
		finish(&p, explicit_cli);
	json_decref(p.ev);
	json_decref(p.checks);
	json_decref(p.unavail);
	json_decref(p.inspected);
	free(p.container_id);
	ag_engine_facts_release(&p.engine);
	ag_image_facts_release(&p.image);
	ag_docker_cli_release(&own);
	return ret;
}
