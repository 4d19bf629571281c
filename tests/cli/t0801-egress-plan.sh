#!/usr/bin/env bash
# t0801: `agentguard study-egress plan` (pure: no Docker call). The plan's
# properties: --internal and inhibit_ipv4 on the study network, IPv6 off on
# both networks, the agent only on the study network (never the outbound one)
# with DNS 127.0.0.1 and proxy variables naming the gateway, the gateway on
# both networks with ip_forward=0, the hardening flags on both containers,
# no forbidden option anywhere, owner/trial labels, start and teardown order.
# Refusals exit 2 with a named reason: a tag-only gateway image, the same
# image for gateway and agent, a policy that fails validation, a bad trial
# id, a config without contained_execution, a missing '--'.
set -euo pipefail
. "$(dirname "$0")/lib-test.sh"

D1=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
D2=sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
AGENT="127.0.0.1:5000/agentguard-agent@$D1"
GW="127.0.0.1:5000/agentguard-gateway@$D2"

printf '%s\n' "task_id: t0801" "description: plan test" "test_command: 'true'" \
	"repo_template: repo" "expected_modified_files: {min: 0, max: 3}" \
	"sandbox:" "  type: docker" "  image: '$AGENT'" \
	"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
	"  required_uid: 1000" "  required_gid: 1000" "  memory_limit: 256m" "  pids_limit: 64" \
	>"$T/c.yaml"
printf '%s' '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"api.example.com","port":443}]}' >"$T/p.json"

plan() { "$AG_BIN" study-egress plan "$T/c.yaml" --policy "$T/p.json" --trial-id trial-0801 "$@"; }

t_run plan --gateway-image "$GW" --json -- codex exec 'say hi'
t_is "plan --json exits 0" "$AG_RC" 0
echo "$AG_OUT" >"$T/plan.json"
q() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/plan.json" "$1"; }
TOKEN=$(printf '%s' trial-0801 | sha256sum | cut -c1-12)
t_is "token is the first 12 hex of SHA-256(trial id)" "$(q 'd["token"]')" "$TOKEN"
t_is "study network is internal" "$(q 'd["networks"]["internal"]["internal"]')" True
t_is "study network inhibits the host IPv4 address" "$(q 'd["networks"]["internal"]["inhibit_ipv4"]')" True
t_is "IPv6 off on both networks" "$(q '[n["ipv6"] for n in d["networks"].values()]')" "[False, False]"
t_is "outbound network is a plain bridge by default" "$(q 'd["networks"]["outbound"]["internal"]')" False
t_is "agent joins only the study network" "$(q 'd["containers"]["agent"]["networks"]')" \
	"['agentguard-study-$TOKEN-internal']"
t_is "gateway joins both networks" "$(q 'd["containers"]["gateway"]["networks"]')" \
	"['agentguard-study-$TOKEN-internal', 'agentguard-study-$TOKEN-outbound']"
t_is "agent DNS is 127.0.0.1" "$(q 'd["containers"]["agent"]["dns"]')" 127.0.0.1
t_is "agent has no sysctls" "$(q 'd["containers"]["agent"]["sysctls"]')" "{}"
t_is "gateway sysctls: ip_forward=0 only" "$(q 'd["containers"]["gateway"]["sysctls"]')" \
	"{'net.ipv4.ip_forward': '0'}"
t_is "no capabilities added" "$(q '[c["cap_add"] for c in d["containers"].values()]')" "[[], []]"
t_is "owner labels" "$(q 'sorted(c["labels"]["agentguard.owner"] for c in d["containers"].values())')" \
	"['study-egress', 'study-egress']"
t_is "trial label" "$(q 'd["containers"]["gateway"]["labels"]["agentguard.study-egress.trial"]')" trial-0801
t_is "start order" "$(q '[s["step"] for s in d["start"]]')" \
	"['create_internal_network', 'create_outbound_network', 'create_gateway', 'connect_gateway_outbound', 'create_agent', 'start_gateway', 'inspect_gateway', 'start_agent']"
t_is "teardown order" "$(q '[s["step"] for s in d["teardown"]]')" \
	"['remove_agent', 'remove_gateway', 'remove_internal_network', 'remove_outbound_network']"
t_like "plan digest is 64 hex" "$(q 'd["plan_digest"]')" '^[0-9a-f]{64}$'
t_is "agent argv ends with the image and the verbatim ARGV after its first token" \
	"$(q '" ".join(d["start"][4]["argv"][-4:])')" "-- $AGENT exec say hi"
t_is "agent argv[0] is the entrypoint (the image's never runs)" \
	"$(q '[a for a in d["start"][4]["argv"] if a.startswith("--entrypoint")]')" "['--entrypoint=codex']"

# The argv of each create, checked option by option.
argv_of() { q "'\\n'.join([s for s in d['start'] if s['step']=='$1'][0]['argv'])"; }
GWARGV=$(argv_of create_gateway)
AGARGV=$(argv_of create_agent)
NETARGV=$(argv_of create_internal_network)
OUTARGV=$(argv_of create_outbound_network)
t_like "study network create has --internal" "$NETARGV" $'\n--internal\n'
t_like "study network create has inhibit_ipv4" "$NETARGV" 'com.docker.network.bridge.inhibit_ipv4=true'
t_like "networks are created with IPv6 off" "$NETARGV$OUTARGV" '--ipv6=false.*--ipv6=false'
t_unlike "outbound network is not internal by default" "$OUTARGV" $'\n--internal\n'
for who in gateway agent; do
	if [ $who = gateway ]; then A=$GWARGV; else A=$AGARGV; fi
	opts=${A%%$'\n'--$'\n'*}
	for flag in $'\n--read-only\n' $'\n--cap-drop\nALL\n' $'\n--security-opt\nno-new-privileges\n' \
		$'\n--pids-limit\n[0-9]+\n' $'\n--memory\n[0-9]+m\n--memory-swap\n' $'\n--cpus\n[0-9.]+\n' \
		$'\n--tmpfs\n/tmp:rw,noexec,nosuid,nodev,size=' $'\n--user\n[0-9]+:[0-9]+\n' \
		$'\n--pull\nnever\n' $'\n--cgroupns\nprivate\n'; do
		t_like "$who create carries ${flag//$'\n'/ }" "$opts" "$flag"
	done
	for bad in --privileged --cap-add --device --add-host --pid --ipc --uts --userns --publish \
		-p --link --volume -v --ip6 docker.sock $'\nhost\n' --network=host; do
		t_unlike "$who create has no ${bad//$'\n'/}" "$opts" "(^|"$'\n'")$bad("$'\n'"|=|$)"
	done
done
t_like "gateway create: alias, fixed study address, DNS and ip_forward=0" "$GWARGV" \
	$'--network-alias\nagentguard-study-egress-gateway\n--ip\n10.254.254.2\n--dns\n127.0.0.1\n--sysctl\nnet.ipv4.ip_forward=0'
t_like "gateway listens on its study address only" "$GWARGV" $'--listen-address\n10.254.254.2\n--listen-port\n8080\n'
t_like "gateway runs as 65532" "$GWARGV" $'--user\n65532:65532'
t_like "agent create: study network and DNS 127.0.0.1" "$AGARGV" \
	$'--network\nagentguard-study-'"$TOKEN"$'-internal\n--dns\n127.0.0.1\n'
t_unlike "agent create never names the outbound network" "$AGARGV" outbound
t_unlike "agent create has no --sysctl" "$AGARGV" sysctl
t_like "agent proxy variables name the gateway" "$AGARGV" \
	$'HTTPS_PROXY=http://agentguard-study-egress-gateway:8080\n.*HTTP_PROXY=http://agentguard-study-egress-gateway:8080'
t_like "agent NO_PROXY is empty" "$AGARGV" $'--env\nNO_PROXY=\n'
t_like "gateway is given the policy digest" "$GWARGV" \
	$'--policy-digest\n'"$("$AG_BIN" study-egress policy digest "$T/p.json")"

t_run plan --gateway-image "$GW" --outbound-internal --json -- true
t_like "--outbound-internal makes the outbound network internal (CI)" "$AG_OUT" \
	'"outbound":\{"driver":"bridge","existing":false,"inhibit_ipv4":false,"internal":true,'

t_run plan --gateway-image "$GW" -- codex exec 'say hi'
t_is "text plan exits 0" "$AG_RC" 0
t_like "text plan shows docker argv for people" "$AG_OUT" \
	"create_agent: docker create --pull never --name agentguard-study-$TOKEN-agent --network agentguard-study-$TOKEN-internal --dns 127.0.0.1"
t_like "text plan quotes an argument with a blank" "$AG_OUT" "exec 'say hi'"
t_run plan --gateway-image "$GW" --json -- true
A1=$AG_OUT
t_run plan --gateway-image "$GW" --json -- true
t_is "plan is deterministic" "$AG_OUT" "$A1"

t_ok "a trial id that reads like a forbidden value is only a label value" \
	"$AG_BIN" study-egress plan "$T/c.yaml" --policy "$T/p.json" --trial-id unconfined-host-docker.sock \
	--gateway-image "$GW" -- true

# refusals: exit 2 and a named reason
ag_must_fail 2 egress.plan.image_not_pinned "tag-only gateway image is refused" \
	plan --gateway-image 127.0.0.1:5000/agentguard-gateway:latest -- true
ag_must_fail 2 egress.plan.image_not_pinned "tag-only gateway image is refused (--json)" \
	plan --gateway-image agentguard-gateway --json -- true
ag_must_fail 2 egress.plan.same_image "same image for gateway and agent is refused" \
	plan --gateway-image "$AGENT" -- true
ag_must_fail 2 egress.plan.same_image "same digest under another name is refused" \
	plan --gateway-image "127.0.0.1:5000/other@$D1" -- true
printf '%s' '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"*.example.com","port":443}]}' >"$T/bad.json"
ag_must_fail 2 egress.host.wildcard "a policy that fails validation is refused" \
	"$AG_BIN" study-egress plan "$T/c.yaml" --policy "$T/bad.json" --trial-id t1 --gateway-image "$GW" -- true
printf '%s' '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[{"host":"metadata.google.internal","port":80}]}' >"$T/bad2.json"
ag_must_fail 2 egress.policy.host_blocked "a policy naming a metadata service is refused" \
	"$AG_BIN" study-egress plan "$T/c.yaml" --policy "$T/bad2.json" --trial-id t1 --gateway-image "$GW" -- true
ag_must_fail 2 egress.plan.trial_id "a trial id that is not a label value is refused" \
	"$AG_BIN" study-egress plan "$T/c.yaml" --policy "$T/p.json" --trial-id 'a b' --gateway-image "$GW" -- true
ag_must_fail 2 egress.plan.gateway_dns "gateway DNS must be an address" \
	plan --gateway-image "$GW" --gateway-dns resolver.example -- true
printf '%s\n' "task_id: t0801" "description: plain" "test_command: 'true'" "repo_template: repo" \
	"expected_modified_files: {min: 0, max: 3}" >"$T/plain.yaml"
ag_must_fail 2 egress.plan.not_contained "a config without contained_execution is refused" \
	"$AG_BIN" study-egress plan "$T/plain.yaml" --policy "$T/p.json" --trial-id t1 --gateway-image "$GW" -- true
ag_must_fail 2 usage "plan without '--' is a usage error" plan --gateway-image "$GW" true
ag_must_fail 2 usage "plan with an empty ARGV is a usage error" plan --gateway-image "$GW" --
ag_must_fail 2 usage "plan without --gateway-image is a usage error" plan -- true
t_done
