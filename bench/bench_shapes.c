/* bench_shapes.c - shapes-only runs at scale: the GShard MoE transformer of examples/moe_model.h (G = D groups,
   E = 2D experts) with 2 layers (the MoE example, scaled) and 64 layers, partitioned for D devices and walked
   without data (gs_shapes_run). Prints the partitioner's and the walk's wall time, the process's peak
   resident memory, the per-device peak and the bytes sent. At D = 8 it also runs the full runtime and checks
   that its per-device peak and bytes sent equal the walk's (exit 1 if not).

   Build and run: make bench (or cc -std=c99 -O2 -I. bench/bench_shapes.c -o bench_shapes -lpthread -lm),
   then build/bench/bench_shapes [D ...] (default 8 4096). */
#if !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include "examples/moe_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double max_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;   /* Linux: kilobytes */
}

/* the full runtime on zero inputs: per-device peak and the bytes every device sent, summed */
static int runtime_check(gs_ctx *ctx, gs_graph *spmd, int64_t D, const gs_shapes_report *rep) {
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_runtime_stats st;
    int np = gs_graph_num_params(spmd), no = gs_graph_num_outputs(spmd), k, ok = 1;
    const void **in = (const void **)calloc((size_t)(D * np + 1), sizeof(void *));
    void **out = (void **)calloc((size_t)(D * no + 1), sizeof(void *));
    void **pbuf = (void **)calloc((size_t)np + 1, sizeof(void *));
    double sent_rt = 0.0, sent_sh = 0.0;
    int64_t d;
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    if (!in || !out || !pbuf || gs_runtime_create(ctx, &rd, &rt) != GS_OK) return 0;
    for (k = 0; k < np; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(spmd, k));
        pbuf[k] = calloc(gs_shape_bytes(&s) + 1, 1);
        for (d = 0; d < D; d++) in[d * np + k] = pbuf[k];
    }
    for (d = 0; d < D; d++)
        for (k = 0; k < no; k++) {
            gs_shape s = gs_graph_output_shape(spmd, k);
            out[d * no + k] = malloc(gs_shape_bytes(&s) + 1);
        }
    if (gs_runtime_run(rt, spmd, (const void *const *)in, out) != GS_OK || gs_runtime_get_stats(rt, &st) != GS_OK) {
        fprintf(stderr, "runtime: %s\n", gs_ctx_error_msg(ctx));
        ok = 0;
    } else {
        for (d = 0; d < D; d++) {
            if (st.peak_bytes[d] != gs_shapes_peak_bytes(rep, d)) ok = 0;
            sent_sh += gs_shapes_bytes_sent(rep, d);
        }
        for (k = 0; k < st.n_collectives; k++) sent_rt += (double)st.collectives[k].bytes_sent;
        if (sent_rt != sent_sh) ok = 0;
        printf("  runtime at D=%lld: peak %lld bytes per device, %.0f bytes sent: %s\n", (long long)D,
               (long long)st.peak_bytes[0], sent_rt, ok ? "equal to the shapes-only walk" : "DIFFERENT");
    }
    gs_runtime_destroy(rt);
    for (k = 0; k < np; k++) free(pbuf[k]);
    for (d = 0; d < D * no; d++) free(out[d]);
    free(pbuf);
    free(in);
    free(out);
    return ok;
}

static int bench(int64_t D, int64_t L) {
    gs_ctx *ctx = NULL;
    gs_graph *g, *spmd = NULL;
    moe_stack_config sc;
    gs_partition_desc pd;
    gs_shapes_desc sd;
    gs_shapes_report *rep = NULL;
    double t0, t1, t2, sent = 0.0;
    int64_t d;
    int ok = 1;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 0;
    g = gs_graph_new(ctx, "moe_stack");
    memset(&sc, 0, sizeof sc);
    sc.D = D;
    sc.L = L;
    sc.S = 64;
    sc.M = 64;
    sc.K = 64;
    sc.F = 256;
    sc.H = 128;
    sc.experts_per_device = 2;
    sc.C = 8;
    sc.seed = 1;
    t0 = now();
    if (moe_build_stack(g, &sc) != GS_OK) {
        fprintf(stderr, "build: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 0;
    }
    memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        fprintf(stderr, "partition: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 0;
    }
    t1 = now();
    memset(&sd, 0, sizeof sd);
    sd.num_devices = D;
    if (gs_shapes_run(spmd, &sd, &rep) != GS_OK) {
        fprintf(stderr, "shapes-only: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 0;
    }
    t2 = now();
    for (d = 0; d < D; d++) sent += gs_shapes_bytes_sent(rep, d);
    /* the in-run baseline: the walk's time as a fraction of building and partitioning the same program */
    printf("D=%5lld L=%2lld: %d SPMD instructions; build+partition %.3f s, shapes-only walk %.3f s (%.3f of it), "
           "max RSS %.1f MiB; peak %lld bytes per device at %s, %d collectives, %.4g bytes sent in all\n",
           (long long)D, (long long)L, gs_graph_num_values(spmd), t1 - t0, t2 - t1, t1 > t0 ? (t2 - t1) / (t1 - t0) : 0.0,
           max_rss_mib(),
           (long long)gs_shapes_peak_bytes(rep, 0), gs_value_name(gs_shapes_peak_instruction(rep, 0)),
           gs_shapes_num_collectives(rep), sent);
    if (D <= 16) ok = runtime_check(ctx, spmd, D, rep);
    gs_ctx_destroy(ctx);
    return ok;
}

int main(int argc, char **argv) {
    int64_t Ds[16];
    int n = 0, i, ok = 1;
    for (i = 1; i < argc && n < 16; i++) Ds[n++] = atoll(argv[i]);
    if (n == 0) {
        Ds[n++] = 8;
        Ds[n++] = 4096;
    }
    for (i = 0; i < n; i++) {
        ok &= bench(Ds[i], 2);
        ok &= bench(Ds[i], 64);
    }
    return ok ? 0 : 1;
}
