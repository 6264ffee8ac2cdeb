#!/bin/sh
# fails-in-time.sh SECONDS LOG CMD...: runs CMD under `timeout SECONDS` with
# its output in LOG, and succeeds when CMD failed by itself: an exit status
# other than 0 and timeout's 124 (a job that hangs until the timeout fails
# the check). The status is appended to LOG.
secs=$1 log=$2
shift 2
timeout "$secs" "$@" > "$log" 2>&1
status=$?
echo "fails-in-time: exit $status" >> "$log"
[ "$status" -ne 0 ] && [ "$status" -ne 124 ]
