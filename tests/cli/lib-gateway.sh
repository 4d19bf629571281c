# shellcheck shell=bash
# tests/cli/lib-gateway.sh: loopback gear for the agentguard-gateway tests
# (source after lib-test.sh). Everything listens on 127.0.0.1/127.0.0.2 on
# ports the kernel picked for this test; nothing is sent anywhere else.
#
#   gw_fake NAME MODE ARGS...   start tests/fakes/netcanary.py MODE in the
#                               background ($T/NAME.port, $T/NAME.log), wait
#                               for its port; sets GW_PORT_<NAME>
#   gw_start NAME ARGS...       start the gateway with $T/policy.json and the
#                               fake resolver, events in $T/NAME.jsonl;
#                               sets GW_PID, GW_ADDR (127.0.0.1:PORT); with
#                               GW_FSIZE_BLOCKS=N under `ulimit -f N`
#   gw_curl ARGS...             curl through the gateway (bounded, no proxy env)
#   gw_raw FILE [THEN]          raw bytes to the gateway; prints the answer

GW_BIN=${GW_BIN:-$AG_BUILD/agentguard-gateway}
GW_FAKE=$AG_ROOT/tests/fakes/netcanary.py
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY

_gw_wait_file() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# gw_fake NAME MODE ARGS...: a fake of tests/fakes/netcanary.py; it ends itself after
# 10 minutes (a loaded machine can stretch a file past 2 minutes), else at exit.
gw_fake() {
	local name=$1 mode=$2
	shift 2
	: >"$T/$name.log"
	python3 "$GW_FAKE" "$mode" --port-file "$T/$name.port" --log "$T/$name.log" \
		--lifetime 600 "$@" &
	local pid=$!
	t_cleanup kill "$pid"
	_gw_wait_file "$T/$name.port" || { diag "fake $name did not start"; return 1; }
	printf -v "GW_PORT_$name" '%s' "$(cat "$T/$name.port")"
}

# A free loopback port (the kernel's pick; closed again before use).
gw_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

gw_start() {
	local name=$1
	shift
	local port pre=()
	port=$(gw_free_port)
	# GW_FSIZE_BLOCKS: start the gateway under `ulimit -f` (write failures).
	[ -z "${GW_FSIZE_BLOCKS:-}" ] || pre=(bash -c 'ulimit -f "$0" && exec "$@"' "$GW_FSIZE_BLOCKS")
	"${pre[@]}" "$GW_BIN" --listen-address 127.0.0.1 --listen-port "$port" \
		--resolver "127.0.0.1:$GW_PORT_dns" --policy "$T/policy.json" \
		--events "$T/$name.jsonl" "$@" 2>"$T/$name.err" &
	GW_PID=$!
	t_cleanup kill -9 "$GW_PID"
	GW_ADDR=127.0.0.1:$port
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q listening "$T/$name.err" 2>/dev/null && return 0
		kill -0 "$GW_PID" 2>/dev/null || break
		sleep 0.1
	done
	diag "gateway $name did not start: $(cat "$T/$name.err")"
	return 1
}

gw_curl() {
	curl -sS --max-time 10 --noproxy '' -x "http://$GW_ADDR" "$@"
}

gw_raw() {
	python3 "$GW_FAKE" client --proxy "$GW_ADDR" --send "$1" ${2:+--then "$2"}
}
