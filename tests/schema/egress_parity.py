#!/usr/bin/python3
"""JSON Schema / loader parity for the study-egress policy and manifest (TAP).

Every document of tests/egress-corpus/{policies,manifests}.jsonl is validated
with jsonschema's Draft 2020-12 validator against
data/schemas/live-study-egress-{policy,manifest}-v1.schema.json; the
schema's verdict must equal the corpus's expected verdict (which
tests/cli/t0800 checks against the binary), or the case carries
"schema": "loader-only: WHY" (the difference is a rule a schema cannot
state).
A raw document Python's json cannot read is a schema reject.

Other test points: both schemas are valid Draft 2020-12; every property has
a description; objects forbid unknown keys; `$AG_BIN study-egress schema
policy|manifest` prints the data file byte for byte.
"""
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError as e:  # pragma: no cover
    print("1..1")
    print("not ok 1 - python3-jsonschema: %s" % e)
    sys.exit(1)

ROOT = os.environ.get("AG_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AG_BIN = os.environ.get("AG_BIN") or os.path.join(ROOT, "build", "agentguard")
n = 0
fails = 0


def report(ok, name, why=""):
    global n, fails
    n += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, name))
    if not ok:
        fails += 1
        print("# " + str(why)[:1500].replace("\n", "\n# "))


def walk(s, path, problems):
    if isinstance(s, dict):
        if s.get("type") == "object" and "properties" in s and s.get("additionalProperties") is not False:
            problems.append(path + ": object allows unknown keys")
        for k, v in s.get("properties", {}).items():
            if isinstance(v, dict) and "description" not in v and "$ref" not in v:
                problems.append(path + "." + k + ": no description")
        for k, v in s.items():
            walk(v, path + "/" + k, problems)
    elif isinstance(s, list):
        for i, v in enumerate(s):
            walk(v, "%s[%d]" % (path, i), problems)


for kind, corpus in [("policy", "policies"), ("manifest", "manifests")]:
    rel = "data/schemas/live-study-egress-%s-v1.schema.json" % kind
    raw = open(os.path.join(ROOT, rel), "rb").read()
    schema = json.loads(raw)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        report(True, "%s schema is valid Draft 2020-12" % kind)
    except jsonschema.SchemaError as e:
        report(False, "%s schema is valid Draft 2020-12" % kind, e)
        continue
    problems = []
    walk(schema, "#", problems)
    report(not problems, "%s schema: descriptions everywhere, no open objects" % kind, problems)
    r = subprocess.run([AG_BIN, "study-egress", "schema", kind], capture_output=True)
    report(r.returncode == 0 and r.stdout == raw, "study-egress schema %s prints %s byte for byte" % (kind, rel),
           "rc=%d" % r.returncode)
    v = jsonschema.Draft202012Validator(schema)
    for line in open(os.path.join(ROOT, "tests", "egress-corpus", corpus + ".jsonl")):
        c = json.loads(line)
        if "raw" in c:
            try:
                doc = json.loads(c["raw"])
            except ValueError:
                doc = None
                schema_ok = False
            else:
                schema_ok = v.is_valid(doc)
        else:
            schema_ok = v.is_valid(c["doc"])
        want = c["expect"] == "accept"
        name = "%s: schema %s" % (c["id"], c.get("schema") or c["expect"])
        if schema_ok == want:
            report(True, name)
        elif c.get("schema", "").startswith("loader-only"):
            report(True, name + " # differs: a rule the schema cannot state")
        else:
            errs = [e.message for e in v.iter_errors(c["doc"])][:3] if "doc" in c and not schema_ok else []
            report(False, name, "schema says %s, loader %s: %s" % (schema_ok, c["expect"], errs))
print("1..%d" % n)
sys.exit(1 if fails else 0)
