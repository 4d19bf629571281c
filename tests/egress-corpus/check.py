#!/usr/bin/python3
"""Runs the study-egress corpus through the real binary and prints TAP.

    AG_BIN=build/agentguard python3 tests/egress-corpus/check.py [policies] [events] [manifests]

policies:  `study-egress policy validate FILE --json` -> exit 0, valid:true and
           a digest equal to SHA-256 of Python's canonical dump of the
           normalised form, or exit 2 with error.reason equal to the expected reason.
events:    `study-egress decide POLICY EVENT --json` -> exit 0 allow / 1 deny,
           reason as expected, address_class as expected when given; the
           output never carries a query string.
manifests: `study-egress manifest validate FILE --json` -> exit 0 with the
           expected completion status, or exit 2 with the expected reason.
Every run: no signal death, nothing on stderr in --json mode on success.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.environ.get("AG_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AG_BIN = os.environ.get("AG_BIN") or os.path.join(ROOT, "build", "agentguard")
kinds = sys.argv[1:] or ["policies", "events", "manifests"]
cases = [(k, json.loads(l)) for k in kinds
         for l in open(os.path.join(ROOT, "tests", "egress-corpus", k + ".jsonl"))]
work = tempfile.mkdtemp(prefix="ag-egress-corpus.")
n = 0
fails = 0


def put(name, case_or_doc, raw=None):
    p = os.path.join(work, name)
    with open(p, "wb") as f:
        if raw is not None:
            f.write(raw.encode("utf-8"))
        else:
            f.write(json.dumps(case_or_doc).encode())
    return p


def run(*args):
    r = subprocess.run([AG_BIN, "study-egress"] + list(args), capture_output=True, timeout=20)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def run_json(*args):
    """Runs the command; returns (rc, parsed stdout or None, raw stdout)."""
    rc, out, err = run(*args)
    try:
        return rc, json.loads(out), out
    except ValueError:
        return rc, None, "stdout is not JSON: %r %r" % (out, err)


def report(ok, name, why=""):
    global n, fails
    n += 1
    if ok:
        print("ok %d - %s" % (n, name))
    else:
        fails += 1
        print("not ok %d - %s" % (n, name))
        print("# " + why.replace("\n", "\n# ")[:2000])


for kind, c in cases:
    name = "%s: %s %s" % (c["id"], c["expect"], c.get("reason", c.get("completion", "")))
    if kind == "policies":
        f = put("policy.json", c.get("doc"), c.get("raw"))
        rc, j, out = run_json("policy", "validate", f, "--json")
        if j is None:
            report(False, name, out)
            continue
        if c["expect"] == "accept":
            # The digest is SHA-256 of the normalised policy as Python's json
            # writes it canonically (the earlier implementation's digest).
            py = hashlib.sha256(json.dumps(j.get("normalized"), sort_keys=True,
                                           separators=(",", ":")).encode()).hexdigest()
            report(rc == 0 and j.get("valid") is True and j.get("digest") == py, name,
                   "rc=%d python digest %s: %s" % (rc, py, out))
        else:
            report(rc == 2 and j.get("valid") is False and j["error"]["reason"] == c["reason"], name,
                   "rc=%d %s" % (rc, out))
    elif kind == "events":
        pf = put("policy.json", c["policy"])
        ef = put("event.json", c["event"])
        rc, j, out = run_json("decide", pf, ef, "--json")
        if j is None:
            report(False, name, out)
            continue
        want_rc = 0 if c["expect"] == "allow" else 1
        ok = rc == want_rc and j.get("decision") == c["expect"] and j.get("reason") == c["reason"]
        if c.get("class") and c["expect"] == "deny" or c.get("class") and c["expect"] == "allow":
            ok = ok and j.get("address_class") == c["class"]
        ok = ok and "?" not in out and "SECRET" not in out
        report(ok, name, "rc=%d %s" % (rc, out))
    else:
        f = put("manifest.json", c.get("doc"), c.get("raw"))
        rc, j, out = run_json("manifest", "validate", f, "--json")
        if j is None:
            report(False, name, out)
            continue
        if c["expect"] == "accept":
            report(rc == 0 and j.get("valid") is True and j["completion"]["status"] == c["completion"],
                   name, "rc=%d %s" % (rc, out))
        else:
            report(rc == 2 and j.get("valid") is False and j["error"]["reason"] == c["reason"], name,
                   "rc=%d %s" % (rc, out))

for f in os.listdir(work):
    os.unlink(os.path.join(work, f))
os.rmdir(work)
print("1..%d" % n)
sys.exit(1 if fails else 0)
