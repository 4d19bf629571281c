#!/usr/bin/env bash
# t1012: t1010 (a closed terminal, SIGHUP then SIGQUIT to AgentGuard's
# process group while the agent runs: exit 129 and 131, the container
# gone, the artifact written and verifying) with
# contained_execution.runtime: gvisor.
set -euo pipefail
AG_TEST_RUNTIME=gvisor exec bash "$(dirname "$0")/t1010-signal-hangup.sh"
