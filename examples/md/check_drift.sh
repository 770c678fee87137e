#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Energy conservation of haloshift-md (velocity Verlet, dt = 0.005, LJ cut at
# 2.5 sigma without shift): over 1000 steps the total energy per atom stays
# within 0.5 % of its value at step 0. A wrong kick, drift or force sign
# breaks this by far more. Both precisions. Usage: check_drift.sh MD MPIEXEC NUMPROC_FLAG [EXTRA_FLAGS]
set -euo pipefail
md=$1 mpiexec=$2 np=$3 extra=${4:-}
for precision in double fixed; do
  echo "precision $precision:"
  out=$("$mpiexec" "$np" 2 $extra "$md" --size 6 --steps 1000 --thermo 100 --newton on --precision "$precision")
  echo "$out"
  echo "$out" | awk '
    /^# LJ melt:/ { n = $4 }
    /^thermo/ && $2 != "step" {
      e = $4 + 1.5 * $3 * (3 * n - 3) / (3 * n)
      if (!started) { e0 = e; started = 1 }
      d = (e - e0) / e0; if (d < 0) d = -d
      if (d > worst) worst = d
      printf "step %5d total energy per atom %.6f (change %.4f %%)\n", $2, e, 100 * d
    }
    END {
      if (!started) { print "FAIL: no thermo output"; exit 1 }
      printf "largest change %.4f %%\n", 100 * worst
      if (worst > 0.005) { print "FAIL: energy drift above 0.5 %"; exit 1 }
    }'
done
