#!/usr/bin/env bash
# t0601: the GitHub Actions batch example,
# examples/github-actions/agentguard-batch.yml, parsed (PyYAML) and checked:
# started by hand only, read-only contents permission, every action pinned
# by a full commit SHA with its version comment, checkouts without persisted
# credentials, no ${{ }} in any run block; the matrix lists exactly the
# shards 1..SHARD_COUNT and does not cancel the others when one fails; each
# shard runs `agentguard batch --shard "$SHARD/$SHARD_COUNT"` with its own
# ephemeral key and uploads its directory with the public key in it; the
# merge job needs the shards, runs even when one failed, downloads every
# shard where the merge step looks for it and merges all SHARD_COUNT of
# them, trusting each shard's key. The pinned AgentGuard commit is one of
# ours and its `batch` has every option the workflow uses, as the current
# build does. (t1200 runs the shards and the merge themselves.)
# Single-quoted $ and ${{ }} below are literal on purpose.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

PY=/usr/bin/python3
WF="$AG_ROOT/examples/github-actions/agentguard-batch.yml"

wf() {
	"$PY" - "$WF" "$1" <<'PY'
import re, sys, yaml
text = open(sys.argv[1], encoding="utf-8").read()
d = yaml.safe_load(text)
on = d["on"] if "on" in d else d.get(True)
jobs = d.get("jobs") or {}
shard = jobs.get("shard") or {}
merge = jobs.get("merge") or {}
steps = (shard.get("steps") or []) + (merge.get("steps") or [])
def step(job, i):
    return next(s for s in job["steps"] if s.get("id") == i)
uses = [s["uses"] for s in steps if "uses" in s]
runs = [s["run"] for s in steps if "run" in s]
n = int(d["env"]["SHARD_COUNT"])
print(eval(sys.argv[2]))
PY
}

t_ok "the workflow parses as YAML" wf 'd is not None'
t_is "started by hand only" "$(wf 'sorted(on)')" "['workflow_dispatch']"
t_is "top-level permissions are exactly {contents: read}" "$(wf 'd.get("permissions")')" "{'contents': 'read'}"
t_is "no job grants permissions of its own" "$(wf '[j for j in jobs if "permissions" in jobs[j]]')" "[]"
t_is "two jobs: the shards and the merge" "$(wf 'sorted(jobs)')" "['merge', 'shard']"
t_is "every uses is owner/repo@<40 hex>" "$(wf 'all(re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@[0-9a-f]{40}", u) for u in uses)')" True
t_is "every uses line carries a version comment" "$(wf 'all(re.search(r"@[0-9a-f]{40} # v[0-9]+(\.[0-9]+)*\s*$", l) for l in text.splitlines() if re.match(r"\s*(- )?uses:", l))')" True
t_is "every checkout has persist-credentials: false" "$(wf 'all(s["with"].get("persist-credentials") is False for s in steps if s.get("uses", "").startswith("actions/checkout@"))')" True
t_is "no run block uses \${{ }} expressions" "$(wf 'any("${{" in r for r in runs)')" False
t_unlike "no secret is used" "$(grep -v '^[[:space:]]*#' "$WF")" 'secrets\.|GITHUB_TOKEN'
t_is "the same action pins as the contained-run example" \
	"$(wf 'sorted(set(uses))' | tr -d "[]' " | tr ',' '\n' | grep -v '^$' | while read -r u; do grep -c "$u" "$AG_ROOT/examples/github-actions/agentguard-contained-run.yml" >/dev/null && echo same || echo "$u"; done | sort -u)" same

# --- the shards
t_is "the matrix is exactly 1..SHARD_COUNT" "$(wf 'shard["strategy"]["matrix"]["shard"] == list(range(1, n + 1))')" True
t_is "one failed shard does not cancel the others" "$(wf 'shard["strategy"]["fail-fast"]')" False
t_is "the shard number reaches the steps through env" "$(wf 'shard["env"]["SHARD"]')" '${{ matrix.shard }}'
b=$(wf 'step(shard, "batch")["run"]')
t_like "the shard runs its slice" "$b" 'agentguard batch "\$BATCH_FILE" --out "shard-\$SHARD" --shard "\$SHARD/\$SHARD_COUNT"'
t_like "the shard signs with its ephemeral key" "$b" '--signing-key "\$RUNNER_TEMP/agentguard-signing-key.pem"'
t_like "the shard plans before it runs" "$b" 'batch "\$BATCH_FILE" --plan --shard'
k=$(wf 'step(shard, "signing-key")["run"]')
t_like "the key's public half goes into the shard directory" "$k" '>"shard-\$SHARD/agentguard-evidence-public-key.pem"'
t_is "every shard uploads, even after a failed trial" "$(wf 'step(shard, "upload-shard").get("if")')" 'always()'
t_is "the upload keeps the hidden chain files" "$(wf 'step(shard, "upload-shard")["with"]["include-hidden-files"]')" True
t_is "the upload is named per shard" "$(wf 'step(shard, "upload-shard")["with"]["name"]')" 'agentguard-batch-shard-${{ matrix.shard }}'
t_is "images are pulled before the batch" "$(wf '[s.get("id") for s in shard["steps"]].index("pull-images") < [s.get("id") for s in shard["steps"]].index("batch")')" True

# --- the merge
t_is "the merge needs the shards" "$(wf 'merge.get("needs")')" shard
t_is "the merge runs even when a shard failed" "$(wf 'merge.get("if")')" 'always()'
t_is "the merge downloads every shard into shards/<artifact name>" "$(wf '[(s["with"].get("pattern"), s["with"].get("path"), s["with"].get("merge-multiple")) for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]')" "[('agentguard-batch-shard-*', 'shards', None)]"
m=$(wf 'step(merge, "merge")["run"]')
t_like "the merge merges every shard" "$m" 'for k in \$\(seq 1 "\$SHARD_COUNT"\)'
t_like "the merge looks where the download put them" "$m" 'shards/agentguard-batch-shard-\$k'
t_like "the merge trusts each shard's key" "$m" '--public-key "shards/agentguard-batch-shard-\$k/agentguard-evidence-public-key.pem"'
t_like "the merge calls batch merge" "$m" 'agentguard batch merge "\$\{dirs\[@\]\}" --out merged "\$\{keys\[@\]\}"'
t_like "the merge fails the job when the merge is refused" "$m" 'exit "\$status"'

# --- every option the workflow passes exists, now and at the pinned commit
opts=$(grep -o -- '--[a-z-]*' <<<"$(wf '"\n".join(runs)')" | sort -u | grep -v -- '--quiet$\|--format\|--no-install-recommends\|--signing-key$' || true)
help=$("$AG_BIN" batch --help)
for o in $opts --signing-key; do
	case "$o" in --plan | --out | --shard | --public-key | --signing-key)
		t_like "batch --help offers $o" "$help" "$o" ;;
	esac
done
REF=$(wf 'd["env"]["AGENTGUARD_REF"]')
t_like "AGENTGUARD_REF is a full commit SHA" "$REF" '^[0-9a-f]{40}$'
if git -C "$AG_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	t_ok "AGENTGUARD_REF is in this checkout's history" git -C "$AG_ROOT" merge-base --is-ancestor "$REF" HEAD
	pinned=$(git -C "$AG_ROOT" show "$REF:src/cli/cmd_batch.c" 2>/dev/null || true)
	for o in --plan --out --shard --public-key --signing-key merge; do
		t_like "the pinned commit's batch has $o" "$pinned" "$o"
	done
else
	t_skip "AGENTGUARD_REF is in this checkout's history" "not a git checkout"
fi
t_done
