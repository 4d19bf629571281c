#!/usr/bin/env bash
# t0660: the agent's output, live, on a terminal (issue 14 item 1). Driven
# through a pseudo-terminal (python3's pty module): a five-second agent's
# first line reaches the terminal well before its second one is printed; a
# configured secret it prints, whole or split over two writes with a pause
# between, is redacted there (and a terminal escape it prints is shown
# escaped); --quiet shows none of its output; a 20,000-file repository
# shows the workspace progress on a terminal and none of it when piped; and
# under --json stdout stays one JSON document. Real Docker engine, the
# pinned test image, the run's own labels (lib-contained.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c "    - {name: AGENT_LIVE_SECRET, value: 'CANARY-LIVE-SPLIT-4d7', allow_sensitive: true}"
make_repo
t_cleanup remove_run_containers

# The driver: runs ARGV on a new pty (stdin, stdout and stderr), records
# what reaches the terminal with the time each line arrived, and writes
# OUT.raw (the bytes) and OUT.json ({"lines": [[t, text]...], "end": t, "rc": n}).
cat >"$T/pty-drive.py" <<'PYEOF'
import json, os, pty, select, subprocess, sys, time
out = sys.argv[1]
argv = sys.argv[2:]
master, slave = pty.openpty()
t0 = time.monotonic()
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
os.close(slave)
raw = b""
lines, cur = [], b""
while True:
    r, _, _ = select.select([master], [], [], 0.05)
    if not r:
        if p.poll() is not None:
            break
        continue
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    now = time.monotonic() - t0
    raw += data
    cur += data
    while b"\n" in cur:
        line, cur = cur.split(b"\n", 1)
        lines.append([now, line.decode("utf-8", "replace")])
rc = p.wait()
end = time.monotonic() - t0
if cur:
    lines.append([end, cur.decode("utf-8", "replace")])
open(out + ".raw", "wb").write(raw)
json.dump({"lines": lines, "end": end, "rc": rc}, open(out + ".json", "w"))
PYEOF

# pty_run NAME [contained-run options] -- ARGV: a run on a terminal; $W/NAME.{raw,json}
pty_run() {
	local name=$1
	shift
	as_user "$PY" "$T/pty-drive.py" "$W/$name" "$AG_BIN" contained-run "$W/c.yaml" --repo repo "$@"
	ledger_runs
}
# first_time FILE REGEX: the time the first line matching REGEX arrived (-1: none)
first_time() {
	"$PY" -c 'import json,re,sys
d=json.load(open(sys.argv[1]))
print(next((t for t,l in d["lines"] if re.search(sys.argv[2], l)), -1))' "$1" "$2"
}

# --- 1. a five-second agent: the first line arrives long before the second
[ -z "${AG_KEEP:-}" ] || t_cleanup cp -r "$W" /tmp/t0660-keep
pty_run slow -- /bin/sh -c 'echo first-line-7c1; sleep 5; echo second-line-7c1'
j="$W/slow.json"
t_is "slow: the run passes on a terminal" "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["rc"])' "$j")" 0
t1=$(first_time "$j" '^agent: first-line-7c1\r?$')
t2=$(first_time "$j" '^agent: second-line-7c1\r?$')
diag "first line at ${t1}s, second at ${t2}s"
t_ok "slow: the first line is shown, framed as the agent's" test "$t1" != -1
t_ok "slow: the second line is shown" test "$t2" != -1
t_ok "slow: the first line reached the terminal within a second of being printed (>= 4 s before the second)" \
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= 4.0 else 1)' "$t1" "$t2"
t_ok "slow: a header says where the agent's output starts" grep -q "agentguard: the agent is starting" "$W/slow.raw"

# --- 2. a configured secret, whole and split over two writes with a pause
pty_run secret -- /bin/sh -c 'echo "whole: $AGENT_LIVE_SECRET"; printf "split: CANARY-LIVE-"; sleep 1;
	printf "SPLIT-4d7 end\n"; printf "esc: \033[31mred\033]0;title\007 bidi: \342\200\256x\n"; echo "to stderr: $AGENT_LIVE_SECRET" >&2'
raw="$W/secret.raw"
t_run grep -caF 'CANARY-LIVE' "$raw"
t_is "secret: no part of the configured secret reaches the terminal" "$AG_OUT" 0
t_run grep -caF 'SPLIT-4d7' "$raw"
t_is "secret: nor the second half of the split write" "$AG_OUT" 0
t_ok "secret: the whole one is shown redacted" grep -qaF 'agent: whole: [REDACTED]' "$raw"
t_ok "secret: the split one too, as one line" grep -qaF 'agent: split: [REDACTED] end' "$raw"
t_ok "secret: stderr lines are framed as the agent's stderr" grep -qaF 'agent stderr: to stderr: [REDACTED]' "$raw"
t_ok "secret: a terminal escape is shown escaped" grep -qaF 'agent: esc: \x1b[31mred\x1b]0;title\x07 bidi: \u202ex' "$raw"
t_run "$PY" -c 'import sys; b=open(sys.argv[1],"rb").read(); sys.exit(1 if b"\x1b" in b or b"\x07" in b or "\u202e".encode() in b else 0)' "$raw"
t_is "secret: no raw ESC, BEL or bidi control reaches the terminal" "$AG_RC" 0

# --- 3. --quiet: none of the agent's output
pty_run quiet --quiet -- /bin/sh -c 'echo quiet-line-3e9; echo quiet-err-3e9 >&2'
t_run grep -caE 'quiet-(line|err)-3e9|^agent' "$W/quiet.raw"
t_is "quiet: none of the agent's output is shown" "$AG_OUT" 0
t_ok "quiet: the summary still is" grep -qa 'Result: PASS' "$W/quiet.raw"

# --- 4. progress: a 20,000-file repository, on a terminal and piped
"$PY" - "$W/repo" <<'PYEOF'
import os, sys
root = os.path.join(sys.argv[1], "many")
for d in range(200):
    p = os.path.join(root, "d%03d" % d)
    os.makedirs(p)
    for f in range(100):
        with open(os.path.join(p, "f%03d.txt" % f), "w") as fh:
            fh.write("file %d %d\n" % (d, f))
PYEOF
chown -R "$U:$U" "$W/repo"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
# What is shown here is the copy's and the capture's progress; the agent's
# git repository (t0414) would add a second pass over the 20,000 files and
# their removal to each of the four runs below, for nothing this file checks.
printf '%s\n' "workspace: {git: none}" >>"$W/c.yaml"
pty_run big -- /bin/sh -c 'echo big-run'
t_ok "progress on a terminal: the workspace copy shows entries and bytes" \
	grep -qaE 'agentguard: workspace copy: ([0-9]+/[0-9]+ files, [0-9.]+ [KMG]?i?B|listing, [0-9]+ entries)' "$W/big.raw"
t_ok "progress on a terminal: updated in place with a carriage return" grep -qaP '\r(?!\n)agentguard: (workspace copy|change capture|source check)' "$W/big.raw"
t_ok "progress on a terminal: each stage ends with done" grep -qaE 'agentguard: workspace copy: 200[0-9]{2} files, .*, done\.' "$W/big.raw"
t_ok "progress on a terminal: the agent's line is shown too" grep -qa '^agent: big-run' "$W/big.raw"
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c 'echo piped-run'
ledger_runs
printf '%s' "$AG_OUT" >"$T/piped.txt"
t_is "piped: the run passes" "$AG_RC" 0
t_run grep -caE 'workspace copy|change capture|source check' "$T/piped.txt"
t_is "piped: no progress at all" "$AG_OUT" 0
t_run grep -caP '\r' "$T/piped.txt"
t_is "piped: no carriage return" "$AG_OUT" 0
t_ok "piped: the agent's output is still shown" grep -qa '^agent: piped-run$' "$T/piped.txt"

# --- 5. --json: stdout is one JSON document, the agent's output on stderr
as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json -- /bin/sh -c 'echo json-run-out; echo json-run-err >&2' \
	>"$T/json.out" 2>"$T/json.err" || true
ledger_runs
t_ok "json: stdout is one JSON document" "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/json.out"
t_ok "json: the agent's stdout line went to stderr" grep -qx 'agent: json-run-out' "$T/json.err"
t_ok "json: and its stderr line" grep -qx 'agent stderr: json-run-err' "$T/json.err"
# --- 6. the capture cap: what is shown stops where the capture stops, said
# once; the cap falls inside the secret's line (bytes 990..1011 of 1000)
sed 's/^max_output_bytes: .*/max_output_bytes: 1000/' "$W/c.yaml" >"$W/cap.yaml"
chown "$U:$U" "$W/cap.yaml"
t_run as_user "$AG_BIN" contained-run "$W/cap.yaml" --repo repo -- /bin/sh -c \
	'printf "%0989d\n" 0; echo "$AGENT_LIVE_SECRET"; echo after-the-cap'
ledger_runs
printf '%s' "$AG_OUT" >"$T/cap.txt"
t_is "cap: the run passes" "$AG_RC" 0
t_ok "cap: the line before the cap is shown" grep -qx 'agent: 0\{989\}' "$T/cap.txt"
t_is "cap: the cap is said once" "$(grep -c "agent's stdout reached max_output_bytes (1000 bytes)" "$T/cap.txt")" 1
t_run grep -cE 'after-the-cap|CANARY|agent: C' "$T/cap.txt"
t_is "cap: nothing past it is shown, not even the part of the secret the cap kept" "$AG_OUT" 0
check_clean "after the runs"
t_done
