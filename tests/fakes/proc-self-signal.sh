#!/bin/sh
# Test program: dies of the signal named by $1 (default USR1).
kill -s "${1:-USR1}" $$
echo survived
