#!/usr/bin/env bash
# run_mpi_baseline.sh - Open MPI next to gshard's collective engine, on the same D and sizes.
#   bash bench/run_mpi_baseline.sh [--quick] [bench_collectives options...]
# 1. Finds mpicc/mpirun; when they are missing and apt-get can be used (root or password-less sudo), installs
#    Debian's openmpi-bin and libopenmpi-dev. Without MPI it runs bench_collectives alone.
# 2. Builds bench/mpi_baseline.c with mpicc and runs it for D = 2, 4, 8, LAUNCHES times each (default 5):
#    Open MPI's launches are bimodal on this kind of machine (some come up much slower), so the best launch
#    per (op, D, size) is kept, in build/bench/mpi_baseline.csv.
# 3. Runs build/bench/bench_collectives --mpi build/bench/mpi_baseline.csv with the remaining options.
# Never part of CI: benchmarks print numbers and ratios, they do not pass or fail on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=""
ARGS=()
for a in "$@"; do
    if [ "$a" = "--quick" ]; then QUICK="--quick"; fi
    ARGS+=("$a")
done
LAUNCHES=${LAUNCHES:-5}
DEVICES=${DEVICES:-"2 4 8"}

make -s build/bench/bench_collectives

if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    SUDO=none
    if command -v apt-get >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
    fi
    if [ "$SUDO" != none ]; then
        echo "run_mpi_baseline: installing Debian's openmpi-bin libopenmpi-dev" >&2
        $SUDO apt-get install -y openmpi-bin libopenmpi-dev >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y openmpi-bin libopenmpi-dev >/dev/null; } || true
    fi
fi
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    echo "run_mpi_baseline: no mpicc/mpirun (apt-get install openmpi-bin libopenmpi-dev); gshard's numbers only" >&2
    exec ./build/bench/bench_collectives ${ARGS[@]+"${ARGS[@]}"}
fi

mkdir -p build/bench
mpicc -O3 -march=native bench/mpi_baseline.c -o build/bench/mpi_baseline
RAW=build/bench/mpi_baseline.raw
OUT=build/bench/mpi_baseline.csv
: >"$RAW"
# running as root needs Open MPI's explicit consent; more ranks than cores needs --oversubscribe
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for D in $DEVICES; do
    for l in $(seq 1 "$LAUNCHES"); do
        echo "run_mpi_baseline: mpirun -np $D (launch $l of $LAUNCHES)" >&2
        mpirun --oversubscribe --bind-to none -np "$D" ./build/bench/mpi_baseline $QUICK >>"$RAW" || \
            echo "run_mpi_baseline: launch failed (ignored)" >&2
    done
done
# best launch per (op, D, size)
awk -F, 'NF == 4 { k = $1 "," $2 "," $3; if (!(k in best) || $4 + 0 < best[k] + 0) best[k] = $4 }
         END { for (k in best) print k "," best[k] }' "$RAW" | sort -t, -k1,1 -k2,2n -k3,3n >"$OUT"
echo "run_mpi_baseline: $(wc -l <"$OUT") results in $OUT" >&2
exec ./build/bench/bench_collectives --mpi "$OUT" ${ARGS[@]+"${ARGS[@]}"}
