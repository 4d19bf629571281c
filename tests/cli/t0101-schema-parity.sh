#!/usr/bin/env bash
# t0101: the shipped JSON Schema (data/schemas/agentguard-config-v1.schema.json)
# agrees with the config loader on every corpus document the schema can judge,
# and `agentguard schema` prints it byte for byte. The work is done by
# tests/schema/parity.py, which prints TAP; this file passes it through.
#
# It needs the system Python with Debian's python3-yaml and python3-jsonschema
# (the python3 first on PATH may be another one without them).
set -u
root=${AG_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export AG_ROOT="$root"
export AG_BIN="${AG_BIN:-$root/build/agentguard}"
py=/usr/bin/python3

if [ ! -x "$py" ] || ! "$py" -c 'import jsonschema, yaml' 2>/dev/null; then
	echo "1..1"
	echo "not ok 1 - $py can import jsonschema and yaml (install python3-jsonschema python3-yaml)"
	exit 1
fi
cd "$root" || exit 1
exec "$py" tests/schema/parity.py
