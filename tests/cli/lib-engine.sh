# shellcheck shell=bash
# tests/cli/lib-engine.sh: the FAULT INJECTOR (tests/fakes/fake-engine), an
# Engine API stand-in on a unix socket this test creates. It forwards to the
# real engine except where a rule injects a fault. Source after lib-test.sh.

# fake_engine_start DIR [USER]: the stand-in on DIR/docker.sock (DIR is
# created root-owned 0755, the socket root:docker 0660). With USER, the
# stand-in runs as that user (its socket is then moved into DIR and handed to
# root, so only the peer check can tell). Sets FE_DIR, FE_SOCK, FE_RULES.
fake_engine_start() {
	FE_DIR=$1
	local user=${2:-} bind_dir
	mkdir -p -m 755 "$FE_DIR"
	FE_SOCK=$FE_DIR/docker.sock
	FE_RULES=$FE_DIR/rules.json
	echo '[]' >"$FE_RULES"
	chmod 644 "$FE_RULES"
	bind_dir=$FE_DIR
	# A stand-in started again on the same DIR (t0310) must not be taken as
	# ready by the old one's socket: the new one unlinks and rebinds it
	# whenever Python gets going, which under load was after the test had
	# moved on (the next request found no socket at all).
	rm -f "$FE_SOCK"
	if [ -n "$user" ]; then
		bind_dir=$FE_DIR/bind
		mkdir -m 755 "$bind_dir"
		chown "$user" "$bind_dir"
		: >"$FE_RULES.log"
		chown "$user" "$FE_RULES.log"
		runuser -u "$user" -- python3 "$AG_ROOT/tests/fakes/fake-engine" \
			"$bind_dir/docker.sock" "$FE_RULES" &
	else
		python3 "$AG_ROOT/tests/fakes/fake-engine" "$bind_dir/docker.sock" "$FE_RULES" &
	fi
	t_cleanup kill $!
	for _ in $(seq 1 100); do
		[ -S "$bind_dir/docker.sock" ] && break
		sleep 0.05
	done
	if [ -n "$user" ]; then
		mv "$bind_dir/docker.sock" "$FE_SOCK"
		chown root "$FE_SOCK"
	fi
	chgrp docker "$FE_SOCK"
}

# fault JSON-RULES: the rules in force from the next request on.
fault() { printf '%s\n' "$1" >"$FE_RULES"; : >"$FE_RULES.log"; }

# named_gone PREFIX: every container whose create through the injector
# named it PREFIX<hex> (from the request log) is absent.
named_gone() {
	local n
	for n in $(grep -o "name=$1[0-9a-f]*" "$FE_RULES.log" | cut -d= -f2); do
		[ -z "$(docker ps -aq --filter "name=^$n\$")" ] || return 1
	done
	return 0
}

# probes_gone: every probe container the preflights named is absent.
probes_gone() { named_gone agentguard-preflight-; }
