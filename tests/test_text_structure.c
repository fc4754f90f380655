/* test_text_structure.c - HLO text as producers write it: fusion, call and conditional (inlined), bitcast
   with layouts, opt-barrier, copy of a tuple, variadic collectives, reduce, reduce-window and scatter, the
   async pairs, collective-broadcast, custom-call markers, __cublas$gemm and TopK, opaque ops, convolution
   rhs_reversal, instruction shapes left out, named-mesh shardings, attributes read / kept / refused with
   "did you mean", gs_hlo_stats, and the printer's XLA forms (channel_id, all-to-all with two dims, scans,
   splat constants). Values are checked against hand-computed numbers, collectives on emulated devices. */
#include "test.h"

/* runs g on D devices in lockstep (inputs and outputs device-major, as gs_runtime_run takes them) */
static bool st_run(gs_ctx *ctx, gs_graph *g, int64_t D, const void *const *ins, void *const *outs) {
    gs_runtime_desc desc;
    gs_runtime *rt = NULL;
    gs_result r;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = D;
    desc.mode = GS_RUNTIME_LOCKSTEP;
    if (!g || gs_runtime_create(ctx, &desc, &rt) != GS_OK) return false;
    r = gs_runtime_run(rt, g, ins, outs);
    CHECK_MSG(r == GS_OK, "run on %lld devices: %s", (long long)D, gs_ctx_error_msg(ctx));
    gs_runtime_destroy(rt);
    return r == GS_OK;
}

/* ---- fusion and call ---- */
static void test_text_fusion_call(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                           "HloModule m\n\n"
                           "%fused (p0: f32[4], p1: f32[4]) -> f32[4] {\n"
                           "  %p0 = f32[4]{0} parameter(0)\n  %p1 = f32[4]{0} parameter(1)\n"
                           "  %m = f32[4]{0} multiply(%p0, %p1)\n  ROOT %a = f32[4]{0} add(%m, %p0), metadata={op_name=\"inner\"}\n}\n\n"
                           "%ident (q: f32[4]) -> f32[4] {\n  ROOT %q = f32[4]{0} parameter(0)\n}\n\n"
                           "%callee (c0: f32[4]) -> f32[4] {\n  %c0 = f32[4]{0} parameter(0)\n"
                           "  %f = f32[4]{0} fusion(%c0, %c0), kind=kLoop, calls=%fused\n"
                           "  ROOT %n = f32[4]{0} negate(%f)\n}\n\n"
                           "ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {\n"
                           "  %x = f32[4]{0} parameter(0)\n  %y = f32[4]{0} parameter(1)\n"
                           "  %fusion.1 = f32[4]{0} fusion(%x, %y), kind=kLoop, calls=%fused, metadata={op_name=\"f\"}\n"
                           "  %call.1 = f32[4]{0} call(%fusion.1), to_apply=%callee\n"
                           "  %call.2 = f32[4]{0} call(%call.1), to_apply=%ident\n"
                           "  ROOT %r = f32[4]{0} add(%call.2, %fusion.1)\n}\n");
    float x[4] = {1, 2, -1, 0.5f}, y[4] = {3, -2, 4, 2}, out[4];
    const void *ins[2];
    void *outs[1];
    int i;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        ins[0] = x;
        ins[1] = y;
        outs[0] = out;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) {
            float f1 = x[i] * y[i] + x[i];            /* fusion.1 */
            float c1 = -(f1 * f1 + f1);               /* call.1: negate(fused(f1, f1)) */
            CHECK_NEAR(out[i], c1 + f1, 1e-5);        /* call.2 is the identity */
        }
        /* inlined: the caller's name on the root, "<caller>.<name>" inside, metadata kept */
        CHECK(text && strstr(text, "  fusion.1.m = f32[4] multiply(x, y)\n") != NULL);
        CHECK(text && strstr(text, "  fusion.1 = f32[4] add(fusion.1.m, x), metadata={op_name=\"f\"}\n") != NULL);
        CHECK(text && strstr(text, "  call.1.f.m = f32[4] multiply(fusion.1, fusion.1)\n") != NULL);
        CHECK(text && strstr(text, "  call.2 = f32[4] copy(call.1)\n") != NULL);
        CHECK(text && strstr(text, "fusion(") == NULL && strstr(text, " call(") == NULL);
        CHECK(text && strstr(text, "inner") == NULL);   /* the caller's attributes replace the inlined root's */
    }
    gs_ctx_destroy(ctx);
    gst_hlo_error_at("HloModule m\nc {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=c\n}\n"
             "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] call(x), to_apply=c\n}\n",
             GS_ERR_PARSE, 4, 37, "computation 'c' calls itself");
    gst_hlo_error_at("HloModule m\nc {\n  p = f32[4] parameter(1)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] call(x), to_apply=c\n}\n",
             GS_ERR_PARSE, 3, 24, "parameter(1) of 'c', which is called with 1 operand");
    gst_hlo_error_at("HloModule m\nc {\n  p = f32[4] parameter(0)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] fusion(x), kind=kFast, calls=c\n}\n",
             GS_ERR_PARSE, 7, 35, "expected a fusion kind (kLoop, kInput, kOutput or kCustom)");
}

/* ---- conditional: pred and indexed forms; an index out of range takes the last branch ---- */
static void test_text_conditional(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                           "HloModule m\nneg {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}\n"
                           "dbl {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, p)\n}\n"
                           "same {\n  ROOT p = f32[2] parameter(0)\n}\n"
                           "ENTRY e {\n  c = pred[] parameter(0)\n  i = s32[] parameter(1)\n  x = f32[2] parameter(2)\n"
                           "  a = f32[2] conditional(c, x, x), true_computation=neg, false_computation=dbl\n"
                           "  b = f32[2] conditional(i, x, x, x), branch_computations={neg, dbl, same}\n"
                           "  ROOT t = (f32[2], f32[2]) tuple(a, b)\n}\n");
    static const int32_t idx[5] = {0, 1, 2, 7, -1};
    static const float want_b[5][2] = {{-1, 2}, {2, -4}, {1, -2}, {1, -2}, {1, -2}};
    float x[2] = {1, -2}, oa[2], ob[2];
    uint8_t pred;
    const void *ins[3];
    void *outs[2];
    int k, i;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[2] = x;
        outs[0] = oa;
        outs[1] = ob;
        for (k = 0; k < 5; k++) {
            pred = (uint8_t)(k == 0);
            ins[0] = &pred;
            ins[1] = &idx[k];
            CHECK_OK(gs_eval(g, ins, outs));
            for (i = 0; i < 2; i++) {
                CHECK_NEAR(oa[i], pred ? -x[i] : 2 * x[i], 0);
                CHECK_NEAR(ob[i], want_b[k][i], 0);
            }
        }
    }
    gs_ctx_destroy(ctx);
    gst_hlo_error_at("HloModule m\nb {\n  ROOT p = f32[2] parameter(0)\n}\nENTRY e {\n  i = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
             "  ROOT c = f32[2] conditional(i, x), branch_computations={b, b}\n}\n",
             GS_ERR_PARSE, 8, 19, "conditional with 2 branches takes 3 operands, found 2");
}

/* ---- bitcast, opt-barrier, copy of a tuple ---- */
static void test_text_bitcast_layouts(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                           "HloModule m\nENTRY %main (x: f32[2,3]) -> (f32[3,2], f32[6], f32[2,3], f32[6]) {\n"
                           "  %x = f32[2,3]{1,0} parameter(0)\n"
                           "  %a = f32[3,2]{0,1} bitcast(%x)\n"             /* column-major [3,2]: the transpose */
                           "  %b = f32[6]{0} bitcast(%x)\n"                 /* row-major bytes */
                           "  %t = f32[3,2]{1,0} transpose(%x), dimensions={1,0}\n"
                           "  %c = f32[2,3]{0,1} bitcast(%t)\n"             /* [3,2] row-major read as [2,3] column-major */
                           "  %tu = (f32[2,3], f32[6]) tuple(%c, %b)\n"
                           "  %cp = (f32[2,3], f32[6]) copy(%tu)\n"
                           "  %ob = (f32[2,3], f32[6]) opt-barrier(%cp)\n"
                           "  %g0 = f32[2,3] get-tuple-element(%ob), index=0\n"
                           "  %g1 = f32[6] get-tuple-element(%ob), index=1\n"
                           "  ROOT %r = (f32[3,2], f32[6], f32[2,3], f32[6]) tuple(%a, %b, %g0, %g1)\n}\n");
    float x[6] = {0, 1, 2, 10, 11, 12}, a[6], b[6], c[6], d[6];
    const float want_a[6] = {0, 10, 1, 11, 2, 12}, want_c[6] = {0, 1, 2, 10, 11, 12};
    const void *ins[1];
    void *outs[4];
    int i;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = x;
        outs[0] = a;
        outs[1] = b;
        outs[2] = c;
        outs[3] = d;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 6; i++) {
            CHECK_NEAR(a[i], want_a[i], 0);
            CHECK_NEAR(b[i], x[i], 0);
            CHECK_NEAR(c[i], want_c[i], 0);
            CHECK_NEAR(d[i], x[i], 0);
        }
    }
    gs_ctx_destroy(ctx);
    /* tiled layouts (XLA's tiled_layout.md): [3,4]{1,0:T(2,4)} puts (i, j) at (i/2)*8 + (i%2)*4 + j = 4i + j, the
       padding row at the end, so reading it as [12] is the row-major reshape; T(128) on s32[1] and s32[] puts the
       one element at 0 */
    ctx = gst_ctx();
    g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[3,4]{1,0:T(2,4)} parameter(0)\n"
                           "  a = f32[12]{0} bitcast(x)\n  s = s32[1]{0:T(128)} constant({7})\n"
                           "  t = s32[]{:T(128)} bitcast(s)\n  ct = f32[] convert(t)\n  bc = f32[12] broadcast(ct), dimensions={}\n"
                           "  ROOT r = f32[12] add(a, bc)\n}\n");
    if (g) {
        float x12[12], r12[12];
        for (i = 0; i < 12; i++) x12[i] = (float)(i * i);
        ins[0] = x12;
        outs[0] = r12;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 12; i++) CHECK_NEAR(r12[i], (float)(i * i + 7), 0);
    }
    gs_ctx_destroy(ctx);
    /* one [8,128] tile: the row-major [1024] */
    ctx = gst_ctx();
    g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[8,128]{1,0:T(8,128)} parameter(0)\n  ROOT b = f32[1024]{0} bitcast(x)\n}\n");
    CHECK(g && gs_value_op(gs_graph_root(g)) == GS_OP_RESHAPE);
    gs_ctx_destroy(ctx);
    /* 2x2 tiles put (0, 2) at memory position 4: not where the untiled layouts put it (a transpose of [2,2,2,2]) */
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4,4]{1,0:T(2,2)} parameter(0)\n  ROOT b = f32[16]{0} bitcast(x)\n}\n",
             GS_ERR_UNSUPPORTED, 4, 23, "bitcast 'b' between tiled layouts moves elements within their tiles");
    /* padding in the middle: [3,3] in 1x4 tiles puts (1, 0) at 4 */
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[3,3]{1,0:T(1,4)} parameter(0)\n  ROOT b = f32[9]{0} bitcast(x)\n}\n",
             GS_ERR_UNSUPPORTED, 4, 22, "moves elements within their tiles");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[3,3]{1,0:T(*,4)} parameter(0)\n  ROOT b = f32[9]{0} bitcast(x)\n}\n",
             GS_ERR_UNSUPPORTED, 3, 22, "combined tile dimensions");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT b = s32[4] bitcast(x)\n}\n", GS_ERR_PARSE, 4, 12,
             "that is bitcast-convert");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[2,3]{1,2} parameter(0)\n}\n", GS_ERR_PARSE, 3, 15, "not a permutation");
}

/* ---- variadic collectives ---- */
static void test_text_variadic_collectives(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                           "HloModule m, num_partitions=2\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  ROOT c = f32[] add(a, b)\n}\n"
                           "ENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[2] parameter(1)\n"
                           "  ROOT ar = (f32[4], f32[2]) all-reduce(x, y), replica_groups={{0,1}}, to_apply=add\n}\n");
    float x[2][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}}, y[2][2] = {{0.5f, 1}, {2, 4}}, ox[2][4], oy[2][2];
    const void *ins[4];
    void *outs[4];
    int d, i;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(gs_value_op(gs_graph_root(g)) == GS_OP_TUPLE && gs_value_tuple_size(gs_graph_root(g)) == 2);
        CHECK(text && strstr(text, "  ar.0 = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true") != NULL);
        CHECK(text && strstr(text, "  ROOT ar = (f32[4], f32[2]) tuple(ar.0, ar.1)\n") != NULL);
        for (d = 0; d < 2; d++) {
            ins[2 * d] = x[d];
            ins[2 * d + 1] = y[d];
            outs[2 * d] = ox[d];
            outs[2 * d + 1] = oy[d];
        }
        if (st_run(ctx, g, 2, ins, outs))
            for (d = 0; d < 2; d++) {
                for (i = 0; i < 4; i++) CHECK_NEAR(ox[d][i], x[0][i] + x[1][i], 0);
                for (i = 0; i < 2; i++) CHECK_NEAR(oy[d][i], y[0][i] + y[1][i], 0);
            }
    }
    gs_ctx_destroy(ctx);
}

/* ---- variadic reduce, reduce-window and scatter whose reducer combines each component on its own ---- */
static void test_text_variadic_reduce_scatter(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nr2 {\n  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n  b0 = f32[] parameter(2)\n"
                                "  b1 = s32[] parameter(3)\n  m = maximum(b1, a1)\n  s = add(a0, b0)\n  ROOT t = tuple(s, m)\n}\n"
                                "sc {\n  a0 = f32[] parameter(0)\n  a1 = f32[] parameter(1)\n  b0 = f32[] parameter(2)\n"
                                "  b1 = f32[] parameter(3)\n  mx = f32[] maximum(a1, b1)\n  ROOT t = (f32[], f32[]) tuple(b0, mx)\n}\n"
                                "ENTRY e {\n  x = f32[2,3] parameter(0)\n  i = s32[2,3] parameter(1)\n"
                                "  z = f32[] constant(0)\n  lo = s32[] constant(-100)\n"
                                "  r = (f32[2], s32[2]) reduce(x, i, z, lo), dimensions={1}, to_apply=r2\n"
                                "  w = (f32[2,2], s32[2,2]) reduce-window(x, i, z, lo), window={size=1x2}, to_apply=r2\n"
                                "  idx = s32[1,1] constant({{1}})\n  u = f32[1,3] parameter(2)\n"
                                "  s = (f32[2,3], f32[2,3]) scatter(x, x, idx, u, u), update_window_dims={1}, inserted_window_dims={0}, "
                                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sc\n"
                                "  r0 = f32[2] get-tuple-element(r), index=0\n  r1 = s32[2] get-tuple-element(r), index=1\n"
                                "  w1 = s32[2,2] get-tuple-element(w), index=1\n"
                                "  s0 = f32[2,3] get-tuple-element(s), index=0\n  s1 = f32[2,3] get-tuple-element(s), index=1\n"
                                "  ROOT t = (f32[2], s32[2], s32[2,2], f32[2,3], f32[2,3]) tuple(r0, r1, w1, s0, s1)\n}\n");
    float x[6] = {1, 2, 3, 4, 5, 6}, u[3] = {10, 20, 30}, r0[2], s0[6], s1[6];
    int32_t i[6] = {5, -1, 7, 0, 9, 2}, r1[2], w1[4];
    const float want_s0[6] = {1, 2, 3, 10, 20, 30};           /* sc: component 0 replaces */
    const int32_t want_w1[4] = {5, 7, 9, 9};
    const void *ins[3];
    void *outs[5];
    int k;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = x;
        ins[1] = i;
        ins[2] = u;
        outs[0] = r0;
        outs[1] = r1;
        outs[2] = w1;
        outs[3] = s0;
        outs[4] = s1;
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK_NEAR(r0[0], 6, 0);
        CHECK_NEAR(r0[1], 15, 0);
        CHECK_EQ_INT(r1[0], 7);
        CHECK_EQ_INT(r1[1], 9);
        for (k = 0; k < 4; k++) CHECK_EQ_INT(w1[k], want_w1[k]);
        for (k = 0; k < 6; k++) {
            CHECK_NEAR(s0[k], want_s0[k], 0);
            CHECK_NEAR(s1[k], k < 3 ? x[k] : (x[k] > u[k - 3] ? x[k] : u[k - 3]), 0);   /* component 1: maximum */
        }
    }
    gs_ctx_destroy(ctx);
    /* an all-reduce applies its reducer to each operand alone (XLA's all-reduce combiner joins all-reduces of
       one binary reducer): a reducer over several operands is refused (a reduce runs it: test_reducers.c) */
    gst_hlo_error_at("HloModule m, num_partitions=2\nmm {\n  a0 = f32[] parameter(0)\n  a1 = f32[] parameter(1)\n  b0 = f32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
             "  s = f32[] add(a0, b1)\n  t = f32[] add(a1, b0)\n  ROOT r = (f32[], f32[]) tuple(s, t)\n}\n"
             "ENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n"
             "  ROOT r = (f32[4], f32[4]) all-reduce(x, y), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=mm\n}\n",
             GS_ERR_PARSE, 14, 8, "computation 'mm' has 4 parameters, expected 2");
}

/* ---- JAX's argmax and XLA's minmax reducer: (best value, index operand at its first position) ---- */
static void test_text_argmax_reduce(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m\n"
        "amax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(a, b), direction=GT\n  nan = pred[] compare(a, a), direction=NE\n  o1 = pred[] or(gt, nan)\n"
        "  eq = pred[] compare(a, b), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n"
        "  keep = pred[] or(o1, tie)\n  v = f32[] select(keep, a, b)\n  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
        "amin {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  lt = pred[] compare(b, a), direction=LT\n  v = f32[] select(lt, b, a)\n  i = s32[] select(lt, bi, ai)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
        "ENTRY e {\n  x = f32[2,4] parameter(0)\n  io = s32[2,4] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n  pinf = f32[] constant(inf)\n  z = s32[] constant(0)\n  big = f32[] constant(100)\n  m1 = s32[] constant(-1)\n"
        "  mx = (f32[2], s32[2]) reduce(x, io, ninf, z), dimensions={1}, to_apply=amax\n"
        "  mn = (f32[2], s32[2]) reduce(x, io, pinf, z), dimensions={1}, to_apply=amin\n"
        "  hi = (f32[2], s32[2]) reduce(x, io, big, m1), dimensions={1}, to_apply=amax\n"
        "  v0 = f32[2] get-tuple-element(mx), index=0\n  i0 = s32[2] get-tuple-element(mx), index=1\n"
        "  v1 = f32[2] get-tuple-element(mn), index=0\n  i1 = s32[2] get-tuple-element(mn), index=1\n"
        "  i2 = s32[2] get-tuple-element(hi), index=1\n"
        "  ROOT t = (f32[2], s32[2], f32[2], s32[2], s32[2]) tuple(v0, i0, v1, i1, i2)\n}\n");
    float x[8] = {3, 7, 7, 1, -1, -5, -2, -9}, v0[2], v1[2];
    int32_t i0[2], i1[2], i2[2];
    const void *ins[1];
    void *outs[5];
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = x;
        outs[0] = v0;
        outs[1] = i0;
        outs[2] = v1;
        outs[3] = i1;
        outs[4] = i2;
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK_NEAR(v0[0], 7, 0);
        CHECK_NEAR(v0[1], -1, 0);
        CHECK_EQ_INT(i0[0], 1);   /* the first of the two 7s */
        CHECK_EQ_INT(i0[1], 0);
        CHECK_NEAR(v1[0], 1, 0);
        CHECK_NEAR(v1[1], -9, 0);
        CHECK_EQ_INT(i1[0], 3);
        CHECK_EQ_INT(i1[1], 3);
        CHECK_EQ_INT(i2[0], -1);  /* the initial value 100 beats every element: the initial index */
        CHECK_EQ_INT(i2[1], -1);
    }
    gs_ctx_destroy(ctx);
}

/* ---- sort with a lexicographic comparator (value descending, then index ascending), or by another operand ---- */
static void test_text_sort_comparators(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m\n"
        "lex {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  eq = pred[] compare(a, b), direction=EQ, type=TOTALORDER\n"
        "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  lt = pred[] compare(c, d), direction=LT\n"
        "  gt = pred[] compare(a, b), direction=GT\n  ROOT r = pred[] select(eq, lt, gt)\n}\n"
        "by1 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
        "  ROOT r = pred[] compare(c, d), direction=LT\n}\n"
        "ENTRY e {\n  k = f32[4] parameter(0)\n  i = s32[4] parameter(1)\n"
        "  s = (f32[4], s32[4]) sort(k, i), dimensions={0}, is_stable=true, to_apply=lex\n"
        "  u = (f32[4], s32[4]) sort(k, i), dimensions={0}, to_apply=by1\n"
        "  s0 = f32[4] get-tuple-element(s), index=0\n  s1 = s32[4] get-tuple-element(s), index=1\n"
        "  u0 = f32[4] get-tuple-element(u), index=0\n"
        "  ROOT t = (f32[4], s32[4], f32[4]) tuple(s0, s1, u0)\n}\n");
    float k[4] = {3, 1, 3, 2}, s0[4], u0[4];
    int32_t i[4] = {9, 5, 4, 7}, s1[4];
    const float want_s0[4] = {3, 3, 2, 1}, want_u0[4] = {3, 1, 2, 3};
    const int32_t want_s1[4] = {4, 9, 7, 5};
    const void *ins[2];
    void *outs[3];
    int j;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = k;
        ins[1] = i;
        outs[0] = s0;
        outs[1] = s1;
        outs[2] = u0;
        CHECK_OK(gs_eval(g, ins, outs));
        for (j = 0; j < 4; j++) {
            CHECK_NEAR(s0[j], want_s0[j], 0);
            CHECK_EQ_INT(s1[j], want_s1[j]);
            CHECK_NEAR(u0[j], want_u0[j], 0);
        }
    }
    gs_ctx_destroy(ctx);
}

/* JAX's float order key: the bits as s32, negative floats flipped so the s32 order is the float order */
static int32_t st_float_key(float x) {
    int32_t b;
    uint32_t u;
    memcpy(&b, &x, 4);
    memcpy(&u, &x, 4);
    return b < 0 ? (int32_t)(0x7fffffffu - u) : b;
}

/* ---- sort with a comparator of any form: evaluated as a computation (JAX's top-k comparator: the float
   order key descending, ties by the index ascending), against a naive insertion sort; sharded along the other
   dim on 2 devices; the comparator prints back as a computation ---- */
static void test_text_sort_any_comparator(void) {
    static const char *text =
        "HloModule m, num_partitions=2\n"
        "cmp {\n  a = f32[] parameter(0)\n  ai = s32[] bitcast-convert(a)\n  z = s32[] constant(0)\n"
        "  an = pred[] compare(ai, z), direction=LT\n  m = u32[] constant(2147483647)\n  au = u32[] bitcast-convert(a)\n"
        "  af = u32[] subtract(m, au)\n  afs = s32[] bitcast-convert(af)\n  ka = s32[] select(an, afs, ai)\n"
        "  b = f32[] parameter(1)\n  bi = s32[] bitcast-convert(b)\n  bn = pred[] compare(bi, z), direction=LT\n"
        "  bu = u32[] bitcast-convert(b)\n  bf = u32[] subtract(m, bu)\n  bfs = s32[] bitcast-convert(bf)\n"
        "  kb = s32[] select(bn, bfs, bi)\n  gt = pred[] compare(ka, kb), direction=GT\n"
        "  lt = pred[] compare(kb, ka), direction=GT\n  tie = pred[] compare(gt, lt), direction=EQ\n"
        "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  il = pred[] compare(i, j), direction=LT\n"
        "  ROOT r = pred[] select(tie, il, gt)\n}\n"
        "ENTRY e {\n  x = f32[2,6] parameter(0), sharding={devices=[2,1]0,1}\n  io = s32[2,6] iota(), iota_dimension=1\n"
        "  ROOT s = (f32[2,6], s32[2,6]) sort(x, io), dimensions={1}, is_stable=true, to_apply=cmp, "
        "sharding={{devices=[2,1]0,1}, {devices=[2,1]0,1}}\n}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, text);
    float x[12] = {1.5f, -0.0f, 3, 0.0f, -2, 3, -1, 7, -1, 0.25f, 7, -8}, vals[12], want_v[12], dv[2][6];
    int32_t idx[12], want_i[12], di[2][6];
    const void *ins[1];
    void *outs[2];
    int r, a, b;
    for (r = 0; r < 2; r++) {   /* insertion sort: key descending, then index ascending */
        int ord[6];
        for (a = 0; a < 6; a++) ord[a] = a;
        for (a = 1; a < 6; a++)
            for (b = a; b > 0; b--) {
                int p = ord[b - 1], q = ord[b];
                int32_t kp = st_float_key(x[r * 6 + p]), kq = st_float_key(x[r * 6 + q]);
                if (kq > kp || (kq == kp && q < p)) {
                    ord[b - 1] = q;
                    ord[b] = p;
                }
            }
        for (a = 0; a < 6; a++) {
            want_v[r * 6 + a] = x[r * 6 + ord[a]];
            want_i[r * 6 + a] = ord[a];
        }
    }
    CHECK(want_i[0] == 2 && want_i[1] == 5 && want_i[3] == 3 && want_i[4] == 1);   /* 3, 3, 1.5, 0, -0, -2 */
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    gst_hlo_roundtrip(g);
    CHECK(strstr(gs_hlo_print(g), "is_stable=true, to_apply=cmp") != NULL);
    ins[0] = x;
    outs[0] = vals;
    outs[1] = idx;
    CHECK_OK(gs_eval(g, ins, outs));
    for (a = 0; a < 12; a++) {
        CHECK_MSG(memcmp(&vals[a], &want_v[a], 4) == 0 && idx[a] == want_i[a], "element %d: %g/%d, want %g/%d", a,
                  (double)vals[a], (int)idx[a], (double)want_v[a], (int)want_i[a]);
    }
    {   /* rows split over 2 devices: each sorts its own row with the comparator */
        gs_partition_desc pd;
        gs_graph *p;
        const void *pins[2];
        void *pouts[4];
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 2;
        CHECK_OK(gs_propagate(g, NULL));
        CHECK_OK(gs_partition(g, &pd, &p));
        pins[0] = x;
        pins[1] = x + 6;
        pouts[0] = dv[0];
        pouts[1] = di[0];
        pouts[2] = dv[1];
        pouts[3] = di[1];
        if (st_run(ctx, p, 2, pins, pouts))
            for (a = 0; a < 12; a++) CHECK(memcmp(&dv[a / 6][a % 6], &want_v[a], 4) == 0 && di[a / 6][a % 6] == want_i[a]);
    }
    gs_ctx_destroy(ctx);
}

/* ---- dot whose declared type differs from its operands' (f8 x f8 -> bf16): the sums are bf16's, not f8's ---- */
static void test_text_dot_result_type(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m\nENTRY e {\n  a = f8e4m3fn[1,2] parameter(0)\n  b = f8e4m3fn[2,1] parameter(1)\n"
        "  c = f32[1,2] parameter(2)\n  d = f32[2,1] parameter(3)\n"
        "  x = bf16[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  y = bf16[1,1] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT t = (bf16[1,1], bf16[1,1]) tuple(x, y)\n}\n");
    /* 1.5 * 2 + 3 * 0.125 = 3.375: exact in bf16, 3.5 in f8e4m3fn (3 mantissa bits) */
    uint8_t a[2] = {0x3C, 0x44}, b[2] = {0x40, 0x20};
    /* f32 -> bf16 (narrowing): the dot in f32, then rounded: 1.5 * 2 + 2 * (0.25 + 2^-12) = 3.5 + 2^-11 -> 3.5 */
    float c[2] = {1.5f, 2.0f}, d[2] = {2.0f, 0.25f + 1.0f / 4096};
    uint16_t x = 0, y = 0;
    const void *ins[4];
    void *outs[2];
    ins[0] = a;
    ins[1] = b;
    ins[2] = c;
    ins[3] = d;
    outs[0] = &x;
    outs[1] = &y;
    if (g) {
        gst_hlo_roundtrip(g);
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK_EQ_INT(x, 0x4058);   /* 3.375 */
        CHECK_EQ_INT(y, 0x4060);   /* 3.5 */
    }
    {
        const char *bad = "HloModule m\nENTRY e {\n  a = f8e4m3fn[2] parameter(0)\n  b = f8e5m2[2] parameter(1)\n"
                          "  ROOT x = f8e4m3fn[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
        gs_graph *bg = NULL;
        CHECK(gs_hlo_parse(ctx, bad, strlen(bad), &bg) != GS_OK);
        CHECK_MSG(strstr(gs_ctx_error_msg(ctx), "line 5, column 8: dot x: f8e4m3fn x f8e5m2 -> f8e4m3fn (the operands do "
                                                "not widen exactly") != NULL, "%s", gs_ctx_error_msg(ctx));
    }
    gs_ctx_destroy(ctx);
}

/* the naive multi-dim DFT of a [4,6] block: y[k] = scale * sum_j x[j] e^{sign 2 pi i (k0 j0 / 4 + k1 j1 / 6)} */
static void st_dft46(const double *xr, const double *xi, double *yr, double *yi, double sign, double scale) {
    int k0, k1, j0, j1;
    const double pi2 = 6.283185307179586;
    for (k0 = 0; k0 < 4; k0++)
        for (k1 = 0; k1 < 6; k1++) {
            double ar = 0, ai = 0;
            for (j0 = 0; j0 < 4; j0++)
                for (j1 = 0; j1 < 6; j1++) {
                    double th = sign * pi2 * ((double)(k0 * j0) / 4.0 + (double)(k1 * j1) / 6.0);
                    ar += xr[j0 * 6 + j1] * cos(th) - xi[j0 * 6 + j1] * sin(th);
                    ai += xr[j0 * 6 + j1] * sin(th) + xi[j0 * 6 + j1] * cos(th);
                }
            yr[k0 * 6 + k1] = scale * ar;
            yi[k0 * 6 + k1] = scale * ai;
        }
}

/* ---- fft: the four fft_types over two dims (one a power of two, one not) and a batch dim, against a naive DFT;
   the batch dim split over 2 devices; print round trip; bad shapes refused ---- */
static void test_text_fft(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m, num_partitions=2\nENTRY e {\n  x = f32[2,4,6] parameter(0), sharding={devices=[2,1,1]0,1}\n"
        "  y = f32[2,4,6] parameter(1), sharding={devices=[2,1,1]0,1}\n  c = c64[2,4,6] complex(x, y)\n"
        "  f = c64[2,4,6] fft(c), fft_type=FFT, fft_length={4,6}\n"
        "  i = c64[2,4,6] fft(c), fft_type=IFFT, fft_length={4,6}\n"
        "  r = c64[2,4,4] fft(x), fft_type=RFFT, fft_length={4,6}\n"
        "  h = c64[2,4,4] multiply(r, r)\n"
        "  ir = f32[2,4,6] fft(h), fft_type=IRFFT, fft_length={4,6}\n"
        "  ROOT t = (c64[2,4,6], c64[2,4,6], c64[2,4,4], f32[2,4,6]) tuple(f, i, r, ir), "
        "sharding={{devices=[2,1,1]0,1}, {devices=[2,1,1]0,1}, {devices=[2,1,1]0,1}, {devices=[2,1,1]0,1}}\n}\n");
    float x[48], y[48], f[96], iv[96], r[64], ir[48];
    double xr[24], xi[24], yr[24], yi[24], hr[24], hi[24], zero[24];
    const void *ins[2];
    void *outs[4];
    int b, k, bad = 0;
    for (k = 0; k < 48; k++) {
        x[k] = (float)((k * 7) % 11) - 5.0f;
        y[k] = (float)((k * 5) % 13) * 0.25f;
    }
    memset(zero, 0, sizeof zero);
    if (!g) {
        gs_ctx_destroy(ctx);
        return;
    }
    gst_hlo_roundtrip(g);
    CHECK(strstr(gs_hlo_print(g), "fft(x), fft_type=RFFT, fft_length={4,6}") != NULL);
    ins[0] = x;
    ins[1] = y;
    outs[0] = f;
    outs[1] = iv;
    outs[2] = r;
    outs[3] = ir;
    CHECK_OK(gs_eval(g, ins, outs));
    for (b = 0; b < 2; b++) {
        for (k = 0; k < 24; k++) {
            xr[k] = x[b * 24 + k];
            xi[k] = y[b * 24 + k];
        }
        st_dft46(xr, xi, yr, yi, -1.0, 1.0);   /* FFT */
        for (k = 0; k < 24; k++)
            bad += fabs(f[2 * (b * 24 + k)] - yr[k]) > 1e-3 || fabs(f[2 * (b * 24 + k) + 1] - yi[k]) > 1e-3;
        st_dft46(xr, xi, yr, yi, 1.0, 1.0 / 24);   /* IFFT */
        for (k = 0; k < 24; k++)
            bad += fabs(iv[2 * (b * 24 + k)] - yr[k]) > 1e-5 || fabs(iv[2 * (b * 24 + k) + 1] - yi[k]) > 1e-5;
        st_dft46(xr, zero, yr, yi, -1.0, 1.0);   /* RFFT: the first 4 of each row of 6 */
        for (k = 0; k < 16; k++)
            bad += fabs(r[2 * (b * 16 + k)] - yr[(k / 4) * 6 + k % 4]) > 1e-3 ||
                   fabs(r[2 * (b * 16 + k) + 1] - yi[(k / 4) * 6 + k % 4]) > 1e-3;
        /* IRFFT of r*r: the full spectrum (r*r of the real transform is Hermitian), inverse, real part */
        for (k = 0; k < 24; k++) {
            double ar = yr[k], ai = yi[k];
            hr[k] = ar * ar - ai * ai;
            hi[k] = 2 * ar * ai;
        }
        st_dft46(hr, hi, yr, yi, 1.0, 1.0 / 24);
        for (k = 0; k < 24; k++) bad += fabs(ir[b * 24 + k] - yr[k]) > 1e-2 * (1 + fabs(yr[k])) || fabs(yi[k]) > 1e-3 * (1 + fabs(yr[k]));
    }
    CHECK_MSG(bad == 0, "%d values differ from the naive DFT", bad);
    {   /* the batch dim split: each device transforms its own batch element */
        gs_partition_desc pd;
        gs_graph *p;
        float df[2][48], di[2][48], dr[2][32], dir[2][24];
        const void *pins[4];
        void *pouts[8];
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 2;
        CHECK_OK(gs_propagate(g, NULL));
        CHECK_OK(gs_partition(g, &pd, &p));
        pins[0] = x;
        pins[1] = y;
        pins[2] = x + 24;
        pins[3] = y + 24;
        for (b = 0; b < 2; b++) {
            pouts[4 * b] = df[b];
            pouts[4 * b + 1] = di[b];
            pouts[4 * b + 2] = dr[b];
            pouts[4 * b + 3] = dir[b];
        }
        if (st_run(ctx, p, 2, pins, pouts))
            for (b = 0; b < 2; b++) {
                CHECK(memcmp(df[b], f + 48 * b, sizeof df[b]) == 0 && memcmp(di[b], iv + 48 * b, sizeof di[b]) == 0);
                CHECK(memcmp(dr[b], r + 32 * b, sizeof dr[b]) == 0 && memcmp(dir[b], ir + 24 * b, sizeof dir[b]) == 0);
            }
    }
    gs_ctx_destroy(ctx);
}

/* ---- propagation through fft, cholesky and triangular-solve: the batch dims pass (both ways), the transformed
   or matrix dims are whole ---- */
static void test_text_batch_dims_propagate(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m, num_partitions=4\nENTRY e {\n  x = c64[4,8,8] parameter(0), sharding={devices=[2,2,1]<=[4]}\n"
        "  f = c64[4,8,8] fft(x), fft_type=FFT, fft_length={8}\n"
        "  a = f32[4,6,6] parameter(1), sharding={devices=[2,1,2]<=[4]}\n  c = f32[4,6,6] cholesky(a), lower=true\n"
        "  b = f32[4,6,3] parameter(2)\n"
        "  s = f32[4,6,3] triangular-solve(c, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
        "  p = f32[4,8] parameter(3)\n  q = c64[4,8] fft(p2), fft_type=FFT, fft_length={8}\n"
        "  p2 = c64[4,8] convert(p)\n"
        "  r = c64[4,8] add(q, q), sharding={devices=[4,1]<=[4]}\n"
        "  ROOT t = (c64[4,8,8], f32[4,6,3], c64[4,8]) tuple(f, s, r)\n}\n");
    if (g) {
        CHECK_OK(gs_propagate(g, NULL));
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "f")), "{devices=[2,2,1]<=[4]}") == 0);
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "c")), "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}") == 0);
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "s")), "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}") == 0);
        CHECK_MSG(strcmp(gs_value_sharding_text(gs_graph_find(g, "p2")), "{devices=[4,1]<=[4]}") == 0, "%s",
                  gs_value_sharding_text(gs_graph_find(g, "p2")));
    }
    gs_ctx_destroy(ctx);
}

/* ---- a constant whose literal XLA elided ({...}): read and printed back, partitioned and costed from its
   shape, refused by name when evaluated; infeed's nested tuple shape kept as written ---- */
static void test_text_elided_constant(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m, num_partitions=2\nENTRY e {\n  x = f32[4,8] parameter(0), sharding={devices=[2,1]0,1}\n"
        "  c = f32[4,8] constant({ ... })\n  ROOT y = f32[4,8] add(x, c)\n}\n");
    float x[32], y[32];
    const void *ins[1];
    void *outs[1];
    gs_graph *p = NULL;
    gs_partition_desc pd;
    memset(x, 0, sizeof x);
    ins[0] = x;
    outs[0] = y;
    if (g) {
        const char *out = gst_hlo_roundtrip(g);
        CHECK(out && strstr(out, "  c = f32[4,8] constant({...})\n") != NULL);
        CHECK(gs_eval(g, ins, outs) == GS_ERR_UNSUPPORTED);
        CHECK(strstr(gs_ctx_error_msg(ctx), "constant c: its value was elided ({...})") != NULL);
        gs_ctx_clear_error(ctx);
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 2;
        CHECK_OK(gs_propagate(g, NULL));
        CHECK_OK(gs_partition(g, &pd, &p));
        CHECK(p && strstr(gs_hlo_print(p), "constant({...})") != NULL);
    }
    gs_ctx_destroy(ctx);
    ctx = gst_ctx();
    g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  t = token[] after-all()\n"
                           "  i = ((f32[2], s32[3]), token[]) infeed(t)\n  d = (f32[2], s32[3]) get-tuple-element(i), index=0\n"
                           "  ROOT a = f32[2] get-tuple-element(d), index=0\n}\n");
    if (g) {
        const char *out = gst_hlo_roundtrip(g);
        CHECK(out && strstr(out, "i = ((f32[2], s32[3]), token[]) infeed(t)") != NULL);
    }
    gst_hlo_error_at("HloModule m\nENTRY e {\n  ROOT c = f32[4] constant({...)\n}\n", GS_ERR_PARSE, 3, 32, "expected '}'");
    gs_ctx_destroy(ctx);
}

/* ---- argmax/argmin and rng's shard form print as standard HLO by default (gs_hlo_print_extensions keeps the
   extension spelling): the printed module is a fixed point of print(parse()), and the value-and-index reducer
   it writes, evaluated as a reduce of another module (no collapse back to argmax: init 1 instead of 0 is not
   the standard form), gives argmax's answers on ties and NaNs ---- */
static void test_text_extensions_print_standard(void) {
    static const char *src =
        "HloModule m\nENTRY e {\n  x = f32[3,4] parameter(0)\n  a = s32[3] argmax(x), dimensions={1}\n"
        "  b = s32[4] argmin(x), dimensions={0}\n  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n"
        "  o = s32[] constant(1)\n  r = f32[2] rng(lo, hi, o), distribution=rng_uniform, seed=7, full_shape=f32[3]\n"
        "  ROOT t = (s32[3], s32[4], f32[2]) tuple(a, b, r)\n}\n";
    gs_ctx *ctx = gst_ctx(), *ctx2 = gst_ctx(), *ctx3 = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, src), *g2 = NULL, *g3 = NULL;
    const char *text = g ? gst_hlo_roundtrip(g) : NULL;
    float nan = (float)NAN, x[12] = {1, 5, 5, 2, nan, 3, nan, 9, -1, -1, -4, -4};
    int32_t a1[3], b1[4], a2[3], b2[4];
    float r1[2], r2[2];
    const void *ins[1];
    void *o1[3], *o2[3];
    int i;
    CHECK(text && strstr(text, "argmax(") == NULL && strstr(text, "full_shape") == NULL);
    CHECK(text && strstr(text, "  a.r = (f32[3], s32[3]) reduce(x, a.iota, a.init, a.iinit), dimensions={1}, to_apply=argmax.f32\n"
                               "  a = s32[3] get-tuple-element(a.r), index=1\n") != NULL);
    CHECK(text && strstr(text, "  r = f32[2] dynamic-slice(r.padded, o), dynamic_slice_sizes={2}\n") != NULL);
    if (text) g2 = gst_hlo_parse(ctx2, text);
    ins[0] = x;
    o1[0] = a1; o1[1] = b1; o1[2] = r1;
    o2[0] = a2; o2[1] = b2; o2[2] = r2;
    if (g && g2) {
        CHECK_OK(gs_eval(g, ins, o1));
        CHECK_OK(gs_eval(g2, ins, o2));
        CHECK(a1[0] == 1 && a1[1] == 0 && a1[2] == 0);   /* the first of a tie; the first NaN */
        CHECK(b1[0] == 1 && b1[1] == 2 && b1[2] == 1 && b1[3] == 2);
        CHECK(memcmp(a1, a2, sizeof a1) == 0 && memcmp(b1, b2, sizeof b1) == 0 && memcmp(r1, r2, sizeof r1) == 0);
    }
    if (text) {   /* the reducer alone: iinit 1 keeps it a real reduce; an index 1 init never beats a real element */
        char mod[4096];
        const char *red = strstr(text, "argmax.f32 {"), *end = red ? strstr(red, "}\n") : NULL;
        int32_t a3[3];
        void *o3[1];
        if (red && end && end - red < 2000) {
            snprintf(mod, sizeof mod, "HloModule m\n%.*s}\nENTRY e {\n  x = f32[3,4] parameter(0)\n"
                     "  io = s32[3,4] iota(), iota_dimension=1\n  i0 = f32[] constant(-inf)\n  i1 = s32[] constant(9)\n"
                     "  r = (f32[3], s32[3]) reduce(x, io, i0, i1), dimensions={1}, to_apply=argmax.f32\n"
                     "  ROOT a = s32[3] get-tuple-element(r), index=1\n}\n", (int)(end - red), red);
            g3 = gst_hlo_parse(ctx3, mod);
            o3[0] = a3;
            if (g3 && gs_eval(g3, ins, o3) == GS_OK) {
                for (i = 0; i < 3; i++) CHECK_EQ_INT(a3[i], a1[i]);
            }
        }
    }
    gs_hlo_print_extensions(ctx, true);
    text = g ? gs_hlo_print(g) : NULL;
    CHECK(text && strstr(text, "  a = s32[3] argmax(x), dimensions={1}\n") != NULL && strstr(text, "full_shape=f32[3]") != NULL);
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(ctx2);
    gs_ctx_destroy(ctx3);
}

/* ---- select-and-scatter: overlapping windows with padding, select=ge (ties keep the first), scatter=add,
   against hand-computed values; on 2 devices (computed whole); print round trip ---- */
static void test_text_select_and_scatter(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m, num_partitions=2\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=GE\n}\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[5] parameter(0), sharding={devices=[2]0,1}\n  s = f32[5] parameter(1)\n"
        "  i = f32[] constant(0.5)\n"
        "  ROOT r = f32[5] select-and-scatter(x, s, i), window={size=3 pad=1_1}, select=ge, scatter=sum\n}\n");
    /* windows (x index: value): {0:1, 1:3} -> 1; {1:3, 2:3, 3:2}... -> 1; {1, 2, 3} -> 1; {2:3, 3:2, 4:4} -> 4; {3, 4} -> 4 */
    float x[5] = {1, 3, 3, 2, 4}, s[5] = {10, 20, 30, 40, 50}, out[5], d0[5], d1[5];
    const float want[5] = {0.5f, 60.5f, 0.5f, 0.5f, 90.5f};
    const void *ins[2];
    void *outs[1];
    int k;
    ins[0] = x;
    ins[1] = s;
    outs[0] = out;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "select-and-scatter(x, s, i), window={size=3 pad=1_1}, select=ge, scatter=sum.f32") != NULL);
        CHECK_OK(gs_eval(g, ins, outs));
        for (k = 0; k < 5; k++) CHECK_NEAR(out[k], want[k], 0);
        {
            gs_partition_desc pd;
            gs_graph *p;
            float x0[3], x1[3];
            const void *pins[4];
            void *pouts[2];
            memset(&pd, 0, sizeof pd);
            pd.num_devices = 2;
            memcpy(x0, x, 3 * sizeof(float));
            memcpy(x1, x + 3, 2 * sizeof(float));
            x1[2] = 0;
            CHECK_OK(gs_propagate(g, NULL));
            CHECK_OK(gs_partition(g, &pd, &p));
            pins[0] = x0;
            pins[1] = s;
            pins[2] = x1;
            pins[3] = s;
            pouts[0] = d0;
            pouts[1] = d1;
            if (st_run(ctx, p, 2, pins, pouts))
                for (k = 0; k < 5; k++) CHECK(d0[k] == want[k] && d1[k] == want[k]);
        }
    }
    gst_hlo_error_at("HloModule m\nge {\n  a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=GE\n}\n"
                     "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n  x = f32[4] parameter(0)\n  s = f32[2] parameter(1)\n  i = f32[] constant(0)\n"
                     "  ROOT r = f32[4] select-and-scatter(x, s, i), window={size=2 stride=2}, select=ge, scatter=sum\n}\n",
                     GS_ERR_PARSE, 15, 8, "select-and-scatter select: computation 'ge' has 1 parameters, expected 2");
    gst_hlo_error_at("HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
                     "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n  x = f32[4] parameter(0)\n  s = f32[3] parameter(1)\n  i = f32[] constant(0)\n"
                     "  ROOT r = f32[4] select-and-scatter(x, s, i), window={size=2 stride=2}, select=ge, scatter=sum\n}\n",
                     GS_ERR_PARSE, 16, 8, "source dim 0 is 3, the windows give 2");
    gs_ctx_destroy(ctx);
}

/* ---- XLA's sharding text broken over lines, and its named-mesh form, are XLA's (not {X, _} notation that
   would need a mesh in the header) ---- */
static void test_text_sharding_line_breaks(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=4\nENTRY e {\n  x = f32[4,2] parameter(0), sharding={\n"
                                     "    devices=[2,1,2]<=[4] last_tile_dim_replicate}\n"
                                     "  ROOT y = f32[4,2] negate(x), sharding={mesh['a'=2,'b'=2] [{'a'}, {}], replicated={'b'}}\n}\n");
    if (g) {
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "x")), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}") == 0);
        CHECK(strcmp(gs_value_sharding_text(gs_graph_find(g, "y")), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}") == 0);
    }
    gs_ctx_destroy(ctx);
}

/* ---- reduce-window over any element type (s64 sums exact beyond 2^53, f64 max, u8 min), against a naive loop ---- */
static void test_text_reduce_window_any_type(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m\nsum {\n  a = s64[] parameter(0)\n  b = s64[] parameter(1)\n  ROOT c = s64[] add(a, b)\n}\n"
        "mx {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT c = f64[] maximum(a, b)\n}\n"
        "mn {\n  a = u8[] parameter(0)\n  b = u8[] parameter(1)\n  ROOT c = u8[] minimum(a, b)\n}\n"
        "ENTRY e {\n  x = s64[6] parameter(0)\n  y = f64[6] parameter(1)\n  z = u8[6] parameter(2)\n"
        "  i = s64[] constant(1)\n  j = f64[] constant(-inf)\n  k = u8[] constant(255)\n"
        "  a = s64[5] reduce-window(x, i), window={size=3 pad=1_0}, to_apply=sum\n"
        "  b = f64[3] reduce-window(y, j), window={size=2 stride=2}, to_apply=mx\n"
        "  c = u8[4] reduce-window(z, k), window={size=3}, to_apply=mn\n"
        "  ROOT t = (s64[5], f64[3], u8[4]) tuple(a, b, c)\n}\n");
    int64_t x[6], a[5], wa[5];
    double y[6] = {0.5, -1, 3.25, 3.5, -0.0, -7}, b[3];
    uint8_t z[6] = {9, 200, 7, 7, 255, 3}, c[4];
    const void *ins[3];
    void *outs[3];
    int o, w;
    for (o = 0; o < 6; o++) x[o] = ((int64_t)1 << 60) + 3 * o + 1;   /* sums of three pass 2^61: beyond a double */
    for (o = 0; o < 5; o++) {   /* window over x[o-1..o+1] with pad 1 low: output o covers o-1, o, o+1 */
        uint64_t acc = 1;
        for (w = o - 1; w <= o + 1; w++)
            if (w >= 0 && w < 6) acc += (uint64_t)x[w];
        wa[o] = (int64_t)acc;
    }
    ins[0] = x;
    ins[1] = y;
    ins[2] = z;
    outs[0] = a;
    outs[1] = b;
    outs[2] = c;
    if (g) {
        CHECK_OK(gs_eval(g, ins, outs));
        for (o = 0; o < 5; o++) CHECK_MSG(a[o] == wa[o], "a[%d] = %lld, want %lld", o, (long long)a[o], (long long)wa[o]);
        CHECK(b[0] == 0.5 && b[1] == 3.5 && b[2] == -0.0);
        CHECK(c[0] == 7 && c[1] == 7 && c[2] == 7 && c[3] == 3);
    }
    gs_ctx_destroy(ctx);
}

/* ---- all-to-all-start / -done with XLA's ((operand), result) shape: the all-to-all ---- */
static void test_text_all_to_all_start(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
        "HloModule m, num_partitions=2\nENTRY e {\n  x = f32[4] parameter(0)\n"
        "  s = ((f32[4]), f32[4]) all-to-all-start(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}\n"
        "  ROOT d = f32[4] all-to-all-done(s)\n}\n");
    float x0[4] = {0, 1, 2, 3}, x1[4] = {10, 11, 12, 13}, y0[4], y1[4];
    const float w0[4] = {0, 1, 10, 11}, w1[4] = {2, 3, 12, 13};
    const void *ins[2];
    void *outs[2];
    int k;
    ins[0] = x0;
    ins[1] = x1;
    outs[0] = y0;
    outs[1] = y1;
    if (g && st_run(ctx, g, 2, ins, outs)) {
        gst_hlo_roundtrip(g);
        for (k = 0; k < 4; k++) CHECK(y0[k] == w0[k] && y1[k] == w1[k]);
    }
    gs_ctx_destroy(ctx);
}

/* names the parser makes up (the parts of a variadic collective, inlined instructions) give way to the
   names of the text */
static void test_text_made_up_names(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=2\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                "  ROOT c = f32[] add(a, b)\n}\nf {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
                                "ENTRY e {\n  x = f32[4] parameter(0)\n"
                                "  ar = (f32[4], f32[4]) all-reduce(x, x), replica_groups={{0,1}}, to_apply=add\n"
                                "  fu = f32[4] fusion(x), kind=kLoop, calls=f\n"
                                "  ar.1 = f32[4] abs(x)\n  fu.n = f32[4] sqrt(x)\n"
                                "  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(ar.1, fu.n, fu, x)\n}\n");
    if (g) {
        CHECK(gs_value_op(gs_graph_find(g, "ar.1")) == GS_OP_ABS);
        CHECK(gs_value_op(gs_graph_find(g, "fu.n")) == GS_OP_SQRT);
        CHECK(gs_value_op(gs_graph_find(g, "fu")) == GS_OP_NEGATE);
        gst_hlo_roundtrip(g);
    }
    gs_ctx_destroy(ctx);
}

/* ---- the async pairs X-start / X-done are the op X ---- */
static void test_text_async_pairs(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=2\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                "  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
                                "  ars = f32[4] all-reduce-start(x), replica_groups={{0,1}}, to_apply=add\n"
                                "  ard = f32[4] all-reduce-done(ars)\n"
                                "  ags = (f32[4], f32[8]) all-gather-start(x), replica_groups={{0,1}}, dimensions={0}\n"
                                "  agd = f32[8] all-gather-done(ags)\n"
                                "  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}\n"
                                "  cpd = f32[4] collective-permute-done(cps)\n"
                                "  cs = (f32[4], f32[4], u32[]) copy-start(x)\n  cd = f32[4] copy-done(cs)\n"
                                "  ROOT t = (f32[4], f32[8], f32[4], f32[4]) tuple(ard, agd, cpd, cd)\n}\n");
    float x[2][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}}, o[2][4][8];
    const void *ins[2];
    void *outs[8];
    int d, i;
    bool ran;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "-start") == NULL && strstr(text, "-done") == NULL);
        for (d = 0; d < 2; d++) {
            ins[d] = x[d];
            for (i = 0; i < 4; i++) outs[4 * d + i] = o[d][i];
        }
        ran = st_run(ctx, g, 2, ins, outs);
        for (d = 0; ran && d < 2; d++) {
            for (i = 0; i < 4; i++) {
                CHECK_NEAR(o[d][0][i], x[0][i] + x[1][i], 0);     /* all-reduce */
                CHECK_NEAR(o[d][1][i], x[0][i], 0);               /* all-gather: device 0's block first */
                CHECK_NEAR(o[d][1][4 + i], x[1][i], 0);
                CHECK_NEAR(o[d][2][i], x[1 - d][i], 0);           /* the other device's x */
                CHECK_NEAR(o[d][3][i], x[d][i], 0);               /* copy */
            }
        }
    }
    gs_ctx_destroy(ctx);
}

/* ---- collective-broadcast: each group's first member's operand ---- */
static void test_text_collective_broadcast(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m, num_partitions=4\nENTRY e {\n  x = f32[2] parameter(0)\n"
                                "  ROOT b = f32[2] collective-broadcast(x), channel_id=1, replica_groups={{2,0},{1,3}}\n}\n");
    float x[4][2] = {{0, 0.5f}, {1, 1.5f}, {2, 2.5f}, {3, 3.5f}}, o[4][2];
    const int root[4] = {2, 1, 2, 1};
    const void *ins[4];
    void *outs[4];
    int d;
    if (g) {
        gst_hlo_roundtrip(g);
        for (d = 0; d < 4; d++) {
            ins[d] = x[d];
            outs[d] = o[d];
        }
        if (st_run(ctx, g, 4, ins, outs))
            for (d = 0; d < 4; d++) {
                CHECK_NEAR(o[d][0], x[root[d]][0], 0);
                CHECK_NEAR(o[d][1], x[root[d]][1], 0);
            }
    }
    gs_ctx_destroy(ctx);
}

/* ---- the printer's all-to-all with split != concat, run on 2 devices against the definition ---- */
static void test_text_all_to_all_two_dims(void) {
    gs_ctx *ctx = gst_ctx(), *ctx2 = gst_ctx();
    const char *src = "HloModule m, num_partitions=2\nENTRY e {\n  x = f32[2,4] parameter(0)\n"
                      "  ROOT a = f32[4,2] all-to-all(x), replica_groups={{0,1}}, split_dimension=1, concat_dimension=0\n}\n";
    gs_graph *g = gst_hlo_parse(ctx, src), *g2 = NULL;
    const char *text = g ? gst_hlo_roundtrip(g) : NULL;
    float x[2][8], out[2][8];
    const void *ins[2];
    void *outs[2];
    int d, r, c;
    CHECK(text && strstr(text, "all-to-all(a.split), channel_id=1, replica_groups={{0,1}}, dimensions={1}\n") != NULL);
    CHECK(text && strstr(text, "split_dimension") == NULL);
    if (text) g2 = gst_hlo_parse(ctx2, text);
    for (d = 0; d < 2; d++)
        for (r = 0; r < 8; r++) x[d][r] = (float)(100 * d + r);
    for (d = 0; d < 2; d++) {
        ins[d] = x[d];
        outs[d] = out[d];
    }
    CHECK(g2 != NULL);
    if (st_run(ctx2, g2, 2, ins, outs))   /* device j gets column block j of every source i, stacked along rows */
        for (d = 0; d < 2; d++)
            for (r = 0; r < 4; r++)
                for (c = 0; c < 2; c++) CHECK_NEAR(out[d][r * 2 + c], x[r / 2][(r % 2) * 4 + d * 2 + c], 0);
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(ctx2);
}

/* ---- custom-calls ---- */
static void test_text_custom_calls(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx,
                           "HloModule m\nENTRY e {\n  a = f32[2,3]{1,0} parameter(0)\n  b = f32[3,2]{1,0} parameter(1)\n"
                           "  c = f32[2,2]{1,0} parameter(2)\n"
                           "  g = f32[2,2]{1,0} custom-call(a, b, c), custom_call_target=\"__cublas$gemm\", "
                           "backend_config=\"{\\\"alpha_real\\\":0.5,\\\"alpha_imag\\\":0,\\\"beta\\\":2,\\\"dot_dimension_numbers\\\":"
                           "{\\\"lhs_contracting_dimensions\\\":[\\\"1\\\"],\\\"rhs_contracting_dimensions\\\":[\\\"0\\\"],"
                           "\\\"lhs_batch_dimensions\\\":[],\\\"rhs_batch_dimensions\\\":[]},\\\"epilogue\\\":\\\"DEFAULT\\\"}\"\n"
                           "  h = f32[2,3] custom-call(a), custom_call_target=\"MoveToHost\"\n"
                           "  k = f32[2,3] custom-call(h), custom_call_target=\"AwsNeuronTransferWithStaticRing\", custom_call_has_side_effect=true\n"
                           "  ROOT r = (f32[2,2], f32[2,3]) tuple(g, k)\n}\n");
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {1, 2, 3, 4}, og[4], ok[6];
    /* a.b = [[1+3, 2+3], [4+6, 5+6]] = [[4,5],[10,11]]; 0.5 * that + 2 * c */
    const float want[4] = {2 + 2, 2.5f + 4, 5 + 6, 5.5f + 8};
    const void *ins[3];
    void *outs[2];
    int i;
    if (g) {
        gst_hlo_roundtrip(g);
        ins[0] = a;
        ins[1] = b;
        ins[2] = c;
        outs[0] = og;
        outs[1] = ok;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) CHECK_NEAR(og[i], want[i], 1e-6);
        for (i = 0; i < 6; i++) CHECK_NEAR(ok[i], a[i], 0);
    }
    gs_ctx_destroy(ctx);
    {   /* newer XLA: (result, s8[workspace]); the workspace is scratch (zeros here) */
        float a2[4] = {1, 2, 3, 4}, r2[4];
        int8_t ws[16];
        const float want2[4] = {7, 10, 15, 22};
        const void *in2[1];
        void *out2[2];
        int j;
        ctx = gst_ctx();
        g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n"
                               "  ROOT g = (f32[2,2], s8[16]) custom-call(a, a), custom_call_target=\"__cublas$gemm\", "
                               "backend_config={\"alpha_real\":1,\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],"
                               "\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]}}\n}\n");
        in2[0] = a2;
        out2[0] = r2;
        out2[1] = ws;
        if (g) {
            CHECK_OK(gs_eval(g, in2, out2));
            for (j = 0; j < 4; j++) CHECK_NEAR(r2[j], want2[j], 0);
        }
        gs_ctx_destroy(ctx);
    }
    gst_hlo_error_at("HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  ROOT g = f32[2,2] custom-call(a, a), custom_call_target=\"__cublas$gemm\", "
             "backend_config={\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],"
             "\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},\"epilogue\":\"RELU\"}\n}\n",
             GS_ERR_UNSUPPORTED, 4, 91, "__cublas$gemm epilogue RELU is not supported");
}

/* copy (or a marker custom-call) of a nested tuple, and of one holding empty tuples: element by element at the
   top level, the result as declared and its leaves the operand's */
static void test_text_copy_nested_tuple(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n"
                                     "  t = (f32[3], f32[2]) tuple(b, a)\n  u = (f32[2], (f32[3], f32[2])) tuple(a, t)\n"
                                     "  c = (f32[2], (f32[3], f32[2])) copy(u)\n"
                                     "  m = (f32[2], (f32[3], f32[2])) custom-call(c), custom_call_target=\"MoveToHost\"\n"
                                     "  e0 = () tuple()\n  w = (f32[2], (), (), f32[3]) tuple(a, e0, e0, b)\n"
                                     "  cw = (f32[2], (), (), f32[3]) copy(w)\n"
                                     "  ROOT r = ((f32[2], (f32[3], f32[2])), (f32[2], (), (), f32[3])) tuple(m, cw)\n}\n");
    float a[2] = {1, 2}, b[3] = {3, 4, 5}, o0[2], o1[3], o2[2], o3[2], o4[3];
    const void *ins[2] = {a, b};
    void *outs[5] = {o0, o1, o2, o3, o4};
    if (g) {
        gst_hlo_roundtrip(g);
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK(memcmp(o0, a, sizeof a) == 0 && memcmp(o1, b, sizeof b) == 0 && memcmp(o2, a, sizeof a) == 0 &&
              memcmp(o3, a, sizeof a) == 0 && memcmp(o4, b, sizeof b) == 0);
    }
    gs_ctx_destroy(ctx);
}

/* a copy that changes only the floating-point type (XLA's mixed precision, as TPU dumps after BFloat16 folding
   hold it) is the copy, then the convert: f32 -> bf16 rounds to nearest even (1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6); a copy
   that changes an integer type stays an error */
static void test_text_copy_mixed_precision(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                                     "  ROOT c = bf16[4]{0:T(128)(2,1)} copy(f32[4]{0:T(128)} x), metadata={op_name=\"r\"}\n}\n");
    float x[4] = {1.0f, 1.00390625f, 1.01171875f, 3.0f};
    uint16_t c[4];
    const void *ins[1] = {x};
    void *outs[1] = {c};
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "c.wide = f32[4] copy(x)") && strstr(text, "ROOT c = bf16[4] convert(c.wide)"));
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK(c[0] == 0x3F80 && c[1] == 0x3F80 && c[2] == 0x3F82 && c[3] == 0x4040);
    }
    gs_ctx_destroy(ctx);
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = s32[4] copy(x)\n}\n", GS_ERR_PARSE, 4, 12,
                     "copy 'c' is declared s32[4] but is f32[4]");
    /* a get-tuple-element only moves data: its declared type must be its element's */
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  t = (f32[4]) tuple(x)\n"
                     "  ROOT c = bf16[4] get-tuple-element(t), index=0\n}\n", GS_ERR_PARSE, 5, 12, "declared bf16[4] but is f32[4]");
}

/* mixed-precision operands (an f32 and a bf16 into one op, as TPU dumps after BFloat16 propagation hold them) are
   computed in the wider type, then the result converted to the declared one; a tuple and a sort keep their
   operands' types */
static void test_text_mixed_precision_operands(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                     "  c = bf16[] parameter(2)\n  d = bf16[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
                                     "ENTRY e {\n  x = f32[2] parameter(0)\n  y = bf16[2] parameter(1)\n"
                                     "  c = bf16[4] concatenate(x, y), dimensions={0}\n  s = f32[2] add(x, y)\n"
                                     "  o = (f32[2], bf16[2]) sort(x, y), dimensions={0}, to_apply=lt\n"
                                     "  yb = bf16[1,2] reshape(y)\n  xk = f32[2,1] reshape(x)\n"
                                     "  cv = f32[1,1] convolution(yb, xk), dim_labels=bf_io->bf\n"
                                     "  ROOT r = (bf16[4], f32[2], (f32[2], bf16[2]), f32[1,1]) tuple(c, s, o, cv)\n}\n");
    float x[2] = {1.00390625f, 1.0f}, s[2], o0[2], cv;
    uint16_t y[2] = {0x3F80, 0x4000}, c[4], o1[2];   /* bf16 1.0 and 2.0 */
    const void *ins[2] = {x, y};
    void *outs[5] = {c, s, o0, o1, &cv};
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK(text && strstr(text, "c.wide = f32[4] concatenate(") && strstr(text, "c = bf16[4] convert(c.wide)") &&
              strstr(text, "f32[2] convert(y)") && strstr(text, "(f32[2], bf16[2]) sort(x, y)"));
        CHECK_OK(gs_eval(g, ins, outs));
        /* 1 + 2^-8 rounds to even (1.0) in bf16 */
        CHECK(c[0] == 0x3F80 && c[1] == 0x3F80 && c[2] == 0x3F80 && c[3] == 0x4000);
        CHECK(s[0] == 2.00390625f && s[1] == 3.0f);
        CHECK(o0[0] == 1.0f && o0[1] == 1.00390625f && o1[0] == 0x4000 && o1[1] == 0x3F80);
        CHECK(cv == 1.0f * 1.00390625f + 2.0f * 1.0f);   /* in f32: 3.00390625 */
    }
    gs_ctx_destroy(ctx);
}

/* a reducer whose ROOT leaves its shape out (it is the parameters'): or over rows, by hand [[1,2,4],[8,0,1]] -> [7,9] */
static void test_text_reducer_shape_omitted(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nr {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT z = or(x, y)\n}\n"
                                     "ENTRY e {\n  p = s32[2,3] parameter(0)\n  i = s32[] constant(0)\n"
                                     "  ROOT q = s32[2] reduce(p, i), dimensions={1}, to_apply=r\n}\n");
    int32_t in[6] = {1, 2, 4, 8, 0, 1}, out[2];
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (g) {
        CHECK_OK(gs_eval(g, ins, outs));
        CHECK(out[0] == 7 && out[1] == 9);
    }
    gs_ctx_destroy(ctx);
}

/* ---- XLA's TopK custom-call: (values, indices) along the last dim, comparator GT or LT ---- */
static void test_text_topk_custom_call(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n"
                                "ENTRY e {\n  x = f32[2,4] parameter(0)\n"
                                "  t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target=\"TopK\", called_computations={cmp}\n"
                                "  u = (f32[2,1], s32[2,1]) custom-call(x), custom_call_target=\"TopK\"\n"
                                "  t0 = f32[2,2] get-tuple-element(t), index=0\n  t1 = s32[2,2] get-tuple-element(t), index=1\n"
                                "  u1 = s32[2,1] get-tuple-element(u), index=1\n  ROOT r = (f32[2,2], s32[2,2], s32[2,1]) tuple(t0, t1, u1)\n}\n");
    float x[8] = {3, 1, 4, 1, 5, 9, 2, 6}, v[4];
    int32_t idx[4], top[2];
    const float want_v[4] = {1, 1, 2, 5};          /* smallest two per row (LT), ties by lower index */
    const int32_t want_i[4] = {1, 3, 2, 0}, want_top[2] = {2, 1};
    const void *ins[1];
    void *outs[3];
    int i;
    if (g) {
        ins[0] = x;
        outs[0] = v;
        outs[1] = idx;
        outs[2] = top;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 4; i++) {
            CHECK_NEAR(v[i], want_v[i], 0);
            CHECK_EQ_INT(idx[i], want_i[i]);
        }
        for (i = 0; i < 2; i++) CHECK_EQ_INT(top[i], want_top[i]);
    }
    gs_ctx_destroy(ctx);
}

/* ---- opaque ops: custom-calls without a public meaning, after-all, infeed, outfeed ---- */
static void test_text_opaque(void) {
    const char *src = "HloModule m, num_partitions=2\n\nENTRY e {\n"
                      "  x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}\n"
                      "  tok = token[] after-all()\n"
                      "  inf = (f32[4], token[]) infeed(tok), infeed_config=\"abc\"\n"
                      "  o = token[] outfeed(x, tok), outfeed_shape=f32[8,4]{1,0}, outfeed_config=\"\"\n"
                      "  c = (f32[8,4], f32[8]) custom-call(x, x), custom_call_target=\"te_fused_attn\", api_version=API_VERSION_STATUS_RETURNING, backend_config={\"a\":1}\n"
                      "  g = f32[8,4] get-tuple-element(c), index=0\n"
                      "  ROOT r = f32[8,4] add(g, x)\n}\n";
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, src), *spmd = NULL;
    float x[32], out[32];
    const void *ins[1];
    void *outs[1];
    int i, found = 0;
    gs_partition_desc pd;
    if (g) {
        const char *text = gst_hlo_roundtrip(g);
        CHECK_MSG(text && strcmp(text, src) == 0, "printed:\n%s", text ? text : "");   /* every attribute as written */
        memset(x, 0, sizeof x);
        ins[0] = x;
        outs[0] = out;
        CHECK(gs_eval(g, ins, outs) == GS_ERR_UNSUPPORTED);
        CHECK(strstr(gs_ctx_error_msg(ctx), "target \"te_fused_attn\" is opaque") != NULL);
        gs_ctx_clear_error(ctx);
        memset(&pd, 0, sizeof pd);
        pd.num_devices = 2;
        CHECK_OK(gs_partition(g, &pd, &spmd));
        for (i = 0; spmd && i < gs_partition_num_warnings(spmd); i++)
            if (strstr(gs_partition_warning(spmd, i), "custom-call target \"te_fused_attn\" has no partitioning rule")) found = 1;
        CHECK(found);
        CHECK(spmd && strstr(gs_hlo_print(spmd), "custom_call_target=\"te_fused_attn\", api_version=") != NULL);
    }
    gs_ctx_destroy(ctx);
    {   /* a sharding that describes what an opaque op reads (outfeed of a tuple) is kept as written; a
           computation's execution_thread is accepted */
        const char *of = "HloModule m\n\nENTRY e {\n  x = f32[4] parameter(0)\n  t = (f32[4]) tuple(x)\n  a = token[] after-all()\n"
                         "  ROOT o = token[] outfeed(t, a), outfeed_shape=(f32[4]{0}), sharding={{devices=[2]0,1}, {maximal device=0}}\n}\n";
        ctx = gst_ctx();
        g = gst_hlo_parse(ctx, of);
        CHECK(g && strcmp(gs_hlo_print(g), of) == 0);
        gs_ctx_destroy(ctx);
        ctx = gst_ctx();
        CHECK(gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n}, execution_thread=\"main\"\n") != NULL);
        gs_ctx_destroy(ctx);
    }
    gst_hlo_error_at("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
             "  ROOT y = f32[4] custom-call(x), custom_call_target=\"k\", called_computations={c}\n}\n",
             GS_ERR_UNSUPPORTED, 7, 59, "calls a computation (called_computations=)");
}

/* ---- convolution rhs_reversal: a correlation with the kernel reversed ---- */
static void test_text_rhs_reversal(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[1,5,1] parameter(0)\n  k = f32[3,1,1] parameter(1)\n"
                                "  ROOT c = f32[1,3,1] convolution(x, k), window={size=3 rhs_reversal=1}, dim_labels=b0f_0io->b0f\n}\n");
    float x[5] = {1, 2, 3, 4, 5}, k[3] = {1, 10, 100}, out[3];
    const void *ins[2];
    void *outs[1];
    int i;
    if (g) {
        ins[0] = x;
        ins[1] = k;
        outs[0] = out;
        CHECK_OK(gs_eval(g, ins, outs));
        for (i = 0; i < 3; i++) CHECK_NEAR(out[i], 100 * x[i] + 10 * x[i + 1] + x[i + 2], 0);
        gst_hlo_roundtrip(g);
    }
    gs_ctx_destroy(ctx);
}

/* ---- shapes left out, as XLA allows where it infers them ---- */
static void test_text_shapes_omitted(void) {
    gs_ctx *ctx = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  n = negate(x)\n"
                                "  ROOT t = tuple(x, n)\n}\n");
    if (g) {
        CHECK_EQ_INT(gs_value_tuple_size(gs_graph_root(g)), 2);
        CHECK_EQ_INT(gs_value_shape(gs_graph_find(g, "n")).dims[0], 4);
    }
    gs_ctx_destroy(ctx);
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = parameter(0)\n}\n", GS_ERR_PARSE, 3, 7, "parameter 'x' needs its shape written");
}

/* ---- attributes: read, kept, or an error naming them ---- */
static void test_text_attributes(void) {
    const char *red = "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n";
    char text[1024];
    snprintf(text, sizeof text, "HloModule m, num_partitions=2\n%sENTRY e {\n  x = f32[4] parameter(0)\n"
             "  ROOT a = f32[4] all-reduce(x), replica_group={{0,1}}, to_apply=s\n}\n", red);
    gst_hlo_error_at(text, GS_ERR_PARSE, 9, 34, "unknown attribute 'replica_group' (did you mean 'replica_groups'?)");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x), fft_type=FFT\n}\n",
             GS_ERR_UNSUPPORTED, 4, 30, "attribute 'fft_type' is not read on negate 'y'");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x), colour=blue\n}\n",
             GS_ERR_PARSE, 4, 30, "unknown attribute 'colour'");
    gst_hlo_error_at("HloModule m, is_sheduled=true\nENTRY e {\n  x = f32[4] parameter(0)\n}\n", GS_ERR_PARSE, 1, 14,
             "unknown module attribute 'is_sheduled' (did you mean 'is_scheduled'?)");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0), sharding={tiles=[2]}\n}\n", GS_ERR_PARSE, 3, 28, "sharding");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negte(x)\n}\n", GS_ERR_PARSE, 4, 19,
             "unknown opcode 'negte' (did you mean 'negate'?)");
    gst_hlo_error_at("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] stochastic-convert(x)\n}\n", GS_ERR_UNSUPPORTED, 4, 19,
             "opcode 'stochastic-convert' is not supported");
    {   /* hints are accepted; metadata, frontend_attributes, backend_config and statistics print back */
        gs_ctx *ctx = gst_ctx();
        gs_graph *g = gst_hlo_parse(ctx, "HloModule m, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n"
                                    "ENTRY e {\n  x = f32[4] parameter(0), parameter_replication={false}\n"
                                    "  ROOT y = f32[4] negate(x), metadata={op_name=\"n\" source_line=3}, "
                                    "frontend_attributes={k=\"v\"}, control-predecessors={x}\n}\n");
        const char *out = g ? gst_hlo_roundtrip(g) : NULL;
        CHECK(out && strstr(out, "  ROOT y = f32[4] negate(x), metadata={op_name=\"n\" source_line=3}, frontend_attributes={k=\"v\"}\n") != NULL);
        CHECK(out && strstr(out, "parameter_replication") == NULL);
        gs_ctx_destroy(ctx);
    }
}

/* ---- XLA's named-mesh shardings, read as the tile assignments they denote ---- */
static void test_text_named_mesh(void) {
    static const char *const cases[][2] = {
        {"{mesh['x'=2,'y'=2] [{'x'}, {'y'}]}", "{devices=[2,2]<=[4]}"},
        {"{mesh['x'=2,'y'=2] [{'y'}, {'x'}]}", "{devices=[2,2]<=[2,2]T(1,0)}"},
        {"{mesh['x'=2,'y'=2], [{'x'}, {}], replicated={'y'}}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"},
        {"{mesh['x'=2,'y'=2] [{}, {'y'}]}", "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"},
        {"{mesh['x'=2,'y'=2,'z'=2] [{'x','z'}, {'y'}]}", "{devices=[4,2]<=[2,2,2]T(0,2,1)}"},
        {"{mesh['x'=8] [{'x':(1)2, 'x':(4)2}, {'x':(2)2}]}", "{devices=[4,2]<=[2,2,2]T(0,2,1)}"},
        {"{mesh['x'=4] [{'x':(2)2}, {}]}", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"},
        /* device (x, y) of the mesh is device_ids[2x + y]; replicated copies are listed in increasing order */
        {"{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{'x'}, {}], replicated={'y'}}", "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}"},
        {"{mesh['x'=2] [{}, {}]}", "{replicated}"},
    };
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        gs_ctx *ctx = gst_ctx();
        const gs_sharding *s = gs_sharding_parse(ctx, cases[i][0]);
        const char *got = s ? gs_sharding_to_text(ctx, s) : NULL;
        CHECK_MSG(s != NULL, "%s: %s", cases[i][0], gs_ctx_error_msg(ctx));
        if (s) CHECK_MSG(got && strcmp(got, cases[i][1]) == 0, "%s gave %s, expected %s", cases[i][0], got ? got : "NULL", cases[i][1]);
        gs_ctx_destroy(ctx);
    }
    {
        gs_ctx *ctx = gst_ctx();
        CHECK(gs_sharding_parse(ctx, "{mesh['x'=2] [{'x'}, {'x'}]}") == NULL && strstr(gs_ctx_error_msg(ctx), "shards two dims"));
        gs_ctx_destroy(ctx);
        ctx = gst_ctx();
        CHECK(gs_sharding_parse(ctx, "{mesh['x'=2] [{'q'}]}") == NULL && strstr(gs_ctx_error_msg(ctx), "not an axis of the mesh"));
        gs_ctx_destroy(ctx);
        ctx = gst_ctx();
        /* unreduced axes are read (test_unreduced.c); one that also shards a dim is an error */
        CHECK(gs_sharding_parse(ctx, "{mesh['x'=2] [{'x'}], unreduced={'x'}}") == NULL && strstr(gs_ctx_error_msg(ctx), "shards two dims"));
        gs_ctx_destroy(ctx);
    }
}

/* ---- the scans (cumsum, ...) are read as written and printed as XLA's reduce-window of the prefix ---- */
static void test_text_scans_print_standard(void) {
    const char *src = "HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n  a = f32[2,4] cumsum(x), dimensions={1}\n"
                      "  b = f32[2,4] cummax(x), dimensions={0}, reverse=true\n  ROOT t = (f32[2,4], f32[2,4]) tuple(a, b)\n}\n";
    gs_ctx *ctx = gst_ctx(), *ctx2 = gst_ctx();
    gs_graph *g = gst_hlo_parse(ctx, src), *g2 = NULL;
    const char *text = g ? gst_hlo_roundtrip(g) : NULL;
    float x[8] = {1, -2, 3, 0.5f, 4, 0, -1, 2}, a1[8], b1[8], a2[8], b2[8];
    const float want_a[8] = {1, -1, 2, 2.5f, 4, 4, 3, 5}, want_b[8] = {4, 0, 3, 2, 4, 0, -1, 2};
    const void *ins[1];
    void *o1[2], *o2[2];
    int i;
    CHECK(text && strstr(text, "  a.init = f32[] constant(0)\n  a = f32[2,4] reduce-window(x, a.init), window={size=1x4 pad=0_0x3_0}, to_apply=sum.f32\n") != NULL);
    CHECK(text && strstr(text, "  b = f32[2,4] reduce-window(x, b.init), window={size=2x1 pad=0_1x0_0}, to_apply=max.f32\n") != NULL);
    CHECK(text && strstr(text, "cumsum") == NULL && strstr(text, "cummax") == NULL);
    if (text) g2 = gst_hlo_parse(ctx2, text);
    ins[0] = x;
    o1[0] = a1;
    o1[1] = b1;
    o2[0] = a2;
    o2[1] = b2;
    if (g && g2) {
        CHECK_OK(gs_eval(g, ins, o1));
        CHECK_OK(gs_eval(g2, ins, o2));
        for (i = 0; i < 8; i++) {
            CHECK_NEAR(a1[i], want_a[i], 0);
            CHECK_NEAR(b1[i], want_b[i], 0);
            CHECK_NEAR(a2[i], want_a[i], 0);
            CHECK_NEAR(b2[i], want_b[i], 0);
        }
    }
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(ctx2);
}

/* ---- gs_hlo_stats: counts, '!' on what is not understood, exit codes ---- */
static void test_text_stats(void) {
    gs_ctx *ctx = gst_ctx();
    const char *rep = NULL;
    const char *text = "HloModule m\nENTRY e {\n  %x = f32[4]{0} parameter(0), sharding={replicated}\n"
                       "  %y = f32[4]{0} fft(f32[4]{0} %x), metadata={op_name=\"a[1]\"}\n"
                       "  %z = f99[4]{0} convert(%y), sharding={mesh['x'=2] [{'x'}]}\n"
                       "  %c = f32[4] custom-call(%x), custom_call_target=\"MoveToHost\"\n"
                       "  ROOT %d = f32[4] custom-call(%x), custom_call_target=\"my_kernel\", colour=1\n}\n";
    CHECK_EQ_INT(gs_hlo_stats(ctx, text, strlen(text), &rep), 1);
    CHECK(rep && strstr(rep, "opcodes (4): custom-call 2, convert 1, fft 1, parameter 1\n") != NULL);
    CHECK(rep && strstr(rep, "element types (2): f32 5, !f99 1\n") != NULL);
    CHECK(rep && strstr(rep, "custom-call targets (2): MoveToHost 1, !my_kernel 1\n") != NULL);
    CHECK(rep && strstr(rep, "attributes (4): custom_call_target 2, sharding 2, !colour 1, metadata 1\n") != NULL);
    CHECK(rep && strstr(rep, "sharding forms (2): named mesh 1, replicated 1\n") != NULL);
    text = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n";
    CHECK_EQ_INT(gs_hlo_stats(ctx, text, strlen(text), &rep), 0);
    CHECK(rep && strstr(rep, "opcodes (2): negate 1, parameter 1\n") != NULL);
    text = "just words\nand more\n";
    CHECK_EQ_INT(gs_hlo_stats(ctx, text, strlen(text), &rep), 2);
    gs_ctx_destroy(ctx);
}

void suite_text_structure(void) {
    RUN(test_text_stats);
    RUN(test_text_scans_print_standard);
    RUN(test_text_named_mesh);
    RUN(test_text_fusion_call);
    RUN(test_text_conditional);
    RUN(test_text_bitcast_layouts);
    RUN(test_text_variadic_collectives);
    RUN(test_text_variadic_reduce_scatter);
    RUN(test_text_argmax_reduce);
    RUN(test_text_sort_comparators);
    RUN(test_text_sort_any_comparator);
    RUN(test_text_dot_result_type);
    RUN(test_text_fft);
    RUN(test_text_all_to_all_start);
    RUN(test_text_elided_constant);
    RUN(test_text_extensions_print_standard);
    RUN(test_text_select_and_scatter);
    RUN(test_text_sharding_line_breaks);
    RUN(test_text_reduce_window_any_type);
    RUN(test_text_batch_dims_propagate);
    RUN(test_text_made_up_names);
    RUN(test_text_async_pairs);
    RUN(test_text_collective_broadcast);
    RUN(test_text_all_to_all_two_dims);
    RUN(test_text_custom_calls);
    RUN(test_text_copy_nested_tuple);
    RUN(test_text_copy_mixed_precision);
    RUN(test_text_mixed_precision_operands);
    RUN(test_text_reducer_shape_omitted);
    RUN(test_text_topk_custom_call);
    RUN(test_text_opaque);
    RUN(test_text_rhs_reversal);
    RUN(test_text_shapes_omitted);
    RUN(test_text_attributes);
}
