#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Load balancing in haloshift-md (docs/balance.md): with --slab (the lattice in
# the lower half of the box along z) every rank count splits the atoms
# unevenly; --balance moves the cuts so that each rank owns about as many, and
# with --precision fixed the thermo output stays identical to the last digit
# to the run without balancing (the cuts change where atoms live, never what
# they compute).
# Usage: check_balance.sh MD MPIEXEC NUMPROC_FLAG [EXTRA_FLAGS]
set -euo pipefail
md=$1 mpiexec=$2 np=$3 extra=${4:-}
args=(--precision fixed --slab --size 6 --steps 100 --thermo 20 --reneighbor 10)
reference=""
load() { echo "$1" | sed -n 's/^# load: atoms per rank at the end, most \/ mean \([0-9.]*\);.*/\1/p'; }
run() {
  local ranks=$1; shift
  local out thermo
  out=$("$mpiexec" "$np" "$ranks" $extra "$md" "${args[@]}" "$@")
  thermo=$(echo "$out" | grep '^thermo' | grep -v step)
  if [ "$(echo "$thermo" | wc -l)" -ne 6 ]; then echo "FAIL: $ranks ranks $*: expected 6 thermo lines"; echo "$out"; exit 1; fi
  if [ -z "$reference" ]; then reference=$thermo; echo "reference (1 rank):"; echo "$thermo"; return; fi
  if [ "$thermo" != "$reference" ]; then
    echo "FAIL: $ranks ranks $* differs from the reference:"; diff <(echo "$reference") <(echo "$thermo") || true; exit 1
  fi
  last_load=$(load "$out")
  first_after=$(echo "$out" | sed -n 's/^# balance at step 0: .* -> \([0-9.]*\)$/\1/p')
  echo "same thermo: $ranks ranks $*; atoms per rank most / mean at the end $last_load"
  echo "$out" | grep '^# balance' || true
}
run 1
for ranks in 2 4 8; do
  run "$ranks"
  unbalanced=$last_load
  run "$ranks" --balance 20
  balanced=$last_load
  # The slab leaves the upper boxes nearly empty. The lattice planes split evenly on these grids, so the
  # first balancing evens the atoms out exactly; at the end (atoms have moved since the last balancing)
  # no rank may own 10 % more than the mean.
  if ! awk -v u="$unbalanced" -v b="$balanced" -v f="$first_after" 'BEGIN { exit !(u > 1.5 && b <= 1.1 && f <= 1.001) }'; then
    echo "FAIL: $ranks ranks: most / mean atoms $unbalanced without balancing, $first_after after the first"
    echo "balancing and $balanced at the end with"; exit 1
  fi
done
run 4 --balance 10 --strategy singlehop --newton on
run 3 --balance 20 --strategy TtlMultiHop --grid 1x1x3 --max-move 1
echo "balanced, and the thermo identical"
