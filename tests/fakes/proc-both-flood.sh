#!/bin/sh
# Test program: writes $1 bytes to stdout and $1 bytes to stderr at the same
# time (a reader that waits on one pipe while the other fills would hang).
/usr/bin/yes err | /usr/bin/head -c "$1" >&2 &
/usr/bin/yes out | /usr/bin/head -c "$1"
wait
