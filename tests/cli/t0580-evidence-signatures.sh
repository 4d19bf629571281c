#!/usr/bin/env bash
# t0580: evidence is attributable (issue 9, finding 2). Real runs as the
# unprivileged test user sign their seals with the user's local Ed25519 key
# (created on first use, 0600 in a 0700 directory). A repository that ships
# a planted runs root with forged runs (re-sealed consistently, signed by
# another key or not at all) gets them refused by `evidence verify` and
# flagged by `report --list`, and contained-run refuses to copy it (exit 4,
# workspace.agentguard_foreign) before the agent starts. A chain head the
# key cannot verify starts a new chain segment with one warning, instead of
# failing every run. A run copied elsewhere verifies as another user with
# the public key alone (--standalone says the chain was not checked). A
# runs root writable by others is refused. Fails on main before signatures.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
uverify() { as_user "$AG_BIN" evidence verify "$@"; }

# --- a first run creates the local key
run -- /bin/sh -c 'echo hello'
t_is "run A: exit 0" "$AG_RC" 0
A=$(dirname "$REPORT")
t_like "the first run says it created the local key" "$AG_OUT" 'created the local evidence signing key \(ed25519:[0-9a-f]{64}\)'
t_is "the local key is 0600" "$(stat -c %a "$AG_USER_KEY")" 600
t_is "its directory is 0700" "$(stat -c %a "$(dirname "$AG_USER_KEY")")" 700
t_ok "the key is a PKCS#8 Ed25519 PEM" grep -q 'BEGIN PRIVATE KEY' "$AG_USER_KEY"
t_ok "the run dir holds the signature beside the seal" test -s "$A/contained-run.seal.sig"
user_pub
FPR=$(as_user "$AG_BIN" evidence public-key 2>&1 >/dev/null | sed -n 's/^fingerprint: //p' || true)
t_like "public-key prints the fingerprint" "$FPR" '^ed25519:[0-9a-f]{64}$'
t_ok "public-key prints a PEM public key" grep -q 'BEGIN PUBLIC KEY' "$AG_PUB"
run -- /bin/true
t_unlike "the second run creates no key" "$AG_OUT" 'created the local'
B=$(dirname "$REPORT")

# --- verify: only trusted keys count
t_run uverify "$A"
t_is "the owner verifies with the local key" "$AG_RC" 0
t_like "verify names the signer" "$AG_OUT" "signed by: $FPR"
ag_must_fail 2 evidence.signature.untrusted "another user without the public key: untrusted" env HOME="$T/roothome" "$AG_BIN" evidence verify "$A"
t_ok "another user with --public-key verifies" env HOME="$T/roothome" "$AG_BIN" evidence verify "$A" --public-key "$AG_PUB"
t_ok "verify never creates a local key" test ! -e "$T/roothome/.local"

# --- standalone: one archived run, elsewhere, as another user, public key only
mkdir -p "$T/archive"
cp -r "$B" "$T/archive/uploaded-run"
chown -R root:root "$T/archive"
t_run env HOME="$T/roothome" "$AG_BIN" evidence verify "$T/archive/uploaded-run" --standalone --public-key "$AG_PUB"
t_is "standalone: a copied run verifies with the public key alone" "$AG_RC" 0
t_like "standalone: says plainly the chain was not checked" "$AG_OUT" 'chain: NOT CHECKED \(--standalone\)'
t_like "standalone: twelve checks, no chain" "$AG_OUT" '12 checks passed: read, .*, seal, signature, patch, egress_manifest\)'
t_run env HOME="$T/roothome" "$AG_BIN" evidence verify "$T/archive/uploaded-run" --standalone --public-key "$AG_PUB" --json
t_like "standalone --json: chain_checked false" "$AG_OUT" '"chain_checked":false'
ag_must_fail 2 evidence.chain.broken "without --standalone the copy's chain is missing" env HOME="$T/roothome" "$AG_BIN" evidence verify "$T/archive/uploaded-run" --public-key "$AG_PUB"
ag_must_fail 2 evidence.signature.untrusted "standalone without the key: untrusted" env HOME="$T/roothome" "$AG_BIN" evidence verify "$T/archive/uploaded-run" --standalone
cp -r "$T/archive/uploaded-run" "$T/archive/edited"
ev_py "$T/archive/edited/contained-run.json" 'a["result"] = "FAIL"'
ag_must_fail 2 evidence.seal.mismatch "standalone: an edited artifact is refused" "$AG_BIN" evidence verify "$T/archive/edited" --standalone --public-key "$AG_PUB"
cp -r "$T/archive/uploaded-run" "$T/archive/sigedit"
ev_raw "$T/archive/sigedit/contained-run.seal.sig" 'import re; s = re.sub(r"\"signature\":\"(.)", lambda m: "\"signature\":\"" + ("B" if m.group(1) != "B" else "C"), s)'
ag_must_fail 2 evidence.signature.invalid "standalone: a changed signature is refused" "$AG_BIN" evidence verify "$T/archive/sigedit" --standalone --public-key "$AG_PUB"
"$AG_BIN" evidence keygen "$T/other.pem" >/dev/null
"$AG_BIN" evidence public-key --signing-key "$T/other.pem" >"$T/other.pub" 2>/dev/null
ag_must_fail 2 evidence.signature.untrusted "standalone: trusting only another key refuses" env HOME="$T/roothome" "$AG_BIN" evidence verify "$T/archive/uploaded-run" --standalone --public-key "$T/other.pub"

# --- a repository that ships a planted runs root with forged runs
rm -rf "$W/prepo"
cp -r "$W/repo" "$W/prepo"
PR="$W/prepo/.agentguard/contained-runs"
mkdir -p "$PR"
FORGED=t0400-contained-20200101000000000000-deadbeef
cp -r "$A" "$PR/$FORGED"
ev_py "$PR/$FORGED/contained-run.json" "a['run_id'] = '$FORGED'; a['result'] = 'PASS'"
ev_py "$PR/$FORGED/contained-run.seal.json" "a['run_id'] = '$FORGED'; a['previous'] = None; a['chain_start'] = 'empty'"
printf '{"run_id":"%s","schema":"agentguard.evidence-chain-head","schema_version":1,"seal_sha256":"%s"}\n' "$FORGED" "$(printf '%064d' 0)" >"$PR/agentguard-chain-head.json"
ev_reseal "$PR/$FORGED" "$T/other.pem"
"$PY" - "$PR" "$FORGED" <<'PYEOF'
import hashlib, json, os, sys
r, f = sys.argv[1], sys.argv[2]
h = {"run_id": f, "schema": "agentguard.evidence-chain-head", "schema_version": 1,
     "seal_sha256": hashlib.sha256(open(os.path.join(r, f, "contained-run.seal.json"), "rb").read()).hexdigest()}
open(os.path.join(r, "agentguard-chain-head.json"), "w").write(json.dumps(h, sort_keys=True, separators=(",", ":")) + "\n")
PYEOF
chown -R "$U:$U" "$W/prepo"
t_ok "the forged run is self-consistent (it verifies under the forger's key)" "$AG_BIN" evidence verify "$PR/$FORGED" --public-key "$T/other.pub"
ag_must_fail 2 evidence.signature.untrusted "evidence verify refuses the planted forged run" uverify "$PR/$FORGED"
t_run as_user "$AG_BIN" report --list --runs-root prepo/.agentguard/contained-runs
t_like "report --list flags the forged run" "$AG_OUT" "^$FORGED  -     exit -  .*INVALID \\[evidence.signature.untrusted\\]"
t_unlike "report --list does not call it PASS or verified" "$AG_OUT" 'PASS|verified'
ag_must_fail 2 evidence.signature.untrusted "report refuses to render it" as_user "$AG_BIN" report "$PR/$FORGED"
cp -r "$PR/$FORGED" "$T/unsigned"
rm "$T/unsigned/contained-run.seal.sig"
ag_must_fail 2 evidence.signature.missing "an unsigned run is refused" "$AG_BIN" evidence verify "$T/unsigned" --standalone --public-key "$AG_PUB"

# contained-run refuses the source before the agent starts
run --repo prepo --runs-root prepo/.agentguard/contained-runs -- /bin/sh -c 'echo AGENT-RAN'
t_is "contained-run refuses a planted forged run: exit 4" "$AG_RC" 4
t_like "with the named reason" "$AG_OUT" '\[workspace.agentguard_foreign\]'
t_like "naming the forged run and why" "$AG_OUT" "contained-runs/$FORGED was not written by AgentGuard \\(it does not verify as a run signed by a trusted key: evidence.signature.untrusted\\)"
t_unlike "the agent never ran" "$AG_OUT" 'AGENT-RAN'
t_like "no command ran" "$AG_OUT" '"command_exit_code":null'
REFUSED=$(dirname "$REPORT")
t_like "the new segment is said once" "$AG_OUT" 'starts a new chain segment.*\[evidence.chain.new_segment\]'
t_is "the refusal is recorded in a signed artifact" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["failure"]["reason"])' "$REPORT")" workspace.agentguard_foreign
t_ok "the refusal verifies (it starts a new segment: the planted head is foreign)" uverify "$REFUSED"
t_is "its seal says why it did not link" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain_start"])' "$REFUSED/contained-run.seal.json")" head_foreign_key

# once the forged run is gone, the repository's own signed runs are accepted
rm -rf "${PR:?}/$FORGED"
mkdir "$PR/t0400-contained-20200101000000000000-00000000" # empty: a run being created
chown "$U:$U" "$PR/t0400-contained-20200101000000000000-00000000"
run --repo prepo --runs-root prepo/.agentguard/contained-runs -- /bin/true
t_is "only AgentGuard's own signed runs (and an empty run dir) in .agentguard/: the run passes" "$AG_RC" 0
rmdir "$PR/t0400-contained-20200101000000000000-00000000"
t_unlike "and links to the head (no new segment)" "$AG_OUT" 'new_segment'
printf 'notes\n' >"$W/prepo/.agentguard/notes.txt"
chown "$U:$U" "$W/prepo/.agentguard/notes.txt"
run --repo prepo --runs-root prepo/.agentguard/contained-runs -- /bin/true
t_is "a stray file in .agentguard/: exit 4" "$AG_RC" 4
t_like "a stray file is named" "$AG_OUT" '\.agentguard/notes\.txt was not written by AgentGuard'
rm "$W/prepo/.agentguard/notes.txt"
LAST=$(ls -1d "$PR"/*/ | sort | tail -n 1)
printf 'x\n' >"$LAST/extra.txt"
chown "$U:$U" "$LAST/extra.txt"
run --repo prepo --runs-root prepo/.agentguard/contained-runs -- /bin/true
t_is "a planted file inside a genuine run dir: exit 4" "$AG_RC" 4
t_like "the run dir is named" "$AG_OUT" 'holds an entry AgentGuard does not write'
rm "$LAST/extra.txt"

# --- a head the key cannot verify: new segment, said once, never a failure per run
mkdir -p "$W/r2"
printf 'garbage' >"$W/r2/agentguard-chain-head.json"
chown -R "$U:$U" "$W/r2"
run --runs-root r2 -- /bin/true
t_is "a malformed head does not fail the run" "$AG_RC" 0
t_like "it says the run starts a new segment" "$AG_OUT" 'head_malformed.*new chain segment'
S1=$(dirname "$REPORT")
run --runs-root r2 -- /bin/true
t_is "the next run: exit 0" "$AG_RC" 0
t_unlike "the next run says nothing (said once)" "$AG_OUT" 'new_segment|new chain segment'
S2=$(dirname "$REPORT")
t_is "the next run links to the first" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["previous"]["run_id"])' "$S2/contained-run.seal.json")" "$(basename "$S1")"
t_ok "both verify in the chain" uverify "$S1"
t_ok "both verify in the chain (2)" uverify "$S2"
t_run uverify "$S1"
t_like "verify reports the segment start" "$AG_OUT" 'starts a chain segment \(head_malformed\)'

# --- a runs root others can write is refused
mkdir -p "$W/r3"
chown "$U:$U" "$W/r3"
chmod 0777 "$W/r3"
run --runs-root r3 -- /bin/true
t_is "a world-writable runs root: exit 2" "$AG_RC" 2
t_like "named reason" "$AG_OUT" '\[run.runs_root_unsafe\]'
chmod 0775 "$W/r3"
run --runs-root r3 -- /bin/true
t_is "a group-writable runs root: exit 2" "$AG_RC" 2
t_ok "nothing was written there" test -z "$(ls -A "$W/r3")"

# --- key handling
"$AG_BIN" evidence keygen "$T/k1.pem" >/dev/null
ag_must_fail 2 evidence.key.exists "keygen refuses to overwrite" "$AG_BIN" evidence keygen "$T/k1.pem"
t_is "keygen writes 0600" "$(stat -c %a "$T/k1.pem")" 600
as_user "$AG_BIN" evidence keygen "$W/ci-key.pem" >/dev/null
chmod 0640 "$W/ci-key.pem"
run --signing-key "$W/ci-key.pem" -- /bin/true
t_is "a group-readable --signing-key: exit 2" "$AG_RC" 2
t_like "named reason" "$AG_OUT" '\[evidence.key.mode\]'
chmod 0600 "$W/ci-key.pem"
ln -s ci-key.pem "$W/ci-link.pem"
run --signing-key "$W/ci-link.pem" -- /bin/true
t_like "a symlinked --signing-key is refused" "$AG_OUT" '\[evidence.key.link\]'
run --signing-key "$W/no-such.pem" -- /bin/true
t_like "a missing --signing-key is refused (never created)" "$AG_OUT" '\[evidence.key.missing\]'
cp "$W/ci-key.pem" "$W/root-key.pem"
chmod 0644 "$W/root-key.pem" # readable, so ownership is what refuses it
run --signing-key "$W/root-key.pem" -- /bin/true
t_like "a key owned by another user is refused" "$AG_OUT" '\[evidence.key.owner\]'
# the key must never be inside the repository the agent gets a copy of
run --repo . --runs-root "$T/elsewhere-runs" -- /bin/true
t_is "the local key inside the repository (repo = HOME): exit 2" "$AG_RC" 2
t_like "named reason" "$AG_OUT" '\[evidence.key.in_repo\]'
as_user "$AG_BIN" evidence keygen "$W/repo/k.pem" >/dev/null
run --signing-key repo/k.pem -- /bin/true
t_like "a --signing-key inside the repository is refused" "$AG_OUT" '\[evidence.key.in_repo\]'
rm -f "$W/repo/k.pem"
run --signing-key "$W/ci-key.pem" -- /bin/true
t_is "--signing-key: exit 0" "$AG_RC" 0
CI=$(dirname "$REPORT")
as_user "$AG_BIN" evidence public-key --signing-key "$W/ci-key.pem" >"$T/ci.pub" 2>/dev/null
t_ok "a --signing-key run verifies with that key's public half" "$AG_BIN" evidence verify "$CI" --public-key "$T/ci.pub"
t_like "a new key on the same runs root starts a new segment" "$AG_OUT$(cat "$CI/contained-run.seal.json")" '"chain_start":"head_foreign_key"'

t_done
