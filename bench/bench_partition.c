/* bench_partition.c -- time of propagation + partitioning (gs_partition) of a transformer with MoE layers at
 * D = 2, 64 and 2048 devices.
 *
 *   cc -std=c99 -O3 -march=native -I. bench/bench_partition.c -o bench_partition -lpthread -lm
 *
 * The graph is moe_build_stack of examples/moe_model.h: 64 layers, each attention (layer norm, q/k/v
 * projections, scores, softmax, context, output projection, residual) then a feed-forward block, dense on
 * even layers and the GShard MoE layer (top-2 gating with capacity, random routing and the aux loss;
 * dispatch, experts, combine) on odd layers. As in the paper's scaling experiments the shapes grow with D:
 * G = D groups and E = D experts; S, M and the hidden dims are fixed. Annotations: the input split along G,
 * the dense weights replicated, and each MoE layer's own three (inputs along G, wg replicated, dispatched
 * expert inputs along E).
 *
 * Per D, best of 7 runs (argv "quick": 1; the device counts take turns), each on a fresh context and graph
 * built before the clock starts:
 * the time of gs_partition (which propagates first), in wall time and in process CPU time (the machine may
 * be shared: CPU time does not count the moments another program had the core), and on another fresh graph
 * the wall time of gs_propagate alone. Printed: the instruction counts of the source graph and of the SPMD program (which must not
 * depend on D), the times, and max/min of the three gs_partition times. The goal is that they are within
 * 25% of each other (max/min <= 1.25) and under one second each; the exit status is 1 only on an error or when the SPMD
 * instruction counts differ, never because of speed. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include "examples/moe_model.h"
#include <stdlib.h>
#include <time.h>

#define N_DEV 3
#define LAYERS 64

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the process: unlike wall time, it does not count the moments another program had the core */
static double cpu_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static moe_stack_config stack_config(int64_t D) {
    moe_stack_config c;
    memset(&c, 0, sizeof c);
    c.D = D;
    c.L = LAYERS;
    c.S = 64;
    c.M = 256;
    c.K = 256;
    c.F = 1024;
    c.H = 1024;
    c.experts_per_device = 1;
    c.C = 4;
    c.seed = 1;
    return c;
}

/* a fresh context with the stack built for D devices */
static gs_ctx *build(int64_t D, gs_graph **g) {
    moe_stack_config c = stack_config(D);
    gs_ctx *ctx = NULL;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return NULL;
    *g = gs_graph_new(ctx, "moe_transformer");
    if (moe_build_stack(*g, &c) != GS_OK || gs_graph_verify(*g) != GS_OK) {
        fprintf(stderr, "building the graph for D=%lld failed: %s\n", (long long)D, gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static int count_op(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++) n += gs_value_op(gs_graph_value(g, i)) == op;
    return n;
}

int main(int argc, char **argv) {
    const int64_t Ds[N_DEV] = {2, 64, 2048};
    double t_part[N_DEV], t_prop[N_DEV], c_part[N_DEV], tmin = 1e30, tmax = 0, cmin = 1e30, cmax = 0;
    int n_src[N_DEV], n_spmd[N_DEV], n_a2a[N_DEV], n_ag[N_DEV], n_ar[N_DEV], n_warn[N_DEV];
    int reps = 7, r, i, bad = 0;
    if (argc > 1 && strcmp(argv[1], "quick") == 0) reps = 1;
    else if (argc > 1) {
        fprintf(stderr, "usage: %s [quick]\n", argv[0]);
        return 2;
    }
    {
        moe_stack_config c = stack_config(2);
        printf("gs_partition (propagation + partitioning) of a %d-layer transformer with MoE layers on every other layer:\n"
               "G = D groups of S=%d tokens, M=%d, attention K=%d, dense FFN %d, E = D experts of H=%d, capacity C=%d\n"
               "best of %d runs, fresh context and graph each, only the call timed\n\n",
               LAYERS, (int)c.S, (int)c.M, (int)c.K, (int)c.F, (int)c.H, (int)c.C, reps);
    }
    for (i = 0; i < N_DEV; i++) t_part[i] = t_prop[i] = c_part[i] = 1e30;
    /* the device counts take turns, so that a busy moment of the machine does not fall on one of them only */
    for (r = 0; r < reps; r++)
        for (i = 0; i < N_DEV; i++) {
            gs_graph *g, *spmd = NULL;
            gs_partition_desc pd;
            gs_propagate_desc prd;
            gs_result res;
            double t0, t1, c0, c1;
            gs_ctx *ctx = build(Ds[i], &g);
            if (!ctx) return 1;
            memset(&pd, 0, sizeof pd);
            pd.num_devices = Ds[i];
            c0 = cpu_sec();
            t0 = now_sec();
            res = gs_partition(g, &pd, &spmd);
            t1 = now_sec();
            c1 = cpu_sec();
            if (res != GS_OK) {
                fprintf(stderr, "gs_partition at D=%lld failed (%s): %s\n", (long long)Ds[i], gs_result_str(res), gs_ctx_error_msg(ctx));
                gs_ctx_destroy(ctx);
                return 1;
            }
            if (t1 - t0 < t_part[i]) t_part[i] = t1 - t0;
            if (c1 - c0 < c_part[i]) c_part[i] = c1 - c0;
            n_src[i] = gs_graph_num_values(g);
            n_spmd[i] = gs_graph_num_values(spmd);
            n_a2a[i] = count_op(spmd, GS_OP_ALL_TO_ALL);
            n_ag[i] = count_op(spmd, GS_OP_ALL_GATHER);
            n_ar[i] = count_op(spmd, GS_OP_ALL_REDUCE);
            n_warn[i] = gs_partition_num_warnings(spmd);
            gs_ctx_destroy(ctx);
            /* propagation alone, on another fresh graph */
            if (!(ctx = build(Ds[i], &g))) return 1;
            memset(&prd, 0, sizeof prd);
            prd.num_devices = Ds[i];
            t0 = now_sec();
            res = gs_propagate(g, &prd);
            t1 = now_sec();
            if (res != GS_OK) {
                fprintf(stderr, "gs_propagate at D=%lld failed: %s\n", (long long)Ds[i], gs_ctx_error_msg(ctx));
                gs_ctx_destroy(ctx);
                return 1;
            }
            if (t1 - t0 < t_prop[i]) t_prop[i] = t1 - t0;
            gs_ctx_destroy(ctx);
        }
    for (i = 0; i < N_DEV; i++) {
        if (t_part[i] < tmin) tmin = t_part[i];
        if (t_part[i] > tmax) tmax = t_part[i];
        if (c_part[i] < cmin) cmin = c_part[i];
        if (c_part[i] > cmax) cmax = c_part[i];
    }

    printf("%-34s", "");
    for (i = 0; i < N_DEV; i++) printf(" %12s%-5lld", "D=", (long long)Ds[i]);
    printf("\n%-34s", "source instructions");
    for (i = 0; i < N_DEV; i++) printf(" %17d", n_src[i]);
    printf("\n%-34s", "SPMD program instructions");
    for (i = 0; i < N_DEV; i++) printf(" %17d", n_spmd[i]);
    printf("\n%-34s", "  all-to-all / all-gather / all-reduce");
    for (i = 0; i < N_DEV; i++) printf(" %7d /%3d /%3d", n_a2a[i], n_ag[i], n_ar[i]);
    printf("\n%-34s", "  replication warnings");
    for (i = 0; i < N_DEV; i++) printf(" %17d", n_warn[i]);
    printf("\n%-34s", "gs_partition (ms)");
    for (i = 0; i < N_DEV; i++) printf(" %17.1f", 1e3 * t_part[i]);
    printf("\n%-34s", "gs_partition, CPU time (ms)");
    for (i = 0; i < N_DEV; i++) printf(" %17.1f", 1e3 * c_part[i]);
    printf("\n%-34s", "gs_propagate alone (ms)");
    for (i = 0; i < N_DEV; i++) printf(" %17.1f", 1e3 * t_prop[i]);
    printf("\n\nmax/min of the gs_partition times: %.2f (goal: <= 1.25); slowest %.0f ms (goal: < 1000 ms): %s\n",
           tmax / tmin, 1e3 * tmax, tmax / tmin <= 1.25 && tmax < 1.0 ? "met" : "NOT met");
    printf("the same in CPU time: max/min %.2f, slowest %.0f ms: %s\n", cmax / cmin, 1e3 * cmax,
           cmax / cmin <= 1.25 && cmax < 1.0 ? "met" : "NOT met");
    for (i = 1; i < N_DEV; i++)
        if (n_spmd[i] != n_spmd[0]) bad = 1;
    printf("SPMD instruction count independent of D: %s\n", bad ? "NO" : "yes");
    return bad;
}
