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
    gs_runtime_desc rd;
    gs_runtime *rt = NULL;
    gs_check_desc cd;
    gs_check_report rep;
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
        memset(&rd, 0, sizeof rd);
        rd.num_devices = 2;
        rd.mode = GS_RUNTIME_LOCKSTEP;
        CHECK_OK(gs_runtime_create(ctx, &rd, &rt));
        ins[0] = p;
        ins[1] = ix;
        ins[2] = u;
        memset(&cd, 0, sizeof cd);
        if (rt) {
            CHECK_OK(gs_partition_check(spmd, rt, &cd, ins, &rep));
            CHECK_MSG(rep.ok, "%s", rep.message ? rep.message : "");
            gs_runtime_destroy(rt);
        }
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

void suite_reducers(void) {
    RUN(test_reducer_reduce_and_window);
    RUN(test_reducer_scatter);
    RUN(test_reducer_collectives);
    RUN(test_reducer_partition);
    RUN(test_reducer_cost);
}
