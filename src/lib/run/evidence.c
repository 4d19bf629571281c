#include "lib/base/ag.h"
#include "lib/run/evidence.h"
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
static json_t *command_json(const struct ag_run_facts *f, size_t max_items, size_t max_bytes)
{
	json_t *a = json_array();
	size_t used = 0;
	for (size_t i = 0; i < f->argc; i++) {
		/* argv-level: a credential flag's value goes whatever the secret set holds */
		char *t = ag_redact_argv_item(f->redact, f->argv, f->argc, i, EVIDENCE_STRING_MAX);
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

static bool claim_known(const struct ag_run_facts *f)
{
	return f->pf && ag_preflight_passed(f->pf);
}

static json_t *containment_evidence(const struct ag_run_facts *f)
{
	const struct ag_config *c = f->config;
	const struct ag_contained *ce = &c->contained;
	json_t *ev = json_object();
	json_object_set_new(ev, "schema", json_string("agentguard.containment-evidence"));
	json_object_set_new(ev, "schema_version", json_integer(1));
	json_object_set_new(ev, "execution_mode", json_string("contained-run"));
	json_object_set_new(ev, "state", json_string("recorded"));
	json_object_set_new(ev, "security_claim_level",
			    json_string(f->pf ? ag_pf_claim_name(f->pf->claim) : "none"));

	json_t *req = json_object();
	json_object_set_new(req, "state", json_string("recorded"));
	json_object_set_new(req, "platform", json_string(ag_platform_name(ce->platform)));
	json_object_set_new(req, "network", json_string(ag_network_name(ce->network)));
	json_object_set_new(req, "image_provenance", json_string("digest-required"));
	json_object_set_new(req, "configured_image", rstr(f->redact, c->sandbox.image, 256));
	json_object_set_new(
	    req, "command",
	    command_json(f, AG_RUN_EVIDENCE_ARGV_ITEMS, AG_RUN_EVIDENCE_ARGV_BYTES));
	json_object_set_new(req, "source_dir", json_string("${REPOSITORY_ROOT}"));
	json_object_set_new(req, "run_dir", json_string("${RUN_ROOT}"));
	json_object_set_new(ev, "requested", req);

	json_t *pf = json_object();
	if (f->pf) {
		const json_t *checks = json_object_get(f->pf->evidence, "checks");
		size_t total = json_array_size(checks), passed = 0;
		for (size_t i = 0; i < total; i++)
			if (json_is_true(json_object_get(json_array_get(checks, i), "passed")))
				passed++;
		json_object_set_new(pf, "state", json_string("recorded"));
		json_object_set_new(pf, "status", json_string(ag_pf_status_name(f->pf->status)));
		json_object_set_new(pf, "claim_level", json_string(ag_pf_claim_name(f->pf->claim)));
		json_object_set_new(pf, "reduced_claim",
				    json_boolean(f->pf->claim == AG_PF_CLAIM_DESKTOP_REDUCED));
		json_object_set_new(pf, "checks_total", json_integer((json_int_t)total));
		json_object_set_new(pf, "checks_passed", json_integer((json_int_t)passed));
		json_object_set_new(pf, "approved_boundary_constructible",
				    json_boolean(ag_preflight_passed(f->pf)));
	} else {
		json_object_set_new(pf, "state", json_string("unavailable"));
		json_object_set_new(pf, "status", json_string("unknown"));
	}
	json_object_set_new(ev, "preflight", pf);

	json_t *img = json_object();
	json_object_set_new(img, "state", json_string(claim_known(f) ? "recorded" : "unavailable"));
	json_object_set_new(img, "configured_reference", rstr(f->redact, c->sandbox.image, 256));
	json_object_set_new(img, "registry_digest",
			    f->pf && f->pf->registry_digest
				? rstr(f->redact, f->pf->registry_digest, 512)
				: json_null());
	json_object_set_new(img, "local_image_id",
			    f->pf && f->pf->local_image_id ? json_string(f->pf->local_image_id)
							   : json_null());
	json_object_set_new(img, "container_bound_image_id",
			    f->bound_image_id ? json_string(f->bound_image_id) : json_null());
	bool bound_match = f->bound_image_id && f->pf && f->pf->local_image_id &&
			   strcmp(f->bound_image_id, f->pf->local_image_id) == 0;
	json_object_set_new(img, "identity_consistent",
			    f->bound_image_id ? json_boolean(bound_match) : json_null());
	/*
	 * The image's own metadata, overridden by the run but recorded: its
	 * ENTRYPOINT as a fact (present, SHA-256 of its JSON: never the text)
	 * and its ENV names (never values), which do reach the agent.
	 */
	const struct ag_image_facts *im =
	    f->pf && f->pf->image.metadata_known ? &f->pf->image : NULL;
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
	json_object_set_new(img, "cache_status",
			    json_string(f->pf && f->pf->local_image_id ? "present" : "unknown"));
	json_object_set_new(ev, "image", img);

	json_t *ctl = json_object();
	json_object_set_new(ctl, "state", json_string(f->verified ? "recorded" : "unavailable"));
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
			    json_string(f->verified ? "recorded" : "unavailable"));
	json_object_set_new(ctl, "verified_on", json_string("created-agent-container"));
	json_object_set_new(ctl, "verified_resource_controls",
			    f->verified_controls && f->verified
				? json_deep_copy(f->verified_controls)
				: json_object());
	json_object_set_new(ev, "controls", ctl);

	json_t *env = json_object();
	json_object_set_new(env, "state", json_string(f->env ? "recorded" : "unavailable"));
	json_object_set_new(env, "supplied_names", sorted_names(f->env ? &f->env->supplied : NULL));
	json_object_set_new(env, "sensitive_names",
			    sorted_names(f->env ? &f->env->sensitive : NULL));
	json_object_set_new(env, "missing_names", sorted_names(f->env ? &f->env->missing : NULL));
	json_object_set_new(env, "default_names", sorted_names(f->env ? &f->env->defaults : NULL));
	json_object_set_new(env, "values_recorded", json_false());
	json_object_set_new(ev, "environment", env);

	json_t *ws = json_object();
	json_object_set_new(ws, "state",
			    json_string(f->ws_prepared ? "recorded" : "not_applicable"));
	if (f->ws_prepared) {
		json_object_set_new(ws, "source_kind",
				    json_string(ag_ws_source_kind_name(f->prep->source_kind)));
		json_object_set_new(ws, "baseline_digest", json_string(f->prep->digest));
		/* what the copy held: the rule and what each rule left out */
		const struct ag_strv *ex = &f->config->workspace_exclude;
		json_t *copy =
		    ag_ws_copy_json(f->prep, (const char *const *)ex->v, ex->n,
				    f->ws_exclude_counts, redacted_pattern, (void *)f->redact);
		json_object_set_new(ws, "copy", copy);
	}
	json_object_set_new(ws, "agent_mount", json_string(AG_WS_AGENT_MOUNT));
	json_object_set_new(ws, "evidence_mount", json_null());
	json_object_set_new(ws, "evidence_location", json_string("${RUN_ROOT} (never mounted)"));
	json_t *wp = json_array();
	json_array_append_new(wp, json_string("."));
	json_object_set_new(ws, "writable_paths", wp);
	json_object_set_new(ws, "current_digest",
			    f->mut ? json_string(f->mut->current_digest) : json_null());
	json_object_set_new(ws, "changed_files_count",
			    f->mut ? json_integer((json_int_t)f->mut->n) : json_null());
	json_object_set_new(ws, "lifecycle_schema_version", json_integer(1));
	json_object_set_new(ws, "cleanup_status", json_string(f->ws_status));
	json_object_set_new(ws, "cleanup_complete",
			    json_boolean(strcmp(f->ws_status, "incomplete") != 0 &&
					 strcmp(f->ws_status, "retained") != 0));
	json_object_set_new(ws, "source_unchanged",
			    f->source_checked ? json_boolean(f->source_unchanged) : json_null());
	json_object_set_new(ev, "workspace", ws);

	json_t *ex = json_object();
	const char *status = f->stage && strcmp(f->stage, "preflight") == 0 && !f->executed
				 ? "preflight_blocked"
			     : f->policy_blocked ? "policy_blocked"
			     : f->executed	 ? "executed"
						 : "skipped";
	json_object_set_new(ex, "state", json_string(f->executed ? "recorded" : "not_applicable"));
	json_object_set_new(ex, "status", json_string(status));
	json_object_set_new(ex, "outcome", f->outcome ? json_string(f->outcome) : json_null());
	json_object_set_new(
	    ex, "command", command_json(f, AG_RUN_EVIDENCE_ARGV_ITEMS, AG_RUN_EVIDENCE_ARGV_BYTES));
	json_object_set_new(ex, "exit_code",
			    f->executed && f->exit_status >= 0 ? json_integer(f->exit_status)
							       : json_null());
	json_object_set_new(ex, "timed_out", json_boolean(f->timed_out));
	/* who held the deadline, and the init's own deadline (run/deadline.h) */
	json_object_set_new(ex, "timeout_enforced_by",
			    f->timeout_enforced_by ? json_string(f->timeout_enforced_by)
						   : json_null());
	json_object_set_new(ex, "in_container_deadline_seconds",
			    f->init_deadline_seconds ? json_integer(f->init_deadline_seconds)
						     : json_null());
	json_object_set_new(ex, "cancelled", json_boolean(f->cancelled));
	json_object_set_new(ex, "oom_killed", json_boolean(f->oom_killed));
	json_object_set_new(ex, "duration_seconds", json_real((double)f->exec_ms / 1000.0));
	json_object_set_new(ex, "stdout_truncated", json_boolean(f->stdout_truncated));
	json_object_set_new(ex, "stderr_truncated", json_boolean(f->stderr_truncated));
	json_object_set_new(ev, "execution", ex);

	json_t *cl = json_object();
	const struct ag_cleanup_result *cr = f->cleanup;
	json_object_set_new(cl, "state", json_string("recorded"));
	json_object_set_new(cl, "container_attempted", json_boolean(cr->attempted));
	json_object_set_new(cl, "container_complete",
			    json_boolean(ag_cleanup_state_complete(cr->state)));
	json_object_set_new(cl, "container_status", json_string(ag_cleanup_state_name(cr->state)));
	if (f->container_id) {
		char h1[17], h2[17], h3[17];
		ag_short_hash(f->container_id, h1);
		ag_short_hash(f->container_name, h2);
		ag_short_hash(f->owner_label, h3);
		json_t *id = json_pack("{s:s, s:s, s:s}", "id_sha256", h1, "name_sha256", h2,
				       "owner_label_sha256", h3);
		if (f->bound_image_id)
			json_object_set_new(id, "image_id", json_string(f->bound_image_id));
		json_object_set_new(cl, "container_identity", id);
	} else {
		json_object_set_new(cl, "container_identity", json_null());
	}
	json_object_set_new(cl, "liveness_verified",
			    cr->state == AG_CLEANUP_NOT_CREATED
				? json_null()
				: json_boolean(cr->liveness_verified));
	json_object_set_new(cl, "workspace_complete",
			    json_boolean(strcmp(f->ws_status, "incomplete") != 0 &&
					 strcmp(f->ws_status, "retained") != 0));
	json_object_set_new(cl, "workspace_status", json_string(f->ws_status));
	json_object_set_new(cl, "residue_this_run",
			    f->residue_after_ok ? json_integer((json_int_t)f->residue_ours_after)
						: json_null());
	json_object_set_new(cl, "overall_complete", json_boolean(f->cleanup_complete));
	json_object_set_new(ev, "cleanup", cl);

	json_t *notes = json_array();
	json_array_append_new(notes, json_string("Docker argv, raw Docker stdout/stderr, secret "
						 "values, and private host roots are omitted."));
	json_array_append_new(notes, json_string("Docker is application-level containment, not a "
						 "VM or syscall boundary."));
	if (f->pf && f->pf->claim == AG_PF_CLAIM_DESKTOP_REDUCED)
		json_array_append_new(notes, json_string("Docker Desktop carries reduced claims: a "
							 "desktop-managed VM sits between host "
							 "and container."));
	json_object_set_new(ev, "notes", notes);
	return ev;
}

static json_t *mutations_json(const struct ag_run_facts *f, json_t **diff_summary)
{
	json_t *m = json_object();
	json_t *mod = json_array(), *add = json_array(), *del = json_array(), *ren = json_array(),
	       *changed = json_array();
	const struct ag_ws_mutations *mu = f->mut;
	/* worst wins: unavailable > binary > incomplete > exact (upstream 3.5) */
	const char *line_status = ag_checks_line_status(mu);
	for (size_t i = 0; mu && i < mu->n; i++) {
		const struct ag_ws_change *c = &mu->v[i];
		bool listed = i < AG_RUN_CHANGED_LIST_MAX;
		if (!listed)
			continue;
		switch (c->kind) {
		case AG_WS_MODIFIED:
			json_array_append_new(mod, rpath(f->redact, c->path));
			json_array_append_new(changed, rpath(f->redact, c->path));
			break;
		case AG_WS_ADDED:
			json_array_append_new(add, rpath(f->redact, c->path));
			json_array_append_new(changed, rpath(f->redact, c->path));
			break;
		case AG_WS_DELETED:
			json_array_append_new(del, rpath(f->redact, c->path));
			json_array_append_new(changed, rpath(f->redact, c->path));
			break;
		case AG_WS_RENAMED:
		default: {
			json_t *r = json_object();
			json_object_set_new(r, "source_path", rpath(f->redact, c->old_path));
			json_object_set_new(r, "destination_path", rpath(f->redact, c->path));
			json_object_set_new(r, "change_type", json_string("renamed"));
			json_array_append_new(ren, r);
			json_array_append_new(changed, rpath(f->redact, c->old_path));
			json_array_append_new(changed, rpath(f->redact, c->path));
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
	bool w = p && strcmp(p->status, "written") == 0;
	return json_pack(
	    "{s:s, s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "status", p ? p->status : "not_captured",
	    "file", w ? json_string(AG_RUN_PATCH_FILE) : json_null(), "sha256",
	    w ? json_string(p->sha256) : json_null(), "bytes",
	    w ? json_integer((json_int_t)p->bytes) : json_null(), "files",
	    (json_int_t)(p ? p->files : 0), "binary_files", (json_int_t)(p ? p->binary : 0),
	    "directories_skipped", (json_int_t)(p ? p->dirs_skipped : 0), "reason",
	    p && p->reason ? json_string(p->reason) : json_null());
}

json_t *ag_run_artifact_build(const struct ag_run_facts *f)
{
	const struct ag_config *c = f->config;
	json_t *a = json_object();
	json_object_set_new(a, "schema", json_string("agentguard.contained-run"));
	json_object_set_new(a, "schema_version", json_integer(1));
	json_object_set_new(a, "tool",
			    json_pack("{s:s, s:s}", "name", "agentguard", "version", AG_VERSION));
	json_object_set_new(a, "task_id", json_string(c->task_id));
	json_object_set_new(a, "run_id", json_string(f->run_id));
	json_object_set_new(a, "result", json_string(f->pass ? "PASS" : "FAIL"));
	/* A run whose agent never started has no score (null), not 0 or 100. */
	json_object_set_new(a, "score",
			    f->checks && f->agent_started ? json_integer(f->checks->score)
							  : json_null());
	json_object_set_new(a, "exit_code", json_integer(f->exit_code));
	json_object_set_new(a, "duration_seconds", json_real((double)f->duration_ms / 1000.0));
	json_object_set_new(a, "config_path", json_string("${CONFIG_PATH}"));
	json_object_set_new(a, "source_dir", json_string("${REPOSITORY_ROOT}"));
	json_object_set_new(a, "run_dir", json_string("${RUN_ROOT}"));
	json_object_set_new(
	    a, "command", command_json(f, AG_RUN_ARTIFACT_ARGV_ITEMS, AG_RUN_ARTIFACT_ARGV_BYTES));
	json_object_set_new(a, "preflight",
			    f->pf && f->pf->evidence ? json_deep_copy(f->pf->evidence)
						     : json_null());
	json_object_set_new(a, "containment_evidence", containment_evidence(f));

	json_t *env = json_object();
	json_object_set_new(env, "supplied", strv_json(f->env ? &f->env->supplied : NULL, 64));
	json_object_set_new(env, "sensitive", sorted_names(f->env ? &f->env->sensitive : NULL));
	json_object_set_new(env, "missing", sorted_names(f->env ? &f->env->missing : NULL));
	json_object_set_new(env, "defaults", sorted_names(f->env ? &f->env->defaults : NULL));
	json_object_set_new(a, "environment", env);

	if (f->executed) {
		json_t *cr = json_object();
		json_object_set_new(cr, "command", json_string("contained-run"));
		json_object_set_new(cr, "outcome",
				    f->outcome ? json_string(f->outcome) : json_null());
		/* null when AgentGuard stopped the container (timeout, cancel) */
		json_object_set_new(cr, "exit_code",
				    f->exit_status >= 0 ? json_integer(f->exit_status)
							: json_null());
		/* Already redacted and bounded by the run; keep its newlines. */
		json_object_set_new(cr, "stdout",
				    rstr_flags(f->redact, f->stdout_text ? f->stdout_text : "",
					       AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES,
					       AG_REDACT_KEEP_NEWLINES));
		json_object_set_new(cr, "stderr",
				    rstr_flags(f->redact, f->stderr_text ? f->stderr_text : "",
					       AG_RUN_ARTIFACT_OUTPUT_MAX_BYTES,
					       AG_REDACT_KEEP_NEWLINES));
		/* What the agent wrote; stdout/stderr above may hold less (*_truncated). */
		json_object_set_new(cr, "stdout_bytes", json_integer((json_int_t)f->stdout_bytes));
		json_object_set_new(cr, "stderr_bytes", json_integer((json_int_t)f->stderr_bytes));
		json_object_set_new(cr, "duration_seconds", json_real((double)f->exec_ms / 1000.0));
		json_object_set_new(cr, "timed_out", json_boolean(f->timed_out));
		json_object_set_new(cr, "cancelled", json_boolean(f->cancelled));
		json_object_set_new(cr, "oom_killed", json_boolean(f->oom_killed));
		json_object_set_new(cr, "stdout_truncated", json_boolean(f->stdout_truncated));
		json_object_set_new(cr, "stderr_truncated", json_boolean(f->stderr_truncated));
		json_object_set_new(cr, "docker_image", rstr(f->redact, c->sandbox.image, 512));
		json_object_set_new(a, "command_result", cr);
	} else {
		json_object_set_new(a, "command_result", json_null());
	}

	json_t *diff = NULL;
	json_object_set_new(a, "mutations", mutations_json(f, &diff));
	json_object_set_new(a, "diff_summary", diff);
	json_object_set_new(a, "patch", patch_json(f->patch));

	/* post-execution policy checks (src/lib/policy/checks.c, docs/checks.md) */
	json_object_set_new(a, "checks",
			    f->checks ? ag_checks_json(f->checks, f->redact) : json_array());

	json_t *res = json_object();
	json_object_set_new(res, "before_count",
			    f->residue_before_ok ? json_integer((json_int_t)f->residue_before)
						 : json_null());
	json_object_set_new(res, "after_count",
			    f->residue_after_ok ? json_integer((json_int_t)f->residue_after)
						: json_null());
	json_object_set_new(res, "this_run_after",
			    f->residue_after_ok ? json_integer((json_int_t)f->residue_ours_after)
						: json_null());
	json_object_set_new(a, "residue", res);
	json_object_set_new(
	    a, "daemon_fingerprint",
	    json_pack("{s:b, s:o}", "checked", f->fingerprint_checked, "unchanged",
		      f->fingerprint_checked ? json_boolean(f->fingerprint_same) : json_null()));
	json_t *si = json_object();
	json_object_set_new(si, "checked", json_boolean(f->source_checked));
	json_object_set_new(si, "source_unchanged",
			    f->source_checked ? json_boolean(f->source_unchanged) : json_null());
	json_t *dp = json_array();
	for (size_t i = 0; f->source_diff && i < f->source_diff->n; i++)
		json_array_append_new(dp, rstr(f->redact, f->source_diff->v[i], 1024));
	json_object_set_new(si, "differing_paths", dp);
	json_object_set_new(si, "differing_total", json_integer((json_int_t)f->source_diff_total));
	json_object_set_new(si, "reason",
			    f->source_reason ? json_string(f->source_reason) : json_null());
	json_object_set_new(a, "source_integrity", si);

	const struct ag_cleanup_result *cr = f->cleanup;
	json_t *cl = json_object();
	json_object_set_new(cl, "attempted", json_boolean(cr->attempted));
	json_object_set_new(cl, "complete", json_boolean(ag_cleanup_state_complete(cr->state)));
	json_object_set_new(cl, "status", json_string(ag_cleanup_state_name(cr->state)));
	json_object_set_new(cl, "message", json_string(cr->message ? cr->message : ""));
	json_object_set_new(cl, "liveness_verified", json_boolean(cr->liveness_verified));
	json_object_set_new(cl, "workspace_status", json_string(f->ws_status));
	json_object_set_new(cl, "workspace_complete",
			    json_boolean(strcmp(f->ws_status, "incomplete") != 0 &&
					 strcmp(f->ws_status, "retained") != 0));
	json_object_set_new(a, "cleanup", cl);
	json_object_set_new(a, "cleanup_complete", json_boolean(f->cleanup_complete));
	if (f->stage)
		json_object_set_new(a, "failure",
				    json_pack("{s:s, s:i, s:s, s:o}", "stage", f->stage,
					      "exit_code", f->exit_code, "reason",
					      f->reason ? f->reason : "", "message",
					      rstr(f->redact, f->message, 512)));
	else
		json_object_set_new(a, "failure", json_null());
	if (f->cleanup_reason)
		json_object_set_new(a, "cleanup_failure",
				    json_pack("{s:s, s:i, s:s, s:o}", "stage", "cleanup",
					      "exit_code", 8, "reason", f->cleanup_reason,
					      "message", rstr(f->redact, f->cleanup_message, 512)));
	else
		json_object_set_new(a, "cleanup_failure", json_null());
	return a;
}
