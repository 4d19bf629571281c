#!/usr/bin/env bash
# t0100-config-corpus.sh: `agentguard validate FILE --json` against the
# config corpus in tests/config-corpus (see its README.md), plus file-level
# cases generated here at test time (symlink, FIFO, directory, size bounds,
# missing file, node bound).
#
# For every document:
#   accept: exit 0, stdout {"valid":true,"file":<as given>,"effective":{...}}
#   reject: exit 2, stdout {"valid":false,"file":<as given>,"error":{...}} with
#           error.reason = the expected token, error.key = the expected key
#           path (unless "-"), error.line and error.column positive integers
#           and a non-empty error.message
#   always: nothing on stdout or stderr contains the planted canary
#           "CANARY-SECRET-" (values are never echoed), no hang, no crash.
#
# TAP output, one test point per document; the plan is printed at the end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
AG_BIN=${AG_BIN:-$root/build/agentguard}
case "$AG_BIN" in /*) ;; *) AG_BIN="$root/$AG_BIN" ;; esac
corpus=tests/config-corpus
CANARY=CANARY-SECRET-

command -v python3 >/dev/null 2>&1 || {
	echo "1..0 # SKIP python3 is needed to read the JSON output"
	exit 0
}

work=$(mktemp -d "${TMPDIR:-/tmp}/ag-t0100.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 1

# manifest: one line per case, tab-separated:
#   id  kind(accept|reject)  reason  key  path-as-given  line-check(1|0)
manifest=$work/manifest
: >"$manifest"
n=0

run_case() { # kind reason key path linecheck
	n=$((n + 1))
	local d="$work/r$n"
	mkdir -p "$d"
	if [ -x "$AG_BIN" ]; then
		timeout -k 5 10 "$AG_BIN" validate "$4" --json >"$d/out" 2>"$d/err" </dev/null
		echo $? >"$d/rc"
	else
		: >"$d/out"
		echo "agentguard binary not found at $AG_BIN" >"$d/err"
		echo 127 >"$d/rc"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$1" "$2" "$3" "$4" "$5" >>"$manifest"
}

# ---- the corpus documents: one Python pass reads each header and runs the
# binary (one process per document, not a shell pipeline per header)
header_errors=$work/header-errors
n=$(python3 - "$corpus" "$AG_BIN" "$work" "$manifest" "$header_errors" <<'EOF'
import glob, os, subprocess, sys
corpus, ag, work, manifest, herrs = sys.argv[1:6]
n = 0
with open(manifest, "a") as man, open(herrs, "w") as he:
    for d in ("accept", "reject"):
        for f in sorted(glob.glob("%s/%s/*.yaml" % (corpus, d))):
            if not os.path.isfile(f):
                continue
            expect = ""
            with open(f, "rb") as fh:
                for line in fh:
                    if line.startswith(b"# expect: "):
                        expect = line[10:].decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
                        break
            w = expect.split()
            kind, reason, key = (w + ["", "", ""])[:3]
            extra = " ".join(w[3:])
            if kind != d or (kind == "reject" and (not key or extra)) or (kind == "accept" and reason):
                he.write("%s: bad header '# expect: %s'\n" % (f, expect))
                continue
            n += 1
            r = "%s/r%d" % (work, n)
            os.mkdir(r)
            if os.access(ag, os.X_OK):
                with open(r + "/out", "wb") as o, open(r + "/err", "wb") as e:
                    try:
                        rc = subprocess.run([ag, "validate", f, "--json"], stdin=subprocess.DEVNULL,
                                            stdout=o, stderr=e, timeout=10).returncode
                        rc = 128 - rc if rc < 0 else rc
                    except subprocess.TimeoutExpired:
                        rc = 124
            else:
                open(r + "/out", "wb").close()
                open(r + "/err", "w").write("agentguard binary not found at %s\n" % ag)
                rc = 127
            open(r + "/rc", "w").write("%d\n" % rc)
            if kind == "accept":
                reason = key = "-"
            man.write("%d\t%s\t%s\t%s\t%s\t1\n" % (n, kind, reason, key, f))
print(n)
EOF
) || exit 1

# ---- generated at test time: file-level cases
valid="$corpus/accept/001-minimal.yaml"
gen=$work/gen
mkdir -p "$gen"
cp "$valid" "$gen/valid.yaml"
printf 'agent_environment: {TOKEN_Z: "%sfromsymlink"}\n' "$CANARY" >>"$gen/valid.yaml"
ln -s valid.yaml "$gen/link.yaml"
run_case reject config.io.symlink - "$gen/link.yaml" 0
mkfifo "$gen/fifo.yaml"
run_case reject config.io.not_regular - "$gen/fifo.yaml" 0
mkdir "$gen/dir.yaml"
run_case reject config.io.not_regular - "$gen/dir.yaml" 0
run_case reject config.io.open - "$gen/does-not-exist.yaml" 0
python3 - "$gen" "$valid" <<'EOF'
import sys
gen, valid = sys.argv[1], sys.argv[2]
base = open(valid, "rb").read()
def padded(total):
    data = base + b"# padding "
    data += b"x" * (total - len(data) - 1) + b"\n"
    assert len(data) == total
    return data
open(gen + "/exact-1mib.yaml", "wb").write(padded(1024 * 1024))
open(gen + "/over-1mib.yaml", "wb").write(padded(1024 * 1024 + 1))
# 110000 scalars in one list: over 100,000 nodes however keys are counted
open(gen + "/nodes.yaml", "wb").write(base + b"agent_metadata:\n  many: [" + b",".join([b"0"] * 110000) + b"]\n")
EOF
run_case accept - - "$gen/exact-1mib.yaml" 0
run_case reject config.io.too_large - "$gen/over-1mib.yaml" 0
run_case reject config.yaml.nodes - "$gen/nodes.yaml" 1
# the same valid document named by an absolute path: "file" is echoed as given
run_case accept - - "$root/$valid" 0

# ---- check every result and print TAP
python3 - "$manifest" "$work" "$CANARY" "$header_errors" <<'EOF'
import json
import sys

manifest, work, canary, header_errors = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4]
point = 0
failed = 0


def tap(ok, desc, diag=()):
    global point, failed
    point += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", point, desc))
    for line in diag:
        print("#   " + line)


def posint(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


rows = [l.rstrip("\n").split("\t") for l in open(manifest, encoding="utf-8") if l.strip()]
herr = [l.rstrip("\n") for l in open(header_errors, encoding="utf-8") if l.strip()]
n_acc = sum(1 for r in rows if r[1] == "accept" and r[4].startswith("tests/config-corpus/"))
n_rej = sum(1 for r in rows if r[1] == "reject" and r[4].startswith("tests/config-corpus/"))
tap(not herr and n_acc + n_rej >= 170 and n_acc >= 60,
    "corpus: %d documents (%d accept, %d reject), headers well-formed" % (n_acc + n_rej, n_acc, n_rej),
    herr + ([] if n_acc + n_rej >= 170 and n_acc >= 60 else ["need at least 170 documents, 60 accepted"]))

for idx, kind, reason, key, path, linecheck in rows:
    d = "%s/r%s" % (work, idx)
    out = open(d + "/out", "rb").read()
    err = open(d + "/err", "rb").read()
    rc = int(open(d + "/rc").read().strip() or -1)
    problems = []
    want_rc = 0 if kind == "accept" else 2
    if rc == 124 or rc == 137:
        problems.append("timed out (hung for 10 s)")
    elif rc > 128:
        problems.append("killed by signal %d" % (rc - 128))
    elif rc != want_rc:
        problems.append("exit %d, expected %d" % (rc, want_rc))
    if canary in out or canary in err:
        problems.append("a planted secret value (%s...) appears in the output" % canary.decode())
    doc = None
    try:
        doc = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        problems.append("stdout is not one JSON document: %s" % e)
    if isinstance(doc, dict):
        if doc.get("file") != path:
            problems.append("file is %r, expected the path as given" % (doc.get("file"),))
        if kind == "accept":
            if doc.get("valid") is not True:
                problems.append("valid is %r, expected true" % (doc.get("valid"),))
            if not isinstance(doc.get("effective"), dict):
                problems.append("effective is not an object")
            e = doc.get("error")
            if isinstance(e, dict):
                problems.append("unexpected error: reason=%r key=%r line=%r" % (e.get("reason"), e.get("key"), e.get("line")))
        else:
            if doc.get("valid") is not False:
                problems.append("valid is %r, expected false" % (doc.get("valid"),))
            e = doc.get("error")
            if not isinstance(e, dict):
                problems.append("error is not an object")
            else:
                if e.get("reason") != reason:
                    problems.append("reason %r, expected %r (key %r)" % (e.get("reason"), reason, e.get("key")))
                if key != "-" and e.get("key") != key:
                    problems.append("key %r, expected %r" % (e.get("key"), key))
                if linecheck == "1":
                    if not posint(e.get("line")):
                        problems.append("line %r is not a positive integer" % (e.get("line"),))
                    if not posint(e.get("column")):
                        problems.append("column %r is not a positive integer" % (e.get("column"),))
                if not isinstance(e.get("message"), str) or not e.get("message"):
                    problems.append("message missing or empty")
    elif doc is not None:
        problems.append("stdout JSON is not an object")
    if kind == "accept":
        desc = "%s accepted" % path
    else:
        desc = "%s rejected: %s %s" % (path, reason, key)
    diag = problems[:]
    if problems and err:
        diag.append("stderr: " + err.decode("utf-8", "replace").replace(canary.decode(), "<CANARY>")[:300].replace("\n", " | "))
    tap(not problems, desc, diag)

print("1..%d" % point)
sys.exit(1 if failed else 0)
EOF
