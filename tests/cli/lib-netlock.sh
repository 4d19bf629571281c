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
AG_NET_SLICES=4
t_network_lock() {
	[ -z "${_t_net_lock_fd:-}" ] || return 0
	local base=${AG_TEST_NET_LOCK:-/tmp/ag-study-tests.lock} k fd
	for k in $(seq 0 $((AG_NET_SLICES - 1))) wait; do
		if [ "$k" = wait ]; then
			k=$(($$ % AG_NET_SLICES))
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
