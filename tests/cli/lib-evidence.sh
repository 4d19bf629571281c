# shellcheck shell=bash
# tests/cli/lib-evidence.sh: helpers for the evidence verify and report tests.
# Source after lib-contained.sh. Edits artifacts the way an attacker who can
# write files would, and can re-seal them consistently so a structural check
# is proven to fire on its own (not only through the seal).

# ev_py FILE CODE: load the artifact at FILE as `a`, exec CODE, write it back
# canonically (sorted keys, compact, ASCII, one newline).
ev_py() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
p, code = sys.argv[1], sys.argv[2]
a = json.load(open(p))
exec(code)
open(p, "w").write(json.dumps(a, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n")
PYEOF
}

# ev_raw FILE CODE: exec CODE on the artifact text `s` and write `s` back.
ev_raw() {
	"$PY" - "$1" "$2" <<'PYEOF'
import sys
p, code = sys.argv[1], sys.argv[2]
s = open(p).read()
exec(code)
open(p, "w").write(s)
PYEOF
}

# ev_reseal RUN_DIR [KEY]: recompute the seal's artifact_sha256 from the
# artifact bytes, re-sign the seal with KEY (default: the test user's local
# key, i.e. an attacker who holds the key) using the openssl CLI, and, when
# the chain head names this run, the head's seal_sha256.
ev_reseal() {
	"$PY" - "$1" "${2:-$AG_USER_KEY}" <<'PYEOF'
import base64, hashlib, json, os, subprocess, sys
d, key = sys.argv[1], sys.argv[2]
canon = lambda o: (json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
seal_p = os.path.join(d, "contained-run.seal.json")
seal = json.load(open(seal_p))
seal["artifact_sha256"] = hashlib.sha256(open(os.path.join(d, "contained-run.json"), "rb").read()).hexdigest()
pub = subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-outform", "DER"], check=True, capture_output=True).stdout
seal["key_fingerprint"] = "ed25519:" + hashlib.sha256(pub[-32:]).hexdigest()
sb = canon(seal)
open(seal_p, "wb").write(sb)
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", seal_p], check=True, capture_output=True).stdout
open(os.path.join(d, "contained-run.seal.sig"), "wb").write(canon({"algorithm": "ed25519", "key_fingerprint": seal["key_fingerprint"], "schema": "agentguard.evidence-signature", "schema_version": 1, "seal_sha256": hashlib.sha256(sb).hexdigest(), "signature": base64.b64encode(sig).decode()}))
head_p = os.path.join(os.path.dirname(os.path.abspath(d)), "agentguard-chain-head.json")
head = json.load(open(head_p)) if os.path.exists(head_p) else {"run_id": None}
if head["run_id"] == seal["run_id"]:
    head["seal_sha256"] = hashlib.sha256(sb).hexdigest()
    open(head_p, "wb").write(canon(head))
PYEOF
}

# ev_copy_root NAME: a fresh copy of the runs root at $T/NAME; prints its path.
ev_copy_root() {
	rm -rf "${T:?}/$1"
	cp -a "$W/.agentguard/contained-runs" "$T/$1"
	printf '%s\n' "$T/$1"
}

# ev_schema FILE...: validates with python3-jsonschema against the shipped schemas.
ev_schema() {
	"$PY" - "$AG_ROOT/data/schemas" "$@" <<'PYEOF'
import json, sys
from jsonschema import Draft202012Validator
d = sys.argv[1] + "/"
ce = json.load(open(d + "containment-evidence-v1.schema.json"))
art = json.load(open(d + "contained-run-v1.schema.json"))
Draft202012Validator.check_schema(ce)
Draft202012Validator.check_schema(art)
v = Draft202012Validator(art)  # stands alone: containment evidence is in $defs
assert art["$defs"]["containment_evidence"] == {k: x for k, x in ce.items() if k not in ("$schema", "$id", "title")}, "embedded != standalone"
bad = 0
import os
for p in sys.argv[2:]:
    a = json.load(open(p))
    exec(os.environ.get("EV_MUTATE", ""))
    errs = list(v.iter_errors(a))
    if isinstance(a.get("containment_evidence"), dict):  # and the standalone schema
        errs += list(Draft202012Validator(ce).iter_errors(a["containment_evidence"]))
    for e in errs[:5]:
        print(p, "/".join(map(str, e.absolute_path)), e.message[:300])
        bad = 1
sys.exit(bad)
PYEOF
}

# The agent command of a "hostile names" run: file names carrying markup,
# quotes, ampersands and control characters.
# shellcheck disable=SC2034 # used by the scripts that source this file
EV_HOSTILE_AGENT='cd /agentguard-workspace && mkdir -p "<script>alert(1)<" && echo x > "<script>alert(1)</script>" && echo y > "q\"uote&amp;<b>bold<i>.txt" && echo z > "$(printf "ctl\001\033[31mred")" && echo w > "*star*_[link](x)|pipe#.md" && echo done'
