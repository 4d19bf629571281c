# shellcheck shell=bash
# tests/cli/lib-netlock.sh: sourced by lib-test.sh (and by tests/cli/t1070's
# stand-in files, which test it).
#
# t_network_lock: the test files that create Docker networks pick their
# subnets from 198.51.100.0/24 and 203.0.113.0/24, which are cut into four
# slices (a /26 of each: 64*K .. 64*K+63), each with its own machine-wide
# lock. A file takes the first free slice lock (else waits, at most 20 min,
# for one chosen by its pid), holds it until it exits, and picks every
# subnet inside that slice (AG_NET_SLICE_LO is its first octet). A subnet
# is picked before its network is created, so holding the slice from pick
# to removal means two files (of this suite or of another suite on the same
# engine) never pick the same one; up to four of them run at once.
# tests/cli/lib-study.sh and lib-study-net.sh take it when sourced.
#
# A slice holding an address this machine reaches its package mirrors or
# resolvers at (here deb.debian.org and registry.npmjs.org resolve into
# 203.0.113.0/24) is never used: a test network covering it would route
# that address into a test bridge for every process on the machine, and a
# test downloading packages at the same time (t0910) would fail.
AG_NET_SLICES=4
# t_network_slices: the usable slice numbers, one per line.
t_network_slices() {
	local avoid a k lo o ok
	avoid=$({
		timeout 5 getent ahostsv4 ${AG_TEST_NET_AVOID_HOSTS:-deb.debian.org security.debian.org registry.npmjs.org} 2>/dev/null |
			awk '{print $1}'
		awk '$1 == "nameserver" {print $2}' /etc/resolv.conf 2>/dev/null
	} | sort -u)
	for k in $(seq 0 $((AG_NET_SLICES - 1))); do
		lo=$((k * 64)) ok=1
		for a in $avoid; do
			case $a in
			198.51.100.* | 203.0.113.*)
				o=${a##*.}
				[ "$o" -lt "$lo" ] || [ "$o" -ge $((lo + 64)) ] || ok=0
				;;
			esac
		done
		[ "$ok" = 0 ] || echo "$k"
	done
}
t_network_lock() {
	[ -z "${_t_net_lock_fd:-}" ] || return 0
	local base=${AG_TEST_NET_LOCK:-/tmp/ag-study-tests.lock} k fd
	local -a usable
	mapfile -t usable < <(t_network_slices)
	[ "${#usable[@]}" -gt 0 ] || {
		echo "# every network-test slice holds an address of this machine's mirrors or resolvers" >&2
		exit 1
	}
	for k in "${usable[@]}" wait; do
		if [ "$k" = wait ]; then
			k=${usable[$(($$ % ${#usable[@]}))]}
			exec {fd}>>"$base.$k" && flock -w 1200 "$fd" || {
				echo "# no network-test slice lock was free within 20 minutes" >&2
				exit 1
			}
		else
			exec {fd}>>"$base.$k" || {
				echo "# cannot open the network-test lock" >&2
				exit 1
			}
			flock -n "$fd" || {
				exec {fd}>&-
				continue
			}
		fi
		_t_net_lock_fd=$fd
		# shellcheck disable=SC2034 # read by the file that sourced this
		AG_NET_SLICE_LO=$((k * 64))
		return 0
	done
}
