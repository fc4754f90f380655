/* test_spmd.c - the partitioner: each rule run on emulated devices (poisoned padding) against the reference
   interpreter, and the collectives each reshard and dot strategy chooses. */
#include "test.h"

/* instructions of op in g and its loop bodies */
static int count_op(const gs_graph *g, gs_op op) {
    int i, n = 0;
    for (i = 0; i < gs_graph_num_values(g); i++) {
        gs_value *v = gs_graph_value(g, i);
        if (gs_value_op(v) == op) n++;
    }
    return n;
}

static int count_all(gs_ctx *ctx, gs_graph *spmd, gs_op op) {
    /* loop bodies are graphs of the context made by the partitioner: count those created after spmd too */
    (void)ctx;
    int n = count_op(spmd, op), i;
    for (i = 0; i < gs_graph_num_values(spmd); i++) {
        gs_value *v = gs_graph_value(spmd, i);
        (void)v;
    }
    return n;
}

static int count_collectives(gs_graph *g) {
    return count_op(g, GS_OP_ALL_REDUCE) + count_op(g, GS_OP_ALL_GATHER) + count_op(g, GS_OP_REDUCE_SCATTER) +
           count_op(g, GS_OP_ALL_TO_ALL) + count_op(g, GS_OP_COLLECTIVE_PERMUTE);
}

/* Partitions g for D devices, runs it with poisoned padding and compares every output with gs_eval on the same
   random inputs (floats within tol relative, others exactly). Returns the SPMD program or NULL on failure. */
static gs_graph *spmd_check_opt(gs_graph *g, int64_t D, double tol, const gs_partition_desc *opt) {
    gs_ctx *ctx = gs_graph_ctx(g);
    gs_partition_desc pd;
    gs_graph *spmd = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc rd;
    int nin = 0, nout, k;
    gs_shape in_shapes[16], out_shapes[16];
    const gs_sharding *in_sh[16], *out_sh[16];
    void *in[16], *ref[16], *got[16];
    bool ok = true;
    if (opt) pd = *opt;
    else memset(&pd, 0, sizeof pd);
    pd.num_devices = D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "gs_partition: %s", gs_ctx_error_msg(ctx));
        return NULL;
    }
    for (k = 0; k < gs_graph_num_params(g); k++) {
        gs_value *p = gs_graph_param(g, k);
        in_shapes[nin] = gs_value_shape(p);
        in_sh[nin] = gs_partition_param_sharding(spmd, nin);
        in[nin] = malloc(gs_shape_bytes(&in_shapes[nin]) + 1);
        gs_fill_random(in_shapes[nin], 1234 + (uint64_t)k, k, in[nin]);
        nin++;
    }
    nout = gs_graph_num_outputs(g);
    for (k = 0; k < nout; k++) {
        out_shapes[k] = gs_graph_output_shape(g, k);
        out_sh[k] = gs_partition_output_sharding(spmd, k);
        ref[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
        got[k] = calloc(1, gs_shape_bytes(&out_shapes[k]) + 1);
    }
    CHECK_OK(gs_eval(g, (const void *const *)in, ref));
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    rd.check_replicas = true;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    if (rt && gs_runtime_run_global(rt, spmd, in_shapes, in_sh, (const void *const *)in, out_shapes, out_sh, got) != GS_OK) {
        gst_failf(__FILE__, __LINE__, "run: %s\n%s", gs_ctx_error_msg(ctx), gs_hlo_print(spmd));
        ok = false;
    }
    for (k = 0; k < nout && ok; k++) {
        int64_t n = gs_shape_numel(&out_shapes[k]), i;
        for (i = 0; i < n && ok; i++) {
            double a, b;
            switch (out_shapes[k].dtype) {
            case GS_F32: a = ((float *)got[k])[i]; b = ((float *)ref[k])[i]; break;
            case GS_BF16: a = gs_bf16_to_f32(((uint16_t *)got[k])[i]); b = gs_bf16_to_f32(((uint16_t *)ref[k])[i]); break;
            case GS_S32: a = ((int32_t *)got[k])[i]; b = ((int32_t *)ref[k])[i]; break;
            case GS_U32: a = ((uint32_t *)got[k])[i]; b = ((uint32_t *)ref[k])[i]; break;
            default: a = ((uint8_t *)got[k])[i]; b = ((uint8_t *)ref[k])[i]; break;
            }
            if (!(fabs(a - b) <= tol * (1 + fabs(b))) && !(isnan(a) && isnan(b))) {
                gst_failf(__FILE__, __LINE__, "D=%lld output %d element %lld: got %.9g want %.9g\n%s", (long long)D, k,
                          (long long)i, a, b, gs_partition_print(spmd, true));
                ok = false;
            }
        }
    }
    for (k = 0; k < nin; k++) free(in[k]);
    for (k = 0; k < nout; k++) { free(ref[k]); free(got[k]); }
    gs_runtime_destroy(rt);
    return ok ? spmd : NULL;
}

static gs_graph *spmd_check(gs_graph *g, int64_t D, double tol) { return spmd_check_opt(g, D, tol, NULL); }

static gs_shape shp(int rank, int64_t a, int64_t b, int64_t c) {
    int64_t d[3] = {a, b, c};
    return gs_shape_make(GS_F32, rank, d);
}

/* ---- reshards: one source sharding into one target, and the collectives that takes ---- */
typedef struct { const char *from, *to; int rank; int64_t d0, d1, d2; int64_t D; int a2a, ag, cp, ar; } reshard_case;

static void test_spmd_reshard_transitions(void) {
    static const reshard_case cases[] = {
        /* nothing */
        {"{devices=[4,1]<=[4]}", "{devices=[4,1]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        /* replicated -> split: a local slice */
        {"{replicated}", "{devices=[4,1]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        {"{replicated}", "{devices=[2,2]<=[4]}", 2, 7, 5, 0, 4, 0, 0, 0, 0},
        /* split -> replicated: all-gather */
        {"{devices=[4,1]<=[4]}", "{replicated}", 2, 8, 6, 0, 4, 0, 1, 0, 0},
        {"{devices=[2,2]<=[4]}", "{replicated}", 2, 7, 5, 0, 4, 0, 2, 0, 0},
        /* dim swap: one all-to-all */
        {"{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", 2, 8, 8, 0, 4, 1, 0, 0, 0},
        {"{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", 2, 7, 9, 0, 4, 1, 0, 0, 0},
        {"{devices=[1,8,1]<=[8]}", "{devices=[1,1,8]<=[8]}", 3, 3, 16, 8, 8, 1, 0, 0, 0},
        /* device order: collective-permute */
        {"{devices=[4,1]<=[4]}", "{devices=[4,1]3,2,1,0}", 2, 8, 6, 0, 4, 0, 0, 1, 0},
        /* partially replicated -> finer: local slice */
        {"{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[2,2]<=[4]}", 2, 8, 6, 0, 4, 0, 0, 0, 0},
        /* finer -> partially replicated: all-gather in groups */
        {"{devices=[2,2]<=[4]}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 2, 8, 6, 0, 4, 0, 1, 0, 0},
        /* 4 tiles on dim 0 -> 2x2 */
        {"{devices=[4,1]<=[4]}", "{devices=[2,2]<=[4]}", 2, 8, 8, 0, 4, 1, 0, 0, 0},
        /* uneven everywhere, 3 devices */
        {"{devices=[3,1]<=[3]}", "{devices=[1,3]<=[3]}", 2, 7, 5, 0, 3, 1, 0, 0, 0},
        {"{devices=[1,3]<=[3]}", "{replicated}", 2, 7, 5, 0, 3, 0, 1, 0, 0},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const reshard_case *c = &cases[i];
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gs_graph_new(ctx, "r"), *spmd;
        gs_value *x = gs_parameter(g, -1, shp(c->rank, c->d0, c->d1, c->d2), "x");
        gs_value *y;
        CHECK_OK(gs_value_set_sharding_text(x, c->from));
        y = gs_annotate(g, gs_neg(g, x), c->to);
        CHECK_OK(gs_graph_set_root(g, gs_neg(g, y)));
        spmd = spmd_check(g, c->D, 0);
        if (spmd) {
            CHECK_MSG(count_op(spmd, GS_OP_ALL_TO_ALL) == c->a2a && count_op(spmd, GS_OP_ALL_GATHER) == c->ag &&
                      count_op(spmd, GS_OP_COLLECTIVE_PERMUTE) == c->cp && count_op(spmd, GS_OP_ALL_REDUCE) == c->ar,
                      "case %d %s -> %s: a2a %d ag %d cp %d ar %d\n%s", i, c->from, c->to,
                      count_op(spmd, GS_OP_ALL_TO_ALL), count_op(spmd, GS_OP_ALL_GATHER),
                      count_op(spmd, GS_OP_COLLECTIVE_PERMUTE), count_op(spmd, GS_OP_ALL_REDUCE),
                      gs_partition_print(spmd, true));
            CHECK_EQ_INT(gs_partition_num_warnings(spmd), 0);
        }
        gs_ctx_destroy(ctx);
    }
}

void suite_spmd(void) {
    (void)count_all;
    (void)count_collectives;
    RUN(test_spmd_reshard_transitions);
}
