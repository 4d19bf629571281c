#!/bin/sh
# Test program: leaves a background grandchild holding stdout/stderr, prints
# its pid and exits 0.
/bin/sleep 100 &
echo "$!"
exit 0
