#!/usr/bin/env bash
# t0200: `agentguard render` prints the exact docker argv (golden JSON),
# keeps the child argv after the first "--" verbatim, never prints
# environment values, refuses unsafe inputs with named reasons, and (when
# the Docker test environment is up) the rendered argv really runs: the
# container is uid 2001, its root fs is read-only, its workspace writable.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"

DIGEST=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
IMG="127.0.0.1:5000/agentguard-test@$DIGEST"

# write_config FILE IMAGE UID [extra contained_execution lines...]
write_config() {
	local file=$1 image=$2 uid=$3
	shift 3
	{
		printf '%s\n' "task_id: t0200" "description: render test" "test_command: 'true'" \
			"repo_template: repo" "expected_modified_files: {min: 0, max: 3}" \
			"sandbox:" "  type: docker" "  image: '$image'" \
			"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
			"  required_uid: $uid" "  required_gid: $uid"
		local l
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$file"
}

write_config "$T/c.yaml" "$IMG" 1000 \
	"  cpu_limit: 1.5" "  memory_limit: 256m" "  pids_limit: 128" "  tmpfs_size: 64m" \
	"  environment:" \
	"    - name: AGENT_MODE" "      value: s3cr3t-literal-value" \
	"    - name: AGENT_API_TOKEN" "      source: host" "      allow_sensitive: true"

ENV_JSON='"--env","AGENT_API_TOKEN=[REDACTED]","--env","AGENT_MODE=[REDACTED]","--env","HOME=/tmp/agentguard-home","--env","LANG=C.UTF-8","--env","LC_ALL=C.UTF-8","--env","PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'
HEAD_JSON='"--network","none","--security-opt","no-new-privileges","--cap-drop","ALL","--cgroupns","private","--pids-limit","128","--memory","256m","--memory-swap","256m","--cpus","1.5","--read-only","--no-healthcheck","--log-driver","none","--tmpfs","/tmp:rw,noexec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=700"'

# --- golden JSON: tmpfs workspace
t_run "$AG_BIN" render "$T/c.yaml" --format argv -- python -m pytest
t_is "render exits 0" "$AG_RC" 0
t_is "golden argv, tmpfs workspace" "$AG_OUT" \
	'["run","--rm",'"$HEAD_JSON"',"--tmpfs","/agentguard-workspace:rw,noexec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=700","--workdir","/agentguard-workspace","--user","1000:1000",'"$ENV_JSON"',"--entrypoint=python","--","'"$IMG"'","-m","pytest"]'
t_unlike "no literal environment value in the output" "$AG_OUT" 's3cr3t'

# --- golden JSON: bind workspace, name, labels, create mode
mkdir "$T/ws"
t_run "$AG_BIN" render "$T/c.yaml" --workspace "$T/ws" --name agentguard-t0200-a \
	--label agentguard.test=t0200 --label agentguard.owner=render --mode create --format argv -- /bin/true
t_is "golden argv, bind workspace, create mode" "$AG_OUT" \
	'["create","--name","agentguard-t0200-a",'"$HEAD_JSON"',"--mount","type=bind,source='"$T"'/ws,target=/agentguard-workspace","--workdir","/agentguard-workspace","--user","1000:1000",'"$ENV_JSON"',"--entrypoint=/bin/true","--label","agentguard.owner=render","--label","agentguard.test=t0200","--","'"$IMG"'"]'

# A relative workspace is made absolute against the current directory.
t_run bash -c 'cd "$1" && "$2" render c.yaml --format argv --workspace ./ws/ -- /bin/true' _ "$T" "$AG_BIN"
t_like "relative workspace made absolute" "$AG_OUT" "\"type=bind,source=$T/ws,target=/agentguard-workspace\""

# --- the child argv after the first "--" is verbatim
t_run "$AG_BIN" render "$T/c.yaml" --format argv -- /bin/tool --help -h -- --empty= ';|&$()' '' 'a b' 'é' --name x
t_is "child argv exit 0" "$AG_RC" 0
t_like "child argv preserved in order after the image" "$AG_OUT" \
	'"--entrypoint=/bin/tool","--","'"$IMG"'","--help","-h","--","--empty=",";\|&\$\(\)","","a b","\\u00E9","--name","x"\]$'
t_unlike "child --name did not become a docker flag" "$AG_OUT" '"--name","x",'"\"--network\""
t_ok "help before the boundary is AgentGuard's help" "$AG_BIN" render --help
t_like "help text" "$AG_OUT" '^Usage: agentguard render'
t_ok "help via agentguard help render" "$AG_BIN" help render

# --- refusals
write_config "$T/tag.yaml" "127.0.0.1:5000/agentguard-test:latest" 1000
ag_must_fail 2 config.contained.image_not_pinned "tag-only image refused at load" \
	"$AG_BIN" render "$T/tag.yaml" -- /bin/true
mkdir "$T/a,b"
ag_must_fail 2 render.host_path.invalid_char "workspace path with ',' refused" \
	"$AG_BIN" render "$T/c.yaml" --workspace "$T/a,b" -- /bin/true
mkdir "$T/a=b"
ag_must_fail 2 render.host_path.invalid_char "workspace path with '=' refused" \
	"$AG_BIN" render "$T/c.yaml" --workspace "$T/a=b" -- /bin/true
ln -s ws "$T/link"
ag_must_fail 2 render.workspace.symlink "workspace through a symlink refused" \
	"$AG_BIN" render "$T/c.yaml" --workspace "$T/link" -- /bin/true
ag_must_fail 2 render.workspace.missing "missing workspace refused" \
	"$AG_BIN" render "$T/c.yaml" --workspace "$T/nope" -- /bin/true
ag_must_fail 2 render.host_path.not_normalized "workspace with '..' refused" \
	"$AG_BIN" render "$T/c.yaml" --workspace "$T/ws/../ws" -- /bin/true
ag_must_fail 2 usage "missing '--' boundary refused" \
	"$AG_BIN" render "$T/c.yaml" python -m pytest
ag_must_fail 2 usage "empty argv after '--' refused" "$AG_BIN" render "$T/c.yaml" --
ag_must_fail 2 usage "missing CONFIG refused" "$AG_BIN" render -- /bin/true
ag_must_fail 2 render.argv.first_empty "empty program refused" "$AG_BIN" render "$T/c.yaml" -- ''
ag_must_fail 2 render.name.invalid "bad container name refused" \
	"$AG_BIN" render "$T/c.yaml" --name Evil -- /bin/true
ag_must_fail 2 render.label.key_invalid "foreign label key refused" \
	"$AG_BIN" render "$T/c.yaml" --label com.example=x -- /bin/true
ag_must_fail 2 usage "empty --workspace refused" "$AG_BIN" render "$T/c.yaml" --workspace '' -- /bin/true
ag_must_fail 2 usage "unknown option refused" "$AG_BIN" render "$T/c.yaml" --privileged -- /bin/true
printf '%s\n' "task_id: t" "description: d" "test_command: 'true'" "repo_template: repo" \
	"expected_modified_files: {min: 0, max: 3}" >"$T/plain.yaml"
ag_must_fail 2 render.config.not_contained "config without contained_execution refused" \
	"$AG_BIN" render "$T/plain.yaml" -- /bin/true

# --- the rendered argv on the real engine
if ! command -v jq >/dev/null 2>&1 || ! "$AG_ROOT/scripts/test-env" status >/dev/null 2>&1; then
	t_skip "rendered argv runs on the engine" "docker test environment (or jq) not available"
	t_done
fi
require_docker
label=agentguard.test=t0200
t_cleanup t_docker_rm_own "$label"

write_config "$T/real.yaml" "$AG_TEST_IMAGE" "$AG_TEST_UID" "  memory_limit: 128m" \
	"  environment:" "    - name: AGENT_MODE" "      value: batch"

# run_rendered [render options...] -- CHILD...: renders, then runs docker with the argv.
run_rendered() {
	local json
	json=$("$AG_BIN" render "$T/real.yaml" --format argv --label "$label" --label "$AG_TEST_LABEL" "$@") || return 90
	local -a args
	readarray -d '' args < <(jq -j '.[] | (., "\u0000")' <<<"$json")
	[ "${args[0]}" = run ] && [ "${args[1]}" = --rm ] || return 91
	"$AG_DOCKER" "${args[@]}"
}

t_run run_rendered --name "agentguard-t0200-$$" -- /bin/id -u
t_is "container runs as uid $AG_TEST_UID" "$AG_OUT" "$AG_TEST_UID"
t_run run_rendered -- /bin/id -g
t_is "container runs as gid $AG_TEST_GID" "$AG_OUT" "$AG_TEST_GID"
t_run run_rendered -- /bin/touch /x
t_unlike "touch /x fails" "$AG_RC" '^(0|9[01])$'
# Sentinel: exit 77 would mean the root fs write succeeded.
t_run run_rendered -- /bin/sh -c 'touch /agentguard-t0200 && exit 77; exit 3'
t_is "root fs is read-only" "$AG_RC" 3
t_run run_rendered -- /bin/sh -c 'echo ok >/agentguard-workspace/f && cat /agentguard-workspace/f && pwd'
t_is "tmpfs workspace writable and the workdir" "$AG_OUT" $'ok\n/agentguard-workspace'
t_run run_rendered -- /bin/env
t_like "environment is the defaults plus the (placeholder) entry" "$AG_OUT" \
	'AGENT_MODE=\[REDACTED\]'
t_like "HOME is the fixed default" "$AG_OUT" 'HOME=/tmp/agentguard-home'
t_run run_rendered -- /bin/grep -E '^Cap(Prm|Eff|Bnd):' /proc/self/status
t_unlike "all capability sets are zero" "$AG_OUT" 'Cap(Prm|Eff|Bnd):[[:space:]]*0*[1-9a-f]'
mkdir "$T/realws"
chown "$AG_TEST_UID:$AG_TEST_GID" "$T/realws"
t_run run_rendered --workspace "$T/realws" -- /bin/sh -c 'echo hi >/agentguard-workspace/out'
t_is "bind workspace run exits 0" "$AG_RC" 0
t_is "bind workspace write visible on the host" "$(cat "$T/realws/out" 2>/dev/null)" hi
t_run run_rendered -- /bin/sh -c 'exit 42'
t_is "child exit code comes back through docker run" "$AG_RC" 42

t_run "$AG_DOCKER" ps -aq --filter "label=$label" --filter "label=$AG_TEST_LABEL"
t_is "no t0200 container left behind" "$AG_OUT" ""
t_done
