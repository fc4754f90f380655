/* bench_cost.c - the shape of GShard's Figure 9 from the cost model: AllReduce and AllToAll time against the
   number of partitions D on the TPU v3 2-D torus, with 8 MB and 32 MB per partition, and the exponents of a
   least-squares fit of log(time) on log(D). The paper measured AllReduce ~ O(1) and AllToAll ~ O(sqrt(D)).

   D counts TPU v3 cores, as the paper does; a v3 chip holds two, so D partitions are D/2 chips on a torus
   with wraparound on both axes (D = 2048 is a full 32x32 pod). AllReduce: the two cores of a chip add their
   partial sums first and the chips all-reduce V_p each. AllToAll: each chip sends both cores' payloads,
   2 V_p. On-chip traffic between the two cores is not modelled.

   Build and run: make bench (or cc -std=c99 -O2 -I. bench/bench_cost.c -o bench_cost -lpthread -lm). */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPOINTS 8 /* D = 16 .. 2048 */

static double fig9(gs_ctx *ctx, gs_collective_kind kind, int64_t D, double Vp, int64_t *rows_out) {
    int64_t chips = D / 2, rows = 1, k, *ids;
    gs_topology_desc d;
    gs_topology *t = NULL;
    gs_cost_comm c;
    double V;
    while (rows * rows * 4 <= chips) rows *= 2; /* near-square: 8 -> 2x4, 16 -> 4x4, 32 -> 4x8, ... */
    *rows_out = rows;
    memset(&d, 0, sizeof d);
    d.chip = gs_chip_find("v3");
    d.mesh_rank = 2;
    d.mesh[0] = rows;
    d.mesh[1] = chips / rows;
    d.wrap = GS_WRAP_ALL;
    if (gs_topology_create(ctx, &d, &t) != GS_OK) return -1.0;
    ids = (int64_t *)malloc(sizeof(int64_t) * (size_t)chips);
    if (!ids) return -1.0;
    for (k = 0; k < chips; k++) ids[k] = k;
    V = kind == GS_COLLECTIVE_ALL_REDUCE ? Vp : (double)chips * 2.0 * Vp;
    if (gs_topology_collective(ctx, t, kind, V, 1, chips, ids, &c) != GS_OK) c.seconds = -1.0;
    free(ids);
    return c.seconds;
}

static double slope(const double *x, const double *y, int n) {
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    int i;
    for (i = 0; i < n; i++) {
        mx += log(x[i]) / n;
        my += log(y[i]) / n;
    }
    for (i = 0; i < n; i++) {
        sxy += (log(x[i]) - mx) * (log(y[i]) - my);
        sxx += (log(x[i]) - mx) * (log(x[i]) - mx);
    }
    return sxy / sxx;
}

int main(void) {
    gs_ctx *ctx = NULL;
    double Ds[NPOINTS], t[4][NPOINTS];
    static const double Vp[2] = {8e6, 32e6};
    int i, s;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    printf("GShard Figure 9 from the cost model: TPU v3 (W_uni 1e11 B/s per link, 1 us per hop), 2-D torus\n");
    printf("%6s %6s %7s | %12s %12s | %12s %12s\n", "D", "chips", "torus", "AR 8MB us", "AR 32MB us", "A2A 8MB us",
           "A2A 32MB us");
    for (i = 0; i < NPOINTS; i++) {
        int64_t D = (int64_t)16 << i, rows = 1;
        char torus[32];
        Ds[i] = (double)D;
        for (s = 0; s < 2; s++) {
            t[s][i] = fig9(ctx, GS_COLLECTIVE_ALL_REDUCE, D, Vp[s], &rows);
            t[2 + s][i] = fig9(ctx, GS_COLLECTIVE_ALL_TO_ALL, D, Vp[s], &rows);
            if (t[s][i] <= 0.0 || t[2 + s][i] <= 0.0) {
                fprintf(stderr, "bench_cost: %s\n", gs_ctx_error_msg(ctx));
                gs_ctx_destroy(ctx);
                return 1;
            }
        }
        snprintf(torus, sizeof torus, "%lldx%lld", (long long)rows, (long long)(D / 2 / rows));
        printf("%6lld %6lld %7s | %12.1f %12.1f | %12.1f %12.1f\n", (long long)D, (long long)(D / 2), torus,
               t[0][i] * 1e6, t[1][i] * 1e6, t[2][i] * 1e6, t[3][i] * 1e6);
    }
    printf("ratio D=2048 / D=16:        AR %5.2f %5.2f | A2A %5.2f %5.2f   (sqrt(128) = %.2f)\n",
           t[0][NPOINTS - 1] / t[0][0], t[1][NPOINTS - 1] / t[1][0], t[2][NPOINTS - 1] / t[2][0],
           t[3][NPOINTS - 1] / t[3][0], sqrt(128.0));
    printf("fitted exponent of D:       AR %5.2f %5.2f | A2A %5.2f %5.2f   (paper: ~0 and ~0.5)\n",
           slope(Ds, t[0], NPOINTS), slope(Ds, t[1], NPOINTS), slope(Ds, t[2], NPOINTS), slope(Ds, t[3], NPOINTS));
    gs_ctx_destroy(ctx);
    return 0;
}
