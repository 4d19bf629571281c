#!/bin/sh
# Test program for tests/unit/test_proc.c: ignores SIGTERM (the ignored
# disposition is inherited by sleep), so only SIGKILL ends it.
trap '' TERM
echo started
/bin/sleep 100
echo never
