#!/usr/bin/env bash
# t0422: the artifact is always written, whatever the agent prints (issue 9,
# finding 5). With max_output_bytes above 1 MiB an agent printing more than
# 1 MiB used to leave no artifact at all while the terminal named the
# missing file. The artifact keeps a fixed bound of each stream (256 KiB,
# independent of max_output_bytes), records it as truncated with the byte
# count the agent wrote, verifies, and the terminal names only a file that
# exists.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

config c
sed -i 's/^max_output_bytes: .*/max_output_bytes: 8388608/' "$W/c.yaml"
make_repo
t_cleanup remove_run_containers
cap=262144

# --- 3 MiB of text on stdout, 1.5 MiB of non-UTF-8 bytes on stderr
run -- /bin/sh -c 'head -c 3145728 /dev/zero | tr "\000" a; head -c 1572864 /dev/zero | tr "\000" "\377" >&2'
t_is "big: the run passes (exit 0)" "$AG_RC" 0
t_ok "big: the artifact exists" test -s "$REPORT"
t_is "big: stdout is recorded truncated" "$(art 'a["command_result"]["stdout_truncated"]')" True
t_is "big: stderr is recorded truncated" "$(art 'a["command_result"]["stderr_truncated"]')" True
t_is "big: the bytes the agent wrote to stdout are recorded" "$(art 'a["command_result"]["stdout_bytes"]')" 3145728
t_is "big: and to stderr" "$(art 'a["command_result"]["stderr_bytes"]')" 1572864
t_ok "big: stdout kept within the fixed bound" test "$(art 'len(a["command_result"]["stdout"].encode())')" -le $cap
t_like "big: what is kept is the agent's output" "$(art 'a["command_result"]["stdout"][:8]')" '^aaaaaaaa$'
t_ok "big: the artifact stays small" test "$(stat -c %s "$REPORT")" -lt 4000000
t_is "big: the containment evidence says truncated" \
	"$(art 'a["containment_evidence"]["execution"]["stdout_truncated"]')" True
t_run "$AG_BIN" evidence verify "$REPORT"
t_is "big: the artifact verifies" "$AG_RC" 0
check_clean "big"

# --- the terminal names the report only when it exists
t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo -- /bin/sh -c 'head -c 2097152 /dev/zero | tr "\000" b'
t_is "text: exit 0" "$AG_RC" 0
path=$(printf '%s\n' "$AG_OUT" | sed -n 's/^Contained run report path: //p')
t_ok "text: the named report exists" test -s "$W/$path"
t_unlike "text: no score beside a failure" "$AG_OUT" 'Result: FAIL'

# --- below the fixed bound, max_output_bytes still rules, and the count is exact
config c
sed -i 's/^max_output_bytes: .*/max_output_bytes: 1000/' "$W/c.yaml"
run -- /bin/sh -c 'head -c 5000 /dev/zero | tr "\000" c'
t_is "small: exit 0" "$AG_RC" 0
t_is "small: stdout_bytes counts what was written, past the capture" "$(art 'a["command_result"]["stdout_bytes"]')" 5000
t_is "small: truncated" "$(art 'a["command_result"]["stdout_truncated"]')" True
t_ok "small: at most max_output_bytes kept" test "$(art 'len(a["command_result"]["stdout"].encode())')" -le 1000
run -- /bin/echo short
t_is "exact: stdout_bytes of a short output" "$(art 'a["command_result"]["stdout_bytes"]')" 6
t_is "exact: not truncated" "$(art 'a["command_result"]["stdout_truncated"]')" False
t_is "exact: the text is whole" "$(art 'a["command_result"]["stdout"]')" short
t_done
