#!/usr/bin/env bash
# t0330: the two renderings of one typed spec cannot drift. `render --format
# request` prints the Engine API create request AgentGuard sends; `render`
# (--format argv) the equivalent docker command line. On the real engine, one
# container is created each way (the request over the socket with curl, the
# argv with the docker client) and every field the inspection judges must be
# equal. Also: the request never carries an environment value.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
command -v jq >/dev/null || skip_all "jq is needed"
label=agentguard.test=t0330
t_cleanup t_docker_rm_own "$label"

cat >"$T/c.yaml" <<CFG
task_id: t0330
description: render parity
test_command: "true"
mode: ci
expected_modified_files: {min: 0, max: 5}
sandbox: {type: docker, image: "$AG_TEST_IMAGE", network: none}
contained_execution:
  version: 1
  platform: linux-docker-engine
  required_uid: $AG_TEST_UID
  required_gid: $AG_TEST_GID
  cpu_limit: 1.5
  memory_limit: 128m
  pids_limit: 64
  tmpfs_size: 16m
  environment:
    - {name: AGENT_MODE, value: s3cr3t-literal-value}
CFG
mkdir -m 755 "$T/ws"
chown "$AG_TEST_UID:$AG_TEST_GID" "$T/ws"
common=(--workspace "$T/ws" --label "$label" --label agentguard.owner=t0330 --label "$AG_TEST_LABEL")

t_run "$AG_BIN" render "$T/c.yaml" --format request --name "agentguard-t0330-req-$$" "${common[@]}" \
	-- /bin/sh -c 'echo "$1"' - 'a b'
t_is "render --format request exits 0" "$AG_RC" 0
req=$AG_OUT
t_is "it prints the create request" "$(jq -r '.method + " " + .path' <<<"$req")" \
	"POST /v1.41/containers/create?name=agentguard-t0330-req-$$"
t_unlike "the request carries no environment value" "$req" 's3cr3t'
t_is "the request runs the argv exactly (argv[0] as the entrypoint)" \
	"$(jq -c '[.body.Entrypoint, .body.Cmd, .body.Healthcheck]' <<<"$req")" \
	'[["/bin/sh"],["-c","echo \"$1\"","-","a b"],{"Test":["NONE"]}]'

t_run "$AG_BIN" render "$T/c.yaml" --format argv --mode create --name "agentguard-t0330-cli-$$" \
	"${common[@]}" -- /bin/sh -c 'echo "$1"' - 'a b'
t_is "render --format argv exits 0" "$AG_RC" 0
readarray -d '' args < <(jq -j '.[] | (., "\u0000")' <<<"$AG_OUT")

# one container each way
id_req=$(jq -c .body <<<"$req" | curl -sS --unix-socket /var/run/docker.sock -X POST \
	-H 'Content-Type: application/json' --data-binary @- \
	"http://docker$(jq -r .path <<<"$req")" | jq -r .Id)
t_like "created from the request" "$id_req" '^[0-9a-f]{64}$'
id_cli=$(docker "${args[@]}")
t_like "created from the argv" "$id_cli" '^[0-9a-f]{64}$'

# The fields the inspection judges (inspect.c), plus the command, identity
# and environment names. Devices: the client sends [] where the request
# sends nothing; the inspection reads both as "no device".
judged='{
  user: .Config.User, workdir: .Config.WorkingDir, image: .Image,
  cmd: .Config.Cmd, entrypoint: .Config.Entrypoint, labels: .Config.Labels,
  healthcheck: .Config.Healthcheck,
  env: [.Config.Env[] | split("=")[0]] | sort,
  network: .HostConfig.NetworkMode, privileged: .HostConfig.Privileged,
  capadd: .HostConfig.CapAdd, capdrop: .HostConfig.CapDrop, secopt: .HostConfig.SecurityOpt,
  ro: .HostConfig.ReadonlyRootfs, pids: .HostConfig.PidsLimit, mem: .HostConfig.Memory,
  swap: .HostConfig.MemorySwap, nano: .HostConfig.NanoCpus, quota: .HostConfig.CpuQuota,
  period: .HostConfig.CpuPeriod, tmpfs: .HostConfig.Tmpfs, binds: .HostConfig.Binds,
  hcmounts: .HostConfig.Mounts, devices: (.HostConfig.Devices // []), ipc: .HostConfig.IpcMode,
  pid: .HostConfig.PidMode, uts: .HostConfig.UTSMode, userns: .HostConfig.UsernsMode,
  cgroupns: .HostConfig.CgroupnsMode, cgroup: .HostConfig.Cgroup,
  volumesfrom: .HostConfig.VolumesFrom, links: .HostConfig.Links,
  mounts: [.Mounts[] | {Type, Source, Destination, RW}],
  restart: .HostConfig.RestartPolicy.Name }'
a=$(docker container inspect "$id_req" | jq -S ".[0] | $judged")
b=$(docker container inspect "$id_cli" | jq -S ".[0] | $judged")
t_is "every judged field is equal both ways" "$a" "$b"
t_like "and they are the controls asked for" "$a" '"nano": 1500000000'
t_ok "remove both" docker rm -f -v "$id_req" "$id_cli"
t_done
