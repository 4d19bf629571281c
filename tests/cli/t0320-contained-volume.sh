#!/usr/bin/env bash
# t0320: an image that declares `VOLUME /data` leaves no volume behind. The
# daemon creates an anonymous volume for every container of such an image
# (the preflight probe and the agent's); the ledger removes containers with
# `v=1`, so the volumes go with them. Real engine only: the image is the test
# image plus one VOLUME line, pushed to the local registry for a digest.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-test.sh"
require_docker
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib-contained.sh"

repo=127.0.0.1:5000/agentguard-t0320-volume
tag=$repo:$$
cid=$(docker create --label agentguard.test=t0320 --label "$AG_TEST_LABEL" "$AG_TEST_IMAGE" /bin/true)
docker commit --change 'VOLUME /data' --change "LABEL $AG_TEST_LABEL" "$cid" "$tag" >/dev/null
docker rm "$cid" >/dev/null
t_cleanup docker rmi "$tag"
docker push "$tag" >/dev/null
digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$tag" | grep -m1 "^$repo@")
t_like "the VOLUME image has a registry digest" "$digest" '@sha256:[0-9a-f]{64}$'
t_is "the image declares /data" "$(docker image inspect --format '{{json .Config.Volumes}}' "$tag")" '{"/data":{}}'

config c
sed -i "s|image: '$AG_TEST_IMAGE'|image: '$digest'|" "$W/c.yaml"
make_repo

since=$(date +%s)
sleep 1
run -- /bin/sh -c 'test -d /data && echo has-data'
sleep 1
until=$(date +%s)
t_is "volume image: the run passes" "$AG_RC" 0
t_like "volume image: the agent saw the volume" "$(art 'a["command_result"]["stdout"]')" has-data

# Every container of this image made in the window (probe and agent) is
# gone; every volume the daemon created in the window is gone too, unless a
# container (of another user of this engine) still uses it.
ids=$(docker events --since "$since" --until "$until" --filter type=container \
	--filter event=create --filter "image=$digest" --format '{{.Actor.ID}}' | sort -u)
t_is "volume image: two containers were made (probe and agent)" "$(printf '%s\n' "$ids" | grep -c .)" 2
t_is "volume image: both were destroyed" "$(docker events --since "$since" --until "$until" \
	--filter type=container --filter event=destroy --filter "image=$digest" --format '{{.Actor.ID}}' |
	sort -u)" "$ids"
vols=$(docker events --since "$since" --until "$until" --filter type=volume --filter event=create \
	--format '{{.Actor.ID}}' | sort -u)
mine=
for v in $vols; do
	# a volume of another user's container still in use is not ours to judge
	docker volume inspect "$v" >/dev/null 2>&1 || { mine="$mine $v"; continue; }
	users=$(docker ps -aq --filter "volume=$v")
	[ -n "$users" ] || mine="$mine LEFT:$v"
done
t_like "volume image: anonymous volumes were created during the run" "$mine" '[0-9a-f]{64}'
t_unlike "volume image: none of them is left behind" "$mine" 'LEFT:'
check_clean "volume image"
t_done
