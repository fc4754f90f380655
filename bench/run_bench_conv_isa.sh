#!/usr/bin/env bash
# run_bench_conv_isa.sh - the interpreter's convolution at plain -O2 (the GEMM kernel chooses its instruction
# set at run time) against the same file built -O2 -march=native, in one run: bench/bench_conv.c compiled
# twice, the two binaries run alternately ROUNDS times (default 3), the best time of each case kept, and
# per case the ratio of speeds plain / native (target >= 0.9).
#   bash bench/run_bench_conv_isa.sh [--quick]
# Never part of CI: benchmarks print numbers and ratios, they do not pass or fail on speed.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}
ROUNDS=${ROUNDS:-3}
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK=quick
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$CC -std=c99 -O2 -I. bench/bench_conv.c -o "$out/plain" -lpthread -lm
$CC -std=c99 -O2 -march=native -I. bench/bench_conv.c -o "$out/native" -lpthread -lm
for r in $(seq "$ROUNDS"); do
    "$out/plain" $QUICK >"$out/p$r" || { cat "$out/p$r"; exit 1; }
    "$out/native" $QUICK >"$out/n$r" || { cat "$out/n$r"; exit 1; }
done
# a case line ends: interp-ms GFLOP/s naive-ms speedup max-err ok
cat "$out"/p* | awk '$NF == "ok" { l = $1; for (i = 2; i <= NF - 6; i++) l = l " " $i; print "p\t" l "\t" $(NF - 5) }' >"$out/all"
cat "$out"/n* | awk '$NF == "ok" { l = $1; for (i = 2; i <= NF - 6; i++) l = l " " $i; print "n\t" l "\t" $(NF - 5) }' >>"$out/all"
echo "convolution through gs_eval, best of $ROUNDS alternated runs, ms (plain -O2 / -O2 -march=native)"
awk -F'\t' '
    { if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 }
      k = $1 SUBSEP $2; if (!(k in best) || $3 + 0 < best[k]) best[k] = $3 + 0 }
    END {
        printf "%-32s %10s %10s %10s\n", "case", "plain ms", "native ms", "plain/nat"
        lg = 0; worst = 1e9
        for (i = 0; i < n; i++) {
            c = order[i]; p = best["p" SUBSEP c]; q = best["n" SUBSEP c]; r = q / p
            printf "%-32s %10.2f %10.2f %10.2f\n", c, p, q, r
            lg += log(r); if (r < worst) worst = r
        }
        if (n) printf "speed plain / native: geometric mean %.2f, worst %.2f (target >= 0.9)\n", exp(lg / n), worst
    }' "$out/all"
