#!/usr/bin/python3
"""JSON Schema / loader parity for agentguard.yaml (TAP output).

Checks data/schemas/agentguard-config-v1.schema.json against the config
corpus (tests/config-corpus/{accept,reject}/*.yaml), whose header lines give
the loader's verdict:

    # expect: accept
    # expect: reject <reason> <key>
    # schema: loader-only: <why>      (a rule the schema cannot express: skipped)

Every other document is read into a JSON value and validated with
jsonschema's Draft 2020-12 validator; the verdict must equal the
expectation. The document is read the way the loader types it, not the way
PyYAML does by default (YAML 1.1):

  * scalars are typed by the YAML 1.2 core schema, as src/lib/config/yaml_load.c
    does (`yes`, `on`, `2001-01-01`, `1_000` are strings; `0o17` is an integer);
    there is no implicit merge key, so `<<` is an ordinary (unknown) key;
  * a document with no JSON equivalent is a schema reject: a PyYAML error, a
    top level that is not a mapping, a non-string or duplicate mapping key, or
    a non-finite number (JSON has no .inf or .nan).

Other test points: the schema is valid Draft 2020-12; every property at every
depth has a description; the top-level properties are exactly the keys of
docs/config-reference.md; objects forbid unknown keys; `$AG_BIN schema`
prints the data file byte for byte.

Run with the system Python (python3-yaml, python3-jsonschema from Debian):
    /usr/bin/python3 tests/schema/parity.py [corpus-file...]
"""
import json
import math
import os
import re
import subprocess
import sys

try:
    import yaml
    import jsonschema
except ImportError as e:  # pragma: no cover - reported by the shell wrapper too
    print("1..1")
    print("not ok 1 - python modules for the schema parity test: %s" % e)
    sys.exit(1)

ROOT = os.environ.get("AG_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA_REL = "data/schemas/agentguard-config-v1.schema.json"
SCHEMA_PATH = os.path.join(ROOT, SCHEMA_REL)
CORPUS = os.path.join(ROOT, "tests", "config-corpus")
REFERENCE = os.path.join(ROOT, "docs", "config-reference.md")
AG_BIN = os.environ.get("AG_BIN") or os.path.join(ROOT, "build", "agentguard")


# ---------------------------------------------------------------- YAML reading

class Core12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core-schema typing of plain scalars."""

    yaml_implicit_resolvers = {}


# The same forms as ag_ynode_resolve() in src/lib/config/yaml_load.c.
Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)\Z"), ["~", "n", "N", ""])
Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)\Z"), list("tTfF"))
Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z"),
    list("-+0123456789"))
Core12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"),
    list("-+0123456789."))


def _construct_int(loader, node):
    s = loader.construct_scalar(node)
    if s.startswith("0o"):
        return int(s[2:], 8)
    if s.startswith("0x"):
        return int(s[2:], 16)
    return int(s, 10)


def _construct_float(loader, node):
    s = loader.construct_scalar(node)
    t = s.lstrip("+-").lower()
    if t == ".inf":
        return -math.inf if s.startswith("-") else math.inf
    if t == ".nan":
        return math.nan
    return float(s)


def _construct_bool(loader, node):
    return loader.construct_scalar(node).lower() == "true"


def _construct_mapping(loader, node, deep=False):
    if not isinstance(node, yaml.MappingNode):
        raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
    out = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key that is not a string", key_node.start_mark)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, "a duplicate mapping key", key_node.start_mark)
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


Core12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Core12Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
Core12Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
Core12Loader.construct_mapping = _construct_mapping


def read_document(data):
    """Returns (instance, None) or (None, why-it-has-no-JSON-equivalent)."""
    try:
        doc = yaml.load(data, Loader=Core12Loader)
    except yaml.YAMLError as e:
        return None, "YAML: %s" % str(e).replace("\n", " ")
    except (ValueError, TypeError, RecursionError) as e:
        return None, "YAML: %s" % e
    if not isinstance(doc, dict):
        return None, "top level is %s, not a mapping" % type(doc).__name__
    try:
        return json.loads(json.dumps(doc, allow_nan=False)), None
    except (ValueError, TypeError) as e:
        return None, "not a JSON value: %s" % e


# ---------------------------------------------------------------- corpus headers

EXPECT_RE = re.compile(r"^#\s*expect:\s*(\S+)\s*(.*)$")
LOADER_ONLY_RE = re.compile(r"^#\s*schema:\s*loader-only\b:?\s*(.*)$")


def read_header(data):
    """(expect, detail, loader_only_why or None); expect is None when absent."""
    expect = detail = None
    loader_only = None
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    for line in text.split("\n"):
        s = line.strip()
        if not s.startswith("#"):
            if s:
                break
            continue
        m = EXPECT_RE.match(s)
        if m and expect is None:
            expect, detail = m.group(1), m.group(2).strip()
        m = LOADER_ONLY_RE.match(s)
        if m and loader_only is None:
            loader_only = m.group(1).strip() or "(no reason given)"
    return expect, detail, loader_only


def corpus_files(args):
    if args:
        return sorted(os.path.abspath(a) for a in args)
    out = []
    for verdict in ("accept", "reject"):
        d = os.path.join(CORPUS, verdict)
        if os.path.isdir(d):
            out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".yaml"))
    return out


# ---------------------------------------------------------------- schema checks

SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
SUBSCHEMA_ONE = ("items", "additionalProperties", "propertyNames", "contains", "if", "then", "else",
                 "not", "unevaluatedItems", "unevaluatedProperties")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def walk(schema, path="#", conditional=False):
    """Yields (path, schema, is_property_or_def, under_if_then_else_not)."""
    if not isinstance(schema, dict):
        return
    for kw in SUBSCHEMA_MAPS:
        for name, sub in (schema.get(kw) or {}).items():
            p = "%s/%s/%s" % (path, kw, name)
            yield p, sub, kw in ("properties", "$defs"), conditional
            yield from walk(sub, p, conditional)
    for kw in SUBSCHEMA_ONE:
        if isinstance(schema.get(kw), dict):
            p = "%s/%s" % (path, kw)
            cond = conditional or kw in ("if", "then", "else", "not")
            yield p, schema[kw], False, cond
            yield from walk(schema[kw], p, cond)
    for kw in SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(kw) or []):
            p = "%s/%s/%d" % (path, kw, i)
            yield p, sub, False, conditional
            yield from walk(sub, p, conditional)


def missing_descriptions(schema):
    return [p for p, sub, named, _ in walk(schema)
            if named and not (isinstance(sub, dict) and isinstance(sub.get("description"), str)
                              and sub["description"].strip())]


def open_objects(schema):
    """Schemas that declare properties outside if/then/else/not but let unknown keys through."""
    out = []
    for p, sub, _, cond in [("#", schema, False, False)] + list(walk(schema)):
        if cond or not isinstance(sub, dict) or "properties" not in sub:
            continue
        if sub.get("additionalProperties") is not False:
            out.append(p)
    return out


def reference_top_keys():
    """The keys of the 'Top-level keys' table in docs/config-reference.md."""
    keys = []
    in_section = False
    with open(REFERENCE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                in_section = line.strip().lower() == "## top-level keys"
                continue
            if in_section and line.startswith("|"):
                cells = line.split("|")
                if len(cells) > 2:
                    keys += re.findall(r"`([a-z_]+)`", cells[1])
    return keys


# ---------------------------------------------------------------- main

class Tap:
    def __init__(self):
        self.points = []

    def add(self, ok, name, diag=()):
        self.points.append((ok, name, list(diag)))

    def emit(self, comments_before=(), comments_after=()):
        print("1..%d" % len(self.points))
        for c in comments_before:
            print("# " + c)
        for i, (ok, name, diag) in enumerate(self.points, 1):
            print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
            for d in diag:
                print("#   " + d)
        for c in comments_after:
            print("# " + c)
        return all(ok for ok, _, _ in self.points)


def short(s, n=160):
    s = repr(s) if not isinstance(s, str) else s
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 3] + "..."


def main(argv):
    tap = Tap()
    notes = []

    # 1. the schema itself
    schema = None
    try:
        with open(SCHEMA_PATH, "rb") as f:
            schema_bytes = f.read()
        schema = json.loads(schema_bytes.decode("utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            raise ValueError("$schema is not Draft 2020-12: %r" % schema.get("$schema"))
        tap.add(True, "%s is a valid Draft 2020-12 schema" % SCHEMA_REL)
    except Exception as e:  # any failure here makes every other point meaningless
        tap.add(False, "%s is a valid Draft 2020-12 schema" % SCHEMA_REL, [short(str(e), 400)])
        tap.emit()
        return 1

    # 2. descriptions
    missing = missing_descriptions(schema)
    tap.add(not missing, "every property and definition at every depth has a description",
            ["no description: " + p for p in missing[:20]])

    # 3. the 33 top-level keys (upstream's 31, `workspace` and `study_egress`)
    try:
        ref_keys = reference_top_keys()
        diag = []
        if len(ref_keys) != 33 or len(set(ref_keys)) != 33:
            diag.append("docs/config-reference.md lists %d keys (%d distinct), expected 33"
                        % (len(ref_keys), len(set(ref_keys))))
        have = set(schema.get("properties", {}))
        if have != set(ref_keys):
            diag.append("only in the schema: %s" % sorted(have - set(ref_keys)))
            diag.append("only in the reference: %s" % sorted(set(ref_keys) - have))
        tap.add(not diag, "top-level properties are exactly the 33 keys of docs/config-reference.md", diag)
    except OSError as e:
        tap.add(False, "top-level properties are exactly the 33 keys of docs/config-reference.md", [str(e)])

    # 4. closed objects
    opened = open_objects(schema)
    tap.add(not opened, "every object schema with properties has additionalProperties: false",
            ["open: " + p for p in opened[:20]])

    # 5. the binary prints the same schema
    name = "`agentguard schema` prints %s byte for byte" % SCHEMA_REL
    try:
        r = subprocess.run([AG_BIN, "schema"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=30)
        if r.returncode != 0:
            tap.add(False, name, ["%s schema exited %d: %s" % (AG_BIN, r.returncode, short(r.stderr.decode("utf-8", "replace"), 300))])
        elif r.stdout != schema_bytes:
            first = next((i for i, (a, b) in enumerate(zip(r.stdout, schema_bytes)) if a != b),
                         min(len(r.stdout), len(schema_bytes)))
            tap.add(False, name, ["output (%d bytes) differs from the file (%d bytes) at byte %d"
                                  % (len(r.stdout), len(schema_bytes), first)])
        else:
            tap.add(True, name)
    except (OSError, subprocess.TimeoutExpired) as e:
        tap.add(False, name, ["cannot run %s schema: %s" % (AG_BIN, e)])

    # 6. the corpus
    validator = jsonschema.Draft202012Validator(schema)
    files = corpus_files(argv)
    judged = agreed = 0
    skipped = []
    for path in files:
        rel = os.path.relpath(path, CORPUS) if path.startswith(CORPUS + os.sep) else path
        folder = os.path.basename(os.path.dirname(path))
        try:
            if os.path.islink(path) or not os.path.isfile(path):
                data, unreadable = None, "not a regular file"
            else:
                with open(path, "rb") as f:
                    data = f.read()
                unreadable = None
        except OSError as e:
            data, unreadable = None, str(e)
        expect, detail, loader_only = read_header(data or b"")
        if expect not in ("accept", "reject"):
            tap.add(False, "%s: has a '# expect: accept|reject' header" % rel,
                    ["header: %r" % expect] if expect else ["no expect header"])
            continue
        if folder in ("accept", "reject") and folder != expect:
            tap.add(False, "%s: header says %s but the file is in %s/" % (rel, expect, folder))
            continue
        if unreadable:
            instance, why = None, unreadable
        else:
            instance, why = read_document(data)
        if loader_only is not None:
            # Not a test point; say whether the schema happens to agree anyway.
            v = "reject" if why is not None or not validator.is_valid(instance) else "accept"
            skipped.append("%s (%s)%s" % (rel, loader_only,
                                          "" if v != expect else " [the schema agrees anyway]"))
            continue
        judged += 1
        if why is not None:
            verdict, diag = "reject", ["no JSON instance: " + short(why, 300)]
        else:
            errors = sorted(validator.iter_errors(instance), key=lambda e: (list(e.absolute_path), e.message))
            if errors:
                e = errors[0]
                verdict = "reject"
                diag = ["schema error at /%s: %s" % ("/".join(str(p) for p in e.absolute_path), short(e.message, 300)),
                        "schema keyword: %s" % "/".join(str(p) for p in e.absolute_schema_path)]
            else:
                verdict, diag = "accept", []
        want = "%s%s" % (expect, (" " + detail) if detail else "")
        ok = verdict == expect
        agreed += ok
        if ok:
            tap.add(True, "%s: schema %ss (loader: %s)" % (rel, verdict, want))
        else:
            tap.add(False, "%s: schema %ss, loader expectation is %s" % (rel, verdict, want),
                    diag if verdict == "reject" else ["the schema accepts this document"])
    tap.add(judged > 0, "the corpus holds documents the schema can judge (%d judged)" % judged,
            [] if judged else ["no documents under %s/{accept,reject}" % CORPUS])
    notes.append("corpus: %d documents, %d judged, %d agreed, %d skipped as loader-only"
                 % (len(files), judged, agreed, len(skipped)))
    notes += ["skipped (loader-only): " + s for s in skipped]
    return 0 if tap.emit(comments_after=notes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
