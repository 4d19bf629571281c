#include "lib/base/ag.h"
#include "lib/run/evidence.h"
#include "lib/run/contained_run.h"
#include "lib/run/study.h"
#include "lib/base/json.h"
#include "lib/egress/manifest.h"
#include "lib/workspace/patch.h"
#include "lib/base/bounds.h"
#include "lib/base/buf.h"
#include "lib/base/error.h"
#include "lib/base/redact.h"
#include "lib/base/sha256.h"
#include "lib/config/config.h"
#include "lib/config/env_allowlist.h"
#include "lib/docker/ledger.h"
#include "lib/docker/inspect.h"
#include "lib/docker/preflight.h"
#include "lib/evidence/canon.h"
#include "lib/policy/checks.h"
#include "lib/workspace/mutation.h"
#include "lib/workspace/snapshot.h"
#include "lib/workspace/gitinfo.h"
#include "lib/workspace/workspace.h"

#define EVIDENCE_STRING_MAX 512

/* The record's parts that exist only when their stage ran. */
static const struct ag_preflight_result *pf_of(const struct ag_run_record *f)
{
	return f->preflight.ran ? &f->preflight.result : NULL;
}

static const struct ag_ws_mutations *mut_of(const struct ag_run_record *f)
{
	return f->mutations.ok ? &f->mutations.mut : NULL;
}

static const struct ag_checks *checks_of(const struct ag_run_record *f)
{
	return f->checks.ok ? &f->checks.checks : NULL;
}

static const struct ag_run_patch *patch_of(const struct ag_run_record *f)
{
	return f->patch.recorded ? &f->patch : NULL;
}

void ag_short_hash(const char *s, char out[17])
{
	char hex[AG_SHA256_HEX_LEN + 1];
	ag_sha256_hex(s, strlen(s), hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

/* A redacted, bounded JSON string (never NULL: jansson needs UTF-8). */
static json_t *rstr_flags(const struct ag_redactor *r, const char *s, size_t max, unsigned flags)
{
	if (!s)
		return json_null();
	char *t = ag_redact(r, s, strlen(s), max, flags, NULL);
	json_t *j = json_string(t);
	if (!j) {
		/* Not UTF-8: escape every high byte. */
		struct ag_buf b = AG_BUF_INIT(max * 4 + 16, "limit.evidence.string");
		struct ag_error *e = NULL;
		for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
			char esc[8];
			if (*p >= 0x80)
				snprintf(esc, sizeof(esc), "%%%02X", *p);
			else
				snprintf(esc, sizeof(esc), "%c", *p);
			if (ag_buf_adds(&b, esc, &e) < 0)
				break;
		}
		ag_error_free(e);
		j = json_string(b.buf);
		ag_buf_release(&b);
	}
	free(t);
	return j ? j : json_string("");
}

static json_t *rstr(const struct ag_redactor *r, const char *s, size_t max)
{
	return rstr_flags(r, s, max, 0);
}

static json_t *redacted_pattern(const char *pattern, void *ctx)
{
	return rstr(ctx, pattern, 256);
}

/*
 * A workspace-relative path: redacted raw (a secret is found as it is, even
 * when it holds '%' or a byte the encoding rewrites), then the lossless
 * ASCII-safe encoding, then redacted again (the redactor also knows each
 * secret's encoded forms, and shapes see the text as recorded).
 */
static json_t *rpath(const struct ag_redactor *r, const char *p)
{
	struct ag_buf b = AG_BUF_INIT(AG_WS_MAX_PATH_BYTES * 3 + 64, "limit.evidence.path");
	struct ag_error *e = NULL;
	json_t *j;
	size_t pl = strlen(p);
	char *raw = ag_redact(r, p, pl, pl * 4 + 64, AG_REDACT_KEEP_CONTROLS, NULL);
	if (ag_ws_path_encode(&b, raw, strlen(raw), &e) < 0)
		j = json_string("[UNREPRESENTABLE_PATH]");
	else
		j = rstr(r, b.buf, 4096);
	free(raw);
	ag_error_free(e);
	ag_buf_release(&b);
	return j;
}

static json_t *strv_json(const struct ag_strv *s, size_t max)
{
	json_t *a = json_array();
	for (size_t i = 0; s && i < s->n && i < max; i++)
		json_array_append_new(a, json_string(s->v[i]));
	return a;
}

static json_t *sorted_names(const struct ag_strv *s)
{
	struct ag_strv copy = AG_STRV_INIT;
	for (size_t i = 0; s && i < s->n; i++)
		ag_strv_push(&copy, s->v[i]);
	ag_strv_sort(&copy);
	json_t *a = strv_json(&copy, 64);
	ag_strv_release(&copy);
	return a;
}

/*
 * The redacted agent argv, at most max_items items and about max_bytes of
 * text; a cut list ends with the item "[TRUNCATED]", so the containment
 * evidence stays inside its 32 KiB bound whatever the argv.
 */
static json_t *command_json(const struct ag_run_record *f, size_t max_items, size_t max_bytes)
{
	json_t *a = json_array();
	size_t used = 0;
	for (size_t i = 0; i < f->opts->argc; i++) {
		/* argv-level: a credential flag's value goes whatever the secret set holds */
		char *t = ag_redact_argv_item(f->opts->redact, f->opts->argv, f->opts->argc, i,
					      EVIDENCE_STRING_MAX);
		json_t *s = rstr(NULL, t, EVIDENCE_STRING_MAX);
		free(t);
		size_t n = json_string_length(s);
		if (i + 1 >= max_items || used + n > max_bytes) {
			json_decref(s);
			json_array_append_new(a, json_string("[TRUNCATED]"));
			break;
		}
		used += n;
		json_array_append_new(a, s);
	}
	return a;
}

static bool claim_known(const struct ag_run_record *f)
{
	return pf_of(f) && ag_preflight_passed(pf_of(f));
}

static json_t *ce_preflight(const struct ag_run_record *f);
static json_t *ce_image(const struct ag_run_record *f);
static json_t *ce_controls(const struct ag_run_record *f);
static json_t *ce_environment(const struct ag_run_record *f);
static json_t *ce_workspace(const struct ag_run_record *f);
static json_t *ce_execution(const struct ag_run_record *f);
static json_t *ce_cleanup(const struct ag_run_record *f);
static json_t *ce_notes(const struct ag_run_record *f);

static json_t *containment_evidence(const struct ag_run_record *f)
{
	const struct ag_config *c = f->opts->cfg;
	const struct ag_contained *ce = &c->contained;
	json_t *ev = json_object();
	json_object_set_new(ev, "schema", json_string("agentguard.containment-evidence"));
	json_object_set_new(ev, "schema_version", json_integer(1));
	json_object_set_new(ev, "execution_mode", json_string("contained-run"));
	json_object_set_new(ev, "state", json_string("recorded"));
	json_object_set_new(ev, "security_claim_level",
			    json_string(pf_of(f) ? ag_pf_claim_name(pf_of(f)->claim) : "none"));

	json_t *req = json_object();
	json_object_set_new(req, "state", json_string("recorded"));
	json_object_set_new(req, "platform", json_string(ag_platform_name(ce->platform)));
	json_object_set_new(req, "network", json_string(ag_network_name(ce->network)));
	json_object_set_new(req, "image_provenance", json_string("digest-required"));
	json_object_set_new(req, "configured_image", rstr(f->opts->redact, c->sandbox.image, 256));
	json_object_set_new(
	    req, "command",
	    command_json(f, AG_RUN_EVIDENCE_ARGV_ITEMS, AG_RUN_EVIDENCE_ARGV_BYTES));
	json_object_set_new(req, "source_dir", json_string("${REPOSITORY_ROOT}"));
	json_object_set_new(req, "run_dir", json_string("${RUN_ROOT}"));
	json_object_set_new(ev, "requested", req);

	json_object_set_new(ev, "preflight", ce_preflight(f));
	json_object_set_new(ev, "image", ce_image(f));
	json_object_set_new(ev, "controls", ce_controls(f));
	json_object_set_new(ev, "environment", ce_environment(f));
	json_object_set_new(ev, "workspace", ce_workspace(f));
	json_object_set_new(ev, "execution", ce_execution(f));
	json_object_set_new(ev, "cleanup", ce_cleanup(f));
	json_object_set_new(ev, "notes", ce_notes(f));
	return ev;
}

static json_t *ce_preflight(const struct ag_run_record *f)
{
	json_t *pf = json_object();
	if (pf_of(f)) {
		const json_t *checks = json_object_get(pf_of(f)->evidence, "checks");
		size_t total = json_array_size(checks), passed = 0;
		for (size_t i = 0; i < total; i++)
			if (json_is_true(json_object_get(json_array_get(checks, i), "passed")))
				passed++;
		json_object_set_new(pf, "state", json_string("recorded"));
		json_object_set_new(pf, "status", json_string(ag_pf_status_name(pf_of(f)->status)));
		json_object_set_new(pf, "claim_level",
				    json_string(ag_pf_claim_name(pf_of(f)->claim)));
		json_object_set_new(pf, "reduced_claim",
				    json_boolean(pf_of(f)->claim == AG_PF_CLAIM_DESKTOP_REDUCED));
		json_object_set_new(pf, "checks_total", json_integer((json_int_t)total));
		json_object_set_new(pf, "checks_passed", json_integer((json_int_t)passed));
		json_object_set_new(pf, "approved_boundary_constructible",
				    json_boolean(ag_preflight_passed(pf_of(f))));
	} else {
		json_object_set_new(pf, "state", json_string("unavailable"));
		json_object_set_new(pf, "status", json_string("unknown"));
	}
	return pf;
}

static json_t *ce_image(const struct ag_run_record *f)
{
	const struct ag_config *c = f->opts->cfg;
	json_t *img = json_object();
	json_object_set_new(img, "state", json_string(claim_known(f) ? "recorded" : "unavailable"));
	json_object_set_new(img, "configured_reference",
			    rstr(f->opts->redact, c->sandbox.image, 256));
	json_object_set_new(img, "registry_digest",
			    pf_of(f) && pf_of(f)->registry_digest
				? rstr(f->opts->redact, pf_of(f)->registry_digest, 512)
				: json_null());
	json_object_set_new(img, "local_image_id",
			    pf_of(f) && pf_of(f)->local_image_id
				? json_string(pf_of(f)->local_image_id)
				: json_null());
	json_object_set_new(img, "container_bound_image_id",
			    f->container.bound_image_id ? json_string(f->container.bound_image_id)
							: json_null());
	bool bound_match = f->container.bound_image_id && pf_of(f) && pf_of(f)->local_image_id &&
			   strcmp(f->container.bound_image_id, pf_of(f)->local_image_id) == 0;
	json_object_set_new(img, "identity_consistent",
			    f->container.bound_image_id ? json_boolean(bound_match) : json_null());
	/*
	 * The image's own metadata, overridden by the run but recorded: its
	 * ENTRYPOINT as a fact (present, SHA-256 of its JSON: never the text)
	 * and its ENV names (never values), which do reach the agent.
	 */
	const struct ag_image_facts *im =
	    pf_of(f) && pf_of(f)->image.metadata_known ? &pf_of(f)->image : NULL;
	json_object_set_new(img, "entrypoint_present",
			    im ? json_boolean(im->entrypoint_present) : json_null());
	json_object_set_new(img, "entrypoint_sha256",
			    im && im->entrypoint_sha256 ? json_string(im->entrypoint_sha256)
							: json_null());
	json_object_set_new(img, "env_names",
			    strv_json(im ? &im->env_names : NULL, AG_RUN_IMAGE_ENV_NAMES_MAX));
	json_object_set_new(img, "env_names_total",
			    im ? json_integer((json_int_t)im->env_total) : json_null());
	json_object_set_new(img, "pull_policy", json_string("never"));
	json_object_set_new(
	    img, "cache_status",
	    json_string(pf_of(f) && pf_of(f)->local_image_id ? "present" : "unknown"));
	return img;
}

static json_t *ce_controls(const struct ag_run_record *f)
{
	const struct ag_contained *ce = &f->opts->cfg->contained;
	json_t *ctl = json_object();
	json_object_set_new(ctl, "state",
			    json_string(f->container.verified ? "recorded" : "unavailable"));
	json_object_set_new(ctl, "network", json_string(ag_network_name(ce->network)));
	json_object_set_new(ctl, "no_new_privileges", json_true());
	json_object_set_new(ctl, "cap_drop_all", json_true());
	json_object_set_new(ctl, "read_only_root", json_true());
	json_t *tp = json_array();
	json_array_append_new(tp, json_string("/tmp"));
	json_object_set_new(ctl, "tmpfs_paths", tp);
	json_object_set_new(ctl, "pids_limit", json_integer(ce->pids_limit));
	json_object_set_new(ctl, "memory_limit", json_string(ce->memory_limit));
	json_object_set_new(ctl, "cpu_limit", json_real(ce->cpu_limit));
	json_object_set_new(ctl, "uid", json_integer(ce->required_uid));
	json_object_set_new(ctl, "gid", json_integer(ce->required_gid));
	json_object_set_new(ctl, "docker_socket_mount", json_false());
	json_object_set_new(ctl, "host_network", json_false());
	json_object_set_new(ctl, "privileged", json_false());
	json_object_set_new(ctl, "device_exposure", json_false());
	json_object_set_new(ctl, "host_namespace_sharing", json_false());
	json_object_set_new(ctl, "resource_verification_state",
			    json_string(f->container.verified ? "recorded" : "unavailable"));
	json_object_set_new(ctl, "verified_on", json_string("created-agent-container"));
	json_object_set_new(ctl, "verified_resource_controls",
			    f->container.verified_controls && f->container.verified
				? json_deep_copy(f->container.verified_controls)
				: json_object());
	return ctl;
}

static json_t *ce_environment(const struct ag_run_record *f)
{
	json_t *env = json_object();
	json_object_set_new(env, "state", json_string(f->opts->env ? "recorded" : "unavailable"));
	json_object_set_new(env, "supplied_names",
			    sorted_names(f->opts->env ? &f->opts->env->supplied : NULL));
	json_object_set_new(env, "sensitive_names",
			    sorted_names(f->opts->env ? &f->opts->env->sensitive : NULL));
	json_object_set_new(env, "missing_names",
			    sorted_names(f->opts->env ? &f->opts->env->missing : NULL));
	json_object_set_new(env, "default_names",
			    sorted_names(f->opts->env ? &f->opts->env->defaults : NULL));
	json_object_set_new(env, "values_recorded", json_false());
	return env;
}

static json_t *ce_workspace(const struct ag_run_record *f)
{
	json_t *ws = json_object();
	json_object_set_new(ws, "state",
			    json_string(f->workspace.prepared ? "recorded" : "not_applicable"));
	if (f->workspace.prepared) {
		json_object_set_new(
		    ws, "source_kind",
		    json_string(ag_ws_source_kind_name((&f->workspace.prep)->source_kind)));
		json_object_set_new(ws, "baseline_digest",
				    json_string((&f->workspace.prep)->digest));
		/* what the copy held: the rule and what each rule left out */
		const struct ag_strv *ex = &f->opts->cfg->workspace_exclude;
		json_t *copy = ag_ws_copy_json((&f->workspace.prep), (const char *const *)ex->v,
					       ex->n, f->workspace.exclude_counts, redacted_pattern,
					       (void *)f->opts->redact);
		json_object_set_new(ws, "copy", copy);
		/* the agent's repository AgentGuard wrote into the copy (gitbase.h) */
		const char *bc = f->workspace.prep.git_baseline;
		json_object_set_new(ws, "git",
				    json_pack("{s:s, s:o}", "mode", bc[0] ? "baseline" : "none",
					      "baseline_commit",
					      bc[0] ? json_string(bc) : json_null()));
	}
	json_object_set_new(ws, "agent_mount", json_string(AG_WS_AGENT_MOUNT));
	json_object_set_new(ws, "evidence_mount", json_null());
	json_object_set_new(ws, "evidence_location", json_string("${RUN_ROOT} (never mounted)"));
	json_t *wp = json_array();
	json_array_append_new(wp, json_string("."));
	json_object_set_new(ws, "writable_paths", wp);
	json_object_set_new(ws, "current_digest",
			    mut_of(f) ? json_string(mut_of(f)->current_digest) : json_null());
	json_object_set_new(ws, "changed_files_count",
			    mut_of(f) ? json_integer((json_int_t)mut_of(f)->n) : json_null());
	json_object_set_new(ws, "lifecycle_schema_version", json_integer(1));
	json_object_set_new(ws, "cleanup_status",
			    json_string(ag_run_ws_status_name(f->workspace.status)));
	json_object_set_new(ws, "cleanup_complete",
			    json_boolean(f->workspace.status != AG_RUN_WS_INCOMPLETE &&
					 f->workspace.status != AG_RUN_WS_RETAINED));
	json_object_set_new(ws, "source_unchanged",
			    f->source.checked ? json_boolean(f->source.unchanged) : json_null());
	return ws;
}

static json_t *ce_execution(const struct ag_run_record *f)
{
	json_t *ex = json_object();
	json_object_set_new(ex, "state",
			    json_string(f->exec.executed ? "recorded" : "not_applicable"));
	json_object_set_new(ex, "status",
			    json_string(ag_run_exec_status_name(ag_run_exec_status(f))));
	json_object_set_new(ex, "outcome",
			    ag_json_str_or_null(ag_run_outcome_name(f->exec.outcome)));
	json_object_set_new(
	    ex, "command", command_json(f, AG_RUN_EVIDENCE_ARGV_ITEMS, AG_RUN_EVIDENCE_ARGV_BYTES));
	json_object_set_new(ex, "exit_code",
			    f->exec.executed && f->exec.exit_status >= 0
				? json_integer(f->exec.exit_status)
				: json_null());
	json_object_set_new(ex, "timed_out", json_boolean(f->exec.timed_out));
	/* who held the deadline, and the init's own deadline (run/deadline.h) */
	json_object_set_new(ex, "timeout_enforced_by",
			    f->exec.timeout_enforced_by ? json_string(f->exec.timeout_enforced_by)
							: json_null());
	json_object_set_new(ex, "in_container_deadline_seconds",
			    f->exec.init_deadline_seconds
				? json_integer(f->exec.init_deadline_seconds)
				: json_null());
	json_object_set_new(ex, "cancelled", json_boolean(f->exec.cancelled));
	json_object_set_new(ex, "oom_killed", json_boolean(f->exec.oom_killed));
	json_object_set_new(ex, "duration_seconds", json_real((double)f->exec.ms / 1000.0));
	json_object_set_new(ex, "stdout_truncated", json_boolean(f->exec.stdout_truncated));
	json_object_set_new(ex, "stderr_truncated", json_boolean(f->exec.stderr_truncated));
	return ex;
}

static json_t *ce_cleanup(const struct ag_run_record *f)
{
	json_t *cl = json_object();
	const struct ag_cleanup_result *cr = (&ag_run_agent(f)->cleanup);
	json_object_set_new(cl, "state", json_string("recorded"));
	json_object_set_new(cl, "container_attempted", json_boolean(cr->attempted));
	json_object_set_new(cl, "container_complete",
			    json_boolean(ag_cleanup_state_complete(cr->state)));
	json_object_set_new(cl, "container_status", json_string(ag_cleanup_state_name(cr->state)));
	if (ag_run_agent(f)->id) {
		char h1[17], h2[17], h3[17];
		ag_short_hash(ag_run_agent(f)->id, h1);
		ag_short_hash(f->ledger.container_name, h2);
		ag_short_hash(f->ledger.suffix, h3);
		json_t *id = json_pack("{s:s, s:s, s:s}", "id_sha256", h1, "name_sha256", h2,
				       "owner_label_sha256", h3);
		if (f->container.bound_image_id)
			json_object_set_new(id, "image_id",
					    json_string(f->container.bound_image_id));
		json_object_set_new(cl, "container_identity", id);
	} else {
		json_object_set_new(cl, "container_identity", json_null());
	}
	json_object_set_new(cl, "liveness_verified",
			    cr->state == AG_CLEANUP_NOT_CREATED
				? json_null()
				: json_boolean(cr->liveness_verified));
	json_object_set_new(cl, "workspace_complete",
			    json_boolean(f->workspace.status != AG_RUN_WS_INCOMPLETE &&
					 f->workspace.status != AG_RUN_WS_RETAINED));
	json_object_set_new(cl, "workspace_status",
			    json_string(ag_run_ws_status_name(f->workspace.status)));
	json_object_set_new(cl, "residue_this_run",
			    f->ledger.residue_after_ok
				? json_integer((json_int_t)f->ledger.residue_ours_after)
				: json_null());
	json_object_set_new(cl, "overall_complete", json_boolean(f->ledger.cleanup_complete));
	return cl;
}

static json_t *ce_notes(const struct ag_run_record *f)
{
	json_t *notes = json_array();
	json_array_append_new(notes, json_string("Docker argv, raw Docker stdout/stderr, secret "
						 "values, and private host roots are omitted."));
	json_array_append_new(notes, json_string("Docker is application-level containment, not a "
						 "VM or syscall boundary."));
	if (pf_of(f) && pf_of(f)->claim == AG_PF_CLAIM_DESKTOP_REDUCED)
		json_array_append_new(notes, json_string("Docker Desktop carries reduced claims: a "
							 "desktop-managed VM sits between host "
							 "and container."));
	return notes;
}

static json_t *mutations_json(const struct ag_run_record *f, json_t **diff_summary)
{
	json_t *m = json_object();
	json_t *mod = json_array(), *add = json_array(), *del = json_array(), *ren = json_array(),
	       *changed = json_array();
	const struct ag_ws_mutations *mu = mut_of(f);
	/* worst wins: unavailable > binary > incomplete > exact (upstream 3.5) */
	const char *line_status = ag_checks_line_status(mu);
	for (size_t i = 0; mu && i < mu->n; i++) {
		const struct ag_ws_change *c = &mu->v[i];
		bool listed = i < AG_RUN_CHANGED_LIST_MAX;
		if (!listed)
			continue;
		switch (c->kind) {
		case AG_WS_MODIFIED:
			json_array_append_new(mod, rpath(f->opts->redact, c->path));
			json_array_append_new(changed, rpath(f->opts->redact, c->path));
			break;
		case AG_WS_ADDED:
			json_array_append_new(add, rpath(f->opts->redact, c->path));
			json_array_append_new(changed, rpath(f->opts->redact, c->path));
			break;
		case AG_WS_DELETED:
			json_array_append_new(del, rpath(f->opts->redact, c->path));
			json_array_append_new(changed, rpath(f->opts->redact, c->path));
			break;
		case AG_WS_RENAMED:
		default: {
			json_t *r = json_object();
			json_object_set_new(r, "source_path", rpath(f->opts->redact, c->old_path));
			json_object_set_new(r, "destination_path", rpath(f->opts->redact, c->path));
			json_object_set_new(r, "change_type", json_string("renamed"));
			json_array_append_new(ren, r);
			json_array_append_new(changed, rpath(f->opts->redact, c->old_path));
			json_array_append_new(changed, rpath(f->opts->redact, c->path));
			break;
		}
		}
	}
	json_object_set_new(m, "state", json_string(mu ? "recorded" : "unavailable"));
	json_object_set_new(m, "modified_files", mod);
	json_object_set_new(m, "added_files", add);
	json_object_set_new(m, "deleted_files", del);
	json_object_set_new(m, "renamed_files", ren);
	json_object_set_new(m, "changed_files", changed);
	json_object_set_new(m, "changed_files_total",
			    mu ? json_integer((json_int_t)mu->n) : json_null());
	json_object_set_new(m, "changed_files_listed_complete",
			    json_boolean(!mu || mu->n <= AG_RUN_CHANGED_LIST_MAX));
	json_object_set_new(m, "baseline_digest",
			    mu ? json_string(mu->baseline_digest) : json_null());
	json_object_set_new(m, "current_digest",
			    mu ? json_string(mu->current_digest) : json_null());

	json_t *d = json_object();
	json_object_set_new(d, "files_changed", mu ? json_integer((json_int_t)mu->n) : json_null());
	json_object_set_new(d, "lines_added",
			    mu ? json_integer((json_int_t)mu->lines_added) : json_null());
	json_object_set_new(d, "lines_deleted",
			    mu ? json_integer((json_int_t)mu->lines_deleted) : json_null());
	json_object_set_new(d, "line_count_status", json_string(line_status));
	json_object_set_new(d, "line_count_complete", json_boolean(mu && mu->lines_complete));
	json_object_set_new(d, "unified_diff_status", json_string("not_recorded"));
	*diff_summary = d;
	return m;
}

/* The patch record: sealed with the artifact, so its hash seals the patch. */
static json_t *patch_json(const struct ag_run_patch *p)
{
	bool w = p && p->status == AG_RUN_PATCH_WRITTEN;
	return json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "status",
			 ag_run_patch_status_name(p ? p->status : AG_RUN_PATCH_NOT_CAPTURED),
			 "file", w ? json_string(AG_RUN_PATCH_FILE) : json_null(), "sha256",
			 w ? json_string(p->sha256) : json_null(), "bytes",
			 w ? json_integer((json_int_t)p->bytes) : json_null(), "files",
			 (json_int_t)(p ? p->files : 0), "binary_files",
			 (json_int_t)(p ? p->binary : 0), "directories_skipped",
			 (json_int_t)(p ? p->dirs_skipped : 0), "reason",
			 p && p->reason ? json_string(p->reason) : json_null());
}

/* What the agent's command did (null when it never ran). */
static json_t *command_result_json(const struct ag_run_record *f)
{
	const struct ag_config *c = f->opts->cfg;
	if (!f->exec.executed)
		return json_null();
	json_t *cr = json_object();
	json_object_set_new(cr, "command", json_string("contained-run"));
	json_object_set_new(cr, "outcome",
			    ag_json_str_or_null(ag_run_outcome_name(f->exec.outcome)));
	/* null when AgentGuard stopped the container (timeout, cancel) */
	json_object_set_new(cr, "exit_code",
			    f->exec.exit_status >= 0 ? json_integer(f->exec.exit_status)
						     : json_null());
	/* Already redacted and bounded by the run; keep its newlines. */
	json_object_set_new(cr, "stdout",
			    rstr_flags(f->opts->redact,
				       f->exec.stdout_text ? f->exec.stdout_text : "",
				       AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES, AG_REDACT_KEEP_NEWLINES));
	json_object_set_new(cr, "stderr",
			    rstr_flags(f->opts->redact,
				       f->exec.stderr_text ? f->exec.stderr_text : "",
				       AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES, AG_REDACT_KEEP_NEWLINES));
	/* What the agent wrote; stdout/stderr above may hold less (*_truncated). */
	json_object_set_new(cr, "stdout_bytes", json_integer((json_int_t)f->exec.stdout_bytes));
	json_object_set_new(cr, "stderr_bytes", json_integer((json_int_t)f->exec.stderr_bytes));
	json_object_set_new(cr, "duration_seconds", json_real((double)f->exec.ms / 1000.0));
	json_object_set_new(cr, "timed_out", json_boolean(f->exec.timed_out));
	json_object_set_new(cr, "cancelled", json_boolean(f->exec.cancelled));
	json_object_set_new(cr, "oom_killed", json_boolean(f->exec.oom_killed));
	json_object_set_new(cr, "stdout_truncated", json_boolean(f->exec.stdout_truncated));
	json_object_set_new(cr, "stderr_truncated", json_boolean(f->exec.stderr_truncated));
	json_object_set_new(cr, "docker_image", rstr(f->opts->redact, c->sandbox.image, 512));
	return cr;
}

/* The study's own facts (study.h), sealed with the artifact (manifest hash included). */
static json_t *study_json(const struct ag_run_record *f)
{
	const struct ag_run_study *s = &f->study;
	const struct ag_ledger *l = &f->ledger.objects;
	json_t *o = json_object();
	json_object_set_new(o, "trial_id", json_string(s->trial_id));
	json_object_set_new(o, "policy_digest", json_string(s->policy_digest));
	json_object_set_new(o, "gateway_image", json_string(s->gateway_image));
	json_object_set_new(o, "topology_verified", json_boolean(s->setup_done && s->verified));
	json_object_set_new(o, "self_tests",
			    s->selftest ? json_deep_copy(s->selftest) : json_null());
	json_object_set_new(o, "gateway_state", ag_json_str_or_null(s->gateway_state));
	json_object_set_new(o, "gateway_stream_complete", json_boolean(s->stream_complete));
	json_object_set_new(o, "events", json_integer((json_int_t)s->events));
	json_object_set_new(o, "denied", json_integer((json_int_t)s->denied));
	json_object_set_new(o, "sampled_out", json_integer((json_int_t)s->sampled_out));
	if (s->env_additions)
		json_object_set(o, "agent_environment_additions", s->env_additions);
	json_object_set_new(o, "injection",
			    s->injection ? json_deep_copy(s->injection) : json_null());
	/* The gateway's own files as kept (redacted): sealed by hash and length. */
	const struct ag_run_study_file *files[] = {&s->stream_file, &s->aggregates_file};
	const char *names[] = {"gateway_stream", "gateway_aggregates"};
	const char *paths[] = {AG_STUDY_DIR "/" AG_STUDY_EVENTS_FILE,
			       AG_STUDY_DIR "/" AG_STUDY_AGGREGATES_FILE};
	for (size_t i = 0; i < 2; i++)
		json_object_set_new(o, names[i],
				    files[i]->present
					? json_pack("{s:s, s:s, s:I}", "file", paths[i], "sha256",
						    files[i]->sha256, "bytes",
						    (json_int_t)files[i]->bytes)
					: json_null());
	/* The study's objects are entries of the run's ledger: each word is its
	 * entry's cleanup; an object never entered was never made (or, the
	 * outbound network, is the operator's). */
	json_object_set_new(
	    o, "cleanup",
	    json_pack("{s:s, s:s, s:s, s:s}", "gateway",
		      ag_study_object_word(l, AG_RUN_ROLE_GATEWAY, "not_created"), "probe",
		      ag_study_object_word(l, AG_RUN_ROLE_STUDY_PROBE, "not_created"),
		      "study_network",
		      ag_study_object_word(l, AG_RUN_ROLE_STUDY_NETWORK, "not_created"),
		      "outbound_network",
		      ag_study_object_word(l, AG_RUN_ROLE_OUTBOUND_NETWORK, "not_owned")));
	/* The host bridge devices of the networks AgentGuard made (br-<12 hex>):
	 * the names anyone can check are gone. */
	json_t *br = json_array();
	const char *roles[] = {AG_RUN_ROLE_STUDY_NETWORK, AG_RUN_ROLE_OUTBOUND_NETWORK};
	for (size_t i = 0; i < 2; i++) {
		const struct ag_ledger_entry *e = ag_ledger_find(l, roles[i]);
		if (e && e->id)
			json_array_append_new(br, json_sprintf("br-%.12s", e->id));
	}
	json_object_set_new(o, "bridges", br);
	json_object_set_new(o, "manifest",
			    s->manifest_written ? json_string(AG_EGRESS_MANIFEST_FILE)
						: json_null());
	json_object_set_new(o, "manifest_sha256",
			    s->manifest_written ? json_string(s->manifest_sha) : json_null());
	json_object_set_new(o, "completion", ag_json_str_or_null(s->completion));
	json_object_set_new(o, "completion_reason", ag_json_str_or_null(s->completion_reason));
	return o;
}

json_t *ag_run_artifact_build(const struct ag_run_record *f)
{
	const struct ag_config *c = f->opts->cfg;
	json_t *a = json_object();
	json_object_set_new(a, "schema", json_string("agentguard.contained-run"));
	json_object_set_new(a, "schema_version", json_integer(1));
	json_object_set_new(a, "tool",
			    json_pack("{s:s, s:s}", "name", "agentguard", "version", AG_VERSION));
	json_object_set_new(a, "task_id", json_string(c->task_id));
	json_object_set_new(a, "run_id", json_string(f->run_id));
	json_object_set_new(a, "result", json_string(f->result.pass ? "PASS" : "FAIL"));
	/* A run whose agent never started has no score (null), not 0 or 100. */
	json_object_set_new(a, "score",
			    checks_of(f) && f->exec.agent_started
				? json_integer(checks_of(f)->score)
				: json_null());
	json_object_set_new(a, "exit_code", json_integer(f->result.exit_code));
	json_object_set_new(a, "duration_seconds",
			    json_real((double)f->result.duration_ms / 1000.0));
	json_object_set_new(a, "config_path", json_string("${CONFIG_PATH}"));
	json_object_set_new(a, "source_dir", json_string("${REPOSITORY_ROOT}"));
	json_object_set_new(a, "run_dir", json_string("${RUN_ROOT}"));
	json_object_set_new(
	    a, "command", command_json(f, AG_RUN_ARTIFACT_ARGV_ITEMS, AG_RUN_ARTIFACT_ARGV_BYTES));
	json_object_set_new(a, "preflight",
			    pf_of(f) && pf_of(f)->evidence ? json_deep_copy(pf_of(f)->evidence)
							   : json_null());
	json_object_set_new(a, "containment_evidence", containment_evidence(f));

	json_t *env = json_object();
	json_object_set_new(env, "supplied",
			    strv_json(f->opts->env ? &f->opts->env->supplied : NULL, 64));
	json_object_set_new(env, "sensitive",
			    sorted_names(f->opts->env ? &f->opts->env->sensitive : NULL));
	json_object_set_new(env, "missing",
			    sorted_names(f->opts->env ? &f->opts->env->missing : NULL));
	json_object_set_new(env, "defaults",
			    sorted_names(f->opts->env ? &f->opts->env->defaults : NULL));
	json_object_set_new(a, "environment", env);

	json_object_set_new(a, "command_result", command_result_json(f));

	json_t *diff = NULL;
	json_object_set_new(a, "mutations", mutations_json(f, &diff));
	json_object_set_new(a, "diff_summary", diff);
	json_object_set_new(a, "patch", patch_json(patch_of(f)));

	/* post-execution policy checks (src/lib/policy/checks.c, docs/checks.md) */
	json_object_set_new(a, "checks",
			    checks_of(f) ? ag_checks_json(checks_of(f), f->opts->redact)
					 : json_array());

	json_t *res = json_object();
	json_object_set_new(res, "before_count",
			    f->ledger.residue_before_ok
				? json_integer((json_int_t)f->ledger.residue_before)
				: json_null());
	json_object_set_new(res, "after_count",
			    f->ledger.residue_after_ok
				? json_integer((json_int_t)f->ledger.residue_after)
				: json_null());
	json_object_set_new(res, "this_run_after",
			    f->ledger.residue_after_ok
				? json_integer((json_int_t)f->ledger.residue_ours_after)
				: json_null());
	json_object_set_new(a, "residue", res);
	json_object_set_new(
	    a, "daemon_fingerprint",
	    json_pack("{s:b, s:o}", "checked", f->container.fingerprint_checked, "unchanged",
		      f->container.fingerprint_checked ? json_boolean(f->container.fingerprint_same)
						       : json_null()));
	json_t *si = json_object();
	json_object_set_new(si, "checked", json_boolean(f->source.checked));
	json_object_set_new(si, "source_unchanged",
			    f->source.checked ? json_boolean(f->source.unchanged) : json_null());
	json_t *dp = json_array();
	for (size_t i = 0; i < f->source.diff.n; i++)
		json_array_append_new(dp, rstr(f->opts->redact, f->source.diff.v[i], 1024));
	json_object_set_new(si, "differing_paths", dp);
	json_object_set_new(si, "differing_total", json_integer((json_int_t)f->source.diff_total));
	json_object_set_new(si, "reason",
			    f->source.reason ? json_string(f->source.reason) : json_null());
	json_object_set_new(a, "source_integrity", si);

	const struct ag_cleanup_result *cr = (&ag_run_agent(f)->cleanup);
	json_t *cl = json_object();
	json_object_set_new(cl, "attempted", json_boolean(cr->attempted));
	json_object_set_new(cl, "complete", json_boolean(ag_cleanup_state_complete(cr->state)));
	json_object_set_new(cl, "status", json_string(ag_cleanup_state_name(cr->state)));
	json_object_set_new(cl, "message", json_string(cr->message ? cr->message : ""));
	json_object_set_new(cl, "liveness_verified", json_boolean(cr->liveness_verified));
	json_object_set_new(cl, "workspace_status",
			    json_string(ag_run_ws_status_name(f->workspace.status)));
	json_object_set_new(cl, "workspace_complete",
			    json_boolean(f->workspace.status != AG_RUN_WS_INCOMPLETE &&
					 f->workspace.status != AG_RUN_WS_RETAINED));
	json_object_set_new(a, "cleanup", cl);
	json_object_set_new(a, "cleanup_complete", json_boolean(f->ledger.cleanup_complete));
	if (f->failure.stage)
		json_object_set_new(a, "failure",
				    json_pack("{s:s, s:i, s:s, s:o}", "stage", f->failure.stage,
					      "exit_code", f->result.exit_code, "reason",
					      f->failure.reason ? f->failure.reason : "", "message",
					      rstr(f->opts->redact, f->failure.message, 512)));
	else
		json_object_set_new(a, "failure", json_null());
	if (f->failure.cleanup_reason)
		json_object_set_new(
		    a, "cleanup_failure",
		    json_pack("{s:s, s:i, s:s, s:o}", "stage", "cleanup", "exit_code", 8, "reason",
			      f->failure.cleanup_reason, "message",
			      rstr(f->opts->redact, f->failure.cleanup_message, 512)));
	else
		json_object_set_new(a, "cleanup_failure", json_null());
	if (f->study.present)
		json_object_set_new(a, "study_egress", study_json(f));
	return a;
}
