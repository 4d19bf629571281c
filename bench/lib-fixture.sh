# shellcheck shell=bash
# bench/lib-fixture.sh: the fixture the contained-run and study-egress
# benchmarks share, so their ratios are over the same repository and
# config. Source it after `scripts/test-env env` is evaluated.
#
#   bench_fixture TASK_ID DESCRIPTION
#     makes $work (removed on exit) with $work/w/repo (20 small files) and
#     $work/w/bench.yaml (the pinned test image, network none, small
#     limits), owned by the test user; defines as_user CMD... (runs CMD as
#     that user in $work/w with a clean environment).
bench_fixture() {
	local task=$1 desc=$2 i
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	chmod 755 "$work"
	mkdir -p "$work/w/repo/src"
	for i in $(seq 1 20); do printf 'line %d\n' "$i" >"$work/w/repo/src/f$i.txt"; done
	cat >"$work/w/bench.yaml" <<CFG
task_id: $task
description: $desc
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox: {type: docker, image: "$AG_TEST_IMAGE", network: none}
contained_execution:
  version: 1
  platform: linux-docker-engine
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
CFG
	chown -R "$AG_TEST_USER:$AG_TEST_USER" "$work/w"
}

# shellcheck disable=SC2016 # the inner bash expands its own "$1" and "$@"
as_user() {
	runuser -u "$AG_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$work/w" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$work/w" "$@"
}
