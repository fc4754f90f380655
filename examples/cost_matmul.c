/* cost_matmul.c - what does a matmul cost on a TPU, alone and sharded?
   Build: cc -std=c99 -O2 examples/cost_matmul.c -o cost_matmul -lpthread -lm  (from the repository root)

   1. The roofline of bf16[B,8192] x bf16[8192,32768] on one v5e chip, below and above the critical batch.
   2. The AllGather a sharded weight needs, on a ring and on an open line (no wraparound).
   3. A whole SPMD program: x[B, D/4] . w[D/4, F] with an all-reduce over 4 chips, built with the C API. */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <stdio.h>

static gs_shape bf16(int64_t r, int64_t c) { return gs_shape_make(GS_BF16, 2, (int64_t[]){r, c}); }

int main(void) {
    gs_ctx *ctx;
    const gs_chip *v5e = gs_chip_find("v5e");
    gs_roofline r;
    gs_cost_comm c;
    double bcrit;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;

    /* 1. one chip */
    gs_cost_critical_batch(ctx, v5e, 2.0, GS_MATH_BF16, &bcrit);
    printf("v5e: C = %.3g FLOP/s, W_hbm = %.3g B/s, critical batch %.0f tokens\n", v5e->flops_bf16, v5e->hbm_bw, bcrit);
    for (int64_t B = 64; B <= 1024; B *= 4) {
        gs_cost_matmul(ctx, v5e, B, 8192, 32768, 2, 2, 2, GS_MATH_BF16, &r);
        printf("  B = %4lld: T_math %7.1f us, T_hbm %7.1f us, intensity %5.0f -> %s-bound\n", (long long)B,
               r.t_math * 1e6, r.t_comms * 1e6, r.intensity, gs_bound_name(r.bound));
    }

    /* 2. gathering a bf16[8192,32768] weight sharded 4 ways */
    double V = 8192.0 * 32768 * 2;
    gs_cost_axis ring = {4, GS_RING_BIDIRECTIONAL}, line = {4, GS_RING_OPEN_LINE};
    gs_cost_collective(ctx, v5e, GS_COLLECTIVE_ALL_GATHER, V, 1, &ring, &c);
    printf("AllGather of %.3g MB over 4 chips: ring %.0f us", V / 1e6, c.seconds * 1e6);
    gs_cost_collective(ctx, v5e, GS_COLLECTIVE_ALL_GATHER, V, 1, &line, &c);
    printf(", open line %.0f us (v5e wraps only axes of 16)\n", c.seconds * 1e6);

    /* 3. an SPMD program for 4 partitions: contracting dim sharded, partial sums all-reduced */
    gs_graph *g = gs_graph_new(ctx, "sharded_matmul");
    gs_value *x = gs_parameter(g, 0, bf16(512, 2048), "x");
    gs_value *w = gs_parameter(g, 1, bf16(2048, 32768), "w");
    gs_dot_dims dd = {.n_contract = 1, .lhs_contract = {1}, .rhs_contract = {0}};
    gs_collective_desc all = {0};   /* replica_groups={}: all 4 partitions */
    gs_graph_set_num_partitions(g, 4);
    gs_graph_set_root(g, gs_all_reduce(g, gs_dot(g, x, w, &dd), GS_REDUCE_SUM, &all));

    gs_topology *t;
    gs_cost_report *rep;
    gs_topology_desc td = {.chip = v5e, .mesh_rank = 1, .mesh = {4}};
    if (gs_topology_create(ctx, &td, &t) != GS_OK || gs_cost_program(g, t, &rep) != GS_OK) {
        fprintf(stderr, "%s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 1;
    }
    fputs(gs_cost_report_text(rep), stdout);
    gs_cost_totals tot = gs_cost_report_totals(rep);
    printf("=> %.0f us per step if nothing overlaps, %.0f us at best\n", tot.seconds_serial * 1e6,
           tot.seconds_overlapped * 1e6);
    gs_ctx_destroy(ctx);
    return 0;
}
