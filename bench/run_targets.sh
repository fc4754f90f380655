#!/usr/bin/env bash
# run_targets.sh - every speed target of the distributed runtime and the interpreter's instruction-set choice,
# measured in one run and summed up at the end:
#   the MPI backend against plain Open MPI calls per collective at 2 ranks (bench/run_bench_mpi.sh; target:
#   backend time / Open MPI time <= 1.10 at >= 1 MiB), the interpreter's dot built at plain -O2 against
#   -march=native (>= 0.9) and against OpenBLAS (>= 0.9 at n >= 256) (build/bench/bench_dot), its elementwise and
#   reduction kernels plain against native, and its convolution plain against native (bench/run_bench_conv_isa.sh).
#   bash bench/run_targets.sh [--quick]
# Needs mpicc/mpirun (openmpi-bin libopenmpi-dev); OpenBLAS columns when libopenblas-dev is installed. Never part
# of CI: benchmarks print numbers and ratios, they do not pass or fail on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK="--quick"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
make -s build/bench/bench_dot
bash bench/run_bench_mpi.sh $QUICK | tee "$out/mpi"
echo
build/bench/bench_dot ${QUICK:+quick} | tee "$out/dot"
echo
bash bench/run_bench_conv_isa.sh $QUICK | tee "$out/conv"
echo
echo "== targets (this run)"
awk '$2 ~ /^[0-9]+$/ && $3 == "KiB" && $2 >= 1024 && NF >= 7 {
         if ($7 > w) { w = $7; at = $1 " " $2 " KiB" } }
     END { if (at != "") printf "MPI backend / Open MPI at >= 1 MiB, 2 ranks: worst %.2f (%s; target <= 1.10)\n", w, at
           else print "MPI backend / Open MPI: no rows (was the bench run?)" }' "$out/mpi"
sed -n 's/^  dot, square n >= 256: /dot n >= 256: /p; s/^  elementwise and reductions: /elementwise and reductions: /p' "$out/dot"
sed -n 's/^speed plain \/ native: /convolution plain -O2 \/ -march=native: /p' "$out/conv"
