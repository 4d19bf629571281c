#!/bin/sh
# Test program: floods stderr forever.
exec /usr/bin/yes >&2
