/* test_reducers.c - reducer computations of any form XLA accepts (gs_value_set_reducer): reduce, reduce-window
   and scatter in the reference interpreter, all-reduce and reduce-scatter on emulated devices, the partitioner
   (reduced dims gathered, never combined across devices), the printer, and the errors. The reducers are chosen
   so that the order of application shows: f(a, b) = 2a - b is neither commutative nor associative, and every
   expected value is worked out by hand in the order docs/hlo_text.md states. */
#include "test.h"

#define SUB2 "sub2 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  two = s32[] constant(2)\n" \
             "  m = s32[] multiply(a, two)\n  ROOT r = s32[] subtract(m, b)\n}\n\n"
#define ORBITS "or_bits {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  bx = u32[] bitcast-convert(x)\n" \
               "  by = u32[] bitcast-convert(y)\n  o = u32[] or(bx, by)\n  ROOT r = f32[] bitcast-convert(o)\n}\n\n"

/* spmd, partitioned for D devices, agrees with its source on a lockstep runtime (default tolerances) */
static void check_agrees(gs_ctx *ctx, gs_graph *spmd, int64_t D, const void *const *ins) {
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
    memset(&rd, 0, sizeof rd);
    rd.num_devices = D;
    rd.mode = GS_RUNTIME_LOCKSTEP;
    CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
    memset(&cd, 0, sizeof cd);
    if (rt) {
        CHECK_OK(gs_partition_check(spmd, rt, &cd, ins, &rep));
        CHECK_MSG(rep.ok, "%s", rep.message ? rep.message : "");
        gs_runtime_destroy(rt);
    }
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* reduce and reduce-window: acc = f(acc, x) from init, the elements in row-major order */
static void test_reducer_reduce_and_window(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n" SUB2 ORBITS "ENTRY e {\n"
                                     "  p = f32[2,3] parameter(0)\n  q = s32[4] parameter(1)\n  z = f32[] constant(0)\n"
                                     "  r0 = f32[2] reduce(p, z), dimensions={1}, to_apply=or_bits\n"
                                     "  c = s32[] constant(1)\n"
                                     "  r1 = s32[] reduce(q, c), dimensions={0}, to_apply=sub2\n"
                                     "  w = s32[3] reduce-window(q, c), window={size=2}, to_apply=sub2\n"
                                     "  ROOT t = (f32[2], s32[], s32[3]) tuple(r0, r1, w)\n}\n");
    float p[6] = {1.0f, 2.0f, 0.5f, -1.0f, 0.0f, 3.0f}, r0[2];
    int32_t q[4] = {1, 2, 3, 4}, r1 = 0, w[3];
    const void *ins[2];
    void *outs[3];
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "to_apply=sub2") && strstr(text, "to_apply=or_bits"));
        ins[0] = p;
        ins[1] = q;
        outs[0] = r0;
        outs[1] = &r1;
        outs[2] = w;
        CHECK_OK(gs_eval(g, ins, outs));
        /* bits: 0 | 1.0 (3F800000) | 2.0 (40000000) | 0.5 (3F000000) = 7F800000 (+inf);
           0 | -1.0 (BF800000) | 0 | 3.0 (40400000) = FFC00000 */
        CHECK(bits_of(r0[0]) == 0x7F800000u && bits_of(r0[1]) == 0xFFC00000u);
        /* 1 -> 2*1-1 = 1 -> 2*1-2 = 0 -> 2*0-3 = -3 -> 2*(-3)-4 = -10 */
        CHECK(r1 == -10);
        /* windows (1,2), (2,3), (3,4) from init 1: 2*(2*1-1)-2 = 0, 2*(2*1-2)-3 = -3, 2*(2*1-3)-4 = -6 */
        CHECK(w[0] == 0 && w[1] == -3 && w[2] == -6);
    }
    gs_ctx_destroy(ctx);
}

/* scatter: out[i] = f(out[i], update) with the updates in row-major order of the scatter indices (two updates
   to one element show it) */
static void test_reducer_scatter(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n" SUB2 "ENTRY e {\n"
                                     "  o = s32[3] parameter(0)\n  i = s32[3,1] parameter(1)\n  u = s32[3] parameter(2)\n"
                                     "  ROOT s = s32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0},"
                                     " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sub2\n}\n");
    int32_t o[3] = {10, 20, 30}, ix[3] = {2, 0, 2}, u[3] = {1, 5, 7}, r[3];
    const void *ins[3];
    void *outs[1];
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = o;
        ins[1] = ix;
        ins[2] = u;
        outs[0] = r;
        CHECK_OK(gs_eval(g, ins, outs));
        /* o[2]: 2*30-1 = 59, then 2*59-7 = 111; o[0]: 2*10-5 = 15 */
        CHECK(r[0] == 15 && r[1] == 20 && r[2] == 111);
    }
    gs_ctx_destroy(ctx);
}

/* runs g on D devices (inputs and outputs device-major) */
static bool rd_run(gs_ctx *ctx, gs_graph *g, int64_t D, gs_runtime_mode mode, const void *const *ins, void *const *outs) {
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    gs_result r;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = mode;
    if (!g) return false;
    CHECK_OK(gs_runtime_create(ctx, &desc, &rt));
    if (!rt) return false;
    r = gs_runtime_run(rt, g, ins, outs);
    CHECK_MSG(r == GS_OK, "run on %lld devices: %s", (long long)D, gs_ctx_error_msg(ctx));
    gs_runtime_destroy(rt);
    return r == GS_OK;
}

/* all-reduce and reduce-scatter on 3 devices: acc = f(x_g0, x_g1), then f(acc, x_g2), members in group order;
   every device gets the same bits, in lockstep and threaded runs */
static void test_reducer_collectives(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=3\n\n" SUB2 ORBITS "ENTRY e {\n"
                                     "  x = s32[3] parameter(0)\n  y = f32[2] parameter(1)\n"
                                     "  ar = s32[3] all-reduce(x), channel_id=1, replica_groups={{2,0,1}}, use_global_device_ids=true, to_apply=sub2\n"
                                     "  rs = s32[1] reduce-scatter(x), channel_id=2, replica_groups={{0,1,2}}, use_global_device_ids=true, dimensions={0}, to_apply=sub2\n"
                                     "  ob = f32[2] all-reduce(y), channel_id=3, replica_groups={{0,1,2}}, use_global_device_ids=true, to_apply=or_bits\n"
                                     "  ROOT t = (s32[3], s32[1], f32[2]) tuple(ar, rs, ob)\n}\n");
    int32_t x[3][3] = {{1, 2, 3}, {10, 20, 30}, {100, 200, 300}}, ar[3][3], rs[3][1];
    float y[3][2] = {{1.0f, 0.0f}, {2.0f, -1.0f}, {0.5f, 3.0f}}, ob[3][2];
    const void *ins[6];
    void *outs[9];
    int d, i, m;
    for (d = 0; d < 3; d++) {
        ins[2 * d] = x[d];
        ins[2 * d + 1] = y[d];
        outs[3 * d] = ar[d];
        outs[3 * d + 1] = rs[d];
        outs[3 * d + 2] = ob[d];
    }
    for (m = 0; g && m < 2; m++) {
        memset(ar, 0, sizeof ar);
        if (!rd_run(ctx, g, 3, m ? GS_RUNTIME_THREADED : GS_RUNTIME_LOCKSTEP, ins, outs)) continue;
        for (d = 0; d < 3; d++) {
            /* group {2,0,1}: 2*(2*x2 - x0) - x1 */
            for (i = 0; i < 3; i++) CHECK(ar[d][i] == 2 * (2 * x[2][i] - x[0][i]) - x[1][i]);
            /* block d of 2*(2*x0 - x1) - x2 */
            CHECK(rs[d][0] == 2 * (2 * x[0][d] - x[1][d]) - x[2][d]);
            /* 1.0 | 2.0 | 0.5 = +inf; 0 | -1.0 | 3.0 = FFC00000 */
            CHECK(bits_of(ob[d][0]) == 0x7F800000u && bits_of(ob[d][1]) == 0xFFC00000u);
        }
    }
    gs_ctx_destroy(ctx);
}

/* partitioned: reduce along a split dim gathers that dim (no cross-device combine: a reducer computation has no
   identity, and its order would change), reduce-window replicates, scatter splits the window dim; checked
   against the unpartitioned module on 2 devices */
static void test_reducer_partition(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=2\n\n" SUB2 "ENTRY e {\n"
                                     "  p = s32[4,6] parameter(0), sharding={devices=[1,2]0,1}\n"
                                     "  i = s32[2,1] parameter(1)\n  u = s32[2,6] parameter(2)\n  c = s32[] constant(3)\n"
                                     "  r = s32[4] reduce(p, c), dimensions={1}, to_apply=sub2\n"
                                     "  w = s32[4,5] reduce-window(p, c), window={size=1x2}, to_apply=sub2\n"
                                     "  s = s32[4,6] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0},"
                                     " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sub2\n"
                                     "  ROOT t = (s32[4], s32[4,5], s32[4,6]) tuple(r, w, s)\n}\n");
    gs_graph *spmd = NULL;
    gs_partition_desc pd;
    int32_t p[24], ix[2] = {3, 3}, u[12];
    const void *ins[3];
    int k, n_ar = 0;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    for (k = 0; k < 24; k++) p[k] = k * 7 % 11 - 5;
    for (k = 0; k < 12; k++) u[k] = k - 6;
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 2;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    if (spmd) {
        const char *text = gs_hlo_print(spmd);
        for (k = 0; k < gs_graph_num_values(spmd); k++) n_ar += gs_value_op(gs_graph_value(spmd, k)) == GS_OP_ALL_REDUCE;
        CHECK_EQ_INT(n_ar, 0);
        CHECK(text && strstr(text, "to_apply=sub2"));
        ins[0] = p;
        ins[1] = ix;
        ins[2] = u;
        check_agrees(ctx, spmd, 2, ins);
    }
    gs_ctx_destroy(ctx);
}

/* cost: a combination costs the reducer's computing instructions (sub2: multiply and subtract, 2 per element) */
static void test_reducer_cost(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n" SUB2 "ENTRY e {\n  q = s32[4,6] parameter(0)\n  c = s32[] constant(1)\n"
                                     "  ROOT r = s32[4] reduce(q, c), dimensions={1}, to_apply=sub2\n}\n");
    gs_topology_desc d;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    int i, found = 0;
    memset(&d, 0, sizeof d);
    d.chip = gs_chip_find("v6e");
    d.mesh_rank = 1;
    d.mesh[0] = 1;
    CHECK(d.chip != NULL);
    if (g && d.chip) {
        CHECK_OK(gs_topology_create(ctx, &d, &t));
        if (t) CHECK_OK(gs_cost_program(g, t, &rep));
        for (i = 0; rep && i < gs_cost_report_num_rows(rep); i++) {
            const gs_cost_row *r = gs_cost_report_row(rep, i);
            if (r->value != gs_graph_root(g)) continue;
            CHECK_NEAR(r->flops, 2.0 * 24, 0.0);
            found++;
        }
        CHECK_EQ_INT(found, 1);
    }
    gs_ctx_destroy(ctx);
}

/* ---- variadic reducers that mix their components (gs_value_set_variadic_reducer) ---- */

/* arg-max written so that it is not read as gs_argmax (two compares, one per select): (value, index) kept while
   acc >= x, so a tie keeps the first index; from (-inf, -1) */
#define ARGMAX_GE "amax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n" \
                  "  bi = s32[] parameter(3)\n  c = pred[] compare(a, b), direction=GE\n" \
                  "  c2 = pred[] compare(a, b), direction=GE\n  v = f32[] select(c, a, b)\n" \
                  "  i = s32[] select(c2, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n\n"
/* XLA's scatter combiner add_min_max: (acc0 + min(u0, u1), acc1 + max(u0, u1)) */
#define ADD_MIN_MAX "add_min_max {\n  l0 = f32[] parameter(0)\n  l1 = f32[] parameter(1)\n  r0 = f32[] parameter(2)\n" \
                    "  r1 = f32[] parameter(3)\n  mn = f32[] minimum(r0, r1)\n  mx = f32[] maximum(r0, r1)\n" \
                    "  s0 = f32[] add(l0, mn)\n  s1 = f32[] add(l1, mx)\n  ROOT t = (f32[], f32[]) tuple(s0, s1)\n}\n\n"
/* weighted sum and sum of weights, with instructions nothing uses: (acc0 + x * w, acc1 + w) */
#define WSUM "wsum {\n  a0 = s32[] parameter(0)\n  a1 = s32[] parameter(1)\n  x = s32[] parameter(2)\n" \
             "  w = s32[] parameter(3)\n  dead = s32[] multiply(a0, a1)\n  dead2 = s32[] subtract(dead, x)\n" \
             "  xw = s32[] multiply(x, w)\n  s0 = s32[] add(a0, xw)\n  s1 = s32[] add(a1, w)\n" \
             "  ROOT t = (s32[], s32[]) tuple(s0, s1)\n}\n\n"

/* the naive arg-max of row r of x[R,C]: the first position of the largest value (no NaN in the data) */
static void naive_argmax_row(const float *x, int C, int r, float *best, int32_t *at) {
    int c;
    *best = -INFINITY;
    *at = -1;
    for (c = 0; c < C; c++)
        if (!(*best >= x[r * C + c])) {
            *best = x[r * C + c];
            *at = c;
        }
}

/* reduce, scatter and reduce-window whose k-th result depends on every component: against hand-computed values
   and a naive loop, printed as XLA's variadic form and read back unchanged */
static void test_reducer_variadic_mixing(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n" ARGMAX_GE ADD_MIN_MAX WSUM "ENTRY e {\n"
        "  x = f32[5,7] parameter(0)\n  io = s32[5,7] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  m1 = s32[] constant(-1)\n"
        "  am = (f32[5], s32[5]) reduce(x, io, ninf, m1), dimensions={1}, to_apply=amax\n"
        "  o0 = f32[3] parameter(1)\n  o1 = f32[3] parameter(2)\n  ix = s32[3,1] parameter(3)\n"
        "  u0 = f32[3] parameter(4)\n  u1 = f32[3] parameter(5)\n"
        "  sc = (f32[3], f32[3]) scatter(o0, o1, ix, u0, u1), update_window_dims={}, inserted_window_dims={0},"
        " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_min_max\n"
        "  q = s32[4] parameter(6)\n  w = s32[4] parameter(7)\n  z = s32[] constant(0)\n"
        "  rw = (s32[3], s32[3]) reduce-window(q, w, z, z), window={size=2}, to_apply=wsum\n"
        "  am0 = f32[5] get-tuple-element(am), index=0\n  am1 = s32[5] get-tuple-element(am), index=1\n"
        "  sc0 = f32[3] get-tuple-element(sc), index=0\n  sc1 = f32[3] get-tuple-element(sc), index=1\n"
        "  rw0 = s32[3] get-tuple-element(rw), index=0\n  rw1 = s32[3] get-tuple-element(rw), index=1\n"
        "  ROOT t = (f32[5], s32[5], f32[3], f32[3], s32[3], s32[3]) tuple(am0, am1, sc0, sc1, rw0, rw1)\n}\n");
    float x[35], o0[3] = {10, 20, 30}, o1[3] = {0, 0, 0}, u0[3] = {1, 5, 7}, u1[3] = {4, 2, 3};
    float am0[5], sc0[3], sc1[3], best;
    int32_t ix[3] = {2, 0, 2}, q[4] = {1, 2, 3, 4}, wt[4] = {1, 0, 2, 1}, am1[5], rw0[3], rw1[3], at;
    const void *ins[8];
    void *outs[6];
    int r, k;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    /* few distinct values, so that rows hold ties */
    for (k = 0; k < 35; k++) x[k] = (float)((k * 7 + 3) % 5) - 2.0f;
    {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, ") scatter(o0, o1, ix, u0, u1)") && strstr(text, "to_apply=add_min_max") &&
              strstr(text, ") reduce-window(q, w, z, z)") && strstr(text, "to_apply=amax"));
    }
    ins[0] = x; ins[1] = o0; ins[2] = o1; ins[3] = ix; ins[4] = u0; ins[5] = u1; ins[6] = q; ins[7] = wt;
    outs[0] = am0; outs[1] = am1; outs[2] = sc0; outs[3] = sc1; outs[4] = rw0; outs[5] = rw1;
    CHECK_OK(gs_eval(g, ins, outs));
    for (r = 0; r < 5; r++) {
        naive_argmax_row(x, 7, r, &best, &at);
        CHECK_MSG(am0[r] == best && am1[r] == at, "row %d: (%g, %d), naive (%g, %d)", r, am0[r], am1[r], best, at);
    }
    /* row 0 is 1 -2 0 2 -1 1 -2: the largest, 2, at 3 */
    CHECK(am0[0] == 2.0f && am1[0] == 3);
    /* updates in order: [2]: (30 + min(1,4), 0 + max(1,4)) = (31, 4); [0]: (10 + 2, 0 + 5) = (12, 5);
       [2]: (31 + min(7,3), 4 + max(7,3)) = (34, 11) */
    CHECK(sc0[0] == 12 && sc0[1] == 20 && sc0[2] == 34 && sc1[0] == 5 && sc1[1] == 0 && sc1[2] == 11);
    /* windows (1,2), (2,3), (3,4) of q with weights (1,0), (0,2), (2,1): (1, 1), (6, 2), (10, 3) */
    CHECK(rw0[0] == 1 && rw0[1] == 6 && rw0[2] == 10 && rw1[0] == 1 && rw1[1] == 2 && rw1[2] == 3);
    gs_ctx_destroy(ctx);
}

/* partitioned: the arg-max over a dim split unevenly (7 over 2, with the rows split too) reduces each block, gathers
   the two partial (value, index) pairs and reduces them again, as XLA does: 2 all-gathers (one per component,
   shared by both results); the add_min_max scatter keeps its window dim split (no collective). Checked against the
   unpartitioned module on 4 devices, ties included. */
static void test_reducer_variadic_partition(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=4\n\n" ARGMAX_GE ADD_MIN_MAX "ENTRY e {\n"
        "  x = f32[6,7] parameter(0), sharding={devices=[2,2]<=[4]}\n  io = s32[6,7] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  m1 = s32[] constant(-1)\n"
        "  am = (f32[6], s32[6]) reduce(x, io, ninf, m1), dimensions={1}, to_apply=amax\n"
        "  o0 = f32[2,8] parameter(1), sharding={devices=[1,4]<=[4]}\n  o1 = f32[2,8] parameter(2), sharding={devices=[1,4]<=[4]}\n"
        "  ix = s32[3] parameter(3), sharding={replicated}\n"
        "  u0 = f32[3,8] parameter(4), sharding={devices=[1,4]<=[4]}\n  u1 = f32[3,8] parameter(5), sharding={devices=[1,4]<=[4]}\n"
        "  sc = (f32[2,8], f32[2,8]) scatter(o0, o1, ix, u0, u1), update_window_dims={1}, inserted_window_dims={0},"
        " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_min_max,"
        " sharding={{devices=[1,4]<=[4]}, {devices=[1,4]<=[4]}}\n"
        "  am0 = f32[6] get-tuple-element(am), index=0\n  am1 = s32[6] get-tuple-element(am), index=1\n"
        "  sc0 = f32[2,8] get-tuple-element(sc), index=0\n  sc1 = f32[2,8] get-tuple-element(sc), index=1\n"
        "  ROOT t = (f32[6], s32[6], f32[2,8], f32[2,8]) tuple(am0, am1, sc0, sc1)\n}\n");
    gs_graph *spmd = NULL;
    gs_partition_desc pd;
    float x[42], o0[16], o1[16], u0[24], u1[24];
    int32_t ix[3] = {1, 0, 1};
    const void *ins[6];
    int k, n_ag = 0, n_coll = 0;
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    for (k = 0; k < 42; k++) x[k] = (float)((k * 5 + 1) % 6);   /* each row holds ties across the split */
    for (k = 0; k < 16; k++) o0[k] = o1[k] = (float)(k % 5);
    for (k = 0; k < 24; k++) {
        u0[k] = (float)(k % 7) - 3.0f;
        u1[k] = (float)(k % 4);
    }
    memset(&pd, 0, sizeof pd);
    pd.num_devices = 4;
    CHECK_OK(gs_partition(g, &pd, &spmd));
    if (spmd) {
        for (k = 0; k < gs_graph_num_values(spmd); k++) {
            gs_op op = gs_value_op(gs_graph_value(spmd, k));
            n_ag += op == GS_OP_ALL_GATHER;
            n_coll += op >= GS_OP_ALL_REDUCE && op <= GS_OP_COLLECTIVE_PERMUTE;
        }
        CHECK_EQ_INT(n_ag, 2);
        CHECK_EQ_INT(n_coll, 2);
        ins[0] = x; ins[1] = o0; ins[2] = o1; ins[3] = ix; ins[4] = u0; ins[5] = u1;
        check_agrees(ctx, spmd, 4, ins);
    }
    gs_ctx_destroy(ctx);
}

/* cost: the results of one variadic reduce share its one fold: 24 combinations of add_min_max's 4 computing
   instructions (minimum, maximum, two adds) = 96 FLOPs in all, half on each result, and each input read once */
static void test_reducer_variadic_cost(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n" ADD_MIN_MAX "ENTRY e {\n  a = f32[4,6] parameter(0)\n"
                                     "  b = f32[4,6] parameter(1)\n  z = f32[] constant(0)\n"
                                     "  ROOT r = (f32[4], f32[4]) reduce(a, b, z, z), dimensions={1}, to_apply=add_min_max\n}\n");
    gs_topology_desc d;
    gs_topology *t = NULL;
    gs_cost_report *rep = NULL;
    int i, found = 0;
    double flops = 0, rd = 0;
    memset(&d, 0, sizeof d);
    d.chip = gs_chip_find("v6e");
    d.mesh_rank = 1;
    d.mesh[0] = 1;
    if (g && d.chip) {
        CHECK_OK(gs_topology_create(ctx, &d, &t));
        if (t) CHECK_OK(gs_cost_program(g, t, &rep));
        for (i = 0; rep && i < gs_cost_report_num_rows(rep); i++) {
            const gs_cost_row *r = gs_cost_report_row(rep, i);
            if (gs_value_op(r->value) != GS_OP_REDUCE) continue;
            CHECK_NEAR(r->flops, 48.0, 0.0);
            flops += r->flops;
            rd += r->hbm_read;
            found++;
        }
        CHECK_EQ_INT(found, 2);
        CHECK_NEAR(flops, 96.0, 0.0);
        CHECK_NEAR(rd, 2 * 96.0 + 2 * 4.0, 0.0);   /* a and b (96 bytes each) and the two inits, once */
    }
    gs_ctx_destroy(ctx);
}

/* the C API: components of one variadic op built one by one, and what it refuses */
static void test_reducer_variadic_api(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *red = gst_hlo_parse(ctx, "HloModule m\n\nENTRY " ADD_MIN_MAX);
    gs_graph *g = gs_graph_new(ctx, "e");
    int64_t d3[1] = {3}, d31[2] = {3, 1};
    gs_shape s3 = gs_shape_make(GS_F32, 1, d3), s31 = gs_shape_make(GS_S32, 2, d31);
    gs_value *o[2], *u[2], *ix, *r[2], *bad;
    gs_scatter_dims sd;
    float o0[3] = {10, 20, 30}, o1[3] = {0, 0, 0}, u0[3] = {1, 5, 7}, u1[3] = {4, 2, 3}, r0[3], r1[3];
    int32_t ixd[3] = {2, 0, 2};
    const void *ins[5];
    void *outs[2];
    int k;
    memset(&sd, 0, sizeof sd);
    sd.n_inserted_window_dims = 1;
    sd.inserted_window_dims[0] = 0;
    sd.n_scatter_dims_to_operand_dims = 1;
    sd.scatter_dims_to_operand_dims[0] = 0;
    sd.index_vector_dim = 1;
    o[0] = gs_parameter(g, 0, s3, "o0");
    o[1] = gs_parameter(g, 1, s3, "o1");
    ix = gs_parameter(g, 2, s31, "ix");
    u[0] = gs_parameter(g, 3, s3, "u0");
    u[1] = gs_parameter(g, 4, s3, "u1");
    for (k = 0; k < 2; k++) {
        r[k] = gs_scatter(g, o[k], ix, u[k], &sd, GS_REDUCE_SUM);
        CHECK_OK(gs_value_set_variadic_reducer(r[k], red, 2, k, o, u));
    }
    gs_graph_set_root(g, gs_tuple(g, 2, r));
    ins[0] = o0; ins[1] = o1; ins[2] = ixd; ins[3] = u0; ins[4] = u1;
    outs[0] = r0;
    outs[1] = r1;
    CHECK_OK(gs_eval(g, ins, outs));
    CHECK(r0[0] == 12 && r0[1] == 20 && r0[2] == 34 && r1[0] == 5 && r1[1] == 0 && r1[2] == 11);
    /* refused: one operand, a component out of range, operand k not the op's own, a reducer of other types, twice */
    bad = gs_scatter(g, o[0], ix, u[0], &sd, GS_REDUCE_SUM);
    CHECK_ERR(gs_value_set_variadic_reducer(bad, red, 1, 0, o, u), GS_ERR_INVALID_ARG, "component 0 of 1 operands");
    gs_ctx_clear_error(ctx);
    CHECK_ERR(gs_value_set_variadic_reducer(bad, red, 2, 2, o, u), GS_ERR_INVALID_ARG, "component 2 of 2 operands");
    gs_ctx_clear_error(ctx);
    CHECK_ERR(gs_value_set_variadic_reducer(bad, red, 2, 1, o, u), GS_ERR_INVALID_ARG, "variadic operand 1 is not the op's own");
    gs_ctx_clear_error(ctx);
    CHECK_ERR(gs_value_set_variadic_reducer(bad, g, 2, 0, o, u), GS_ERR_INVALID_ARG, "5 parameters, expected 4");
    gs_ctx_clear_error(ctx);
    CHECK_OK(gs_value_set_variadic_reducer(bad, red, 2, 0, o, u));
    CHECK_ERR(gs_value_set_variadic_reducer(bad, red, 2, 0, o, u), GS_ERR_INVALID_ARG, "has one already");
    gs_ctx_clear_error(ctx);
    CHECK_ERR(gs_value_set_reducer(bad, red), GS_ERR_UNSUPPORTED, "one array operand");
    gs_ctx_destroy(ctx);
}

/* a variadic reduce whose reducer is per component (XLA's parameter order interleaved: or(p0, p2), or(p1, p3)) and
   that one get-tuple-element reads stays the tuple the text wrote, with its tuple sharding; a mixing reducer read
   through one get-tuple-element is that result alone */
static void test_reducer_variadic_one_user(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\n\n"
        "orc {\n  a0 = u32[] parameter(0)\n  b0 = u32[] parameter(2)\n  o0 = u32[] or(a0, b0)\n"
        "  a1 = u32[] parameter(1)\n  b1 = u32[] parameter(3)\n  o1 = u32[] or(a1, b1)\n"
        "  ROOT t = (u32[], u32[]) tuple(o0, o1)\n}\n\n"
        "ENTRY e {\n  x = u32[2,3] parameter(0), sharding={manual}\n  y = u32[2,3] parameter(1), sharding={manual}\n"
        "  z = u32[] constant(0), sharding={manual}\n"
        "  r = (u32[2], u32[2]) reduce(x, y, z, z), dimensions={1}, sharding={{manual},{manual}}, to_apply=orc\n"
        "  ROOT g0 = u32[2] get-tuple-element(r), index=0, sharding={manual}\n}\n");
    uint32_t x[6] = {1, 2, 4, 8, 16, 32}, y[6] = {0, 0, 0, 0, 0, 0}, out[2];
    const void *ins[2];
    void *outs[1];
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "r = (u32[2], u32[2]) tuple(r.0, r.1), sharding={{manual}, {manual}}") &&
              strstr(text, "ROOT g0 = u32[2] get-tuple-element(r), index=0"));
        ins[0] = x;
        ins[1] = y;
        outs[0] = out;
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK(out[0] == 7 && out[1] == 56);
    }
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    g = gst_hlo_parse(ctx, "HloModule m\n\n" ARGMAX_GE "ENTRY e {\n"
        "  x = f32[5,7] parameter(0)\n  io = s32[5,7] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  m1 = s32[] constant(-1)\n"
        "  am = (f32[5], s32[5]) reduce(x, io, ninf, m1), dimensions={1}, to_apply=amax\n"
        "  ROOT am1 = s32[5] get-tuple-element(am), index=1\n}\n");
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "am1.v = (f32[5], s32[5]) reduce(x, io, ninf, m1)") &&
              strstr(text, "ROOT am1 = s32[5] get-tuple-element(am1.v), index=1"));
    }
    gs_ctx_destroy(ctx);
}

void suite_reducers(void) {
    RUN(test_reducer_variadic_one_user);
    RUN(test_reducer_reduce_and_window);
    RUN(test_reducer_scatter);
    RUN(test_reducer_collectives);
    RUN(test_reducer_partition);
    RUN(test_reducer_cost);
    RUN(test_reducer_variadic_mixing);
    RUN(test_reducer_variadic_api);
    RUN(test_reducer_variadic_partition);
    RUN(test_reducer_variadic_cost);
}
