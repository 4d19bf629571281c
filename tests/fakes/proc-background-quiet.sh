#!/bin/sh
# Test program: leaves a background grandchild that does NOT hold the pipes,
# prints its pid and exits 0.
/bin/sleep 100 >/dev/null 2>&1 &
echo "$!"
exit 0
