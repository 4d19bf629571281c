#!/bin/sh
# Test program: distinct bytes on stdout and stderr, exit code 3.
echo to-stdout
echo to-stderr >&2
exit 3
