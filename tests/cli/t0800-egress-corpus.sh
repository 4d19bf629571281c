#!/usr/bin/env bash
# t0800: the study-egress corpus (tests/egress-corpus, made by generate.py)
# through the real binary: every policy document (`study-egress policy
# validate --json`: accept, or the expected reason), every event (`study-egress
# decide --json`: allow/deny, reason, address class: one event per range
# edge, IPv4 also as IPv4-mapped IPv6) and every manifest (`study-egress
# manifest validate --json`: completion, or the expected reason). The work is
# done by tests/egress-corpus/check.py, which prints TAP; this passes it on.
# It also checks the corpus sizes the issue asks for (>= 200 policies,
# >= 100 events).
set -u
root=${AG_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export AG_ROOT="$root" AG_BIN="${AG_BIN:-$root/build/agentguard}"
corpus=$root/tests/egress-corpus
np=$(wc -l <"$corpus/policies.jsonl")
ne=$(wc -l <"$corpus/events.jsonl")
if [ "$np" -lt 200 ] || [ "$ne" -lt 100 ]; then
	echo "1..1"
	echo "not ok 1 - corpus too small: $np policies (>= 200), $ne events (>= 100)"
	exit 1
fi
exec python3 "$corpus/check.py" policies events manifests
