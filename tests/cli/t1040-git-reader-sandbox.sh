#!/usr/bin/env bash
# t1040: the git reader can only read (docs/workspace.md, "Reading Git
# without running it"). The real reader, agentguard re-executed with its
# hidden argv, is asked (test-only argv bit 8) to attempt, inside its real
# sandbox, what a reader subverted by a hostile repository would: a socket,
# a connect, the Docker socket, creating and writing files, reading outside
# the source, execve, allocating past its bound. Then a hostile repository
# whose HEAD commit inflates to 2 GiB is stopped by the memory bound (named,
# with no gigabytes resident), and a `.git` file naming another repository
# on the host is refused by name.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

R="$T/repo"
mkdir -p "$R"
g() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
	git -C "$1" -c user.name=t -c user.email=t@t.invalid "${@:2}"; }
g "$R" init -q
printf 'a\n' >"$R/a.txt"
g "$R" add -A
g "$R" commit -q -m seed

# reader DIR WHAT: the reader with python as its parent; prints "rc=N
# maxrss_kib=M" and then one record a line
reader() {
	python3 - "$AG_BIN" "$@" <<'PY'
import os, resource, subprocess, sys
ag, repo, what = sys.argv[1:]
p = subprocess.run([ag, "__agentguard-git-reader", what, str(os.getpid())], cwd=repo,
                   stdin=subprocess.DEVNULL, capture_output=True, env={})
print("rc=%d maxrss_kib=%d" % (p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
for rec in p.stdout.split(b"\0")[:-1]:
    print(rec.decode("utf-8", "backslashreplace"))
PY
}

out=$(reader "$R" 8)
t_like "probe: the reader ran its probes" "$(head -1 <<<"$out")" '^rc=0 '
p() { sed -n "s/^P$1 //p" <<<"$out"; }
t_is "probe: socket() fails (seccomp)" "$(p socket)" EPERM
t_is "probe: connect() to the Docker socket fails (seccomp)" "$(p connect)" EPERM
t_is "probe: the Docker socket cannot be opened for writing" "$(p open_docker_socket)" EPERM
t_is "probe: the Docker socket cannot be opened at all (Landlock)" "$(p open_docker_socket_ro)" EACCES
t_is "probe: no file can be created" "$(p create_file)" EPERM
t_is "probe: a file of the source can be read" "$(p read_inside)" ok
t_is "probe: no write to any fd but the output pipe" "$(p write_read_only_fd)" EPERM
t_is "probe: not even to stderr" "$(p write_stderr)" EPERM
t_is "probe: nothing outside the source can be read (Landlock)" "$(p read_outside)" EACCES
t_is "probe: execve fails" "$(p execve)" EPERM
# under AddressSanitizer the address-space bound is not set (gitinfo.h)
asan=0
if grep -qa __asan_init "$AG_BIN"; then asan=1; fi
if [ "$asan" = 1 ]; then
	t_skip "probe: an allocation of the whole bound fails" "no RLIMIT_AS under ASan"
else
	t_is "probe: an allocation of the whole bound fails" "$(p allocate_limit)" ENOMEM
fi
t_ok "probe: nothing was created in the source" test ! -e "$R/.agentguard-reader-probe"

if [ "$asan" = 1 ]; then
	t_skip "bomb: stopped by the memory bound" "no RLIMIT_AS under ASan"
else
# A hostile repository: HEAD names a loose commit object that inflates to
# 2 GiB (about 9 MiB on disk). Without the bound libgit2 allocates all of it.
B="$T/bomb"
mkdir -p "$B"
g "$B" init -q
tree=$(g "$B" mktree </dev/null)
oid=$(python3 - "$B/.git/objects" "$tree" <<'PY'
import hashlib, os, sys, zlib
objdir, tree = sys.argv[1:]
body_head = ("tree %s\nauthor t <t@t.invalid> 0 +0000\ncommitter t <t@t.invalid> 0 +0000\n\n" % tree).encode()
total = 2 << 30
size = len(body_head) + total
hdr = b"commit %d\0" % size
h = hashlib.sha1(hdr + body_head)
z = zlib.compressobj(1)
parts = [z.compress(hdr + body_head)]
chunk = b"a" * (64 << 20)
for _ in range(total // len(chunk)):
    h.update(chunk)
    parts.append(z.compress(chunk))
parts.append(z.flush())
oid = h.hexdigest()
os.makedirs(os.path.join(objdir, oid[:2]), exist_ok=True)
with open(os.path.join(objdir, oid[:2], oid[2:]), "wb") as f:
    f.write(b"".join(parts))
print(oid)
PY
)
printf '%s\n' "$oid" >"$B/.git/refs/heads/master"
printf 'ref: refs/heads/master\n' >"$B/.git/HEAD"
t_ok "bomb: the object is small on disk" test "$(stat -c %s "$B/.git/objects/${oid:0:2}/${oid:2}")" -lt $((16 << 20))
start=$SECONDS
out=$(reader "$B" 1)
rc=$(sed -n '1s/^rc=\([0-9]*\) .*/\1/p' <<<"$out")
rss=$(sed -n '1s/.*maxrss_kib=\([0-9]*\).*/\1/p' <<<"$out")
t_is "bomb: the reader stops at its memory bound (exit 6)" "$rc" 6
t_ok "bomb: its peak RSS stayed below 1.1 GiB (was ${rss} KiB)" test "$rss" -lt $((1100 * 1024))
t_ok "bomb: it stopped within 20 s" test $((SECONDS - start)) -lt 20
fi

# A `.git` file naming another repository on the host is refused (exit 5),
# with nothing read from it.
O="$T/other"
mkdir -p "$O"
g "$O" init -q
printf 'secret\n' >"$O/s.txt"
g "$O" add -A
g "$O" commit -q -m other
S="$T/src"
mkdir -p "$S"
printf 'gitdir: %s/.git\n' "$O" >"$S/.git"
out=$(reader "$S" 2)
t_is "gitdir elsewhere: refused (exit 5), nothing written" "$out" "$(head -1 <<<"$out" | sed -n '/^rc=5 /p')"
t_is "gitdir elsewhere: no record" "$(tail -n +2 <<<"$out")" ""
printf 'gitdir: ../other/.git\n' >"$S/.git"
out=$(reader "$S" 2)
t_like "gitdir climbing out: refused (exit 5)" "$(head -1 <<<"$out")" '^rc=5 '
t_done
