#!/bin/sh
# Test program: writes exactly $1 bytes of 'y\n' to stdout ($2 = err: stderr), exits 0.
if [ "${2:-}" = err ]; then
	/usr/bin/yes | /usr/bin/head -c "$1" >&2
else
	/usr/bin/yes | /usr/bin/head -c "$1"
fi
exit 0
