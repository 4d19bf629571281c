#!/usr/bin/env bash
# t0900: the Codex agent input check, with local copies only (no network):
# `agentguard runtime-image verify-inputs` refuses a tampered tarball, a
# changed version or integrity, an extra or a missing lock entry, each with
# its own reason; and scripts/runtime-images stops on a tampered lock
# before it fetches or builds anything. The real @openai/codex 0.159.2
# tarball (4.9 KB, tests/fixtures/runtime-images) passes its hash; the
# 160 MB linux-x64 one is used only when a previous build cached it.
# The same for the Claude Code input (--agent claude-code): its real
# launcher tarball (32 KB) passes, a flipped byte or a junk platform
# tarball is refused naming the package, and the build stops on a tampered
# Claude Code lock before it fetches anything.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

FIX="$AG_ROOT/tests/fixtures/runtime-images"
LOCK="$AG_ROOT/runtime-images/agent/package-lock.json"
CODEX_TGZ="$FIX/codex-0.159.2.tgz"
vi() { "$AG_BIN" runtime-image verify-inputs "$@"; }
# lock_with JQ_FILTER: a copy of the pinned lock changed by jq.
lock_with() {
	jq "$1" "$LOCK" >"$T/lock.json"
	printf '%s\n' "$T/lock.json"
}

t_ok "the committed lock verifies" vi --lock "$LOCK"
printf 'not the tarball\n' >"$T/junk.tgz"

# --- tarballs
ag_must_fail 2 images.tarball.mismatch "a tampered codex tarball is refused" \
	vi --lock "$LOCK" --codex "$T/junk.tgz" --codex-linux-x64 "$T/junk.tgz"
t_like "the mismatch names the codex package" "$AG_OUT" 'node_modules/@openai/codex:'
cp "$CODEX_TGZ" "$T/flipped.tgz"
printf '\x00' | dd of="$T/flipped.tgz" bs=1 seek=2000 conv=notrunc 2>/dev/null
ag_must_fail 2 images.tarball.mismatch "one flipped byte in the real codex tarball is refused" \
	vi --lock "$LOCK" --codex "$T/flipped.tgz" --codex-linux-x64 "$T/junk.tgz"
ag_must_fail 2 images.tarball.mismatch "the real codex tarball passes; a tampered linux-x64 one is refused" \
	vi --lock "$LOCK" --codex "$CODEX_TGZ" --codex-linux-x64 "$T/junk.tgz"
t_like "the mismatch names the linux-x64 package" "$AG_OUT" 'node_modules/@openai/codex-linux-x64:'
ag_must_fail 2 images.tarball.mismatch "the two tarballs swapped are refused" \
	vi --lock "$LOCK" --codex "$T/junk.tgz" --codex-linux-x64 "$CODEX_TGZ"
ln -s "$CODEX_TGZ" "$T/link.tgz"
ag_must_fail 2 images.tarball.open "a tarball reached through a symlink is refused" \
	vi --lock "$LOCK" --codex "$T/link.tgz" --codex-linux-x64 "$T/junk.tgz"
ag_must_fail 2 images.tarball.open "a missing tarball is refused" \
	vi --lock "$LOCK" --codex "$T/none.tgz" --codex-linux-x64 "$T/junk.tgz"

# --- the lock (checked first: a bad lock fails whatever the tarballs)
P='.packages["node_modules/@openai/codex"]'
L='.packages["node_modules/@openai/codex-linux-x64"]'
ag_must_fail 2 images.lock.version "a changed codex version is refused" \
	vi --lock "$(lock_with "$P.version = \"0.159.1\"")" --codex "$CODEX_TGZ" --codex-linux-x64 "$T/junk.tgz"
ag_must_fail 2 images.lock.version "a changed linux-x64 version is refused" \
	vi --lock "$(lock_with "$L.version = \"0.159.2-linux-arm64\"")"
ag_must_fail 2 images.lock.integrity "a changed integrity in the lock is refused" \
	vi --lock "$(lock_with "$P.integrity = \"sha512-AAAA\"")"
ag_must_fail 2 images.lock.integrity "a missing integrity in the lock is refused" \
	vi --lock "$(lock_with "del($L.integrity)")"
ag_must_fail 2 images.lock.resolved "a tarball URL off the registry is refused" \
	vi --lock "$(lock_with "$P.resolved = \"https://example.invalid/codex.tgz\"")"
ag_must_fail 2 images.lock.extra_entry "an extra lock entry is refused" \
	vi --lock "$(lock_with '.packages["node_modules/left-pad"] = {"version": "1.3.0"}')"
ag_must_fail 2 images.lock.extra_entry "an extra platform entry is refused" \
	vi --lock "$(lock_with '.packages["node_modules/@openai/codex-linux-arm64"] = {"version": "0.159.2-linux-arm64"}')"
ag_must_fail 2 images.lock.missing_entry "a missing linux-x64 entry is refused" \
	vi --lock "$(lock_with "del($L)")"
ag_must_fail 2 images.lock.missing_entry "a missing codex entry is refused" \
	vi --lock "$(lock_with "del($P)")"
ag_must_fail 2 images.lock.shape "an install script is refused" \
	vi --lock "$(lock_with "$P.hasInstallScript = true")"
ag_must_fail 2 images.lock.shape "a second root dependency is refused" \
	vi --lock "$(lock_with '.packages[""].dependencies["left-pad"] = "1.3.0"')"
ag_must_fail 2 images.lock.shape "lockfileVersion 1 is refused" \
	vi --lock "$(lock_with '.lockfileVersion = 1')"
printf '{"lockfileVersion": 3,' >"$T/broken.json"
ag_must_fail 2 images.lock.json "a lock that is not JSON is refused" vi --lock "$T/broken.json"
ag_must_fail 2 usage "--codex without --codex-linux-x64 is a usage error" \
	vi --lock "$LOCK" --codex "$CODEX_TGZ"

# --- both tarballs, when a previous build left them in its cache
cache=${AG_RUNTIME_IMAGES_CACHE:-/var/cache/agentguard-runtime-images}/npm/_cacache/content-v2/sha512
linux_tgz=$cache/46/b0/99d57e76c296b594eb17b42b52ca18ce15d40f87b2c7e4272ff07b0a99dff65176d4c315c5a965c52b72736adaae50d1ad5bf4cba31e58eea54e1a4574fd
if [ -f "$linux_tgz" ]; then
	t_ok "both real tarballs verify" vi --lock "$LOCK" --codex "$CODEX_TGZ" --codex-linux-x64 "$linux_tgz"
else
	t_skip "both real tarballs verify" "no cached linux-x64 tarball (t0910 builds it)"
fi

# --- Claude Code: the same checks against its own pins
CLOCK="$AG_ROOT/runtime-images/claude-code/package-lock.json"
CC_TGZ="$FIX/claude-code-2.1.332.tgz"
CP='.packages["node_modules/@anthropic-ai/claude-code"]'
CL='.packages["node_modules/@anthropic-ai/claude-code-linux-x64"]'
t_ok "the committed Claude Code lock verifies" vi --lock "$CLOCK" --agent claude-code
ag_must_fail 2 images.lock.shape "the Codex lock is not the Claude Code lock" vi --lock "$LOCK" --agent claude-code
ag_must_fail 2 images.lock.shape "... nor the other way round" vi --lock "$CLOCK"
ag_must_fail 2 images.tarball.mismatch "the real launcher passes; a junk linux-x64 tarball is refused" \
	vi --lock "$CLOCK" --claude-code "$CC_TGZ" --claude-code-linux-x64 "$T/junk.tgz"
t_like "the mismatch names the linux-x64 package" "$AG_OUT" 'node_modules/@anthropic-ai/claude-code-linux-x64:'
cp "$CC_TGZ" "$T/cc-flipped.tgz"
printf '\x00' | dd of="$T/cc-flipped.tgz" bs=1 seek=3000 conv=notrunc 2>/dev/null
ag_must_fail 2 images.tarball.mismatch "one flipped byte in the real launcher tarball is refused" \
	vi --lock "$CLOCK" --claude-code "$T/cc-flipped.tgz" --claude-code-linux-x64 "$T/junk.tgz"
t_like "the mismatch names the launcher package" "$AG_OUT" 'node_modules/@anthropic-ai/claude-code:'
jq "$CL.integrity = \"sha512-AAAA\"" "$CLOCK" >"$T/cclock.json"
ag_must_fail 2 images.lock.integrity "a changed linux-x64 integrity in the Claude Code lock is refused" \
	vi --lock "$T/cclock.json" --agent claude-code
jq "$CL.hasInstallScript = true" "$CLOCK" >"$T/cclock.json"
ag_must_fail 2 images.lock.shape "an install script on the binary package is refused" \
	vi --lock "$T/cclock.json" --agent claude-code
jq '.packages["node_modules/@anthropic-ai/claude-code-linux-x64-musl"] = {"version": "2.1.332"}' "$CLOCK" >"$T/cclock.json"
ag_must_fail 2 images.lock.extra_entry "another platform's entry is refused" \
	vi --lock "$T/cclock.json" --agent claude-code
ag_must_fail 2 usage "--agent codex with Claude Code tarballs is a usage error" \
	vi --lock "$CLOCK" --agent codex --claude-code "$CC_TGZ" --claude-code-linux-x64 "$T/junk.tgz"

# --- the build stops on a tampered lock before fetching anything
mkdir -p "$T/repo/scripts"
cp "$AG_ROOT/scripts/runtime-images" "$T/repo/scripts/"
cp -R "$AG_ROOT/runtime-images" "$T/repo/"
jq "$L.version = \"0.159.3-linux-x64\"" "$LOCK" >"$T/repo/runtime-images/agent/package-lock.json"
ag_must_fail 1 images.lock.version "scripts/runtime-images refuses a tampered lock first" \
	env AGENTGUARD="$AG_BIN" AG_RUNTIME_IMAGES_CACHE="$T/cache" "$T/repo/scripts/runtime-images" 127.0.0.1:5000
t_unlike "nothing was fetched" "$AG_OUT" 'fetching|npm ci'
cp "$AG_ROOT/runtime-images/agent/package-lock.json" "$T/repo/runtime-images/agent/package-lock.json"
jq "$CP.integrity = \"sha512-AAAA\"" "$CLOCK" >"$T/repo/runtime-images/claude-code/package-lock.json"
ag_must_fail 1 images.lock.integrity "scripts/runtime-images --only claude-code refuses a tampered lock first" \
	env AGENTGUARD="$AG_BIN" AG_RUNTIME_IMAGES_CACHE="$T/cache" "$T/repo/scripts/runtime-images" \
	--only claude-code 127.0.0.1:5000
t_unlike "... nothing was fetched" "$AG_OUT" 'fetching|npm ci'
t_done
