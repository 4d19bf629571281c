#!/usr/bin/env bash
# t0550: `agentguard evidence verify` on real contained-run artifacts (three
# runs in one runs root, run as the unprivileged test user): fresh artifacts
# verify; the shipped JSON Schemas accept them (python3-jsonschema) and
# describe every property; each kind of tampering is refused with its own
# reason. Structural edits are re-sealed consistently so the structural check
# itself is what fires, not the seal.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
verify() { "$AG_BIN" evidence verify "$@" --public-key "$AG_PUB"; }

# --- three runs: A passes, B fails (agent exit 3), C passes; C is the head
run -- /bin/sh -c 'cd /agentguard-workspace && echo four >> src/edit.txt && echo new > src/added.txt && rm src/delete.txt && mv docs/old-name.md docs/new-name.md'
t_is "run A: exit 0" "$AG_RC" 0
A=$(basename "$(dirname "$REPORT")")
run -- /bin/sh -c 'exit 3'
t_is "run B: exit 1" "$AG_RC" 1
B=$(basename "$(dirname "$REPORT")")
run -- /bin/sh -c 'echo hello'
t_is "run C: exit 0" "$AG_RC" 0
C=$(basename "$(dirname "$REPORT")")
R="$W/.agentguard/contained-runs"
user_pub
config missing
sed -i "s|@sha256:[0-9a-f]*|@sha256:$(printf '%064d' 7)|" "$W/missing.yaml"
t_run as_user "$AG_BIN" contained-run "$W/missing.yaml" --repo repo --runs-root "$W/pf-runs" --json -- /bin/true
t_is "preflight-failed run: exit 3" "$AG_RC" 3
PF=$(ls -d "$W"/pf-runs/*/ | head -1)

# --- fresh artifacts verify
for r in "$A" "$B" "$C"; do
	t_ok "fresh run dir verifies ($r)" as_user "$AG_BIN" evidence verify "$R/$r"
done
t_ok "the preflight-failed run verifies" verify "$PF"
t_ok "the artifact file verifies" verify "$R/$C/contained-run.json"
t_run verify "$R/$C" --json
t_like "--json: valid" "$AG_OUT" '"valid":true'
t_like "--json: all thirteen checks" "$AG_OUT" '"checks_passed":\["read","parse","version","bounds","structure","canonical","identity","privacy","seal","signature","chain","patch","egress_manifest"\]'
t_run verify "$R/$C"
t_like "text: names the run and the checks" "$AG_OUT" "^valid: $C \\(13 checks passed"

# --- the shipped JSON Schemas (Draft 2020-12) accept real artifacts
t_ok "the shipped schemas are what scripts/gen-evidence-schemas writes" "$PY" "$AG_ROOT/scripts/gen-evidence-schemas" --check
t_ok "jsonschema: real artifacts are valid" ev_schema "$R/$A/contained-run.json" "$R/$B/contained-run.json" "$R/$C/contained-run.json" "$PF/contained-run.json"
t_ok "jsonschema: every property is described; closed objects are closed" "$PY" - "$AG_ROOT/data/schemas" <<'PYEOF'
import json, sys
bad = []
def walk(s, where):
    if not isinstance(s, dict): return
    if "properties" in s and s.get("type") in ("object", ["object", "null"]) and "additionalProperties" not in s and where.count("/") < 2 and "checks" not in where:
        pass
    for k, v in s.get("properties", {}).items():
        if "description" not in v: bad.append(where + "/" + k)
        walk(v, where + "/" + k)
    if isinstance(s.get("items"), dict): walk(s["items"], where + "[]")
for f in ("contained-run-v1", "containment-evidence-v1"):
    s = json.load(open(sys.argv[1] + "/" + f + ".schema.json"))
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["additionalProperties"] is False
    walk(s, f)
assert not bad, bad
PYEOF
t_run env PY="$PY" EV_MUTATE='a["containment_evidence"]["controls"]["privileged_ok"] = True' bash -c '. "$1/tests/cli/lib-evidence.sh"; ev_schema "$2"' _ "$AG_ROOT" "$R/$C/contained-run.json"
t_is "jsonschema: an extra containment key is refused" "$AG_RC" 1
t_like "jsonschema: names the extra key" "$AG_OUT" "privileged_ok"

# --- tampering: each refused with its reason (exit 2)
X=$(ev_copy_root value)
ev_py "$X/$C/contained-run.json" 'a["result"] = "FAIL"; a["score"] = 0'
ag_must_fail 2 evidence.seal.mismatch "an edited value breaks the seal" verify "$X/$C"

X=$(ev_copy_root reorder)
ev_raw "$X/$C/contained-run.json" 'import json; a = json.loads(s); b = {"tool": a.pop("tool")}; b.update(a); s = json.dumps(b, separators=(",", ":"), ensure_ascii=True) + "\n"'
ev_reseal "$X/$C"
t_ok "reorder: the copy still parses to the same data" "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' "$X/$C/contained-run.json" "$R/$C/contained-run.json"
ag_must_fail 2 evidence.canonical "a reordered key (re-sealed) is not canonical" verify "$X/$C"

X=$(ev_copy_root space)
ev_raw "$X/$C/contained-run.json" 's = s.replace(",", ", ", 1)'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.canonical "added whitespace (re-sealed) is not canonical" verify "$X/$C"

X=$(ev_copy_root nonl)
ev_raw "$X/$C/contained-run.json" 's = s.rstrip("\n")'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.canonical "a missing trailing newline (re-sealed) is not canonical" verify "$X/$C"

X=$(ev_copy_root oversize)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["notes"][0] = "x" * 600'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.string "an oversized containment string (re-sealed) breaks a bound" verify "$X/$C"

X=$(ev_copy_root items)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["notes"] = ["n"] * 65'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.items "65 containment notes (re-sealed) break a bound" verify "$X/$C"

X=$(ev_copy_root longtask)
ev_py "$X/$C/contained-run.json" 'a["task_id"] = "t" * 129'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.length "a task_id of 129 characters (re-sealed) breaks the schema" verify "$X/$C"

X=$(ev_copy_root extra)
ev_py "$X/$C/contained-run.json" 'a["extra"] = 1'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.additional "an extra top-level key (re-sealed) is refused" verify "$X/$C"
t_like "extra: names the key" "$AG_OUT" "/extra"

X=$(ev_copy_root extra2)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["controls"]["privileged_ok"] = True'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.additional "an extra containment key (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root missing)
ev_py "$X/$C/contained-run.json" 'del a["containment_evidence"]["cleanup"]'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.required "a missing containment section (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root enum)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["security_claim_level"] = "vm-grade"'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.enum "an unknown claim level (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root type)
ev_py "$X/$C/contained-run.json" 'a["exit_code"] = "0"'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.type "a string exit code (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root values)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["environment"]["values_recorded"] = True'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.schema.const "values_recorded true (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root version)
ev_py "$X/$C/contained-run.json" 'a["schema_version"] = 2'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.version "schema_version 2 (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root dup)
ev_raw "$X/$C/contained-run.json" 's = s.replace("{\"checks\":", "{\"result\":\"PASS\",\"checks\":", 1)'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.parse "a duplicate key (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root hostpath)
ev_py "$X/$C/contained-run.json" 'a["command"] = ["/home/alice/agent.sh"]'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.host_path "a private host path value (re-sealed) is refused" verify "$X/$C"
X=$(ev_copy_root tmppath)
ev_py "$X/$C/contained-run.json" 'a["command_result"]["stderr"] = "cannot open /tmp/build-1234/x.log\n"'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.host_path "a /tmp/ path in agent output (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root secret)
ev_py "$X/$C/contained-run.json" 'a["command_result"]["stdout"] = "key ghp_" + "A" * 36 + "\n"'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.secret "a credential-shaped value (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root nul)
ev_py "$X/$C/contained-run.json" 'a["task_id"] = "t0400\u0000x"'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.nul "a NUL inside a string (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root ctl)
ev_py "$X/$C/contained-run.json" 'a["command_result"]["stdout"] = "tab\there\nline two\n"'
ev_reseal "$X/$C"
t_ok "newlines and tabs in agent output (re-sealed) are not suspicious" verify "$X/$C"

X=$(ev_copy_root ident)
ev_py "$X/$C/contained-run.json" 'a["containment_evidence"]["image"]["container_bound_image_id"] = "sha256:" + "e" * 64'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.image_identity "a bound image id that differs from the local id (re-sealed) is refused" verify "$X/$C"

X=$(ev_copy_root repo)
ev_py "$X/$C/contained-run.json" 'i = a["containment_evidence"]["image"]; i["registry_digest"] = "evil.example/other@" + i["registry_digest"].split("@")[1]'
ev_reseal "$X/$C"
ag_must_fail 2 evidence.image_identity "a registry digest of another repository (re-sealed) is refused" verify "$X/$C"

# --- the seal and the chain
X=$(ev_copy_root sealedit)
ev_py "$X/$B/contained-run.seal.json" 'a["artifact_sha256"] = "0" * 64'
ag_must_fail 2 evidence.seal.mismatch "an edited seal no longer matches its artifact" verify "$X/$B"
ag_must_fail 2 evidence.chain.broken "an edited seal breaks the next run's link" verify "$X/$C"
t_ok "an edited seal: the run before it still verifies" verify "$X/$A"

X=$(ev_copy_root sealspace)
ev_raw "$X/$C/contained-run.seal.json" 's = s.replace(",", ", ", 1)'
ag_must_fail 2 evidence.seal.malformed "a non-canonical seal is refused" verify "$X/$C"

X=$(ev_copy_root noseal)
rm "$X/$C/contained-run.seal.json"
ag_must_fail 2 evidence.seal.missing "a missing seal is refused" verify "$X/$C"

X=$(ev_copy_root resealed)
ev_py "$X/$B/contained-run.json" 'a["result"] = "PASS"; a["exit_code"] = 0'
ev_reseal "$X/$B"
ag_must_fail 2 evidence.chain.broken "a whole re-sealed middle run breaks the next link" verify "$X/$C"

X=$(ev_copy_root middle)
rm -rf "${X:?}/$B"
ag_must_fail 2 evidence.chain.previous_missing "a deleted middle run breaks the chain" verify "$X/$C"
t_ok "a deleted middle run: the first run still verifies" verify "$X/$A"

X=$(ev_copy_root newest)
rm -rf "${X:?}/$C"
ag_must_fail 2 evidence.chain.head "a deleted newest run leaves the head dangling" verify "$X/$B"

X=$(ev_copy_root head)
ev_py "$X/agentguard-chain-head.json" 'a["seal_sha256"] = "f" * 64'
ag_must_fail 2 evidence.chain.head "an edited chain head no longer names this seal" verify "$X/$C"
ag_must_fail 2 evidence.chain.head "an edited chain head is seen from an older run too" verify "$X/$A"
X=$(ev_copy_root headseal)
ev_py "$X/$C/contained-run.seal.json" 'a["previous"] = None'
ag_must_fail 2 evidence.chain.head "an older run sees that the newest run's seal changed" verify "$X/$B"

X=$(ev_copy_root renamed)
mv "$X/$C" "$X/renamed-run"
ag_must_fail 2 evidence.chain.broken "a run directory not named after its run id" verify "$X/renamed-run"

# --- reading: links, special files, size
X=$(ev_copy_root link)
mv "$X/$C/contained-run.json" "$X/$C/real.json"
ln -s real.json "$X/$C/contained-run.json"
ag_must_fail 2 evidence.read.symlink "a symlinked artifact is refused" verify "$X/$C"
X=$(ev_copy_root big)
head -c $((16 * 1024 * 1024 + 2)) /dev/zero | tr '\0' ' ' >"$X/$C/contained-run.json"
ag_must_fail 2 evidence.read.too_large "an artifact over 16 MiB is refused unread" verify "$X/$C"
mkfifo "$T/fifo"
ag_must_fail 2 evidence.read.not_regular "a FIFO is refused without blocking" timeout 10 "$AG_BIN" evidence verify "$T/fifo"
ag_must_fail 2 "" "a missing file" verify "$T/nope/contained-run.json"
ag_must_fail 2 usage "usage: no subcommand" "$AG_BIN" evidence
ag_must_fail 2 usage "usage: no path" "$AG_BIN" evidence verify
ag_must_fail 2 usage "usage: an unknown option" "$AG_BIN" evidence verify --bogus "$R/$C"
t_run "$AG_BIN" evidence verify "$X/$C" --json
t_like "--json on failure: valid false, reason" "$AG_OUT" '"failed_check":"read","message":.*"reason":"evidence.read.too_large".*"valid":false'

t_done
