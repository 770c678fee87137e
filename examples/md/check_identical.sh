#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The thermo output of haloshift-md --precision fixed must be identical to the
# last digit for every strategy, rank count (1, 2, 4, 8) and with and without
# Newton's third law (double precision, the default, sums in another order on
# each: check_precision.sh compares it with fixed point).
# Usage: check_identical.sh MD MPIEXEC NUMPROC_FLAG [EXTRA_FLAGS]
set -euo pipefail
md=$1 mpiexec=$2 np=$3 extra=${4:-}
args=(--precision fixed --size 6 --steps 200 --thermo 20)
reference=""
run() {
  local ranks=$1; shift
  local out
  out=$("$mpiexec" "$np" "$ranks" $extra "$md" "${args[@]}" "$@" | grep '^thermo' | grep -v step)
  if [ "$(echo "$out" | wc -l)" -ne 11 ]; then echo "FAIL: $ranks ranks $*: expected 11 thermo lines"; echo "$out"; exit 1; fi
  if [ -z "$reference" ]; then reference=$out; echo "reference (1 rank, $*):"; echo "$out"; return; fi
  if [ "$out" != "$reference" ]; then
    echo "FAIL: $ranks ranks $* differs from the reference:"; diff <(echo "$reference") <(echo "$out") || true; exit 1
  fi
  echo "same: $ranks ranks $*"
}
run 1 --strategy shift
for ranks in 2 4 8; do run "$ranks" --strategy shift; done
for strategy in SingleHop TtlMultiHop NeighborAlltoall Auto; do run 4 --strategy "$strategy"; done
for strategy in Shift SingleHop TtlMultiHop; do run 4 --strategy "$strategy" --newton on; done
run 8 --strategy singlehop --newton on
run 2 --strategy TtlMultiHop --newton on --grid 1x2x1
echo "all identical"
