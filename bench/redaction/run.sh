#!/usr/bin/env bash
# bench/redaction/run.sh: redaction throughput at the 64 MiB output bound on
# adversarial agent output, side by side with plain copying of the same
# bytes in the same process (see README.md).
#
#   bench/redaction/run.sh [MiB (64)] [runs (3)] [shape-name-substring]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${BENCH_BIN:-/tmp/ag-redact-bench}
# Built from src/lib/base only, with the Makefile's -O2 flags, so modules in
# progress elsewhere cannot break the benchmark.
cc -I"$root/src" -D_GNU_SOURCE -std=gnu17 -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=3 \
	-o "$out" "$here/redact_bench.c" "$root"/src/lib/base/*.c -lcrypto -ljansson
exec "$out" "${1:-64}" "${2:-3}" ${3:+"$3"}
