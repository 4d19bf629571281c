#!/usr/bin/env bash
# t0903: the canonical rootfs digest (`agentguard runtime-image
# rootfs-digest TAR`) on crafted tars: it ignores mtimes and member order,
# and changes with content, mode, owner, link target and name; an empty
# tar and a member named twice are refused; a UTF-8 name is read whole.
# An independent Python implementation gives the same rootfs and build
# context digests.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

rd() { "$AG_BIN" runtime-image rootfs-digest "$@"; }
digest() { rd "$1" | cut -d' ' -f1; }
R="$T/r"
mkdir -p "$R/etc" "$R/usr/bin"
printf 'root:x:0:0::/:/nonexistent\n' >"$R/etc/passwd"
printf 'binary' >"$R/usr/bin/tool"
chmod 0755 "$R/usr/bin/tool"
ln -s tool "$R/usr/bin/alias"
printf 'certificate' >"$R/etc/Főtanúsítvány.crt"
mk() { tar -C "$R" --sort=name --owner=0 --group=0 --numeric-owner --format=posix "$@" -cf - . ; }

mk --mtime=@1704067200 >"$T/a.tar"
base=$(digest "$T/a.tar")
t_like "a digest is sha256:<hex>" "$base" '^sha256:[0-9a-f]{64}$'
t_like "members are counted" "$(rd "$T/a.tar")" ' 7$'
mk --mtime=@1 >"$T/b.tar"
t_is "mtimes do not change the digest" "$(digest "$T/b.tar")" "$base"
tar -C "$R" --owner=0 --group=0 --numeric-owner --format=gnu --mtime=@5 -cf "$T/c.tar" ./usr ./etc
t_is "member order and tar format do not change it" "$(digest "$T/c.tar")" "$base"

printf 'binarY' >"$R/usr/bin/tool"
mk --mtime=@1704067200 >"$T/d.tar"
t_unlike "one changed byte changes it" "$(digest "$T/d.tar")" "^$base\$"
printf 'binary' >"$R/usr/bin/tool"
chmod 0700 "$R/usr/bin/tool"
mk --mtime=@1704067200 >"$T/e.tar"
t_unlike "a changed mode changes it" "$(digest "$T/e.tar")" "^$base\$"
chmod 0755 "$R/usr/bin/tool"
tar -C "$R" --sort=name --owner=10001 --group=10001 --numeric-owner --format=posix -cf "$T/f.tar" .
t_unlike "a changed owner changes it" "$(digest "$T/f.tar")" "^$base\$"
ln -sf passwd "$R/usr/bin/alias"
mk >"$T/g.tar"
t_unlike "a changed link target changes it" "$(digest "$T/g.tar")" "^$base\$"
ln -sf tool "$R/usr/bin/alias"
mk >"$T/h.tar"
t_is "restored, the digest is back" "$(digest "$T/h.tar")" "$base"

# An independent Python implementation (tarfile, hashlib) agrees.
REF="$AG_ROOT/tests/fixtures/runtime-images/reference_digests.py"
t_is "Python reference: same rootfs digest (posix tar)" "$(python3 "$REF" rootfs "$T/a.tar")" "$base"
t_is "Python reference: same rootfs digest (gnu tar, other order)" "$(python3 "$REF" rootfs "$T/c.tar")" "$base"
ln "$R/etc/passwd" "$R/etc/passwd-hardlink"
mkfifo "$R/etc/fifo"
mk >"$T/i.tar"
t_is "Python reference: hardlinks and fifos agree" "$(python3 "$REF" rootfs "$T/i.tar")" "$(digest "$T/i.tar")"
for d in agent gateway base; do
	t_is "Python reference: same context digest of runtime-images/$d" \
		"$("$AG_BIN" runtime-image context-digest "$AG_ROOT/runtime-images/$d")" \
		"$(python3 "$REF" context "$AG_ROOT/runtime-images/$d")"
done
mkdir -p "$T/ctx"
printf 'x' >"$T/ctx/file"
ln -s file "$T/ctx/link"
ag_must_fail 2 images.context.special "a symlink in a build context is refused" \
	"$AG_BIN" runtime-image context-digest "$T/ctx"
ag_must_fail 2 workspace.special_file "a fifo in a build context is refused" \
	"$AG_BIN" runtime-image context-digest "$R"

tar -cf "$T/empty.tar" -T /dev/null
ag_must_fail 2 images.rootfs.empty "an empty tar is refused" rd "$T/empty.tar"
tar -C "$R" -cf "$T/dup.tar" ./etc/passwd
tar -C "$R" -rf "$T/dup.tar" ./etc/passwd
ag_must_fail 2 images.rootfs.duplicate "a member named twice is refused" rd "$T/dup.tar"
printf 'not a tar' >"$T/junk.tar"
ag_must_fail 2 images.rootfs.read "a file that is not a tar is refused" rd "$T/junk.tar"
ag_must_fail 2 images.rootfs.open "a missing file is refused" rd "$T/none.tar"
t_done
