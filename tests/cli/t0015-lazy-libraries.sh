#!/usr/bin/env bash
# t0015: libcurl, libgit2 and libarchive are loaded only by the processes
# that use them (src/lib/base/lazylib.h). A command that needs none
# (validate, schema) loads none of them; one that talks to the engine
# loads libcurl. A library that cannot be loaded (a broken libcurl.so.4
# first on LD_LIBRARY_PATH, as a broken install would be) fails the command
# with a named reason, "lib.load", and the soname; it never crashes and the
# engine is never reached.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
chmod 755 "$T"

cat >"$T/c.yaml" <<CFG
task_id: lazy-t0015
description: lazy libraries
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox:
  type: docker
  image: "$AG_TEST_IMAGE"
  network: none
contained_execution:
  version: 1
  platform: linux-docker-engine
  network: none
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  cpu_limit: 1
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
CFG

# loaded CMD...: the sonames the dynamic loader opened for CMD, one a line.
loaded() {
	LD_DEBUG=files "$@" 2>&1 >/dev/null | sed -n 's/^[[:space:]]*[0-9]*:[[:space:]]*file=\([^ ]*\) .*/\1/p' | sort -u
}
lazy_re='^lib(curl|git2|archive)\.so'

t_run "$AG_BIN" validate "$T/c.yaml"
t_is "validate: the config is valid" "$AG_RC" 0
t_like "the loader's record is read (validate loads libyaml)" \
	"$(loaded "$AG_BIN" validate "$T/c.yaml")" $'(^|\n)libyaml-0\.so\.2($|\n)'
t_is "validate loads no libcurl, libgit2 or libarchive" \
	"$(loaded "$AG_BIN" validate "$T/c.yaml" | grep -E "$lazy_re" || true)" ""
t_is "schema loads none of them either" \
	"$(loaded "$AG_BIN" schema | grep -E "$lazy_re" || true)" ""
t_run "$AG_BIN" preflight "$T/c.yaml"
t_is "preflight: supported" "$AG_RC" 0
t_like "preflight loads libcurl (it talks to the engine)" \
	"$(loaded "$AG_BIN" preflight "$T/c.yaml")" $'(^|\n)libcurl\.so\.4($|\n)'

mkdir -p "$T/broken"
printf 'not an ELF object\n' >"$T/broken/libcurl.so.4"
t_run env LD_LIBRARY_PATH="$T/broken" "$AG_BIN" preflight "$T/c.yaml" --json
t_unlike "a broken libcurl: no crash (no signal exit)" "$AG_RC" '^(0|13[0-9])$'
t_like "... the named reason lib.load" "$AG_OUT" 'lib\.load'
t_like "... naming the library" "$AG_OUT" 'libcurl\.so\.4'
t_unlike "... and no private path of the host" "$AG_OUT" "${T//./\\.}"
t_is "... no probe container was created" \
	"$("$AG_DOCKER" ps -aq --filter label=agentguard.owner=preflight --filter "label=agentguard.test-run=$AG_TEST_RUN_ID")" ""
t_done
