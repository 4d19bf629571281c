# shellcheck shell=bash
# tests/cli/lib-contained.sh: helpers shared by the contained-run tests.
# Source after lib-test.sh and require_docker. Runs AgentGuard as the
# unprivileged test user from a working directory $W whose path carries a
# canary (it must never be recorded), with a small known environment that
# plants canaries of its own.

PY=/usr/bin/python3
U=$AG_TEST_USER
chmod 755 "$T"
# A working directory whose path carries a canary: it must never be recorded.
W="$T/CANARY-PATH-w0rk"
mkdir -p "$W"
chown "$U:$U" "$W"

# as_user CMD...: run as the test user from $W with a small, known environment.
# With PIDFILE set, the pid of CMD (the same process after exec) is written
# there, so a test can signal exactly its own AgentGuard and no other run.
as_user() {
	runuser -u "$U" -- env -i PATH=/usr/bin:/bin HOME="$W" \
		AG_CANARY_HOST=CANARY-HOST-ENV-7f3a AGENT_API_TOKEN=CANARY-SENSITIVE-91c2 \
		bash -c 'cd "$1" && shift && { [ -z "$1" ] || echo $$ >"$1"; } && shift && exec "$@"' \
		_ "$W" "${PIDFILE:-}" "$@"
}

# The test user's local evidence signing key (HOME=$W: created by its first
# run) and its public half for commands run as root (`--public-key "$AG_PUB"`).
AG_USER_KEY="$W/.local/state/agentguard/signing-key.pem"
AG_PUB="$T/agtest-public.pem"
user_pub() { [ -s "$AG_PUB" ] || as_user "$AG_BIN" evidence public-key >"$AG_PUB" 2>/dev/null || true; }
# pubkey: the path of that public key, made first if needed (for root's
# `evidence verify`, `report` and `patch`, which trust only given keys).
pubkey() {
	user_pub
	printf '%s\n' "$AG_PUB"
}

# config NAME [extra contained_execution lines...]: $W/NAME.yaml. With
# AG_TEST_RUNTIME=gvisor (the gVisor variants of the contained-run tests),
# the config asks for runtime: gvisor, whose pids_limit must be >= 256.
config() {
	local name=$1 pids=64
	shift
	[ "${AG_TEST_RUNTIME:-runc}" != gvisor ] || {
		pids=256
		set -- "  runtime: gvisor" "$@"
	}
	{
		printf '%s\n' "task_id: t0400" "description: contained-run test" "test_command: 'true'" \
			"mode: ci" "expected_modified_files: {min: 0, max: 50}" \
			"command_timeout_seconds: 30" "max_output_bytes: 65536" \
			"sandbox: {type: docker, image: '$AG_TEST_IMAGE', network: none}" \
			"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
			"  required_uid: $AG_TEST_UID" "  required_gid: $AG_TEST_GID" \
			"  memory_limit: 128m" "  pids_limit: $pids" "  tmpfs_size: 16m" \
			"  environment:" \
			"    - {name: AGENT_MODE, value: batch}" \
			"    - {name: AGENT_API_TOKEN, source: host, required: true, allow_sensitive: true}"
		local l
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$W/$name.yaml"
	chown "$U:$U" "$W/$name.yaml"
}

# make_repo: a fresh repository owned by the test user at $W/repo
make_repo() {
	rm -rf "$W/repo"
	mkdir -p "$W/repo/src" "$W/repo/tests" "$W/repo/docs"
	printf 'one\ntwo\nthree\n' >"$W/repo/src/edit.txt"
	printf 'gone\n' >"$W/repo/src/delete.txt"
	printf 'moving content\nline 2\n' >"$W/repo/docs/old-name.md"
	printf 'test\n' >"$W/repo/tests/test_a.sh"
	chown -R "$U:$U" "$W/repo"
	(cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) >"$T/repo.sum"
}

repo_unchanged() { (cd "$W/repo" && find . -type f -exec sha256sum {} + | sort) | cmp -s - "$T/repo.sum"; }

# run [agentguard options] -- ARGV...: contained-run as the test user; sets
# $AG_RC, $AG_OUT and $REPORT (the artifact path from the JSON summary).
run() {
	t_run as_user "$AG_BIN" contained-run "$W/c.yaml" --repo repo --json "$@"
	REPORT=$(printf '%s\n' "$AG_OUT" | grep -m1 '^{' |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin).get("report") or "")' 2>/dev/null || true)
	[ -n "$REPORT" ] && REPORT="$W/$REPORT"
	ledger_runs
	return 0
}

# jq-like: art EXPR -> prints eval of EXPR on the artifact dict `a`
art() { "$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$REPORT" "$1"; }

# run_suffix RUN_DIR: the run's container label value (AgentGuard's rule:
# the run id's last 32 characters, lowercased, leading separators dropped).
run_suffix() { t_run_suffix "$1"; }

# ledger_runs: record every run of $W in this test run's ledger (t_ledger_run).
ledger_runs() {
	local s
	while read -r s; do t_ledger_run "$s"; done < <(own_suffixes)
	return 0
}

# own_suffixes: the run id labels of every run made from $W, one per line.
own_suffixes() { t_run_suffixes "$W/.agentguard/contained-runs"; }

# remove_own_runs: at exit, remove any container of a run made from $W,
# found by that run's own label (and AgentGuard's owner label), nothing else.
# shellcheck disable=SC2317 # called from the EXIT trap
remove_own_runs() {
	local ids
	local -a sfx=()
	mapfile -t sfx < <(own_suffixes)
	ledger_runs
	ids=$(t_run_objects ps --filter label=agentguard.owner=contained-run -- "${sfx[@]}")
	# shellcheck disable=SC2086 # one id per word
	[ -z "$ids" ] || "$AG_DOCKER" rm -f $ids >/dev/null 2>&1 || true
}
t_cleanup remove_own_runs

# no_containers: none of the runs made from $W left a container. Checked by
# each run's own label, so tests running at the same time cannot interfere.
no_containers() {
	local -a sfx=()
	mapfile -t sfx < <(own_suffixes)
	[ -z "$(t_run_objects ps -- "${sfx[@]}")" ]
}

# wait_running: until the newest run of $W has a running container (10 s max).
wait_running() {
	local d s
	for _ in $(seq 1 100); do
		d=$(ls -1d "$W"/.agentguard/contained-runs/*/ 2>/dev/null | sort | tail -n 1)
		if [ -n "$d" ]; then
			s=$(run_suffix "$d")
			t_ledger_run "$s"
			[ -n "$("$AG_DOCKER" ps -q --filter "label=agentguard.contained-run.id=$s")" ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

# remove_run_containers: force-remove every container of the runs made from
# $W, each found by its own run label (a t_cleanup for tests that crash runs).
remove_run_containers() {
	local id
	local -a sfx=()
	mapfile -t sfx < <(own_suffixes)
	for id in $(t_run_objects ps -- "${sfx[@]}"); do
		"$AG_DOCKER" rm -f -v "$id" >/dev/null 2>&1 || true
	done
}

# build_image NAME [DOCKERFILE-LINE...]: an image built FROM the pinned test
# image plus the given lines (and the label agentguard.test=NAME), with
# `docker build` from local files only (never a pull), pushed to the loopback
# registry; sets $IMG_REF to its digest-pinned reference. The image is
# removed (by id, every tag and digest) when the test ends.
build_image() {
	local name=$1 ctx out digest iid
	shift
	ctx="$T/image-$name"
	local repo="127.0.0.1:5000/agentguard-test-$name"
	mkdir -p "$ctx"
	{
		printf 'FROM %s\n' "$AG_TEST_IMAGE"
		printf '%s\n' "$@"
		printf 'LABEL agentguard.test=%s\n' "$name"
	} >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 "$AG_DOCKER" build -q --pull=false --network none -t "$repo:$$" "$ctx" >/dev/null || return 1
	iid=$("$AG_DOCKER" image inspect --format '{{.Id}}' "$repo:$$") || return 1
	t_cleanup "$AG_DOCKER" image rm -f "$iid"
	out=$("$AG_DOCKER" push "$repo:$$" 2>&1) || return 1
	digest=$(printf '%s\n' "$out" | sed -n 's/.*digest: \(sha256:[0-9a-f]\{64\}\).*/\1/p')
	[ -n "$digest" ] || return 1
	IMG_REF="$repo@$digest"
}

# use_image REF: point $W/c.yaml at REF
use_image() { sed -i "s|image: '[^']*'|image: '$1'|" "$W/c.yaml"; }

check_clean() { # DESC
	t_ok "$1: no AgentGuard container is left" no_containers
	t_ok "$1: the source repository is untouched" repo_unchanged
}


# test_git DIR ARGS...: git in a repository the test itself built and trusts
# (no system or global config, no HOME, any owner); never on a hostile one
# after its hostile configuration went in.
test_git() {
	local d=$1
	shift
	env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git -C "$d" -c safe.directory='*' -c user.name=t -c user.email=t@example.invalid \
		-c init.defaultBranch=main "$@"
}
