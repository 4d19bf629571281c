#!/usr/bin/env bash
# t0405: every hostile agent of t0401 (writes outside the workspace, the
# host environment, a network, fork and memory bombs, tmpfs and output
# floods, background processes, planted links, hardlinks, FIFOs and .git,
# SIGKILL to AgentGuard then `agentguard cleanup`), with
# contained_execution.runtime: gvisor: the preflight proves gVisor's kernel
# from inside the probe, the agent's container runs under it, and each case
# is contained, recorded and cleaned as under runc.
set -euo pipefail
AG_TEST_RUNTIME=gvisor exec bash "$(dirname "$0")/t0401-contained-hostile.sh"
