#!/usr/bin/env bash
# t0700: redaction and `evidence verify` are linear in the agent's output
# (issue 9 finding 4). A real artifact gets 1 MiB (the artifact's string
# bound) of adversarial text in stdout and in stderr, is re-sealed, and
# `evidence verify` must finish inside a wall bound where the quadratic
# scanner of old could not (600 KB took it 40 s; 2 x 1 MiB about 4 min).
# The step-count bound without a clock is unit/test_redact
# (test_linear_steps); 4 MiB through ag_redact is test_adversarial_4mib there.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-contained.sh"
. "$(dirname "$0")/lib-evidence.sh"

config c
make_repo
run -- /bin/sh -c 'echo hello'
t_is "a fresh run: exit 0" "$AG_RC" 0
D=$(dirname "$REPORT")

for shape in 'a.' 'x.token.password.' 'a.b.c.d=' '--token --api-key '; do
	ev_py "$REPORT" "u = '''$shape'''; n = 1 << 20; a['command_result']['stdout'] = (u * (n // len(u) + 1))[:n]; a['command_result']['stderr'] = (u * (n // len(u) + 1))[:n - 1]"
	ev_reseal "$D"
	start=$(date +%s)
	t_run timeout 60 "$AG_BIN" evidence verify "$D"
	took=$(($(date +%s) - start))
	# '--token --api-key' repeated is a credential flag followed by a flag: no value to redact.
	t_is "verify of 2 x 1 MiB of '$shape' finishes (exit 0, ${took}s; 124 = timed out)" "$AG_RC" 0
done

# The writer's redaction of a long secret-looking run stays linear too: the
# redacted form is what verify expects, so the same artifact verifies.
ev_py "$REPORT" "a['command_result']['stdout'] = 'password=' + 'a.' * ((1 << 19) - 8)"
ev_reseal "$D"
t_run timeout 60 "$AG_BIN" evidence verify "$D"
t_is "an unredacted 1 MiB password value is refused, quickly" "$AG_RC" 2
t_like "... as a secret" "$AG_OUT" 'evidence\.secret'
t_done
