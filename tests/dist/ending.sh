#!/usr/bin/env bash
# A rank that stops taking part ends the job with a message, not a hang:
# one that skips a collective (the ranks disagree at once), one that calls
# none (after NF_DIST_TIMEOUT), one that throws.
# Usage: ending.sh MPIEXEC NUMPROC_FLAG ENDING_PROGRAM
set -uo pipefail
mpiexec=$1 np=$2 program=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0

expect() {  # mode, what the output must say, the most seconds it may take
  local mode=$1 says=$2 limit=$3 start rc
  start=$(date +%s)
  NF_DIST_TIMEOUT=2 timeout 60 "$mpiexec" "$np" 2 "$program" "$mode" >"$out" 2>&1
  rc=$?
  local took=$(($(date +%s) - start))
  if ((rc == 0)) || ((rc == 124)) || ! grep -qF "$says" "$out" || ((took > limit)); then
    echo "FAIL $mode: exit $rc after ${took} s (at most ${limit} s), expected a message: $says"
    cat "$out"
    status=1
  else
    echo "ok $mode: exit $rc after ${took} s: $(grep -F "$says" "$out" | head -1)"
  fi
  if grep -q "every rank went on" "$out"; then
    echo "FAIL $mode: a rank went on past the collective it was left alone in"
    status=1
  fi
}

expect skip "the ranks called different collectives" 20
expect stall "waited 2 s in all_reduce(sum) of (4,) f32" 20
expect throw "rank 1 of 2: an uncaught exception: rank 1's own failure; ending every rank" 20
exit $status
