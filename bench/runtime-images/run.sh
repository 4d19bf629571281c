#!/usr/bin/env bash
# bench/runtime-images/run.sh [N] [IMAGE]: `agentguard runtime-image
# identity` against the least a shell needs for the same answer's raw
# material (create, export, rm, sha256 of the tar stream). Interleaved,
# medians and the ratio in one run. See README.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AG_BIN=${AG_BIN:-$ROOT/build/agentguard}
N=${1:-5}
IMAGE=${2:-$(docker image inspect --format '{{range .RepoDigests}}{{.}}{{end}}' 127.0.0.1:5000/agentguard-runtime-agent:stage1)}
D=/usr/bin/docker
LABEL=agentguard.bench=runtime-images
now() { date +%s%N; }
ag() { "$AG_BIN" runtime-image identity "$IMAGE" --role agent >/dev/null; }
shell() {
	local c
	c=$("$D" create --pull never --network none --label "$LABEL" "$IMAGE")
	"$D" export "$c" | sha256sum >/dev/null
	"$D" rm -f "$c" >/dev/null
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
a=() b=()
for _ in $(seq "$N"); do
	t=$(now); ag; a+=($((($(now) - t) / 1000000)))
	t=$(now); shell; b+=($((($(now) - t) / 1000000)))
done
ma=$(printf '%s\n' "${a[@]}" | median)
mb=$(printf '%s\n' "${b[@]}" | median)
echo "runs: $N each, interleaved; image $IMAGE"
echo "agentguard identity: median $ma ms (all: ${a[*]})"
echo "shell export|sha256: median $mb ms (all: ${b[*]})"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "ratio agentguard/shell: %.2f\n", a / b}'
[ -z "$("$D" ps -aq --filter label=agentguard.owner=runtime-image-export)" ] || { echo "export container left behind" >&2; exit 1; }
