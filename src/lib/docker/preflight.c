#include "lib/base/ag.h"
#include "lib/docker/preflight.h"
#include "lib/docker/ledger.h"
#include "lib/base/bounds.h"
#include "lib/base/error.h"
#include "lib/base/sanitize.h"
#include "lib/base/strv.h"
#include "lib/config/config.h"
#include "lib/docker/engine.h"
#include "lib/docker/exec_spec.h"
#include "lib/docker/docker_json.h"
#include "lib/docker/inspect.h"
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
	struct ag_engine *eng;
	bool explicit_socket;
	const struct ag_preflight_opts *opts;
	unsigned control_ms, probe_ms;
	struct ag_preflight_result *res;
	json_t *ev, *checks, *unavail, *inspected;
	bool failed; /* a check failed: the verdict is final */
	struct ag_engine_facts engine;
	struct ag_image_facts image;
	/* probe */
	char name[sizeof(AG_PF_NAME_PREFIX) + 16];
	/* the probe's own ledger: found by its unique name label when the
	 * create answer is lost; its entry holds the id and the cleanup */
	struct ag_ledger ledger;
	struct ag_ledger_entry *probe; /* NULL until the probe is about to be created */
	bool started;
};

/* The probe's cleanup state (not_created until it was torn down). */
static enum ag_cleanup_state probe_cleanup(const struct pf *p)
{
	return p->probe ? p->probe->cleanup.state : AG_CLEANUP_NOT_CREATED;
}

static void add_check(struct pf *p, const char *name, bool passed, const char *status,
		      const char *reason, const char *diag)
{
	json_t *c = json_object();
	json_object_set_new(c, "name", json_string(name));
	json_object_set_new(c, "passed", json_boolean(passed));
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", ag_json_str_or_null(reason));
	json_object_set_new(c, "diagnostic", ag_json_str_or_null(diag));
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
	char *d = ag_sanitize(NULL, AG_SANITIZE_ENGINE, raw_diag, strlen(raw_diag),
			      AG_PF_DIAGNOSTIC_MAX_BYTES);
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

/* One bounded Engine API GET whose answer is one JSON object. */
static int engine_get(struct pf *p, const char *what, const char *path, json_t **out,
		      struct ag_error **err)
{
	return ag_engine_json(p->eng, "GET", path, NULL, p->control_ms, what, out, err);
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
	if (engine_get(p, "GET /version", "/version", &v, &e) < 0) {
		fail_err(p, "docker_daemon", AG_PF_V_UNAVAILABLE, e);
		ag_error_free(e);
		return false;
	}
	pass(p, "docker_daemon", NULL);
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	/* The API answers the server half of `docker version`; the client is us. */
	json_t *both = json_pack("{s:{s:s},s:o}", "Client", "Version", p->eng->client, "Server", v);
	ag_inspect_version(both, &p->engine, &f);
	json_decref(both);
	if (f.n == 0 &&
	    (p->engine.api_major < 1 || (p->engine.api_major == 1 && p->engine.api_minor < 41)))
		ag_pf_findings_add(&f, "api_version", AG_PF_V_UNAVAILABLE,
				   "docker.engine.api_version",
				   "the daemon's API version is below 1.41");
	bool ok = findings_gate(p, "engine_platform", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	if (engine_get(p, "GET /info", "/info", &v, &e) < 0) {
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
	ag_inspect_runtime_claim(&p->engine, &p->cfg->contained, &f);
	ok = findings_gate(p, "platform_claim", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		return false;

	const char *net = ag_network_name(p->cfg->contained.network);
	_cleanup_free_ char *net_path = ag_xasprintf("/networks/%s", net);
	if (engine_get(p, "GET /networks", net_path, &v, &e) < 0) {
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

static bool check_image(struct pf *p)
{
	const char *ref = p->cfg->sandbox.image;
	_cleanup_free_ char *q = ag_engine_escape(ref);
	_cleanup_free_ char *path = ag_xasprintf("/images/%s/json", q);
	struct ag_error *e = NULL;
	json_t *v = NULL;
	bool ok = false;
	if (engine_get(p, "GET /images", path, &v, &e) < 0) {
		if (strcmp(e->reason, "docker.api.not_found") == 0)
			/* Never pulled: a missing pinned image is outside the boundary. */
			fail(p, "image_identity", AG_PF_V_UNSAFE, "preflight.image.missing",
			     "the pinned image is not present locally (the preflight never pulls)");
		else
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
	return ok;
}

/* ---- probe ---- */

static void random_name(char out[static sizeof(AG_PF_NAME_PREFIX) + 16])
{
	ag_random_name(out, sizeof(AG_PF_NAME_PREFIX) + 16, AG_PF_NAME_PREFIX);
}

/* The daemon refused (unsafe: the boundary cannot be built) or did not answer
 * (unavailable: the evidence is missing). */
static enum ag_pf_verdict verdict_of(const struct ag_error *e)
{
	return strncmp(e->reason, "docker.api.", 11) == 0 ||
		       strcmp(e->reason, "docker.create.bad_id") == 0
		   ? AG_PF_V_UNSAFE
		   : AG_PF_V_UNAVAILABLE;
}

static void run_probe(struct pf *p)
{
	random_name(p->name);
	struct ag_error *e = NULL;
	const struct ag_label labels[] = {
	    {AG_PF_LABEL_OWNER, AG_PF_LABEL_OWNER_VALUE},
	    {AG_PF_LABEL_KIND, AG_PF_LABEL_KIND_VALUE},
	    {AG_PF_LABEL_NAME, p->name},
	};
	/* The probe's one argument: the workspace it must be able to write. */
	const char *const command[] = {AG_PF_WORKSPACE};
	/* Removed through its ledger entry: by the id the daemon answered, or
	 * (answer lost) by its unique name label, owner checked before any action. */
	const struct ag_label_expect le[] = {{AG_PF_LABEL_OWNER, AG_PF_LABEL_OWNER_VALUE},
					     {AG_PF_LABEL_KIND, AG_PF_LABEL_KIND_VALUE},
					     {AG_PF_LABEL_NAME, p->name}};
	_cleanup_free_ char *probe_bin = NULL;
	if (!p->opts->probe_path) {
		fail(p, "resource_control_probe", AG_PF_V_UNAVAILABLE,
		     "preflight.probe_binary.missing", "no preflight probe binary was given");
		goto out;
	}
	if (ag_verify_root_file(p->opts->probe_path, &probe_bin, &e) < 0) {
		fail_err(p, "resource_control_probe",
			 e->code == AG_E_UNVERIFIED ? AG_PF_V_UNSAFE : AG_PF_V_UNAVAILABLE, e);
		goto out;
	}
	/* The same controls as the agent's container, with a tmpfs workspace;
	 * the entrypoint is AgentGuard's own static probe, nothing of the image. */
	const struct ag_exec_inputs in = {
	    .container_name = p->name,
	    .probe_host_path = probe_bin,
	    .entrypoint = AG_EXEC_PROBE_PATH,
	    .labels = labels,
	    .n_labels = AG_ARRAY_SIZE(labels),
	    .command = command,
	    .n_command = AG_ARRAY_SIZE(command),
	};
	struct ag_exec_spec spec;
	if (p->opts->on_probe)
		p->opts->on_probe(p->opts->on_probe_data, p->image.local_image_id);
	if (ag_exec_spec_from_config(p->cfg, &in, &spec, &e) < 0) {
		fail_err(p, "resource_control_probe", AG_PF_V_UNSAFE, e);
		goto out;
	}
	p->probe = ag_ledger_add(&p->ledger, AG_LEDGER_CONTAINER, "preflight_probe", p->name, le,
				 AG_ARRAY_SIZE(le));
	if (!p->probe) {
		fail(p, "resource_control_probe", AG_PF_V_UNAVAILABLE, "preflight.probe.ledger",
		     "the probe could not be entered in the ledger");
		goto out;
	}
	if (ag_ledger_entry_create(&p->ledger, p->eng, p->probe, &spec, NULL, &e) < 0) {
		fail(p, "resource_control_probe", verdict_of(e),
		     strcmp(e->reason, "docker.create.bad_id") == 0 ? "preflight.probe.create_id"
								    : e->reason,
		     e->msg);
		goto out;
	}
	/* Inspect by the immutable id and validate every control. */
	json_t *v = NULL;
	if (ag_container_lookup(p->eng, p->probe->id, p->control_ms, &v) != 0) {
		fail(p, "resource_control_probe", AG_PF_V_UNSAFE, "preflight.probe.inspect",
		     "the created probe container could not be inspected by its id");
		goto out;
	}
	/* What it must show: derived from the very spec that rendered the create. */
	struct ag_probe_expect x;
	const struct ag_inspect_created made = {AG_INSPECT_PREFLIGHT_PROBE, p->probe->id,
						p->image.local_image_id, NULL};
	if (ag_inspect_expect_from_spec(&spec, &made, &x, &e) < 0) {
		json_decref(v);
		fail_err(p, "resource_control_probe", AG_PF_V_UNSAFE, e);
		goto out;
	}
	struct ag_pf_findings f = AG_PF_FINDINGS_INIT;
	ag_inspect_container(v, &x, p->inspected, &f);
	json_decref(v);
	bool ok = findings_gate(p, "resource_control_probe", &f);
	ag_pf_findings_release(&f);
	if (!ok)
		goto out;
	/* The one controlled run: attach, start, read its one JSON line. */
	struct ag_engine_stream st;
	ag_engine_stream_init(&st);
	const struct ag_engine_stream_opts so = {
	    .stdout_max = AG_PF_PROBE_OUTPUT_MAX_BYTES,
	    .stderr_max = AG_PF_PROBE_OUTPUT_MAX_BYTES,
	    .timeout_ms = p->probe_ms,
	};
	ag_engine_attach_run(p->eng, p->probe->id, &so, &st, &e);
	if (st.end == AG_STREAM_NOT_STARTED) {
		fail(p, "uid_gid_writable_path_probe", verdict_of(e), e->reason, e->msg);
	} else if (st.end != AG_STREAM_ENDED) {
		p->started = true;
		fail(p, "uid_gid_writable_path_probe", AG_PF_V_UNAVAILABLE,
		     st.end == AG_STREAM_TIMED_OUT ? "docker.engine.timeout"
						   : "docker.engine.dropped",
		     st.end == AG_STREAM_TIMED_OUT ? "the probe did not finish in time"
						   : "the probe's output stream ended early");
	} else {
		p->started = true;
		/* The exit status: the probe's script exits non-zero on any failed step. */
		_cleanup_free_ char *wpath =
		    ag_xasprintf("/containers/%s/wait?condition=not-running", p->probe->id);
		json_t *w = NULL;
		if (ag_engine_json(p->eng, "POST", wpath, NULL, p->control_ms, "wait for the probe",
				   &w, &e) < 0) {
			fail_err(p, "uid_gid_writable_path_probe", AG_PF_V_UNAVAILABLE, e);
		} else if (!json_is_integer(json_object_get(w, "StatusCode")) ||
			   json_integer_value(json_object_get(w, "StatusCode")) != 0) {
			fail(p, "uid_gid_writable_path_probe", AG_PF_V_UNSAFE,
			     "preflight.probe.exit", "the probe exited non-zero: a check failed");
		} else {
			ag_inspect_probe_output(st.out.buf, st.out.len, st.stdout_truncated, &x,
						&f);
			/* what the probe showed of its kernel: the runtime's proof */
			json_t *proof = ag_inspect_probe_runtime_proof(st.out.buf, st.out.len,
								       st.stdout_truncated);
			if (proof)
				json_object_set_new(p->inspected, "runtime_proof", proof);
			findings_gate(p, "uid_gid_writable_path_probe", &f);
			ag_pf_findings_release(&f);
		}
		json_decref(w);
	}
	ag_engine_stream_release(&st);
out:
	ag_error_free(e);
	if (p->probe)
		ag_ledger_entry_teardown(&p->ledger, p->eng, p->probe);
	const char *status = ag_cleanup_state_name(probe_cleanup(p));
	if (ag_cleanup_state_complete(probe_cleanup(p)))
		pass(p, "probe_cleanup", status);
	else
		fail(p, "probe_cleanup", AG_PF_V_UNSAFE, "preflight.cleanup.failed", status);
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
	json_object_set_new(o, "runtime", json_string(ag_runtime_name(ce->runtime)));
	json_object_set_new(o, "runtime_name", ag_json_str_or_null(ce->runtime_name));
	return o;
}

static json_t *engine_json(const struct ag_engine_facts *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "version", ag_json_str_or_null(e->server_version));
	json_object_set_new(o, "api_version", ag_json_str_or_null(e->api_version));
	json_object_set_new(o, "os", ag_json_str_or_null(e->os));
	json_object_set_new(o, "arch", ag_json_str_or_null(e->arch));
	json_object_set_new(o, "operating_system", ag_json_str_or_null(e->operating_system));
	json_object_set_new(o, "cgroup_driver", ag_json_str_or_null(e->cgroup_driver));
	json_object_set_new(o, "cgroup_version", ag_json_str_or_null(e->cgroup_version));
	json_object_set_new(o, "runtime", ag_json_str_or_null(e->runtime));
	json_t *rts = json_array();
	for (size_t i = 0; i < e->runtimes.n; i++)
		json_array_append_new(rts, json_string(e->runtimes.v[i]));
	json_object_set_new(o, "runtimes", rts);
	json_t *rargs = json_array();
	for (size_t i = 0; i < e->runtime_args.n; i++)
		json_array_append_new(rargs, json_string(e->runtime_args.v[i]));
	json_object_set_new(o, "runtime_args", rargs);
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

static void finish(struct pf *p)
{
	struct ag_preflight_result *res = p->res;
	if (!p->failed) {
		bool desktop = p->cfg->contained.platform == AG_PLATFORM_DESKTOP_EXPERIMENTAL;
		res->status = desktop ? AG_PF_EXPERIMENTAL : AG_PF_SUPPORTED;
		res->claim = desktop ? AG_PF_CLAIM_DESKTOP_REDUCED : AG_PF_CLAIM_LINUX_ENGINE;
	}
	res->cleanup_status = ag_cleanup_state_name(probe_cleanup(p));
	res->local_image_id = dup_opt(p->image.local_image_id);
	res->registry_digest = dup_opt(p->image.registry_digest);
	res->client_version = dup_opt(p->eng ? p->eng->client : NULL);
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
	json_object_set_new(ev, "failed_check", ag_json_str_or_null(res->failed_check));
	json_object_set_new(ev, "reason", ag_json_str_or_null(res->reason));
	json_object_set_new(ev, "checks", json_incref(p->checks));
	json_object_set_new(ev, "requested", requested_json(p->cfg));
	json_object_set_new(ev, "docker_accepted",
			    json_pack("{sbsb}", "container_created", p->probe && p->probe->id,
				      "container_started", p->started));
	json_object_set_new(ev, "inspected", json_incref(p->inspected));
	json_object_set_new(ev, "unavailable_or_ambiguous", json_incref(p->unavail));
	json_object_set_new(ev, "cleanup",
			    json_pack("{sssb}", "status", ag_cleanup_state_name(probe_cleanup(p)),
				      "complete", ag_cleanup_state_complete(probe_cleanup(p))));
	json_t *dc = json_object();
	bool explicit_socket = p->eng ? p->eng->explicit_socket : p->explicit_socket;
	json_object_set_new(dc, "path_role", json_string(explicit_socket ? "explicit" : "default"));
	/* The default socket path is a public fact; an explicit one may be private. */
	json_object_set_new(dc, "path",
			    !explicit_socket && p->eng ? json_string(p->eng->socket) : json_null());
	json_object_set_new(dc, "version", ag_json_str_or_null(res->client_version));
	json_object_set_new(ev, "docker_client", dc);
	json_object_set_new(ev, "engine", engine_json(&p->engine));
	json_t *im = json_object();
	json_object_set_new(im, "configured_reference", ag_json_str_or_null(p->cfg->sandbox.image));
	json_object_set_new(im, "registry_digest", ag_json_str_or_null(p->image.registry_digest));
	json_object_set_new(im, "local_image_id", ag_json_str_or_null(p->image.local_image_id));
	json_object_set_new(im, "platform", ag_json_str_or_null(p->image.platform));
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

int ag_preflight_run(const struct ag_config *cfg, struct ag_engine *eng,
		     const struct ag_preflight_opts *opts, struct ag_preflight_result *res,
		     struct ag_error **err)
{
	static const struct ag_preflight_opts dflt = AG_PREFLIGHT_OPTS_INIT;
	if (!opts)
		opts = &dflt;
	ag_preflight_result_init(res);
	struct pf p = {
	    .cfg = cfg,
	    .eng = eng,
	    .explicit_socket = opts->socket_path != NULL,
	    .opts = opts,
	    .control_ms =
		opts->control_timeout_ms ? opts->control_timeout_ms : AG_PF_DOCKER_TIMEOUT_MS,
	    .probe_ms = opts->probe_timeout_ms ? opts->probe_timeout_ms : AG_PF_PROBE_TIMEOUT_MS,
	    .res = res,
	    .ev = json_object(),
	    .checks = json_array(),
	    .unavail = json_array(),
	    .inspected = json_object(),
	};
	p.engine.ncpu = -1;
	ag_ledger_init(&p.ledger, AG_PF_LABEL_NAME, p.name, p.control_ms);
	p.ledger.label_names_one = true;
	struct ag_engine own = AG_ENGINE_INIT;
	int ret = 0;

	if (!check_config(&p))
		goto done;
	if (!eng) {
		struct ag_error *e = NULL;
		if (ag_engine_open(opts->socket_path, &own, &e) < 0) {
			if (e->code == AG_E_USAGE) {
				*err = e;
				ret = -1;
				goto done;
			}
			fail_err(&p, "docker_cli_available",
				 e->code == AG_E_UNVERIFIED ? AG_PF_V_UNSAFE : AG_PF_V_UNAVAILABLE,
				 e);
			ag_error_free(e);
			goto done;
		}
		p.eng = &own;
	}
	pass(&p, "docker_cli_available", NULL);
	if (!check_engine(&p))
		goto done;
	if (!check_image(&p))
		goto done;
	run_probe(&p);
done:
	if (ret == 0)
		finish(&p);
	json_decref(p.ev);
	json_decref(p.checks);
	json_decref(p.unavail);
	json_decref(p.inspected);
	ag_ledger_release(&p.ledger);
	ag_engine_facts_release(&p.engine);
	ag_image_facts_release(&p.image);
	ag_engine_close(&own);
	return ret;
}
