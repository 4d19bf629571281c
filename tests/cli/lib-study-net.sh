# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # sets variables for the test scripts (ST_*), some by printf -v
# tests/cli/lib-study-net.sh: the study-egress topology on the real engine, for
# the t088x tests (set ST_TEST, source after lib-test.sh and require_docker).
#
# Everything obeys the rules for tests that create networks
# (shared notes, test-environment.md): never 192.0.2.0/24; every network has
# an explicit --subnet slice of 198.51.100.0/24 or 203.0.113.0/24, is
# --internal (the control network excepted: it exists to show a leak), is
# labelled and removed by id; every container has --dns and --pull never;
# every probe target passes st_route_ok first; every wait is bounded.
#
#   st_start                 jq present, st_setup as a test point, and every
#                            fixed target's route checked (skip_all if not)
#   st_setup                 the outbound topology: network OUT (--internal,
#                            203.0.113.x/27) with the canary container
#                            ($ST_CANARY: HTTP :80 with /redirect, HTTP :8080,
#                            TCP echo :7, TCP sink :9000 that never reads,
#                            UDP sinks :443 and :9999) and the
#                            resolver ($ST_RESOLVER: logging DNS :53, never
#                            forwards); host listeners on every host bridge
#                            address ($ST_HOSTPORT; $ST_HOST_PRIVATE is one
#                            outside the documentation ranges, and
#                            bridgehost.test answers it); the gateway image
#                            ($ST_GW_IMAGE). Logs under $ST_LOGS/{canary,
#                            resolver,host,lo}/KIND-PORT.log.
#   st_policy RULES-JSON     $ST_POLICY: a test_only policy with these rules
#   st_agent NAME SCRIPT     `agentguard study-egress run` (as the test user,
#                            trial NAME, the outbound network above, a free
#                            /27 of 198.51.100.0/24 as the study subnet) with
#                            `sh -c SCRIPT` as the agent's argv; the agent
#                            sees the probe binary (copied into the
#                            workspace) as $P and the gateway as $GW
#                            (host:port, from its proxy variables). Sets
#                            ST_AGENT_OUT (the agent's stdout from the
#                            artifact), ST_RUN_RC, ST_RUN_SUMMARY,
#                            ST_EVENTS (the gateway's stream), ST_MANIFEST
#                            and ST_INSPECT (what the engine showed of the
#                            gateway, networks and agent while it ran)
#   st_control_setup         the control network (plain bridge, 203.0.113.x/27)
#                            with the canary and resolver connected to it too
#                            ($ST_CTL_CANARY, $ST_CTL_RESOLVER, $ST_CTL_HOST)
#   st_control SCRIPT        run SCRIPT in a throwaway container on an
#                            ordinary bridge network that also holds the
#                            canaries (the sensitivity control)
#   st_parallel LINES        a script running each probe line at once
#   st_live_host_addrs       host bridge addresses still the host's own
#   st_check_stream / st_check_complete / st_check_manifest /
#   st_check_inspect / st_check_run_gone DESC ...
#                            test points on the last trial's evidence, the
#                            engine's view of its topology, and its leftovers
#   st_gateway_knows_host_addresses
#                            the last trial's gateway was given host addresses
#   st_log DIR KIND PORT     the lines of one canary log
#   st_route_ok TARGET       the host's route to TARGET names an owned bridge
#                            or `local` (or TARGET is inside the study subnet,
#                            probed only from a container attached to it)
#   st_leftovers             prints every container, network or br- device
#                            of this test file that still exists
#   st_teardown              removes everything of this test file, by id

# One network-creating test file at a time on this machine (lib-test.sh).
t_network_lock

ST_GEAR=$AG_BUILD/tests/agtest-net
ST_IMG=$AG_TEST_IMAGE
ST_LOGS=$T/study-logs
ST_FILE_LABEL=agentguard.test=${ST_TEST:-t088x}
ST_NETWORKS=()
ST_HOST_PIDS=()
# Every container the tests start stops by itself after this many seconds.
ST_LIFETIME=${ST_LIFETIME:-600}
# Containers: bounded and unprivileged unless a test says otherwise.
ST_HARDEN=(--read-only --cap-drop ALL --security-opt no-new-privileges
	--pids-limit 32 --memory 64m --memory-swap 64m --cpus 0.5)

ST_LABELS=(--label "$AG_TEST_LABEL" --label "$ST_FILE_LABEL")
# Short unique object names (a network name must stay under 64 bytes).
ST_NAME=agst-$(printf '%s' "$AG_TEST_RUN_ID/$ST_FILE_LABEL/$$" | sha256sum | cut -c1-12)

# _st_net NAME KIND(internal|plain) PREFIX: creates a labelled network
# on a free /27 of this file's slice of PREFIX.0/24 (t_network_lock: two
# /27s; the file's other network may hold one).
# Sets ST_NET_ID, ST_NET_NAME and ST_NET_BASE (the slice's last octet).
_st_net() {
	local name=$1 kind=$2 prefix=$3 base id opts=()
	case $kind in
	internal) opts=(--internal) ;;
	plain) opts=() ;;
	esac
	local k
	for k in 0 1; do
		base=$((AG_NET_SLICE_LO + k * 32))
		if ! ip route show | grep -q "^$prefix\.$base/27 " &&
			id=$("$AG_DOCKER" network create --driver bridge --ipv6=false "${opts[@]}" \
				--subnet "$prefix.$base/27" "${ST_LABELS[@]}" "$ST_NAME-$name" 2>/dev/null); then
			ST_NETWORKS+=("$id")
			ST_NET_ID=$id
			ST_NET_NAME=$ST_NAME-$name
			ST_NET_BASE=$base
			return 0
		fi
	done
	diag "no free /27 in slice $AG_NET_SLICE_LO+64 of $prefix.0/24 for network $name"
	return 1
}

# _st_study_slice: the first /27 of this file's slice of 198.51.100.0/24
# that no Docker network and no host route overlaps (ST_STUDY_PREFIX,
# ST_STUDY_BASE).
_st_study_slice() {
	local used base
	used=$({
		# shellcheck disable=SC2046 # one network id per word
		"$AG_DOCKER" network inspect --format '{{range .IPAM.Config}}{{.Subnet}}{{"\n"}}{{end}}' \
			$("$AG_DOCKER" network ls -q) 2>/dev/null
		ip -4 route show | awk '{print $1}'
	} | grep -E '^[0-9.]+(/[0-9]+)?$' || true)
	base=$(python3 -c 'import ipaddress,sys
used=[ipaddress.ip_network(u if "/" in u else u+"/32", strict=False) for u in sys.argv[1].split()]
lo=int(sys.argv[2])
for b in (lo, lo + 32):
    n=ipaddress.ip_network("198.51.100.%d/27" % b)
    if not any(n.overlaps(u) for u in used):
        print(b); break' "$used" "$AG_NET_SLICE_LO") || return 1
	[ -n "$base" ] || { diag "no free /27 in slice $AG_NET_SLICE_LO+64 of 198.51.100.0/24 for the study network"; return 1; }
	ST_STUDY_PREFIX=198.51.100 ST_STUDY_BASE=$base
}

# st_route_ok TARGET: see the header.
st_route_ok() {
	local t=$1 r n
	if [ -n "${ST_STUDY_PREFIX:-}" ] && _st_in27 "$t" "$ST_STUDY_PREFIX" "$ST_STUDY_BASE"; then
		return 0
	fi
	r=$(ip -4 route get "$t" 2>/dev/null | head -1) || return 1
	[[ "$r" == local\ * ]] && return 0
	for n in "${ST_NETWORKS[@]}"; do
		[[ "$r" =~ \ dev\ br-${n:0:12}\  ]] && return 0
	done
	return 1
}

# _st_in27 IP PREFIX BASE: IP is inside PREFIX.BASE/27
_st_in27() {
	local last=${1##*.}
	[ "${1%.*}" = "$2" ] && [ "$last" -ge "$3" ] && [ "$last" -lt $(($3 + 32)) ]
}

# The IPv4 addresses of the host's bridge devices (docker0, every
# br-<id>, ours included), one per line. Only addresses `ip route get` calls
# local are kept.
_st_host_bridge_addrs() {
	local dev addr
	while read -r _ dev _ addr _; do
		[ -d "/sys/class/net/$dev/bridge" ] || continue
		addr=${addr%/*}
		[[ "$addr" == 192.0.2.* ]] && continue
		[[ "$(ip -4 route get "$addr" 2>/dev/null)" == local\ * ]] && printf '%s\n' "$addr"
	done < <(ip -o -4 addr show)
}

# st_live_host_addrs: those of $ST_HOST_ADDRS that are still the host's own
# (another test's bridge may be gone, and its address reused, by now).
st_live_host_addrs() {
	local a
	for a in $ST_HOST_ADDRS; do
		[[ "$(ip -4 route get "$a" 2>/dev/null)" == local\ * ]] && printf '%s\n' "$a"
	done
	return 0
}

# _st_wait_ready DIR: the gear's ready file (bounded: 10 s)
_st_wait_ready() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "$1/ready" ] && return 0
		sleep 0.1
	done
	return 1
}

_st_logdir() {
	mkdir -p "$ST_LOGS/$1"
	chmod 0777 "$ST_LOGS/$1" # the gear writes as an unprivileged uid
}

# _st_gear_container NAME NETWORK IP DNS ARGS...: a detached gear container.
_st_gear_container() {
	local name=$1 net=$2 ip=$3 dns=$4 id
	shift 4
	_st_logdir "$name"
	id=$("$AG_DOCKER" run -d --pull never "${ST_LABELS[@]}" --name "$ST_NAME-$name" \
		--network "$net" --ip "$ip" --dns "$dns" "${ST_HARDEN[@]}" --user 65534:65534 \
		-v "$ST_GEAR:/gear/agtest-net:ro" -v "$ST_LOGS/$name:/logs" \
		"$ST_IMG" /gear/agtest-net serve --log-dir /logs --lifetime "$ST_LIFETIME" "$@") || return 1
	_st_wait_ready "$ST_LOGS/$name" || { diag "$name did not start: $("$AG_DOCKER" logs "$id" 2>&1 | tail -3)"; return 1; }
	printf -v "ST_ID_$name" '%s' "$id"
}

st_setup() {
	[ -x "$ST_GEAR" ] || { diag "the test gear is not built: make tests"; return 1; }
	mkdir -p "$ST_LOGS"
	chmod 0755 "$T" "$ST_LOGS"
	t_cleanup st_teardown
	diag "engine: $("$AG_DOCKER" version --format 'server {{.Server.Version}} api {{.Server.APIVersion}} client {{.Client.Version}}' 2>&1)"

	# The outbound network (what the gateway reaches); --internal in tests.
	_st_net out internal 203.0.113 || return 1
	ST_OUT=$ST_NET_ID
	ST_OUT_NAME=$ST_NET_NAME
	ST_OUT_PREFIX=203.0.113 ST_OUT_BASE=$ST_NET_BASE
	local o=$ST_OUT_PREFIX.$((ST_OUT_BASE))
	ST_OUT_HOST=$ST_OUT_PREFIX.$((ST_OUT_BASE + 1))
	ST_GW_OUT=$ST_OUT_PREFIX.$((ST_OUT_BASE + 2))
	ST_CANARY=$ST_OUT_PREFIX.$((ST_OUT_BASE + 3))
	ST_RESOLVER=$ST_OUT_PREFIX.$((ST_OUT_BASE + 4))
	: "$o"

	# The study subnet: study-egress run creates that network on it.
	_st_study_slice || return 1
	ST_STUDY_BRIDGE_IP=$ST_STUDY_PREFIX.$((ST_STUDY_BASE + 1)) # nobody owns it (inhibit_ipv4)
	ST_GW_STUDY=$ST_STUDY_PREFIX.$((ST_STUDY_BASE + 2))      # the run puts its gateway on .2

	# Host listeners on every host bridge address (route: local), one port.
	local a pid
	ST_HOST_ADDRS=$(_st_host_bridge_addrs)
	_st_logdir host
	for _ in 1 2 3; do
		ST_HOSTPORT=$((20000 + (RANDOM % 20000)))
		local spec=()
		for a in $ST_HOST_ADDRS; do spec+=(--http "$a:$ST_HOSTPORT"); done
		rm -f "$ST_LOGS/host/ready"
		timeout "$ST_LIFETIME" "$ST_GEAR" serve --log-dir "$ST_LOGS/host" --lifetime "$ST_LIFETIME" \
			"${spec[@]}" 2>"$T/host-gear.err" &
		pid=$!
		if _st_wait_ready "$ST_LOGS/host"; then
			ST_HOST_PIDS+=("$pid")
			break
		fi
		kill "$pid" 2>/dev/null || true
		ST_HOSTPORT=
	done
	[ -n "$ST_HOSTPORT" ] || { diag "host listeners: $(cat "$T/host-gear.err")"; return 1; }
	diag "host bridge addresses with a listener on :$ST_HOSTPORT: $(tr "\n" " " <<<"$ST_HOST_ADDRS")"
	# One of them outside the documentation ranges (docker0's, usually): a
	# name answering it is refused by the decision table itself.
	ST_HOST_PRIVATE=$(grep -vE '^(198\.51\.100|203\.0\.113)\.' <<<"$ST_HOST_ADDRS" | head -1 || true)

	# The canaries on the outbound network (aliases: names only a resolver
	# on that network would know).
	_st_gear_container resolver "$ST_OUT" "$ST_RESOLVER" "$ST_RESOLVER" \
		--dns 0.0.0.0:53 \
		--zone "canary.test=$ST_CANARY" --zone "other.test=$ST_CANARY" \
		--zone "mixed.test=$ST_CANARY,127.0.0.1" \
		${ST_HOST_PRIVATE:+--zone "bridgehost.test=$ST_HOST_PRIVATE"} \
		--zone "hostname.test=$ST_OUT_HOST" \
		--rebind "rebind.test=$ST_CANARY,127.0.0.1" || return 1
	_st_gear_container canary "$ST_OUT" "$ST_CANARY" "$ST_RESOLVER" \
		--http "0.0.0.0:80=http://other.test:80/landed" --http 0.0.0.0:8080 \
		--echo 0.0.0.0:7 --sink 0.0.0.0:9000 --udp 0.0.0.0:443 --udp 0.0.0.0:9999 || return 1

	# The gateway image, pinned (built from this build's gateway).
	ST_GW_IMAGE=$(env BUILD="$(realpath --relative-to="$AG_ROOT" "$AG_BUILD")" \
		"$AG_ROOT/scripts/gateway-image" 127.0.0.1:5000 2>"$T/gw-image.err" | tail -1)
	[[ "$ST_GW_IMAGE" == *@sha256:* ]] || { diag "gateway image: $(tail -3 "$T/gw-image.err")"; return 1; }
	return 0
}

# st_start: see the header.
st_start() {
	local tgt
	command -v jq >/dev/null || skip_all "jq is needed to read the evidence"
	if ! st_setup; then
		t_fail "the outbound topology is set up" "see the diagnostics above"
		t_done
	fi
	t_pass "the outbound topology is set up (the agent runs through agentguard study-egress run)"
	for tgt in "$ST_CANARY" "$ST_RESOLVER" "$ST_OUT_HOST" "$ST_GW_OUT" "$ST_GW_STUDY" "$ST_STUDY_BRIDGE_IP"; do
		st_route_ok "$tgt" ||
			skip_all "the route to $tgt names no owned bridge: $(ip -4 route get "$tgt" 2>&1 | head -1)"
	done
}

# st_policy RULES: the policy file (every rule test_only).
st_policy() {
	ST_POLICY=$T/policy.json
	printf '{"schema":"agentguard.live-study-egress-policy","schema_version":1,"destinations":[%s]}\n' \
		"$1" >"$ST_POLICY"
	chmod 0644 "$ST_POLICY"
}

st_log() { cat "$ST_LOGS/$1/$2-$3.log" 2>/dev/null || true; }
st_log_count() { st_log "$@" | wc -l; }

# ---- the agent inside the study topology ----

# st_agent NAME SCRIPT: see the header.
st_agent() {
	local name=$1 script=$2
	ST_INSPECT=$ST_LOGS/inspect-$name
	mkdir -p "$ST_INSPECT"
	# Every agent script first waits (bounded) for the namespace sidecar's
	# readiness port on the gateway's study address: the sidecar is attached
	# while the run starts, so no rebinding proof runs before its listener.
	# shellcheck disable=SC2016 # expanded by the agent's shell
	script='GW=${HTTP_PROXY#http://}; GW=${GW%/}; i=0
until $P probe tcp '"$ST_GW_STUDY"' 9 >/dev/null 2>&1 || [ $i -ge 100 ]; do i=$((i+1)); sleep 0.2; done
'"$script"
	_st_agent_run "$name" "$script"
}

_st_rm() { "$AG_DOCKER" rm -f "$@" >/dev/null 2>&1 || true; }

# st_control SCRIPT: the sensitivity control (see the header). The control
# network is an ordinary bridge (not internal), so only owned targets are
# probed, each after st_route_ok. The container runs as root with Docker's
# default capabilities and IPv6 switched on in its own namespace, and an
# owned Unix socket is mounted at the Docker socket's path: each probe's
# "reached" is what a leak looks like.
st_control_setup() {
	[ -z "${ST_CTL:-}" ] || return 0
	{
		_st_net ctl plain 203.0.113 || return 1
		ST_CTL=$ST_NET_ID
		ST_CTL_HOST=203.0.113.$((ST_NET_BASE + 1))
		ST_CTL_CANARY=203.0.113.$((ST_NET_BASE + 3))
		ST_CTL_RESOLVER=203.0.113.$((ST_NET_BASE + 4))
		ST_CTL_PROBE=203.0.113.$((ST_NET_BASE + 5))
		"$AG_DOCKER" network connect --ip "$ST_CTL_CANARY" --alias canary.test "$ST_CTL" "$ST_ID_canary" || return 1
		"$AG_DOCKER" network connect --ip "$ST_CTL_RESOLVER" "$ST_CTL" "$ST_ID_resolver" || return 1
		# A host listener on the control bridge's address too.
		if st_route_ok "$ST_CTL_HOST"; then
			_st_logdir host-ctl
			timeout "$ST_LIFETIME" "$ST_GEAR" serve --log-dir "$ST_LOGS/host-ctl" \
				--lifetime "$ST_LIFETIME" --http "$ST_CTL_HOST:$ST_HOSTPORT" 2>/dev/null &
			ST_HOST_PIDS+=("$!")
			_st_wait_ready "$ST_LOGS/host-ctl" || return 1
		fi
	}
}

st_control() {
	local script=$1 sockdir=$T/ctl-sock cid
	st_control_setup || return 1
	mkdir -p "$sockdir"
	rm -f "$sockdir/owned.sock"
	timeout 60 python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(55)
try:
    c,_=s.accept(); c.close()
except OSError: pass' "$sockdir/owned.sock" &
	ST_HOST_PIDS+=("$!")
	local i
	for ((i = 0; i < 50; i++)); do [ -S "$sockdir/owned.sock" ] && break; sleep 0.1; done
	rm -f "$T/ctl.cid"
	ST_CTL_OUT=$(timeout 90 "$AG_DOCKER" run --pull never "${ST_LABELS[@]}" --cidfile "$T/ctl.cid" \
		--network "$ST_CTL" --ip "$ST_CTL_PROBE" --dns "$ST_CTL_RESOLVER" \
		--sysctl net.ipv6.conf.all.disable_ipv6=0 --sysctl net.ipv6.conf.default.disable_ipv6=0 \
		--pids-limit 64 --memory 64m --memory-swap 64m --cpus 0.5 --user 0:0 \
		-v "$sockdir/owned.sock:/var/run/docker.sock" -v "$ST_GEAR:/gear/agtest-net:ro" \
		-e P=/gear/agtest-net "$ST_IMG" sh -c "$script" 2>&1) || true
	cid=$(cat "$T/ctl.cid" 2>/dev/null || true)
	[ -z "$cid" ] || _st_rm "$cid"
	sleep 0.5 # datagrams and queries in flight reach their logs
	return 0
}

# st_leftovers: every container, network or bridge device of this test file.
st_leftovers() {
	local n
	"$AG_DOCKER" ps -aq --filter "label=$AG_TEST_LABEL" --filter "label=$ST_FILE_LABEL"
	"$AG_DOCKER" network ls -q --filter "label=$AG_TEST_LABEL" --filter "label=$ST_FILE_LABEL"
	for n in "${ST_NETWORKS[@]}" $(cat "$ST_LOGS"/inspect-*/study.id 2>/dev/null); do
		[ ! -e "/sys/class/net/br-${n:0:12}" ] || echo "br-${n:0:12}"
	done
	# what `study-egress run` made, by each run's own label
	local -a sfx=()
	mapfile -t sfx < <(_st_run_suffixes)
	t_run_objects ps -- "${sfx[@]}" | cut -c1-12
	t_run_objects network -- "${sfx[@]}" | cut -c1-12
}

# st_teardown: containers, then networks, each by id; host listeners by pid.
st_teardown() {
	local id pid n
	for id in $("$AG_DOCKER" ps -aq --no-trunc --filter "label=$AG_TEST_LABEL" --filter "label=$ST_FILE_LABEL"); do
		_st_rm "$id"
	done
	# a crashed study run's objects, by its own label and AgentGuard's owner label
	local -a sfx=()
	mapfile -t sfx < <(_st_run_suffixes)
	for id in $(t_run_objects ps --filter label=agentguard.owner=study-egress -- "${sfx[@]}"); do
		_st_rm "$id"
	done
	for id in $(t_run_objects network --filter label=agentguard.owner=study-egress -- "${sfx[@]}"); do
		"$AG_DOCKER" network rm "$id" >/dev/null 2>&1 || true
	done
	for id in "${ST_NETWORKS[@]}"; do
		"$AG_DOCKER" network rm "$id" >/dev/null 2>&1 || true
	done
	for pid in "${ST_HOST_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	ST_HOST_PIDS=()
}

# st_gateway_knows_host_addresses: the last trial's gateway was given the
# host's own addresses (its start record counts them), so it must refuse
# them even where the decision table alone lets a test_only rule reach them
# (documentation ranges).
st_gateway_knows_host_addresses() {
	[ "$(jq -s -r '.[0].host_addresses // 0' "$ST_EVENTS" 2>/dev/null || echo 0)" -gt 0 ]
}

# st_check_stream DESC: the last trial's gateway stream is complete: start
# record first, decisions numbered 1..N, an end record that says complete
# with records=N and nothing lost.
st_check_stream() {
	local desc=$1 n got
	n=$(jq -c 'select(.record=="decision")' "$ST_EVENTS" | wc -l)
	got=$(jq -s -r '[.[0].record, .[-1].record, (.[-1].complete|tostring), (.[-1].records|tostring),
		(.[-1].lost|tostring), ([.[]|select(.record=="decision")|.seq]==[range(1;length-1)]|tostring)]|join(" ")' \
		"$ST_EVENTS" 2>&1)
	t_is "$desc: the gateway's stream is complete ($n decisions)" "$got" "start end true $n 0 true"
}

# st_check_complete DESC NALLOW NDENY: the stream is complete and holds
# exactly NALLOW allow and NDENY deny decisions.
st_check_complete() {
	st_check_stream "$1"
	t_is "$1: decisions allow/deny" \
		"$(jq -r 'select(.record=="decision")|.event.decision' "$ST_EVENTS" | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')" \
		"$( { [ "$2" = 0 ] || printf 'allow=%s ' "$2"; [ "$3" = 0 ] || printf 'deny=%s ' "$3"; })"
}

# st_parallel LINES: a shell script that runs each line (a probe, bounded by
# its own alarm) at the same time, then prints their outputs in line order.
st_parallel() {
	local l i=0 out=
	while IFS= read -r l; do
		[ -n "$l" ] || continue
		i=$((i + 1))
		out+="($l) >/tmp/st-probe.$i 2>&1 &"$'\n'
	done <<<"$1"
	out+="wait; for i in \$(seq 1 $i); do cat /tmp/st-probe.\$i; done"
	printf '%s\n' "$out"
}

# st_check_inspect DESC: the engine's own view of the last trial's topology
# is the plan's (engine notes, section 12.1), whoever built it.
st_check_inspect() {
	local d=$ST_INSPECT desc=$1
	t_is "$desc: study network internal, inhibit_ipv4, IPv6 off, labelled" \
		"$(jq -r '.[0]|[.Internal,.EnableIPv6,.Options["com.docker.network.bridge.inhibit_ipv4"],(.IPAM.Config[0].Subnet|startswith("198.51.100."))]|map(tostring)|join(" ")' "$d/study.json")" \
		"true false true true"
	t_is "$desc: outbound network internal (tests), IPv6 off" \
		"$(jq -r '.[0]|[.Internal,.EnableIPv6,(.IPAM.Config[0].Subnet|startswith("203.0.113."))]|map(tostring)|join(" ")' "$d/outbound.json")" \
		"true false true"
	t_is "$desc: agent on the study network only, DNS 127.0.0.1, no sysctl, host, port or link" \
		"$(jq -r --arg s "$(jq -r '.[0].Name' "$d/study.json")" '.[0]|[(.NetworkSettings.Networks|keys==[$s]),(.HostConfig.Dns==["127.0.0.1"]),
			((.HostConfig.Sysctls//{})=={}),((.HostConfig.ExtraHosts//[])==[]),((.HostConfig.PortBindings//{})=={}),
			((.HostConfig.Links//[])==[])]|map(tostring)|join(" ")' "$d/agent.json")" \
		"true true true true true true"
	t_is "$desc: agent controls (caps dropped, none added, read-only, no-new-privileges, not root, not privileged)" \
		"$(jq -r '.[0]|[(.HostConfig.CapDrop==["ALL"]),((.HostConfig.CapAdd//[])==[]),.HostConfig.ReadonlyRootfs,
			(.HostConfig.SecurityOpt|index(["no-new-privileges"])!=null),(.Config.User|test("^[1-9][0-9]*:[1-9][0-9]*$")),.HostConfig.Privileged]|map(tostring)|join(" ")' "$d/agent.json")" \
		"true true true true true false"
	t_is "$desc: gateway on exactly the two networks, ip_forward=0 only, hardened, its own image" \
		"$(jq -r --slurpfile a "$d/agent.json" '.[0]|[(.NetworkSettings.Networks|length),(.HostConfig.Sysctls=={"net.ipv4.ip_forward":"0"}),
			(.HostConfig.CapDrop==["ALL"]),((.HostConfig.CapAdd//[])==[]),.HostConfig.ReadonlyRootfs,.Config.User,
			(.Image!=$a[0][0].Image)]|map(tostring)|join(" ")' "$d/gateway.json")" \
		"2 true true true true 65532:65532 true"
}

# ---- `agentguard study-egress run` drives the topology ----

# The run needs the invoking user to be the agent's uid/gid (the workspace
# is bind-mounted): it runs as the test user from $ST_W.
ST_W=$T/study-w
_st_run_prepare() {
	[ -z "${_ST_RUN_READY:-}" ] || return 0
	mkdir -p "$ST_W"
	chmod 0755 "$T" "$ST_W"
	printf '%s\n' "task_id: study-egress-engine" "description: study-egress engine test" \
		"test_command: 'true'" "mode: ci" "expected_modified_files: {min: 0, max: 50}" \
		"command_timeout_seconds: 60" "max_output_bytes: 65536" \
		"sandbox: {type: docker, image: '$ST_IMG', network: none}" \
		"contained_execution:" "  version: 1" "  platform: linux-docker-engine" \
		"  required_uid: $AG_TEST_UID" "  required_gid: $AG_TEST_GID" \
		"  memory_limit: 128m" "  pids_limit: 64" "  tmpfs_size: 16m" >"$ST_W/c.yaml"
	chown -R "$AG_TEST_UID:$AG_TEST_GID" "$ST_W"
	_ST_RUN_READY=1
}

# _st_run_suffixes: the container-label value of every run made from $ST_W.
_st_run_suffixes() { t_run_suffixes "$ST_W/.agentguard/contained-runs"; }

# _st_watch_run NAME: in the background while the run lives (60 s at most):
# finds the run's gateway (the one study gateway on our outbound network),
# attaches the namespace sidecar to it, and records what the engine shows
# of the gateway, both networks, the study bridge and the agent.
_st_watch_run() {
	local name=$1 d=$ST_INSPECT gw='' studynet='' i id role
	for ((i = 0; i < 600; i++)); do
		[ ! -e "$T/run-done" ] || return 0
		gw=$("$AG_DOCKER" ps -q --no-trunc --filter label=agentguard.study-egress.role=gateway \
			--filter "network=$ST_OUT" 2>/dev/null | head -1)
		[ -z "$gw" ] || break
		sleep 0.1
	done
	[ -n "$gw" ] || return 0
	"$AG_DOCKER" container inspect "$gw" >"$d/gateway.json" 2>/dev/null || true
	# In this test run's ledger at once, so the closing sweep finds the
	# run's objects even if this script is killed before the run ends.
	t_ledger_run "$(jq -r '.[0].Config.Labels["agentguard.contained-run.id"] // empty' "$d/gateway.json" 2>/dev/null)"
	studynet=$(jq -r --arg o "$ST_OUT" '.[0].NetworkSettings.Networks|to_entries[]|select(.value.NetworkID!=$o)|.value.NetworkID' \
		"$d/gateway.json" 2>/dev/null | head -1)
	[ -n "$studynet" ] || { _st_sidecar "$name" "$gw"; return 0; }
	printf '%s\n' "$studynet" >"$d/study.id"
	"$AG_DOCKER" network inspect "$studynet" >"$d/study.json" 2>/dev/null || true
	"$AG_DOCKER" network inspect "$ST_OUT" >"$d/outbound.json" 2>/dev/null || true
	ip -4 -o addr show dev "br-${studynet:0:12}" >"$d/study-bridge-ipv4.txt" 2>&1 || true
	# The agent waits for the sidecar's readiness port, so it is caught
	# alive here before the sidecar starts.
	for ((i = 0; i < 300; i++)); do
		[ ! -e "$T/run-done" ] || return 0
		for id in $("$AG_DOCKER" ps -q --no-trunc --filter "network=$studynet" 2>/dev/null); do
			[ "$id" != "$gw" ] || continue
			role=$("$AG_DOCKER" container inspect --format '{{index .Config.Labels "agentguard.study-egress.role"}}' "$id" 2>/dev/null) || continue
			case $role in gateway | probe) continue ;; esac
			if "$AG_DOCKER" container inspect "$id" >"$d/agent.json.tmp" 2>/dev/null; then
				mv "$d/agent.json.tmp" "$d/agent.json"
				_st_sidecar "$name" "$gw"
				return 0
			fi
		done
		sleep 0.1
	done
	_st_sidecar "$name" "$gw"
}

# _st_sidecar NAME GATEWAY-ID: the gear in the gateway's network namespace:
# 127.0.0.1:80 (the unsafe answer's address) and the readiness port.
_st_sidecar() {
	_st_logdir "lo-$1"
	"$AG_DOCKER" run -d --pull never "${ST_LABELS[@]}" --network "container:$2" \
		"${ST_HARDEN[@]}" --user 65534:65534 \
		-v "$ST_GEAR:/gear/agtest-net:ro" -v "$ST_LOGS/lo-$1:/logs" \
		"$ST_IMG" /gear/agtest-net serve --log-dir /logs --lifetime "$ST_LIFETIME" \
		--http 127.0.0.1:80 --http "$ST_GW_STUDY:9" >"$T/sidecar.id" 2>"$T/sidecar.err" || true
}

_st_agent_run() {
	local name=$1 script=$2 out summary report watcher sc
	_st_run_prepare
	rm -rf "$ST_W/repo-$name"
	mkdir -p "$ST_W/repo-$name"
	install -m 0755 "$ST_GEAR" "$ST_W/repo-$name/agtest-net"
	install -m 0644 "$ST_POLICY" "$ST_W/policy-$name.json"
	chown -R "$AG_TEST_UID:$AG_TEST_GID" "$ST_W/repo-$name" "$ST_W/policy-$name.json"
	rm -f "$T/run-done" "$T/sidecar.id"
	_st_watch_run "$name" &
	watcher=$!
	ST_RUN_RC=0
	# shellcheck disable=SC2016 # positional parameters of the inner shell
	out=$(timeout 150 runuser -u "$AG_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$ST_W" \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$ST_W" \
		"$AG_BIN" study-egress run c.yaml --repo "repo-$name" --policy "policy-$name.json" \
		--trial-id "$name" --gateway-image "$ST_GW_IMAGE" --resolver "$ST_RESOLVER" \
		--outbound-network "$ST_OUT_NAME" --study-subnet "$ST_STUDY_PREFIX.$ST_STUDY_BASE/27" --json \
		-- sh -c "P=/agentguard-workspace/agtest-net; $script" 2>"$T/run-$name.err" </dev/null) || ST_RUN_RC=$?
	touch "$T/run-done"
	wait "$watcher" 2>/dev/null || true
	for sc in $(_st_run_suffixes); do t_ledger_run "$sc"; done
	sc=$(cat "$T/sidecar.id" 2>/dev/null || true)
	[ -z "$sc" ] || _st_rm "$sc"
	summary=$(printf '%s\n' "$out" | grep -m1 '^{' || true)
	ST_RUN_SUMMARY=$summary
	report=$(jq -r '.report // empty' <<<"$summary" 2>/dev/null || true)
	[ -z "$report" ] || report=$ST_W/$report
	ST_RUN_DIR=${report%/*}
	ST_EVENTS=$ST_RUN_DIR/egress/events.jsonl
	ST_MANIFEST=$ST_RUN_DIR/live-study-egress-manifest.json
	ST_AGENT_OUT=
	if [ -f "$report" ]; then
		ST_AGENT_OUT=$(jq -r '.command_result.stdout // empty' "$report" 2>/dev/null || true)
	fi
	diag "study-egress run $name: exit $ST_RUN_RC; $(jq -r '"total \(.timings.total_ms) ms, preflight \(.timings.preflight_ms) ms, completion \(.study_egress.completion) (\(.study_egress.completion_reason)), failure \(.failure_reason // "none")"' <<<"$summary" 2>/dev/null)"
	if [ -z "$report" ] || [ ! -f "$report" ]; then
		diag "study-egress run $name: exit $ST_RUN_RC, no artifact" "$out" "$(tail -5 "$T/run-$name.err")"
	fi
	# The gateway's outbound address, as the engine gave it.
	local gwout
	gwout=$(jq -r --arg o "$ST_OUT" '.[0].NetworkSettings.Networks|to_entries[]|select(.value.NetworkID==$o)|.value.IPAddress' \
		"$ST_INSPECT/gateway.json" 2>/dev/null || true)
	[ -z "$gwout" ] || ST_GW_OUT=$gwout
	return 0
}

# st_check_manifest DESC STATUS REASON: the run's egress manifest beside
# its artifact states STATUS/REASON, agrees with the run's summary, and
# `study-egress manifest validate --policy` accepts it (which recomputes the
# completion from the events).
st_check_manifest() {
	t_is "$1: the run's summary states the manifest's completion" \
		"$(jq -r '.study_egress|[.completion,.completion_reason,.topology_verified,.cleanup_complete]|map(tostring)|join(" ")' <<<"$ST_RUN_SUMMARY")" \
		"$2 $3 true true"
	t_is "$1: the manifest says $2 ($3)" \
		"$(jq -r '.completion|[.status,.reason]|join(" ")' "$ST_MANIFEST" 2>&1)" "$2 $3"
	t_ok "$1: study-egress manifest validate --policy accepts it" \
		"$AG_BIN" study-egress manifest validate "$ST_MANIFEST" --policy "$ST_POLICY"
}

# st_check_run_gone DESC: the last run left nothing: no container or network
# with its label, no bridge device of its study network.
st_check_run_gone() {
	local sfx left=
	sfx=$(jq -r '.[0].Config.Labels["agentguard.contained-run.id"] // empty' "$ST_INSPECT/gateway.json" 2>/dev/null || true)
	if [ -z "$sfx" ]; then
		t_fail "$1: the run's objects are gone" "the run's gateway was never seen"
		return 0
	fi
	left+=$("$AG_DOCKER" ps -aq --filter "label=agentguard.contained-run.id=$sfx")
	left+=$("$AG_DOCKER" network ls -q --filter "label=agentguard.contained-run.id=$sfx")
	local n
	n=$(cat "$ST_INSPECT/study.id" 2>/dev/null || true)
	[ -z "$n" ] || [ ! -e "/sys/class/net/br-${n:0:12}" ] || left+=" br-${n:0:12}"
	t_is "$1: the run left no container, network or bridge device" "$left" ""
}
