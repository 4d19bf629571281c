#!/usr/bin/env bash
# bench/workspace/run.sh: wall time and peak memory of workspace prepare and
# capture, side by side with `cp -a` + `sha256sum` (prepare) and `sha256sum`
# alone (capture).
#
#   bench/workspace/run.sh
#
# Env: BENCH_DIR (default /tmp/ag-ws-bench), BENCH_RUNS (default 3),
#      BENCH_REAL (a real source tree; default /usr/lib/python3/dist-packages),
#      BENCH_FILES (20000), BENCH_MB (520), BENCH_SKIP_GEN=1 to reuse the tree,
#      BENCH_ONLY=git for the git-repository section alone, BENCH_ONLY=reader
#      (with BENCH_BEFORE_REV, default main) for the git reader's start
#      before/after.
# Every number is the median of BENCH_RUNS warm-cache runs. Peak memory is
# the max RSS of the process (GNU time for the tools, getrusage for ours).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${BENCH_DIR:-/tmp/ag-ws-bench}
RUNS=${BENCH_RUNS:-3}
REAL=${BENCH_REAL:-/usr/lib/python3/dist-packages}
NFILES=${BENCH_FILES:-20000}
MB=${BENCH_MB:-520}

# Built from the base and workspace sources only (same flags as the Makefile's
# -O2 build), so modules in progress elsewhere cannot break the benchmark.
mkdir -p "$(dirname "$B")"
cc -I"$root/src" -D_GNU_SOURCE -std=gnu17 -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=3 \
	$(pkg-config --cflags jansson libcrypto libgit2) -o "$B.ws_bench" "$here/ws_bench.c" \
	"$root"/src/lib/base/*.c "$root"/src/lib/workspace/*.c \
	$(pkg-config --libs jansson libcrypto yaml-0.1 libgit2)
WSB="$B.ws_bench"
mkdir -p "$B"

gen_tree() { # dir files total_mb: text-like files (base64 lines), 1 in 10 binary
	python3 - "$1" "$2" "$3" <<'EOF'
import os, sys, base64, random
d, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(4)
avg = mb * 1024 * 1024 // n
pool = os.urandom(4 * 1024 * 1024)
text = base64.b64encode(pool)
text = b"\n".join(text[i:i + 76] for i in range(0, len(text), 76))
for i in range(n):
    sub = os.path.join(d, "d%03d" % (i % 200))
    os.makedirs(sub, exist_ok=True)
    size = max(1, int(random.uniform(0.5, 1.5) * avg))
    off = random.randrange(0, len(text) - size - 1) if size < len(text) else 0
    data = (pool if i % 10 == 0 else text)[off:off + size]
    with open(os.path.join(sub, "f%05d.%s" % (i, "bin" if i % 10 == 0 else "txt")), "wb") as f:
        f.write(data)
EOF
}

median() { sort -n | awk '{a[NR]=$1} END {printf "%.3f\n", a[int((NR+1)/2)]}'; }

# runs a command, prints "wall_s maxrss_kib"
timed() {
	/usr/bin/time -f '%e %M' -o "$B.time" "$@" >/dev/null 2>"$B.err" || {
		cat "$B.err" >&2
		return 1
	}
	cat "$B.time"
}

bench_tree() { # name src
	local name=$1 src=$2
	local files bytes
	files=$(find "$src" -type f | wc -l)
	bytes=$(du -sb "$src" | cut -f1)
	echo "== $name: $files files, $((bytes / 1024 / 1024)) MiB"
	# warm the cache
	find "$src" -type f -print0 | xargs -0 cat >/dev/null
	local p=() c=() cp1=() cp2=() s1=() s2=() pm=() cm=() cpm=()
	for r in $(seq "$RUNS"); do
		rm -rf "$B/root" "$B/cp"
		mkdir -p "$B/root"
		sync
		out=$("$WSB" prepare "$src" "$B/root" run)
		p+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<<"$out")")
		pm+=("$(sed -E 's/.*maxrss_kib=([0-9]+).*/\1/' <<<"$out")")
		out=$("$WSB" capture "$B/root" run)
		c+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<<"$out")")
		cm+=("$(sed -E 's/.*maxrss_kib=([0-9]+).*/\1/' <<<"$out")")
		sync
		t0=$(date +%s.%N)
		cp -a "$src" "$B/cp"
		t1=$(date +%s.%N)
		(cd "$B/cp" && find . -type f -print0 | xargs -0 sha256sum >/dev/null)
		t2=$(date +%s.%N)
		(cd "$B/cp" && find . -type f -print0 | xargs -0 -P2 -n 256 sha256sum >/dev/null)
		t3=$(date +%s.%N)
		cp1+=("$(echo "$t2 - $t0" | bc)")
		cp2+=("$(echo "($t1 - $t0) + ($t3 - $t2)" | bc)")
		s1+=("$(echo "$t2 - $t1" | bc)")
		s2+=("$(echo "$t3 - $t2" | bc)")
		cpm+=("$(timed cp -a "$src" "$B/cp2" | cut -d' ' -f2)")
		rm -rf "$B/cp2"
	done
	printf '%-44s %8s %10s\n' "operation" "wall_s" "peak_MiB"
	printf '%-44s %8s %10.1f\n' "agentguard prepare (2 threads)" "$(printf '%s\n' "${p[@]}" | median)" \
		"$(echo "$(printf '%s\n' "${pm[@]}" | median) / 1024" | bc -l)"
	printf '%-44s %8s %10.1f\n' "cp -a + sha256sum (1 process)" "$(printf '%s\n' "${cp1[@]}" | median)" \
		"$(echo "$(printf '%s\n' "${cpm[@]}" | median) / 1024" | bc -l)"
	printf '%-44s %8s\n' "cp -a + sha256sum (xargs -P2)" "$(printf '%s\n' "${cp2[@]}" | median)"
	printf '%-44s %8s %10.1f\n' "agentguard capture (2 threads)" "$(printf '%s\n' "${c[@]}" | median)" \
		"$(echo "$(printf '%s\n' "${cm[@]}" | median) / 1024" | bc -l)"
	printf '%-44s %8s\n' "sha256sum (1 process)" "$(printf '%s\n' "${s1[@]}" | median)"
	printf '%-44s %8s\n' "sha256sum (xargs -P2)" "$(printf '%s\n' "${s2[@]}" | median)"
	rm -rf "$B/root" "$B/cp"
}

# A git repository: the generated tree committed (20,000 tracked files), a
# few untracked ones, and an ignored node_modules/ of 120,000 empty files.
# Ours: the git facts a default prepare reads (libgit2 in the sandboxed
# reader, ignored directories not entered), then the whole default prepare.
# Baseline: the git status call the earlier git runner made, and git's own
# listing of what the copy holds.
bench_git() {
	local R="$B/gitrepo"
	if [ ! -d "$R/.git" ]; then
		rm -rf "$R"
		cp -a "$B/gen" "$R"
		gg() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 \
			GIT_CONFIG_GLOBAL=/dev/null git -C "$R" -c user.name=b -c user.email=b@b.invalid "$@"; }
		printf 'node_modules/\n' >"$R/.gitignore"
		gg init -q
		gg add -A
		gg commit -q -m bench
		python3 - "$R/node_modules" <<'EOF'
import os, sys
for d in range(120):
    p = os.path.join(sys.argv[1], "pkg%03d" % d)
    os.makedirs(p)
    for i in range(1000):
        open(os.path.join(p, "f%04d.js" % i), "w").close()
EOF
		for i in 1 2 3; do echo "u$i" >"$R/untracked-$i.txt"; done
	fi
	echo "== git repository: 20,000 tracked files, ignored node_modules/ of 120,000 files"
	local ours=() old=() ls=() prep=()
	for _ in $(seq "$RUNS"); do
		ours+=("$("$WSB" gitread "$R" | sed -E 's/.*wall_s=([0-9.]+).*/\1/')")
		t0=$(date +%s.%N)
		git -C "$R" --no-optional-locks status --porcelain=v1 -z --ignored --untracked-files=all >/dev/null
		t1=$(date +%s.%N)
		git -C "$R" ls-files -z --cached --others --exclude-standard >/dev/null
		t2=$(date +%s.%N)
		old+=("$(echo "$t1 - $t0" | bc)")
		ls+=("$(echo "$t2 - $t1" | bc)")
		rm -rf "$B/root"
		mkdir -p "$B/root"
		prep+=("$("$WSB" prepare "$R" "$B/root" run | sed -E 's/.*wall_s=([0-9.]+).*/\1/')")
	done
	local o g
	o=$(printf '%s\n' "${ours[@]}" | median)
	g=$(printf '%s\n' "${old[@]}" | median)
	printf '%-60s %8s\n' "operation" "wall_s"
	printf '%-60s %8s\n' "agentguard git read (libgit2, sandboxed reader)" "$o"
	printf '%-60s %8s\n' "git status --porcelain -z --ignored -uall (the old call)" "$g"
	printf '%-60s %8s\n' "git ls-files --cached --others --exclude-standard" \
		"$(printf '%s\n' "${ls[@]}" | median)"
	printf '%-60s %8s\n' "agentguard prepare, default copy rules" "$(printf '%s\n' "${prep[@]}" | median)"
	printf 'ratio ours / old call: %.2f\n' "$(echo "$o / $g" | bc -l)"
	rm -rf "$B/root"
}

# The git reader's start, before/after (BENCH_ONLY=reader, BENCH_BEFORE_REV=
# an older revision, default main): the same reads and prepares by ws_bench
# built from this tree and from that revision, interleaved, on two small
# repositories (20 files, the contained-run bench's size; 2,000 files in 100
# directories with 100 ignored). "gitread x20" is 20 reads in one process
# (the start cost shows), "prepare" the whole default workspace prepare.
bench_reader() {
	local rev=${BENCH_BEFORE_REV:-main} prev="$B.before"
	rm -rf "$prev.src" && mkdir -p "$prev.src"
	git -C "$root" archive "$rev" src | tar -x -C "$prev.src"
	cc -I"$prev.src/src" -D_GNU_SOURCE -std=gnu17 -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=3 \
		$(pkg-config --cflags jansson libcrypto libgit2) -o "$prev.ws_bench" "$here/ws_bench.c" \
		"$prev.src"/src/lib/base/*.c "$prev.src"/src/lib/workspace/*.c \
		$(pkg-config --libs jansson libcrypto yaml-0.1 libgit2)
	gg() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 \
		GIT_CONFIG_GLOBAL=/dev/null git -C "$1" -c user.name=b -c user.email=b@b.invalid "${@:2}"; }
	local small="$B/reader-small" mid="$B/reader-mid"
	rm -rf "$small" "$mid" && mkdir -p "$small/src" "$mid"
	for i in $(seq 1 20); do printf 'line %d\n' "$i" >"$small/src/f$i.txt"; done
	for d in $(seq 1 100); do
		mkdir -p "$mid/d$d"
		for i in $(seq 1 20); do printf '%d %d\n' "$d" "$i" >"$mid/d$d/f$i.txt"; done
		printf 'x\n' >"$mid/d$d/out.log"
	done
	printf '*.log\n' >"$mid/.gitignore"
	for r in "$small" "$mid"; do gg "$r" init -q && gg "$r" add -A && gg "$r" commit -q -m b; done
	echo "== git reader start: after (this tree) vs before ($rev), $RUNS interleaved runs"
	printf '%-34s %10s %10s %7s\n' "operation" "before_s" "after_s" "ratio"
	local name src op
	for name in small mid; do
		src="$B/reader-$name"
		for op in gitread prepare; do
			local a=() b=()
			for _ in $(seq "$RUNS"); do
				for w in before after; do
					local bin="$WSB" v
					[ "$w" = before ] && bin="$prev.ws_bench"
					if [ "$op" = gitread ]; then
						v=$("$bin" gitread "$src" 20 | sed -E 's/.*wall_s=([0-9.]+).*/\1/')
					else
						rm -rf "$B/root" && mkdir -p "$B/root"
						v=$("$bin" prepare "$src" "$B/root" run | sed -E 's/.*wall_s=([0-9.]+).*/\1/')
					fi
					if [ "$w" = before ]; then b+=("$v"); else a+=("$v"); fi
				done
			done
			local mb ma
			mb=$(printf '%s\n' "${b[@]}" | median)
			ma=$(printf '%s\n' "${a[@]}" | median)
			printf '%-34s %10s %10s %7.2f\n' "$name: $op$([ "$op" = gitread ] && echo ' x20')" \
				"$mb" "$ma" "$(echo "$ma / $mb" | bc -l)"
		done
	done
	rm -rf "$B/root" "$small" "$mid" "$prev.src" "$prev.ws_bench"
}
if [ "${BENCH_ONLY:-}" = reader ]; then
	bench_reader
	exit 0
fi

if [ -z "${BENCH_SKIP_GEN:-}" ] || [ ! -d "$B/gen" ]; then
	rm -rf "$B/gen"
	mkdir -p "$B/gen"
	gen_tree "$B/gen" "$NFILES" "$MB"
fi
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
if [ "${BENCH_ONLY:-}" = git ]; then
	bench_git
	exit 0
fi
bench_tree generated "$B/gen"
bench_tree real "$REAL"

# Peak memory at the entry bound: 100,000 entries (100 dirs x 999 empty files).
if [ ! -d "$B/e100k" ]; then
	mkdir -p "$B/e100k"
	python3 - "$B/e100k" <<'EOF'
import os, sys
for d in range(100):
    p = os.path.join(sys.argv[1], "d%03d" % d)
    os.mkdir(p)
    for i in range(999):
        open(os.path.join(p, "f%04d" % i), "w").close()
EOF
fi
bench_git
rm -rf "$B/root"
mkdir -p "$B/root"
echo "== 100,000 entries (empty files)"
"$WSB" prepare "$B/e100k" "$B/root" run
"$WSB" capture "$B/root" run
"$WSB" cleanup "$B/root" run
rm -rf "$B/root"
