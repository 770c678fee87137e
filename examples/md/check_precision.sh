#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# haloshift-md in double precision (the default) against --precision fixed:
# both start from the same atoms and velocities, so step 0 prints the same
# thermo line to the last printed digit, and after 100 steps temperature,
# potential energy per atom and pressure still agree within 1e-6 relative
# (measured: about 1e-9 or less; the two trajectories part only by rounding).
# On 1 and 2 ranks, with and without Newton's third law.
# Usage: check_precision.sh MD MPIEXEC NUMPROC_FLAG [EXTRA_FLAGS]
set -euo pipefail
md=$1 mpiexec=$2 np=$3 extra=${4:-}
args=(--size 6 --steps 100 --thermo 10)
compare() {
  local ranks=$1 newton=$2
  local fixed double
  fixed=$("$mpiexec" "$np" "$ranks" $extra "$md" "${args[@]}" --newton "$newton" --precision fixed | grep '^thermo' | grep -v step)
  double=$("$mpiexec" "$np" "$ranks" $extra "$md" "${args[@]}" --newton "$newton" --precision double | grep '^thermo' | grep -v step)
  echo "$ranks ranks, newton $newton:"
  paste <(echo "$fixed") <(echo "$double") | awk -v what="$ranks ranks, newton $newton" '
    function rel(a, b) { d = a - b; if (d < 0) d = -d; if (a < 0) a = -a; return a > 0 ? d / a : d }
    {
      n++
      # $1..$5: fixed (thermo step temp pe press), $6..$10: double
      if ($2 != $7) { print "FAIL: " what ": steps differ: " $2 " and " $7; bad = 1; exit }
      printf "  step %4d  fixed %s %s %s  double %s %s %s  relative %.1e %.1e %.1e\n", $2, $3, $4, $5, $8, $9, $10,
             rel($3, $8), rel($4, $9), rel($5, $10)
      if ($2 == 0 && ($3 != $8 || $4 != $9 || $5 != $10)) { print "FAIL: " what ": step 0 differs"; bad = 1 }
      if ($2 == 100) {
        last = 1
        if (rel($3, $8) > 1e-6 || rel($4, $9) > 1e-6 || rel($5, $10) > 1e-6) {
          print "FAIL: " what ": step 100 differs by more than 1e-6 relative"; bad = 1
        }
      }
    }
    END {
      if (bad) exit 1
      if (n != 11 || !last) { print "FAIL: " what ": expected 11 thermo lines up to step 100, got " n; exit 1 }
    }'
}
compare 1 on
compare 2 on
compare 2 off
echo "double and fixed precision agree"
