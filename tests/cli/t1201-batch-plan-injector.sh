#!/usr/bin/env bash
# t1201: the batch planner, network-free, with the FAULT INJECTOR answering
# for the engine (tests/fakes/fake-engine: its network list is what the test
# says, no request reaches a real engine, no network is created). A study
# batch asking for 4 at once gets 2 when the subnet pool has 2 free pairs,
# and says why; a pool with none left is refused before anything runs
# (exit 3, batch.plan.address_pool, with the fix); contained-only trials
# never ask the engine; a batch file's mistakes are named by file, line and
# key. (The memory and cores bounds: tests/unit/test_batch.c, with facts
# no real machine here offers.)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
. "$(dirname "$0")/lib-engine.sh"

fake_engine_start "$T/fe"
W="$T/w"
mkdir -p "$W"
img='127.0.0.1:5000/none@sha256:0000000000000000000000000000000000000000000000000000000000000000'
# cfg NAME MEMORY [extra lines]
cfg() {
	local name=$1 mem=$2
	shift 2
	{
		printf '%s\n' "task_id: t1201" "description: planner" "test_command: 'true'" "mode: ci" \
			"expected_modified_files: {min: 0, max: 50}" "sandbox: {type: docker, image: '$img', network: none}" \
			"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
			"  required_uid: 2001" "  required_gid: 2001" "  memory_limit: $mem" \
			"  pids_limit: 64" "  tmpfs_size: 16m"
		local l
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$W/$name.yaml"
}
cfg study 128m "study_egress: {policy: p.yaml, gateway_image: '$img'}"
cfg plain 128m
cat >"$W/b.yaml" <<'EOF'
version: 1
trials:
  - {name: s, mode: study, config: study.yaml, argv: [/bin/true], repetitions: 4}
EOF
# networks NET...: the engine's network list, one bridge per IPv4 subnet
networks() {
	local body='[' n sep=''
	for n in "$@"; do
		body+="$sep{\"Name\":\"n$RANDOM\",\"Driver\":\"bridge\",\"IPAM\":{\"Config\":[{\"Subnet\":\"$n\"}]}}"
		sep=,
	done
	body+=']'
	"$PY" -c 'import json,sys; print(json.dumps([
 {"method": "GET", "path": "^/_ping$", "action": "status", "status": 200, "body": "OK"},
 {"method": "GET", "path": "^/networks$", "action": "status", "status": 200, "body": sys.argv[1]}]))' "$body" >"$FE_RULES"
	: >"$FE_RULES.log"
}
PY=/usr/bin/python3

# 10.254.0.0/16 holds 512 /26 pairs; all but the last /24 (two pairs) in use
networks 10.254.0.0/17 10.254.128.0/18 10.254.192.0/19 10.254.224.0/20 10.254.240.0/21 \
	10.254.248.0/22 10.254.252.0/23 10.254.254.0/24 172.17.0.0/16
t_run "$AG_BIN" batch "$W/b.yaml" --plan --jobs 4 --docker-socket "$FE_SOCK"
t_is "two free pairs: exit 0" "$AG_RC" 0
t_like "two free pairs: cut to 2, and why" "$AG_OUT" 'concurrency 2 for 4 trials \(asked 4; cut by the address pool: 2 free study subnet pairs\)'
t_run "$AG_BIN" batch "$W/b.yaml" --plan --jobs 4 --json --docker-socket "$FE_SOCK"
t_is "two free pairs: the JSON plan" "$("$PY" -c 'import json,sys; p=json.loads([l for l in sys.argv[1].splitlines() if l.startswith("{")][0]); print(p["jobs"], p["cut_by"], p["pools"][0]["free_pairs"], p["pools"][0]["pairs"])' "$AG_OUT")" "2 address_pool 2 512"
t_like "two free pairs: the engine was asked for its networks" "$(cat "$FE_RULES.log")" 'GET /v1\.41/networks|GET /networks'

networks 10.254.0.0/16
ag_must_fail 3 batch.plan.address_pool "no free pair: refused before anything runs" \
	"$AG_BIN" batch "$W/b.yaml" --out "$W/out" --docker-socket "$FE_SOCK"
t_like "no free pair: names the fix" "$AG_OUT" 'remove unused networks or widen study_egress.subnet_pool'
t_ok "no free pair: no output directory" test ! -e "$W/out"

# contained trials only: the engine is not asked
printf '%s\n' 'version: 1' 'trials:' '  - {name: c, config: plain.yaml, argv: [/bin/true], repetitions: 3}' >"$W/c.yaml"
networks 10.254.0.0/16
t_run "$AG_BIN" batch "$W/c.yaml" --plan --jobs 8 --docker-socket "$FE_SOCK"
t_like "contained only: no more than the trials" "$AG_OUT" 'concurrency 3 for 3 trials \(asked 8; no more than the trials\)'
t_is "contained only: no engine request" "$(wc -l <"$FE_RULES.log")" 0


# the batch file's mistakes: file, line, key
printf '%s\n' 'version: 1' 'trials:' '  - name: a' '    config: plain.yaml' '    argv: [/bin/true]' '    repeat: 2' >"$W/e1.yaml"
ag_must_fail 2 batch.file.unknown_key "an unknown key is refused" "$AG_BIN" batch "$W/e1.yaml" --plan
t_like "an unknown key: file, line and key" "$AG_OUT" "e1.yaml' line 6 column 5: trials\[0\]\.repeat"
printf '%s\n' 'version: 1' 'trials:' '  - {name: a, config: plain.yaml, argv: [/bin/true]}' '  - {name: a, config: plain.yaml, argv: [/bin/false]}' >"$W/e2.yaml"
ag_must_fail 2 batch.file.duplicate_name "a name used twice is refused" "$AG_BIN" batch "$W/e2.yaml" --plan
printf '%s\n' 'version: 1' 'trials:' '  - {name: a, config: missing.yaml, argv: [/bin/true]}' >"$W/e3.yaml"
ag_must_fail 2 "" "a config that does not load is refused, naming the trial" "$AG_BIN" batch "$W/e3.yaml" --plan
t_like "a config that does not load: the trial named" "$AG_OUT" "batch trial 'a'"
ag_must_fail 2 batch.shard "--shard 4/3 is refused" "$AG_BIN" batch "$W/c.yaml" --plan --shard 4/3
ag_must_fail 2 usage "--out is required to run" "$AG_BIN" batch "$W/c.yaml"

# merge's inputs are untrusted: a directory without a summary, a summary
# AgentGuard did not write, one of another shape
mkdir -p "$W/m1" "$W/m2" "$W/m3"
ag_must_fail 1 batch.merge.read "merge: a shard directory without a summary" "$AG_BIN" batch merge "$W/m1" --out "$W/mo"
printf 'not json' >"$W/m2/batch-summary.json"
ag_must_fail 1 batch.merge.summary "merge: a summary that is not JSON" "$AG_BIN" batch merge "$W/m2" --out "$W/mo"
printf '{"schema":"agentguard.batch-summary","schema_version":1,"batch_sha256":"<b>","trials_total":1,"trials":[]}' >"$W/m3/batch-summary.json"
ag_must_fail 1 batch.merge.summary "merge: a batch_sha256 that is not a digest" "$AG_BIN" batch merge "$W/m3" --out "$W/mo"
t_ok "merge: nothing written for a refused merge" test ! -e "$W/mo/batch-summary.json"
ag_must_fail 2 usage "merge: no shard directory" "$AG_BIN" batch merge --out "$W/mo"
t_done
