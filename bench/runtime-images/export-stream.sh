#!/usr/bin/env bash
# bench/runtime-images/export-stream.sh BEFORE_BIN [N] [IMAGE]: peak memory
# and wall time of `runtime-image identity` on the agent image, the
# buffered export (BEFORE_BIN: whole tar in memory, then a temp file, then
# read back) against the streamed one (build/agentguard), interleaved in one
# run; medians and ratios. Never passes or fails on time. See README.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BEFORE=${1:?usage: export-stream.sh BEFORE_BIN [N] [IMAGE]}
AFTER=${AG_BIN:-$ROOT/build/agentguard}
N=${2:-3}
IMAGE=${3:-$(docker image inspect --format '{{range .RepoDigests}}{{.}}{{end}}' \
	"$(docker images --format '{{.Repository}}:{{.Tag}}' 127.0.0.1:5000/agentguard-runtime-agent | grep ':stage1' | head -n 1)")}
one() { # BIN -> "ms kb digest"
	local t out
	t=$(date +%s%N)
	out=$(/usr/bin/time -f 'rss %M' "$1" runtime-image identity "$IMAGE" --role agent 2>&1)
	printf '%s %s %s\n' "$((($(date +%s%N) - t) / 1000000))" \
		"$(sed -n 's/^rss //p' <<<"$out")" "$(sed -n 's/^rootfs_digest: \(sha256:[0-9a-f]*\).*/\1/p' <<<"$out")"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
bt=() bm=() at=() am=() digests=()
for _ in $(seq "$N"); do
	read -r t m d < <(one "$BEFORE"); bt+=("$t"); bm+=("$m"); digests+=("$d")
	read -r t m d < <(one "$AFTER"); at+=("$t"); am+=("$m"); digests+=("$d")
done
[ "$(printf '%s\n' "${digests[@]}" | sort -u | wc -l)" = 1 ] || { echo "the digests differ: ${digests[*]}" >&2; exit 1; }
mbt=$(printf '%s\n' "${bt[@]}" | median) mat=$(printf '%s\n' "${at[@]}" | median)
mbm=$(printf '%s\n' "${bm[@]}" | median) mam=$(printf '%s\n' "${am[@]}" | median)
echo "runs: $N each, interleaved; image $IMAGE; rootfs ${digests[0]}"
echo "buffered (before): median $mbt ms, peak RSS $mbm KiB (time: ${bt[*]}; rss: ${bm[*]})"
echo "streamed (after):  median $mat ms, peak RSS $mam KiB (time: ${at[*]}; rss: ${am[*]})"
awk -v a="$mat" -v b="$mbt" -v c="$mam" -v d="$mbm" \
	'BEGIN {printf "ratio after/before: time %.2f, peak RSS %.3f\n", a / b, c / d}'
[ -z "$(docker ps -aq --filter label=agentguard.owner=runtime-image-export)" ] || { echo "export container left behind" >&2; exit 1; }
