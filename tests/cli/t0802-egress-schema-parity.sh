#!/usr/bin/env bash
# t0802: the study-egress JSON Schemas (data/schemas/live-study-egress-
# {policy,manifest}-v1.schema.json) agree with the loader on every corpus
# document, or the difference is a listed rule a schema cannot state; both
# are shipped in the binary (`study-egress schema policy|manifest` prints
# them byte for byte). tests/schema/egress_parity.py does the work (TAP).
set -u
root=${AG_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export AG_ROOT="$root" AG_BIN="${AG_BIN:-$root/build/agentguard}"
py=/usr/bin/python3
if [ ! -x "$py" ] || ! "$py" -c 'import jsonschema' 2>/dev/null; then
	echo "1..1"
	echo "not ok 1 - $py can import jsonschema (install python3-jsonschema)"
	exit 1
fi
cd "$root" || exit 1
exec "$py" tests/schema/egress_parity.py
