#!/usr/bin/env bash
# t0654: every run that changed files writes changes.patch beside the
# artifact, its SHA-256 sealed in the artifact. The round trip: `git apply`
# of `agentguard patch RUN` in a test-made copy of the source reproduces the
# agent's final tree exactly, for every change kind: modify, add, delete,
# rename, mode change (both ways), binary files (added, modified), files
# without a trailing newline, an empty file, a new directory, odd names.
# Tampering with the patch fails `evidence verify` and `agentguard patch`;
# on a terminal the patch's control characters are escaped and --raw is
# refused. Over AG_PATCH_MAX_BYTES no patch is written and the artifact
# says why. A run with no change writes no patch; a file holding a configured
# secret or flagged by the secret scan means no patch (the reason recorded).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"
command -v git >/dev/null || skip_all "git is needed to apply the patch"

config c
make_repo
# more kinds of files in the source
printf 'keep\nlast line without newline' >"$W/repo/src/noeol.txt"
printf '\000\001\002\003 binary \377\376' >"$W/repo/data.bin"
printf '#!/bin/sh\necho run\n' >"$W/repo/run.sh"
chmod 755 "$W/repo/run.sh"
printf 'text that will be emptied\n' >"$W/repo/src/empty-me.txt"
chown -R "$U:$U" "$W/repo"
(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
cp -a "$W/repo" "$T/source-copy" # the test's own copy of the source, before the run

# The agent's changes, as a script run in the container (busybox sh) and,
# for the expected tree, on a second copy by the host's sh.
AGENT='set -e
echo four >> src/edit.txt
rm src/delete.txt
mv docs/old-name.md docs/new-name.md
chmod +x tests/test_a.sh
chmod -x run.sh
printf "\000\001\002 new binary \377" > new.bin
printf "x\000y" >> data.bin
printf "a new file without newline" > src/noeol-new.txt
printf "\nnow ends with newline\n" >> src/noeol.txt
: > src/empty-me.txt
: > empty-new.txt
mkdir -p "deep/new dir"
printf "spaces, quotes \" and unicode \303\251\n" > "deep/new dir/$(printf "na me \303\251.txt")"
printf "colour \033[31mred\033[0m and a bell \007\n" > src/ansi.txt
echo done'
run -- /bin/sh -c "cd /agentguard-workspace && $AGENT"
t_is "run: exit 0" "$AG_RC" 0
SUMMARY=$AG_OUT
RUN=$(dirname "$REPORT")
t_ok "changes.patch is beside the artifact" test -f "$RUN/changes.patch"
t_is "the artifact records it: status, file, hash" \
	"$(art '(a["patch"]["status"], a["patch"]["file"], a["patch"]["sha256"] == __import__("hashlib").sha256(open(__import__("os").path.dirname(sys.argv[1]) + "/changes.patch", "rb").read()).hexdigest())')" \
	"('written', 'changes.patch', True)"
t_is "the artifact counts the binary files" "$(art 'a["patch"]["binary_files"]')" 2
t_like "--json summary names the patch" "$SUMMARY" '"patch":"[^"]*/changes.patch","patch_reason":null,"patch_status":"written"'
t_run "$AG_BIN" evidence verify --public-key "$(pubkey)" "$RUN" --json
t_like "evidence verify passes, with the patch check" "$AG_OUT" '"chain","patch","egress_manifest"\],.*"valid":true'

# expected tree: the same script on a copy by the host's shell
cp -a "$T/source-copy" "$T/expected"
(cd "$T/expected" && sh -c "$AGENT" >/dev/null)

# apply: agentguard patch (piped: exact bytes) in a fresh copy of the source
cp -a "$T/source-copy" "$T/applied"
t_run bash -c 'as_user() { :; }; "$1" patch --public-key "$4" "$2" > "$3"' _ "$AG_BIN" "$RUN" "$T/agent.patch" "$(pubkey)"
t_is "agentguard patch (piped): exit 0" "$AG_RC" 0
t_ok "piped output is the sealed bytes exactly" cmp "$T/agent.patch" "$RUN/changes.patch"
t_run git -C "$T/applied" apply --check "$T/agent.patch"
t_is "git apply --check accepts it" "$AG_RC" 0
[ "$AG_RC" = 0 ] || diag "$AG_OUT"
t_run git -C "$T/applied" apply "$T/agent.patch"
t_is "git apply: exit 0" "$AG_RC" 0
tree() { # DIR: one line per entry: type, git mode bit, content hash
	"$PY" - "$1" <<'PYEOF'
import hashlib, os, stat, sys
root = sys.argv[1]
for d, dirs, files in sorted(os.walk(root)):
    dirs.sort()
    rel = os.path.relpath(d, root)
    if rel != ".":
        print("d", rel.encode("utf-8", "surrogateescape").hex())
    for f in sorted(files):
        p = os.path.join(d, f)
        st = os.lstat(p)
        r = os.path.relpath(p, root).encode("utf-8", "surrogateescape").hex()
        if stat.S_ISLNK(st.st_mode):
            print("l", r, os.readlink(p))
        else:
            print("f", r, "x" if st.st_mode & 0o100 else "-", hashlib.sha256(open(p, "rb").read()).hexdigest())
PYEOF
}
tree "$T/expected" >"$T/expected.tree"
tree "$T/applied" >"$T/applied.tree"
t_ok "the applied copy is the agent's final tree exactly (files, bytes, exec bits, dirs)" \
	diff "$T/expected.tree" "$T/applied.tree"
p=$(cat "$RUN/changes.patch")
t_like "patch: a rename" "$p" $'rename from docs/old-name.md\nrename to docs/new-name.md'
t_like "patch: a mode change" "$p" $'old mode 100644\nnew mode 100755'
t_like "patch: a deletion" "$p" 'deleted file mode 100644'
t_like "patch: a git binary patch" "$p" 'GIT binary patch'
t_like "patch: no newline at end of file" "$p" '\\ No newline at end of file'
t_like "patch: an odd name quoted the git way" "$p" 'diff --git "a/deep/new dir/na me \\303\\251.txt"'

# --- on a terminal: control characters escaped, --raw refused
if command -v script >/dev/null; then
	t_run script -qec "$AG_BIN patch --public-key $(pubkey) $RUN" /dev/null
	t_is "on a terminal: exit 0" "$AG_RC" 0
	t_like "on a terminal: ESC and BEL shown escaped" "$AG_OUT" 'colour \\x1b\[31mred\\x1b\[0m and a bell \\x07'
	t_unlike "on a terminal: no raw ESC reaches it" "$AG_OUT" $'\033\\['
	t_run script -qec "$AG_BIN patch --raw --public-key $(pubkey) $RUN" /dev/null
	t_like "on a terminal: --raw is refused" "$AG_OUT" 'refused on a terminal.*\[usage\]'
else
	t_skip "on a terminal" "no script(1)"
fi

# --- tampering
X=$(ev_copy_root tampered)
C=$(basename "$RUN")
printf 'tamper\n' >>"$X/$C/changes.patch"
ag_must_fail 2 evidence.patch.mismatch "a tampered patch fails evidence verify" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$X/$C"
ag_must_fail 2 evidence.patch.mismatch "and agentguard patch refuses it" "$AG_BIN" patch --public-key "$(pubkey)" "$X/$C"
rm "$X/$C/changes.patch"
ag_must_fail 2 evidence.patch.missing "a missing patch fails evidence verify" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$X/$C"
ln -s ../../../../etc/passwd "$X/$C/changes.patch"
ag_must_fail 2 evidence.patch.symlink "a patch that is a symlink is refused" "$AG_BIN" patch --public-key "$(pubkey)" "$X/$C"

# --- secrets never reach the patch
run -- /bin/sh -c 'cd /agentguard-workspace && echo "token=$AGENT_API_TOKEN" > src/leak.txt'
# the secret scan finds a configured secret first (t1055), so the patch is withheld for it
t_is "a configured secret in a file: patch omitted, reason named" "$(art '(a["patch"]["status"], a["patch"]["reason"], a["patch"]["file"])')" "('omitted', 'patch.secret_scan', None)"
t_ok "a configured secret in a file: the value is in no file of the run directory" \
	bash -c '! grep -rqF CANARY-SENSITIVE-91c2 "$1"' _ "$(dirname "$REPORT")"
config s "secret_content_patterns: [{id: canary-lit, contains: CANARY-LIT-0a9b8c7d}]"
t_run as_user "$AG_BIN" contained-run "$W/s.yaml" --repo repo --json -- /bin/sh -c 'echo CANARY-LIT-0a9b8c7d > /agentguard-workspace/src/lit.txt'
SCAN_SUMMARY=$AG_OUT
ledger_runs
REPORT=$(ls -td "$W"/.agentguard/contained-runs/*/ | head -1)contained-run.json
t_is "a secret-scan finding: patch omitted, reason named" "$(art '(a["patch"]["status"], a["patch"]["reason"])')" "('omitted', 'patch.secret_scan')"
t_ok "a secret-scan finding: no changes.patch" test ! -e "$(dirname "$REPORT")/changes.patch"
t_like "--json summary: why there is no patch" "$SCAN_SUMMARY" '"patch":null,"patch_reason":"patch.secret_scan","patch_status":"omitted"'

# --- over the bound (AG_PATCH_MAX_BYTES, 32 MiB): 30 MiB of random bytes
# make a git binary patch of about 37.5 MiB: not written, the reason recorded
# (a config with no configured secret: with one, the secret scan would read
# the 30 MiB file, find it over its per-file bound and fail closed, t1055)
sed '/AGENT_API_TOKEN/d' "$W/c.yaml" >"$W/c-nosecret.yaml"
cp "$W/c.yaml" "$W/c-saved.yaml"
cp "$W/c-nosecret.yaml" "$W/c.yaml"
run -- /bin/sh -c 'dd if=/dev/urandom of=/agentguard-workspace/big.bin bs=1048576 count=30 2>/dev/null'
cp "$W/c-saved.yaml" "$W/c.yaml"
t_is "over the bound: the run itself passes" "$AG_RC" 0
t_is "over the bound: patch omitted with the bound's reason" "$(art '(a["patch"]["status"], a["patch"]["reason"], a["patch"]["sha256"])')" "('omitted', 'limit.patch.size', None)"
t_ok "over the bound: no changes.patch" test ! -e "$(dirname "$REPORT")/changes.patch"
t_ok "over the bound: the run still verifies" "$AG_BIN" evidence verify --public-key "$(pubkey)" "$(dirname "$REPORT")"

# --- no change: no patch
run -- /bin/true
t_is "no change: exit 0" "$AG_RC" 0
t_is "no change: status none, no file" "$(art '(a["patch"]["status"], a["patch"]["file"])')" "('none', None)"
t_ok "no change: no changes.patch" test ! -e "$(dirname "$REPORT")/changes.patch"
ag_must_fail 2 evidence.patch.none "no change: agentguard patch says there is none" "$AG_BIN" patch --public-key "$(pubkey)" "$(dirname "$REPORT")"
check_clean "patch runs"
t_done
