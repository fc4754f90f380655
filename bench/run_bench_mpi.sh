#!/usr/bin/env bash
# run_bench_mpi.sh - the runtime on MPI ranks, in one run: per collective and size the MPI backend against
# plain Open MPI calls and against the thread runtime at 2 ranks (bench/bench_mpi.c), then the MoE example
# (examples/moe_layer.hlo, or FILE) end to end at D = 8 on 1, 2 and 4 ranks against the thread runtime.
#   bash bench/run_bench_mpi.sh [--quick]
#   bash bench/run_bench_mpi.sh --rss     only the peak resident memory of each rank (GNU time's %M) on the MoE
#                                         example and bench/mpi_inputs.hlo (2 x 128 MiB of inputs) at D = 8 on
#                                         4 ranks, without and with --check (GSHARD_MPI_BIN: another gshard-mpi)
# The MoE times are the runtime's own (gs_runtime_stats.seconds, printed by --stats: scatter, run and gather
# on rank 0, without the launch, parsing and partitioning), best of RUNS launches (default 5). Never part of
# CI: benchmarks print numbers and ratios, they do not pass or fail on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK="--quick"
if [ "${1:-}" = "--rss" ]; then
    [ -x /usr/bin/time ] || { echo "run_bench_mpi --rss: needs GNU time (/usr/bin/time; Debian: apt-get install time)" >&2; exit 2; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    make -s build/gshard-mpi
    BIN=${GSHARD_MPI_BIN:-build/gshard-mpi}
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    echo "== peak resident memory per rank (MiB), D = 8 on 4 ranks, $BIN"
    printf "%-24s %-8s %8s %8s %8s %8s\n" program check rank0 rank1 rank2 rank3
    for f in examples/moe_layer.hlo bench/mpi_inputs.hlo; do
        for c in "" --check; do
            rm -rf "$out/o"
            mpirun --oversubscribe --bind-to none -np 4 sh -c \
                '/usr/bin/time -f "rss $OMPI_COMM_WORLD_RANK %M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$out" \
                "$BIN" run "$f" --devices 8 --seed 7 $c --output-dir "$out/o" >/dev/null
            printf "%-24s %-8s" "$(basename "$f")" "${c:-no}"
            for r in 0 1 2 3; do printf " %8.1f" "$(awk '{print $3 / 1024}' "$out/rss.$r")"; done
            echo
        done
    done
    exit 0
fi
RUNS=${RUNS:-5}
FILE=${FILE:-examples/moe_layer.hlo}
command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 ||
    { echo "run_bench_mpi: needs mpicc and mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s build/gshard build/gshard-mpi
mkdir -p build/bench
mpicc -std=c99 -O2 -DGSHARD_MPI -I. bench/bench_mpi.c -o build/bench/bench_mpi -lpthread -lm
echo "== collectives at 2 ranks (one device each): Open MPI, the MPI backend, the thread runtime (2 threads)"
mpirun --oversubscribe --bind-to none -np 2 build/bench/bench_mpi $QUICK

best() {   # best of RUNS: the "s" figure of the --stats line
    local b="" t
    for _ in $(seq 1 "$RUNS"); do
        t=$("$@" --stats 2>/dev/null | sed -n 's/^stats: .*, \([0-9.]*\) s.*/\1/p')
        [ -n "$t" ] || { echo "run_bench_mpi: no stats from: $*" >&2; exit 1; }
        if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
    done
    echo "$b"
}
echo
echo "== $FILE at D = 8, seconds of the run (best of $RUNS), ratio to the thread runtime"
thr=$(best build/gshard run "$FILE" --devices 8 --seed 7)
printf "%-24s %10s %8s\n" "runtime" "seconds" "ratio"
printf "%-24s %10.6f %8.2f\n" "threads (1 process)" "$thr" 1
for np in 1 2 4; do
    t=$(best mpirun --oversubscribe --bind-to none -np "$np" build/gshard-mpi run "$FILE" --devices 8 --seed 7)
    printf "%-24s %10.6f %8.2f\n" "MPI, $np rank(s)" "$t" "$(awk "BEGIN{print $t / $thr}")"
done
