#!/usr/bin/env bash
# stage.sh NAME COMMAND...: runs COMMAND and ends its output with one line naming the stage, how
# it ended and its wall and CPU seconds (make test runs its stages concurrently and prints each
# one's output when it ends; these lines are where its time went).
set -uo pipefail
name=$1; shift
start=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
  times=$(mktemp)
  /usr/bin/time -o "$times" -f '%U user + %S sys CPU s' "$@"
  rc=$?
  cpu=$(tail -n 1 "$times"); rm -f "$times"
else
  "$@"
  rc=$?
  cpu="CPU not measured (no /usr/bin/time)"
fi
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
if [ $rc -eq 0 ]; then verdict=passed; else verdict="FAILED (exit $rc)"; fi
printf '=== stage %s: %s in %.1f s wall, %s\n' "$name" "$verdict" "$wall" "$cpu"
exit $rc
